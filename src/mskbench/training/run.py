"""Training runs as a library call: ``mskbench.train(task, algo="ppo", backend="cpu", ...) -> Run``.

One function builds what a run needs — the environment for the backend
(``cpu``: MuJoCo C worlds stepped from Python; ``jax``: the batched JAX env,
``impl`` ``warp``/``jax``/``cpu``), the algorithm's hyper-parameters (its
per-backend defaults, the preset of the task's study, then the caller's
overrides: :mod:`mskbench.training.presets`), the periodic evaluation and the
best-checkpoint rule (:mod:`mskbench.training.evaluation`) — and iterates the
algorithm's learner (:data:`mskbench.agents.ALGORITHMS`,
:func:`mskbench.training.loop.train_loop`). The command line (``mskbench train``,
``mskbench mouse train``) is a thin layer over it.

The run directory (:mod:`mskbench.agents.run_dir`) holds ``run.json`` (the
resolved settings), ``config.json``, ``checkpoint.npz``, ``eval_log.jsonl``,
``best.npz`` and ``best.json``; ``resume=True`` continues a run with the same
settings.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from mskbench._jax import require_jax
from mskbench._version import __version__
from mskbench.agents import algorithm
from mskbench.agents.base import RESUME_FREE, config_defaults
from mskbench.agents.run_dir import BEST_CHECKPOINT, BEST_RETURN_CHECKPOINT, BestCheckpoint, RunDir
from mskbench.tasks import Task, make_task
from mskbench.training.evaluation import EvalWrapper, run_evaluation, study_evaluation
from mskbench.training.loop import train_loop
from mskbench.training.presets import EVAL_EVERY_STEPS, default_total_steps, resolve_config

BACKENDS = ("cpu", "jax")


class EnvWrapper(Protocol):
    """Wraps the training environment for a paradigm: called with the env, the run directory and
    ``resume`` once the run directory exists; returns the env the algorithm trains on (a reward modifier
    such as :class:`mskbench.paradigms.agentic.AgenticTuner`, an action map such as
    :class:`mskbench.paradigms.latent.LatentPrior`). ``settings`` are recorded in ``run.json``
    (``env_wrapper``); a resumed run must have the same. ``eval_wrapper``: how the run's evaluation runs
    the policy (None: as the protocol does); ``batched_env_options``: keyword arguments of the batched
    training env it needs. A wrapper whose policy acts through it outside training too also has
    ``acts_through``: ``("module:factory", settings)``, recorded in ``run.json`` for
    :func:`mskbench.agents.checkpoint.acts_through`."""

    @property
    def settings(self) -> dict[str, Any]: ...

    @property
    def eval_wrapper(self) -> EvalWrapper | None: ...

    @property
    def batched_env_options(self) -> Mapping[str, Any]: ...

    def __call__(self, env: Any, out_dir: Path | None, resume: bool) -> Any: ...


@dataclass
class Run:
    """A training run: where it lives, what it was, what it reached.

    ``settings`` is what ``run.json`` holds; ``history`` the iterations' log
    rows (evaluations included); ``best`` the best evaluation's ``metric``.
    """

    out_dir: Path | None
    task: str
    algo: str
    backend: str
    settings: dict[str, Any]
    history: list[dict] = field(default_factory=list)
    steps: int = 0
    metric: str = "mean_return"
    best: float | None = None

    @property
    def stopped(self) -> str | None:
        """``"time_limit"`` when the last iteration was stopped by the time limit."""
        return self.history[-1].get("stopped") if self.history else None

    @property
    def label(self) -> str:
        """The method as reports name it: the algorithm, or ``"ppo (from bc)"`` for a run started from
        another run's actor (``init``; the source named by its run's algorithm, else its file name)."""
        init = (self.settings.get("config") or {}).get("init")
        if not init:
            return self.algo
        source = RunDir(Path(init).parent)
        try:
            origin = source.settings()["algo"] if source.is_run() else Path(init).name
        except (OSError, ValueError, KeyError):
            origin = Path(init).name
        return f"{self.algo} (from {origin})"

    @property
    def best_path(self) -> Path | None:
        """The checkpoint an evaluation of this run uses (``best.npz`` under the best-return rule, else
        the latest ``checkpoint.npz``)."""
        return RunDir(self.out_dir).evaluated_checkpoint() if self.out_dir is not None else None

    def peak_efficiency(self):
        """``(T_max, R_max)`` of App. A-B5 (Eqs. 11-12) from this run's evaluations: the earliest
        evaluated step with the highest mean evaluation return, and that return (suite tasks)."""
        from mskbench.metrics import peak_efficiency

        rows = [(r["steps"], r["eval"]["mean_return"]) for r in self.history
                if "mean_return" in r.get("eval", {})]
        if not rows:
            raise ValueError("this run has no evaluation with a mean return yet")
        steps, returns = zip(*rows)
        return peak_efficiency(steps, returns)

    @classmethod
    def load(cls, out_dir: str | Path) -> "Run":
        """A run from its directory (``run.json``, ``eval_log.jsonl``, ``best.json``)."""
        out = Path(out_dir)
        run = RunDir(out)
        settings, history, best = run.settings(), run.history(), run.best()
        metric = settings.get("metric", "mean_return")
        return cls(out, settings["task"], settings["algo"], settings["backend"], settings, history,
                   history[-1]["steps"] if history else 0, metric, best.get(metric))


# -- settings ------------------------------------------------------------------------------------
def _jsonable(value: Any) -> Any:
    """A task option as JSON: clips held in memory are recorded by name."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    name = getattr(value, "name", None)
    return f"<{type(value).__name__} {name}>" if name is not None else f"<{type(value).__name__}>"


def task_settings(task: Task) -> dict[str, Any]:
    """A task's options as ``run.json`` records them."""
    return {k: _jsonable(v) for k, v in task.config.as_dict().items()}


def _check_choice(name: str, value: str, choices) -> None:
    if value not in choices:
        raise ValueError(f"{name} must be one of {', '.join(map(repr, choices))}, got {value!r}")


# -- environments and evaluations ---------------------------------------------------------------------
def make_env(task: Task, backend: str, num_envs: int, *, impl: str = "warp", seed: int = 0,
             batched_options: Mapping[str, Any] | None = None):
    """The training environment: a :class:`~mskbench.envs.vector.MSKVectorEnv` (``cpu``) or a
    :class:`~mskbench.envs.jax_env.TaskJaxEnv` (``jax``, with ``batched_options``)."""
    if backend == "jax":
        from mskbench.envs.jax_env import TaskJaxEnv

        return TaskJaxEnv(task, num_envs, impl=impl, seed=seed, **dict(batched_options or {}))
    from mskbench.envs.vector import MSKVectorEnv

    return MSKVectorEnv(task, num_envs=num_envs)


# -- the run -------------------------------------------------------------------------------------
def train(task: str | Task, algo: str = "ppo", *, backend: str = "cpu", impl: str | None = None,
          out: str | Path | None = None, steps: int | None = None, seed: int = 0, resume: bool = False,
          time_limit_s: float | None = None, eval_episodes: int | None = None, eval_every_steps: int | None = None,
          eval_env: str | None = None, task_options: Mapping[str, Any] | None = None,
          on_start: Callable[[dict], None] | None = None, on_iteration: Callable[[dict], None] | None = None,
          env_wrapper: EnvWrapper | None = None, init: str | Path | None = None, devices: int | None = None,
          **config: Any) -> Run:
    """Train ``algo`` on ``task`` and return the :class:`Run`.

    Parameters
    ----------
    task:
        A task id (options in ``task_options``) or a :class:`~mskbench.tasks.Task`.
    algo:
        A name of :data:`mskbench.agents.ALGORITHMS`.
    backend, impl:
        ``"cpu"`` (MuJoCo C worlds) or ``"jax"`` (the batched env; ``impl``
        ``"warp"`` — the default —, ``"jax"`` or ``"cpu"``).
    out:
        The run directory (``None``: nothing is written, nothing can resume).
    steps:
        Total environment steps (default: the preset's, else Table XVI's 2e8).
    seed:
        Seeds the networks, the rollouts and the environment.
    resume:
        Continue the run in ``out`` (same settings).
    time_limit_s:
        Stop after the first iteration that ends past this many seconds (it is
        evaluated and checkpointed; ``resume`` continues it).
    eval_episodes, eval_every_steps, eval_env:
        The periodic evaluation: episodes (default: the algorithm's, Table
        XVI), cadence in environment steps (default: the algorithm's on
        ``cpu`` — PPO 5e5, SAC 2e5, DynSyn-SAC 5e6 —, 5e6 on ``jax``), and
        where it runs (``cpu``: the protocol env; ``jax``: batched on the
        training physics; default: the backend's).
    on_start, on_iteration:
        Called with the resolved settings (``run.json``'s, plus the device) once the environment is
        built, and with each iteration's log row.
    env_wrapper:
        A paradigm's wrapper of the training env (:class:`EnvWrapper`, e.g.
        :class:`mskbench.paradigms.agentic.AgenticTuner`); its settings go to ``run.json``.
    init:
        PPO only: a run directory or checkpoint whose actor (mean network, log-std) and observation
        normalisation start this run (a PPO or BC run, e.g. ``algo="bc"``'s distilled expert); the
        critic learns alone for the first ``critic_warmup`` iterations (default 2) and the normalisation
        stays the actor's (``update_norm``, default False with ``init``). Recorded, resolved to its
        checkpoint file, as the config's ``init``.
    devices:
        ``backend="jax"``: the devices the worlds are sharded over (data-parallel PPO,
        :mod:`mskbench.agents.data_parallel`; default: every device JAX sees, over every process when
        ``jax.distributed`` was started by :func:`mskbench.agents.data_parallel.initialize`). It must divide
        ``num_envs``. Recorded as the config's ``devices`` and ``run.json``'s ``devices``; the numbers a run
        reaches do not depend on it. Over several processes only process 0 writes the run directory and
        evaluates; the others train.
    **config:
        The algorithm's hyper-parameters (e.g. ``num_envs``, ``num_steps``,
        ``learning_rate``, ``hidden``); an unknown name lists the valid ones.
    """
    _check_choice("backend", backend, BACKENDS)
    if backend != "jax" and impl is not None:
        raise ValueError("impl chooses the physics of backend='jax'")
    eval_env = eval_env or backend
    _check_choice("eval_env", eval_env, BACKENDS)
    if eval_env == "jax" and backend != "jax":
        raise ValueError("eval_env='jax' needs backend='jax'")
    alg = algorithm(algo)
    if backend not in alg.backends:
        raise ValueError(f"{algo} trains on backend {' or '.join(map(repr, alg.backends))}, not {backend!r}")
    eval_episodes = alg.eval_episodes if eval_episodes is None else eval_episodes
    if eval_episodes < 1:
        raise ValueError(f"eval_episodes must be >= 1, got {eval_episodes}")
    if devices is not None and backend != "jax":
        raise ValueError(f"devices={devices}: devices shard the batched JAX env's worlds (backend='jax'); "
                         "backend='cpu' steps its worlds on the host")
    impl = impl or "warp"
    jax, _ = require_jax("training")
    if isinstance(task, Task):
        if task_options:
            raise ValueError("give task options either in the Task or in task_options, not both")
        task_obj = task
    else:
        task_obj = make_task(task, **(task_options or {}))
    name = task_obj.name
    overrides = dict(config, seed=seed)
    if init is not None:
        if algo != "ppo":
            raise ValueError(f"init starts PPO from a trained actor; {algo}'s actor is not PPO's (the SAC family's "
                             "SBX actor is a ReLU network with a state-dependent, tanh-squashed Gaussian)")
        from mskbench.agents.run_dir import checkpoint_path

        found = checkpoint_path(str(init))
        if found is None:
            raise ValueError(f"init {str(init)!r} names no checkpoint (a run directory or a .npz file)")
        overrides["init"] = str(found.resolve())
    if steps is not None:
        overrides["total_steps"] = int(steps)
    elif default_total_steps(algo, name, backend) is not None:
        overrides.setdefault("total_steps", default_total_steps(algo, name, backend))
    cfg = resolve_config(algo, name, backend, overrides)
    if backend == "jax":
        from mskbench.agents.data_parallel import resolve_devices
        from mskbench.agents.ppo import minibatch_samples

        cfg = dataclasses.replace(cfg, devices=resolve_devices(devices, cfg.num_envs, minibatch_samples(cfg)))
    writer = jax.process_index() == 0  # over several processes only process 0 writes and evaluates
    batch = cfg.num_envs * cfg.num_steps
    study = study_evaluation(task_obj)
    if eval_every_steps is None:
        eval_every_steps = (study.every_iterations * batch if study is not None
                            else alg.eval_every_steps or EVAL_EVERY_STEPS[backend] if backend == "cpu"
                            else EVAL_EVERY_STEPS[backend])
    settings = {"task": name, "task_options": task_settings(task_obj), "algo": algo, "backend": backend,
                "impl": impl if backend == "jax" else None, "eval_env": eval_env, "eval_episodes": eval_episodes,
                "eval_every_steps": int(eval_every_steps), "checkpoint_rule": alg.checkpoint_rule,
                "config": _jsonable(dataclasses.asdict(cfg)),
                "mskbench_version": __version__}
    if backend == "jax":
        settings.update(devices=cfg.devices, processes=jax.process_count())
    if env_wrapper is not None:
        settings["env_wrapper"] = dict(env_wrapper.settings)
        acting = getattr(env_wrapper, "acts_through", None)  # how the run's checkpoints act (None: alone)
        if acting is not None:
            settings["acts_through"], settings["acts_settings"] = acting[0], dict(acting[1])
    out_dir = Path(out) if out is not None else None
    if out_dir is not None and (writer or resume):
        _check_run_dir(out_dir, settings, resume, _jsonable(config_defaults(cfg)))

    options = dict(env_wrapper.batched_env_options) if env_wrapper is not None else {}
    if backend == "jax":
        options["devices"] = cfg.devices
    worlds = 1 if alg.brings_own_worlds else cfg.num_envs  # one world: its task, layout and sizes
    env = make_env(task_obj, backend, worlds, impl=impl, seed=seed, batched_options=options)
    evaluation = run_evaluation(task_obj, eval_episodes, eval_env, impl,
                                env_wrapper.eval_wrapper if env_wrapper is not None else None)
    settings["metric"] = evaluation.metric
    if out_dir is not None and writer:
        RunDir(out_dir).write_settings(settings)
    if env_wrapper is not None:
        try:
            env = env_wrapper(env, out_dir if writer else None, resume)
        except BaseException:
            if callable(getattr(env, "close", None)):
                env.close()
            raise
    best = BestCheckpoint(out_dir, evaluation.metric, lower_is_better=evaluation.lower_is_better, resume=resume,
                          copy_to=BEST_CHECKPOINT if alg.checkpoint_rule == "best" else BEST_RETURN_CHECKPOINT) \
        if out_dir is not None and writer else None
    run = Run(out_dir, name, algo, backend, settings, metric=evaluation.metric)
    if on_start is not None:
        shards = settings.get("devices", 1)
        device = str(jax.devices()[0]) + (f" and {shards - 1} more device{'s' if shards > 2 else ''}"
                                          if shards > 1 else "")
        on_start({**settings, "device": device})

    def report(row: dict) -> None:
        if "eval" in row and best is not None:
            best.offer(row["eval"][evaluation.metric], steps=row["steps"])
        if on_iteration is not None:
            on_iteration(row)

    started = time.perf_counter()
    try:
        trained = train_loop(alg, env, cfg, out_dir=out_dir, resume=resume,
                             eval_fn=evaluation.evaluate if writer else None,
                             eval_every=max(1, round(eval_every_steps / batch)), on_iteration=report,
                             time_limit_s=time_limit_s, write=writer)
    finally:
        close = getattr(env, "close", None)
        if close is not None:
            close()
    run.history, run.steps = list(trained.history), int(trained.steps)
    run.best = best.best if best is not None else None
    run.settings["wall_s"] = time.perf_counter() - started
    return run


def _check_run_dir(out_dir: Path, settings: dict, resume: bool, defaults: dict | None = None) -> None:
    """Never overwrite a run by accident; resume only a run with the same settings. A config key the run's
    ``run.json`` lacks (a setting newer than the run) counts as its default (``defaults``)."""
    run = RunDir(out_dir)
    if resume:
        if not run.checkpoint.exists():
            raise FileNotFoundError(f"nothing to resume: {run.checkpoint} does not exist")
        if run.is_run():
            old = run.settings()
            keys = ("task", "task_options", "algo", "backend", "impl", "env_wrapper")
            diff = [k for k in keys if old.get(k) != settings.get(k)]
            defaults = defaults or {}
            cfg_diff = sorted(k for k, v in settings["config"].items()  # RESUME_FREE: its length, devices, cores
                              if k not in RESUME_FREE
                              and old.get("config", {}).get(k, defaults.get(k)) != v)
            if diff or cfg_diff:
                raise ValueError(f"{out_dir} was trained with other settings ({', '.join(diff + cfg_diff)}); "
                                 "resume with the same settings")
    elif run.checkpoint.exists():
        raise FileExistsError(f"{out_dir} already holds a run; resume it (resume=True / --resume) "
                              "or choose another directory")

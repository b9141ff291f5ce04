"""Training runs as a library call: ``mskbench.train(task, algo="ppo", backend="cpu", ...) -> Run``.

One function builds what a run needs — the environment for the backend
(``cpu``: MuJoCo C worlds stepped from Python; ``jax``: the batched JAX env,
``impl`` ``warp``/``jax``/``cpu``), the algorithm's hyper-parameters (its
per-backend defaults, the task's preset, then the caller's overrides), the
periodic evaluation and the best-checkpoint rule — and runs the algorithm of
:data:`mskbench.agents.ALGORITHMS`. The command line (``mskbench train``,
``mskbench mouse train``) is a thin layer over it.

A run directory holds ``run.json`` (the resolved settings), ``config.json``
(the algorithm's hyper-parameters), ``checkpoint.npz`` (the latest, written
atomically every iteration), ``eval_log.jsonl`` (one row per iteration, with
the evaluation when there was one), ``best.npz`` (the checkpoint with the best
evaluation) and ``best.json`` (its score). ``resume=True`` continues a run
with the same settings.

Evaluation and the best checkpoint, per task:

* suite tasks: ``eval_episodes`` deterministic episodes started as the
  protocol starts seeds 10000, 10001, ... — on the CPU protocol env
  (``eval_env="cpu"``, exact) or batched on the training env's physics
  (``eval_env="jax"``) — best by the highest mean return (Table XVI);
* the mouse imitation: the track replay error on the first four clips, best by
  the lowest.
"""

from __future__ import annotations

import dataclasses
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple, Protocol

from mskbench._version import __version__
from mskbench._jax import require_jax
from mskbench.agents import algorithm
from mskbench.agents.checkpoint import BestCheckpoint
from mskbench.tasks import Task, make_task

BACKENDS = ("cpu", "jax")
#: Seeds of the periodic evaluation's episodes: 10000, 10001, ...
EVAL_SEED = 10_000
#: Environment steps between evaluations, per backend.
EVAL_EVERY_STEPS = {"cpu": 500_000, "jax": 5_000_000}
#: Total environment steps (Table XVI: 2e8).
TOTAL_STEPS = 200_000_000
RUN_FILE = "run.json"
BEST_FILE = "best.json"

#: (algorithm, task) -> settings a run of it starts from: ``all`` backends, then per backend.
PRESETS: dict[tuple[str, str], dict[str, dict[str, Any]]] = {
    # Leonardis et al. (2025): an encoder–decoder policy (3 x 512 each side). Measured on the CPU backend
    # (46 real clips, 32 worlds): minibatch 512 and initial log-std −1 lowered the replay error steadily
    # (4.3 -> 2.2 mm in 0.6M steps) where minibatch 2048 / log-std −0.5 did not improve and a learning
    # rate of 1e-3 diverged.
    ("ppo", "MouseImitation"): {
        "all": {"policy": "encoder_decoder", "encoder_hidden": (512,) * 3, "decoder_hidden": (512,) * 3,
                "value_hidden": (512, 512), "minibatch_size": 512, "epochs": 4, "init_log_std": -1.0,
                "total_steps": 2_000_000},
        "cpu": {"num_envs": 32, "num_steps": 64},
        "jax": {"num_envs": 4096, "num_steps": 64},
    },
    # The tracking prior and the residual policies (the paper and the original code give no PPO settings
    # for them; our choice, docs/residual.md). Measured on TrackWalk's first PPO iteration (4 worlds x 256
    # steps): Table XVI's lr 3e-4 with 10 epochs moved the mean action by 0.2 per muscle (a third of the
    # initial std) in the first epoch and log π by up to 590 nats after ten: the ratio overflowed and the
    # update was NaN. At lr 3e-5, 4 epochs and initial log-std −1: 0.02 per muscle, at most 14 nats.
    **{("ppo", task): {"all": {"learning_rate": 3e-5, "epochs": 4, "init_log_std": -1.0}}
       for task in ("TrackWalk", "TrackRun", "TrackStairs", "ResidualWalk", "ResidualRun", "ResidualStairs")},
}
#: Iterations between the mouse imitation's evaluations unless ``eval_every_steps`` is given.
MOUSE_EVAL_EVERY_ITERATIONS = 20


class EnvWrapper(Protocol):
    """Wraps the training environment for a paradigm (a reward modifier such as
    :class:`mskbench.paradigms.agentic.AgenticTuner`): called with the env, the run directory and
    ``resume`` once the run directory exists; returns the env the algorithm trains on. ``settings`` are
    recorded in ``run.json`` (``env_wrapper``); a resumed run must have the same. A wrapper that changes
    the executed actions (:class:`mskbench.paradigms.latent.LatentPrior`) also has
    ``evaluation(task, episodes, eval_env, impl) -> Evaluation``, which replaces the run's evaluation,
    and may have ``batched_env_options``, keyword arguments of the batched training env it needs."""

    @property
    def settings(self) -> dict[str, Any]: ...

    def __call__(self, env: Any, out_dir: Path | None, resume: bool) -> Any: ...


class Evaluation(NamedTuple):
    """A run's periodic evaluation: ``evaluate(policy) -> dict`` and the entry that picks ``best.npz``."""

    evaluate: Callable[[Any], dict]
    metric: str
    lower_is_better: bool


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
    def best_path(self) -> Path | None:
        """The checkpoint an evaluation of this run uses (``best.npz`` under the best-return rule, else
        the latest ``checkpoint.npz``)."""
        if self.out_dir is None:
            return None
        for name in ("best.npz", "checkpoint.npz"):
            if (self.out_dir / name).is_file():
                return self.out_dir / name
        return None

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
        settings = json.loads((out / RUN_FILE).read_text())
        log = out / "eval_log.jsonl"
        history = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
        best = json.loads((out / BEST_FILE).read_text()) if (out / BEST_FILE).exists() else {}
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


def resolve_config(algo: str, task: str, backend: str, overrides: Mapping[str, Any]):
    """The algorithm's hyper-parameters for ``task`` on ``backend``: defaults, the task's preset, ``overrides``."""
    alg = algorithm(algo)
    preset = PRESETS.get((algo, task), {})
    merged = {**preset.get("all", {}), **preset.get(backend, {}), **overrides}
    return alg.config(backend, **merged)


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


def protocol_evaluation(task: Task, episodes: int, eval_env: str, impl: str) -> Evaluation:
    """Deterministic episodes from the protocol's starts of seeds 10000, 10001, ...; best by mean return."""
    seeds = [EVAL_SEED + i for i in range(episodes)]
    if eval_env == "jax":  # its own worlds (one per episode; MuJoCo Warp sizes its buffers by the batch)
        from mskbench.agents.jax_eval import BatchedEvaluator
        from mskbench.envs.jax_env import TaskJaxEnv

        return Evaluation(BatchedEvaluator(TaskJaxEnv(type(task)(task.config), episodes, impl=impl, reset_bank=1),
                                           seeds), "mean_return", False)
    from mskbench.envs.cpu_env import MSKEnv
    from mskbench.eval.episodes import run_episode

    env = MSKEnv(type(task)(task.config))

    def evaluate(policy) -> dict:
        results = [run_episode(env, policy, s) for s in seeds]
        return {"mean_return": sum(r.episode_return for r in results) / len(results),
                "success_rate": 100.0 * sum(r.success for r in results) / len(results)}

    return Evaluation(evaluate, "mean_return", False)


def imitation_evaluation(task: Task, episodes: int, eval_env: str, impl: str) -> Evaluation:
    """The mouse imitation's replay error on its first four clips; best by the lowest."""
    from mskbench.mouse.evaluate import evaluate as evaluate_clips
    from mskbench.mouse.imitation import MouseImitation

    if not isinstance(task, MouseImitation):
        raise TypeError(f"the imitation evaluation needs a MouseImitation task, got {type(task).__name__}")
    clips = task.clip_list[: min(4, len(task.clip_list))]

    def evaluate(policy) -> dict:
        result = evaluate_clips(policy, clips, task)["overall"]
        return {"track_replay_error_mm": result["track_replay_error_mm"], "joint_mae_rad": result["joint_mae_rad"]}

    return Evaluation(evaluate, "track_replay_error_mm", True)


#: Task id -> how its runs are evaluated (default: :func:`protocol_evaluation`).
EVALUATIONS: dict[str, Callable[[Task, int, str, str], Evaluation]] = {"MouseImitation": imitation_evaluation}


# -- the run -------------------------------------------------------------------------------------
def train(task: str | Task, algo: str = "ppo", *, backend: str = "cpu", impl: str | None = None,
          out: str | Path | None = None, steps: int | None = None, seed: int = 0, resume: bool = False,
          time_limit_s: float | None = None, eval_episodes: int | None = None, eval_every_steps: int | None = None,
          eval_env: str | None = None, task_options: Mapping[str, Any] | None = None,
          on_start: Callable[[dict], None] | None = None, on_iteration: Callable[[dict], None] | None = None,
          env_wrapper: EnvWrapper | None = None, **config: Any) -> Run:
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
    impl = impl or "warp"
    require_jax("training")
    if isinstance(task, Task):
        if task_options:
            raise ValueError("give task options either in the Task or in task_options, not both")
        task_obj = task
    else:
        task_obj = make_task(task, **(task_options or {}))
    name = task_obj.name
    overrides = dict(config, seed=seed)
    if steps is not None:
        overrides["total_steps"] = int(steps)
    elif "total_steps" not in PRESETS.get((algo, name), {}).get("all", {}) and \
            "total_steps" not in alg.defaults.get(backend, {}):
        overrides.setdefault("total_steps", TOTAL_STEPS)
    cfg = resolve_config(algo, name, backend, overrides)
    batch = cfg.num_envs * cfg.num_steps
    if eval_every_steps is None:
        eval_every_steps = (MOUSE_EVAL_EVERY_ITERATIONS * batch if name in EVALUATIONS
                            else alg.eval_every_steps or EVAL_EVERY_STEPS[backend] if backend == "cpu"
                            else EVAL_EVERY_STEPS[backend])
    settings = {"task": name, "task_options": task_settings(task_obj), "algo": algo, "backend": backend,
                "impl": impl if backend == "jax" else None, "eval_env": eval_env, "eval_episodes": eval_episodes,
                "eval_every_steps": int(eval_every_steps), "checkpoint_rule": alg.checkpoint_rule,
                "config": _jsonable(dataclasses.asdict(cfg)),
                "mskbench_version": __version__}
    if env_wrapper is not None:
        settings["env_wrapper"] = dict(env_wrapper.settings)
    out_dir = Path(out) if out is not None else None
    if out_dir is not None:
        _check_run_dir(out_dir, settings, resume)

    env = make_env(task_obj, backend, cfg.num_envs, impl=impl, seed=seed,
                   batched_options=getattr(env_wrapper, "batched_env_options", None))
    evaluation = EVALUATIONS.get(name, protocol_evaluation)(task_obj, eval_episodes, eval_env, impl)
    if callable(getattr(env_wrapper, "evaluation", None)):  # an action map: evaluate the policy through it
        evaluation = env_wrapper.evaluation(task_obj, eval_episodes, eval_env, impl)  # type: ignore[union-attr]
    settings["metric"] = evaluation.metric
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
        (out_dir / RUN_FILE).write_text(json.dumps(settings, indent=2))
    if env_wrapper is not None:
        try:
            env = env_wrapper(env, out_dir, resume)
        except BaseException:
            if callable(getattr(env, "close", None)):
                env.close()
            raise
    best = BestCheckpoint(out_dir, BEST_FILE, evaluation.metric, lower_is_better=evaluation.lower_is_better,
                          resume=resume, copy_to="best.npz" if alg.checkpoint_rule == "best" else "best_return.npz") \
        if out_dir is not None else None
    run = Run(out_dir, name, algo, backend, settings, metric=evaluation.metric)
    if on_start is not None:
        import jax

        on_start({**settings, "device": str(jax.devices()[0])})

    def report(row: dict) -> None:
        if "eval" in row and best is not None:
            best.offer(row["eval"][evaluation.metric], steps=row["steps"])
        if on_iteration is not None:
            on_iteration(row)

    started = time.perf_counter()
    try:
        state = alg.train(env, cfg, out_dir=out_dir, resume=resume, eval_fn=evaluation.evaluate,
                          eval_every=max(1, round(eval_every_steps / batch)), on_iteration=report,
                          time_limit_s=time_limit_s)
    finally:
        close = getattr(env, "close", None)
        if close is not None:
            close()
    run.history, run.steps = list(state.history), int(state.steps)
    run.best = best.best if best is not None else None
    run.settings["wall_s"] = time.perf_counter() - started
    return run


def _check_run_dir(out_dir: Path, settings: dict, resume: bool) -> None:
    """Never overwrite a run by accident; resume only a run with the same settings."""
    previous = out_dir / RUN_FILE
    if resume:
        if not (out_dir / "checkpoint.npz").exists():
            raise FileNotFoundError(f"nothing to resume: {out_dir / 'checkpoint.npz'} does not exist")
        if previous.exists():
            old = json.loads(previous.read_text())
            keys = ("task", "task_options", "algo", "backend", "impl", "env_wrapper")
            diff = [k for k in keys if old.get(k) != settings.get(k)]
            cfg_diff = sorted(k for k, v in settings["config"].items()
                              if k != "total_steps" and old.get("config", {}).get(k) != v)
            if diff or cfg_diff:
                raise ValueError(f"{out_dir} was trained with other settings ({', '.join(diff + cfg_diff)}); "
                                 "resume with the same settings")
    elif (out_dir / "checkpoint.npz").exists():
        raise FileExistsError(f"{out_dir} already holds a run; resume it (resume=True / --resume) "
                              "or choose another directory")

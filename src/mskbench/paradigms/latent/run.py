"""Latent-action RL, hard mode (App. A-G), as a paradigm of a training run: expert data from any policy spec,
the ``env_wrapper`` of :func:`mskbench.training.train`, and evaluation through the filter.

The learner-independent parts (formulas, features, encoder–decoder, the map and its env wrappers) are this
module's neighbours in :mod:`mskbench.paradigms.latent`; this module ties them to policies named by spec, to
training runs and to the evaluation protocol.

* :func:`collect_expert` — ``mskbench latent collect``: (state, action) data from a built-in, a
  checkpoint or run directory of any trainer, or ``package.module:factory``.
* :class:`LatentPrior` — ``mskbench train TASK --latent MODEL --tube R``: wraps the training env in a
  :class:`~mskbench.paradigms.latent.wrapper.LatentActionWrapper` (CPU) or a
  :class:`~mskbench.paradigms.latent.batched.LatentBatchedEnv` (``--backend jax``, any ``--impl``; a resumed
  run's ``λ_t`` continues from the checkpoint's steps) and evaluates the policy through the map
  (:attr:`LatentPrior.eval_wrapper`, on the CPU or batched), so the periodic evaluation and ``best.npz``
  judge what the body executes. ``run.json`` records the model file
  and its SHA-256, the tube, the mode and the penalty schedule; a resume with another model is refused.
* :class:`LatentActing` — how a latent run's checkpoint (and its export) acts wherever it is evaluated
  (its ``acts_through``, :func:`mskbench.agents.checkpoint.acts_through`): through the map of the model
  file its run trained with (same SHA-256), on a CPU env or inside the batched env's step.
* :func:`evaluate_through` — ``mskbench latent eval``: deterministic episodes of any policy through the
  filter (the task's return, no penalty).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mskbench.envs.wrappers import is_batched
from mskbench.paradigms.latent.core import DEFAULT_TUBE, PenaltySchedule
from mskbench.paradigms.latent.wrapper import (MODES, LatentActionWrapper, LatentFilteredEnv, LatentFilteredPolicy,
                                               check_tube, sha256_of)

if TYPE_CHECKING:
    from collections.abc import Callable

    from mskbench.paradigms.latent.data import LatentData
    from mskbench.paradigms.latent.model import LatentModel
    from mskbench.training import EvalWrapper


def collect_expert(task: str, policy: Any, *, steps: int, seed: int = 0, noise_std: float = 0.0,
                   progress: "Callable[[int, int], None] | None" = None) -> "LatentData":
    """:func:`mskbench.paradigms.latent.data.collect` with ``policy`` a spec of
    :func:`mskbench.eval.protocol.load_policy` (or an object with ``act``); the spec is recorded."""
    from mskbench.envs.cpu_env import MSKEnv
    from mskbench.paradigms.latent.data import collect

    env = MSKEnv(task)
    try:
        spec = policy if isinstance(policy, str) else None
        if isinstance(policy, str):
            from mskbench.eval.protocol import load_policy

            policy = load_policy(policy, env, seed)
        data = collect(env, policy, steps=steps, seed=seed, noise_std=noise_std, progress=progress)
    finally:
        env.close()
    if spec is not None:
        data.meta["policy"] = spec
    return data


class LatentPrior:
    """Hard-mode latent-action RL for a training run: the ``env_wrapper`` of :func:`mskbench.training.train`.

    ``model``: a model file of ``mskbench latent fit``; ``tube``: δ (default
    0.25, the authors'); ``schedule``: Eq. 28's ``λ_t``; ``mode``: ``"hard"``
    (the paper's) or ``"latent"`` (the learner outputs ``z``). Called with
    ``(env, out_dir, resume)`` it returns the
    :class:`~mskbench.paradigms.latent.wrapper.LatentActionWrapper` of a CPU
    vector env, or the :class:`~mskbench.paradigms.latent.batched.LatentBatchedEnv`
    of a batched env (made with :attr:`batched_env_options`, so its worlds carry
    the moment matrix); :attr:`eval_wrapper` runs the run's periodic evaluation through the map.
    """

    #: What :func:`mskbench.training.train` passes to the batched training env it makes.
    batched_env_options = {"muscle_moments": True}

    def __init__(self, model: str | Path, tube: float = DEFAULT_TUBE, schedule: PenaltySchedule | None = None,
                 mode: str = "hard"):
        from mskbench.paradigms.latent.model import LatentModel

        self.path = Path(model)
        if not self.path.is_file():
            raise ValueError(f"latent model {self.path} does not exist (make one with 'mskbench latent fit')")
        self.model = LatentModel.load(self.path)
        self.tube = check_tube(tube)
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.mode = mode
        self.schedule = schedule if schedule is not None else PenaltySchedule()
        self.sha256 = sha256_of(self.path)
        self.wrapper: LatentActionWrapper | None = None

    @property
    def settings(self) -> dict[str, Any]:
        """What ``run.json`` records (a resumed run must have the same)."""
        return {"paradigm": "latent", "model": str(self.path.resolve()), "model_sha256": self.sha256,
                "latent_dim": self.model.latent_dim, "tube": self.tube, "mode": self.mode,
                "penalty": self.schedule.as_dict()}

    @property
    def acts_through(self) -> tuple[str, dict[str, Any]]:
        """How the run's checkpoints act outside training (``run.json``, every export): :class:`LatentActing`,
        named where the paradigm's package hands it on (``mskbench.paradigms.latent:LatentActing``)."""
        return (f"{__package__}:LatentActing", {"model": str(self.path.resolve()), "model_sha256": self.sha256,
                                                "tube": self.tube, "mode": self.mode})

    def __call__(self, env: Any, out_dir: Path | None, resume: bool = False) -> Any:
        steps = resumed_steps(out_dir) if resume and out_dir is not None else 0
        if not is_batched(env):
            self.wrapper = LatentActionWrapper(env, self.model, self.tube, self.schedule, self.mode, steps)
            return self.wrapper
        from mskbench.paradigms.latent.batched import LatentBatchedEnv

        return LatentBatchedEnv(env, self.model, self.tube, self.mode, self.schedule, steps)

    @property
    def eval_wrapper(self) -> "EvalWrapper":
        """The run's periodic evaluation through the map (CPU: the :class:`LatentFilteredEnv` of the
        protocol env; batched: the :class:`~mskbench.paradigms.latent.batched.LatentBatchedEnv`); best by the
        task's mean return (the protocol's rule)."""
        from mskbench.paradigms.latent.batched import LatentBatchedEnv
        from mskbench.training import EvalWrapper

        return EvalWrapper(cpu_env=lambda env: LatentFilteredEnv(env, self.model, self.tube, self.mode),
                           batched_env=lambda env: LatentBatchedEnv(env, self.model, self.tube, self.mode),
                           batched_options={"muscle_moments": True})


class LatentActing:
    """How a latent run's checkpoint acts (its ``acts_through``): through the map of ``model`` (the file its run
    trained with; with ``model_sha256``, a changed file is a ``ValueError``), ``tube`` and ``mode``. On a CPU env
    :meth:`policy` is a :class:`~mskbench.paradigms.latent.wrapper.LatentFilteredPolicy`; batched, the
    checkpoint's network acts in :meth:`batched_env`, whose worlds carry the moment matrix
    (:attr:`batched_options`)."""

    batched_options = {"muscle_moments": True}

    def __init__(self, model: str, model_sha256: str | None = None, tube: float = DEFAULT_TUBE, mode: str = "hard"):
        from mskbench.paradigms.latent.model import LatentModel

        path = Path(model)
        if not path.is_file():
            raise ValueError(f"the run trained through the latent model {path}, which no longer exists")
        if model_sha256 and sha256_of(path) != model_sha256:
            raise ValueError(f"the run trained through the latent model {path}, which has changed since "
                             "(its SHA-256 differs from the one recorded)")
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.model, self.tube, self.mode = LatentModel.load(path), check_tube(tube), mode

    def policy(self, checkpoint: str | Path, env: Any) -> LatentFilteredPolicy:
        from mskbench.agents.checkpoint import load_policy

        network = load_policy(checkpoint, env.obs_layout, env.observation_space.shape[0])
        return LatentFilteredPolicy(network, env, self.model, self.tube, self.mode)

    def batched_env(self, env: Any) -> Any:
        from mskbench.paradigms.latent.batched import LatentBatchedEnv

        return LatentBatchedEnv(env, self.model, self.tube, self.mode)


def resumed_steps(out_dir: str | Path) -> int:
    """Transitions a resumed run has made: the last training log row's ``steps`` (the checkpoint's)."""
    from mskbench.agents.run_dir import RunDir

    return RunDir(out_dir).resumed_steps()


def evaluate_through(task: str, policy: Any, model: "LatentModel", *, tube: float = DEFAULT_TUBE,
                     mode: str = "hard", episodes: int = 10, seed: int = 10_000) -> dict[str, Any]:
    """``episodes`` deterministic episodes of ``policy`` (a spec or an object with ``act``; a checkpoint's
    network, whatever its run acted through) on ``task`` through the map, seeds ``seed, seed + 1, ...``: mean
    return, success rate, mean length, mean ``L_dev``."""
    from mskbench.envs.cpu_env import MSKEnv
    from mskbench.eval.episodes import run_episode

    env = LatentFilteredEnv(MSKEnv(task), model, tube, mode)
    try:
        if isinstance(policy, str):
            from mskbench.agents.checkpoint import checkpoint_path, load_policy as network
            from mskbench.eval.protocol import load_policy

            ckpt = checkpoint_path(policy)  # a checkpoint's network alone: the filter is this env's
            policy = (network(ckpt, env.obs_layout, env.observation_space.shape[0]) if ckpt is not None
                      else load_policy(policy, env, seed))
        results = [run_episode(env, policy, seed + i) for i in range(episodes)]  # type: ignore[arg-type]
    finally:
        env.close()
    mean_dev = env.deviation_total / env.deviation_steps if env.deviation_steps else 0.0
    return {"task": task, "episodes": episodes, "tube": tube, "mode": mode,
            "mean_return": float(np.mean([r.episode_return for r in results])),
            "success_rate": 100.0 * float(np.mean([r.success for r in results])),
            "mean_length": float(np.mean([r.length for r in results])),
            "mean_deviation": float(mean_dev), "returns": [float(r.episode_return) for r in results]}


__all__ = ["LatentActing", "LatentPrior", "collect_expert", "evaluate_through", "resumed_steps"]

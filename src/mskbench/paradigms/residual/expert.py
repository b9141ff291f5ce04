"""Residual RL over the privileged expert, as a training run: the ``env_wrapper`` of :func:`mskbench.train`.

``mskbench train TASK --backend cpu --base expert`` (TASK one the expert serves,
:data:`mskbench.control.EXPERT_BEHAVIOURS`) trains a residual over the training-free expert
(:mod:`mskbench.control.residual`): per world the expert bound to that world's simulator gives ``a_base``,
the trained policy ``a_res`` (its observation: the task's, then ``a_base``), the world executes
``clip(a_base + 0.6 · clip(a_res, −1, 1), −1, 1)`` and the reward adds ``−0.02 · mean(a_res²)``. The
run's periodic evaluation acts with the expert in the loop, as ``mskbench eval --policy RUN`` does (the run's
``acts_through``: :class:`ExpertResidualActing`).

The expert reads the simulator (model, contacts, task state), so such a run's policy is *privileged*: its
evaluations are recorded as privileged and the leaderboard keeps them apart from the observation-only
methods. Training runs on the CPU backend (each world's MuJoCo C simulator), with PPO or SAC
(:data:`ALGORITHMS`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mskbench.control.residual import (ALPHA, BASE_BLOCK, C_RES, FORMULA, ExpertBaseVectorEnv, ExpertResidualPolicy,
                                       with_base_block)
from mskbench.envs.wrappers import is_batched

#: The ``--base`` of residual RL over the expert.
EXPERT_BASE = "expert"
#: The algorithms that train a residual over the expert (both take the CPU vector env as it is).
ALGORITHMS = ("ppo", "sac")


class ExpertResidualWrapper:
    """The ``env_wrapper`` of :func:`mskbench.train` for residual RL over the expert
    (:class:`~mskbench.training.EnvWrapper`): the training env is an
    :class:`~mskbench.control.residual.ExpertBaseVectorEnv`; the periodic evaluation runs the policy as an
    :class:`~mskbench.control.residual.ExpertResidualPolicy` in the protocol's CPU env (best by the mean task
    return: the penalty is a training cost)."""

    batched_env_options: dict[str, Any] = {}

    @property
    def settings(self) -> dict[str, Any]:
        return {"paradigm": "residual", "base": EXPERT_BASE, "privileged": True, "action": FORMULA,
                "alpha": ALPHA, "penalty": "c_res * mean(a_res^2)", "c_res": C_RES,
                "observation": f"the task's, then {BASE_BLOCK}"}

    @property
    def eval_wrapper(self):
        from mskbench.training import EvalWrapper

        return EvalWrapper(cpu_policy=lambda policy, env: ExpertResidualPolicy.bound(policy, env), mean_length=True)

    @property
    def acts_through(self) -> tuple[str, dict[str, Any]]:
        """How the run's checkpoints act outside training (``run.json``, every export):
        :class:`ExpertResidualActing`."""
        return f"{__name__}:ExpertResidualActing", {"alpha": ALPHA}

    def __call__(self, env, out_dir: Path | None, resume: bool):
        if is_batched(env):
            raise ValueError("residual RL over the expert binds the expert to each world's MuJoCo C simulator: "
                             "backend 'cpu', not 'jax'")
        return ExpertBaseVectorEnv(env)


class ExpertResidualActing:
    """How a checkpoint trained over the expert acts (its ``acts_through``): with the expert bound to the CPU env
    it acts in, on the observation with the expert's action appended
    (:class:`~mskbench.control.residual.ExpertResidualPolicy`). It has no batched form (:attr:`cpu_only`)."""

    cpu_only = "a policy trained over the expert acts with it, and the expert reads the MuJoCo C simulator of a CPU env"

    def __init__(self, alpha: float = ALPHA):
        self.alpha = float(alpha)

    def policy(self, checkpoint: str | Path, env) -> ExpertResidualPolicy:
        from mskbench.agents.checkpoint import load_policy
        from mskbench.control import make_controller

        expert = make_controller("expert", env)  # first: on a task it does not serve, the error names those
        layout, size = with_base_block(env.obs_layout, env.observation_space.shape[0], env.action_space.shape[0])
        return ExpertResidualPolicy(expert, load_policy(checkpoint, layout, size), self.alpha)


def check_expert_residual(task: str, backend: str = "cpu", algo: str = "ppo") -> str:
    """``task``'s id if a residual over the expert can train on it with ``backend`` and ``algo``; else a
    one-line ``ValueError`` naming the valid choices."""
    from mskbench.control import EXPERT_BEHAVIOURS
    from mskbench.tasks import resolve_name

    name = resolve_name(task)
    if name not in EXPERT_BEHAVIOURS:
        raise ValueError(f"--base expert: residual RL over the privileged expert, which serves "
                         f"{', '.join(EXPERT_BEHAVIOURS)}; not {name}")
    if backend != "cpu":
        raise ValueError(f"--base expert binds the expert to each world's MuJoCo C simulator: --backend cpu, "
                         f"not {backend}")
    if algo not in ALGORITHMS:
        raise ValueError(f"--base expert trains with --algo {' or '.join(ALGORITHMS)}, not {algo}")
    return name


def train_expert_residual(task: str, algo: str = "ppo", **kwargs: Any):
    """:func:`mskbench.train` of a residual over the expert on ``task`` (one the expert serves; the CPU
    backend; ``algo`` of :data:`ALGORITHMS`). Other keyword arguments go to :func:`mskbench.train`."""
    from mskbench.training import train

    name = check_expert_residual(task, kwargs.get("backend", "cpu"), algo)
    return train(name, algo, env_wrapper=ExpertResidualWrapper(), **kwargs)

"""Residual RL over the privileged expert: the training-free expert (:mod:`mskbench.control`) as the frozen
base of Eq. 38, per world, and the training run of it (the ``env_wrapper`` of :func:`mskbench.train`).

``mskbench train TASK --backend cpu --base expert`` (TASK one the expert serves,
:data:`mskbench.control.EXPERT_BEHAVIOURS`) trains a residual over the expert. Per world of a CPU vector env,
an expert bound to that world's simulator gives ``a_base`` for the state the world is in; the trained policy
outputs ``a_res``; the world executes, and the trainer is paid::

    a      = clip(a_base + α · clip(a_res, −1, 1), −1, 1)       (combine, Eq. 38; α = ALPHA = 0.6)
    reward = task reward + c_res · mean(a_res²)                   (residual_penalty; c_res = C_RES = −0.02)

with :func:`~mskbench.paradigms.residual.action.combine` and
:func:`~mskbench.paradigms.residual.action.residual_penalty`, the residual paradigm's, and its constant α and
``c_res``. The policy observes the task's observation with ``a_base`` appended (block :data:`BASE_BLOCK`), as
the residual tasks put their base's action in theirs.

* :class:`ExpertBaseVectorEnv` is the training env: a :class:`~mskbench.envs.vector.MSKVectorEnv` (the CPU
  backend) whose worlds each have their expert; it steps the worlds itself, so that each expert sees its
  world's last state before the world restarts.
* :class:`ExpertResidualPolicy` is the trained policy as a policy of the plain task, for the protocol's
  episodes: the expert bound to the env it acts in, the trained policy on the observation with the expert's
  action appended, ``act(obs)`` the executed action.
* :class:`ExpertResidualWrapper` is the run's ``env_wrapper``: its periodic evaluation acts with the expert in
  the loop, as ``mskbench eval --policy RUN`` does; a checkpoint of such a run, and its export, is evaluated so
  (its ``acts_through``: :class:`ExpertResidualActing`).

Such a policy reads the simulator through its base (the model, the contacts, the task's state): like the
expert it is *privileged* (``privileged = True``): its evaluations are recorded as privileged and the
leaderboard keeps them apart from the observation-only methods. Observation noise (Eq. 5) goes on the
observation itself, which the expert and the trained policy both read (the expert alone is evaluated so
too). Training runs on the CPU backend (each world's MuJoCo C simulator), with PPO or SAC
(:data:`ALGORITHMS`).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from mskbench.control.registry import make_controller
from mskbench.envs.vector import checked_actions, step_each, worlds
from mskbench.envs.wrappers import VectorWrapper, is_batched
from mskbench.paradigms.residual.action import ALPHA, C_RES, FORMULA, combine, residual_penalty
from mskbench.policies import as_policy

__all__ = ["ALGORITHMS", "ALPHA", "BASE_BLOCK", "C_RES", "EXPERT_BASE", "FORMULA", "ExpertBaseVectorEnv",
           "ExpertResidualActing", "ExpertResidualPolicy", "ExpertResidualWrapper", "check_expert_residual",
           "train_expert_residual", "with_base_block"]

#: The observation block holding the expert's action ``a_base`` (appended after the task's blocks).
BASE_BLOCK = "expert/base_action"


def with_base_block(layout: Mapping[str, slice], obs_size: int, n_actions: int) -> tuple[dict[str, slice], int]:
    """The observation layout and size of a policy over the expert: ``layout`` with :data:`BASE_BLOCK` after it."""
    if BASE_BLOCK in layout:
        raise ValueError(f"the observation already has a {BASE_BLOCK!r} block")
    return {**layout, BASE_BLOCK: slice(obs_size, obs_size + n_actions)}, obs_size + n_actions


class ExpertBaseVectorEnv(VectorWrapper):
    """A CPU vector env taking residual actions over one expert per world (see the module docstring).

    ``env`` is a :class:`~mskbench.envs.vector.MSKVectorEnv` of a task the expert serves (else a
    ``ValueError`` naming those). ``info`` adds ``base_actions`` (the ``a_base`` each world executed over),
    ``executed_actions`` and ``residual_penalty``; ``episode_returns`` are the returns the trainer optimises
    (penalty included). In ``final_obs`` the base block of a truncated episode is the expert's action at the
    last state; of a terminated one (nothing is bootstrapped through it), the action it executed over.
    """

    privileged = True

    def __init__(self, env: Any, *, alpha: float = ALPHA, c_res: float = C_RES):
        super().__init__(env)
        self.worlds = worlds(env, "residual RL over the expert (it binds an expert to each world's simulator)")
        self.experts = [make_controller("expert", w) for w in self.worlds]
        self.alpha, self.c_res = float(alpha), float(c_res)
        self.obs_layout, self.obs_size = with_base_block(env.obs_layout, env.obs_size, env.action_size)
        self._base = np.zeros((env.num_envs, env.action_size))
        self._returns = np.zeros(env.num_envs)

    def _start(self, i: int, obs: np.ndarray) -> np.ndarray:
        """World ``i`` has just restarted at ``obs``: its expert starts the episode and acts."""
        self.experts[i].reset()
        self._base[i] = self.experts[i].act(obs)
        return np.concatenate([obs, self._base[i]]).astype(np.float32)

    def reset(self, seed: int | None = None) -> np.ndarray:
        obs = self.env.reset(seed=seed)
        self._returns[:] = 0.0
        return np.stack([self._start(i, o) for i, o in enumerate(obs)])

    def step(self, actions):
        a_res = checked_actions(actions, self.num_envs, self.action_size, np.float64)
        base = self._base.copy()
        full = combine(base, a_res, self.alpha, np)
        pen = self.c_res * residual_penalty(a_res, np)

        def step_one(i):
            o, r, term, trunc, _ = self.worlds[i].step(full[i])
            if not term:  # the next state's base (at a truncation: the last state's, for the bootstrap)
                self._base[i] = self.experts[i].act(o)
            return np.concatenate([o, self._base[i]]), r + pen[i], term, trunc

        def reset_one(i):
            return self._start(i, self.worlds[i].reset()[0])

        obs, reward, terminated, truncated, info = step_each(self._returns, self.obs_size, step_one, reset_one)
        return obs, reward, terminated, truncated, {**info, "base_actions": base, "executed_actions": full,
                                                    "residual_penalty": pen}


class ExpertResidualPolicy:
    """A policy trained over the expert as a policy of the plain task: ``act(obs)`` is the executed action.

    ``expert`` is the expert bound to the env this policy acts in (:func:`~mskbench.control.make_controller`);
    ``residual`` any policy of the observation with :data:`BASE_BLOCK` appended (a loaded checkpoint).
    """

    privileged = True

    def __init__(self, expert: Any, residual: Any, alpha: float = ALPHA):
        self.expert = as_policy(expert)
        self.residual = as_policy(residual)
        self.alpha = float(alpha)

    @classmethod
    def bound(cls, residual: Any, env: Any, alpha: float = ALPHA) -> "ExpertResidualPolicy":
        """``residual`` over an expert bound to ``env`` (an :class:`~mskbench.envs.MSKEnv` or a wrapper)."""
        return cls(make_controller("expert", env), residual, alpha)

    def reset(self, seed: int | None = None) -> None:
        self.expert.reset(seed)
        self.residual.reset(seed)

    def act(self, obs: np.ndarray) -> np.ndarray:
        a_base = np.asarray(self.expert.act(obs), np.float64)
        a_res = np.asarray(self.residual.act(np.concatenate([obs, a_base]).astype(np.float32)), np.float64)
        return combine(a_base, a_res, self.alpha, np).astype(np.float32)

    def describe(self) -> dict[str, Any]:
        return {"policy": "residual over the expert", "action": FORMULA, "alpha": self.alpha, "privileged": True}


#: The ``--base`` of residual RL over the expert.
EXPERT_BASE = "expert"
#: The algorithms that train a residual over the expert (both take the CPU vector env as it is).
ALGORITHMS = ("ppo", "sac")


class ExpertResidualWrapper:
    """The ``env_wrapper`` of :func:`mskbench.train` for residual RL over the expert
    (:class:`~mskbench.training.EnvWrapper`): the training env is an
    :class:`ExpertBaseVectorEnv`; the periodic evaluation runs the policy as an
    :class:`ExpertResidualPolicy` in the protocol's CPU env (best by the mean task
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
    (:class:`ExpertResidualPolicy`). It has no batched form (:attr:`cpu_only`)."""

    cpu_only = "a policy trained over the expert acts with it, and the expert reads the MuJoCo C simulator of a CPU env"

    def __init__(self, alpha: float = ALPHA):
        self.alpha = float(alpha)

    def policy(self, checkpoint: str | Path, env) -> ExpertResidualPolicy:
        from mskbench.agents.checkpoint import load_policy

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

"""Residual adaptation (Eq. 2 / 38) as an action-map wrapper any trainer can train through.

The residual tasks (:mod:`mskbench.paradigms.residual.tasks`) put the frozen base
policy's action ``a_base`` and foot contact in their observation. Between the
trainer and the env this module executes, per world (one formula each, in the
array namespace ``xp``, NumPy on the CPU stack and ``jax.numpy`` inside the
batched env's jitted rollout)::

    a      = clip(a_base + α · clip(a_res, −1, 1), −1, 1)          (combine, Eq. 38)
    α      = task.residual_alpha(foot_contact)                       (Eq. 41 for walking; 0.6 otherwise)
    reward = task reward + c_res · mean(a_res²)                      (residual_penalty, c_res = −0.02)

``a_res`` is what the trainer's policy outputs (the residual policy: the
project's PPO, an MLP of Table XVI's two hidden layers of 1,024 — three weight
layers, the paper's "3-layer MLP"); the penalty is the mean over the muscles
of the squared residual action as the trainer sends it (the original's
``np.mean(np.square(residual_action))``, ``residualrl/stair.py@a68b6ce``). :func:`combine` and
:func:`residual_penalty` are :mod:`~mskbench.paradigms.residual.action`'s, which residual RL over the
privileged expert (:mod:`~mskbench.paradigms.residual.expert`) executes too.

* :class:`ResidualVectorEnv` wraps a :class:`~mskbench.envs.protocols.VectorEnv`
  (the CPU stack), :class:`ResidualBatchedEnv` a :class:`~mskbench.envs.protocols.BatchedEnv`
  (the JAX env: the combination runs inside the rollout's ``lax.scan``);
  :class:`ResidualWrapper` is the ``env_wrapper`` of :func:`mskbench.train`
  choosing between them.
* :class:`ResidualPolicy` makes a trained residual policy a policy of the plain
  residual task (``act(obs)`` returns the executed action), for
  ``run_episode`` and the periodic evaluation of a residual run
  (:attr:`ResidualWrapper.eval_wrapper`, through which :func:`mskbench.train`
  runs the protocol's). Evaluation returns are the task's rewards (without the
  residual penalty, a training cost). A residual run's checkpoint and its export act so wherever they
  are loaded (:class:`ResidualActing`, their ``acts_through``).

``mskbench train ResidualWalk --base RUN`` (or :func:`train_residual`) trains one.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from mskbench.catalog import task_ids
from mskbench.envs.vector import checked_actions, worlds
from mskbench.envs.wrappers import BatchedWrapper, VectorWrapper, is_batched
from mskbench.paradigms.residual.action import FORMULA, combine, residual_penalty
from mskbench.paradigms.residual.tasks import resolve_base

__all__ = ["FORMULA", "ResidualActing", "ResidualBatchedEnv", "ResidualMap", "ResidualPolicy", "ResidualVectorEnv",
           "ResidualWrapper", "combine", "residual_penalty", "residual_policy", "train_residual"]


class ResidualMap:
    """A bound residual task's action map: the executed action for an observation and a residual action.

    ``obs`` holds the task's ``base_action`` and ``foot_contact`` blocks (``layout``: the env's
    observation layout); shapes ``(..., obs_size)`` and ``(..., n_muscles)``.
    """

    def __init__(self, task, layout: Mapping[str, slice]):
        for block in ("task/base_action", "task/foot_contact"):
            if block not in layout:
                raise ValueError(f"{task.name} is not a residual task: its observation has no {block!r} block "
                                 f"(residual tasks: {', '.join(task_ids(family='residual'))})")
        self.task = task
        self.base = layout["task/base_action"]
        self.contact = layout["task/foot_contact"]
        self.c_res = float(task.residual_l2_weight)

    def alpha(self, obs, xp):
        return self.task.residual_alpha(obs[..., self.contact], xp)

    def __call__(self, obs, a_res, xp):
        return combine(obs[..., self.base], a_res, self.alpha(obs, xp), xp)

    def penalty(self, a_res, xp):
        """``c_res · mean(a_res²)`` (a reward: negative)."""
        return self.c_res * residual_penalty(a_res, xp)


class ResidualVectorEnv(VectorWrapper):
    """A :class:`~mskbench.envs.protocols.VectorEnv` taking residual actions (NumPy worlds).

    ``info["episode_returns"]`` are the returns the trainer optimises (penalty included);
    ``info["executed_actions"]`` the muscle actions sent to the worlds. The map reads the last
    observation, which ``reset`` keeps besides passing it through.
    """

    def __init__(self, env, *, penalty: bool = True):
        super().__init__(env)
        task = worlds(env, "the residual map (it reads the worlds' task)")[0].task
        self.map = ResidualMap(task, env.obs_layout)
        self.use_penalty = penalty
        self._obs: np.ndarray | None = None
        self._returns = np.zeros(env.num_envs)

    def reset(self, seed: int | None = None) -> np.ndarray:
        self._obs = self.env.reset(seed=seed)
        self._returns[:] = 0.0
        return self._obs

    def step(self, actions):
        if self._obs is None:
            raise RuntimeError("call reset() first")
        a_res = checked_actions(actions, self.num_envs, self.action_size, np.float64)
        full = self.map(np.asarray(self._obs, np.float64), a_res, np)
        obs, reward, terminated, truncated, info = self.env.step(full)
        pen = self.map.penalty(a_res, np) if self.use_penalty else np.zeros(self.num_envs)
        reward = np.asarray(reward, np.float64) + pen
        self._returns += reward
        done = np.logical_or(terminated, truncated)
        finished = [float(r) for r in self._returns[done]]
        self._returns[done] = 0.0
        self._obs = obs
        return obs, reward, terminated, truncated, {**info, "episode_returns": finished,
                                                    "residual_penalty": pen, "executed_actions": full}


class ResidualBatchedEnv(BatchedWrapper):
    """A :class:`~mskbench.envs.protocols.BatchedEnv` taking residual actions: the combination and the
    penalty (``reward_terms["residual_l2"]``, weighted) inside the jitted step. Everything else is the
    wrapped env's (``reset``, ``refresh``, ``reset_to``, ``task``, ...)."""

    def __init__(self, env, *, penalty: bool = True):
        super().__init__(env)
        self.map = ResidualMap(env.task, env.obs_layout)
        self.use_penalty = penalty

    def step(self, state, actions, auto_reset: bool = True, record: bool = False):
        import jax.numpy as jnp

        full = self.map(state.obs, actions, jnp)
        state, out = self.env.step(state, full, auto_reset=auto_reset, record=record)
        if self.use_penalty:
            pen = self.map.penalty(actions, jnp).astype(out.reward.dtype)
            out = out._replace(reward=out.reward + pen, reward_terms={**out.reward_terms, "residual_l2": pen})
        return state, out


class ResidualWrapper:
    """The ``env_wrapper`` of :func:`mskbench.train` for the residual tasks (:class:`~mskbench.training.EnvWrapper`).

    Its :attr:`eval_wrapper` makes the run's periodic evaluation act through the residual map: on the CPU
    the policy as a :class:`ResidualPolicy` in the protocol env, batched the :class:`ResidualBatchedEnv`
    without the penalty; best by the mean task return (the penalty is a training cost).
    """

    batched_env_options: dict[str, Any] = {}

    @property
    def settings(self) -> dict[str, Any]:
        return {"paradigm": "residual", "action": FORMULA, "penalty": "c_res * mean(a_res^2)"}

    @property
    def eval_wrapper(self):
        from mskbench.training import EvalWrapper

        return EvalWrapper(cpu_policy=lambda policy, env: ResidualPolicy(policy, ResidualMap(env.task, env.obs_layout)),
                           batched_env=lambda env: ResidualBatchedEnv(env, penalty=False), mean_length=True)

    @property
    def acts_through(self) -> tuple[str, dict[str, Any]]:
        """How the run's checkpoints act outside training (``run.json``, every export): :class:`ResidualActing`."""
        return f"{__name__}:ResidualActing", {}

    def __call__(self, env, out_dir: Path | None, resume: bool):
        if is_batched(env):
            return ResidualBatchedEnv(env)
        return ResidualVectorEnv(env)


class ResidualActing:
    """How a residual run's checkpoint acts (its ``acts_through``): the residual map of the residual task it
    acts in, over the base that task's options name. On a CPU env :meth:`policy` is a :class:`ResidualPolicy`;
    batched, the checkpoint's network acts in :meth:`batched_env` (without the penalty, a training cost)."""

    def policy(self, checkpoint: str | Path, env) -> "ResidualPolicy":
        from mskbench.agents.checkpoint import load_policy

        network = load_policy(checkpoint, env.obs_layout, env.observation_space.shape[0])
        return ResidualPolicy(network, ResidualMap(env.task, env.obs_layout))

    def batched_env(self, env) -> ResidualBatchedEnv:
        return ResidualBatchedEnv(env, penalty=False)


class ResidualPolicy:
    """A residual policy as a policy of the residual task: ``act(obs)`` is the executed action (Eq. 38)."""

    def __init__(self, residual, rmap: ResidualMap):
        from mskbench.policies import as_policy

        self.residual = as_policy(residual)
        self.map = rmap

    def reset(self, seed: int | None = None) -> None:
        self.residual.reset(seed)

    def act(self, obs):
        a_res = np.asarray(self.residual.act(obs), np.float64)
        return self.map(np.asarray(obs, np.float64), a_res, np).astype(np.float32)


def residual_policy(policy_spec: str, env) -> ResidualPolicy:
    """The residual policy of a run directory or checkpoint ``policy_spec`` on ``env`` (an
    :class:`~mskbench.envs.MSKEnv` of its residual task, made with the run's ``base``): a residual run's
    checkpoint acts so by itself (:class:`ResidualActing`); any other policy is put through the map."""
    from mskbench.eval.protocol import load_policy

    policy = load_policy(policy_spec, env, 0)
    if isinstance(policy, ResidualPolicy):
        return policy
    return ResidualPolicy(policy, ResidualMap(env.task, env.obs_layout))


def train_residual(task: str, base: str, **kwargs: Any):
    """:func:`mskbench.train` of residual task ``task`` over the frozen ``base`` (a checkpoint or a run
    directory of a tracking prior; ``zero``/``passive`` for tests): the task option ``base`` and the
    :class:`ResidualWrapper`. Other keyword arguments go to :func:`mskbench.train`."""
    from mskbench.tasks import resolve_name
    from mskbench.training import train

    options = dict(kwargs.pop("task_options", None) or {})
    options["base"] = resolve_base(base)
    name = resolve_name(task)
    residual = task_ids(family="residual")
    if name not in residual:
        raise ValueError(f"{task!r} is not a residual task; residual tasks: {', '.join(residual)}")
    return train(name, task_options=options, env_wrapper=ResidualWrapper(), **kwargs)

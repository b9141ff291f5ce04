"""Several CPU environments of one task stepped together, for trainers.

A :class:`~mskbench.envs.protocols.VectorEnv`: arrays over environments in and
out, finished episodes restarted in the same step (``info["final_obs"]``
holds their last observation, ``info["episode_returns"]`` their returns).
Environment ``i`` is first reset with ``seed + i``; later resets continue its
own random streams, so a run is reproducible.
"""

from __future__ import annotations

import copy

import numpy as np

from mskbench.envs.cpu_env import MSKEnv
from mskbench.tasks import Task


def checked_actions(actions, num_envs: int, action_size: int, dtype=None) -> np.ndarray:
    """``actions`` as an array of shape (num_envs, action_size), or a clear error."""
    a = np.asarray(actions, dtype=dtype)
    if a.shape != (num_envs, action_size):
        raise ValueError(f"actions must have shape ({num_envs}, {action_size}), got {a.shape}")
    return a


def step_each(returns: np.ndarray, obs_size: int, step_one, reset_one):
    """One step of every environment, finished ones restarted (the vector-env protocol).

    ``step_one(i) -> (obs, reward, terminated, truncated)`` steps environment
    ``i``; ``reset_one(i) -> obs`` restarts it. ``returns`` (per environment,
    updated in place) sums the rewards of the running episodes.
    """
    n = len(returns)
    obs = np.zeros((n, obs_size), np.float32)
    final = np.zeros_like(obs)
    reward = np.zeros(n)
    terminated = np.zeros(n, bool)
    truncated = np.zeros(n, bool)
    finished = []
    for i in range(n):
        o, r, term, trunc = step_one(i)
        reward[i], terminated[i], truncated[i] = r, term, trunc
        returns[i] += r
        final[i] = o
        if term or trunc:
            finished.append(returns[i])
            returns[i] = 0.0
            o = reset_one(i)
        obs[i] = o
    return obs, reward, terminated, truncated, {"final_obs": final, "episode_returns": finished}


def worlds(env, needed_by: str | None = None) -> list:
    """The worlds of a CPU vector env: the :class:`~mskbench.envs.MSKEnv` each of an :class:`MSKVectorEnv`, through
    any wrapper of one (a wrapper that replaces them, as the agentic tuner's, gives its own). The one way the
    package reaches them. An env without worlds (the batched JAX env): ``[]``, or with ``needed_by`` (what
    needs them) a one-line ``ValueError``."""
    found = getattr(env, "envs", None)
    if not found and needed_by is not None:
        raise ValueError(f"{needed_by} needs the worlds of the CPU vector env (backend 'cpu'), not a "
                         f"{type(env).__name__}")
    return list(found or [])


class MSKVectorEnv:
    """``num_envs`` :class:`~mskbench.envs.MSKEnv` of one task (an id, or a
    :class:`~mskbench.tasks.Task` that each env gets its own copy of)."""

    def __init__(self, task: str | Task, num_envs: int = 8, **env_kwargs):
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        self.envs = [MSKEnv(copy.deepcopy(task) if isinstance(task, Task) else task, **env_kwargs)
                     for _ in range(num_envs)]
        first = self.envs[0]
        self.num_envs = num_envs
        self.obs_layout = dict(first.obs_layout)
        self.obs_size = int(first.observation_space.shape[0])
        self.action_size = int(first.action_space.shape[0])
        self._returns = np.zeros(num_envs)

    def reset(self, seed: int | None = None) -> np.ndarray:
        self._returns[:] = 0.0
        return np.stack([env.reset(seed=None if seed is None else seed + i)[0]
                         for i, env in enumerate(self.envs)])

    def step(self, actions: np.ndarray):
        actions = checked_actions(actions, self.num_envs, self.action_size)

        def step_one(i):
            o, r, term, trunc, _ = self.envs[i].step(actions[i])
            return o, r, term, trunc

        return step_each(self._returns, self.obs_size, step_one, lambda i: self.envs[i].reset()[0])

    def close(self) -> None:
        for env in self.envs:
            env.close()

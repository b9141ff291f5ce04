"""Several CPU environments of one task stepped together, for trainers.

Implements the vector-env protocol of :mod:`mskbench.agents.ppo`: arrays over
environments in and out, finished episodes restarted in the same step
(``info["final_obs"]`` holds their last observation, ``info["episode_returns"]``
their returns). Environment ``i`` is first reset with ``seed + i``; later
resets continue its own random streams, so a run is reproducible.
"""

from __future__ import annotations

import numpy as np

from mskbench.envs.cpu_env import MSKEnv


class MSKVectorEnv:
    def __init__(self, task: str, num_envs: int = 8, **env_kwargs):
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        self.envs = [MSKEnv(task, **env_kwargs) for _ in range(num_envs)]
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
        actions = np.asarray(actions)
        if actions.shape != (self.num_envs, self.action_size):
            raise ValueError(f"actions must have shape ({self.num_envs}, {self.action_size}), got {actions.shape}")
        obs = np.zeros((self.num_envs, self.obs_size), np.float32)
        final = np.zeros_like(obs)
        reward = np.zeros(self.num_envs)
        terminated = np.zeros(self.num_envs, bool)
        truncated = np.zeros(self.num_envs, bool)
        finished = []
        for i, env in enumerate(self.envs):
            o, r, term, trunc, _ = env.step(actions[i])
            reward[i], terminated[i], truncated[i] = r, term, trunc
            self._returns[i] += r
            final[i] = o
            if term or trunc:
                finished.append(self._returns[i])
                self._returns[i] = 0.0
                o, _ = env.reset()
            obs[i] = o
        return obs, reward, terminated, truncated, {"final_obs": final, "episode_returns": finished}

    def close(self) -> None:
        for env in self.envs:
            env.close()

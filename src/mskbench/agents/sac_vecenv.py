"""A :class:`~mskbench.envs.protocols.VectorEnv` as Stable-Baselines3 sees it: the ``VecEnv`` that SBX's SAC
(:mod:`mskbench.agents.sac`) collects from, with an optional action map (DynSyn) between the learner and the
env. Stable-Baselines3 is imported only when the class is asked for.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from mskbench.envs.protocols import VectorEnv


def protocol_vec_env_class() -> type:
    """The ``ProtocolVecEnv`` class (defined at each call: it subclasses SB3's ``VecEnv``, imported then)."""
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv

    class ProtocolVecEnv(VecEnv):
        """A :class:`~mskbench.envs.protocols.VectorEnv` as an SB3 ``VecEnv`` (episodes restarted in the
        step, their last observation in ``infos[i]["terminal_observation"]``, a truncation flagged as
        ``TimeLimit.truncated`` so the critic bootstraps through it). ``action_map`` (learner actions ->
        muscle actions) sits between the learner and the env (DynSyn)."""

        def __init__(self, env: VectorEnv, action_size: int, action_map: Callable | None, seed: int):
            from gymnasium import spaces

            obs_space = spaces.Box(-np.inf, np.inf, (env.obs_size,), np.float32)
            act_space = spaces.Box(-1.0, 1.0, (action_size,), np.float32)
            self.render_mode = None
            super().__init__(env.num_envs, obs_space, act_space)
            self.env, self.action_map, self._seed = env, action_map, seed
            self.episode_returns: list[float] = []
            self._actions: np.ndarray | None = None

        def reset(self):
            obs = self.env.reset(seed=self._seed)
            self._seed += 1_000_003  # a resumed run's restarts differ from the first ones
            return np.asarray(obs, np.float32)

        def step_async(self, actions):
            self._actions = np.asarray(actions, np.float64)

        def step_wait(self):  # noqa: D401 - SB3 VecEnv API
            assert self._actions is not None
            a = self.action_map(self._actions) if self.action_map is not None else self._actions
            obs, reward, terminated, truncated, info = self.env.step(np.clip(a, -1.0, 1.0))
            done = np.logical_or(terminated, truncated)
            infos = [{} for _ in range(self.num_envs)]
            for i in np.flatnonzero(done):
                infos[i]["terminal_observation"] = np.asarray(info["final_obs"][i], np.float32)
                infos[i]["TimeLimit.truncated"] = bool(truncated[i] and not terminated[i])
            self.episode_returns.extend(float(r) for r in info.get("episode_returns", []))
            return np.asarray(obs, np.float32), np.asarray(reward, np.float32), done, infos

        def close(self):
            close = getattr(self.env, "close", None)
            if close is not None:
                close()

        def get_attr(self, attr_name, indices=None):
            return [getattr(self, attr_name)] * len(self._get_indices(indices))

        def set_attr(self, attr_name, value, indices=None):
            setattr(self, attr_name, value)

        def env_method(self, method_name, *args, indices=None, **kwargs):
            return [getattr(self, method_name)(*args, **kwargs)] * len(self._get_indices(indices))

        def env_is_wrapped(self, wrapper_class, indices=None):
            return [False] * len(self._get_indices(indices))

    return ProtocolVecEnv

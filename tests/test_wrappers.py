"""The wrapper bases of mskbench.envs.wrappers delegate everything and keep the protocols."""

from __future__ import annotations

import numpy as np

from mskbench.envs.protocols import BatchedEnv, VectorEnv
from mskbench.envs.wrappers import BatchedWrapper, VectorWrapper, is_batched


class _Vector:
    num_envs, obs_size, action_size, obs_layout = 2, 3, 4, {"x": slice(0, 3)}
    extra = "inner"

    def reset(self, seed=None):
        return np.full((2, 3), seed or 0.0)

    def step(self, actions):
        return actions.sum(), 1.0, False, False, {}

    def close(self):
        self.closed = True


class _Batched(_Vector):
    termination_names = ("fall",)

    def reset(self, key):
        return ("state", key)

    def step(self, state, actions, auto_reset=True, record=False):
        return state, (actions, auto_reset, record)

    def refresh(self, state):
        return ("fresh", state)


class _Doubled(VectorWrapper):
    def step(self, actions):
        return self.env.step(2 * actions)


def test_vector_wrapper_delegates_and_overrides_step_only():
    inner = _Vector()
    env = _Doubled(inner)
    assert isinstance(env, VectorEnv) and not is_batched(env)
    assert (env.num_envs, env.obs_size, env.action_size, env.extra) == (2, 3, 4, "inner")
    assert env.reset(seed=5)[0, 0] == 5
    assert env.step(np.ones(2))[0] == 4.0
    env.close()
    assert inner.closed


def test_batched_wrapper_delegates_and_keeps_the_protocol():
    env = BatchedWrapper(_Batched())
    assert isinstance(env, BatchedEnv) and is_batched(env) and not is_batched(_Vector())
    assert env.termination_names == ("fall",)
    assert env.reset(7) == ("state", 7)
    assert env.refresh("s") == ("fresh", "s")
    assert env.step("s", 1, auto_reset=False, record=True) == ("s", (1, False, True))


def test_worlds_are_reached_through_wrappers_and_an_env_without_them_is_a_one_line_error():
    import pytest

    from mskbench.envs.vector import worlds

    inner = _Vector()
    inner.envs = ["world 0", "world 1"]  # an MSKVectorEnv's worlds
    assert worlds(inner) == worlds(VectorWrapper(VectorWrapper(inner)), "a test") == ["world 0", "world 1"]
    assert worlds(_Batched()) == []  # the batched env has none: asked softly, an empty list
    with pytest.raises(ValueError, match=r"^latent-action filtering needs the worlds of the CPU vector env "
                                         r"\(backend 'cpu'\), not a BatchedWrapper$"):
        worlds(BatchedWrapper(_Batched()), "latent-action filtering")

"""Task logic is written once: the same StateView and task functions evaluated
with ``jax.numpy`` on the same physics state give the NumPy results.

This is the contract the batched JAX backend relies on.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from mskbench.envs import MSKEnv
from mskbench.envs.observation import flatten, observation_blocks
from mskbench.sim.state import StateView

jax = pytest.importorskip("jax", reason="JAX not installed (pip install -e '.[test]')")
jnp = jax.numpy


@pytest.fixture(autouse=True)
def _float64():
    """Compare at double precision, without leaking the setting into other test modules."""
    with jax.enable_x64(True):
        yield

FIELDS = ("qpos", "qvel", "xpos", "xmat", "xquat", "xipos", "cvel", "subtree_com", "act",
          "actuator_length", "actuator_velocity", "actuator_force", "sensordata")


def _as_jax(data) -> SimpleNamespace:
    # mjx.Data stores xmat as (nbody, 3, 3); use that shape to cover it.
    out = {f: jnp.asarray(getattr(data, f)) for f in FIELDS}
    out["xmat"] = out["xmat"].reshape(-1, 3, 3)
    return SimpleNamespace(**out)


def _ts_as_jax(ts: dict) -> dict:
    return {k: jnp.asarray(v) for k, v in ts.items()}


@pytest.mark.parametrize("task", ["Stand", "Walk", "Reach"])
def test_task_functions_match_between_numpy_and_jax(task):
    env = MSKEnv(task)
    env.reset(seed=3)
    rng = np.random.default_rng(0)
    for _ in range(5):  # a state with motion, muscle activity and contacts
        env.step(rng.uniform(-1, 1, 416).astype(np.float32))
    ts = env.task_state
    view_np = env.sim.view()
    view_jx = StateView(_as_jax(env.data), env.handles, jnp)

    ts_np = env.task.advance(view_np, ts, np)
    ts_jx = env.task.advance(view_jx, _ts_as_jax(ts), jnp)
    assert set(ts_np) == set(ts_jx)
    for k in ts_np:
        np.testing.assert_allclose(np.asarray(ts_jx[k]), ts_np[k], rtol=1e-12, atol=1e-12, err_msg=k)

    terms_np = env.task.reward_terms(view_np, ts_np, np)
    terms_jx = env.task.reward_terms(view_jx, ts_jx, jnp)
    assert list(terms_np) == list(terms_jx) == list(env.task.reward_weights)
    for k in terms_np:
        np.testing.assert_allclose(float(terms_jx[k]), float(terms_np[k]), rtol=1e-9, atol=1e-12, err_msg=k)

    term_np = env.task.termination(view_np, ts_np, np)
    term_jx = env.task.termination(view_jx, ts_jx, jnp)
    assert {k: bool(v) for k, v in term_np.items()} == {k: bool(v) for k, v in term_jx.items()}

    obs_np = flatten(observation_blocks(view_np, env.task.observation(view_np, ts_np, np), np), np)
    obs_jx = flatten(observation_blocks(view_jx, env.task.observation(view_jx, ts_jx, jnp), jnp), jnp)
    np.testing.assert_allclose(np.asarray(obs_jx), obs_np, rtol=1e-6, atol=1e-6)

    for steps, terminated in ((1, False), (env.task.horizon, False), (env.task.horizon, True)):
        assert bool(env.task.success(ts_jx, steps, terminated, jnp)) == bool(
            env.task.success(ts_np, steps, terminated, np))


@pytest.mark.parametrize("task", ["Stand", "Walk", "Reach"])
def test_task_functions_trace_under_jit(task):
    """The step-time functions are traceable (no Python branching on array values)."""
    env = MSKEnv(task)
    env.reset(seed=1)
    env.step(np.zeros(416, np.float32))
    fields = vars(_as_jax(env.data))
    ts = _ts_as_jax(env.task_state)

    @jax.jit
    def step_logic(fields, ts):
        view = StateView(SimpleNamespace(**fields), env.handles, jnp)
        ts = env.task.advance(view, ts, jnp)
        terms = env.task.reward_terms(view, ts, jnp)
        done = env.task.termination(view, ts, jnp)
        obs = flatten(observation_blocks(view, env.task.observation(view, ts, jnp), jnp), jnp)
        return ts, terms, done, obs

    _, terms, done, obs = step_logic(fields, ts)
    view = env.sim.view()
    ts_np = env.task.advance(view, env.task_state, np)
    ref = env.task.reward_terms(view, ts_np, np)
    for k in ref:
        np.testing.assert_allclose(float(terms[k]), ref[k], rtol=1e-9, atol=1e-12, err_msg=k)
    assert {k: bool(v) for k, v in done.items()} == {
        k: bool(v) for k, v in env.task.termination(view, ts_np, np).items()}
    assert obs.shape == env.observation_space.shape

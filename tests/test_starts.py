"""Starts as specified: per-episode draws on every suite task, the couplings kept, and the batched
environment's device draw the same distribution as the CPU environment's host draw."""

from __future__ import annotations

import numpy as np
import pytest

import mskbench
from mskbench.envs.perturbations import seed_streams
from mskbench.tasks.base import HostRandom, KeyRandom, Task
from mskbench.tasks.starts import StartNoise, add_start_noise, yaw_root

#: Suite tasks whose per-episode draw is only in the task state (targets, waypoints): the body's
#: start pose is the same every episode, as in the original (Reach) or as the paper says (WalkTurn).
TASK_STATE_ONLY = {"Reach", "WalkTurn"}
#: Suite tasks whose per-episode draw is only in a prop (Catch: the throw); the body's pose is fixed.
PROP_ONLY = {"Catch"}
#: Device-drawn starts with noise (the statistical parity test covers these).
NOISY_DEVICE_STARTS = ("Stand", "Balance", "Squat", "StepStones", "Slide", "Hurdle", "OpenDoor",
                       "WalkAndSit", "PoleWalk", "ChinUp")


def _start(env, seed: int):
    return env.task.initial_state(env._ctx, seed_streams(seed)["init"])


@pytest.mark.parametrize("task", mskbench.TASK_IDS)
def test_starts_differ_between_seeds(shared_envs, task):
    """Two episode seeds start from different states (the body's pose unless documented otherwise)."""
    env = shared_envs(task)
    a, b = _start(env, 0), _start(env, 1)
    same_body = np.array_equal(a.qpos, b.qpos) and np.array_equal(a.qvel, b.qvel)
    same_ts = all(np.array_equal(np.asarray(a.task_state[k]), np.asarray(b.task_state[k])) for k in a.task_state)
    # the body's own pose apart from its place on the floor (a root x, y shift alone changes nothing it observes)
    joints = np.asarray(env.handles.joint_qpos)
    same_pose = np.array_equal(a.qpos[joints], b.qpos[joints]) and np.array_equal(a.qpos[3:7], b.qpos[3:7])
    if task in TASK_STATE_ONLY:
        assert same_body and not same_ts, f"{task}: the draw is in the task state only"
    elif task in PROP_ONLY:
        assert same_pose and not np.array_equal(a.qpos, b.qpos), f"{task}: the draw is in a prop only"
    else:
        assert not same_pose, f"{task}: the body's start pose is the same for two seeds"
    np.testing.assert_allclose(env.handles.couplings.residual(b.qpos), 0.0, atol=1e-12)


def test_couplings_resolve_is_one_function_for_numpy_and_jax(stand_env):
    """``resolve`` under ``jax.numpy`` (jitted) gives NumPy's positions and chain-rule velocities, and
    ``apply`` (in place) is ``resolve``."""
    jax = pytest.importorskip("jax", reason="JAX not installed (pip install -e '.[test]')")
    import jax.numpy as jnp

    h = stand_env.handles
    c = h.couplings
    rng = np.random.default_rng(0)
    q = stand_env._ctx.default_qpos.copy()
    q[h.joint_qpos] += rng.normal(0.0, 0.1, len(h.joint_qpos))
    v = rng.normal(0.0, 1.0, stand_env.model.nv)
    q_np, v_np = c.resolve(q, np, v, h.qvel_of_qpos)
    np.testing.assert_allclose(c.residual(q_np), 0.0, atol=1e-12)
    q_in, v_in = q.copy(), v.copy()
    c.apply(q_in, h.qvel_of_qpos, v_in)
    np.testing.assert_array_equal(q_in, q_np)
    np.testing.assert_array_equal(v_in, v_np)
    with jax.enable_x64(True):
        q_jx, v_jx = jax.jit(lambda q, v: c.resolve(q, jnp, v, h.qvel_of_qpos))(jnp.asarray(q), jnp.asarray(v))
    np.testing.assert_allclose(np.asarray(q_jx), q_np, rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.asarray(v_jx), v_np, rtol=0, atol=1e-12)
    # the chain rule: a dependent joint's velocity is d(dependent)/d(driver) times the driver's
    k = int(np.flatnonzero(c.drv >= 0)[0])
    eps = 1e-6
    q_eps = q_np.copy()
    q_eps[c.drv[k]] += eps
    slope = (c.resolve(q_eps, np)[0][c.dep[k]] - q_np[c.dep[k]]) / eps
    assert v_np[h.qvel_of_qpos[c.dep[k]]] == pytest.approx(slope * v_np[h.qvel_of_qpos[c.drv[k]]], rel=1e-4, abs=1e-9)


def test_start_noise_goes_on_independent_joints_and_keeps_ranges(stand_env):
    """The noise moves independent joints only (dependents follow their drivers), stays within the
    joint ranges, noises no root height, and dependent velocities follow the chain rule."""
    task = stand_env.task
    tables = task.start_tables
    start = task.start(stand_env._ctx)
    noise = StartNoise(joint_rad=0.5, root_xy_m=0.01, root_quat=0.01, root_vel=0.1, joint_vel=1.0)
    qpos, qvel = add_start_noise(tables, noise, start.qpos, start.qvel, HostRandom(np.random.default_rng(1)), np)
    c = stand_env.handles.couplings
    np.testing.assert_allclose(c.residual(qpos), 0.0, atol=1e-12)
    assert qpos[2] == start.qpos[2]
    assert np.linalg.norm(qpos[3:7]) == pytest.approx(1.0)
    assert np.all(qpos[tables.joints] >= tables.low) and np.all(qpos[tables.joints] <= tables.high)
    assert not set(tables.joints.tolist()) & set(c.dep.tolist())
    _, v_resolved = c.resolve(qpos, np, qvel.copy(), stand_env.handles.qvel_of_qpos)
    np.testing.assert_array_equal(v_resolved, qvel)
    with pytest.raises(ValueError, match="joint_rad"):
        StartNoise(joint_rad=-1.0)


def test_yaw_root_turns_about_the_vertical(stand_env):
    """``yaw_root`` keeps the heights of the body's points and turns its heading by the angle."""
    ctx = stand_env._ctx
    q0 = ctx.pose()
    s0 = ctx.forward(q0)
    h0 = s0.u_fwd.copy()
    z0 = s0.foot_heights.copy()
    s1 = ctx.forward(yaw_root(q0, 0.3, np))
    np.testing.assert_allclose(s1.foot_heights, z0, atol=1e-12)
    assert np.arctan2(s1.u_fwd[1], s1.u_fwd[0]) - np.arctan2(h0[1], h0[0]) == pytest.approx(0.3, abs=1e-9)


@pytest.mark.parametrize("task", NOISY_DEVICE_STARTS)
def test_device_draw_is_the_host_draw_distribution(shared_envs, task):
    """The batched env's starts (``randomize`` with JAX keys, jitted and vmapped, float32) and the CPU
    env's (``randomize`` with NumPy's generator) are the same distribution: a two-sample KS test on
    every coordinate of ``qpos``/``qvel``/task state that varies (family-wise α = 0.001, Bonferroni),
    and on the independently drawn coordinates pooled after standardising each."""
    jax = pytest.importorskip("jax", reason="JAX not installed (pip install -e '.[test]')")
    import jax.numpy as jnp
    from scipy.stats import ks_2samp

    env = shared_envs(task)
    assert type(env.task).randomize is not Task.randomize and env.task.device_resets
    n = 300
    hosts = [_start(env, s) for s in range(n)]
    keys_ts = sorted(hosts[0].task_state)

    def rows(qpos, qvel, ts):
        return np.concatenate([np.asarray(qpos, float), np.asarray(qvel, float),
                               *(np.asarray(ts[k], float).reshape(qpos.shape[0], -1) for k in keys_ts)], axis=1)

    host = rows(np.stack([h.qpos for h in hosts]), np.stack([h.qvel for h in hosts]),
                {k: np.stack([np.asarray(h.task_state[k]) for h in hosts]) for k in keys_ts})
    start = env.task.start(env._ctx)

    def draw(key):
        init = env.task.randomize(start, KeyRandom(key), jnp)
        return init.qpos, init.qvel, init.task_state

    with jax.enable_x64(False):
        qpos, qvel, ts = jax.jit(jax.vmap(draw))(jax.random.split(jax.random.PRNGKey(7), n))
    device = rows(np.asarray(qpos), np.asarray(qvel), {k: np.asarray(v) for k, v in ts.items()})

    std = host.std(axis=0)
    varying = np.flatnonzero(std > 1e-7)
    assert len(varying) > 0
    fixed = np.setdiff1d(np.arange(host.shape[1]), varying)
    np.testing.assert_allclose(device[:, fixed], host[:1, fixed].repeat(n, 0), atol=1e-5,
                               err_msg=f"{task}: a coordinate fixed on the host varies on the device")
    # Clipped joints (and their dependents) put an atom in a coordinate's distribution at one value; the
    # device computes that value in float32, so device values that close to a host atom are the atom.
    for j in varying:
        values, counts = np.unique(host[:, j], return_counts=True)
        for a in values[counts > 1]:
            near = np.abs(device[:, j] - a) <= 1e-3 * std[j] + 1e-6 * abs(a) + 1e-8
            device[near, j] = a
    alpha = 1e-3 / len(varying)
    p = np.array([ks_2samp(host[:, j], device[:, j]).pvalue for j in varying])
    assert p.min() > alpha, f"{task}: coordinate {varying[p.argmin()]} differs (KS p = {p.min():.2g})"
    # Pooled, for the noise's scale: the independently drawn coordinates (independent joints, root and
    # independent joints' velocities) without atoms, each as its distance from the noise-free start over the
    # host's spread. (Standardised about the pooled mean instead, the test read the host sample's own chance
    # mean offset, shared by every task drawn from the same seeds, as a difference: p < 1e-3 on Stand's
    # noise for two device keys of three.)
    tables = env.task.start_tables
    nq = env.model.nq
    drawn = np.concatenate([tables.joints, nq + np.arange(6), nq + tables.dofs])
    drawn = [j for j in drawn if j in set(varying.tolist()) and np.unique(host[:, j]).size == n]
    centre = rows(start.qpos[None], start.qvel[None],
                  {k: np.asarray(start.task_state[k])[None] for k in keys_ts})[0, drawn]
    sd = host[:, drawn].std(0)
    z_host, z_dev = (np.abs(host[:, drawn] - centre) / sd).ravel(), (np.abs(device[:, drawn] - centre) / sd).ravel()
    assert ks_2samp(z_host, z_dev).pvalue > 1e-3, f"{task}: the pooled draws' scale differs"

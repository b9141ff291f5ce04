"""The imitation prior: procedural references, the tracking task, the tracking metrics.

(The task contract and NumPy/JAX parity of TrackWalk/TrackRun/TrackStairs are checked by
test_task_contract.py and test_array_namespace.py; Eq. 19/20 themselves by test_direct.py.)
"""

from __future__ import annotations

import math

import mujoco
import numpy as np
import pytest

from mskbench.body.myofullbody import rotate_root
from mskbench.metrics import (absolute_site_error, divergence_time, joint_position_error, relative_site_error,
                              root_position_error, site_tracking_error, site_tracking_rmse, tracking_rmse)
from mskbench.tasks.motion_reference import gait_period_s, lookup, smoothed_lift
from mskbench.tasks.stairs import staircase


# -- metrics on constructed trajectories ----------------------------------------------------------
def test_joint_root_and_site_errors_on_constructed_trajectories():
    q_ref = np.zeros((2, 4))
    q = np.array([[0.1, -0.1, 0.1, -0.1], [0.0, 0.0, 0.0, 0.4]])
    np.testing.assert_allclose(joint_position_error(q, q_ref), [0.1, 0.2])
    root_ref = np.zeros((2, 3))
    root = np.array([[3.0, 4.0, 12.0], [0.0, 0.0, 1.0]])
    np.testing.assert_allclose(root_position_error(root, root_ref), [13.0, 1.0])
    np.testing.assert_allclose(root_position_error(root, root_ref, planar=True), [5.0, 0.0])

    # 16 sites; the body is where the reference is, shifted by 1 m in x (sample 0) or with one site
    # 0.4 m off (sample 1): absolute error sees the shift, the root-relative error does not.
    ref = np.random.default_rng(0).normal(size=(2, 16, 3))
    sites = ref.copy()
    sites[0] += [1.0, 0.0, 0.0]
    sites[1, 5] += [0.0, 0.4, 0.0]
    root, root_ref = np.zeros((2, 3)), np.zeros((2, 3))
    root[0] = [1.0, 0.0, 0.0]
    e_abs = absolute_site_error(sites, ref)
    np.testing.assert_allclose(e_abs, [math.sqrt(16 / 48), math.sqrt(0.16 / 48)])
    np.testing.assert_allclose(e_abs, site_tracking_error(sites, ref))
    np.testing.assert_allclose(relative_site_error(sites, ref, root, root_ref), [0.0, math.sqrt(0.16 / 48)], atol=1e-15)
    assert site_tracking_rmse(sites, ref) == pytest.approx(math.sqrt((16 / 48 + 0.16 / 48) / 2))
    assert site_tracking_rmse(sites, ref) == pytest.approx(tracking_rmse(e_abs))
    for bad in ((q, q_ref[:, :3]), (q[0], q_ref)):
        with pytest.raises(ValueError):
            joint_position_error(*bad)
    with pytest.raises(ValueError):
        root_position_error(root[:, :2], root_ref[:, :2])
    with pytest.raises(ValueError):
        relative_site_error(sites, ref, root[:1], root_ref[:1])


def test_divergence_time_of_a_tracking_trajectory_against_its_reference_rollout():
    """Eq. 20 on Eq. 19 errors of constructed site trajectories: the rollout leaves the reference at
    0.30 s and stays off; the reference rollout's error stays at 0.01 m."""
    t = 0.01 * np.arange(1, 61)
    ref_sites = np.zeros((60, 16, 3))
    reference_rollout = ref_sites + 0.01
    rollout = ref_sites + np.where(t >= 0.30, 0.05 + (t - 0.30), 0.005)[:, None, None]
    e, e_ref = site_tracking_error(rollout, ref_sites), site_tracking_error(reference_rollout, ref_sites)
    assert divergence_time(t, e, t, e_ref) == pytest.approx(0.30)
    assert divergence_time(t, site_tracking_error(reference_rollout * 0.5, ref_sites), t, e_ref) is None


# -- references ---------------------------------------------------------------------------------
def test_procedural_periods_and_periodic_lookup():
    assert gait_period_s("walk", 1.2) == pytest.approx(1.1)  # Walk's synthetic gait
    assert gait_period_s("walk", 1.5) < gait_period_s("walk", 1.2)  # cadence grows with speed
    assert gait_period_s("run", 3.0) == pytest.approx(0.72)
    assert gait_period_s("stairs", 0.5) == pytest.approx(2.0)  # two treads (1 m) per stride
    with pytest.raises(ValueError):
        gait_period_s("swim", 1.0)
    table = np.arange(4.0)[:, None] * np.ones((4, 2))
    np.testing.assert_allclose(lookup(table, 0.125), [0.5, 0.5])
    np.testing.assert_allclose(lookup(table, 0.875), [1.5, 1.5])  # wraps from the last row to the first
    np.testing.assert_allclose(lookup(table, 1.125), lookup(table, 0.125))


def test_stair_lift_is_a_ramp_over_the_staircase():
    x, z = smoothed_lift(staircase().height)
    at = lambda v: float(np.interp(v, x, z))  # noqa: E731
    assert at(0.3) == pytest.approx(0.0) and at(4.5) == pytest.approx(0.75)
    assert np.all(np.diff(z) >= -1e-12)
    # the 0.5 m average of the treads: 0.075 m at the first riser, then 0.15 m per 0.5 m tread
    for v in (1.0, 1.5, 2.0, 2.5, 3.0):
        assert at(v) == pytest.approx(0.075 + 0.3 * (v - 1.0), abs=1e-9)
    assert at(6.0) == pytest.approx(0.75)  # past the landing the path stays up


def test_reference_start_matches_the_body_and_advances(shared_envs):
    env = shared_envs("TrackWalk")
    env.reset(seed=3)
    task, ts = env.task, env.task_state
    ref = task.reference
    view = env.sim.view()
    # the start is the reference: Eq. 19 error below a millimetre, joints exact up to interpolation
    sites_ref = ref.sites(ts["ref_t"], ts["phase0"], ts["root0"])
    assert site_tracking_error(env.data.xpos[task._site_ids], sites_ref) < 1e-3
    assert joint_position_error(view.q_joints, ref.q(ts["ref_t"], ts["phase0"])) < 1e-3
    # 1 s later on the reference clock: the pelvis has travelled v·1 s along +x, one stride is periodic
    p0 = ref.pelvis(0.0, ts["phase0"], ts["root0"])
    p1 = ref.pelvis(1.0, ts["phase0"], ts["root0"])
    pT = ref.pelvis(ref.period_s, ts["phase0"], ts["root0"])
    assert p1[0] - p0[0] == pytest.approx(1.2, abs=0.02) and abs(p1[1] - p0[1]) < 0.02
    np.testing.assert_allclose(pT - p0, [1.2 * ref.period_s, 0.0, 0.0], atol=1e-9)
    obs, _, _, _, _ = env.step(np.zeros(env.n_muscles, np.float32))
    assert env.task_state["ref_t"] == pytest.approx(env.control_dt_s)
    assert obs[env.obs_layout["task/lookahead"]].shape == (4 * 51,)


def test_early_termination_on_large_site_deviation(shared_envs):
    env = shared_envs("TrackWalk")
    env.reset(seed=0)
    task = env.task
    view = env.sim.view()
    assert not any(task.termination(view, env.task_state, np).values())
    # the body pitched 60 degrees forward about its root: every site relative to the pelvis moves,
    # the mean relative site error passes 0.3 m (the root itself stays where the reference is)
    env.data.qpos[:] = rotate_root(env.data.qpos, math.radians(60.0), (0.0, 1.0, 0.0))
    mujoco.mj_forward(env.model, env.data)
    view = env.sim.view()
    dev = float(task.site_deviation(view, env.task_state, np))
    done = task.termination(view, env.task_state, np)
    assert dev > task.site_dev_max_m and done["site_deviation"]
    assert not done["pelvis_too_low"]
    env.reset(seed=0)

"""Task logic on constructed states: termination, success, clocks, touches, and StateView."""

from __future__ import annotations

import dataclasses
import sys

import mujoco
import numpy as np
import pytest
from contract import forward, reset_noise_free, rotate_root, ts_copy

import mskbench
from mskbench.sim import StateView, quat_tilt
from mskbench.tasks import REGISTRY, Reach, Stand, Walk, make_task


# -- options ------------------------------------------------------------------------------
@pytest.mark.parametrize("name", mskbench.TASK_IDS)
def test_options_are_documented_config_fields(name):
    """Every option is a field of the task's frozen ``Config`` with a one-line description, named in
    the module docstring, and an attribute of the task at its default; overrides reach the attribute."""
    cls = REGISTRY[name]
    task = cls()
    assert dataclasses.is_dataclass(cls.Config) and cls.Config.__dataclass_params__.frozen
    assert task.config == cls.default_config()
    doc = sys.modules[cls.__module__].__doc__
    for key, (default, text) in cls.options().items():
        assert text and "\n" not in text, f"{name}.{key}: no one-line description"
        assert f"``{key}``" in doc, f"{name}: option {key!r} not named in the module docstring"
        assert getattr(task, key) == default
    key, (default, _) = next(iter(cls.options().items()))
    value = tuple(v + 0.01 for v in default) if isinstance(default, tuple) else default + 1
    assert getattr(make_task(name, **{key: value}), key) == value
    with pytest.raises(ValueError, match="has no option 'no_such_option'"):
        make_task(name, no_such_option=1)


# -- StateView --------------------------------------------------------------------------
def test_quat_tilt():
    for angle in (0.0, 0.3, 1.0, 2.5):
        q = np.array([np.cos(angle / 2), 0.0, np.sin(angle / 2), 0.0])
        assert quat_tilt(np, q) == pytest.approx(angle, abs=1e-12)
    # Yaw does not tilt.
    assert quat_tilt(np, np.array([np.cos(0.7), 0, 0, np.sin(0.7)])) == pytest.approx(0.0, abs=1e-12)


def test_com_vel_and_body_vel_match_mujoco(stand_env):
    env = stand_env
    env.reset(seed=0)
    rng = np.random.default_rng(0)
    env.data.qpos[7:] += rng.normal(0, 0.05, env.model.nq - 7)
    env.data.qvel[:] = rng.normal(0, 1.0, env.model.nv)
    view = forward(env)
    mujoco.mj_subtreeVel(env.model, env.data)
    root = env.handles.bodies["root"]
    np.testing.assert_allclose(view.com_vel, env.data.subtree_linvel[root], atol=1e-9, rtol=0)
    assert np.linalg.norm(view.com_vel) > 0.1
    res = np.zeros(6)
    for role in ("foot_l", "hand_r", "pelvis"):
        bid = env.handles.bodies[role]
        # Velocity of the body frame's origin (xpos): MuJoCo's mjOBJ_XBODY.
        mujoco.mj_objectVelocity(env.model, env.data, mujoco.mjtObj.mjOBJ_XBODY, bid, res, 0)
        np.testing.assert_allclose(view.vel(role), res[3:], atol=1e-9, rtol=0)
    np.testing.assert_allclose(view.com_pos, env.data.subtree_com[root], atol=0)
    np.testing.assert_array_equal(view.foot_heights, [view.pos("foot_l")[2], view.pos("foot_r")[2]])


def test_muscle_force_normalisation(stand_env):
    stand_env.reset(seed=0)
    stand_env.step(np.ones(416, np.float32))
    view = stand_env.sim.view()
    np.testing.assert_allclose(view.muscle_force * stand_env.handles.muscle_force_nominal,
                               stand_env.data.actuator_force, rtol=1e-12)
    assert view.muscle_force.max() <= 0.0 + 1e-12  # muscles pull
    assert view.muscle_force.min() < -1e-3


# -- Stand ---------------------------------------------------------------------------------
def test_stand_default_state_does_not_terminate(stand_env):
    stand_env.reset(seed=0)
    view = stand_env.sim.view()
    term = stand_env.task.termination(view, stand_env.task_state, np)
    assert set(term) == {"com_too_low", "tilted"}
    assert not any(term.values())
    assert view.com_pos[2] > 0.9


def test_stand_com_too_low(stand_env):
    stand_env.reset(seed=0)
    stand_env.data.qpos[2] -= 0.2
    view = forward(stand_env)
    assert view.com_pos[2] < 0.8
    term = stand_env.task.termination(view, stand_env.task_state, np)
    assert term["com_too_low"] and not term["tilted"]
    # Just above the threshold it does not fire.
    stand_env.data.qpos[2] += 0.2 - (0.94 - 0.81)
    view = forward(stand_env)
    assert view.com_pos[2] > 0.8
    assert not stand_env.task.termination(view, stand_env.task_state, np)["com_too_low"]


@pytest.mark.parametrize("angle,tilted", [(1.0, True), (0.7, False), (-1.0, True)])
def test_stand_tilted(stand_env, angle, tilted):
    reset_noise_free(stand_env)  # upright exactly; the noise tilts the root by ~0.01 rad
    rotate_root(stand_env, angle)
    view = forward(stand_env)
    assert view.tilt == pytest.approx(abs(angle), abs=1e-9)
    term = stand_env.task.termination(view, stand_env.task_state, np)
    assert bool(term["tilted"]) is tilted
    assert not term["com_too_low"]


def test_stand_tilted_via_step(stand_env):
    stand_env.reset(seed=0)
    rotate_root(stand_env, 1.0, axis=(0.0, 1.0, 0.0))
    forward(stand_env)
    _, _, terminated, _, info = stand_env.step(np.zeros(416, np.float32))
    assert terminated and info["termination"] == "tilted"


def test_stand_success():
    task = Stand()
    ts = {}
    assert not task.success(ts, 999, False, np)
    assert task.success(ts, 1000, False, np)
    assert not task.success(ts, 1000, True, np)
    assert not task.success(ts, 0, False, np)


def test_stand_rewards_at_rest(stand_env):
    stand_env.reset(seed=0)  # the noisy start is near the neutral pose, at zero velocity (the paper's)
    terms = stand_env.task.reward_terms(stand_env.sim.view(), stand_env.task_state, np)
    assert 0.9 < terms["pose_preservation"] < 1.0 and terms["absolute_stillness"] == pytest.approx(1.0)
    assert np.all(stand_env.data.qvel == 0.0)
    reset_noise_free(stand_env)
    terms = stand_env.task.reward_terms(stand_env.sim.view(), stand_env.task_state, np)
    assert terms["pose_preservation"] == pytest.approx(1.0)
    assert terms["absolute_stillness"] == pytest.approx(1.0)
    assert terms["feet_planted"] == pytest.approx(1.0)
    assert terms["efficiency"] == 0.0
    assert terms["survival"] == 1.0
    assert 0.9 < terms["torso_balance"] <= 1.0


# -- Walk ----------------------------------------------------------------------------------
def test_walk_default_no_termination_and_com_too_low(walk_env):
    walk_env.reset(seed=0)
    task, ts = walk_env.task, walk_env.task_state
    assert not any(task.termination(walk_env.sim.view(), ts, np).values())
    walk_env.data.qpos[2] -= 0.5
    view = forward(walk_env)
    assert view.com_pos[2] < 0.5
    term = task.termination(view, ts, np)
    assert term["com_too_low"] and not term["tilted"]
    # Stand's threshold (0.8 m) is not Walk's: 0.6 m is fine for Walk.
    walk_env.data.qpos[2] += 0.5 - (view.com_pos[2] + 0.5 - 0.6)
    view = forward(walk_env)
    assert 0.5 < view.com_pos[2] < 0.8
    assert not task.termination(view, ts, np)["com_too_low"]


def test_walk_tilted(walk_env):
    walk_env.reset(seed=0)
    rotate_root(walk_env, 0.9)
    term = walk_env.task.termination(forward(walk_env), walk_env.task_state, np)
    assert term["tilted"]


def test_walk_phase_advances_and_wraps(walk_env):
    task = walk_env.task
    assert task.control_dt_s == pytest.approx(0.01)
    dphi = 0.01 / 1.1
    obs, _ = walk_env.reset(seed=6)
    p0 = float(walk_env.task_state["phase"])
    lay = walk_env.obs_layout
    np.testing.assert_allclose(obs[lay["task/phase"]], [np.sin(2 * np.pi * p0), np.cos(2 * np.pi * p0)],
                               atol=1e-6)
    p = p0
    for _ in range(3):
        obs, *_ = walk_env.step(np.zeros(416, np.float32))
        p = (p + dphi) % 1.0
        assert float(walk_env.task_state["phase"]) == pytest.approx(p, abs=1e-12)
    np.testing.assert_allclose(obs[lay["task/phase"]], [np.sin(2 * np.pi * p), np.cos(2 * np.pi * p)],
                               atol=1e-6)

    view = walk_env.sim.view()
    ts = task.advance(view, {"phase": np.float64(0.995)}, np)
    assert ts["phase"] == pytest.approx(0.995 + dphi - 1.0, abs=1e-12)
    assert 0.0 <= ts["phase"] < 1.0
    # 110 control steps make one 1.1 s stride.
    ts = {"phase": np.float64(0.3)}
    for _ in range(110):
        ts = task.advance(view, ts, np)
    assert ts["phase"] == pytest.approx(0.3, abs=1e-9)


def test_walk_reset_state(walk_env):
    lay = walk_env.obs_layout
    errs = []
    for seed in range(6):
        obs, _ = walk_env.reset(seed=seed)
        dq = obs[lay["task/delta_q"]]
        # Off the reference's sample grid, the linear interpolation of coupled
        # (dependent) joints differs from re-resolving their couplings by ~1e-4 rad.
        errs.append(np.abs(dq).max())
        assert obs[lay["qvel"]][0] == pytest.approx(1.2)
        assert walk_env.data.qvel[0] == 1.2
        terms = walk_env.task.reward_terms(walk_env.sim.view(), walk_env.task_state, np)
        assert terms["kinematic_imitation"] > 0.9999
        view = walk_env.sim.view()
        assert view.u_fwd[0] > 0.99
    assert max(errs) < 5e-4


def test_walk_reset_on_grid_phase_matches_reference_exactly(walk_env):
    task = walk_env.task
    ref = task.reference

    class GridRng:
        def uniform(self, low, high):
            return 0.25  # exactly sample 50 of 200

    init = task.initial_state(walk_env._ctx, GridRng())
    assert init.task_state["phase"] == 0.25
    q = init.qpos[walk_env.handles.joint_qpos]
    np.testing.assert_allclose(q, ref.q_table[50], atol=1e-12)
    np.testing.assert_allclose(init.qvel[walk_env.handles.joint_dof], ref.qdot_table[50], atol=1e-12)
    assert init.qvel[0] == 1.2 and np.all(init.qvel[1:6] == 0.0)
    np.testing.assert_allclose(walk_env.handles.couplings.residual(init.qpos), 0.0, atol=1e-12)


def test_walk_reference_is_periodic_and_interpolates(walk_env):
    ref = walk_env.task.reference
    assert ref.q_table.shape == (200, 122)
    np.testing.assert_allclose(ref.q_ref(0.0), ref.q_ref(1.0), atol=1e-12)
    np.testing.assert_allclose(ref.q_ref(0.0025), 0.5 * (ref.q_table[0] + ref.q_table[1]), atol=1e-12)
    np.testing.assert_allclose(ref.q_ref(0.9975), 0.5 * (ref.q_table[199] + ref.q_table[0]), atol=1e-12)
    # The legs are half a stride apart.
    h = walk_env.handles
    jl = list(h.joint_qpos).index(h.joints_qpos["knee_l"])
    jr = list(h.joint_qpos).index(h.joints_qpos["knee_r"])
    np.testing.assert_allclose(ref.q_table[:, jl], np.roll(ref.q_table[:, jr], 100), atol=1e-12)


def test_walk_rejects_bad_period():
    with pytest.raises(ValueError, match="period_s"):
        Walk(period_s=0.0)


# -- Reach ---------------------------------------------------------------------------------
def _reach_setup(env, seed=0):
    env.reset(seed=seed)
    view = env.sim.view()
    ts = ts_copy(env.task_state)
    hand = np.array(view.pos("hand_r"))
    return view, ts, hand


def test_reach_initial_state(reach_env):
    obs, _ = reach_env.reset(seed=0)
    ts = reach_env.task_state
    assert ts["targets"].shape == (32, 3)
    assert int(ts["target_idx"]) == 0 and int(ts["touches"]) == 0 and int(ts["steps_on_target"]) == 0
    pelvis = reach_env.sim.view().pelvis_pos
    rel = ts["targets"] - np.array([pelvis[0], pelvis[1], 0.0])
    low, high = reach_env.task.target_boxes()  # the original's curriculum boxes
    assert np.all(rel >= low) and np.all(rel <= high)
    np.testing.assert_allclose(low[0], reach_env.task.target_low)
    np.testing.assert_allclose(high[0], reach_env.task.target_high)
    delta = obs[reach_env.obs_layout["task/delta_p_reach"]]
    np.testing.assert_allclose(delta, ts["targets"][0] - reach_env.sim.view().pos("hand_r"), atol=1e-6)
    assert min(reach_env.sim.view().knee_heights) > 0.15
    assert not any(reach_env.task.termination(reach_env.sim.view(), ts, np).values())


def test_reach_touch_counts_and_advances(reach_env):
    task = reach_env.task
    view, ts, hand = _reach_setup(reach_env)
    ts["targets"][0] = hand
    ts["steps_on_target"] = np.int64(7)
    ts1 = task.advance(view, ts, np)
    assert bool(ts1["touch"])
    assert int(ts1["touches"]) == 1
    assert int(ts1["target_idx"]) == 1
    assert int(ts1["steps_on_target"]) == 0
    assert task.reward_terms(view, ts1, np)["touch_bonus"] == 1.0
    assert not task.success(ts1, 10, False, np)

    ts1["targets"][1] = hand + np.array([0.0, 0.0, 0.14])  # inside the 0.15 m radius
    ts2 = task.advance(view, ts1, np)
    assert bool(ts2["touch"]) and int(ts2["touches"]) == 2 and int(ts2["target_idx"]) == 2
    assert task.success(ts2, 10, False, np)
    assert task.success_trace(ts2) == {"touches": 2}

    ts2["targets"][2] = hand + np.array([0.16, 0.0, 0.0])  # just outside
    ts3 = task.advance(view, ts2, np)
    assert not bool(ts3["touch"])
    assert int(ts3["touches"]) == 2 and int(ts3["target_idx"]) == 2 and int(ts3["steps_on_target"]) == 1
    assert task.reward_terms(view, ts3, np)["touch_bonus"] == 0.0


def test_reach_timeout_advances_without_touch(make_env):
    env = make_env(Reach(retarget_on_timeout=True))
    task = env.task
    assert task.window_steps == 100  # 2 s at 20 ms per control step
    view, ts, hand = _reach_setup(env)
    ts["targets"][:] = hand + np.array([3.0, 0.0, 0.0])
    for _ in range(task.window_steps - 1):
        ts = task.advance(view, ts, np)
    assert int(ts["target_idx"]) == 0 and int(ts["steps_on_target"]) == task.window_steps - 1
    ts = task.advance(view, ts, np)
    assert int(ts["target_idx"]) == 1
    assert int(ts["steps_on_target"]) == 0
    assert int(ts["touches"]) == 0 and not bool(ts["touch"])
    assert not task.success(ts, 100, False, np)


def test_reach_target_index_saturates(reach_env):
    task = reach_env.task
    view, ts, hand = _reach_setup(reach_env)
    ts["targets"][:] = hand
    ts["target_idx"] = np.int64(31)
    ts = task.advance(view, ts, np)
    assert int(ts["target_idx"]) == 31 and int(ts["touches"]) == 1


def test_reach_touch_in_env_step(reach_env):
    reach_env.reset(seed=1)
    ts = reach_env.task_state
    hand = np.array(reach_env.sim.view().pos("hand_r"))
    ts["targets"] = ts["targets"].copy()
    ts["targets"][0] = hand  # the hand barely moves in one 20 ms step
    _, reward, terminated, _, info = reach_env.step(np.zeros(416, np.float32))
    assert not terminated
    assert info["reward_terms"]["touch_bonus"] == 1.0
    assert info["success_trace"]["touches"] == 1
    assert reward > 200.0
    assert info["success"] is False


def test_reach_knee_dropped(reach_env):
    reach_env.reset(seed=0)
    reach_env.data.qpos[2] -= 0.4
    view = forward(reach_env)
    assert min(view.knee_heights) < 0.15
    term = reach_env.task.termination(view, reach_env.task_state, np)
    assert term == {"knee_dropped": True}
    _, _, terminated, _, info = reach_env.step(np.zeros(416, np.float32))
    assert terminated and info["termination"] == "knee_dropped"


def test_reach_phase_observation(reach_env):
    reach_env.reset(seed=0)
    ts = ts_copy(reach_env.task_state)
    ts["steps_on_target"] = np.int64(25)  # a quarter of the 2 s window of 20 ms steps
    obs = reach_env.task.observation(reach_env.sim.view(), ts, np)
    np.testing.assert_allclose(obs["phase"], [1.0, 0.0], atol=1e-12)


def test_reach_rejects_bad_window():
    with pytest.raises(ValueError, match="target_window_s"):
        Reach(target_window_s=0.0)


def test_state_view_is_backend_neutral(stand_env):
    stand_env.reset(seed=0)
    view = StateView(stand_env.data, stand_env.handles, np)
    assert view.q_joints.shape == (122,) and view.qdot_joints.shape == (122,)
    assert view.activation.shape == (416,) and view.touch.shape == (4,)
    assert view.touch.sum() > 0  # standing on the floor


# -- control step binding ------------------------------------------------------------------
def test_tasks_bind_to_control_step(make_env):
    reach = make_env("Reach", frame_skip=5)  # Reach's physics step is 2 ms
    assert reach.control_dt_s == pytest.approx(0.01)
    assert reach.metadata["render_fps"] == 100
    assert reach.task.window_steps == 200  # still a 2 s window
    walk = make_env("Walk", frame_skip=5)
    walk.reset(seed=0)
    p0 = float(walk.task_state["phase"])
    walk.step(np.zeros(416, np.float32))
    assert float(walk.task_state["phase"]) == pytest.approx((p0 + 0.005 / 1.1) % 1.0, abs=1e-12)
    with pytest.raises(ValueError, match="frame_skip"):
        make_env("Stand", frame_skip=0)

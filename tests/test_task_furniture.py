"""Sit, WalkAndSit and OpenDoor: contract, props, and task logic on constructed states."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from mskbench.body.myofullbody import rotate_root
from mskbench.envs import MSKEnv
from mskbench.tasks import chair
from mskbench.tasks.open_door import DOOR_PLANE_X_M, DOOR_RANGE_RAD, WALL_X_M, OpenDoor
from mskbench.tasks.sit import Sit
from mskbench.tasks.walk_and_sit import WalkAndSit

SEATED = {"hip_flexion_l": 1.5, "hip_flexion_r": 1.5, "knee_angle_l": 1.6, "knee_angle_r": 1.6}
KNEELING = {"knee_angle_l": 1.6, "knee_angle_r": 1.6, "ankle_angle_l": -0.69, "ankle_angle_r": -0.69}


@pytest.fixture
def envs(shared_envs):
    """The session's shared envs of these tasks (tests reset them and restore what they change)."""
    return {name: shared_envs(name) for name in ("Sit", "WalkAndSit", "OpenDoor")}


def _view(env, qpos, qvel=None):
    env.data.qpos[:] = qpos
    env.data.qvel[:] = 0.0 if qvel is None else qvel
    mujoco.mj_forward(env.model, env.data)
    return env.sim.view()


def _seated_qpos(env, lift_m=0.0, xy=None):
    """The seated pose (hips 1.5, knees 1.6 rad), its buttocks/thighs resting on the seat top (+ lift)."""
    ctx = env._ctx
    xy = tuple(chair.SEAT_TARGET[:2]) if xy is None else xy
    qpos = ctx.pose(SEATED, root_xy=xy, on_ground=False)
    ctx.forward(qpos)
    floor = mujoco.mj_name2id(env.model, mujoco.mjtObj.mjOBJ_GEOM, "floor")
    geoms = [env.model.geom(n).id for n in ("r_pelvis_col", "l_pelvis_col", "r_femur1_col", "l_femur1_col",
                                             "r_femur2_col", "l_femur2_col")]
    low = min(mujoco.mj_geomDistance(env.model, ctx.data, floor, g, 10.0, np.zeros(6)) for g in geoms)
    qpos[2] += chair.SEAT_TOP_M - low + lift_m
    return qpos


# -- contract -------------------------------------------------------------------------------------


# -- chair -----------------------------------------------------------------------------------------
def test_seat_target_is_the_seated_pelvis(envs):
    env = envs["Sit"]
    seat = env.model.geom("sit_chair_seat")
    top = env.model.geom_pos[seat.id][2] + env.model.geom_size[seat.id][1]
    assert top == pytest.approx(chair.SEAT_TOP_M)
    view = _view(env, _seated_qpos(env))
    np.testing.assert_allclose(view.pelvis_pos, chair.SEAT_TARGET, atol=0.01)
    assert bool(chair.seated(view, np))
    # Seat and backrest collide with the body: sinking into the seat makes contacts with it.
    _view(env, _seated_qpos(env, lift_m=-0.02))
    names = {(env.model.geom(c.geom1).name, env.model.geom(c.geom2).name) for c in env.data.contact[:env.data.ncon]}
    assert any("sit_chair_seat" in pair for pair in names)
    back = env.model.geom("sit_chair_back").id
    assert env.model.geom_contype[back] == 1 and env.model.geom_conaffinity[back] == 1
    legs = [env.model.geom(f"sit_chair_leg{i}").id for i in range(4)]
    assert all(env.model.geom_contype[g] == 0 and env.model.geom_conaffinity[g] == 0 for g in legs)


def test_seated_indicator_thresholds(envs):
    env = envs["Sit"]
    assert bool(chair.seated(_view(env, _seated_qpos(env, lift_m=0.05)), np))
    assert not bool(chair.seated(_view(env, _seated_qpos(env, lift_m=0.08)), np))
    assert bool(chair.seated(_view(env, _seated_qpos(env, xy=(chair.SEAT_CENTER[0], 0.23))), np))
    # Beside the seat (off its footprint, at seated height) is not seated.
    off = (chair.FRONT_EDGE_X_M + 0.05, 0.0)
    assert not bool(chair.seated(_view(env, _seated_qpos(env, xy=off)), np))
    side = (chair.SEAT_CENTER[0], chair.SEAT_RADIUS_M + 0.02)
    assert not bool(chair.seated(_view(env, _seated_qpos(env, xy=side)), np))


# -- Sit -------------------------------------------------------------------------------------------
def test_sit_initial_state(envs):
    env = envs["Sit"]
    for seed in range(3):
        env.reset(seed=seed)
        view = env.sim.view()
        d = chair.delta_p_chair(view, np)
        # The original's placement: the seat target 0.25 m behind (−x) the pelvis (± the 5 mm noise).
        assert -0.28 < d[0] < -0.22 and abs(d[1]) < 0.03
        assert view.u_fwd[0] > 0.99  # facing +x, away from the chair
        hip, knee = chair.mean_hip_knee(view, np)
        assert 0.25 < hip < 0.35 and 0.25 < knee < 0.35  # hips pre-flexed, as the original's 0.3 rad
        # On the heels (ankles dorsiflexed 0.25 rad with the shanks vertical: toes raised), nothing
        # touching the chair; the CoM is behind the heels, so left alone the body sits back.
        assert np.all(view.foot_heights < 0.05) and view.pos("toes_l")[2] > view.foot_heights[0] + 0.02
        props = [c for c in env.data.contact[:env.data.ncon]
                 if "chair" in env.model.geom(c.geom1).name + env.model.geom(c.geom2).name]
        assert props == []
        assert view.com_pos[0] < view.foot_pos[:, 0].min()


def test_sit_terminations(envs):
    env = envs["Sit"]
    task = env.task
    ctx = env._ctx

    def term(qpos):
        return {k: bool(v) for k, v in task.termination(_view(env, qpos), env.task_state, np).items()}

    env.reset(seed=0)
    assert not any(term(ctx.pose(root_xy=(0.5, 0.0))).values())
    assert not any(term(_seated_qpos(env)).values())  # seated on the chair is valid

    # pelvis_too_low: over the seat (so not missed_seat) at 0.24 m vs 0.26 m.
    q = _seated_qpos(env)
    q[2] += 0.24 - chair.SEAT_TARGET[2]
    t = term(q)
    assert t["pelvis_too_low"] and not t["missed_seat"]
    q[2] += 0.02
    assert not term(q)["pelvis_too_low"]

    # head_too_low: torso pitched forward 2.5 rad about the pelvis, pelvis high.
    q = rotate_root(ctx.pose(root_xy=(0.5, 0.0), on_ground=False), 2.5)
    q[2] = 1.0
    assert term(q) == {"pelvis_too_low": False, "head_too_low": True, "knee_down": False, "missed_seat": False}
    q = rotate_root(ctx.pose(root_xy=(0.5, 0.0), on_ground=False), 1.2)
    q[2] = 1.0
    assert not any(term(q).values())

    # knee_down: kneeling on the floor in front of the chair.
    q = ctx.pose(KNEELING, root_xy=(0.6, 0.0))
    assert term(q) == {"pelvis_too_low": False, "head_too_low": False, "knee_down": True, "missed_seat": False}

    # missed_seat: seated posture in front of the seat, pelvis at 0.32 m (below the seat top).
    q = _seated_qpos(env, xy=(0.3, 0.0))
    q[2] += 0.32 - chair.SEAT_TARGET[2]
    assert term(q) == {"pelvis_too_low": False, "head_too_low": False, "knee_down": False, "missed_seat": True}
    # The same height over the seat footprint is not missed_seat.
    q = _seated_qpos(env)
    q[2] += 0.32 - chair.SEAT_TARGET[2]
    assert not term(q)["missed_seat"]


def test_sit_has_sat_down_state_machine(envs):
    env = envs["Sit"]
    task = env.task
    env.reset(seed=0)
    ts = dict(env.task_state)
    assert float(ts["max_descent_mps"]) == 0.0
    seated = _view(env, _seated_qpos(env))
    for i in range(chair.SIT_HOLD_STEPS - 1):
        ts = task.advance(seated, ts, np)
        assert int(ts["seated_steps"]) == i + 1
    assert not task.success(ts, 29, False, np)
    ts = task.advance(seated, ts, np)
    assert bool(ts["has_sat_down"]) and task.success(ts, 30, False, np)
    # Sticky: standing up resets the counter, not the flag.
    ts = task.advance(_view(env, env._ctx.pose(root_xy=(0.5, 0.0))), ts, np)
    assert int(ts["seated_steps"]) == 0 and bool(ts["has_sat_down"])
    assert task.success_trace(ts) == {"has_sat_down": True, "seated_steps": 0, "max_descent_mps": 0.0}

    # Moving fast on the seat does not count; slow does. The fastest descent is kept.
    ts = chair.sit_state()
    qvel = np.zeros(env.model.nv)
    qvel[2] = -0.3
    ts = task.advance(_view(env, _seated_qpos(env), qvel), ts, np)
    assert int(ts["seated_steps"]) == 0 and float(ts["max_descent_mps"]) == pytest.approx(0.3)
    qvel[2] = -0.2
    ts = task.advance(_view(env, _seated_qpos(env), qvel), ts, np)
    assert int(ts["seated_steps"]) == 1 and float(ts["max_descent_mps"]) == pytest.approx(0.3)
    # Interrupted before 30: counter restarts, no flag.
    ts = {**chair.sit_state(), "seated_steps": np.int64(29)}
    ts = task.advance(_view(env, _seated_qpos(env, lift_m=0.1)), ts, np)
    assert int(ts["seated_steps"]) == 0 and not bool(ts["has_sat_down"])


def test_sit_rewards_on_constructed_states(envs):
    env = envs["Sit"]
    task = env.task
    env.reset(seed=0)
    qvel = np.zeros(env.model.nv)
    qvel[2] = -0.5
    view = _view(env, _seated_qpos(env), qvel)
    terms = task.reward_terms(view, env.task_state, np)
    d = chair.SEAT_TARGET - view.pelvis_pos
    assert terms["chair_approach"] == pytest.approx(2.0 / (np.hypot(d[0], d[1]) + 0.2))
    assert terms["chair_approach"] > 9.0
    assert terms["contact_docking"] == pytest.approx(np.exp(-(d[0] ** 2 + d[2] ** 2) / 0.045))
    assert terms["contact_docking"] > 0.99 and terms["lateral_centering"] > 0.99
    assert terms["seated_leg_geometry"] == pytest.approx(1.0, abs=1e-9)
    assert terms["soft_landing"] == pytest.approx(np.exp(-1.0), rel=1e-6)
    dx = view.foot_pos[:, 0] - view.pelvis_pos[0]
    assert terms["feet_tucked_under"] == pytest.approx(np.exp(-5.0 * np.sum(np.abs(dx - 0.2))))

    # Off to the side by 5 cm: lateral centering exp(−0.5); 0.3 m short in x: docking exp(−2).
    q = _seated_qpos(env, xy=(chair.SEAT_TARGET[0], 0.05))
    terms = task.reward_terms(_view(env, q), env.task_state, np)
    assert terms["lateral_centering"] == pytest.approx(np.exp(-0.5), rel=1e-6)
    q = _seated_qpos(env, xy=(chair.SEAT_TARGET[0] + 0.3, 0.0))
    q[2] = chair.SEAT_TARGET[2] + (q[2] - _view(env, q).pelvis_pos[2])  # pelvis exactly at target height
    terms = task.reward_terms(_view(env, q), env.task_state, np)
    assert terms["contact_docking"] == pytest.approx(np.exp(-2.0), rel=1e-6)
    assert terms["chair_approach"] == pytest.approx(2.0 / 0.5, rel=1e-6)
    # Knee 0.1 rad off with k_knee = 3: exp(−0.3).
    q = env._ctx.pose({**SEATED, "knee_angle_l": 1.7, "knee_angle_r": 1.7}, on_ground=False)
    terms = task.reward_terms(_view(env, q), env.task_state, np)
    assert terms["seated_leg_geometry"] == pytest.approx(np.exp(-0.3), rel=1e-9)


def test_sit_zero_action_rollout_is_finite(envs):
    env = envs["Sit"]
    env.reset(seed=1)
    for _ in range(50):
        obs, _, terminated, _, info = env.step(np.zeros(416, np.float32))
        assert np.isfinite(obs).all()
        assert not terminated, info["termination"]


# -- WalkAndSit --------------------------------------------------------------------------------------
def test_walk_and_sit_initial_state(envs):
    env = envs["WalkAndSit"]
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        view = env.sim.view()
        d = chair.delta_p_chair(view, np)
        # U(1.05, 1.35) m in front of the target, y U(±0.02) m, each with N(0, 0.005²) on top.
        assert -1.38 <= d[0] <= -1.02 and abs(d[1]) <= 0.045
        assert view.u_fwd[0] > 0.99  # back to the chair (yaw within ±0.05 rad, plus noise)
        # Backwards at U(0.05, 0.2) m/s plus N(0, 0.005²); every other velocity N(0, 0.005²)-small.
        assert -0.23 <= env.data.qvel[0] <= -0.02 and np.all(np.abs(env.data.qvel[1:]) < 0.03)
        assert obs[env.obs_layout["task/seated"]][0] == 0.0
        assert np.all(view.foot_heights < 0.05)


def test_walk_and_sit_terminations(envs):
    env = envs["WalkAndSit"]
    task, ctx = env.task, env._ctx
    env.reset(seed=0)

    def term(qpos):
        return {k: bool(v) for k, v in task.termination(_view(env, qpos), env.task_state, np).items()}

    assert term(ctx.pose(root_xy=(1.0, 0.0))) == {"head_too_low": False, "knee_down": False}
    assert term(_seated_qpos(env)) == {"head_too_low": False, "knee_down": False}
    assert term(ctx.pose(KNEELING, root_xy=(1.0, 0.0))) == {"head_too_low": False, "knee_down": True}
    q = rotate_root(ctx.pose(root_xy=(1.0, 0.0), on_ground=False), 2.5)
    q[2] = 1.0
    assert term(q) == {"head_too_low": True, "knee_down": False}
    # Sitting on the floor (thighs level) brings the knees down to the ground too.
    q = _seated_qpos(env, xy=(1.0, 0.0))
    q[2] -= chair.SEAT_TOP_M
    assert term(q) == {"head_too_low": False, "knee_down": True}


def test_walk_and_sit_rewards(envs):
    env = envs["WalkAndSit"]
    task, ctx = env.task, env._ctx
    env.reset(seed=0)
    ts = env.task_state
    view = _view(env, _seated_qpos(env))
    terms = task.reward_terms(view, ts, np)
    d = chair.SEAT_TARGET - view.pelvis_pos
    assert terms["backwards_precision"] == pytest.approx(np.exp(-(d[0] ** 2 + d[1] ** 2) / 0.005))
    assert terms["ninety_degree_pose"] == pytest.approx(2.0, abs=1e-9)
    assert terms["relaxed_recline"] == 0.0  # upright on the seat
    assert terms["fast_descent"] == 0.0
    obs = task.observation(view, ts, np)
    assert obs["seated"].tolist() == [1.0]

    q = _seated_qpos(env, xy=(chair.SEAT_TARGET[0], 0.05))
    assert task.reward_terms(_view(env, q), ts, np)["backwards_precision"] == pytest.approx(np.exp(-0.5), rel=1e-6)

    # Leaning back on the seat (torso 0.8 rad from vertical): recline pays; the same lean away from it does not.
    lean = ctx.pose(SEATED, base=rotate_root(ctx.default_qpos, -0.8), on_ground=False)
    lean[:3] = _seated_qpos(env)[:3]
    view = _view(env, lean)
    assert view.u_torso[2] < 0.8 and bool(chair.seated(view, np))
    assert task.reward_terms(view, ts, np)["relaxed_recline"] == 1.0
    lean[0] += 1.0
    assert task.reward_terms(_view(env, lean), ts, np)["relaxed_recline"] == 0.0

    # Fast descent at −1.6 m/s, not at −1.4 m/s.
    qvel = np.zeros(env.model.nv)
    q = _seated_qpos(env, lift_m=0.2)
    qvel[2] = -1.6
    assert task.reward_terms(_view(env, q, qvel), ts, np)["fast_descent"] == 1.0
    qvel[2] = -1.4
    assert task.reward_terms(_view(env, q, qvel), ts, np)["fast_descent"] == 0.0

    # 90-degree pose: hips 1.0 rad, knees 1.6: exp(−5·0.25) + 1.
    q = ctx.pose({**SEATED, "hip_flexion_l": 1.0, "hip_flexion_r": 1.0}, on_ground=False)
    assert task.reward_terms(_view(env, q), ts, np)["ninety_degree_pose"] == pytest.approx(np.exp(-1.25) + 1.0)


def test_walk_and_sit_success_needs_flag_and_500_steps(envs):
    task = envs["WalkAndSit"].task
    assert task.horizon == 500
    sat = {"seated_steps": np.int64(40), "has_sat_down": np.bool_(True)}
    not_sat = {"seated_steps": np.int64(0), "has_sat_down": np.bool_(False)}
    assert not task.success(sat, 499, False, np)
    assert task.success(sat, 500, False, np)
    assert not task.success(not_sat, 500, False, np)


def test_walk_and_sit_moves_backwards(envs):
    env = envs["WalkAndSit"]
    env.reset(seed=0)
    x0 = env.sim.view().pelvis_pos[0]
    for _ in range(20):
        env.step(np.zeros(416, np.float32))
    assert env.sim.view().pelvis_pos[0] < x0 - 0.03


# -- OpenDoor ----------------------------------------------------------------------------------------
def test_open_door_initial_state(envs):
    env = envs["OpenDoor"]
    task = env.task
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        view = env.sim.view()
        assert env.data.qpos[task.hinge_qpos] == 0.0 and env.data.qvel[task.hinge_dof] == 0.0
        assert WALL_X_M - view.pelvis_pos[0] > 0.35  # standing in front of the closed door
        props = [c for c in env.data.contact[:env.data.ncon]
                 if "open_door" in env.model.geom(c.geom1).name + env.model.geom(c.geom2).name]
        assert props == []
        lay = env.obs_layout
        np.testing.assert_allclose(obs[lay["task/delta_p_handle"]],
                                   view.body_pos(task.handle_body) - view.pos("hand_r"), atol=1e-6)
        np.testing.assert_allclose(obs[lay["task/door"]], [0.0, 0.0])
        np.testing.assert_allclose(obs[lay["task/delta_p_target"]],
                                   [float(env.task_state["x0"]) + 2.0 - view.pelvis_pos[0], -view.pelvis_pos[1]],
                                   atol=1e-6)


def test_open_door_swings_away_when_pushed_and_not_towards_the_body(envs):
    env = envs["OpenDoor"]
    task = env.task
    m, d = env.model, env.data
    env.reset(seed=0)
    handle0 = d.xpos[task.handle_body].copy()
    for _ in range(400):
        d.xfrc_applied[task.handle_body] = [60.0, 0, 0, 0, 0, 0]
        mujoco.mj_step(m, d)
    d.xfrc_applied[:] = 0.0
    assert d.qpos[task.hinge_qpos] > 0.7
    assert d.xpos[task.handle_body][0] > handle0[0] + 0.3  # moved away from the body
    assert d.qpos[task.hinge_qpos] <= DOOR_RANGE_RAD[1] + 1e-3
    env.reset(seed=0)
    for _ in range(200):
        d.xfrc_applied[task.handle_body] = [-60.0, 0, 0, 0, 0, 0]
        mujoco.mj_step(m, d)
    d.xfrc_applied[:] = 0.0
    assert d.qpos[task.hinge_qpos] < 0.01


def test_open_door_wall_and_door_block_the_body(envs):
    env = envs["OpenDoor"]
    env.reset(seed=0)
    for y, geom in ((0.0, "open_door_slab"), (0.9, "open_door_wall_left"), (-0.9, "open_door_wall_right")):
        _view(env, env._ctx.pose(root_xy=(WALL_X_M + 0.05, y)))
        names = {env.model.geom(c.geom1).name for c in env.data.contact[:env.data.ncon]}
        names |= {env.model.geom(c.geom2).name for c in env.data.contact[:env.data.ncon]}
        assert geom in names


def test_open_door_room_leaves_only_the_doorway(envs):
    """From the start, every horizontal ray at hip, chest and knee height meets the room, the wall or the door
    within 3 m: no way round the door (the free-standing wall had ends 2 m to either side)."""
    env = envs["OpenDoor"]
    env.reset(seed=0)
    m, d = env.model, env.data
    props = [g for g in range(m.ngeom) if m.geom(g).name.startswith("open_door")]
    for z in (0.5, 1.0, 1.4):
        for angle in np.linspace(-np.pi, np.pi, 72, endpoint=False):
            start, direction = np.array([0.0, 0.0, z]), np.array([np.cos(angle), np.sin(angle), 0.0])
            hits = [mujoco.mju_rayGeom(d.geom_xpos[g], d.geom_xmat[g], m.geom_size[g], start, direction,
                                       int(m.geom_type[g])) for g in props]
            assert 0 < min(h for h in hits if h >= 0) < 3.0, (z, angle)


def test_open_door_counts_no_progress_past_the_wall_end(envs):
    """A body placed past the wall's end (a constructed state: the room forbids reaching it) meets neither the
    forward distance nor the native signal; the same distance through the doorway meets both."""
    env = envs["OpenDoor"]
    task, ctx = env.task, env._ctx
    env.reset(seed=0)
    x0 = float(env.task_state["x0"])
    for y, through in ((2.5, False), (-2.5, False), (0.0, True)):
        ts = dict(env.task_state)
        for x in (x0 + 1.0, x0 + 2.3):
            view = _view(env, ctx.pose(root_xy=(x, y)))
            ts = task.advance(view, ts, np)
        assert bool(ts["through_door"]) is through
        assert bool(task.success(ts, 2, False, np)) is through
        assert bool(task.solved_native(view, ts, 2, np)) is through
        assert (float(ts["max_forward"]) >= 2.0) is through


def test_open_door_terminations(envs):
    env = envs["OpenDoor"]
    task, ctx = env.task, env._ctx
    env.reset(seed=0)

    def term(qpos):
        return {k: bool(v) for k, v in task.termination(_view(env, qpos), env.task_state, np).items()}

    q = ctx.pose()
    assert term(q) == {"pelvis_too_low": False, "head_too_low": False}
    q[2] -= q[2] - 0.64
    assert term(q)["pelvis_too_low"]
    q[2] += 0.02
    assert not term(q)["pelvis_too_low"]
    # Bent forward 1.6 rad about the pelvis: head ~1.04 m, pelvis high.
    q = rotate_root(ctx.pose(on_ground=False), 1.6)
    q[2] = 0.95
    assert term(q) == {"pelvis_too_low": False, "head_too_low": True}
    q = rotate_root(ctx.pose(on_ground=False), 0.9)
    q[2] = 0.95
    assert term(q) == {"pelvis_too_low": False, "head_too_low": False}


def test_open_door_success_history(envs):
    env = envs["OpenDoor"]
    task, ctx = env.task, env._ctx
    env.reset(seed=0)
    ts = dict(env.task_state)
    x0 = float(ts["x0"])

    def at(x, door=0.0):
        q = ctx.pose(root_xy=(x, 0.0))
        q[task.hinge_qpos] = door
        return _view(env, q)

    ts = task.advance(at(x0 + 0.5), ts, np)
    assert float(ts["pass_new"]) == 0.0 and not task.success(ts, 1, False, np)
    ts = task.advance(at(x0 + 1.05), ts, np)
    assert bool(ts["passed_1m"]) and float(ts["pass_new"]) == 1.0
    assert task.reward_terms(at(x0 + 1.05), ts, np)["pass_threshold"] == 1.0
    ts = task.advance(at(x0 + 1.2), ts, np)
    assert float(ts["pass_new"]) == 0.0  # one-time bonus
    ts = task.advance(at(x0 + 0.8), ts, np)
    ts = task.advance(at(x0 + 1.1), ts, np)
    assert float(ts["pass_new"]) == 0.0  # re-crossing pays nothing
    assert not task.success(ts, 5, False, np)
    ts = task.advance(at(x0 + 2.05), ts, np)
    assert bool(ts["passed_2m"]) and float(ts["pass_new"]) == 1.0
    assert task.success(ts, 6, False, np)
    ts = task.advance(at(x0), ts, np)  # walking back keeps the max
    assert float(ts["max_forward"]) == pytest.approx(2.05, abs=1e-9) and task.success(ts, 7, True, np)

    # Both thresholds in one step pay 2.
    ts = task.advance(at(x0 + 2.1), dict(env.task_state), np)
    assert float(ts["pass_new"]) == 2.0

    # Door angle: 0.95 is not enough, 1.05 is, and it stays a success after closing.
    ts = task.advance(at(x0, door=0.95), dict(env.task_state), np)
    assert not task.success(ts, 1, False, np) and not bool(ts["door_open"])
    ts = task.advance(at(x0, door=1.05), ts, np)
    assert task.success(ts, 2, False, np) and not bool(ts["door_open"])
    ts = task.advance(at(x0, door=0.0), ts, np)
    assert float(ts["max_door_angle"]) == pytest.approx(1.05) and task.success(ts, 3, False, np)
    ts = task.advance(at(x0, door=1.25), ts, np)
    assert bool(ts["door_open"])
    assert task.success_trace(ts) == {"max_forward": 0.0, "max_door_angle": 1.25, "door_open": True, "passes": 0,
                                     "through_door": False}


def test_open_door_rewards(envs):
    env = envs["OpenDoor"]
    task, ctx = env.task, env._ctx
    env.reset(seed=0)
    ts = env.task_state

    # Door open 0.6 rad, hand far from the handle, pelvis before the wall: the gate is shut.
    q = ctx.pose(root_xy=(0.0, 0.0))
    q[task.hinge_qpos] = 0.6
    view = _view(env, q)
    terms = task.reward_terms(view, ts, np)
    dist = np.linalg.norm(view.body_pos(task.handle_body) - view.pos("hand_r"))
    assert dist > 0.3
    assert terms["hand_attractor"] == pytest.approx(np.exp(-1.5 * dist))
    assert terms["open_hinge"] == 0.0
    assert terms["dive_penalty"] == 0.0 and terms["split_penalty"] == 0.0
    # Pelvis past the wall's near face: the gate opens, 0.6/1.2 = 0.5.
    q[0] = WALL_X_M + 0.3
    assert task.reward_terms(_view(env, q), ts, np)["open_hinge"] == pytest.approx(0.5)
    # Right hand at the handle (door closed → 0, open 1.5 rad → clipped to 1).
    q = ctx.pose(root_xy=(0.0, 0.0))
    view = _view(env, q)
    q[0] += view.body_pos(task.handle_body)[0] - view.pos("hand_r")[0]
    q[1] += view.body_pos(task.handle_body)[1] - view.pos("hand_r")[1]
    q[2] += view.body_pos(task.handle_body)[2] - view.pos("hand_r")[2]
    view = _view(env, q)
    assert np.linalg.norm(view.body_pos(task.handle_body) - view.pos("hand_r")) < 1e-9
    terms = task.reward_terms(view, ts, np)
    assert terms["hand_attractor"] == pytest.approx(1.0) and terms["open_hinge"] == 0.0

    # Dive: bent forward 1.0 rad about the pelvis (head leads the pelvis by > 0.2 m).
    q = rotate_root(ctx.pose(on_ground=False), 1.0)
    view = _view(env, q)
    lead = view.head_pos[0] - view.pelvis_pos[0]
    assert lead > 0.2
    assert task.reward_terms(view, ts, np)["dive_penalty"] == pytest.approx(
        lead - 0.2 + max(0.0, view.pelvis_pos[0] - view.foot_pos[:, 0].mean() - 0.4))
    # Split: legs spread 0.6 rad each.
    q = ctx.pose({"hip_adduction_l": -0.6, "hip_adduction_r": -0.6}, on_ground=False)
    view = _view(env, q)
    assert view.d_xy_feet > 0.9
    assert task.reward_terms(view, ts, np)["split_penalty"] == pytest.approx(view.d_xy_feet - 0.8)


# -- backends ----------------------------------------------------------------------------------------
@pytest.mark.parametrize("task_cls", [Sit, WalkAndSit, OpenDoor])
def test_batched_cpu_backend_follows_the_cpu_env(task_cls):
    pytest.importorskip("jax")
    import jax.numpy as jnp

    from mskbench.jax_env import make

    def short():
        t = task_cls()
        t.horizon = 15
        return t

    jenv = make(short(), num_envs=1, impl="cpu", reset_bank=1)
    state = jenv.reset_to([5])
    cenv = MSKEnv(short())
    obs, _ = cenv.reset(seed=5)
    np.testing.assert_allclose(np.asarray(state.obs[0]), obs, rtol=1e-5, atol=1e-5)
    for _ in range(15):
        state, out = jenv.step(state, jnp.zeros((1, 416), jnp.float32), auto_reset=False)
        obs, reward, term, trunc, info = cenv.step(np.zeros(416, np.float32))
        np.testing.assert_allclose(np.asarray(out.obs[0]), obs, rtol=1e-4, atol=1e-4)
        assert float(out.reward[0]) == pytest.approx(reward, rel=1e-5, abs=1e-5)
        assert bool(out.success[0]) == info["success"]
        if term or trunc:
            break
    assert trunc and info["termination"] == "time_limit"
    cenv.close()


# -- fidelity: native solved signals and timing ------------------------------------------------------
def _at_pelvis(env, offset):
    """A standing pose (off the ground) whose pelvis origin is at the seat target point + ``offset``."""
    qpos = env._ctx.pose(on_ground=False)
    qpos[:3] = chair.SEAT_TARGET + np.asarray(offset, float)
    view = _view(env, qpos)
    np.testing.assert_allclose(view.pelvis_pos, qpos[:3], atol=1e-9)  # the pelvis is the root body
    return view


@pytest.mark.parametrize("offset, solved", [
    ((0.0, 0.0, 0.0), True), ((0.07, -0.07, 0.045), True),
    ((0.0, 0.105, 0.0), False), ((-0.075, 0.075, 0.0), False), ((0.0, 0.0, 0.055), False), ((0.0, 0.0, -0.055), False),
])
def test_sit_native_solved_is_the_originals_instant_seat_test(envs, offset, solved):
    env = envs["Sit"]
    env.reset(seed=0)
    view = _at_pelvis(env, offset)
    assert bool(env.task.solved_native(view, dict(env.task_state), 1, np)) is solved
    # It needs no hold: the Table XII flag has_sat_down is still false after that one step.
    ts = env.task.advance(view, dict(env.task_state), np)
    assert not bool(ts["has_sat_down"])


def test_sit_native_solved_on_the_seated_pose_and_not_at_the_start(envs):
    env = envs["Sit"]
    for seed in range(3):
        env.reset(seed=seed)
        assert not bool(env.task.solved_native(env.sim.view(), dict(env.task_state), 0, np))
    view = _view(env, _seated_qpos(env))
    assert bool(env.task.solved_native(view, dict(env.task_state), 1, np))
    view = _view(env, _seated_qpos(env, lift_m=0.06))  # hovering 6 cm above the seat: just misses
    assert not bool(env.task.solved_native(view, dict(env.task_state), 1, np))


@pytest.mark.parametrize("offset, solved", [
    ((0.0, 0.0, 0.0), True), ((0.10, 0.10, 0.115), True), ((0.0, 0.0, -0.115), True),
    ((0.0, 0.155, 0.0), False), ((-0.11, 0.11, 0.0), False), ((0.0, 0.0, 0.125), False),
])
def test_walk_and_sit_native_solved_is_the_originals_sticky_sit_flag(envs, offset, solved):
    env = envs["WalkAndSit"]
    task = env.task
    env.reset(seed=0)
    ts0 = dict(env.task_state)
    assert not bool(ts0["sat_native"]) and not bool(task.solved_native(env.sim.view(), ts0, 0, np))
    ts = task.advance(_at_pelvis(env, offset), ts0, np)
    assert bool(task.solved_native(env.sim.view(), ts, 1, np)) is solved
    assert not bool(ts["has_sat_down"])  # no hold, unlike the Table XII sit flag
    # Sticky: standing up again (far from the seat) keeps the flag.
    ts = task.advance(_at_pelvis(env, (0.8, 0.0, 0.4)), ts, np)
    assert bool(task.solved_native(env.sim.view(), ts, 2, np)) is solved
    assert not task.success(ts, 2, False, np)


@pytest.mark.parametrize("past_door_m, solved", [(1.21, True), (2.5, True), (1.19, False), (0.0, False)])
def test_open_door_native_solved_is_the_pelvis_past_the_door(envs, past_door_m, solved):
    env = envs["OpenDoor"]
    task = env.task
    env.reset(seed=0)
    view = _view(env, env._ctx.pose(root_xy=(DOOR_PLANE_X_M + past_door_m, 0.0)))
    ts = task.advance(view, dict(env.task_state), np)  # from the start: through the doorway (y = 0)
    assert bool(task.solved_native(view, ts, 1, np)) is solved
    # 1.2 m past the door is short of the Table XII 2.0 m forward displacement from the start.
    assert bool(task.success(ts, 1, False, np)) is (float(ts["max_forward"]) >= 2.0)


@pytest.mark.parametrize("name, timestep_s, control_dt_s, horizon, seconds", [
    ("Sit", 0.001, 0.01, 1000, 10.0),
    ("WalkAndSit", 0.001, 0.01, 500, 5.0),
    ("OpenDoor", 0.002, 0.02, 1000, 20.0),
])
def test_task_timing_follows_the_originals_scene(envs, name, timestep_s, control_dt_s, horizon, seconds):
    env = envs[name]
    assert env.model.opt.timestep == pytest.approx(timestep_s)
    assert env.control_dt_s == pytest.approx(control_dt_s) and env.task.control_dt_s == pytest.approx(control_dt_s)
    assert env.task.horizon == horizon
    assert env.control_dt_s * env.task.horizon == pytest.approx(seconds)


def test_open_door_scene_follows_the_originals_door(envs):
    env = envs["OpenDoor"]
    m = env.model
    slab = m.geom("open_door_slab")
    assert m.body_mass[slab.bodyid] == pytest.approx(19.36, abs=1e-6)
    np.testing.assert_allclose(2 * m.geom_size[slab.id], [0.08, 1.1, 2.2], atol=1e-9)
    hinge = m.joint("open_door_hinge")
    np.testing.assert_allclose(m.jnt_range[hinge.id], [0.0, 1.57])
    assert m.dof_damping[m.jnt_dofadr[hinge.id]] == pytest.approx(0.05)
    env.reset(seed=0)
    assert env.data.xpos[env.task.handle_body][2] == pytest.approx(1.05)

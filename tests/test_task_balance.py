"""SingleLegStand, Balance and Catch: contract, and task logic on constructed states."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from contract import forward, moving_state, reset_noise_free, rotate_root, ts_copy

from mskbench.body.myofullbody import rotate_root as body_rotate_root
from mskbench.tasks.balance import Balance
from mskbench.tasks.catch import Catch
from mskbench.tasks.single_leg_stand import SingleLegStand

ZERO = np.zeros(416, np.float32)


@pytest.fixture
def sls_env(shared_envs):
    return shared_envs("SingleLegStand")


@pytest.fixture
def balance_env(shared_envs):
    return shared_envs("Balance")


@pytest.fixture
def catch_env(shared_envs):
    return shared_envs("Catch")


def _prop_contacts(env, prop_geoms):
    """(geom1, geom2, dist) of the contacts involving any of ``prop_geoms``."""
    d = env.data
    return [(int(c.geom1), int(c.geom2), float(c.dist)) for c in d.contact[:d.ncon]
            if int(c.geom1) in prop_geoms or int(c.geom2) in prop_geoms]


def _min_body_distance(env, geom):
    """Smallest signed distance between a geom and any colliding body geom."""
    m, d = env.model, env.data
    tree = set(env.handles.body_tree.tolist())
    fromto = np.zeros(6)
    return min(mujoco.mj_geomDistance(m, d, geom, g, 10.0, fromto) for g in range(m.ngeom)
               if m.geom_bodyid[g] in tree and m.geom_contype[g])


# -- contract (all three) -----------------------------------------------------------------


@pytest.mark.parametrize("name", ["sls_env", "balance_env", "catch_env"])
def test_finite_after_zero_action_physics(name, request):
    """The initial state is sound: 50 zero-action control steps of physics stay finite."""
    env = request.getfixturevalue(name)
    env.reset(seed=0)
    for _ in range(50):
        assert env.sim.step(np.full(416, 0.5))
    assert np.isfinite(env.data.qpos).all() and np.isfinite(env.data.qvel).all()


def test_task_metadata():
    assert (SingleLegStand.horizon, Balance.horizon, Catch.horizon) == (1000, 1000, 200)
    assert SingleLegStand.family == Balance.family == "stabilization" and Catch.family == "interaction"
    assert SingleLegStand.reward_weights["foot_touch_penalty"] == -800.0
    assert Balance.reward_weights["stand_tall"] == 4.0
    assert Catch.reward_weights["interception_bonus"] == 500.0
    for t in (SingleLegStand, Balance, Catch):
        assert t.reward_weights["efficiency"] == -1.0


# -- SingleLegStand --------------------------------------------------------------------------
def test_sls_initial_flamingo(sls_env):
    env = sls_env
    layout = {k: v.stop - v.start for k, v in env.obs_layout.items() if k.startswith("task/")}
    assert layout == {"task/torso_quat": 4, "task/feet_height": 2, "task/com_height": 1}
    poses = []
    for seed in range(3):
        obs, _ = env.reset(seed=seed)
        s = env.sim.view()
        z_l, z_r = s.foot_heights
        assert z_l > 0.25 and z_r < 0.04  # left foot lifted, right planted
        assert s.pos("toes_l")[2] > 0.15
        assert abs(s.pelvis_pos[1] - s.pos("foot_r")[1]) < 0.03  # stance foot under the pelvis
        np.testing.assert_allclose(obs[env.obs_layout["task/com_height"]], [s.com_pos[2]], rtol=1e-6)
        np.testing.assert_allclose(env.handles.couplings.residual(env.data.qpos), 0.0, atol=1e-9)
        assert int(env.task_state["steps"]) == 0
        poses.append(env.data.qpos[env.handles.joint_qpos].copy())
    # Noise from the reset seed: different seeds differ, the same seed repeats.
    assert np.abs(poses[0] - poses[1]).max() > 1e-3
    env.reset(seed=1)
    np.testing.assert_array_equal(env.data.qpos[env.handles.joint_qpos], poses[1])
    # Only the right foot touches the floor.
    floor = env.model.geom("floor").id
    touching = {env.model.geom_bodyid[g1 if g2 == floor else g2]
                for g1, g2, _ in _prop_contacts(env, {floor})}
    names = {env.model.body(b).name for b in touching}
    assert names and names <= {"calcn_r", "toes_r"}


def test_sls_pelvis_too_low(sls_env):
    env = sls_env
    env.reset(seed=0)
    ts = env.task_state
    env.data.qpos[2] -= 0.35  # pelvis 0.947 -> ~0.60
    s = forward(env)
    z = s.pelvis_pos[2]
    env.data.qpos[2] += (0.6 - 0.005) - z
    term = env.task.termination(forward(env), ts, np)
    assert term["pelvis_too_low"]
    env.data.qpos[2] += 0.01
    assert not env.task.termination(forward(env), ts, np)["pelvis_too_low"]


def _left_foot_down(env, seed=0):
    """The flamingo pose with the left leg straight again: the left foot is on the floor."""
    env.reset(seed=seed)
    for name in ("hip_flexion_l", "knee_angle_l"):
        env.data.qpos[env._ctx.joint_qpos_adr(name)] = 0.0
    env.handles.couplings.apply(env.data.qpos)
    return forward(env)


def test_sls_dropped_foot_after_tolerance(sls_env):
    env = sls_env
    task = env.task
    s = _left_foot_down(env)
    assert min(s.foot_heights[0], s.pos("toes_l")[2]) < 0.05
    for steps, dropped in ((0, False), (10, False), (11, True), (500, True)):
        term = task.termination(s, {"steps": np.int64(steps)}, np)
        assert bool(term["dropped_foot"]) is dropped, steps
        assert not term["pelvis_too_low"]
    # The counter: advance() counts control steps from 0.
    ts = {"steps": np.int64(0)}
    for _ in range(11):
        ts = task.advance(s, ts, np)
    assert int(ts["steps"]) == 11 and task.termination(s, ts, np)["dropped_foot"]
    # A lifted foot does not trigger it however late.
    env.reset(seed=0)
    assert not task.termination(env.sim.view(), {"steps": np.int64(900)}, np)["dropped_foot"]


def test_sls_dropped_foot_toes_only(sls_env):
    """Tip-toe touch: heel high, toes low, counts as a dropped foot (heel-only penalty does not fire)."""
    env = sls_env
    env.reset(seed=0)
    s = env.sim.view()
    toes_z = float(s.pos("toes_l")[2])
    heel_z = float(s.foot_heights[0])
    assert heel_z > toes_z
    env.data.qpos[2] -= toes_z - 0.04  # toes at 0.04 m, heel still above 0.05 m
    s = forward(env)
    assert s.pos("toes_l")[2] == pytest.approx(0.04, abs=1e-9) and s.foot_heights[0] > 0.05
    term = env.task.termination(s, {"steps": np.int64(20)}, np)
    assert term["dropped_foot"]
    assert env.task.reward_terms(s, {"steps": np.int64(20)}, np)["foot_touch_penalty"] == 0.0


def test_sls_dropped_foot_via_step(sls_env):
    env = sls_env
    _left_foot_down(env)
    env.task_state["steps"] = np.int64(10)  # the next step is step 11
    _, _, terminated, _, info = env.step(ZERO)
    assert terminated and info["termination"] == "dropped_foot"


def test_sls_rewards_on_constructed_states(sls_env):
    env = sls_env
    task = env.task
    env.reset(seed=0)
    s = env.sim.view()
    ts = env.task_state
    terms = task.reward_terms(s, ts, np)
    d = s.pelvis_pos[:2] - s.pos("foot_r")[:2]
    assert terms["balance_com"] == pytest.approx(np.exp(-15.0 * (d @ d)), rel=1e-12)
    assert terms["lifted_foot_clear"] == pytest.approx(min(s.foot_heights[0] / 0.3, 1.0), rel=1e-12)
    assert terms["absolute_stillness"] == pytest.approx(1.0)
    assert terms["foot_touch_penalty"] == 0.0
    assert terms["efficiency"] == 0.0
    # Lateral lean: roll the body 0.3 rad about x; u_torso·ŷ and the upright term follow.
    rotate_root(env, 0.3, (1.0, 0.0, 0.0))
    s = forward(env)
    terms = task.reward_terms(s, ts, np)
    u = s.u_torso
    assert abs(u[1]) > 0.25
    assert terms["lateral_lean_penalty"] == pytest.approx(abs(u[1]), rel=1e-12)
    assert terms["upright_alignment"] == pytest.approx(np.exp(-10.0 * (1.0 - u[2]) ** 2), rel=1e-12)
    # Stillness from a constructed CoM velocity of 1 m/s: exp(−5).
    env.reset(seed=0)
    env.data.qvel[0] = 1.0
    terms = task.reward_terms(forward(env), ts, np)
    assert terms["absolute_stillness"] == pytest.approx(np.exp(-5.0), rel=1e-9)
    # Foot on the floor: the touch penalty fires, the clearance term is small.
    s = _left_foot_down(env)
    terms = task.reward_terms(s, ts, np)
    assert terms["foot_touch_penalty"] == 1.0
    assert terms["lifted_foot_clear"] == pytest.approx(s.foot_heights[0] / 0.3)
    assert terms["lifted_foot_clear"] < 0.17


def test_sls_success():
    task = SingleLegStand()
    ts = {"steps": np.int64(1000)}
    assert task.success(ts, 1000, False, np)
    assert not task.success(ts, 999, False, np)
    assert not task.success(ts, 1000, True, np)


def test_sls_rejects_negative_noise():
    with pytest.raises(ValueError, match="init_noise_rad"):
        SingleLegStand(init_noise_rad=-0.1)


# -- Balance -------------------------------------------------------------------------------
def test_balance_initial_state(balance_env):
    env = balance_env
    task = env.task
    layout = {k: v.stop - v.start for k, v in env.obs_layout.items() if k.startswith("task/")}
    assert layout == {"task/board_pos": 3, "task/board_quat": 4, "task/com_minus_board": 3,
                      "task/ball_minus_board": 3}
    obs, info = reset_noise_free(env)  # the designed stance; the noise is tests/test_starts.py's
    s = env.sim.view()
    assert s.pelvis_pos[2] == pytest.approx(1.28, abs=1e-9)
    assert s.chest_pitch == pytest.approx(-0.15, abs=3e-3)
    board, ball = s.body_pos(task.board_id), s.body_pos(task.ball_id)
    assert board[2] == pytest.approx(task.board_top_m - task.board_half_height_m)
    assert ball[2] == pytest.approx(task.ball_radius_m)
    np.testing.assert_allclose(board[:2], ball[:2], atol=1e-12)
    np.testing.assert_allclose(s.body_quat(task.board_id), [1, 0, 0, 0], atol=1e-12)
    # The body hangs just above the board: a small drop, no contact with the props yet.
    gap = _min_body_distance(env, env.model.geom("balance_board_geom").id)
    assert 0.0 < gap < 0.05
    props = {env.model.geom("balance_board_geom").id, env.model.geom("balance_ball_geom").id}
    floor = env.model.geom("floor").id
    for g1, g2, dist in _prop_contacts(env, props):
        assert {g1, g2} <= props | {floor} and dist > -1e-6
    assert task.feet_on_board(s, np)
    np.testing.assert_allclose(obs[env.obs_layout["task/com_minus_board"]], s.com_pos - board, atol=1e-6)
    np.testing.assert_allclose(obs[env.obs_layout["task/ball_minus_board"]], ball - board, atol=1e-6)
    assert info["success_trace"] == {"board_ball_sep": 0.0, "max_board_ball_sep": 0.0, "feet_on_board": True}
    terms = task.reward_terms(s, env.task_state, np)
    assert terms["forward_lean_stance"] == pytest.approx(1.0, abs=1e-4)
    assert terms["board_over_ball"] == 1.0 and terms["board_level"] == 1.0
    assert terms["stand_tall"] == pytest.approx(np.exp(-10 * 0.02**2))


def test_balance_body_lands_on_board(balance_env):
    """Released at rest, the feet land on the board within a few steps and the board stays on the ball."""
    env = balance_env
    task = env.task
    env.reset(seed=0)
    touched = False
    for _ in range(8):
        _, _, terminated, _, _ = env.step(ZERO)
        assert not terminated
        touched |= env.sim.view().touch.sum() > 0
    s = env.sim.view()
    assert touched
    assert task.feet_on_board(s, np)
    assert s.body_pos(task.board_id)[2] > 0.3  # still up on the ball
    assert env.task_state["board_ball_sep"] < 0.05


def test_board_rests_on_ball_alone(balance_env):
    """Without the body on it (moved 5 m away), the board stays level on the ball."""
    env = balance_env
    task = env.task
    env.reset(seed=0)
    env.data.qpos[0] += 5.0
    forward(env)
    for _ in range(30):
        env.sim.step(np.full(416, 0.5))
    s = env.sim.view()
    assert s.body_pos(task.board_id)[2] == pytest.approx(task.board_top_m - task.board_half_height_m, abs=5e-3)
    assert s.body_rot(task.board_id)[2, 2] > 0.999
    assert np.linalg.norm(s.body_pos(task.board_id)[:2] - s.body_pos(task.ball_id)[:2]) < 0.01


def test_balance_pelvis_too_low(balance_env):
    env = balance_env
    env.reset(seed=0)
    ts = env.task_state
    env.data.qpos[2] -= 1.28 - 0.69
    term = env.task.termination(forward(env), ts, np)
    assert term["pelvis_too_low"] and not term["pitch_fall"]
    env.data.qpos[2] += 0.02
    assert not env.task.termination(forward(env), ts, np)["pelvis_too_low"]


@pytest.mark.parametrize("extra,fall", [(0.7, True), (0.6, False), (-0.6, False), (-0.9, False), (-1.0, True)])
def test_balance_pitch_fall(balance_env, extra, fall):
    """The stance pitch is −0.15 rad; pitching by ``extra`` about world y makes it −0.15 − extra."""
    env = balance_env
    reset_noise_free(env)
    rotate_root(env, extra, (0.0, 1.0, 0.0))
    s = forward(env)
    assert s.chest_pitch == pytest.approx(-0.15 - extra, abs=3e-3)
    term = env.task.termination(s, env.task_state, np)
    assert bool(term["pitch_fall"]) is fall
    assert not term["pelvis_too_low"]


def test_balance_pitch_sign():
    # Pitch-up positive: a rotation about +y tilts the anterior axis down (forward lean, negative pitch).
    R = np.zeros(9)
    mujoco.mju_quat2Mat(R, body_rotate_root(np.array([0, 0, 0, 1.0, 0, 0, 0]), 0.2)[3:7])
    fwd = R.reshape(3, 3) @ np.array([1.0, 0.0, 0.0])
    assert fwd[2] == pytest.approx(-np.sin(0.2))


def _move_prop(env, joint, dxyz):
    adr = env._ctx.joint_qpos_adr(joint)
    env.data.qpos[adr:adr + 3] += dxyz


def test_balance_rewards_on_constructed_states(balance_env):
    env = balance_env
    task = env.task
    env.reset(seed=0)
    ts = env.task_state
    # Board 0.2 m to the side of the (fixed) ball: exp(−5·0.2).
    _move_prop(env, "balance_board_free", [0.0, 0.2, 0.0])
    s = forward(env)
    terms = task.reward_terms(s, ts, np)
    assert terms["board_over_ball"] == pytest.approx(np.exp(-1.0), rel=1e-9)
    # CoM 0.1 m off the board centre (board moved): exp(−20·d²) by hand.
    _move_prop(env, "balance_board_free", [0.1, 0.0, 0.0])
    s = forward(env)
    d = s.com_pos[:2] - s.body_pos(task.board_id)[:2]
    terms = task.reward_terms(s, ts, np)
    assert terms["com_over_board"] == pytest.approx(np.exp(-20.0 * (d @ d)), rel=1e-9)
    # Board tilted by 0.3 rad about x: exp(−5(1 − cos 0.3)).
    env.reset(seed=0)
    adr = env._ctx.joint_qpos_adr("balance_board_free")
    env.data.qpos[adr + 3:adr + 7] = [np.cos(0.15), np.sin(0.15), 0.0, 0.0]
    terms = task.reward_terms(forward(env), ts, np)
    assert terms["board_level"] == pytest.approx(np.exp(-5.0 * (1.0 - np.cos(0.3))), rel=1e-9)
    # Stand tall: 1 above 1.3 m, exp(−10(1.3 − z)²) below.
    env.reset(seed=0)
    env.data.qpos[2] += 0.05
    assert task.reward_terms(forward(env), ts, np)["stand_tall"] == 1.0
    env.data.qpos[2] -= 0.35  # pelvis at 0.98
    s = forward(env)
    assert task.reward_terms(s, ts, np)["stand_tall"] == pytest.approx(np.exp(-10 * (1.3 - s.pelvis_pos[2]) ** 2))


def test_balance_lean_gate(balance_env):
    env = balance_env
    task = env.task
    env.reset(seed=0)
    ts = env.task_state
    # Lean away from the target: the term follows exp(−10(θ + 0.15)²).
    rotate_root(env, -0.25, (0.0, 1.0, 0.0))  # pitch −0.15 + 0.25 = +0.10
    s = forward(env)
    theta = s.chest_pitch
    assert task.feet_on_board(s, np)
    assert task.reward_terms(s, ts, np)["forward_lean_stance"] == pytest.approx(
        np.exp(-10.0 * (theta + 0.15) ** 2), rel=1e-9)
    # Board slid 0.5 m away from under the feet: the gate closes.
    env.reset(seed=0)
    _move_prop(env, "balance_board_free", [0.5, 0.0, 0.0])
    s = forward(env)
    assert not task.feet_on_board(s, np)
    assert task.reward_terms(s, ts, np)["forward_lean_stance"] == 0.0
    # Body 0.3 m higher than the board allows: the gate closes too.
    env.reset(seed=0)
    env.data.qpos[2] += 0.3
    s = forward(env)
    assert not task.feet_on_board(s, np)


def test_balance_separation_trace_and_success(balance_env):
    env = balance_env
    task = env.task
    env.reset(seed=0)
    ts = ts_copy(env.task_state)
    seps = []
    for dy in (0.3, 0.3, -0.4):  # separation 0.3, 0.6, 0.2 (the board moves; the ball is fixed)
        _move_prop(env, "balance_board_free", [0.0, dy, 0.0])
        ts = task.advance(forward(env), ts, np)
        seps.append(float(ts["board_ball_sep"]))
    np.testing.assert_allclose(seps, [0.3, 0.6, 0.2], atol=1e-9)
    assert float(ts["max_board_ball_sep"]) == pytest.approx(0.6)
    assert task.success_trace(ts) == pytest.approx({"board_ball_sep": 0.2, "max_board_ball_sep": 0.6,
                                                   "feet_on_board": bool(ts["feet_on_board"])})
    ts["feet_on_board"] = np.bool_(True)
    assert task.success(ts, 351, False, np)
    assert not task.success(ts, 350, False, np)  # "more than 350 steps"
    assert task.success(ts, 400, True, np)  # ended by termination after 350 steps: still ran > 350
    for sep, ok in ((0.49, True), (0.5, False), (0.51, False)):
        assert bool(task.success({"board_ball_sep": np.float64(sep), "max_board_ball_sep": np.float64(0.6),
                                  "feet_on_board": np.bool_(True)}, 500, False, np)) is ok


def test_balance_standing_off_the_board_fails(balance_env):
    """A body standing on the floor beside the board, the board still on the fixed ball: the separation clause
    holds (the board never moved), the feet are off the board, and that is no success."""
    env = balance_env
    task = env.task
    env.reset(seed=0)
    board = env.data.qpos[task.board_qpos:task.board_qpos + 7].copy()
    q = env._ctx.pose({}, base=env.data.qpos.copy(), root_xy=(0.75, 0.0))
    q[task.board_qpos:task.board_qpos + 7] = board
    env.data.qpos[:] = q
    ts = task.advance(forward(env), ts_copy(env.task_state), np)
    assert float(ts["board_ball_sep"]) < 1e-9
    assert not bool(ts["feet_on_board"])
    assert not bool(task.success(ts, 400, False, np))
    env.reset(seed=0)  # on the board at the start: the clause holds
    ts = task.advance(forward(env), ts_copy(env.task_state), np)
    assert bool(ts["feet_on_board"]) and bool(task.success(ts, 400, False, np))


# -- Catch ---------------------------------------------------------------------------------
def _ballistic_miss(p0, v0, g, target, t_max=1.5):
    t = np.linspace(0.0, t_max, 3001)[:, None]
    path = p0 + v0 * t + 0.5 * g * t**2
    dist = np.linalg.norm(path - target, axis=1)
    i = int(np.argmin(dist))
    return dist[i], float(t[i, 0])


def test_catch_initial_state_and_throw(catch_env):
    env = catch_env
    task = env.task
    layout = {k: v.stop - v.start for k, v in env.obs_layout.items() if k.startswith("task/")}
    assert layout == {"task/cube_pos": 3, "task/cube_vel": 3, "task/d_catch": 1}
    cube_geom = env.model.geom("catch_cube_geom").id
    spawns = []
    for seed in range(4):
        obs, info = env.reset(seed=seed)
        s = env.sim.view()
        hand_l, hand_r = s.pos("hand_l"), s.pos("hand_r")
        basket = 0.5 * (hand_l + hand_r)
        # The basket: hands in front of the body at chest height, apart.
        assert basket[0] - s.pelvis_pos[0] > 0.3 and 1.1 < basket[2] < 1.45
        assert 0.2 < np.linalg.norm(hand_l - hand_r) < 0.35
        p0 = s.body_pos(task.cube_id).copy()
        v0 = env.data.qvel[task.cube_dof:task.cube_dof + 3].copy()
        # The original's throw: 1 m ahead of the pelvis, U(−0.1, 0.1) m aside, 1 m up; (−1.5, U(±0.2), 2.5) m/s.
        assert p0[0] - s.pelvis_pos[0] == pytest.approx(1.0) and p0[2] == pytest.approx(1.0)
        assert abs(p0[1] - s.pelvis_pos[1]) <= 0.1 and abs(v0[1]) <= 0.2
        np.testing.assert_allclose(v0[[0, 2]], [-1.5, 2.5])
        miss, t_hit = _ballistic_miss(p0, v0, env.model.opt.gravity, basket)
        assert miss < 0.2 and 0.3 < t_hit < 0.45  # the lob passes through the basket
        # The cube is free in the air: no contact and not close to the body.
        assert not _prop_contacts(env, {cube_geom}) and _min_body_distance(env, cube_geom) > 0.4
        assert info["success_trace"] == {"caught": False, "hold_steps": 0}
        np.testing.assert_allclose(obs[env.obs_layout["task/cube_pos"]], p0 - s.pos("chest"), atol=1e-5)
        np.testing.assert_allclose(obs[env.obs_layout["task/cube_vel"]], v0, atol=1e-5)
        spawns.append([p0[1], v0[1]])
    assert np.ptp(np.array(spawns), axis=0).min() > 1e-3  # sideways spawn and velocity random from the seed


def test_catch_throws_are_drawn_per_world_on_the_device(catch_env):
    """The batched environment draws every world's throw on the device (``Catch.randomize`` with JAX
    keys, float32): each world its own spawn, each a throw at the basket as on the CPU."""
    jax = pytest.importorskip("jax")
    from mskbench.jax_env import TaskJaxEnv

    jenv = TaskJaxEnv("Catch", 4, impl="cpu", reset_bank=8)
    assert jenv.device_resets
    obs = np.asarray(jax.jit(jenv.reset)(jax.random.PRNGKey(0)).obs, dtype=np.float64)
    lay = jenv.obs_layout
    p0, v0 = obs[:, lay["task/cube_pos"]], obs[:, lay["task/cube_vel"]]  # cube relative to the chest
    assert len({row.tobytes() for row in p0}) == 4 and len({row.tobytes() for row in v0}) == 4
    catch_env.reset(seed=0)
    s = catch_env.sim.view()
    basket = 0.5 * (s.pos("hand_l") + s.pos("hand_r")) - s.pos("chest")
    pelvis = s.pelvis_pos - s.pos("chest")
    for p, v in zip(p0, v0):
        assert p[0] - pelvis[0] == pytest.approx(1.0, abs=1e-5) and v[0] == pytest.approx(-1.5)
        miss, t_hit = _ballistic_miss(p, v, catch_env.model.opt.gravity, basket)
        assert miss < 0.2 and 0.3 < t_hit < 0.45


def test_catch_cube_flies_ballistically(catch_env):
    env = catch_env
    task = env.task
    env.reset(seed=2)
    p0 = env.sim.view().body_pos(task.cube_id).copy()
    v0 = env.data.qvel[task.cube_dof:task.cube_dof + 3].copy()
    g = env.model.opt.gravity
    for _ in range(10):  # 0.2 s: still in the air, short of the basket
        _, _, terminated, _, info = env.step(ZERO)
        assert not terminated
    t = 10 * env.control_dt_s
    expected = p0 + v0 * t + 0.5 * g * t**2  # semi-implicit Euler adds ½·g·h·t ≈ 2 mm (h = 2 ms)
    np.testing.assert_allclose(env.data.qpos[task.cube_qpos:task.cube_qpos + 3], expected, atol=3e-3)
    assert info["reward_terms"]["hand_object_reach"] == pytest.approx(np.exp(-3.0 * task.d_catch(env.sim.view(), np)))


def _place_cube(env, pos, vel=(0.0, 0.0, 0.0)):
    task = env.task
    env.data.qpos[task.cube_qpos:task.cube_qpos + 3] = pos
    env.data.qvel[task.cube_dof:task.cube_dof + 3] = vel
    return forward(env)


def test_catch_drop_termination_and_penalty(catch_env):
    env = catch_env
    task = env.task
    env.reset(seed=0)
    ts = env.task_state
    for z, dropped, penalty in ((0.04, True, 1.0), (0.06, False, 1.0), (0.099, False, 1.0), (0.101, False, 0.0),
                                (1.0, False, 0.0)):
        s = _place_cube(env, [1.0, 0.0, z])
        assert bool(task.termination(s, ts, np)["cube_dropped"]) is dropped, z
        assert task.reward_terms(s, ts, np)["drop_penalty"] == penalty, z
    # A cube lying on the floor is a dropped cube.
    s = _place_cube(env, [1.0, 0.0, task.cube_half_m])
    assert task.termination(s, ts, np)["cube_dropped"]
    _, _, terminated, _, info = env.step(ZERO)
    assert terminated and info["termination"] == "cube_dropped"


def test_catch_reward_terms(catch_env):
    env = catch_env
    task = env.task
    env.reset(seed=0)
    ts = env.task_state
    s = env.sim.view()
    basket = 0.5 * (s.pos("hand_l") + s.pos("hand_r"))
    s = _place_cube(env, basket)
    d = 0.5 * (np.linalg.norm(basket - s.pos("hand_l")) + np.linalg.norm(basket - s.pos("hand_r")))
    assert task.d_catch(s, np) == pytest.approx(d, rel=1e-12)
    assert d < 0.15
    terms = task.reward_terms(s, ts, np)
    assert terms["hand_object_reach"] == pytest.approx(np.exp(-3.0 * d), rel=1e-12)
    assert terms["interception_bonus"] == 1.0 and terms["drop_penalty"] == 0.0
    obs = task.observation(s, ts, np)
    assert obs["d_catch"].shape == (1,) and obs["d_catch"][0] == pytest.approx(d)
    # 0.2 m ahead of the basket: d_catch > 0.15, no bonus.
    s = _place_cube(env, basket + [0.2, 0.0, 0.0])
    assert task.d_catch(s, np) > 0.15
    assert task.reward_terms(s, ts, np)["interception_bonus"] == 0.0


def test_catch_bonus_needs_height(catch_env):
    """Hands lowered with the cube at 0.45 m: d_catch < 0.15 but z_cube ≤ 0.5 gives no bonus."""
    env = catch_env
    task = env.task
    env.reset(seed=0)
    env.data.qpos[2] -= 0.8  # the whole body (and its hands) 0.8 m lower
    s = forward(env)
    basket = 0.5 * (s.pos("hand_l") + s.pos("hand_r"))
    assert basket[2] < 0.55
    s = _place_cube(env, [basket[0], basket[1], 0.45])
    assert task.d_catch(s, np) < 0.15
    assert task.reward_terms(s, env.task_state, np)["interception_bonus"] == 0.0


def test_catch_flag_state_machine(catch_env):
    env = catch_env
    task = env.task
    env.reset(seed=0)
    s = env.sim.view()
    basket = 0.5 * (s.pos("hand_l") + s.pos("hand_r"))
    held = _place_cube(env, basket, vel=(0.1, 0.0, 0.0))
    ts = {"hold_steps": np.int64(0), "caught": np.bool_(False)}
    for k in range(1, 10):
        ts = task.advance(held, ts, np)
        assert int(ts["hold_steps"]) == k and not bool(ts["caught"])
    assert not task.success(ts, 200, False, np)
    # Interrupted before 10 steps: the count restarts (fast cube).
    fast = _place_cube(env, basket, vel=(0.6, 0.0, 0.0))
    ts = task.advance(fast, ts, np)
    assert int(ts["hold_steps"]) == 0 and not bool(ts["caught"])
    held = _place_cube(env, basket, vel=(0.0, 0.0, -0.3))
    for _ in range(10):
        ts = task.advance(held, ts, np)
    assert bool(ts["caught"]) and int(ts["hold_steps"]) == 10
    assert task.success_trace(ts) == {"caught": True, "hold_steps": 10}
    # Once caught, the flag stays even when the cube leaves the hands.
    away = _place_cube(env, basket + [0.0, 0.0, 0.3])
    ts = task.advance(away, ts, np)
    assert bool(ts["caught"]) and int(ts["hold_steps"]) == 0
    # Success: caught and 200 steps reached without termination.
    assert task.success(ts, 200, False, np)
    assert not task.success(ts, 199, False, np)
    assert not task.success(ts, 200, True, np)


def test_catch_flag_needs_both_hands(catch_env):
    """One hand on the cube (mean distance small, the other hand > 0.15 m away) is not a catch."""
    env = catch_env
    task = env.task
    env.reset(seed=0)
    s = env.sim.view()
    hand_r = np.array(s.pos("hand_r"))
    s = _place_cube(env, hand_r + [0.0, -0.02, 0.0])
    dl, dr = task.hand_distances(s, np)
    assert dr < 0.05 and dl > 0.15
    ts = {"hold_steps": np.int64(0), "caught": np.bool_(False)}
    ts = task.advance(s, ts, np)
    assert int(ts["hold_steps"]) == 0


def test_catch_below_hold_height_not_held(catch_env):
    env = catch_env
    task = env.task
    env.reset(seed=0)
    env.data.qpos[2] -= 0.8
    s = forward(env)
    basket = 0.5 * (s.pos("hand_l") + s.pos("hand_r"))
    s = _place_cube(env, [basket[0], basket[1], 0.45])
    assert np.max(task.hand_distances(s, np)) < 0.15
    ts = task.advance(s, {"hold_steps": np.int64(3), "caught": np.bool_(False)}, np)
    assert int(ts["hold_steps"]) == 0


def test_cube_collides_with_hands(catch_env):
    """The cube touches the body: placed on the right hand, it is in contact with a hand/forearm geom."""
    env = catch_env
    task = env.task
    env.reset(seed=0)
    s = env.sim.view()
    _place_cube(env, np.array(s.pos("hand_r")))
    cube = env.model.geom("catch_cube_geom").id
    tree = set(env.handles.body_tree.tolist())
    hits = [g1 if g2 == cube else g2 for g1, g2, _ in _prop_contacts(env, {cube})]
    assert hits and all(env.model.geom_bodyid[g] in tree for g in hits)
    assert task.termination(env.sim.view(), env.task_state, np) == {"cube_dropped": False}


@pytest.mark.parametrize("name", ["sls_env", "balance_env", "catch_env"])
def test_thirty_random_steps_do_not_end_the_episode(name, request):
    """As ``test_env``'s determinism rollouts require of every registered task."""
    env = request.getfixturevalue(name)
    env.reset(seed=42)
    for a in np.random.default_rng(123).uniform(-1.0, 1.0, size=(30, 416)).astype(np.float32):
        _, reward, terminated, truncated, _ = env.step(a)
        assert np.isfinite(reward) and not (terminated or truncated)


@pytest.mark.filterwarnings("ignore:MJX follows MuJoCo 3.x")
@pytest.mark.parametrize("name", ["sls_env", "balance_env"])
def test_mjx_data_gives_the_cpu_signals(name, request):
    """MJX's pure-JAX backend accepts the scene (the round board: no box–ellipsoid pair) and
    ``mjx.Data`` of a CPU state gives the CPU observation, terms and conditions."""
    jax = pytest.importorskip("jax")
    pytest.importorskip("mujoco.mjx")
    from mujoco import mjx

    from mskbench.jax_env import TaskJaxEnv
    from mskbench.sim.state import StateView
    from mskbench.tasks.base import step_signals

    jnp = jax.numpy
    env = request.getfixturevalue(name)
    jenv = TaskJaxEnv(type(env.task)(), num_envs=1, impl="jax", reset_bank=1, check_memory=False)
    moving_state(env, seed=5, steps=4)
    ts = env.task_state
    view = StateView(env.data, env.handles, np)
    sig = step_signals(env.task, view, ts, 1000, np)
    obs = env._observe(view, sig.ts)
    out = jax.jit(jenv.signals)(mjx.put_data(jenv.model, env.data), {k: jnp.asarray(v) for k, v in ts.items()},
                                jnp.int32(1000))
    np.testing.assert_allclose(np.asarray(out["obs"]), obs, rtol=1e-4, atol=1e-4)
    for k, v in sig.terms.items():
        assert float(out["reward_terms"][k]) == pytest.approx(float(v), rel=1e-4, abs=1e-5), k
    assert {k: bool(v) for k, v in out["conditions"].items()} == {k: bool(v) for k, v in sig.conditions.items()}
    assert bool(out["success"]) == bool(sig.success)


# -- fidelity: the original's native solved flags and timing ---------------------------------
def test_timing_and_horizons_in_seconds():
    """Balance and Catch run the original's 2 ms scenes (``balance.xml``/``catch.xml@4ffd2d6``): a 20 ms
    control step; SingleLegStand keeps the body's 1 ms / 10 ms (``full_body.xml``)."""
    from mskbench.envs import MSKEnv

    for task, dt, horizon_s in ((SingleLegStand(), 0.01, 10.0), (Balance(), 0.02, 20.0), (Catch(), 0.02, 4.0)):
        env = MSKEnv(task)
        assert env.control_dt_s == pytest.approx(dt)
        assert env.model.opt.timestep == pytest.approx(dt / 10)
        assert env.control_dt_s * task.horizon == pytest.approx(horizon_s)


def test_single_leg_stand_has_no_native_solved(sls_env):
    """The original's ``solved`` for SingleLegStand is the constant 0.0: no native signal."""
    assert SingleLegStand.native_solved is None and not SingleLegStand.native_counts()
    sls_env.reset(seed=0)
    assert not bool(sls_env.task.solved_native(sls_env.sim.view(), sls_env.task_state, 1, np))


def _balance_native_state(env, com_lift_m):
    """Balance's start with the board centred under the body's CoM and the whole body (not the props)
    raised by ``com_lift_m``."""
    env.reset(seed=0)
    s = env.sim.view()
    env.data.qpos[0:2] -= s.com_pos[:2]  # body CoM over the board and the fixed ball
    env.data.qpos[2] += com_lift_m
    return forward(env)


def test_balance_native_solved(balance_env):
    env = balance_env
    task = env.task
    assert "@" in Balance.native_solved
    s = _balance_native_state(env, 0.0)
    h0 = float(task.scene_height(s, np))
    # Scene height by hand: every body's mass at its CoM, the fixed 20.6 kg ball and the 5 kg board included.
    assert h0 == pytest.approx(float(env.model.body_mass @ env.data.xipos[:, 2] / env.model.body_mass.sum()))
    assert env.model.body_mass[task.ball_id] == pytest.approx(1000 * 4 / 3 * np.pi * 0.17**3)
    assert not task.solved_native(s, env.task_state, 1, np)  # the start is too low: h ≈ 1.04 m < 1.151 m
    h_min = 1.30 - np.sqrt(np.log(1.25) / 10.0)  # keep_height > 0.8
    lift = (h_min - h0) * env.model.body_mass.sum() / env.handles.total_mass  # scene height moves with the body
    for extra, ok in ((0.003, True), (-0.003, False)):
        s = _balance_native_state(env, lift + extra)
        assert float(task.scene_height(s, np)) - h_min == pytest.approx(
            extra * env.handles.total_mass / env.model.body_mass.sum(), abs=1e-6)
        assert bool(task.solved_native(s, env.task_state, 1, np)) is ok
    # Board off the ball: 4.46 cm is the limit (exp(−5 d) > 0.8); body CoM off the board: 10.6 cm.
    d_board, d_com = np.log(1.25) / 5.0, np.sqrt(np.log(1.25) / 20.0)
    for dy, ok in ((d_board - 0.002, True), (d_board + 0.002, False)):
        _balance_native_state(env, lift + 0.003)
        _move_prop(env, "balance_board_free", [0.0, dy, 0.0])
        env.data.qpos[1] += dy  # keep the body's CoM over the board
        assert bool(task.solved_native(forward(env), env.task_state, 1, np)) is ok
    for dx, ok in ((d_com - 0.002, True), (d_com + 0.002, False)):
        _balance_native_state(env, lift + 0.003)
        env.data.qpos[0] += dx
        assert bool(task.solved_native(forward(env), env.task_state, 1, np)) is ok


def test_catch_native_solved(catch_env):
    """The original's first-interception flag: the cube within 0.15 m of the lunates' midpoint, above 0.5 m."""
    env = catch_env
    task = env.task
    assert "@" in Catch.native_solved
    env.reset(seed=0)
    s = env.sim.view()
    assert not task.solved_native(s, env.task_state, 0, np)  # the cube spawns 1 m ahead
    wrists = 0.5 * (s.body_pos(task.lunate_l) + s.body_pos(task.lunate_r))
    for dx, ok in ((0.149, True), (0.151, False)):
        s = _place_cube(env, wrists + [dx, 0.0, 0.0])
        assert bool(task.solved_native(s, env.task_state, 1, np)) is ok
    # The pelvis below 0.5 m (the original's fall test) ends it: the body lowered, the cube at the wrists.
    env.reset(seed=0)
    env.data.qpos[2] -= 0.75
    s = forward(env)
    wrists = 0.5 * (s.body_pos(task.lunate_l) + s.body_pos(task.lunate_r))
    s = _place_cube(env, wrists + [0.0, 0.0, 0.1])
    assert s.body_pos(task.cube_id)[2] > 0.5 and s.pelvis_pos[2] < 0.5
    assert not task.solved_native(s, env.task_state, 1, np)

    # The cube height alone (no pose of this body holds the wrists that low with the pelvis up): a stub view.
    class View:
        def __init__(self, z_cube):
            self.z, self.pelvis_pos = z_cube, np.array([0.0, 0.0, 0.9])

        def body_pos(self, i):
            return np.array([0.3, 0.0, self.z]) if i == task.cube_id else np.array([0.3, 0.0, 0.45])

    assert task.solved_native(View(0.51), {}, 1, np) and not task.solved_native(View(0.49), {}, 1, np)


def test_catch_native_not_met_by_zero_actions(catch_env):
    """A zero policy lets the arms sink: the lob passes more than 0.15 m from the wrists (2 seeds)."""
    env = catch_env
    for seed in range(2):
        env.reset(seed=seed)
        for _ in range(40):
            *_, info = env.step(ZERO)
            assert not info["solved_native"]

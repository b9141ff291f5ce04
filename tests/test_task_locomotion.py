"""Crawl, Run, Jump, Sidestep: contract, initial states, and task logic on constructed states."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from contract import forward, reset_noise_free, rotate_root

from mskbench.tasks.crawl import Crawl
from mskbench.tasks.gait import foot_clearance, torso_angle
from mskbench.tasks.jump import Jump
from mskbench.tasks.run import Run
from mskbench.tasks.sidestep import Sidestep

TASKS = {"Crawl": Crawl, "Run": Run, "Jump": Jump, "Sidestep": Sidestep}
#: The model's own arm/thorax collision pair overlaps by 2.15 cm in its neutral pose (Stand too).
MODEL_OWN_OVERLAP = {"humerus_r_coll", "humerus_l_coll"}


@pytest.fixture
def envs(shared_envs):
    """The session's shared envs of these tasks (tests reset them and restore what they change)."""
    return {name: shared_envs(name) for name in TASKS}


def _set_joints(env, joints):
    for name, value in joints.items():
        env.data.qpos[env._ctx.joint_qpos_adr(name)] = value
    env.handles.couplings.apply(env.data.qpos)
    return forward(env)


def _term(env, view=None):
    view = view if view is not None else env.sim.view()
    return {k: bool(v) for k, v in env.task.termination(view, env.task_state, np).items()}


def _terms(env, ts=None):
    return env.task.reward_terms(env.sim.view(), env.task_state if ts is None else ts, np)


# -- contract ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(TASKS))
def test_initial_state_rests_without_interpenetration(envs, name):
    """Placed on the floor without going into it; the body's own geoms touch no deeper than the start
    noise can press them (the original's N(0, 0.01²) on every joint puts a hand up to ~1 cm into a
    thigh in about a third of the seeds; the model's arm/thorax pair overlaps anyway)."""
    env = envs[name]
    tree = set(env.handles.body_tree.tolist())
    for seed in range(3):
        env.reset(seed=seed)
        m, d = env.model, env.data
        for i in range(d.ncon):
            c = d.contact[i]
            names = {m.geom(c.geom1).name, m.geom(c.geom2).name}
            if names & MODEL_OWN_OVERLAP:
                continue
            own = m.geom_bodyid[c.geom1] in tree and m.geom_bodyid[c.geom2] in tree
            assert c.dist > (-0.015 if own else -1e-3), (name, seed, names, c.dist)
        assert any(m.geom(d.contact[i].geom1).name == "floor" for i in range(d.ncon))  # on the floor
        assert not any(_term(env).values())


def test_initial_poses_match_the_table(envs):
    # Crawl: prone quadruped, pelvis near z = 0.25, chest facing down, knees and hands low.
    env = envs["Crawl"]
    env.reset(seed=0)
    v = env.sim.view()
    assert 0.22 < v.pelvis_pos[2] < 0.29
    assert v.u_chest[2] < -0.95
    assert max(v.knee_heights) < 0.1 and max(v.pos("hand_l")[2], v.pos("hand_r")[2]) < 0.1
    assert v.head_pos[0] > v.pelvis_pos[0] + 0.5  # lying along +x, head forward
    # Run: standing.
    env = envs["Run"]
    env.reset(seed=0)
    assert envs["Run"].sim.view().pelvis_pos[2] == pytest.approx(0.947, abs=0.01)
    # Jump: the original's micro-squat (knees 0.4 rad) with N(0, 0.01²) noise on every joint:
    # pelvis below the hop thresholds, legs nearly (not exactly) symmetric, feet within the split.
    env = envs["Jump"]
    env.reset(seed=1)
    v = env.sim.view()
    assert 0.85 < v.pelvis_pos[2] < 0.95
    assert v.joint("knee_l") == pytest.approx(0.4, abs=0.05) and v.joint("knee_r") == pytest.approx(0.4, abs=0.05)
    assert 0.0 < _terms(env)["desync_penalty"] < 0.1
    assert v.d_xy_feet < 0.4
    # Sidestep: the original's stance (hips abducted 0.1 rad): feet wider than standing, inside the split.
    env = envs["Sidestep"]
    env.reset(seed=2)
    v = env.sim.view()
    assert 0.3 < v.d_xy_feet < 0.4
    assert 0.9 < v.pelvis_pos[2] < 1.0
    assert _terms(env)["rubber_band_splits"] < 0.1


def _clearance(v, flat):
    heel = v.foot_heights - flat[0]
    toes = np.array([v.pos("toes_l")[2], v.pos("toes_r")[2]]) - flat[1]
    return np.minimum(heel, toes)


def test_flat_foot_heights_and_clearance(envs):
    for name in ("Jump", "Sidestep"):
        np.testing.assert_allclose(envs[name].task.flat_feet_m, [0.0219, 0.0200], atol=5e-4)
    env = envs["Jump"]
    env.reset(seed=0)
    flat = env.task.flat_feet_m
    # Standing flat in the neutral pose: no clearance.
    env.data.qpos[:] = env._ctx.pose()
    v = forward(env)
    np.testing.assert_allclose(foot_clearance(v, flat, np), 0.0, atol=2e-3)
    # On tiptoe (heels 7 cm up, toes down): the metatarsal heads rise < 2 cm, so little clearance.
    env.data.qpos[:] = env._ctx.pose({"ankle_angle_l": -0.3, "ankle_angle_r": -0.3})
    v = forward(env)
    assert min(v.foot_heights) - flat[0] > 0.05
    assert np.all(foot_clearance(v, flat, np) < 0.02)
    assert np.all(foot_clearance(v, flat, np) >= 0.0)
    assert v.pelvis_pos[2] > 0.995  # the hop's upper threshold is reachable on tiptoe
    # Standing flat, the whole body 6 cm up: 6 cm of clearance.
    env.data.qpos[:] = env._ctx.pose()
    env.data.qpos[2] += 0.06
    v = forward(env)
    np.testing.assert_allclose(foot_clearance(v, flat, np), _clearance(v, flat), atol=1e-12)
    np.testing.assert_allclose(foot_clearance(v, flat, np), 0.06, atol=5e-3)


# -- Crawl ---------------------------------------------------------------------------------
def test_crawl_moved_forward(envs):
    env = envs["Crawl"]
    env.reset(seed=0)
    x0 = float(env.task_state["x0"])
    env.data.qpos[0] += 0.51
    v = forward(env)
    assert v.pelvis_pos[0] - x0 == pytest.approx(0.51, abs=1e-9)
    assert _term(env) == {"moved_forward": True, "twisted": False, "flipped": False}
    env.data.qpos[0] -= 0.03
    forward(env)
    assert not _term(env)["moved_forward"]
    env.data.qpos[0] -= 3.0  # far backwards is the goal
    forward(env)
    assert not any(_term(env).values())


@pytest.mark.parametrize("yaw,twisted", [(0.9, True), (-0.9, True), (0.7, False), (-0.7, False)])
def test_crawl_twisted(envs, yaw, twisted):
    env = envs["Crawl"]
    env.reset(seed=0)
    u = env.sim.view().u_torso
    heading0 = np.arctan2(u[1], u[0])
    assert abs(heading0) < 0.05  # the start is within the joint noise of 0
    rotate_root(env, yaw, (0, 0, 1))
    v = forward(env)
    heading = np.arctan2(v.u_torso[1], v.u_torso[0])
    assert heading == pytest.approx(heading0 + yaw, abs=1e-9)
    assert _term(env) == {"moved_forward": False, "twisted": twisted, "flipped": False}


@pytest.mark.parametrize("roll,flipped", [(1.4, False), (1.75, True), (np.pi, True), (-1.75, True)])
def test_crawl_flipped(envs, roll, flipped):
    env = envs["Crawl"]
    env.reset(seed=0)
    rotate_root(env, roll, (1, 0, 0))
    forward(env)
    assert _term(env)["flipped"] is flipped
    assert not _term(env)["twisted"]


def test_crawl_success_history(envs):
    env = envs["Crawl"]
    task = env.task
    env.reset(seed=0)
    ts = dict(env.task_state)
    x0 = float(ts["x0"])
    qpos0 = env.data.qpos.copy()
    for dx, expected in ((-1.0, 1.0), (0.3, 1.0), (-1.5, 1.5), (-1.99, 1.99), (0.0, 1.99), (-2.01, 2.01)):
        env.data.qpos[:] = qpos0
        env.data.qpos[0] += dx
        v = forward(env)
        assert v.pelvis_pos[0] == pytest.approx(x0 + dx, abs=1e-9)
        ts = task.advance(v, ts, np)
        assert float(ts["max_backward"]) == pytest.approx(expected, abs=1e-9)
        assert bool(task.success(ts, 10, False, np)) is (expected >= 2.0)
    assert task.success_trace(ts) == {"max_backward": pytest.approx(2.01)}
    assert float(ts["x0"]) == x0


def test_crawl_velocity_terms(envs):
    env = envs["Crawl"]
    env.reset(seed=0)
    for vx, vy, back, drift in ((-0.2, 0.0, 0.2, 0.0), (-1.0, 0.1, 1.0, 0.2), (-1.5, 0.0, 1.0, 0.0),
                                (0.3, -0.1, -0.2, 0.5), (0.04, 0.0, -0.04, 0.04)):  # v_target 1.0 m/s
        env.data.qvel[:] = 0.0
        env.data.qvel[0:2] = vx, vy
        v = forward(env)
        np.testing.assert_allclose(v.com_vel[:2], [vx, vy], atol=1e-9)
        terms = _terms(env)
        assert terms["backwards_velocity"] == pytest.approx(back, abs=1e-9)
        assert terms["drift_penalty"] == pytest.approx(drift, abs=1e-9)


def test_crawl_prone_posture(envs):
    env = envs["Crawl"]
    env.reset(seed=0)
    v = env.sim.view()
    expected = np.exp(-5 * (v.u_chest[2] + 1) ** 2) * np.exp(-10 * (v.pelvis_pos[2] - 0.25) ** 2)
    assert _terms(env)["prone_posture"] == pytest.approx(expected, rel=1e-12)
    assert expected > 0.99
    env.data.qpos[2] += 0.25  # hips 0.5 m up, still face down
    v = forward(env)
    high = np.exp(-5 * (v.u_chest[2] + 1) ** 2) * np.exp(-10 * (v.pelvis_pos[2] - 0.25) ** 2)
    assert _terms(env)["prone_posture"] == pytest.approx(high, rel=1e-12)
    assert high < 0.6 * expected
    rotate_root(env, np.pi, (1, 0, 0))  # on the back
    forward(env)
    assert _terms(env)["prone_posture"] < 1e-6


def test_crawl_alternating_stride_rewards_the_diagonal_gait(envs):
    env = envs["Crawl"]
    env.reset(seed=0)
    assert _terms(env)["alternating_stride"] < 0.05  # symmetric start
    # Left hand forward, right knee forward: the diagonal pair.
    v = _set_joints(env, {"shoulder_elv_l": 1.6, "shoulder_elv_r": 0.9,
                          "hip_flexion_l": 0.5, "hip_flexion_r": 1.1})
    dxh = v.pos("hand_l")[0] - v.pos("hand_r")[0]
    dxk = v.pos("knee_l")[0] - v.pos("knee_r")[0]
    assert dxh > 0.05 and dxk < -0.05
    expected = min(abs(dxh) / 0.3, 1.0) * min(max(-np.sign(dxh) * dxk / 0.3, 0.0), 1.0)
    assert _terms(env)["alternating_stride"] == pytest.approx(expected, rel=1e-12)
    assert expected > 0.1
    # Left hand and left knee forward together (same side): no reward.
    _set_joints(env, {"hip_flexion_l": 1.1, "hip_flexion_r": 0.5})
    assert _terms(env)["alternating_stride"] == 0.0


# -- Run -----------------------------------------------------------------------------------
def test_run_pelvis_too_low(envs):
    env = envs["Run"]
    env.reset(seed=0)
    z = env.sim.view().pelvis_pos[2]
    env.data.qpos[2] -= z - 0.44
    forward(env)
    assert _term(env) == {"pelvis_too_low": True, "fell_backward": False}
    env.data.qpos[2] += 0.02
    forward(env)
    assert _term(env) == {"pelvis_too_low": False, "fell_backward": False}


@pytest.mark.parametrize("lean,fell", [(-0.5, True), (-0.3, False), (0.6, False)])
def test_run_fell_backward(envs, lean, fell):
    env = envs["Run"]
    env.reset(seed=0)
    pitch0, roll0 = (float(a) for a in torso_angle(env.sim.view(), np))
    assert pitch0 == pytest.approx(-0.18, abs=0.04)  # neutral -0.18 rad plus the start's joint noise
    rotate_root(env, lean, (0, 1, 0))  # +: about +y tips the head towards +x (forward)
    v = forward(env)
    pitch, roll = torso_angle(v, np)
    assert pitch == pytest.approx(pitch0 + lean, abs=0.02)
    assert roll == pytest.approx(roll0, abs=0.02)
    assert _term(env)["fell_backward"] is fell


def test_run_torso_angle_is_in_the_heading_frame(envs):
    env = envs["Run"]
    env.reset(seed=0)
    angle0 = torso_angle(env.sim.view(), np)
    rotate_root(env, 1.2, (0, 0, 1))  # turned left: the lean is unchanged
    v = forward(env)
    np.testing.assert_allclose(torso_angle(v, np), angle0, atol=1e-9)
    rotate_root(env, 0.3, (np.cos(1.2), np.sin(1.2), 0))  # a roll about the new heading
    v = forward(env)
    assert torso_angle(v, np)[1] < -0.25  # rolled to the right


def test_run_velocity_terms(envs):
    env = envs["Run"]
    env.reset(seed=0)
    for vx, high, bonus in ((2.0, 2.0, 0.0), (3.5, 3.5, 1.0), (7.0, 6.0, 1.0), (-1.0, -0.5, 0.0), (2.99, 2.99, 0.0)):
        env.data.qvel[:] = 0.0
        env.data.qvel[0] = vx
        forward(env)
        terms = _terms(env)
        assert terms["high_velocity"] == pytest.approx(high, abs=1e-9)
        assert terms["speed_bonus"] == bonus


def test_run_stride_terms(envs):
    env = envs["Run"]
    env.reset(seed=0)
    terms = _terms(env)
    assert terms["kangaroo_penalty"] == 1.0  # feet side by side
    assert terms["scissor_penalty"] == 0.0  # 0.17 m apart laterally
    assert terms["knee_flexion"] == 0.0
    v = _set_joints(env, {"hip_flexion_l": 0.6, "hip_flexion_r": -0.3, "knee_angle_r": 0.6, "knee_angle_l": 0.1})
    d = np.abs(v.d_feet)
    assert d[0] > 0.2
    terms = _terms(env)
    assert terms["asymmetric_stride"] == pytest.approx(min(d[0] + 2 * d[2], 1.0), rel=1e-12)
    assert terms["kangaroo_penalty"] == 0.0
    assert terms["knee_flexion"] == pytest.approx(0.5, abs=1e-12)
    _set_joints(env, {"knee_angle_r": 1.5})
    assert _terms(env)["knee_flexion"] == 1.0
    # Scissoring: legs adducted, feet close laterally.
    env.reset(seed=0)
    v = _set_joints(env, {"hip_adduction_l": 0.15, "hip_adduction_r": 0.15})
    dy = abs(v.d_feet[1])
    assert dy < 0.15
    assert _terms(env)["scissor_penalty"] == pytest.approx((0.15 - dy) / 0.15, rel=1e-12)


def test_run_success_history(envs):
    env = envs["Run"]
    task = env.task
    env.reset(seed=0)
    ts = dict(env.task_state)
    qpos0 = env.data.qpos.copy()
    for dx, expected in ((5.0, 5.0), (-2.0, 5.0), (14.99, 14.99), (3.0, 14.99), (15.01, 15.01)):
        env.data.qpos[:] = qpos0
        env.data.qpos[0] += dx
        ts = task.advance(forward(env), ts, np)
        assert float(ts["max_forward"]) == pytest.approx(expected, abs=1e-9)
        assert bool(task.success(ts, 5, True, np)) is (expected >= 15.0 - 1e-12)
    assert task.success_trace(ts) == {"max_forward": pytest.approx(15.01)}


# -- Jump ----------------------------------------------------------------------------------
def _pelvis_at(z):
    """The pelvis at ``z``; the feet (one sphere geom, :func:`_sphere_foot`) 5 cm up above 1.00 m, else on the floor."""
    gap = 0.05 if z > 1.0 else 0.0
    data = SimpleNamespace(geom_xpos=np.array([[0.0, 0.0, 0.01 + gap]]), geom_xmat=np.eye(3).reshape(1, 9))
    return SimpleNamespace(pelvis_pos=np.array([0.0, 0.0, z]), data=data)


def _sphere_foot(task):
    task.feet = (np.array([0]), np.array([2]), np.array([[0.01, 0.0, 0.0]]))  # 2: mjGEOM_SPHERE
    return task


def test_jump_hop_state_machine():
    task = _sphere_foot(Jump())
    ts = {"armed": np.bool_(False), "flown": np.bool_(False), "hops": np.int64(0)}
    seq = [(0.90, False, 0), (0.99, False, 0), (0.94, False, 0),  # never above 1.00: no hop
           (1.01, True, 0), (0.97, True, 0), (1.10, True, 0), (0.96, True, 0),  # above, not yet below 0.95
           (0.94, False, 1), (0.93, False, 1), (0.999, False, 1), (0.90, False, 1),
           (1.05, True, 1), (0.60, False, 2)]
    for z, armed, hops in seq:
        ts = task.advance(_pelvis_at(z), ts, np)
        assert (bool(ts["armed"]), int(ts["hops"])) == (armed, hops), z
    for _ in range(8):
        assert not task.success(ts, 100, False, np)
        ts = task.advance(_pelvis_at(1.02), ts, np)
        ts = task.advance(_pelvis_at(0.9), ts, np)
    assert int(ts["hops"]) == 10 and task.success(ts, 100, False, np)
    assert task.success_trace(ts) == {"hops": 10, "armed": False, "flown": False}


def test_jump_hop_counted_on_real_states(envs):
    env = envs["Jump"]
    task = env.task
    env.reset(seed=0)
    ts = dict(env.task_state)
    z0 = env.sim.view().pelvis_pos[2]
    for z in (1.05, 0.94):
        env.data.qpos[2] += z - env.sim.view().pelvis_pos[2]
        ts = task.advance(forward(env), ts, np)
    assert int(ts["hops"]) == 1 and z0 < 0.95


def test_jump_calf_raise_is_no_hop(envs):
    """On tiptoe the pelvis passes 1.00 m with the toes on the floor: up and down again counts no hop (the
    paper's thresholds alone counted it); the same heights with the whole body lifted off the floor do."""
    env = envs["Jump"]
    task = env.task
    env.reset(seed=0)
    ts = dict(env.task_state)
    tiptoe = env._ctx.pose({"ankle_angle_l": -0.35, "ankle_angle_r": -0.35})
    low = env._ctx.pose({"knee_angle_l": 0.4, "knee_angle_r": 0.4, "hip_flexion_l": 0.3, "hip_flexion_r": 0.3})
    for _ in range(3):
        for q in (tiptoe, low):
            env.data.qpos[:] = q
            ts = task.advance(forward(env), ts, np)
    env.data.qpos[:] = tiptoe
    assert forward(env).pelvis_pos[2] > 1.0
    assert int(ts["hops"]) == 0 and not bool(ts["flown"])
    for q, lift in ((tiptoe, 0.05), (low, 0.0)):
        env.data.qpos[:] = q
        env.data.qpos[2] += lift
        ts = task.advance(forward(env), ts, np)
    assert int(ts["hops"]) == 1


def test_jump_termination(envs):
    env = envs["Jump"]
    env.reset(seed=0)
    env.data.qpos[2] -= env.sim.view().pelvis_pos[2] - 0.44
    forward(env)
    assert _term(env) == {"pelvis_too_low": True, "wide_split": False}
    env.reset(seed=0)
    v = _set_joints(env, {"hip_adduction_l": -0.2, "hip_adduction_r": -0.2})
    assert v.d_xy_feet > 0.4  # the original's limit
    assert _term(env) == {"pelvis_too_low": False, "wide_split": True}
    v = _set_joints(env, {"hip_adduction_l": -0.1, "hip_adduction_r": -0.1})
    assert 0.3 < v.d_xy_feet < 0.4
    assert _term(env) == {"pelvis_too_low": False, "wide_split": False}


def test_jump_reward_terms(envs):
    env = envs["Jump"]
    task = env.task
    env.reset(seed=0)
    v = env.sim.view()
    assert _terms(env)["flight_gradient"] < 0.05  # feet on the floor
    assert _terms(env)["feet_separation"] == pytest.approx(v.d_xy_feet, rel=1e-12)
    env.data.qpos[2] += 0.05
    v = forward(env)
    expected = 0.5 * np.sum(_clearance(v, task.flat_feet_m)) / 0.1
    assert 0.45 < expected < 0.6
    assert _terms(env)["flight_gradient"] == pytest.approx(expected, rel=1e-12)
    env.data.qpos[2] += 0.2
    forward(env)
    assert _terms(env)["flight_gradient"] == 1.0
    for vz, up in ((1.5, 1.5), (3.0, 2.0), (-1.0, 0.0)):
        env.data.qvel[:] = 0.0
        env.data.qvel[2] = vz
        forward(env)
        assert _terms(env)["upward_explosion"] == pytest.approx(up, abs=1e-9)
    env.reset(seed=0)
    _set_joints(env, {"knee_angle_l": 0.6, "knee_angle_r": 0.9, "hip_flexion_l": 0.3, "hip_flexion_r": 0.1})
    assert _terms(env)["desync_penalty"] == pytest.approx(0.5, abs=1e-12)


# -- Sidestep ------------------------------------------------------------------------------
def test_sidestep_phase_clock(envs):
    env = envs["Sidestep"]
    task = env.task
    obs, _ = env.reset(seed=0)
    assert float(env.task_state["phase"]) == 0.0
    np.testing.assert_allclose(obs[env.obs_layout["task/phase"]], [0.0, 1.0], atol=1e-7)
    env.step(np.zeros(416, np.float32))
    assert float(env.task_state["phase"]) == pytest.approx(0.015, abs=1e-12)  # 10 ms of a 1/1.5 s period
    view = env.sim.view()
    ts = dict(env.task_state)
    ts["phase"] = np.float64(0.3)
    for _ in range(200):  # 2 s: three periods of the original's 1.5 Hz at 10 ms
        ts = task.advance(view, ts, np)
    assert float(ts["phase"]) == pytest.approx(0.3, abs=1e-9)
    ts["phase"] = np.float64(0.99)
    assert float(task.advance(view, ts, np)["phase"]) == pytest.approx(0.005, abs=1e-12)
    np.testing.assert_allclose(task.reference_clearance(0.25, np), [0.08, 0.0], atol=1e-12)
    np.testing.assert_allclose(task.reference_clearance(0.75, np), [0.0, 0.08], atol=1e-12)
    np.testing.assert_allclose(task.reference_clearance(0.0, np), [0.0, 0.0], atol=1e-12)


def test_sidestep_phase_sync(envs):
    env = envs["Sidestep"]
    task = env.task
    env.reset(seed=0)
    ts = dict(env.task_state)
    v = env.sim.view()
    c = _clearance(v, task.flat_feet_m)
    ts["phase"] = np.float64(0.0)
    assert _terms(env, ts)["phase_sync"] == pytest.approx(np.exp(-15 * np.sum(np.abs(c))), rel=1e-12)
    # Both feet 8 cm up at phase 0.25: the left foot is where it should be, the right is 8 cm too high.
    env.data.qpos[2] += 0.08
    v = forward(env)
    c = _clearance(v, task.flat_feet_m)
    ts["phase"] = np.float64(0.25)
    expected = np.exp(-15 * (abs(c[0] - 0.08) + abs(c[1])))
    assert _terms(env, ts)["phase_sync"] == pytest.approx(expected, rel=1e-9)
    # ... which beats phase 0, where both feet should be down.
    assert _terms(env, dict(ts, phase=np.float64(0.0)))["phase_sync"] < expected


def test_sidestep_lateral_velocity_and_lock(envs):
    env = envs["Sidestep"]
    env.reset(seed=0)
    for vy, lat in ((0.25, 0.25), (1.0, 1.0), (1.5, 1.0), (-0.5, -0.2), (-0.05, -0.05)):  # v_target 1.0 m/s
        env.data.qvel[:] = 0.0
        env.data.qvel[1] = vy
        forward(env)
        assert _terms(env)["lateral_velocity"] == pytest.approx(lat, abs=1e-9)
    env.reset(seed=0)
    v = _set_joints(env, {"hip_adduction_l": -0.35, "hip_adduction_r": 0.0})
    off = abs(v.pelvis_pos[1] - 0.5 * (v.foot_pos[0, 1] + v.foot_pos[1, 1]))
    assert off > 0.05
    terms = _terms(env)
    assert terms["com_mid_feet_lock"] == pytest.approx(off, rel=1e-12)
    assert terms["rubber_band_splits"] == pytest.approx(max(0.0, v.d_xy_feet - 0.3), rel=1e-12)
    assert v.d_xy_feet > 0.3
    obs = env.task.observation(v, env.task_state, np)
    assert obs["delta_y_feet"][0] == pytest.approx(v.foot_pos[0, 1] - v.foot_pos[1, 1])


def test_sidestep_termination(envs):
    env = envs["Sidestep"]
    env.reset(seed=0)
    v = _set_joints(env, {"hip_adduction_l": -0.3, "hip_adduction_r": -0.3})
    assert v.d_xy_feet > 0.5
    assert _term(env) == {"pelvis_too_low": False, "split": True}
    v = _set_joints(env, {"hip_adduction_l": -0.2, "hip_adduction_r": -0.2})
    assert 0.3 < v.d_xy_feet < 0.5
    assert _term(env) == {"pelvis_too_low": False, "split": False}
    env.data.qpos[2] -= v.pelvis_pos[2] - 0.44
    forward(env)
    assert _term(env) == {"pelvis_too_low": True, "split": False}


def test_sidestep_success_history(envs):
    env = envs["Sidestep"]
    task = env.task
    env.reset(seed=0)
    ts = dict(env.task_state)
    qpos0 = env.data.qpos.copy()
    for dy, expected in ((3.0, 3.0), (-4.0, 4.0), (0.0, 4.0), (8.99, 8.99), (-9.01, 9.01)):
        env.data.qpos[:] = qpos0
        env.data.qpos[1] += dy
        ts = task.advance(forward(env), ts, np)
        assert float(ts["max_lateral"]) == pytest.approx(expected, abs=1e-9)
        assert bool(task.success(ts, 5, False, np)) is (expected >= 9.0 - 1e-12)
    assert task.success_trace(ts) == {"max_lateral": pytest.approx(9.01)}


@pytest.mark.parametrize("kwargs,match", [({"period_s": 0.0}, "period_s"), ({"target_speed_mps": -1.0}, "target_speed")])
def test_sidestep_rejects_bad_config(kwargs, match):
    with pytest.raises(ValueError, match=match):
        Sidestep(**kwargs)


def test_crawl_rejects_bad_speed():
    with pytest.raises(ValueError, match="target_speed"):
        Crawl(target_speed_mps=0.0)


# -- native solved signals and timing (issue 13) ------------------------------------------------
def _native(env, ts=None):
    return bool(env.task.solved_native(env.sim.view(), env.task_state if ts is None else ts, 1, np))


def test_stand_native_solved(shared_envs):
    # msk_bench_v0.py@a68b6ce::MSKBenchStandEnvV0: ‖q[2:] − q0[2:]‖ < 0.2 and stillness > 0.9.
    env = shared_envs("Stand")
    env.reset(seed=0)
    assert _native(env)  # the noisy start at rest: met at reset (as in the original, whose noise has norm ≈ 0.06)
    reset_noise_free(env)  # the distances below are from the noise-free start pose
    assert _native(env)
    qpos0 = env.data.qpos.copy()
    for dz, met in ((0.19, True), (0.201, False)):  # the root height is part of the distance
        env.data.qpos[:] = qpos0
        env.data.qpos[2] += dz
        forward(env)
        assert _native(env) is met, dz
    env.data.qpos[:] = qpos0
    adr = env._ctx.joint_qpos_adr("hip_flexion_r")
    for dq, met in ((0.199, True), (0.201, False)):  # ... and every joint
        env.data.qpos[:] = qpos0
        env.data.qpos[adr] += dq
        forward(env)
        assert _native(env) is met, dq
    env.data.qpos[:] = qpos0
    for vx, met in ((0.009, True), (0.011, False)):  # exp(−10·0.011) < 0.9 < exp(−10·0.009)
        env.data.qvel[:] = 0.0
        env.data.qvel[0] = vx
        v = forward(env)
        assert v.com_vel[0] == pytest.approx(vx, abs=1e-9)
        assert _native(env) is met, vx
    env.data.qvel[:] = 0.0
    env.data.qvel[2] = 0.05  # vertical CoM velocity is not in the original's (horizontal) stillness
    forward(env)
    assert _native(env)


def test_walk_native_solved(shared_envs):
    # walk_v0.py@4ffd2d6::WalkEnvV0: exp(−2‖q_joints − q_ref‖²) > 0.8, i.e. ‖Δq‖ < 0.334 rad.
    env = shared_envs("Walk")
    env.reset(seed=0)
    assert _native(env)  # every episode starts on the reference: met at reset
    qpos0 = env.data.qpos.copy()
    adr = env._ctx.joint_qpos_adr("hip_flexion_r")
    for dq, met in ((0.33, True), (0.34, False)):
        env.data.qpos[:] = qpos0
        env.data.qpos[adr] += dq
        forward(env)
        assert float(env.task.reward_terms(env.sim.view(), env.task_state, np)["kinematic_imitation"]) == (
            pytest.approx(np.exp(-2 * dq**2), rel=1e-6))
        assert _native(env) is met, dq
    env.data.qpos[:] = qpos0
    forward(env)


def test_crawl_native_solved(shared_envs):
    # msk_bench_v0.py@a68b6ce::MSKBenchCrawlEnvV0: root v_x < −0.8 m/s and not done.
    env = shared_envs("Crawl")
    env.reset(seed=0)
    assert not _native(env)  # at rest
    for vx, met in ((-0.81, True), (-0.79, False), (0.5, False)):
        env.data.qvel[:] = 0.0
        env.data.qvel[0] = vx
        forward(env)
        assert _native(env) is met, vx
    env.data.qvel[:] = 0.0
    env.data.qvel[0] = -1.0
    rotate_root(env, np.pi, (1, 0, 0))  # flipped: terminated, so not solved
    forward(env)
    assert _term(env)["flipped"] and not _native(env)


@pytest.mark.parametrize("name", ["Run", "Jump", "Sidestep"])
def test_no_native_solved_where_the_original_has_none(shared_envs, name):
    # The original's Run, Jump and Sidestep report a constant solved = 0.
    env = shared_envs(name)
    assert type(env.task).native_solved is None
    env.reset(seed=0)
    assert not _native(env)


@pytest.mark.parametrize("name", ["Stand", "Walk", "Crawl", "Run", "Jump", "Sidestep"])
def test_timing_and_horizon_follow_the_original(shared_envs, name):
    # All six run on the original's full_body.xml@4ffd2d6 (timestep 0.001, 10 substeps) with the
    # registry's 1,000-step horizon (registry.py@a68b6ce): 10 ms control steps, 10 s episodes.
    env = shared_envs(name)
    assert env.model.opt.timestep == pytest.approx(0.001)
    assert env.control_dt_s == pytest.approx(0.01)
    assert env.task.horizon == 1000
    assert env.control_dt_s * env.task.horizon == pytest.approx(10.0)


def test_original_parameters_where_the_paper_is_silent():
    assert Crawl().target_speed_mps == 1.0  # MSKBenchCrawlEnvV0._setup: target_vel
    assert Sidestep().target_speed_mps == 1.0  # registry / _setup: target_y_vel
    assert Sidestep().period_s == pytest.approx(1 / 1.5)  # _setup: step_freq 1.5 Hz
    assert Jump().split_max_m == 0.4  # MSKBenchJumpEnvV0._get_done

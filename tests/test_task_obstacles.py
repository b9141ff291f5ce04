"""Obstacle tasks (Hurdle, WalkTurn, PoleWalk): contract, props, and task logic on constructed states."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest
from contract import forward, reset_noise_free, rotate_root, ts_copy

from mskbench.tasks.hurdle import Hurdle
from mskbench.tasks.obstacles import fan_directions, ray_circle_distances
from mskbench.tasks.pole_walk import POLES, PoleWalk
from mskbench.tasks.walk_turn import OBSTACLES, WalkTurn

TASKS = {"Hurdle": Hurdle, "WalkTurn": WalkTurn, "PoleWalk": PoleWalk}


@pytest.fixture
def envs(shared_envs):
    """The session's shared envs of these tasks (tests reset them and restore what they change)."""
    return {name: shared_envs(name) for name in TASKS}


@pytest.fixture
def hurdle_env(envs):
    return envs["Hurdle"]


@pytest.fixture
def walk_turn_env(envs):
    return envs["WalkTurn"]


@pytest.fixture
def pole_walk_env(envs):
    return envs["PoleWalk"]


def _prop_contacts(env, prefix):
    m, d = env.model, env.data
    names = [(m.geom(c.geom1).name, m.geom(c.geom2).name) for c in d.contact[:d.ncon]]
    return [n for n in names if n[0].startswith(prefix) or n[1].startswith(prefix)]


# -- contract --------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(TASKS))
def test_initial_state_touches_no_prop_and_is_finite(envs, name):
    env = envs[name]
    prefix = {"Hurdle": "hurdle_", "WalkTurn": "walk_turn_", "PoleWalk": "pole_walk_"}[name]
    for seed in range(3):
        env.reset(seed=seed)
        assert _prop_contacts(env, prefix) == []
    env.reset(seed=0)
    for _ in range(20):
        obs, _, terminated, truncated, info = env.step(np.zeros(416, np.float32))
        assert np.isfinite(obs).all()
        assert info["termination"] in (None, "pelvis_too_low", "head_too_low")
        if terminated or truncated:
            break
    assert set(info["success_trace"]) >= {"steps"}


# -- Hurdle ----------------------------------------------------------------------------------
def test_hurdle_props(hurdle_env):
    env = hurdle_env
    m = env.model
    # The original's course (hurdle.xml@a68b6ce): x = 2, 4, ..., 10 m, tops at 0.2 ... 0.45 m, 4 m wide.
    assert env.task.hurdle_x == (2.0, 4.0, 6.0, 8.0, 10.0)
    assert env.task.hurdle_heights_m == (0.2, 0.3, 0.4, 0.45, 0.45)
    n_rails = {0: 1, 1: 2, 2: 2, 3: 2, 4: 2}
    for k, x in enumerate(env.task.hurdle_x):
        rails = [m.geom(f"hurdle_{k}_{j}") for j in range(n_rails[k])]
        with pytest.raises(KeyError):
            m.geom(f"hurdle_{k}_{n_rails[k]}")
        for g in rails:
            assert m.geom_type[g.id] == mujoco.mjtGeom.mjGEOM_CAPSULE
            np.testing.assert_allclose(m.geom_pos[g.id][:2], [x, 0.0])
            np.testing.assert_allclose(m.geom_size[g.id][:2], [0.1, 2.0])
            np.testing.assert_allclose(np.abs(env.data.geom_xmat[g.id].reshape(3, 3)[:, 2]), [0, 1, 0], atol=1e-12)
            assert m.geom_contype[g.id] == 0 and m.geom_conaffinity[g.id] == 1
        z = sorted(m.geom_pos[g.id][2] for g in rails)
        assert z[0] == pytest.approx(0.1)  # the lowest rail rests on the floor: nothing to slip under
        assert z[-1] + 0.1 == pytest.approx(env.task.hurdle_heights_m[k])  # the top is h
        assert all(b - a <= 0.25 + 1e-9 for a, b in zip(z, z[1:]))  # gaps between rails under 5 cm
    # The first hurdle's top is h = 0.2 m: a foot in it collides, a foot just above clears it.
    env.reset(seed=0)
    foot = env.sim.view().pos("foot_l")
    toes = env.sim.view().pos("toes_l")
    env.data.qpos[0] += env.task.hurdle_x[0] - 0.5 * (foot[0] + toes[0])
    forward(env)
    assert any("hurdle_0_0" in pair for pair in _prop_contacts(env, "hurdle_"))
    env.data.qpos[2] += 0.21
    forward(env)
    assert _prop_contacts(env, "hurdle_") == []


def test_hurdle_initial_state_and_observation(hurdle_env):
    env = hurdle_env
    xs = []
    for seed in range(4):
        obs, info = env.reset(seed=seed)
        x = float(env.data.qpos[0])
        assert -0.5 <= x <= 0.0
        xs.append(x)
        lay = env.obs_layout
        np.testing.assert_allclose(obs[lay["task/hurdle"]], [env.task.hurdle_x[0] - x, 0.2], atol=1e-6)
        np.testing.assert_allclose(obs[lay["task/phase"]], [0.0, 1.0], atol=1e-7)
        assert info["success_trace"] == {"cleared": 0, "passed": 0}
    assert len(set(np.round(xs, 6))) == 4  # the start is drawn per episode


def test_hurdle_clear_state_machine(hurdle_env):
    env, task = hurdle_env, hurdle_env.task
    env.reset(seed=0)
    ts = ts_copy(env.task_state)

    def at(x, y=0.0):
        env.data.qpos[0:2] = [x, y]
        return forward(env)

    # Before the first hurdle: nothing.
    ts = task.advance(at(1.9), ts, np)
    assert int(ts["passed"]) == 0 and not bool(ts["clear"])
    assert task.reward_terms(env.sim.view(), ts, np)["sparse_clear_bonus"] == 0.0
    # Pelvis over hurdle 0 inside the lane: cleared, bonus once.
    ts = task.advance(at(2.01, 0.49), ts, np)
    assert int(ts["passed"]) == 1 and int(ts["cleared"]) == 1 and bool(ts["clear"])
    assert task.reward_terms(env.sim.view(), ts, np)["sparse_clear_bonus"] == 1.0
    ts = task.advance(at(2.2), ts, np)
    assert int(ts["passed"]) == 1 and int(ts["cleared"]) == 1 and not bool(ts["clear"])
    assert task.reward_terms(env.sim.view(), ts, np)["sparse_clear_bonus"] == 0.0
    obs = task.observation(env.sim.view(), ts, np)
    np.testing.assert_allclose(obs["hurdle"], [4.0 - 2.2, 0.3], atol=1e-12)  # the next hurdle's height
    # Hurdle 1 passed around its end (|y| >= 0.5): passed, not cleared, no bonus.
    ts = task.advance(at(4.1, -0.5), ts, np)
    assert int(ts["passed"]) == 2 and int(ts["cleared"]) == 1 and not bool(ts["clear"])
    # Stepping back into the lane does not clear it later.
    ts = task.advance(at(4.2), ts, np)
    assert int(ts["passed"]) == 2 and int(ts["cleared"]) == 1
    # The remaining three cleared: 4 of 5 -> no success.
    for x in (6.1, 8.1, 10.1):
        ts = task.advance(at(x), ts, np)
        assert bool(ts["clear"])
    assert int(ts["passed"]) == 5 and int(ts["cleared"]) == 4
    assert not task.success(ts, 500, False, np)
    # All passed: nothing more counts; the observation points back at the last hurdle.
    ts = task.advance(at(12.0), ts, np)
    assert int(ts["passed"]) == 5 and int(ts["cleared"]) == 4 and not bool(ts["clear"])
    np.testing.assert_allclose(task.observation(env.sim.view(), ts, np)["hurdle"], [10.0 - 12.0, 0.45], atol=1e-12)
    ts["cleared"] = np.int64(5)
    assert task.success(ts, 500, False, np)
    assert task.success_trace(ts) == {"cleared": 5, "passed": 5}


def test_hurdle_reward_terms(hurdle_env):
    env, task = hurdle_env, hurdle_env.task
    env.reset(seed=0)
    ts = env.task_state
    for vx, expected in ((1.5, 1.5), (5.0, 4.0), (-1.0, -0.1)):
        env.data.qvel[:] = 0.0
        env.data.qvel[0] = vx
        assert task.reward_terms(forward(env), ts, np)["forward_velocity"] == pytest.approx(expected)
    env.data.qvel[:] = 0.0
    terms = task.reward_terms(forward(env), ts, np)
    assert terms["clearance"] == 0.0 and terms["crane_hopping"] == 0.0
    # Both feet lifted 0.25 m: flight above h_target (the first hurdle's 0.2 m), no height difference.
    env.data.qpos[2] += 0.25
    view = forward(env)
    assert view.foot_heights.min() > 0.2
    terms = task.reward_terms(view, ts, np)
    assert terms["clearance"] == 1.0 and terms["crane_hopping"] == 0.0
    # Past the first hurdle h_target is the second's 0.3 m: the same flight no longer clears it.
    assert view.foot_heights.max() < 0.3
    past = dict(ts, passed=np.int64(1))
    assert task.reward_terms(view, past, np)["clearance"] == 0.0
    # Crane (flamingo) pose: left knee drawn up, right leg straight.
    env.reset(seed=0)
    h = env.handles
    env.data.qpos[h.joints_qpos["hip_flexion_l"]] = 1.6
    env.data.qpos[h.joints_qpos["knee_l"]] = -2.0
    h.couplings.apply(env.data.qpos)
    view = forward(env)
    dz = abs(view.foot_heights[0] - view.foot_heights[1])
    assert dz > 0.3
    terms = task.reward_terms(view, ts, np)
    assert terms["crane_hopping"] == pytest.approx(min(max((dz - 0.2) / 0.5, 0.0), 1.0))
    assert terms["clearance"] == 1.0


def test_hurdle_termination(hurdle_env):
    env, task = hurdle_env, hurdle_env.task
    env.reset(seed=0)
    ts = env.task_state
    env.data.qpos[2] -= 0.947 - 0.56
    assert task.termination(forward(env), ts, np) == {"pelvis_too_low": False, "heavy_yaw": False}
    env.data.qpos[2] -= 0.02
    assert task.termination(forward(env), ts, np) == {"pelvis_too_low": True, "heavy_yaw": False}
    # heavy_yaw: |sin yaw| > 0.8 (the original's |R[1,0]| > 0.8), i.e. |yaw| > asin 0.8 = 0.927 rad.
    for angle, expected in ((0.90, False), (0.95, True), (-0.95, True)):
        env.reset(seed=0)
        rotate_root(env, angle, (0.0, 0.0, 1.0))
        assert task.termination(forward(env), ts, np) == {"pelvis_too_low": False, "heavy_yaw": expected}
    _, _, terminated, _, info = env.step(np.zeros(416, np.float32))
    assert terminated and info["termination"] == "heavy_yaw"


# -- WalkTurn --------------------------------------------------------------------------------
def test_walk_turn_waypoints(walk_turn_env):
    env = walk_turn_env
    firsts = []
    for seed in range(5):
        env.reset(seed=seed)
        w = env.task_state["waypoints"]
        assert w.shape == (8, 2)
        start = env.sim.view().pelvis_pos[:2]
        legs = np.diff(np.vstack([start, w]), axis=0)
        lengths = np.linalg.norm(legs, axis=1)
        assert np.all(lengths >= 2.0 - 1e-9) and np.all(lengths <= 3.0 + 1e-9)
        headings = np.arctan2(legs[:, 1], legs[:, 0])
        assert np.pi / 6 - 1e-9 <= abs(headings[0]) <= np.pi / 3 + 1e-9
        turns = np.abs((np.diff(headings) + np.pi) % (2 * np.pi) - np.pi)
        assert np.all(turns >= np.pi / 6 - 1e-9) and np.all(turns <= np.pi / 2 + 1e-9)
        clearance = np.linalg.norm(w[:, None, :] - OBSTACLES[None], axis=-1).min()
        assert clearance >= 1.0
        firsts.append(tuple(w[0]))
    assert len(set(firsts)) == 5
    env.reset(seed=3)
    w3 = env.task_state["waypoints"].copy()
    env.reset(seed=3)
    np.testing.assert_array_equal(env.task_state["waypoints"], w3)


def test_walk_turn_obstacles_exist_and_collide(walk_turn_env):
    env, task = walk_turn_env, walk_turn_env.task
    m = env.model
    for k, (x, y) in enumerate(OBSTACLES):
        g = m.geom(f"walk_turn_obstacle_{k}")
        assert m.geom_type[g.id] == mujoco.mjtGeom.mjGEOM_SPHERE
        np.testing.assert_allclose(m.geom_pos[g.id], [x, y, 0.35])
    env.reset(seed=0)
    view = forward(env)
    assert task.reward_terms(view, env.task_state, np)["wall_collision"] == 0.0
    # Walk the body into the obstacle at (2.5, 0): its shins touch the sphere.
    env.data.qpos[0:2] = [2.5 - 0.3, 0.0]
    view = forward(env)
    assert task.reward_terms(view, env.task_state, np)["wall_collision"] == 1.0
    assert any("walk_turn_obstacle_0" in pair for pair in _prop_contacts(env, "walk_turn_obstacle"))
    # 0.6 m away from its surface: no contact.
    env.data.qpos[0:2] = [2.5 - 0.35 - 0.6, 0.0]
    view = forward(env)
    assert task.reward_terms(view, env.task_state, np)["wall_collision"] == 0.0


def test_walk_turn_reward_terms(walk_turn_env):
    env, task = walk_turn_env, walk_turn_env.task
    env.reset(seed=0)
    view = env.sim.view()
    ts = ts_copy(env.task_state)
    p = np.array(view.pelvis_pos[:2])
    ts["waypoints"][0] = p + [2.0, 0.0]
    env.data.qvel[0] = 1.5
    view = forward(env)
    terms = task.reward_terms(view, ts, np)
    assert terms["targeted_velocity"] == pytest.approx(0.5)
    assert terms["waypoint_approach"] == pytest.approx(np.exp(-2.0))
    assert terms["target_facing"] == pytest.approx(view.u_fwd[0], abs=1e-8)
    assert terms["target_facing"] > 0.99
    env.data.qvel[0] = -6.0
    assert task.reward_terms(forward(env), ts, np)["targeted_velocity"] == pytest.approx(-1.0)
    # Target behind: facing is clipped at 0; target to the left: facing obs (cos, sin) = (0, 1).
    ts["waypoints"][0] = p + [-2.0, 0.0]
    assert task.reward_terms(view, ts, np)["target_facing"] == 0.0
    ts["waypoints"][0] = p + [0.0, 2.0]
    obs = task.observation(view, ts, np)
    np.testing.assert_allclose(obs["facing"], [0.0, 1.0], atol=2e-3)
    np.testing.assert_allclose(obs["target_delta"], [0.0, 2.0], atol=1e-12)
    assert obs["target_id"].tolist() == [0.0]


def test_walk_turn_waypoint_sequence(walk_turn_env):
    env, task = walk_turn_env, walk_turn_env.task
    env.reset(seed=1)
    view = env.sim.view()
    ts = ts_copy(env.task_state)
    p = np.array(view.pelvis_pos[:2])
    ts["waypoints"][0] = p + [0.49, 0.0]
    ts["waypoints"][1] = p + [0.0, 0.51]
    ts = task.advance(view, ts, np)
    assert bool(ts["reached"]) and int(ts["target_idx"]) == 1 and int(ts["steps"]) == 1
    assert task.reward_terms(view, ts, np)["waypoint_reached"] == 1.0
    assert not task.success(ts, 1, False, np)
    ts = task.advance(view, ts, np)  # waypoint 1 is 0.51 m away: not reached
    assert not bool(ts["reached"]) and int(ts["target_idx"]) == 1
    assert task.reward_terms(view, ts, np)["waypoint_reached"] == 0.0
    ts["waypoints"][1] = p + [0.0, 0.3]
    ts = task.advance(view, ts, np)
    assert int(ts["target_idx"]) == 2 and task.success(ts, 3, False, np)
    assert task.success(ts, 3, True, np)  # not a survival task
    assert task.success_trace(ts) == {"current_target_idx": 2}
    obs = task.observation(view, ts, np)
    assert obs["target_id"].tolist() == [2.0]
    # After the last waypoint nothing more is counted.
    ts["waypoints"][:] = p
    ts["target_idx"] = np.int64(7)
    ts = task.advance(view, ts, np)
    assert int(ts["target_idx"]) == 8 and bool(ts["reached"])
    ts = task.advance(view, ts, np)
    assert int(ts["target_idx"]) == 8 and not bool(ts["reached"])


def test_walk_turn_novice_protection_and_termination(walk_turn_env):
    env, task = walk_turn_env, walk_turn_env.task
    env.reset(seed=0)
    ts = ts_copy(env.task_state)
    env.data.qpos[2] -= 0.947 - 0.5  # pelvis at 0.5 m
    view = forward(env)
    assert view.pelvis_pos[2] < 0.55
    for _ in range(20):
        ts = task.advance(view, ts, np)
        assert not any(task.termination(view, ts, np).values())
    assert int(ts["steps"]) == 20
    ts = task.advance(view, ts, np)
    assert view.head_pos[2] > 0.8
    assert task.termination(view, ts, np) == {"pelvis_too_low": True, "head_too_low": False}
    # Bent far forward about the pelvis: head below 0.8 m, pelvis high.
    env.reset(seed=0)
    rotate_root(env, 2.1, axis=(0.0, 1.0, 0.0))
    view = forward(env)
    env.data.qpos[2] += 0.9 - view.pelvis_pos[2]
    view = forward(env)
    assert view.head_pos[2] < 0.8 and view.pelvis_pos[2] > 0.55
    assert task.termination(view, ts, np) == {"pelvis_too_low": False, "head_too_low": True}
    # Upright standing with protection over: nothing.
    env.reset(seed=0)
    assert task.termination(env.sim.view(), ts, np) == {"pelvis_too_low": False, "head_too_low": False}


def test_walk_turn_protection_in_env(walk_turn_env):
    from mskbench.body.base import place_on_ground

    env = walk_turn_env
    env.reset(seed=0)
    rotate_root(env, -np.pi / 2, axis=(0.0, 1.0, 0.0))  # lying on the back
    place_on_ground(env.model, env.data, env.handles)
    view = forward(env)
    assert view.pelvis_pos[2] < 0.55 and view.head_pos[2] < 0.8
    for k in range(20):
        _, _, terminated, _, info = env.step(np.zeros(416, np.float32))
        assert not terminated, k
    _, _, terminated, _, info = env.step(np.zeros(416, np.float32))
    assert terminated and info["step"] == 21 and info["termination"] == "pelvis_too_low"


# -- PoleWalk --------------------------------------------------------------------------------
def test_pole_field(pole_walk_env):
    env = pole_walk_env
    m = env.model
    # The original's 16 poles around the start (pole_walk.xml@4ffd2d6), radius 0.1 m, 2 m tall; the
    # field is symmetric about both axes and one pole stands straight ahead at the success distance.
    assert POLES.shape == (16, 2)
    as_set = {tuple(np.round(p, 6)) for p in POLES}
    assert as_set == {(x, y) for x, y in as_set for x, y in [(x, -y)]} == {(-x, y) for x, y in as_set}
    assert (1.6, 0.0) in as_set
    for k, (x, y) in enumerate(POLES):
        g = m.geom(f"pole_walk_pole_{k}")
        assert m.geom_type[g.id] == mujoco.mjtGeom.mjGEOM_CAPSULE
        np.testing.assert_allclose(m.geom_pos[g.id], [x, y, 1.0])
        np.testing.assert_allclose(m.geom_size[g.id][:2], [0.1, 0.9])
        assert m.geom_friction[g.id][0] == pytest.approx(1.5)
    # The closest poles, (0.8, 0.8) and (1.4, 1.4), are ~0.85 m apart.
    d = np.linalg.norm(POLES[:, None] - POLES[None], axis=-1) + np.eye(16) * 9
    assert d.min() == pytest.approx(np.hypot(0.6, 0.6))
    # An arm swung into a pole collides with it.
    env.reset(seed=0)
    hand = env.sim.view().pos("hand_l")
    env.data.qpos[0:2] += POLES[3] - hand[:2]
    forward(env)
    assert any("pole_walk_pole_3" in pair for pair in _prop_contacts(env, "pole_walk_pole"))


def test_pole_walk_initial_state(pole_walk_env):
    env = pole_walk_env
    hips = []
    for seed in range(4):
        env.reset(seed=seed)
        view = env.sim.view()
        assert view.pelvis_pos[2] == pytest.approx(1.05)  # the root height is not noised
        assert 0.07 < view.foot_heights.min() < 0.13  # a short drop onto the feet
        np.testing.assert_allclose(view.pelvis_pos[:2], 0.0, atol=1e-12)  # the original's root at the origin
        assert float(env.task_state["max_dx"]) == 0.0
        for joint, angle in (("hip_flexion_l", 0.1), ("hip_flexion_r", 0.1), ("knee_l", 0.05), ("knee_r", 0.05)):
            # the original's angles plus N(0, 0.01²) (the knee is clipped at its 0 limit)
            assert env.data.qpos[env.handles.joints_qpos[joint]] == pytest.approx(angle, abs=0.05)
        hips.append(float(env.data.qpos[env.handles.joints_qpos["hip_flexion_l"]]))
    assert len(set(np.round(hips, 9))) == 4


def _march(origin, direction, radius, max_range=3.0, dt=1e-4):
    """Reference radar reading: walk along the ray until within ``radius`` of a pole axis."""
    t = np.arange(0.0, max_range, dt)
    pts = origin[None] + t[:, None] * direction[None]
    d = np.linalg.norm(pts[:, None] - POLES[None], axis=-1).min(axis=1)
    hit = np.flatnonzero(d <= radius)
    return t[hit[0]] if hit.size else max_range


def test_ray_circle_distances():
    dirs = fan_directions(np.pi / 4, 7)
    np.testing.assert_allclose(np.degrees(np.arctan2(dirs[:, 1], dirs[:, 0])), [-45, -30, -15, 0, 15, 30, 45])
    c = np.array([[1.0, 0.0]])
    assert ray_circle_distances(np.zeros(2), np.array([[1.0, 0.0]]), c, 0.25, 3.0, np)[0] == pytest.approx(0.75)
    assert ray_circle_distances(np.zeros(2), np.array([[-1.0, 0.0]]), c, 0.25, 3.0, np)[0] == 3.0  # behind
    assert ray_circle_distances(np.array([0.9, 0.0]), np.array([[1.0, 0.0]]), c, 0.25, 3.0, np)[0] == 0.0
    assert ray_circle_distances(np.zeros(2), np.array([[0.0, 1.0]]), c, 0.25, 3.0, np)[0] == 3.0  # miss
    assert ray_circle_distances(np.array([-3.0, 0.0]), np.array([[1.0, 0.0]]), c, 0.25, 3.0, np)[0] == 3.0


def test_pole_walk_radar_matches_ray_march(pole_walk_env):
    env, task = pole_walk_env, pole_walk_env.task
    dirs = fan_directions(np.pi / 4, 7)
    for xy in ((0.0, 0.0), (0.2, 0.3), (1.1, -0.7)):
        env.reset(seed=0)
        env.data.qpos[0:2] = xy
        view = forward(env)
        z = task.observation(view, env.task_state, np)["radar"]
        ref = [_march(np.array(view.pelvis_pos[:2]), d, 0.3) for d in dirs]
        np.testing.assert_allclose(z, ref, atol=2e-4)
    # Straight ahead from (0, 0): the inflated pole at (1.6, 0) is 1.3 m away.
    env.data.qpos[0:2] = (0.0, 0.0)
    view = forward(env)
    assert task.radar(view, np)[3] == pytest.approx(1.3)


def test_pole_walk_radar_gap_reward(pole_walk_env):
    env, task = pole_walk_env, pole_walk_env.task
    reset_noise_free(env)  # facing +x exactly
    ts = env.task_state
    env.data.qpos[0:2] = (0.5, 0.1)  # pole (1.6, 0) ahead, slightly right: more room to the left
    env.data.qvel[1] = 0.3
    view = forward(env)
    z = task.radar(view, np)
    assert z[3] < 1.0 and z[4] > z[2]
    assert task.reward_terms(view, ts, np)["dynamic_radar_gap"] == pytest.approx(0.6)
    env.data.qvel[1] = -0.3  # moving away from the gap
    assert task.reward_terms(forward(env), ts, np)["dynamic_radar_gap"] == 0.0
    env.data.qpos[0:2] = (0.5, -0.1)  # mirrored: the gap is to the right
    view = forward(env)
    z = task.radar(view, np)
    assert z[3] < 1.0 and z[4] < z[2]
    assert task.reward_terms(view, ts, np)["dynamic_radar_gap"] == pytest.approx(0.6)
    # Path ahead clear (the start: the pole at (1.6, 0) is 1.3 m away): reward forward speed.
    env.data.qpos[0:2] = (0.0, 0.0)
    env.data.qvel[:] = 0.0
    env.data.qvel[0] = 0.7
    view = forward(env)
    assert task.radar(view, np)[3] >= 1.0
    assert task.reward_terms(view, ts, np)["dynamic_radar_gap"] == pytest.approx(0.7)
    env.data.qvel[0] = 2.0
    assert task.reward_terms(forward(env), ts, np)["dynamic_radar_gap"] == pytest.approx(1.0)


def test_pole_walk_fatal_collision(pole_walk_env):
    env, task = pole_walk_env, pole_walk_env.task
    env.reset(seed=0)
    ts = env.task_state
    chest_dx = float(env.sim.view().pos("chest")[0] - env.data.qpos[0])
    for dy, fatal in ((0.21, True), (0.23, False), (-0.21, True), (0.0, True)):
        env.data.qpos[0:2] = (1.6 - chest_dx, dy)
        view = forward(env)
        assert task.termination(view, ts, np) == {"fatal_collision": fatal, "pelvis_too_low": False}
        assert task.reward_terms(view, ts, np)["fatal_collision"] == float(fatal)
    # A body fallen far from the poles ends the episode too (our addition), but not as a collision.
    env.reset(seed=0)
    pelvis_z = float(env.sim.view().pelvis_pos[2])
    for z, low in ((0.49, True), (0.51, False)):
        env.data.qpos[2] += z - pelvis_z
        pelvis_z = z
        assert task.termination(forward(env), ts, np) == {"fatal_collision": False, "pelvis_too_low": low}


def test_pole_walk_feet_phase(pole_walk_env):
    env, task = pole_walk_env, pole_walk_env.task
    env.reset(seed=0)
    h = env.handles
    env.data.qpos[h.joints_qpos["hip_flexion_l"]] = 0.5
    env.data.qpos[h.joints_qpos["hip_flexion_r"]] = -0.3
    h.couplings.apply(env.data.qpos)
    view = forward(env)
    dx = view.foot_pos[0, 0] - view.foot_pos[1, 0]
    assert dx > 0.3  # left foot leads
    ts = ts_copy(env.task_state)
    for phase, target in ((0.0, 0.0), (0.25, 0.25), (0.75, -0.25)):
        ts["phase"] = np.float64(phase)
        term = task.reward_terms(view, ts, np)["target_feet_phases"]
        assert term == pytest.approx(np.exp(-10.0 * (dx - target) ** 2), abs=1e-12)
    assert task.reward_terms(view, {**ts, "phase": np.float64(0.25)}, np)["target_feet_phases"] > \
        task.reward_terms(view, {**ts, "phase": np.float64(0.75)}, np)["target_feet_phases"]


def test_pole_walk_phase_and_success(pole_walk_env):
    env, task = pole_walk_env, pole_walk_env.task
    env.reset(seed=2)
    ts = ts_copy(env.task_state)
    x0 = float(ts["x0"])
    assert task.control_dt_s == pytest.approx(0.02)  # the 1.0 s gait clock advances 0.02 per step
    for _ in range(25):
        ts = task.advance(env.sim.view(), ts, np)
    assert float(ts["phase"]) == pytest.approx(0.5)
    np.testing.assert_allclose(task.observation(env.sim.view(), ts, np)["phase"], [0.0, -1.0], atol=1e-12)
    for dx, expect_max, ok in ((1.0, 1.0, False), (1.59, 1.59, False), (0.5, 1.59, False),
                               (1.61, 1.61, True), (0.2, 1.61, True)):
        env.data.qpos[0] = x0 + dx
        ts = task.advance(forward(env), ts, np)
        assert float(ts["max_dx"]) == pytest.approx(expect_max)
        assert bool(task.success(ts, 100, False, np)) is ok
    assert task.success_trace(ts) == {"max_dx": pytest.approx(1.61)}


# -- fidelity: timing and native solved signals -----------------------------------------------
@pytest.mark.parametrize("name, horizon, seconds", [("Hurdle", 1000, 20.0), ("WalkTurn", 2000, 40.0),
                                                    ("PoleWalk", 1000, 20.0)])
def test_original_timing(envs, name, horizon, seconds):
    """The original scenes' 2 ms physics step, 10 per control step (20 ms), and the registry's horizon."""
    env = envs[name]
    assert env.model.opt.timestep == pytest.approx(0.002)
    assert env.control_dt_s == pytest.approx(0.02)
    assert env.task.horizon == horizon
    assert env.control_dt_s * env.task.horizon == pytest.approx(seconds)
    env.reset(seed=0)
    t0 = env.data.time
    env.step(np.zeros(416, np.float32))
    assert env.data.time - t0 == pytest.approx(0.02)
    ts = env.task_state
    assert not env.task.time_up(ts, horizon - 1, np) and env.task.time_up(ts, horizon, np)


@pytest.mark.parametrize("name", ["Hurdle", "PoleWalk"])
def test_no_native_solved(envs, name):
    """The original sets ``solved`` to a constant 0.0 for these tasks: no native signal."""
    env = envs[name]
    assert type(env.task).native_solved is None
    env.reset(seed=0)
    _, _, _, _, info = env.step(np.zeros(416, np.float32))
    assert info["solved_native"] is False or not info["solved_native"]


def test_walk_turn_native_solved(walk_turn_env):
    """Native solved: the third waypoint reached (the original's last of three targets)."""
    env, task = walk_turn_env, walk_turn_env.task
    assert "@" in type(task).native_solved
    env.reset(seed=0)
    view = env.sim.view()
    p = np.array(view.pelvis_pos[:2])
    ts = ts_copy(env.task_state)
    assert not task.solved_native(view, ts, 0, np)
    # Two waypoints reached (Table XII success), the third 0.51 m away: not solved.
    ts["target_idx"] = np.int64(2)
    ts["waypoints"][2] = p + [0.51, 0.0]
    nxt = task.advance(view, ts, np)
    assert int(nxt["target_idx"]) == 2 and task.success(nxt, 10, False, np)
    assert not task.solved_native(view, nxt, 10, np)
    # The third 0.49 m away: reached on this step, solved.
    ts["waypoints"][2] = p + [0.0, 0.49]
    nxt = task.advance(view, ts, np)
    assert int(nxt["target_idx"]) == 3 and bool(task.solved_native(view, nxt, 10, np))
    # And it stays solved while later waypoints are pursued.
    ts["target_idx"] = np.int64(5)
    assert bool(task.solved_native(view, ts, 10, np))

"""Terrain tasks: Stairs, StepStones, Slide (terrain helpers in ``mskbench.tasks.terrain``).

Termination, success and the key reward terms are checked on constructed
states (qpos / task state set by hand, ``mj_forward``, evaluate); the analytic
terrain heights are checked against ray casts on the compiled scene.
"""

from __future__ import annotations

from types import SimpleNamespace

import mujoco
import numpy as np
import pytest
from contract import forward, reset_noise_free, rotate_root, ts_copy

from mskbench.envs import MSKEnv
from mskbench.tasks.slide import SLIDE_FRICTION, Slide
from mskbench.tasks.stairs import STAIRS_FRICTION, Stairs
from mskbench.tasks.step_stones import STONE_FRICTION, TARGETS, TOP_Z_M, StepStones
from mskbench.tasks.terrain import BoxTerrain, CylinderTerrain, SlopeProfile

TASKS = {"Stairs": Stairs, "StepStones": StepStones, "Slide": Slide}


@pytest.fixture
def envs(shared_envs):
    """The session's shared envs of these tasks (tests reset them and restore what they change)."""
    return {name: shared_envs(name) for name in TASKS}


def _place(env, seed=0, dx=0.0, dy=0.0, pelvis_z=None):
    """Reset to the noise-free start, then move the root by (dx, dy) and (optionally) put the pelvis at
    ``pelvis_z``; at rest."""
    reset_noise_free(env, seed)
    env.data.qpos[0] += dx
    env.data.qpos[1] += dy
    env.data.qvel[:] = 0.0
    view = forward(env)
    if pelvis_z is not None:
        env.data.qpos[2] += pelvis_z - view.pelvis_pos[2]
        view = forward(env)
    return view


def _ray_height(env, x, y, top=20.0):
    """Height of the first terrain/floor surface below (x, y) (body geoms, group 4, are not seen)."""
    groups = np.array([1, 0, 1, 0, 0, 0], np.uint8)
    geom = np.array([-1], np.int32)
    dist = mujoco.mj_ray(env.model, env.data, np.array([x, y, top]), np.array([0.0, 0.0, -1.0]), groups, 1, -1, geom)
    assert geom[0] >= 0
    return top - dist


# -- every task: contract, backends, initial state ------------------------------------------------


@pytest.mark.parametrize("name", list(TASKS))
def test_initial_state_touches_ground_without_penetration(envs, name):
    """Stairs and Slide start standing on their ground; StepStones starts with the pelvis at 3.05 m
    (Table XI, the original's reset), the feet a little above stone 0, touching nothing. Stairs'
    noisy start is placed on the floor (host); Slide's is noised on the device without being placed
    again, so its feet may be a few mm into the slab (benchmarks/start_offsets.py), its noise-free
    start not."""
    env = envs[name]
    tree = set(env.handles.body_tree.tolist())
    expected_ground = {"Stairs": {"floor"}, "StepStones": set(), "Slide": {"slide_slab_0"}}[name]
    for seed, noisy in ((0, True), (1, True), (0, False)):
        if noisy:
            env.reset(seed=seed)
        else:
            reset_noise_free(env, seed)
        mujoco.mj_forward(env.model, env.data)
        depth = 0.012 if (noisy and name == "Slide") else 1e-6
        grounds = set()
        for c in env.data.contact[:env.data.ncon]:
            b1, b2 = env.model.geom_bodyid[c.geom1], env.model.geom_bodyid[c.geom2]
            if (b1 in tree) and (b2 in tree):
                continue  # the model's own body-body pairs (arm against thorax)
            assert c.dist > -depth, (env.model.geom(c.geom1).name, env.model.geom(c.geom2).name, c.dist)
            grounds.add(env.model.geom(c.geom2 if b1 in tree else c.geom1).name)
        assert grounds == expected_ground
        if name == "StepStones":
            feet = env.sim.view().foot_heights
            assert np.all(feet > TOP_Z_M) and np.all(feet < TOP_Z_M + 0.2)


# -- terrain helpers ------------------------------------------------------------------------------
def test_cylinder_terrain_height():
    t = CylinderTerrain("c", np.array([(0.0, 0.0), (1.0, 0.5)]), np.array([0.2, 0.3]), np.array([1.0, 2.0]))
    z = t.height(np.array([0.0, 0.19, 0.21, 1.0, 1.0, 1.0, 3.0]), np.array([0.0, 0.0, 0.0, 0.5, 0.79, 0.81, 0.0]), np)
    np.testing.assert_allclose(z, [1.0, 1.0, 0.0, 2.0, 2.0, 0.0, 0.0])
    with pytest.raises(ValueError):
        CylinderTerrain("c", np.zeros((1, 2)), np.array([0.0]), np.array([1.0]))


def test_box_terrain_height():
    t = BoxTerrain.from_extents("t", [(0, 1, -1, 1, 0, 0.2), (0.5, 2, -0.5, 0.5, 0, 0.5)])
    z = t.height(np.array([-0.5, 0.25, 0.75, 0.75, 1.5, 3.0]), np.array([0, 0, 0, 0.8, 0, 0]), np)
    np.testing.assert_allclose(z, [0.0, 0.2, 0.5, 0.2, 0.5, 0.0])
    with pytest.raises(ValueError):
        BoxTerrain.from_extents("t", [(1, 0, 0, 1, 0, 1)])


def test_slope_profile_height_slope_normal():
    p = SlopeProfile("p", np.array([0.0, 1.0, 3.0]), np.array([2.0, 1.0, 1.0]), half_width=1.0)
    np.testing.assert_allclose(p.height(np.array([-0.1, 0.5, 2.0, 3.5]), np.zeros(4), np), [0.0, 1.5, 1.0, 0.0])
    assert p.height(0.5, 1.5, np) == 0.0  # off to the side
    np.testing.assert_allclose(p.slope(np.array([0.5, 2.0, 4.0]), np.zeros(3), np), [-1.0, 0.0, 0.0])
    np.testing.assert_allclose(p.normal(0.5, 0.0, np), [np.sqrt(0.5), 0.0, np.sqrt(0.5)])
    np.testing.assert_allclose(p.normal(2.0, 0.0, np), [0.0, 0.0, 1.0])
    # Each slab's top face runs exactly between its two breakpoints.
    for (c, h, q), i in zip(p.slabs(), range(2)):
        rot = np.zeros(9)
        mujoco.mju_quat2Mat(rot, q)
        rot = rot.reshape(3, 3)
        ends = [c + rot @ np.array([sx * h[0], 0.0, h[2]]) for sx in (-1, 1)]
        np.testing.assert_allclose([ends[0][0], ends[0][2]], [p.xs[i], p.zs[i]], atol=1e-12)
        np.testing.assert_allclose([ends[1][0], ends[1][2]], [p.xs[i + 1], p.zs[i + 1]], atol=1e-12)


@pytest.mark.parametrize("name,xs,y", [
    ("Stairs", np.arange(0.45, 8.0, 0.1), 0.3),
    ("Stairs", np.arange(0.45, 8.0, 0.1), 0.7),
    ("StepStones", np.arange(0.3, 5.0, 0.05), 0.03),  # ahead of the body over stone 0
    ("Slide", np.arange(0.5, 62.0, 0.7), 1.2),
])
def test_analytic_terrain_matches_ray_casts(envs, name, xs, y):
    env = envs[name]
    env.reset(seed=0)
    mujoco.mj_forward(env.model, env.data)
    terrain = env.task.terrain
    for x in xs:
        assert _ray_height(env, x, y) == pytest.approx(float(terrain.height(x, y, np)), abs=1e-6), x


# -- Stairs ---------------------------------------------------------------------------------------
def test_stairs_course_and_initial_state(envs):
    """The original's staircase (stairs.xml@4ffd2d6): 4 steps of 0.15 m rise and 0.5 m run from x = 1 m
    to a 0.75 m landing over x ∈ [3, 5] m, 1 m wide, friction 1.5; the start 0.7 m before the first riser."""
    env = envs["Stairs"]
    t = env.task.terrain
    np.testing.assert_allclose(t.top, [0.15, 0.3, 0.45, 0.6, 0.75])
    np.testing.assert_allclose(t.center[:, 0] - t.half[:, 0], [1.0, 1.5, 2.0, 2.5, 3.0])
    np.testing.assert_allclose(t.center[:, 0] + t.half[:, 0], [1.5, 2.0, 2.5, 3.0, 5.0])
    np.testing.assert_allclose(t.half[:, 1], 0.5)
    gid = env.model.geom("stairs_step_0").id
    assert env.model.geom_friction[gid, 0] == pytest.approx(STAIRS_FRICTION)
    for seed in range(3):
        env.reset(seed=seed)
        view = env.sim.view()
        assert env.data.qvel[0] == pytest.approx(0.5, abs=0.03)  # plus the original's N(0, 0.005²)
        assert view.pelvis_pos[0] == pytest.approx(0.3, abs=0.03)
        assert np.max(view.pos("toes_l")[0]) < 1.0 and np.max(view.pos("toes_r")[0]) < 1.0
        assert float(env.task_state["max_pelvis_z"]) == pytest.approx(view.pelvis_pos[2])


def test_stairs_radar(envs):
    env = envs["Stairs"]
    view = _place(env, dx=0.2)
    px = view.pelvis_pos[0]
    assert px == pytest.approx(0.5, abs=1e-6)
    obs = env.task.observation(view, env.task_state, np)
    # Points at 0.50, 0.65, ..., 1.70 m: floor ×4, then steps 1 ×3, 2 ×2 (0.5 m treads from x = 1.0).
    ground = np.array([0, 0, 0, 0, 0.15, 0.15, 0.15, 0.30, 0.30])
    np.testing.assert_allclose(obs["radar"], ground - view.pelvis_pos[2], atol=1e-9)
    assert obs["radar"].shape == (9,) and obs["phase"].shape == (2,)
    assert bool(env.task.step_ahead(view, np))
    view = _place(env, dx=-3.0)  # flat floor, stairs out of range
    assert not bool(env.task.step_ahead(view, np))
    view = _place(env, dx=2.9, pelvis_z=0.75 + 0.95)  # on the landing (x = 3.2 m)
    np.testing.assert_allclose(env.task.radar_heights(view, np), np.full(9, 0.75))
    assert not bool(env.task.step_ahead(view, np))


def test_stairs_anticipatory_lift(envs):
    env = envs["Stairs"]
    task = env.task
    for dx, expect in ((0.25, 0.5), (-3.0, 0.0)):
        _place(env, dx=dx)
        env.data.qvel[2] = 0.5  # the whole body moving up at 0.5 m/s
        view = forward(env)
        assert task.reward_terms(view, env.task_state, np)["anticipatory_lift"] == pytest.approx(expect, abs=1e-9)
        env.data.qvel[2] = -0.5
        view = forward(env)
        assert task.reward_terms(view, env.task_state, np)["anticipatory_lift"] == 0.0


def test_stairs_swing_foot_is_the_unloaded_one():
    task = Stairs()

    def fake(touch, zl, zr):
        vel = {"foot_l": np.array([0.0, 0.0, zl]), "foot_r": np.array([0.0, 0.0, zr])}
        return SimpleNamespace(touch=np.asarray(touch, float), vel=vel.__getitem__)

    assert task.swing_zdot(fake([0, 0, 300, 100], 0.7, -0.1), np) == 0.7  # left unloaded
    assert task.swing_zdot(fake([200, 50, 0, 10], 0.7, 0.3), np) == 0.3  # right less loaded
    assert task.swing_zdot(fake([0, 0, 0, 0], 0.2, 0.6), np) == 0.6  # both airborne: the faster riser


def test_stairs_velocity_and_stability_terms(envs):
    env = envs["Stairs"]
    task = env.task
    _place(env, dy=0.3)
    env.data.qvel[0:3] = [3.0, 0.0, 0.4]
    view = forward(env)
    np.testing.assert_allclose(view.com_vel, [3.0, 0.0, 0.4], atol=1e-9)
    terms = task.reward_terms(view, env.task_state, np)
    assert terms["fwd_trajectory"] == pytest.approx(2.0)
    assert terms["upward_trajectory"] == pytest.approx(0.4)
    assert terms["lateral_stable"] == pytest.approx(np.exp(-5 * view.pelvis_pos[1] ** 2))
    assert view.pelvis_pos[1] == pytest.approx(0.3, abs=1e-6)
    assert terms["vertical_stable"] == pytest.approx(np.exp(-5 * (0.98 - view.u_torso[2]) ** 2))
    env.data.qvel[0:3] = [-1.0, 0.0, -1.0]
    terms = task.reward_terms(forward(env), env.task_state, np)
    assert terms["fwd_trajectory"] == pytest.approx(-0.2) and terms["upward_trajectory"] == pytest.approx(-0.5)


def test_stairs_termination(envs):
    env = envs["Stairs"]
    task = env.task
    view = _place(env)
    assert task.termination(view, env.task_state, np) == {"pelvis_too_low": False, "lateral_drift": False}
    view = _place(env, pelvis_z=0.74)
    assert task.termination(view, env.task_state, np) == {"pelvis_too_low": True, "lateral_drift": False}
    view = _place(env, pelvis_z=0.76)
    assert not task.termination(view, env.task_state, np)["pelvis_too_low"]
    # The threshold is absolute (Table XI, the original's qpos[2] < 0.75): a body lying on the landing
    # (pelvis 0.2 m above its 0.75 m top) is not too low.
    view = _place(env, dx=2.9, pelvis_z=0.75 + 0.2)
    assert not task.termination(view, env.task_state, np)["pelvis_too_low"]
    for dy, drift in ((1.01, True), (-1.01, True), (0.99, False)):
        view = _place(env, dy=dy)
        assert task.termination(view, env.task_state, np) == {"pelvis_too_low": False, "lateral_drift": drift}
    _place(env, pelvis_z=0.6)
    _, _, terminated, _, info = env.step(np.zeros(416, np.float32))
    assert terminated and info["termination"] == "pelvis_too_low"


def test_stairs_success_tracks_max_pelvis_height(envs):
    env = envs["Stairs"]
    task = env.task
    ts = ts_copy(env.task_state)
    for z, expect_max, ok in ((1.0, 1.0, False), (1.59, 1.59, False), (1.7, 1.7, True), (1.2, 1.7, True)):
        view = _place(env, dx=2.9, pelvis_z=z)  # heights set by hand (the test does not step physics)
        ts = task.advance(view, ts, np)
        assert float(ts["max_pelvis_z"]) == pytest.approx(expect_max)
        assert bool(task.success(ts, 10, False, np)) is ok
        assert task.success_trace(ts) == {"max_pelvis_z": pytest.approx(expect_max)}


def test_stairs_phase_advances():
    task = Stairs()
    ts = {"phase": np.float64(0.995), "max_pelvis_z": np.float64(1.0)}
    ts = task.advance(SimpleNamespace(pelvis_pos=np.array([0.0, 0.0, 0.9])), ts, np)
    assert ts["phase"] == pytest.approx(0.995 + 0.01 / 1.1 - 1.0)
    with pytest.raises(ValueError, match="period_s"):
        Stairs(period_s=0.0)


# -- StepStones -----------------------------------------------------------------------------------
def test_stepstones_initial_state(envs):
    env = envs["StepStones"]
    env.reset(seed=0)  # with the original's noise on the joints and velocities: the root stays put
    view = env.sim.view()
    assert view.pelvis_pos[2] == pytest.approx(3.05, abs=1e-6)
    np.testing.assert_allclose(view.pelvis_pos[:2], [0.0, 0.0], atol=1e-6)
    for joint, value in (("hip_flexion_l", 0.2), ("knee_angle_l", 0.1), ("hip_flexion_r", -0.1)):
        assert env.data.qpos[env.model.joint(joint).qposadr[0]] == pytest.approx(value, abs=0.05)
    assert 0.0 < np.abs(env.data.qvel).max() < 0.06
    obs, _ = reset_noise_free(env)
    view = env.sim.view()
    assert view.pelvis_pos[2] == pytest.approx(3.05, abs=1e-6)  # Table XI: elevated, z = 3.05 m
    np.testing.assert_allclose(view.pelvis_pos[:2], [0.0, 0.0], atol=1e-6)  # over stone 0
    assert np.all(view.foot_heights > TOP_Z_M)
    for joint, value in (("hip_flexion_l", 0.2), ("knee_angle_l", 0.1), ("hip_flexion_r", -0.1)):
        assert env.data.qpos[env.model.joint(joint).qposadr[0]] == pytest.approx(value)
    assert np.all(env.data.qvel == 0.0)
    ts = env.task_state
    assert int(ts["stone_idx"]) == 0 and int(ts["crossed"]) == 0
    dp = obs[env.obs_layout["task/stones_dp"]].reshape(3, 3)
    np.testing.assert_allclose(dp[:, 0], [0.45, 0.90, 1.35], atol=1e-5)  # stones 1, 2, 3
    np.testing.assert_allclose(dp[:, 1], [0.05, -0.05, 0.02], atol=1e-5)
    np.testing.assert_allclose(dp[:, 2], TOP_Z_M - view.pelvis_pos[2], atol=1e-5)


def test_stepstones_course(envs):
    """The original's course (step_stones.xml@a68b6ce): 10 cylinders of radius 0.15 m, tops at 2.0 m,
    friction 2.0; the final index is 9."""
    env = envs["StepStones"]
    t = env.task.terrain
    assert len(t.names) == 10 and env.task.final_idx == 9
    np.testing.assert_allclose(t.center[:, 0], [0, 0.45, 0.9, 1.35, 1.8, 2.25, 2.7, 3.15, 3.6, 4.5])
    np.testing.assert_allclose(t.radius, 0.15)
    np.testing.assert_allclose(t.top, 2.0)
    for name in t.names:
        g = env.model.geom(name)
        assert g.type[0] == mujoco.mjtGeom.mjGEOM_CYLINDER
        assert env.model.geom_friction[g.id, 0] == pytest.approx(STONE_FRICTION)


def test_stepstones_gaps_drop_to_the_floor(envs):
    env = envs["StepStones"]
    env.reset(seed=0)
    mujoco.mj_forward(env.model, env.data)
    assert _ray_height(env, 0.23, 0.0) == pytest.approx(0.0, abs=1e-9)  # between stones 0 and 1
    assert _ray_height(env, 0.45, 0.05) == pytest.approx(TOP_Z_M)  # on stone 1
    assert _ray_height(env, 0.45, 0.3) == pytest.approx(0.0, abs=1e-9)  # beside it


def test_stepstones_index_state_machine(envs):
    env = envs["StepStones"]
    task = env.task
    ts = ts_copy(env.task_state)
    # (pelvis x, expected index, crossed this step)
    # (pelvis x, expected index, crossed this step): stone 0 (the start, x = 0) never counts.
    for x, idx, crossed in ((0.3, 0, 0), (0.5, 1, 1), (0.4, 1, 0), (1.4, 3, 2), (1.4, 3, 0), (4.0, 8, 5),
                            (4.6, 9, 1), (10.0, 9, 0), (0.0, 9, 0)):
        view = _place(env, dx=x, pelvis_z=3.0)
        ts = task.advance(view, ts, np)
        assert (int(ts["stone_idx"]), int(ts["crossed"])) == (idx, crossed), x
        assert task.reward_terms(view, ts, np)["stone_progress"] == crossed
        assert bool(task.success(ts, 10, False, np)) is (idx == 9)
    assert task.success_trace(ts) == {"current_stone_idx": 9}
    # Near the end the observed targets repeat the last stone.
    ts["stone_idx"] = np.int64(7)
    view = _place(env, pelvis_z=3.0)
    dp = task.observation(view, ts, np)["stones_dp"].reshape(3, 3)
    np.testing.assert_allclose(dp[:, 0] + view.pelvis_pos[0], [3.6, 4.5, 4.5])


def test_stepstones_reward_terms(envs):
    env = envs["StepStones"]
    task = env.task
    view = _place(env)
    ts = env.task_state
    terms = task.reward_terms(view, ts, np)
    assert terms["magnetic_reaching"] == 0.0  # not moving forward
    assert terms["stand_tall"] == pytest.approx(np.clip((view.dz_leg - 0.6) / 0.3, 0, 1))
    assert terms["overbend_knee"] == 0.0
    env.data.qvel[0] = 0.5
    view = forward(env)
    feet = view.foot_pos
    lead = feet[np.argmax(feet[:, 0])]
    d = np.linalg.norm(lead - TARGETS[1])  # stone 1 follows index 0
    assert task.reward_terms(view, ts, np)["magnetic_reaching"] == pytest.approx(np.exp(-2 * d))
    env.data.qpos[env.handles.joints_qpos["knee_l"]] = 1.3
    env.data.qpos[env.handles.joints_qpos["knee_r"]] = 1.1
    view = forward(env)
    assert task.reward_terms(view, ts, np)["overbend_knee"] == pytest.approx(0.4)
    assert view.dz_leg < 0.85  # bent knees lower the pelvis over the feet
    assert task.reward_terms(view, ts, np)["stand_tall"] == pytest.approx(np.clip((view.dz_leg - 0.6) / 0.3, 0, 1))


def test_stepstones_termination(envs):
    env = envs["StepStones"]
    task = env.task
    assert task.termination(_place(env), env.task_state, np) == {"fell_from_height": False}
    assert task.termination(_place(env, pelvis_z=2.51), env.task_state, np) == {"fell_from_height": False}
    assert task.termination(_place(env, pelvis_z=2.49), env.task_state, np) == {"fell_from_height": True}
    # Falling into a gap between stones (stones 1 and 2 end at x ≈ 0.59 and 0.76).
    _place(env, dx=0.675, pelvis_z=2.4)
    _, _, terminated, _, info = env.step(np.zeros(416, np.float32))
    assert terminated and info["termination"] == "fell_from_height"


# -- Slide ----------------------------------------------------------------------------------------
def test_slide_course(envs):
    t = envs["Slide"].task.terrain
    assert t.zs[-1] == pytest.approx(0.5) and t.zs[0] == pytest.approx(t.zs[1])
    assert t.xs[-1] - t.xs[1] > 18.0 + 5.0
    deg = np.degrees(np.arctan(t.slopes))
    np.testing.assert_allclose(deg[1:-1], [-10, -16, -5, 3, -12, -18, -6, 3, -10, -14, -4])
    assert deg[0] == 0.0 and deg[-1] == 0.0


def test_slide_initial_state_and_low_friction(envs):
    env = envs["Slide"]
    env.reset(seed=0)
    view = env.sim.view()
    assert env.data.qvel[0] == pytest.approx(0.8, abs=0.03)  # plus the original's N(0, 0.005²)
    assert view.pelvis_pos[2] - env.task.terrain.zs[0] == pytest.approx(0.947, abs=0.01)
    assert float(env.task_state["x0"]) == pytest.approx(view.pelvis_pos[0])  # x0 moves with the noise
    reset_noise_free(env)
    assert env.data.qvel[0] == pytest.approx(0.8)
    mujoco.mj_forward(env.model, env.data)
    slab = env.model.geom("slide_slab_0").id
    fr = [c.friction[0] for c in env.data.contact[:env.data.ncon] if slab in (c.geom1, c.geom2)]
    assert fr and np.allclose(fr, SLIDE_FRICTION)


def test_slide_feet_slip_downhill(envs):
    """On the −16° stretch, started at rest, the feet slide downhill; with friction 1 they would stick."""
    env = envs["Slide"]
    gid = env.model.geom("slide_slab_2").id
    moved = {}
    try:
        for mu in (SLIDE_FRICTION, 1.0):
            env.model.geom_friction[gid, 0] = mu
            env.reset(seed=0)
            base = env._ctx.default_qpos.copy()
            base[2] += 5.0  # above the slope, then lowered onto it
            qpos = env._ctx.pose(base=base, root_xy=(4.0, 0.0), ground_geom="slide_slab_2")
            env.sim.reset(qpos, np.zeros(env.model.nv))
            feet0 = env.sim.view().foot_pos.copy()
            assert env.sim.view().pelvis_pos[2] - env.task.terrain.height(4.0, 0.0, np) > 0.8
            for _ in range(round(0.3 / env.control_dt_s)):  # 0.3 s
                env.step(np.zeros(416, np.float32))
            moved[mu] = env.sim.view().foot_pos[:, 0] - feet0[:, 0]
    finally:
        env.model.geom_friction[gid, 0] = SLIDE_FRICTION
    assert np.all(moved[SLIDE_FRICTION] > 0.2)
    assert np.all(np.abs(moved[1.0]) < 0.05)


def test_slide_slope_normal_observation(envs):
    env = envs["Slide"]
    task = env.task
    obs = task.observation(_place(env), env.task_state, np)
    np.testing.assert_allclose(obs["n_slope"], [0.0, 0.0, 1.0], atol=1e-12)
    view = _place(env, dx=3.5, pelvis_z=5.0)  # over the −16° stretch
    a = np.radians(16.0)
    np.testing.assert_allclose(task.observation(view, env.task_state, np)["n_slope"], [np.sin(a), 0, np.cos(a)],
                               atol=1e-9)
    view = _place(env, dy=2.5)  # off the side: the floor
    np.testing.assert_allclose(task.observation(view, env.task_state, np)["n_slope"], [0, 0, 1], atol=1e-12)


def test_slide_lean_terms_and_fell_backward(envs):
    env = envs["Slide"]
    task = env.task
    for angle in (0.3, -0.3, -0.7, -0.9):  # about +y: positive pitches the body forward (nose down)
        _place(env)
        rotate_root(env, angle, (0.0, 1.0, 0.0))
        view = forward(env)
        up = env.data.xmat[env.model.body("thorax").id].reshape(3, 3)[2, 0]  # chest forward axis · ẑ
        assert up == pytest.approx(-np.sin(angle), abs=0.01)
        terms = task.reward_terms(view, env.task_state, np)
        assert terms["slope_forward_lean"] == pytest.approx(np.clip(-up / 0.3, 0, 1))
        assert terms["backward_lean_penalty"] == pytest.approx(max(up, 0.0))
        assert terms["pitch_balance"] == pytest.approx(np.exp(-5 * np.arcsin(up) ** 2))
        term = task.termination(view, env.task_state, np)
        assert bool(term["fell_backward"]) is (angle < -0.8)
        assert not term["split"]


def test_slide_gate_and_pelvis_low(envs):
    env = envs["Slide"]
    task = env.task
    z0 = task.terrain.zs[0]
    view = _place(env)
    terms = task.reward_terms(view, env.task_state, np)
    assert terms["pitch_balance"] > 0.99
    assert terms["stand_tall"] == pytest.approx(np.exp(-10 * (0.95 - view.dz_leg) ** 2))
    view = _place(env, pelvis_z=z0 + 0.69)  # down in a crouch: the gate closes
    terms = task.reward_terms(view, env.task_state, np)
    assert terms["pitch_balance"] == 0.0 and terms["stand_tall"] == 0.0
    assert not task.termination(view, env.task_state, np)["pelvis_too_low"]
    view = _place(env, pelvis_z=z0 + 0.44)
    assert task.termination(view, env.task_state, np)["pelvis_too_low"]
    view = _place(env, dx=20.0, pelvis_z=float(task.terrain.height(20.0, 0.0, np)) + 0.46)
    assert not task.termination(view, env.task_state, np)["pelvis_too_low"]


def test_slide_split(envs):
    env = envs["Slide"]
    task = env.task
    seen = set()
    for add in (0.45, 0.9, 1.1, 1.3):
        _place(env)
        for side in ("l", "r"):
            env.data.qpos[env.model.joint(f"hip_adduction_{side}").qposadr[0]] = -add  # abduction
        view = forward(env)
        gap = abs(view.pos("foot_l")[1] - view.pos("foot_r")[1])
        split = bool(task.termination(view, env.task_state, np)["split"])
        assert split == bool(gap > 1.2)
        seen.add(split)
    assert seen == {True, False}


def test_slide_success_tracks_max_displacement(envs):
    env = envs["Slide"]
    task = env.task
    reset_noise_free(env)  # _place's start
    ts = ts_copy(env.task_state)
    x0 = float(ts["x0"])
    for dx, expect, ok in ((5.0, 5.0, False), (17.9, 17.9, False), (18.2, 18.2, True), (10.0, 18.2, True)):
        view = _place(env, dx=dx, pelvis_z=3.0)
        ts = task.advance(view, ts, np)
        assert float(ts["x0"]) == x0
        assert float(ts["max_dx"]) == pytest.approx(expect, abs=1e-6)
        assert bool(task.success(ts, 10, False, np)) is ok
    assert task.success_trace(ts)["max_forward_displacement"] == pytest.approx(18.2, abs=1e-6)


# -- native solved signals and timing (issue 13) ----------------------------------------------------
def test_stairs_native_solved_is_pelvis_above_2m(envs):
    """The original's solved: root (pelvis) height > 2.0 m, absolute — above a standing pelvis on the
    0.75 m landing (~1.7 m), so a jump there; not met at the start."""
    env = envs["Stairs"]
    task = env.task
    view = _place(env)
    assert not bool(task.solved_native(view, env.task_state, 0, np))
    for z, solved in ((2.01, True), (1.99, False), (0.75 + 0.95, False)):
        view = _place(env, dx=2.9, pelvis_z=z)
        assert bool(task.solved_native(view, env.task_state, 10, np)) is solved, z
    _place(env, dx=2.9, pelvis_z=2.3)
    _, _, _, _, info = env.step(np.zeros(416, np.float32))
    assert info["solved_native"]


def test_stepstones_native_solved_is_the_final_index(envs):
    env = envs["StepStones"]
    task = env.task
    view = _place(env, pelvis_z=3.0)
    ts = ts_copy(env.task_state)
    assert not bool(task.solved_native(view, ts, 0, np))
    for x, solved in ((4.4, False), (4.6, True)):  # the last stone is at x = 4.5 (index 8 -> 9)
        ts = ts_copy(env.task_state)
        ts["stone_idx"] = np.int64(8)
        view = _place(env, dx=x, pelvis_z=3.0)
        ts = task.advance(view, ts, np)
        assert bool(task.solved_native(view, ts, 10, np)) is solved, x
        assert bool(task.success(ts, 10, False, np)) is solved


def test_slide_native_solved_is_pelvis_above_2m(envs):
    """The original's solved (root height > 2.0 m, absolute): on this elevated slope it holds at the start
    (documented: it measures nothing here) and fails on the run-out at 0.5 m."""
    env = envs["Slide"]
    task = env.task
    view = _place(env)
    assert bool(task.solved_native(view, env.task_state, 0, np))
    for z, solved in ((2.01, True), (1.99, False)):
        view = _place(env, dx=40.0, pelvis_z=z)
        assert float(task.terrain.height(view.pelvis_pos[0], view.pelvis_pos[1], np)) == pytest.approx(0.5)
        assert bool(task.solved_native(view, env.task_state, 10, np)) is solved, z


@pytest.mark.parametrize("name,horizon,seconds", [("Stairs", 2000, 40.0), ("StepStones", 1000, 20.0),
                                                  ("Slide", 1000, 20.0)])
def test_original_timing(envs, name, horizon, seconds):
    """The original scenes' 2 ms physics step × 10: a 20 ms control step; the horizons in steps from the
    original's registry.py (Slide: its env's own 1,000-step limit), so in seconds twice as long as at 10 ms."""
    env = envs[name]
    assert env.model.opt.timestep == pytest.approx(0.002)
    assert env.control_dt_s == pytest.approx(0.02)
    assert env.task.horizon == horizon
    assert env.control_dt_s * env.task.horizon == pytest.approx(seconds)
    fresh = MSKEnv(TASKS[name]())
    assert fresh.control_dt_s * fresh.task.horizon == pytest.approx(seconds)
    t0 = env.data.time
    env.reset(seed=0)
    t0 = env.data.time
    env.step(np.zeros(416, np.float32))
    assert env.data.time - t0 == pytest.approx(0.02)

"""The grip group and Reach: Powerlift, Squat, ChinUp, Reach — props, timing, native solved signals and task
logic on constructed states."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest
from contract import forward, reset_noise_free

from mskbench.tasks.chin_up import ChinUp
from mskbench.tasks.grip import grip_residual_m
from mskbench.envs import MSKEnv
from mskbench.tasks.powerlift import Powerlift
from mskbench.tasks.reach import Reach
from mskbench.tasks.squat import Squat, squat_pose


@pytest.fixture
def envs(shared_envs):
    """The session's shared envs of these tasks (tests reset them and restore what they change)."""
    return {name: shared_envs(name) for name in ("Powerlift", "Squat", "ChinUp")}


@pytest.fixture
def powerlift(envs):
    return envs["Powerlift"]


@pytest.fixture
def squat(envs):
    return envs["Squat"]


@pytest.fixture
def chinup(envs):
    return envs["ChinUp"]


def _contacts(env):
    d, m = env.data, env.model
    return [(m.geom(d.contact[i].geom[0]).name, m.geom(d.contact[i].geom[1]).name, float(d.contact[i].dist))
            for i in range(d.ncon)]


# -- contract ---------------------------------------------------------------------------------


# -- Powerlift ------------------------------------------------------------------------------
def test_powerlift_initial_state_and_bar(powerlift):
    env = powerlift
    obs, _ = env.reset(seed=0)
    m, d, task = env.model, env.data, env.task
    bar = m.body("powerlift_bar").id
    assert m.body_subtreemass[bar] == pytest.approx(0.05)  # the original's powerlift.xml
    # the bar is put in the noisy hands (their separation differs from the pins' by ~1 mm: the start noise)
    assert grip_residual_m(m, d, "powerlift") < 2e-3
    # Only feet on the floor; nothing interpenetrates.
    contacts = _contacts(env)
    assert contacts and all(c[0] == "floor" and "foot" in c[1] for c in contacts)
    assert min(c[2] for c in contacts) > -1e-6
    view = env.sim.view()
    z_bar = d.qpos[task.bar_qpos_adr + 2]
    assert 1.75 < z_bar < 1.9  # overhead, above the 1.6 m threshold from the start
    assert z_bar > view.head_pos[2] + 0.3
    assert view.joint("lumbar") == pytest.approx(-0.4, abs=0.03)  # N(0, 0.005²) on its driving joints
    assert float(env.task_state["max_bar_height"]) == pytest.approx(z_bar)
    assert int(env.task_state["steps"]) == 0 and float(env.task_state["bar_height_at_check"]) == -np.inf
    lay = env.obs_layout
    np.testing.assert_allclose(obs[lay["task/p_bar"]], d.qpos[task.bar_qpos_adr:task.bar_qpos_adr + 3]
                               - view.pelvis_pos, atol=1e-6)
    assert obs[lay["task/delta_p_bar"]][0] == pytest.approx(1.6 - z_bar, abs=1e-6)
    assert obs[lay["task/tilt"]][0] == pytest.approx(view.tilt, abs=1e-6)


def test_powerlift_hands_hold_the_bar(powerlift):
    env = powerlift
    env.reset(seed=0)
    task, m, d = env.task, env.model, env.data
    for _ in range(30):
        env.step(np.zeros(416, np.float32))
    assert grip_residual_m(m, d, "powerlift") < 2e-3
    held_z = d.qpos[task.bar_qpos_adr + 2]
    # Without the two holds the same bar drops (free fall: 0.44 m in 0.3 s).
    env.reset(seed=0)
    holds = [m.equality("powerlift_hold_l").id, m.equality("powerlift_hold_r").id]
    d.eq_active[holds] = 0
    try:
        for _ in range(30):
            env.step(np.zeros(416, np.float32))
        assert d.qpos[task.bar_qpos_adr + 2] < held_z - 0.25
        assert grip_residual_m(m, d, "powerlift") > 0.2
    finally:
        d.eq_active[holds] = 1
        env.reset(seed=0)


def test_powerlift_termination(powerlift):
    env = powerlift
    env.reset(seed=0)
    task, ts, lumbar = env.task, env.task_state, env.handles.joints_qpos["lumbar"]
    assert task.termination(env.sim.view(), ts, np) == {"pelvis_too_low": False, "lumbar_collapse": False}
    env.data.qpos[2] -= 0.3
    view = forward(env)
    assert view.pelvis_pos[2] < 0.7
    assert task.termination(view, ts, np) == {"pelvis_too_low": True, "lumbar_collapse": False}
    env.data.qpos[2] += 0.3 - 0.2  # pelvis ~0.75 m
    view = forward(env)
    assert 0.7 < view.pelvis_pos[2]
    assert not any(task.termination(view, ts, np).values())
    for value, collapse in ((0.55, True), (0.45, False), (-1.0, False)):
        env.data.qpos[lumbar] = value
        assert bool(task.termination(forward(env), ts, np)["lumbar_collapse"]) is collapse


def test_powerlift_rewards_on_constructed_states(powerlift):
    env = powerlift
    env.reset(seed=0)
    task, d = env.task, env.data
    a, v = task.bar_qpos_adr, task.bar_dof_adr
    lumbar = env.handles.joints_qpos["lumbar"]
    d.qpos[a + 2] = 1.65
    d.qvel[v + 2] = 0.05
    d.qpos[lumbar] = 0.2
    d.act[:] = 0.5
    view = forward(env)
    terms = task.reward_terms(view, env.task_state, np)
    assert terms["hold_stability"] == 1.0 and terms["height_threshold"] == 1.0
    assert terms["hip_hinge"] == 1.0
    assert terms["lumbar_safety"] == pytest.approx(np.exp(-15.0 * 0.6))
    assert terms["muscular_effort"] == pytest.approx(0.5)
    assert terms["efficiency"] == pytest.approx(0.25)
    u = view.head_pos - view.pelvis_pos
    assert terms["upright_alignment"] == pytest.approx(np.exp(-20.0 * (1.0 - u[2] / np.linalg.norm(u))))
    assert task.reward_weights["muscular_effort"] == 30.0  # the paper's positive sign

    d.qvel[v + 2] = -0.2  # moving: above but not held
    terms = task.reward_terms(forward(env), env.task_state, np)
    assert terms["hold_stability"] == 0.0 and terms["height_threshold"] == 1.0
    d.qpos[a + 2], d.qvel[v + 2], d.qpos[lumbar] = 1.55, 0.0, 0.05
    terms = task.reward_terms(forward(env), env.task_state, np)
    assert terms["hold_stability"] == 0.0 and terms["height_threshold"] == 0.0 and terms["hip_hinge"] == 0.0
    assert terms["lumbar_safety"] == pytest.approx(np.exp(-15.0 * 0.45))


def test_powerlift_success_history():
    task = Powerlift()
    task.bar_qpos_adr = 0
    ts = {"steps": np.int64(0), "max_bar_height": np.float64(1.82), "bar_height_at_check": np.float64(-np.inf)}
    heights = np.full(1000, 1.7)
    heights[[10, 898, 899, 900]] = (1.95, 1.62, 1.59, 1.65)  # the 900th step's bar is at 1.59 m
    for i, z in enumerate(heights):
        ts = task.advance(SimpleNamespace(q=np.array([0.0, 0.0, z])), ts, np)
        if i + 1 == 899:
            assert float(ts["bar_height_at_check"]) == -np.inf  # not checked before the 900th step
            assert not task.success(ts, 899, False, np)
    assert int(ts["steps"]) == 1000 and task.horizon == 1000 and task.success_steps == 900
    assert float(ts["max_bar_height"]) == pytest.approx(1.95)  # the paper's maximum, kept for the trace
    assert float(ts["bar_height_at_check"]) == pytest.approx(1.59)
    assert task.success_trace(ts) == {"bar_height_at_check": pytest.approx(1.59), "max_bar_height": pytest.approx(1.95)}
    assert not task.success(ts, 1000, False, np)  # above 1.6 m before and after, but not at the 900th step
    held = {**ts, "bar_height_at_check": np.float64(1.6)}
    assert task.success(held, 900, False, np)
    assert not task.success(held, 899, False, np)
    assert not task.success(held, 900, True, np)
    assert task.success(held, 950, True, np)  # terminated after reaching 900 steps
    assert task.success(held, 1000, False, np)
    assert not task.success({**held, "bar_height_at_check": np.float64(1.599)}, 1000, False, np)


# -- Squat ----------------------------------------------------------------------------------
def test_squat_reference(squat):
    task = squat.task
    top, amp = task.top_height_m, task.top_height_m - 0.55
    assert 0.93 < top < 0.96
    assert task.z_target(0.0) == pytest.approx(top)
    assert task.z_target(0.5) == pytest.approx(0.55)
    assert task.z_target(0.25) == pytest.approx(top - amp / 2)
    assert task.vz_target(0.25) == pytest.approx(-amp * np.pi / 4.0)
    assert task.vz_target(0.0) == pytest.approx(0.0)
    # v_z,target is dz_target/dt.
    eps = 1e-6
    for phase in (0.1, 0.4, 0.7):
        dz = (task.z_target(phase + eps) - task.z_target(phase - eps)) / (2 * eps) / task.period_s
        assert task.vz_target(phase) == pytest.approx(dz, rel=1e-6)
    assert task.depth_target(0.0) == pytest.approx(0.0)


@pytest.mark.parametrize("phase", [0.15, 0.3, 0.5])
def test_squat_joint_targets_match_height_target(squat, phase):
    """The hip/knee targets, posed on the floor, put the pelvis at z_target."""
    task = squat.task
    depth = float(task.depth_target(phase))
    view = squat._ctx.forward(squat._ctx.pose(squat_pose(depth)))
    assert view.pelvis_pos[2] == pytest.approx(task.z_target(phase), abs=5e-3)
    hip = 0.5 * (view.joint("hip_flexion_l") + view.joint("hip_flexion_r"))
    ts = {"phase": np.float64(phase), "went_below": np.bool_(False), "rose_after": np.bool_(False)}
    terms = task.reward_terms(view, ts, np)
    assert hip == pytest.approx(1.5 * depth)
    assert terms["hip_tracking"] == pytest.approx(1.0) and terms["knee_tracking"] == pytest.approx(1.0)
    assert terms["height_tracking"] > 0.999


def test_squat_initial_state_and_rewards(squat):
    env = squat
    obs, _ = reset_noise_free(env)  # the designed pose; the noise is tests/test_starts.py's
    task, view = env.task, env.sim.view()
    contacts = _contacts(env)
    assert contacts and all(c[0] == "floor" and "foot" in c[1] for c in contacts)
    assert min(c[2] for c in contacts) > -1e-6
    assert view.pelvis_pos[2] > 0.9  # the top of the squat is above the success threshold
    hands = np.array([view.pos("hand_l"), view.pos("hand_r")])
    assert np.all(hands[:, 2] > view.pos("chest")[2])  # barbell hold: hands up beside the head
    np.testing.assert_allclose(obs[env.obs_layout["task/phase"]], [0.0, 1.0], atol=1e-7)
    assert obs[env.obs_layout["task/z_target"]][0] == pytest.approx(task.top_height_m, abs=1e-6)
    terms = task.reward_terms(view, env.task_state, np)
    assert terms["height_tracking"] == pytest.approx(1.0)
    assert terms["hip_tracking"] == 1.0 and terms["knee_tracking"] == 1.0
    assert terms["vertical_velocity_tracking"] == pytest.approx(1.0)
    mid = np.mean([view.pos(r)[:2] for r in ("foot_l", "foot_r", "toes_l", "toes_r")], axis=0)
    assert terms["com_centered"] == pytest.approx(np.exp(-15.0 * np.sum((view.pelvis_pos[:2] - mid) ** 2)))
    assert terms["kneeling_penalty"] == 0.0

    # Hips off target by 0.3 rad, knees by 0.2, pelvis 0.1 m low, CoM rising at 0.2 m/s.
    h = env.handles.joints_qpos
    env.data.qpos[[h["hip_flexion_l"], h["hip_flexion_r"]]] = 0.3
    env.data.qpos[[h["knee_l"], h["knee_r"]]] = [0.1, 0.3]
    env.data.qpos[2] -= 0.1
    env.data.qvel[:] = 0.0
    env.data.qvel[2] = 0.2
    view = forward(env)
    terms = task.reward_terms(view, env.task_state, np)
    assert terms["hip_tracking"] == pytest.approx(np.exp(-5.0 * 0.09))
    assert terms["knee_tracking"] == pytest.approx(np.exp(-5.0 * 0.04))
    assert terms["height_tracking"] == pytest.approx(np.exp(-30.0 * (view.pelvis_pos[2] - task.top_height_m) ** 2))
    assert terms["vertical_velocity_tracking"] == pytest.approx(np.exp(-5.0 * view.com_vel[2] ** 2))
    assert view.com_vel[2] == pytest.approx(0.2, abs=1e-9)


def test_squat_termination(squat):
    env = squat
    env.reset(seed=0)
    task, ts = env.task, env.task_state
    assert task.termination(env.sim.view(), ts, np) == {"pelvis_too_low": False, "kneeling": False}
    # Kneeling: knees below 0.25 m while the pelvis is still high.
    env.data.qpos[2] -= 0.25
    view = forward(env)
    assert min(view.knee_heights) < 0.25 and view.pelvis_pos[2] > 0.35
    assert task.termination(view, ts, np) == {"pelvis_too_low": False, "kneeling": True}
    assert task.reward_terms(view, ts, np)["kneeling_penalty"] == 1.0
    env.data.qpos[2] += 0.25 - 0.19  # knees ~0.27 m
    view = forward(env)
    assert min(view.knee_heights) > 0.25
    assert not any(task.termination(view, ts, np).values())
    # Pelvis low with the legs raised (hips flexed 2 rad, knees straight): knees stay high.
    qpos = env._ctx.pose({"hip_flexion_l": 2.0, "hip_flexion_r": 2.0}, on_ground=False)
    env.data.qpos[:] = qpos
    view = forward(env)
    env.data.qpos[2] += 0.30 - view.pelvis_pos[2]
    view = forward(env)
    assert view.pelvis_pos[2] == pytest.approx(0.30) and min(view.knee_heights) > 0.25
    assert task.termination(view, ts, np) == {"pelvis_too_low": True, "kneeling": False}


def test_squat_success_state_machine():
    task = Squat()
    ts = {"phase": np.float64(0.0), "went_below": np.bool_(False), "rose_after": np.bool_(False)}

    def run(ts, heights):
        for z in heights:
            ts = task.advance(SimpleNamespace(pelvis_pos=np.array([0.0, 0.0, z])), ts, np)
        return ts

    ts = run(ts, [0.95, 0.80, 0.91, 0.76])  # above 0.90 before ever going below 0.75 does not count
    assert not bool(ts["went_below"]) and not task.success(ts, 4, False, np)
    ts = run(ts, [0.749])
    assert bool(ts["went_below"]) and not task.success(ts, 5, False, np)
    ts = run(ts, [0.85, 0.90])  # 0.90 is not above 0.90
    assert not task.success(ts, 7, False, np)
    ts = run(ts, [0.901])
    assert task.success(ts, 8, False, np) and task.success(ts, 8, True, np)
    ts = run(ts, [0.5, 0.6])  # latched
    assert task.success(ts, 10, False, np)
    assert task.success_trace(ts) == {"went_below": True, "rose_after": True}
    assert float(ts["phase"]) == pytest.approx(10 * 0.01 / 4.0)


def test_squat_phase_wraps_and_options(squat):
    task = squat.task
    ts = {"phase": np.float64(0.999), "went_below": np.bool_(False), "rose_after": np.bool_(False)}
    ts = task.advance(squat.sim.view(), ts, np)
    assert float(ts["phase"]) == pytest.approx(0.999 + 0.0025 - 1.0)
    with pytest.raises(ValueError, match="period_s"):
        Squat(period_s=0.0)
    bad = Squat(bottom_height_m=0.3)
    with pytest.raises(ValueError, match="bottom_height_m"):
        bad.bind(squat._ctx)


# -- ChinUp ---------------------------------------------------------------------------------
def test_chinup_initial_hang(chinup):
    env = chinup
    env.reset(seed=1)  # with the per-episode joint noise the hands are a little off the bar
    assert grip_residual_m(env.model, env.data, "chinup") < 0.02
    obs, _ = reset_noise_free(env)  # the designed hang
    m, d, view = env.model, env.data, env.sim.view()
    assert grip_residual_m(m, d, "chinup") < 1e-3
    assert d.ncon == 0  # feet clear of the floor, the bar is visual only
    feet = [view.pos(r)[2] for r in ("foot_l", "foot_r", "toes_l", "toes_r")]
    assert min(feet) > 0.2
    hands = np.array([view.pos("hand_l"), view.pos("hand_r")])
    np.testing.assert_allclose(hands[:, 2], 2.3, atol=1e-3)
    assert view.head_pos[2] < 2.3 - 0.3
    assert obs[env.obs_layout["task/delta_z_chin"]][0] == pytest.approx(2.3 - view.head_pos[2], abs=1e-6)
    assert obs[env.obs_layout["task/phase"]][0] == 0.0
    assert view.joint("hip_flexion_l") == 0.0
    assert d.qpos[m.joint("shoulder_elv_l").qposadr[0]] == pytest.approx(2.8)


def test_chinup_hands_hold_the_bar(chinup):
    env = chinup
    env.reset(seed=0)
    m, d = env.model, env.data
    z0 = env.sim.view().pelvis_pos[2]
    for _ in range(50):
        _, _, terminated, _, _ = env.step(np.zeros(416, np.float32))
        assert not terminated
    assert grip_residual_m(m, d, "chinup") < 2e-3
    assert abs(env.sim.view().pelvis_pos[2] - z0) < 0.05
    env.reset(seed=0)
    holds = [m.equality("chinup_hold_l").id, m.equality("chinup_hold_r").id]
    d.eq_active[holds] = 0
    try:
        for _ in range(20):
            env.step(np.zeros(416, np.float32))
        assert env.sim.view().pelvis_pos[2] < z0 - 0.15  # let go: falls
    finally:
        d.eq_active[holds] = 1
        env.reset(seed=0)


def test_chinup_termination(chinup):
    env = chinup
    env.reset(seed=0)
    task, ts = env.task, env.task_state
    assert task.termination(env.sim.view(), ts, np) == {"fell_off_bar": False}
    z = env.sim.view().pelvis_pos[2]
    env.data.qpos[2] -= z - 0.49
    assert task.termination(forward(env), ts, np) == {"fell_off_bar": True}
    env.data.qpos[2] += 0.02
    assert task.termination(forward(env), ts, np) == {"fell_off_bar": False}


def test_chinup_rewards_on_constructed_states(chinup):
    env = chinup
    env.reset(seed=0)
    task, d, m = env.task, env.data, env.model
    names = [env.handles.muscle_names[i] for i in task.pull_idx]
    assert sorted(names) == sorted(["LAT1", "LAT2", "LAT3", "BIClong", "BICshort", "LAT1_left", "LAT2_left",
                                    "LAT3_left", "BIClong_left", "BICshort_left"])
    view = env.sim.view()
    d.qpos[2] += 2.3 - 0.2 - view.head_pos[2]  # head 0.2 m below the bar
    legs = [m.joint(f"{j}_{s}").dofadr[0] for j in ("hip_flexion", "hip_adduction", "hip_rotation",
                                                     "knee_angle", "ankle_angle") for s in "lr"]
    d.qvel[:] = 0.0
    d.qvel[legs[0]], d.qvel[legs[5]] = 3.0, 4.0
    d.qvel[m.joint("subtalar_angle_l").dofadr[0]] = 10.0  # not a leg dof of the penalty
    d.act[:] = 0.0
    d.act[env.handles.muscle_act_adr[task.pull_idx]] = 0.8
    view = forward(env)
    terms = task.reward_terms(view, env.task_state, np)
    assert terms["spatial_gradient"] == pytest.approx(np.exp(-1.0))
    assert terms["anti_kipping"] == pytest.approx(5.0)
    ids = [m.actuator(n).id for n in names]
    f0 = env.handles.muscle_force_nominal[[list(env.handles.muscle_names).index(n) for n in names]]
    expected = np.mean(-d.actuator_force[ids] / f0)
    assert expected > 0.3  # active pulling muscles
    assert terms["muscle_force_filter"] == pytest.approx(expected)
    d.qpos[2] += 0.3  # head above the bar: the gradient saturates
    assert task.reward_terms(forward(env), env.task_state, np)["spatial_gradient"] == 1.0


def test_chinup_explosive_accel_and_success_counter():
    task = ChinUp()  # unbound: 10 ms control step

    def view(z_head, vz):
        return SimpleNamespace(head_pos=np.array([0.0, 0.0, z_head]),
                               vel=lambda role: np.array([0.0, 0.0, vz]))

    ts = {"prev_pelvis_vz": np.float64(0.0), "pelvis_az": np.float64(0.0),
          "above_steps": np.int64(0), "held_above": np.bool_(False)}
    ts = task.advance(view(2.0, 0.05), ts, np)
    assert float(ts["pelvis_az"]) == pytest.approx(5.0)
    fake = SimpleNamespace(head_pos=np.zeros(3), muscle_force=np.zeros(416), qdot=np.zeros(200),
                           activation=np.zeros(416))
    task.pull_idx, task.leg_dof = np.arange(3), np.arange(3)
    assert task.reward_terms(fake, ts, np)["explosive_accel"] == pytest.approx(5.0)
    ts = task.advance(view(2.0, 0.02), ts, np)
    assert float(ts["pelvis_az"]) == pytest.approx(-3.0)
    assert task.reward_terms(fake, ts, np)["explosive_accel"] == 0.0

    top = 2.3 + 0.1
    for _ in range(24):
        ts = task.advance(view(top + 0.01, 0.0), ts, np)
    assert int(ts["above_steps"]) == 24 and not task.success(ts, 30, False, np)
    ts = task.advance(view(top, 0.0), ts, np)  # exactly 0.1 m above is not "more than"
    assert int(ts["above_steps"]) == 0 and not task.success(ts, 30, False, np)
    for _ in range(25):
        ts = task.advance(view(top + 0.01, 0.0), ts, np)
    assert task.success(ts, 60, False, np)
    ts = task.advance(view(1.9, 0.0), ts, np)
    assert int(ts["above_steps"]) == 0 and task.success(ts, 61, False, np)  # latched
    assert task.success_trace(ts) == {"above_steps": 0, "held_above": True}


def test_the_hand_anchor_is_read_from_the_spec_as_the_compiled_model_places_it():
    """add_grip reads the hand's offset from the scene's MjSpec (no compilation of the body): the
    same lunate-frame point the compiled model's welded chain gives."""
    import mujoco

    from mskbench.body.myofullbody import build_model, load_spec
    from mskbench.tasks.grip import HAND_BODIES, hand_anchor

    spec, model = load_spec(), build_model()
    for hand in HAND_BODIES:
        name, pos = hand_anchor(spec, hand)
        b = model.body(hand).id
        weld, expected = int(model.body_weldid[b]), np.zeros(3)
        while b != weld:
            rotated = np.zeros(3)
            mujoco.mju_rotVecQuat(rotated, expected, model.body_quat[b])
            expected, b = model.body_pos[b] + rotated, int(model.body_parentid[b])
        assert name == model.body(weld).name == f"lunate_{hand[-1]}"
        np.testing.assert_allclose(pos, expected, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="no body 'thirdmc_x'"):
        hand_anchor(spec, "thirdmc_x")


# -- timing, native solved signals, the original's scenes ---------------------------------------
@pytest.mark.parametrize("task, dt, horizon, seconds", [
    ("Powerlift", 0.02, 1000, 20.0),  # powerlift.xml 2 ms x 10; registry 1000 steps
    ("ChinUp", 0.02, 500, 10.0),      # chin_up.xml 2 ms x 10; registry 500 steps
    ("Reach", 0.02, 500, 10.0),       # reach.xml 2 ms x 10; registry 500 steps
    ("Squat", 0.01, 1000, 10.0),      # squat.xml 1 ms x 10; registry 1000 steps
])
def test_control_step_and_horizon_in_seconds(shared_envs, task, dt, horizon, seconds):
    env = shared_envs(task)
    assert env.control_dt_s == pytest.approx(dt)
    assert env.model.opt.timestep == pytest.approx(dt / 10)
    assert env.task.horizon == horizon
    assert env.control_dt_s * env.task.horizon == pytest.approx(seconds)


def test_powerlift_native_solved_on_constructed_states(powerlift):
    env = powerlift
    env.reset(seed=0)
    task, d = env.task, env.data
    assert task.native_solved is not None and "@" in task.native_solved
    a, v = task.bar_qpos_adr, task.bar_dof_adr
    ts = env.task_state

    def solved(z, vz, wz=0.0):
        d.qpos[a + 2], d.qvel[:] = z, 0.0
        d.qvel[v + 2], d.qvel[v + 5] = vz, wz
        return bool(task.solved_native(forward(env), ts, 10, np))

    assert solved(1.65, 0.05)
    assert solved(1.65, -0.09, wz=3.0)  # the bar's spin about z does not matter (the original's cvel[2] bug)
    assert not solved(1.65, 0.11)  # just too fast
    assert not solved(1.65, -0.11)
    assert not solved(1.595, 0.0)  # just too low
    env.reset(seed=0)


def test_powerlift_start_meets_the_native_signal_at_rest(powerlift):
    """The bar starts overhead above 1.6 m and at rest (as in the original): the native signal holds at reset."""
    env = powerlift
    env.reset(seed=0)
    assert bool(env.task.solved_native(env.sim.view(), env.task_state, 0, np))


def test_reach_native_solved_and_curriculum(reach_env):
    task = reach_env.task
    assert task.native_solved is not None and "@" in task.native_solved
    reach_env.reset(seed=0)
    view = reach_env.sim.view()
    ts = {**reach_env.task_state, "touches": np.int64(5)}
    assert not bool(task.solved_native(view, ts, 10, np))  # touch_count > 5 not yet
    hand = np.array(view.pos("hand_r"))
    ts["targets"] = ts["targets"].copy()
    ts["target_idx"] = np.int64(5)
    ts["targets"][5] = hand + np.array([0.0, 0.0, 0.14])  # the sixth touch
    ts = task.advance(view, ts, np)
    assert int(ts["touches"]) == 6 and bool(task.solved_native(view, ts, 11, np))
    ts["targets"] = ts["targets"].copy()
    ts["targets"][6] = hand + np.array([0.0, 0.0, 0.16])  # just outside: still 6, still solved
    ts = task.advance(view, ts, np)
    assert int(ts["touches"]) == 6 and bool(task.solved_native(view, ts, 12, np))


def test_reach_targets_follow_the_original_curriculum(reach_env):
    task = reach_env.task
    low, high = task.target_boxes()
    np.testing.assert_allclose(low[0], [0.3, -0.6, 1.2])
    np.testing.assert_allclose(high[0], [0.8, 0.6, 1.7])
    np.testing.assert_allclose(low[2], [0.3, -0.6, 0.9])
    np.testing.assert_allclose(high[2], [1.0, 0.6, 1.7])
    for k in (5, 6, 31):  # level min(k, 5)
        np.testing.assert_allclose(low[k], [0.3, -0.6, 0.6])
        np.testing.assert_allclose(high[k], [1.3, 0.6, 1.7])
    pelvis = None
    for seed in range(4):
        reach_env.reset(seed=seed)
        pelvis = reach_env.sim.view().pelvis_pos
        rel = reach_env.task_state["targets"] - np.array([pelvis[0], pelvis[1], 0.0])
        assert np.all(rel >= low - 1e-12) and np.all(rel <= high + 1e-12)
        assert np.all(np.linalg.norm(reach_env.task_state["targets"] - pelvis, axis=1) >= 0.4)


def test_reach_keeps_a_target_until_touched_unless_asked(reach_env):
    task = reach_env.task
    assert task.retarget_on_timeout is False and task.window_steps == 100  # 2 s of 20 ms steps
    reach_env.reset(seed=0)
    view = reach_env.sim.view()
    ts = {**reach_env.task_state, "targets": reach_env.task_state["targets"].copy()}
    ts["targets"][:] = np.array(view.pos("hand_r")) + np.array([3.0, 0.0, 0.0])
    for _ in range(task.window_steps + 5):
        ts = task.advance(view, ts, np)
    assert int(ts["target_idx"]) == 0 and int(ts["steps_on_target"]) == task.window_steps + 5
    np.testing.assert_allclose(task.observation(view, ts, np)["phase"],
                               [np.sin(2 * np.pi * 5 / 100), np.cos(2 * np.pi * 5 / 100)], atol=1e-12)


def test_squat_and_chinup_have_no_native_signal(squat, chinup):
    for env in (squat, chinup):
        env.reset(seed=0)
        assert env.task.native_solved is None
        assert not bool(env.task.solved_native(env.sim.view(), env.task_state, 0, np))


def test_squat_weights_and_barbell_follow_the_original(squat):
    task, m = squat.task, squat.model
    assert task.reward_weights["knee_tracking"] == 300.0 and task.reward_weights["hip_tracking"] == 200.0
    names = ("squat_barbell_shaft", "squat_barbell_plate_l", "squat_barbell_plate_r")
    root = {int(m.geom_bodyid[m.geom(n).id]) for n in names}
    assert root == {m.body("Full Body").id}
    assert m.body_mass[m.body("Full Body").id] == pytest.approx(2.0)  # the root body is otherwise massless
    squat.reset(seed=0)
    view, d = squat.sim.view(), squat.data
    shaft = d.geom_xpos[m.geom("squat_barbell_shaft").id]
    np.testing.assert_allclose(shaft, view.pos("root") + np.array([-0.05, 0.0, 0.45]), atol=1e-6)
    assert d.geom_xpos[m.geom("squat_barbell_plate_l").id][1] == pytest.approx(0.7, abs=1e-6)
    assert task.z_target(0.5) == pytest.approx(0.55)


def test_powerlift_load_option():
    env = MSKEnv(Powerlift(bar_mass_kg=10.0))
    try:
        assert env.model.body_subtreemass[env.model.body("powerlift_bar").id] == pytest.approx(10.0)
    finally:
        env.close()
    with pytest.raises(ValueError, match="bar_mass_kg"):
        Powerlift(bar_mass_kg=0.0)


def test_reach_retarget_option_keeps_the_old_window():
    task = Reach(retarget_on_timeout=True)
    task.control_dt_s = 0.02
    assert task.window_steps == 100

"""The embodiments behind one Body description: MyoFullBody's model facts, couplings, ground
placement, facing and handles; the mouse forelimb's handles through the same description."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from mskbench.body import MOUSE_FORELIMB, MYOFULLBODY, Body
from mskbench.body.base import BodyHandles, JointCouplings, default_qpos, place_on_ground, set_pose
from mskbench.body.myofullbody import BODY_NAMES, JOINT_NAMES, N_MUSCLES, TOUCH_SENSORS, build_model, yaw_quat
from mskbench.envs import MSKEnv


@pytest.fixture
def model(stand_env):
    return stand_env.model


@pytest.fixture
def handles(stand_env):
    return stand_env.handles


def _floor_distance(model, data, handles):
    """Smallest signed distance between the floor and any body geom that can touch it."""
    floor = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, "floor")
    assert floor >= 0
    mujoco.mj_kinematics(model, data)
    tree = set(handles.body_tree.tolist())
    fromto = np.zeros(6)
    dists = []
    for g in range(model.ngeom):
        if model.geom_bodyid[g] not in tree:
            continue
        if not (model.geom_contype[g] & model.geom_conaffinity[floor]
                or model.geom_conaffinity[g] & model.geom_contype[floor]):
            continue
        dists.append(mujoco.mj_geomDistance(model, data, floor, g, 10.0, fromto))
    assert dists, "no body geom can collide with the floor"
    return min(dists)


# -- model facts ---------------------------------------------------------------------
def test_model_sizes(model):
    assert model.nu == N_MUSCLES == 416
    assert model.nq == 129
    assert model.nv == 128
    assert model.opt.timestep == pytest.approx(0.001, abs=1e-12)
    assert model.na == 416  # first-order activation dynamics on every muscle


def test_all_actuators_are_muscles(model, handles):
    gains = model.actuator_gaintype
    assert np.all(gains == int(mujoco.mjtGain.mjGAIN_MUSCLE))
    np.testing.assert_array_equal(handles.muscle_ids, np.arange(416))
    assert len(set(handles.muscle_names)) == 416


def test_root_is_free_joint(model):
    jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, "root")
    assert jid >= 0
    assert model.jnt_type[jid] == mujoco.mjtJoint.mjJNT_FREE
    assert model.jnt_qposadr[jid] == 0 and model.jnt_dofadr[jid] == 0


def test_joint_equality_couplings(model, handles):
    joint_eqs = [i for i in range(model.neq) if model.eq_type[i] == mujoco.mjtEq.mjEQ_JOINT]
    assert len(joint_eqs) == 51
    assert len(handles.couplings.dep) == 51
    assert handles.couplings.coef.shape == (51, 5)


def test_unactuated_tendons(model):
    assert model.ntendon == 424
    tendon_act = model.actuator_trntype == mujoco.mjtTrn.mjTRN_TENDON
    assert tendon_act.all()  # every muscle pulls on a tendon
    actuated = set(model.actuator_trnid[tendon_act, 0].tolist())
    assert len(actuated) == 416
    unactuated = [t for t in range(model.ntendon) if t not in actuated]
    assert len(unactuated) == 8


def test_touch_sensors(model, handles):
    assert len(handles.touch_adr) == len(TOUCH_SENSORS) == 4
    for name, adr in zip(TOUCH_SENSORS, handles.touch_adr):
        sid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, name)
        assert sid >= 0 and model.sensor_type[sid] == mujoco.mjtSensor.mjSENS_TOUCH
        assert model.sensor_adr[sid] == adr


def test_build_model_rejects_tiny_arena():
    with pytest.raises(ValueError, match="memory_bytes"):
        build_model(memory_bytes=1000)


# -- couplings -----------------------------------------------------------------------
def test_default_pose_satisfies_couplings_but_qpos0_does_not(model, handles):
    res0 = handles.couplings.residual(model.qpos0)
    assert np.abs(res0).max() > 0.01  # shipped knee couplings are off by ~5 cm / 0.05 rad
    q = default_qpos(model, handles)
    np.testing.assert_allclose(handles.couplings.residual(q), 0.0, atol=1e-12)
    # Only dependent joints were changed.
    changed = np.flatnonzero(q != model.qpos0)
    assert set(changed.tolist()) <= set(handles.couplings.dep.tolist())
    assert changed.size > 0


def test_couplings_ordered_drivers_first(handles):
    c = handles.couplings
    for k, drv in enumerate(c.drv):
        if drv >= 0:
            # The driver is never set by a later row.
            assert drv not in c.dep[k:].tolist()


def test_from_model_is_reproducible(model, handles):
    again = JointCouplings.from_model(model)
    np.testing.assert_array_equal(again.dep, handles.couplings.dep)
    np.testing.assert_array_equal(again.coef, handles.couplings.coef)


def test_set_pose_resolves_couplings_after_knee_change(model, handles):
    knee = handles.joints_qpos["knee_r"]
    driven = handles.couplings.dep[handles.couplings.drv == knee]
    assert driven.size > 0

    q = default_qpos(model, handles)
    q[knee] = 0.8
    assert np.abs(handles.couplings.residual(q)).max() > 1e-3
    before = q.copy()
    qvel = np.zeros(model.nv)
    knee_dof = handles.qvel_of_qpos[knee]
    qvel[knee_dof] = 1.0
    set_pose(model, handles, q, qvel)
    np.testing.assert_allclose(handles.couplings.residual(q), 0.0, atol=1e-12)
    assert q[knee] == 0.8  # the driver is kept
    assert np.any(q[driven] != before[driven])
    # Untouched: everything that is not a dependent joint.
    others = np.setdiff1d(np.arange(model.nq), handles.couplings.dep)
    np.testing.assert_array_equal(q[others], before[others])

    # Dependent velocities follow the chain rule: compare with a finite difference.
    eps = 1e-6
    qp, qm = q.copy(), q.copy()
    qp[knee] += eps
    qm[knee] -= eps
    set_pose(model, handles, qp)
    set_pose(model, handles, qm)
    fd = (qp - qm) / (2 * eps)
    for d in driven:
        assert qvel[handles.qvel_of_qpos[d]] == pytest.approx(fd[d], abs=1e-6)


# -- ground placement ------------------------------------------------------------------
@pytest.mark.parametrize("dz", [0.3, 0.0, -0.1])
def test_place_on_ground_touches_floor(model, handles, dz):
    data = mujoco.MjData(model)
    data.qpos[:] = default_qpos(model, handles)
    data.qpos[2] += dz
    z_before = data.qpos[2]
    shift = place_on_ground(model, data, handles)
    assert data.qpos[2] == pytest.approx(z_before + shift, abs=1e-12)
    assert _floor_distance(model, data, handles) == pytest.approx(0.0, abs=1e-6)
    if dz > 0:
        assert shift < -dz + 0.1  # lowered at least the extra lift (the shipped pose floats ~5 cm)
    if dz < 0:
        assert shift > 0  # penetrating pose is raised


def test_place_on_ground_clearance(model, handles):
    data = mujoco.MjData(model)
    data.qpos[:] = default_qpos(model, handles)
    place_on_ground(model, data, handles, clearance_m=0.02)
    assert _floor_distance(model, data, handles) == pytest.approx(0.02, abs=1e-6)


def test_place_on_ground_unknown_floor(model, handles):
    data = mujoco.MjData(model)
    with pytest.raises(ValueError, match="no geom named"):
        place_on_ground(model, data, handles, floor_geom="not_a_floor")


# -- facing -------------------------------------------------------------------------
def test_body_faces_plus_x():
    # The nominal start: Stand's per-episode noise (root quaternion and joints, sigma 0.005) turns the
    # pelvis by up to a few hundredths of a radian, which is the start distribution, not the body's facing.
    env = MSKEnv("Stand", task_kwargs={"init_noise": 0.0})
    env.reset(seed=0)
    view = env.sim.view()
    np.testing.assert_allclose(view.u_fwd, [1.0, 0.0, 0.0], atol=1e-2)
    assert abs(view.yaw) < 1e-2
    np.testing.assert_allclose(view.u_chest, [1.0, 0.0, 0.0], atol=0.2)
    assert view.pos("foot_l")[1] > view.pos("foot_r")[1] + 0.1  # left is +y
    assert view.pos("hand_l")[1] > view.pos("hand_r")[1]
    assert view.head_pos[2] > view.pelvis_pos[2] > view.knee_heights.max() > view.foot_heights.max()
    assert view.tilt == pytest.approx(0.0, abs=1e-9)
    env.close()


def test_yaw_quat():
    np.testing.assert_allclose(yaw_quat(np.pi / 2), [np.sqrt(0.5), 0, 0, np.sqrt(0.5)], atol=1e-15)
    np.testing.assert_allclose(yaw_quat(0.0), [1, 0, 0, 0])


# -- handles ------------------------------------------------------------------------
def test_handles_resolve_named_bodies_and_joints(model, handles):
    assert set(handles.bodies) == set(BODY_NAMES)
    for role, name in BODY_NAMES.items():
        assert model.body(handles.bodies[role]).name == name
    for role, name in JOINT_NAMES.items():
        jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, name)
        assert handles.joints_qpos[role] == model.jnt_qposadr[jid]
    assert handles.nq == 129 and handles.nv == 128 and handles.nu == 416
    assert len(handles.joint_qpos) == len(handles.joint_dof) == 122
    assert 0 not in handles.joint_qpos.tolist()  # root excluded
    assert handles.total_mass == pytest.approx(model.body_mass[handles.body_tree].sum())
    assert handles.total_mass > 40.0
    np.testing.assert_array_equal(handles.muscle_force_nominal, model.actuator_gainprm[:, 2])


def test_body_tree_excludes_props(reach_env):
    model, h = reach_env.model, reach_env.handles
    target = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, "reach_target")
    assert target >= 0
    assert target not in h.body_tree.tolist()
    assert 0 not in h.body_tree.tolist()
    assert h.bodies["root"] in h.body_tree.tolist()
    assert len(h.body_tree) == model.nbody - 2  # world and the target marker


def test_handles_reject_wrong_model():
    spec = mujoco.MjSpec()
    spec.worldbody.add_body(name="x").add_geom(size=[0.1, 0, 0])
    with pytest.raises(ValueError, match="Full Body"):
        BodyHandles.from_model(spec.compile(), MYOFULLBODY)


def _props_with_joints(spec: mujoco.MjSpec) -> None:
    door = spec.worldbody.add_body(name="door", pos=[2.0, 0.0, 1.0])
    door.add_joint(name="door_hinge", type=mujoco.mjtJoint.mjJNT_HINGE, axis=[0, 0, 1])
    door.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.02, 0.4, 1.0])
    cube = spec.worldbody.add_body(name="cube", pos=[1.0, 0.0, 1.0])
    cube.add_freejoint(name="cube_free")
    cube.add_geom(type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.1, 0.1, 0.1])


def test_props_with_joints_stay_out_of_the_humanoid(handles):
    """A door hinge and a free cube add coordinates after the humanoid's, not to its joints."""
    model = build_model(_props_with_joints)
    h = MYOFULLBODY.handles(model)
    assert (model.nq, model.nv) == (129 + 1 + 7, 128 + 1 + 6)
    assert (h.nq_body, h.nv_body) == (129, 128)
    np.testing.assert_array_equal(h.joint_qpos, handles.joint_qpos)
    np.testing.assert_array_equal(h.joint_dof, handles.joint_dof)
    np.testing.assert_array_equal(h.body_tree, handles.body_tree)
    assert h.total_mass == pytest.approx(handles.total_mass)



def test_the_mouse_forelimb_through_the_same_description():
    """A body welded to the world: its four hinges are its joints, nine muscles, no touch sensors."""
    model = MOUSE_FORELIMB.build_model()
    h = MOUSE_FORELIMB.handles(model)
    assert (h.nq_body, h.nv_body, h.nu) == (4, 4, 9) and not h.free_root
    np.testing.assert_array_equal(h.joint_qpos, np.arange(4))
    assert h.muscle_names[0] == "Pec_C" and h.touch_names == () and h.touch_adr.size == 0
    assert model.opt.timestep == pytest.approx(0.00125)
    assert h.total_mass == pytest.approx(float(model.body_mass.sum()))
    data = mujoco.MjData(model)
    with pytest.raises(ValueError, match="welded"):
        place_on_ground(model, data, h)
    with pytest.raises(ValueError, match="timestep_s"):
        MOUSE_FORELIMB.build_model(timestep_s=-1.0)


def test_a_body_rejects_unknown_observation_blocks():
    with pytest.raises(ValueError, match="unknown observation blocks"):
        Body("x", MYOFULLBODY.load_spec, 0.001, 1, 416, "Full Body", observation=("qpos", "joint_angles"))
    with pytest.raises(ValueError, match="order"):
        Body("x", MYOFULLBODY.load_spec, 0.001, 1, 416, "Full Body", observation=("qvel", "qpos"))

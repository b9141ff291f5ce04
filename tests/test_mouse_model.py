"""Mouse forelimb model: structure, muscles, and agreement with the authors' model and clips.

The reference MJCF (``shared/reference/mouse_arm``) and the 46 registered clips
(``shared/data/mouse_reach``) are used only as test oracles; tests that need
them are skipped when ``shared/`` is absent.
"""

from __future__ import annotations

from pathlib import Path

import mujoco
import numpy as np
import pytest

from mskbench.body.mouse_forelimb import (
    DEFAULT_TIMESTEP_S,
    JOINT_NAMES,
    KEYPOINT_BODIES,
    KEYPOINT_NAMES,
    MUSCLE_NAMES,
    WRIST_POS_IN_ULNA,
    MouseHandles,
    build_mouse_model,
    forward_keypoints,
    keypoint_trajectory,
    set_keypoint_sites,
    tendon_length_ranges,
)

SHARED = Path(__file__).resolve().parents[2] / "shared"
REFERENCE_XML = SHARED / "reference" / "mouse_arm" / "mouse_arm.xml"
CLIP_DIR = SHARED / "data" / "mouse_reach"

# Joint ranges of the reference model, degrees (facts).
EXPECTED_RANGES_DEG = {
    "sh_elv": (-70, 0),
    "sh_extension": (-70, 40),
    "sh_rotation": (-25, 89),
    "elbow_joint": (-80, 90),
}
# Bodies whose pose must match the reference exactly (wrist_body deliberately differs).
SHARED_BODIES = ("ground", "clavicle", "scapula", "humerus", "ulna", "radius")


def _needs(path: Path) -> None:
    if not path.exists():
        pytest.skip(f"{path} not available (shared reference data absent)")


@pytest.fixture(scope="module")
def model() -> mujoco.MjModel:
    return build_mouse_model()


@pytest.fixture(scope="module")
def handles(model) -> MouseHandles:
    return MouseHandles.from_model(model)


@pytest.fixture(scope="module")
def reference_model() -> mujoco.MjModel:
    _needs(REFERENCE_XML)
    return mujoco.MjModel.from_xml_path(str(REFERENCE_XML))


@pytest.fixture(scope="module")
def h5_files() -> list[Path]:
    _needs(CLIP_DIR)
    pytest.importorskip("h5py")
    files = sorted(CLIP_DIR.glob("*_ik.h5"))
    if not files:
        pytest.skip(f"no *_ik.h5 clips in {CLIP_DIR}")
    return files


@pytest.fixture(scope="module")
def raw_clips(h5_files) -> list[dict]:
    """The fields of every Track-MJX file, read directly with h5py (independent of our loader)."""
    import h5py

    out = []
    for path in h5_files:
        with h5py.File(path, "r") as f:
            out.append({
                "name": path.stem,
                "qpos": f["qpos"][()].astype(float),
                "xpos": f["xpos"][()].astype(float),
                "xquat": f["xquat"][()].astype(float),
                "kp": f["kp_data"][()].astype(float).reshape(-1, 3, 3),
                "markers": f["marker_sites"][()].astype(float),
                "offsets": f["offsets"][()].astype(float),
                "names_xpos": [n.decode() for n in f["names_xpos"][()]],
            })
    return out


def _random_qpos(handles: MouseHandles, n: int, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    return rng.uniform(handles.joint_range[:, 0], handles.joint_range[:, 1], size=(n, len(JOINT_NAMES)))


# ---------------------------------------------------------------------------
# Structure
# ---------------------------------------------------------------------------


def test_joints_are_four_named_hinges_with_reference_ranges(model, handles):
    assert model.njnt == 4 and model.nq == 4 and model.nv == 4
    assert tuple(model.joint(i).name for i in range(model.njnt)) == JOINT_NAMES
    assert np.all(model.jnt_type == mujoco.mjtJoint.mjJNT_HINGE)
    assert np.all(model.jnt_limited)
    for name, (lo, hi) in EXPECTED_RANGES_DEG.items():
        np.testing.assert_allclose(model.joint(name).range, np.radians([lo, hi]), atol=1e-12)
    np.testing.assert_array_equal(handles.qpos_adr, [0, 1, 2, 3])
    assert model.body(model.jnt_bodyid[model.joint("elbow_joint").id]).name == "ulna"
    for name in ("sh_elv", "sh_extension", "sh_rotation"):
        assert model.body(model.jnt_bodyid[model.joint(name).id]).name == "humerus"


def test_bodies_sites_and_options(model, handles):
    for body in ("clavicle", "scapula", "humerus", "ulna", "radius", "wrist_body"):
        assert mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, body) >= 0
    assert tuple(model.body(i).name for i in handles.keypoint_body_ids) == tuple(
        KEYPOINT_BODIES[k] for k in KEYPOINT_NAMES
    )
    # One rendering site per keypoint, on its body.
    np.testing.assert_array_equal(model.site_bodyid[handles.keypoint_site_ids], handles.keypoint_body_ids)
    # Visual geometry never collides and carries no mass; no meshes.
    assert model.ngeom > 0 and model.nmesh == 0
    assert np.all(model.geom_contype == 0) and np.all(model.geom_conaffinity == 0)
    assert model.opt.timestep == DEFAULT_TIMESTEP_S == 0.00125
    assert model.opt.integrator == mujoco.mjtIntegrator.mjINT_RK4
    np.testing.assert_allclose(model.body("humerus").mass, 0.0001258)
    np.testing.assert_allclose(model.body("wrist_body").mass, 0.00071)
    assert build_mouse_model(timestep=0.001).opt.timestep == 0.001
    with pytest.raises(ValueError, match="timestep"):
        build_mouse_model(timestep=0.0)


def test_add_props_hook(handles):
    def add_target(spec: mujoco.MjSpec) -> None:
        spec.body("ground").add_site(name="target", pos=[0.007, 0.01, -0.006], size=[0.001, 0, 0])

    m = build_mouse_model(add_props=add_target)
    assert mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_SITE, "target") >= 0
    h = MouseHandles.from_model(m)
    np.testing.assert_array_equal(h.qpos_adr, handles.qpos_adr)


def test_nine_muscles_on_spatial_tendons(model, handles):
    assert model.nu == 9 and model.ntendon == 9
    assert tuple(model.actuator(i).name for i in handles.muscle_ids) == MUSCLE_NAMES
    assert np.all(model.actuator_dyntype == mujoco.mjtDyn.mjDYN_MUSCLE)
    assert np.all(model.actuator_gaintype == mujoco.mjtGain.mjGAIN_MUSCLE)
    assert np.all(model.actuator_biastype == mujoco.mjtBias.mjBIAS_MUSCLE)
    assert np.all(model.actuator_trntype == mujoco.mjtTrn.mjTRN_TENDON)
    assert np.all(model.actuator_ctrllimited)
    np.testing.assert_array_equal(model.actuator_ctrlrange, np.tile([0.0, 1.0], (9, 1)))
    np.testing.assert_array_equal(model.actuator_trnid[handles.muscle_ids, 0], handles.tendon_ids)
    forces = dict(zip(MUSCLE_NAMES, model.actuator_gainprm[handles.muscle_ids, 2]))
    assert forces["AD"] == pytest.approx(1.2) and forces["Biceps_Long"] == pytest.approx(0.52)
    np.testing.assert_allclose(model.actuator_gainprm[:, 6], 15.0)  # vmax


def test_tendon_lengths_positive_and_length_ranges_cover_joint_box(model, handles):
    data = mujoco.MjData(model)
    qs = _random_qpos(handles, 3000, seed=1)
    corners = np.array(np.meshgrid(*handles.joint_range, indexing="ij")).reshape(4, -1).T
    lengths = []
    for q in np.vstack([qs, corners]):
        data.qpos[handles.qpos_adr] = q
        mujoco.mj_fwdPosition(model, data)
        lengths.append(data.ten_length[handles.tendon_ids].copy())
    lengths = np.array(lengths)
    assert np.all(lengths > 0)
    lr = model.actuator_lengthrange[handles.muscle_ids]
    assert np.all(lr[:, 0] > 0) and np.all(lr[:, 1] > lr[:, 0])
    # Every sampled length lies inside the range, and the sampled extremes nearly reach it.
    assert np.all(lengths >= lr[:, 0] - 1e-12) and np.all(lengths <= lr[:, 1] + 1e-12)
    # The ranges are attained: a derivative-free bounded search (Powell) started from the
    # best samples reaches the same extremes.
    from scipy.optimize import minimize

    samples = np.vstack([qs, corners])

    def length(q, k, sign):
        data.qpos[handles.qpos_adr] = q
        mujoco.mj_fwdPosition(model, data)
        return sign * 1e3 * data.ten_length[handles.tendon_ids[k]]

    bounds = list(map(tuple, handles.joint_range))
    for k in range(len(MUSCLE_NAMES)):
        for col, sign in ((0, 1.0), (1, -1.0)):
            start = samples[np.argmin(sign * lengths[:, k])]
            res = minimize(length, start, args=(k, sign), method="Powell", bounds=bounds,
                           options={"xtol": 1e-10, "ftol": 1e-14})
            assert sign * res.fun * 1e-3 == pytest.approx(lr[k, col], abs=1e-7), MUSCLE_NAMES[k]
    span = lr[:, 1] - lr[:, 0]
    # MuJoCo maps the length range linearly onto the operating range (in units of the
    # optimal length L0); the optimal length (normalised length 1) lies inside the range
    # (at its upper end for AD, whose operating range is 0.5..1).
    op = model.actuator_gainprm[handles.muscle_ids, :2]
    l0 = span / (op[:, 1] - op[:, 0])
    optimal_tendon_length = lr[:, 0] + (1.0 - op[:, 0]) * l0
    assert np.all(l0 > 0)
    assert np.all((lr[:, 0] < optimal_tendon_length) & (optimal_tendon_length <= lr[:, 1] + 1e-15))


def test_short_simulation_stays_finite_and_in_range(model, handles):
    data = mujoco.MjData(model)
    rng = np.random.default_rng(3)
    for step in range(400):  # 0.5 s
        if step % 40 == 0:
            data.ctrl[:] = rng.uniform(0.0, 1.0, model.nu)
        mujoco.mj_step(model, data)
    assert np.all(np.isfinite(data.qpos)) and np.all(np.isfinite(data.qvel))
    slack = np.radians(5.0)  # soft limits may be penetrated slightly
    assert np.all(data.qpos >= handles.joint_range[:, 0] - slack)
    assert np.all(data.qpos <= handles.joint_range[:, 1] + slack)
    assert np.all(data.actuator_force <= 0)  # muscles only pull


def test_forward_keypoints(model, handles):
    data = mujoco.MjData(model)
    q = _random_qpos(handles, 1, seed=4)[0]
    zero = forward_keypoints(model, data, q, None)
    np.testing.assert_allclose(zero, data.xpos[handles.keypoint_body_ids])
    offsets = np.arange(9.0).reshape(3, 3) * 1e-4
    kp = forward_keypoints(model, data, q, offsets)
    assert kp.shape == (3, 3)
    for k, body in enumerate(handles.keypoint_body_ids):
        np.testing.assert_allclose(kp[k], data.xpos[body] + data.xmat[body].reshape(3, 3) @ offsets[k])
    # The rendering sites draw the same markers once moved to the offsets.
    m2 = build_mouse_model()
    set_keypoint_sites(m2, offsets)
    d2 = mujoco.MjData(m2)
    d2.qpos[:] = q
    mujoco.mj_kinematics(m2, d2)
    np.testing.assert_allclose(d2.site_xpos[handles.keypoint_site_ids], kp, atol=1e-15)
    traj = keypoint_trajectory(model, np.vstack([q, q]), offsets)
    np.testing.assert_allclose(traj, np.stack([kp, kp]))
    with pytest.raises(ValueError, match=r"\(4,\)"):
        forward_keypoints(model, data, q[:3], offsets)
    with pytest.raises(ValueError, match=r"\(3, 3\)"):
        forward_keypoints(model, data, q, offsets[:2])


# ---------------------------------------------------------------------------
# Oracle: the authors' model
# ---------------------------------------------------------------------------


def test_body_poses_and_tendons_match_reference_model(model, handles, reference_model):
    ref = reference_model
    d, rd = mujoco.MjData(model), mujoco.MjData(ref)
    ref_qadr = [ref.joint(n if n != "elbow_joint" else "elbow").qposadr[0] for n in JOINT_NAMES]
    for q in _random_qpos(handles, 100, seed=5):
        d.qpos[handles.qpos_adr] = q
        rd.qpos[ref_qadr] = q
        mujoco.mj_fwdPosition(model, d)
        mujoco.mj_fwdPosition(ref, rd)
        for body in SHARED_BODIES:
            np.testing.assert_allclose(d.body(body).xpos, rd.body(body).xpos, atol=1e-12)
            np.testing.assert_allclose(d.body(body).xmat, rd.body(body).xmat, atol=1e-12)
        for name in MUSCLE_NAMES:
            assert d.tendon(name).length[0] == pytest.approx(rd.tendon(name).length[0], abs=1e-12)
        # wrist_body deliberately differs (it follows the registered clips, see below).
        assert np.linalg.norm(d.body("wrist_body").xpos - rd.body("wrist_body").xpos) > 1e-4
    # Muscle parameters equal the reference; length ranges agree with its simulated ones to 10 um.
    ref_ids = [ref.actuator(n).id for n in MUSCLE_NAMES]
    np.testing.assert_allclose(model.actuator_gainprm[handles.muscle_ids], ref.actuator_gainprm[ref_ids])
    np.testing.assert_allclose(model.actuator_biasprm[handles.muscle_ids], ref.actuator_biasprm[ref_ids])
    np.testing.assert_allclose(model.actuator_dynprm[handles.muscle_ids], ref.actuator_dynprm[ref_ids])
    np.testing.assert_allclose(
        model.actuator_lengthrange[handles.muscle_ids], ref.actuator_lengthrange[ref_ids], atol=1e-5
    )
    for name in JOINT_NAMES:
        j, rj = model.joint(name), ref.joint(name if name != "elbow_joint" else "elbow")
        np.testing.assert_allclose(j.range, rj.range)
        np.testing.assert_allclose(j.axis, rj.axis)
        np.testing.assert_allclose(model.dof_armature[j.dofadr], ref.dof_armature[rj.dofadr])
        np.testing.assert_allclose(model.dof_damping[j.dofadr], ref.dof_damping[rj.dofadr])


def test_length_range_search_is_insensitive_to_its_grid(model, handles):
    ranges = tendon_length_ranges(model, grid_points=5, n_refine=2)
    np.testing.assert_allclose(ranges[handles.tendon_ids], model.actuator_lengthrange[handles.muscle_ids], atol=1e-10)


# ---------------------------------------------------------------------------
# Oracle: the 46 registered clips
# ---------------------------------------------------------------------------


def _quat_to_mat(q: np.ndarray) -> np.ndarray:
    out = np.zeros(9)
    mujoco.mju_quat2Mat(out, q)
    return out.reshape(3, 3)


def test_wrist_position_in_ulna_frame_is_constant_in_clips(raw_clips):
    local = []
    for clip in raw_clips:
        names = clip["names_xpos"]
        u, w = names.index("ulna"), names.index("wrist_body")
        for t in range(0, len(clip["qpos"]), 7):
            rot = _quat_to_mat(clip["xquat"][t, u])
            local.append(rot.T @ (clip["xpos"][t, w] - clip["xpos"][t, u]))
    local = np.array(local)
    assert np.ptp(local, axis=0).max() < 1e-7
    np.testing.assert_allclose(local.mean(0), WRIST_POS_IN_ULNA, atol=1e-8)


def test_model_reproduces_clip_body_poses_and_marker_sites(model, handles, raw_clips):
    data = mujoco.MjData(model)
    body_map = {"elbow": "ulna"}  # the registration model's extra body sits on the ulna origin
    worst_x, worst_m = 0.0, 0.0
    for clip in raw_clips:
        names = clip["names_xpos"]
        ids = [model.body(body_map.get(n, n)).id for n in names]
        for t, q in enumerate(clip["qpos"]):
            markers = forward_keypoints(model, data, q, clip["offsets"], handles)
            worst_x = max(worst_x, np.abs(data.xpos[ids] - clip["xpos"][t]).max())
            worst_m = max(worst_m, np.abs(markers - clip["markers"][t]).max())
    print(f"max |xpos - clip xpos| = {worst_x:.2e} m, max |marker - marker_sites| = {worst_m:.2e} m")
    assert worst_x < 1e-6
    assert worst_m < 1e-6


def test_replay_of_all_real_clips_under_one_mm(model, h5_files, raw_clips):
    from mskbench.mouse import load_clips, replay_errors

    clips = load_clips(CLIP_DIR)
    assert len(clips) == len(h5_files) == 46
    result = replay_errors(clips, model)
    per_clip = np.array(list(result["per_clip"].values()))
    print(
        f"replay over {len(clips)} clips: mean keypoint error {result['mean_keypoint_error_mm']:.4f} mm, "
        f"max clip {per_clip.max():.4f} mm, min clip {per_clip.min():.4f} mm"
    )
    assert result["mean_keypoint_error_mm"] < 1.0
    assert result["mean_keypoint_error_mm"] == pytest.approx(np.mean(per_clip))
    # Same as the files' own |kp_data - marker_sites| (float32 storage aside).
    for raw in raw_clips:
        expected = 1e3 * np.mean(np.linalg.norm(raw["kp"] - raw["markers"], axis=-1))
        assert result["per_clip"][raw["name"].removesuffix("_ik")] == pytest.approx(expected, abs=1e-4)

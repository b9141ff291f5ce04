"""Mouse clips (formats, validation), kinematic replay and STAC-style registration.

Everything except the ``real``-clip tests runs on synthetic clips generated from
our model; the real clips are read from ``shared/data/mouse_reach`` when present.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import mujoco
import numpy as np
import pytest

from mskbench.body.mouse_forelimb import (
    JOINT_NAMES,
    MUSCLE_NAMES,
    MouseHandles,
    build_mouse_model,
    keypoint_trajectory,
)
from mskbench.mouse import (
    FORMAT_VERSION,
    Clip,
    load_clip,
    load_clips,
    load_track_mjx_h5,
    register,
    replay_errors,
    save_clip,
    kinematic_clip,
)

SHARED = Path(__file__).resolve().parents[2] / "shared"
CLIP_DIR = SHARED / "data" / "mouse_reach"


@pytest.fixture(scope="module")
def model() -> mujoco.MjModel:
    return build_mouse_model()


@pytest.fixture(scope="module")
def real_files() -> list[Path]:
    if not CLIP_DIR.exists():
        pytest.skip(f"{CLIP_DIR} not available (shared data absent)")
    pytest.importorskip("h5py")
    files = sorted(CLIP_DIR.glob("*_ik.h5"))
    if not files:
        pytest.skip(f"no *_ik.h5 clips in {CLIP_DIR}")
    return files


def _full_clip(T: int = 12, name: str = "full") -> Clip:
    rng = np.random.default_rng(7)
    return Clip(
        name=name,
        fps=200.0,
        qpos=rng.normal(size=(T, 4)),
        keypoints=rng.normal(size=(T, 3, 3)) * 1e-3,
        offsets=rng.normal(size=(3, 3)) * 1e-3,
        qvel=rng.normal(size=(T, 4)),
        emg={"Biceps_Long": rng.uniform(size=T), "Triceps_Long": rng.uniform(size=T)},
        activations=rng.uniform(size=(T, 9)),
        metadata={"animal": "A36-1", "trial": 3, "tags": ["x", "y"]},
    )


def _assert_clips_equal(a: Clip, b: Clip) -> None:
    assert a.name == b.name and a.fps == b.fps and a.metadata == b.metadata
    for field in ("qpos", "keypoints", "offsets", "qvel", "activations"):
        x, y = getattr(a, field), getattr(b, field)
        if x is None:
            assert y is None, field
        else:
            assert x.dtype == y.dtype == np.float64 and np.array_equal(x, y), field
    if a.emg is None:
        assert b.emg is None
    else:
        assert list(a.emg) == list(b.emg)
        for k in a.emg:
            assert np.array_equal(a.emg[k], b.emg[k])


# ---------------------------------------------------------------------------
# Clip validation and our format
# ---------------------------------------------------------------------------


def test_own_format_round_trip_is_exact(tmp_path):
    clip = _full_clip()
    path = save_clip(clip, tmp_path / "a.npz")
    _assert_clips_equal(clip, load_clip(path))
    with np.load(path) as z:
        assert int(z["format_version"]) == FORMAT_VERSION == 1
    minimal = Clip(name="min", fps=50, qpos=np.zeros((3, 4)), keypoints=np.zeros((3, 3, 3)))
    _assert_clips_equal(minimal, load_clip(save_clip(minimal, tmp_path / "min")))  # ".npz" appended
    assert (tmp_path / "min.npz").exists()


@pytest.mark.parametrize(
    ("change", "match"),
    [
        ({"qpos": np.zeros((5, 3))}, r"qpos must have shape \(T, 4\)"),
        ({"qpos": np.zeros(4)}, r"qpos must have shape \(T, 4\)"),
        ({"keypoints": np.zeros((5, 9))}, r"keypoints must have shape \(T, 3 keypoints, xyz\) = \(5, 3, 3\)"),
        ({"keypoints": np.zeros((4, 3, 3))}, r"\(5, 3, 3\)"),
        ({"offsets": np.zeros((3,))}, r"offsets must have shape"),
        ({"qvel": np.zeros((5, 2))}, r"qvel must have shape"),
        ({"activations": np.zeros((5, 8))}, r"activations must have shape \(T, 9 muscles\)"),
        ({"activations": np.full((5, 9), 1.5)}, r"activations must lie in \[0, 1\]"),
        ({"emg": {"Deltoid": np.zeros(5)}}, r"not a muscle"),
        ({"emg": {"Biceps_Long": np.zeros(4)}}, r"emg\['Biceps_Long'\] must have shape"),
        ({"emg": {"Biceps_Long": np.full(5, -0.1)}}, r"\[0, 1\]"),
        ({"fps": 0.0}, r"fps must be a positive"),
        ({"fps": -200.0}, r"fps must be a positive"),
        ({"fps": float("nan")}, r"fps must be a positive"),
        ({"fps": "fast"}, r"fps must be a positive"),
        ({"name": ""}, r"name must be a non-empty string"),
        ({"metadata": [1, 2]}, r"metadata must be a dict"),
    ],
)
def test_bad_clips_raise(change, match):
    fields = {"name": "c", "fps": 200.0, "qpos": np.zeros((5, 4)), "keypoints": np.zeros((5, 3, 3))}
    fields.update(change)
    with pytest.raises(ValueError, match=match):
        Clip(**fields)


@pytest.mark.parametrize("field", ["qpos", "keypoints", "offsets", "qvel"])
def test_non_finite_values_raise(field):
    clip = _full_clip(T=5)
    value = getattr(clip, field).copy()
    value.flat[3] = np.nan
    with pytest.raises(ValueError, match=f"{field} must be finite"):
        Clip(**{**clip.__dict__, field: value})
    value.flat[3] = np.inf
    with pytest.raises(ValueError, match="finite"):
        Clip(**{**clip.__dict__, field: value})


def test_unknown_format_version_and_foreign_npz_are_rejected(tmp_path):
    path = save_clip(_full_clip(), tmp_path / "v1.npz")
    with np.load(path) as z:
        fields = {k: z[k] for k in z.files}
    fields["format_version"] = np.array(2)
    np.savez_compressed(tmp_path / "v2.npz", **fields)
    with pytest.raises(ValueError, match="unsupported clip format_version 2"):
        load_clip(tmp_path / "v2.npz")
    np.savez(tmp_path / "foreign.npz", qpos=np.zeros((3, 4)))
    with pytest.raises(ValueError, match="no 'format_version'"):
        load_clip(tmp_path / "foreign.npz")
    del fields["qpos"]
    fields["format_version"] = np.array(1)
    np.savez(tmp_path / "partial.npz", **fields)
    with pytest.raises(ValueError, match="qpos"):
        load_clip(tmp_path / "partial.npz")
    with pytest.raises(FileNotFoundError):
        load_clip(tmp_path / "missing.npz")


def test_metadata_must_be_json(tmp_path):
    clip = _full_clip()
    clip.metadata = {"bad": object()}
    with pytest.raises(ValueError, match="JSON"):
        save_clip(clip, tmp_path / "bad.npz")


def test_load_clips_directory_rules(tmp_path):
    with pytest.raises(FileNotFoundError, match="no such clip directory"):
        load_clips(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    (tmp_path / "empty" / "notes.txt").write_text("not a clip")
    with pytest.raises(ValueError, match="no clip files"):
        load_clips(tmp_path / "empty")
    with pytest.raises(ValueError, match="empty list"):
        load_clips([])
    d = tmp_path / "clips"
    for name in ("zeta", "alpha", "mid"):
        save_clip(_full_clip(name=name), d / f"{name[::-1]}.npz")  # file order != name order
    (d / "readme.md").write_text("ignored")
    clips = load_clips(d)
    assert [c.name for c in clips] == ["alpha", "mid", "zeta"]
    assert [c.name for c in load_clips(sorted(d.glob("*.npz")))] == ["alpha", "mid", "zeta"]
    assert [c.name for c in load_clips(d / "atez.npz")] == ["zeta"]
    save_clip(_full_clip(name="alpha"), d / "dup.npz")
    with pytest.raises(ValueError, match="duplicate clip name 'alpha'"):
        load_clips(d)
    with pytest.raises(ValueError, match="unknown clip file type"):
        load_clips([d / "readme.md"])


def _write_track_mjx_h5(path: Path, clip: Clip) -> None:
    h5py = pytest.importorskip("h5py")
    with h5py.File(path, "w") as f:
        f["qpos"] = clip.qpos.astype(np.float32)
        f["qvel"] = clip.qvel.astype(np.float32)
        f["kp_data"] = clip.keypoints.reshape(len(clip.qpos), 9).astype(np.float32)
        f["offsets"] = clip.offsets.astype(np.float32)
        f["names_qpos"] = np.array([n.encode() for n in JOINT_NAMES])
        f["kp_names"] = np.array([b"Shoulder", b"Elbow", b"Wrist"])
        f["config"] = np.bytes_(b"model:\n  N_ITERS: 6\n")


def test_track_mjx_reader_on_a_file_we_write(tmp_path, model):
    clip = kinematic_clip("synth", n_frames=20, seed=3, model=model)
    _write_track_mjx_h5(tmp_path / "synth_trial01_ik.h5", clip)
    loaded = load_track_mjx_h5(tmp_path / "synth_trial01_ik.h5")
    assert loaded.name == "synth_trial01" and loaded.fps == 200.0
    np.testing.assert_allclose(loaded.qpos, clip.qpos, atol=1e-6)
    np.testing.assert_allclose(loaded.keypoints, clip.keypoints, atol=1e-9)
    assert loaded.metadata["config_yaml"].startswith("model:")
    # A directory may mix both formats.
    save_clip(kinematic_clip("another", n_frames=5, model=model), tmp_path / "another.npz")
    assert [c.name for c in load_clips(tmp_path)] == ["another", "synth_trial01"]
    h5py = pytest.importorskip("h5py")
    with h5py.File(tmp_path / "bad_ik.h5", "w") as f:
        f["qpos"] = np.zeros((3, 4))
        f["kp_data"] = np.zeros((3, 9))
        f["names_qpos"] = np.array([b"a", b"b", b"c", b"d"])
    with pytest.raises(ValueError, match="names_qpos"):
        load_track_mjx_h5(tmp_path / "bad_ik.h5")


def test_real_track_mjx_clips_load(real_files, tmp_path):
    clips = load_clips(CLIP_DIR)
    assert len(clips) == 46 == len(real_files)
    assert [c.name for c in clips] == sorted(c.name for c in clips)
    for c in clips:
        assert c.qpos.shape == (100, 4) and c.keypoints.shape == (100, 3, 3) and c.offsets.shape == (3, 3)
        assert c.fps == 200.0 and c.emg is None and c.activations is None
    assert clips[0].name == real_files[0].stem.removesuffix("_ik")
    assert "KEYPOINT_MODEL_PAIRS" in clips[0].metadata["config_yaml"]
    # Converting to our format is lossless.
    _assert_clips_equal(clips[0], load_clip(save_clip(clips[0], tmp_path / "c0.npz")))
    shutil.copy(real_files[1], tmp_path)
    assert len(load_clips(tmp_path)) == 2


# ---------------------------------------------------------------------------
# Replay
# ---------------------------------------------------------------------------


def test_replay_errors_units_on_synthetic_clips(model):
    exact = kinematic_clip("exact", n_frames=30, seed=1, model=model)
    shifted = Clip(**{**exact.__dict__, "name": "shifted", "keypoints": exact.keypoints + [0.0, 0.0, 1e-3]})
    result = replay_errors([exact, shifted], model)
    assert set(result) == {"mean_keypoint_error_mm", "per_clip"}
    assert result["per_clip"]["exact"] == pytest.approx(0.0, abs=1e-9)
    assert result["per_clip"]["shifted"] == pytest.approx(1.0, abs=1e-9)  # 1 mm displacement
    assert result["mean_keypoint_error_mm"] == pytest.approx(0.5, abs=1e-9)
    no_offsets = Clip(**{**exact.__dict__, "offsets": None})
    assert replay_errors([no_offsets], model)["mean_keypoint_error_mm"] > 0.1
    with pytest.raises(ValueError, match="at least one clip"):
        replay_errors([], model)


# ---------------------------------------------------------------------------
# Registration
# ---------------------------------------------------------------------------


@pytest.fixture(scope="module")
def noisy_clip(model) -> Clip:
    """Synthetic keypoints from known qpos and offsets, plus 20 um noise per coordinate."""
    return kinematic_clip("noisy", n_frames=100, seed=11, noise_m=2e-5, model=model)


def test_registration_with_known_offsets_recovers_joint_angles(model, noisy_clip):
    res = register(noisy_clip.keypoints, model, offsets=noisy_clip.offsets, fit_offsets=False)
    rms = float(np.sqrt(np.mean((res.qpos - noisy_clip.qpos) ** 2)))
    print(f"known offsets: qpos RMS error {rms:.4f} rad, keypoint error {res.mean_keypoint_error_mm:.4f} mm")
    assert rms < 0.02
    assert res.mean_keypoint_error_mm < 0.2
    assert res.keypoint_error_mm.shape == (100, 3) and res.qpos.shape == (100, 4)
    np.testing.assert_array_equal(res.offsets, noisy_clip.offsets)
    h = MouseHandles.from_model(model)
    assert np.all(res.qpos >= h.joint_range[:, 0]) and np.all(res.qpos <= h.joint_range[:, 1])


def test_registration_fits_offsets_from_zero(model, noisy_clip):
    no_fit = register(noisy_clip.keypoints, model, fit_offsets=False)
    res = register(noisy_clip.keypoints, model, fit_offsets=True, n_iters=6)
    print(
        f"fitted offsets: keypoint error {res.mean_keypoint_error_mm:.4f} mm "
        f"(zero offsets: {no_fit.mean_keypoint_error_mm:.4f} mm), "
        f"qpos RMS {np.sqrt(np.mean((res.qpos - noisy_clip.qpos) ** 2)):.3f} rad"
    )
    assert res.mean_keypoint_error_mm < 0.2
    assert res.mean_keypoint_error_mm < 0.2 * no_fit.mean_keypoint_error_mm
    assert res.cost_history[-1] <= res.cost_history[0]
    # The shoulder keypoint rides on the fixed scapula: its offset is fully determined.
    np.testing.assert_allclose(res.offsets[0], noisy_clip.offsets[0], atol=1e-5)
    # The markers are consistent with the returned pose and offsets.
    np.testing.assert_allclose(keypoint_trajectory(model, res.qpos, res.offsets), res.markers)


def test_elbow_gauge_symmetry_of_free_offsets(model):
    """Why joint angles are not identifiable with free offsets (see the registration docstring)."""
    clip = kinematic_clip("gauge", n_frames=10, seed=5, model=model)
    delta = 0.2
    c, s = np.cos(-delta), np.sin(-delta)
    rot_x = np.array([[1, 0, 0], [0, c, -s], [0, s, c]])
    wrist = model.body("wrist_body").pos
    offsets = clip.offsets.copy()
    offsets[1] = rot_x @ clip.offsets[1]
    offsets[2] = rot_x @ (wrist + clip.offsets[2]) - wrist
    qpos = clip.qpos + [0.0, 0.0, 0.0, delta]
    np.testing.assert_allclose(keypoint_trajectory(model, qpos, offsets), clip.keypoints, atol=1e-15)


def test_registration_rejects_bad_input(model):
    with pytest.raises(ValueError, match=r"\(T, 3, 3\)"):
        register(np.zeros((10, 9)), model)
    bad = np.zeros((4, 3, 3))
    bad[1, 1, 1] = np.nan
    with pytest.raises(ValueError, match="finite"):
        register(bad, model)
    with pytest.raises(ValueError, match=r"offsets must have shape \(3, 3\)"):
        register(np.zeros((4, 3, 3)), model, offsets=np.zeros(3))


def test_registration_on_a_real_clip(model, real_files):
    clip = load_track_mjx_h5(real_files[0])
    res = register(clip.keypoints, model)
    published = keypoint_trajectory(model, clip.qpos, clip.offsets)
    stac = 1e3 * np.mean(np.linalg.norm(published - clip.keypoints, axis=-1))
    print(
        f"real clip {clip.name}: our registration {res.mean_keypoint_error_mm:.3f} mm "
        f"(published STAC fit {stac:.3f} mm)"
    )
    assert res.mean_keypoint_error_mm < 1.0


def test_muscle_names_are_the_emg_keys():
    assert "Biceps_Long" in MUSCLE_NAMES and "Triceps_Long" in MUSCLE_NAMES

"""Mouse reaching clips: the :class:`Clip` container and its two file formats.

A clip is one reach: joint angles ``qpos`` (T, 4) in radians, ordered
``JOINT_NAMES`` = (sh_elv, sh_extension, sh_rotation, elbow_joint); 3D
keypoints ``keypoints`` (T, 3, 3) in metres, ordered ``KEYPOINT_NAMES`` =
(Shoulder, Elbow, Wrist) x (x, y, z) in the model's ``ground`` frame; marker
``offsets`` (3, 3) in metres, each in its keypoint body's frame (scapula, ulna,
wrist_body), so that ``keypoint = x_body + R_body @ offset``; optional joint
velocities, EMG envelopes and ground-truth activations.

Formats
-------
**Track-MJX registration output** (``*_ik.h5``, HDF5, read-only):
:func:`load_track_mjx_h5`. Datasets used: ``qpos`` (T, 4), ``kp_data`` (T, 9),
``offsets`` (3, 3), ``qvel`` (T, 4), ``names_qpos``, ``kp_names``, ``config``
(YAML, kept as text in ``metadata["config_yaml"]``). The files do not store a
frame rate; the 46 published clips are 200 Hz (``fps`` argument). Their
``qvel`` is not the finite difference of ``qpos`` (STAC infers it); it is kept
but should be used with care. Needs ``h5py`` (imported lazily).

**mskbench clip format, version 1** (``.npz``, written by :func:`save_clip`,
read by :func:`load_clip`): a compressed NumPy archive (``np.savez_compressed``,
read with ``allow_pickle=False``) holding

=================  ==============  ===========================================
key                dtype / shape   meaning
=================  ==============  ===========================================
format_version     int64 ()        ``1``; other values are rejected
name               str ()          clip name
fps                float64 ()      frame rate (Hz)
joint_names        str (4,)        must equal ``JOINT_NAMES``
keypoint_names     str (3,)        must equal ``KEYPOINT_NAMES``
qpos               float64 (T, 4)  joint angles (rad)
keypoints          float64 (T,3,3) keypoints (m)
offsets            float64 (3, 3)  optional; marker offsets (m)
qvel               float64 (T, 4)  optional; joint velocities (rad/s)
activations        float64 (T, 9)  optional; ground-truth activations in [0, 1], ``MUSCLE_NAMES`` order
emg_names          str (M,)        optional (with ``emg``); muscle names
emg                float64 (M, T)  optional; EMG envelopes in [0, 1]
metadata_json      str ()          JSON object (``Clip.metadata``)
=================  ==============  ===========================================

Optional keys are absent when the field is ``None``. All arrays are stored as
float64, so a save/load round trip is exact.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mskbench.body.mouse_forelimb import JOINT_NAMES, KEYPOINT_NAMES, MUSCLE_NAMES

FORMAT_VERSION = 1
#: Frame rate of the published Track-MJX mouse reaching clips (Hz).
TRACK_MJX_FPS = 200.0
#: File suffixes recognised by :func:`load_clips`.
OWN_SUFFIXES = (".npz",)
TRACK_MJX_SUFFIXES = (".h5", ".hdf5")

_NJ = len(JOINT_NAMES)
_NK = len(KEYPOINT_NAMES)
_NM = len(MUSCLE_NAMES)


def _float_array(value: Any, field_name: str) -> np.ndarray:
    try:
        arr = np.array(value, dtype=np.float64)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{field_name} must be a numeric array, got {type(value).__name__}") from err
    return arr


def _check(arr: np.ndarray, shape: tuple, field_name: str, what: str) -> None:
    if arr.shape != shape:
        raise ValueError(f"{field_name} must have shape {what} = {shape}, got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        bad = int(np.size(arr) - np.count_nonzero(np.isfinite(arr)))
        raise ValueError(f"{field_name} must be finite, found {bad} NaN/inf value(s)")


def _check_unit_interval(arr: np.ndarray, field_name: str) -> None:
    if arr.size and (arr.min() < 0.0 or arr.max() > 1.0):
        raise ValueError(f"{field_name} must lie in [0, 1], got range [{arr.min():.4g}, {arr.max():.4g}]")


@dataclass
class Clip:
    """One mouse reaching clip (see the module docstring for units and frames).

    Arrays are converted to float64 and validated on construction; a bad
    shape, a non-finite value or ``fps <= 0`` raises :class:`ValueError`.
    """

    name: str
    fps: float
    qpos: np.ndarray  # (T, 4) rad, JOINT_NAMES order
    keypoints: np.ndarray  # (T, 3, 3) m, KEYPOINT_NAMES x xyz
    offsets: np.ndarray | None = None  # (3, 3) m, keypoint-body frames
    qvel: np.ndarray | None = None  # (T, 4) rad/s
    emg: dict[str, np.ndarray] | None = None  # muscle name -> (T,) in [0, 1]
    activations: np.ndarray | None = None  # (T, 9) in [0, 1], MUSCLE_NAMES order
    metadata: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise ValueError(f"name must be a non-empty string, got {self.name!r}")
        try:
            fps = float(self.fps)
        except (TypeError, ValueError) as err:
            raise ValueError(f"fps must be a positive number (Hz), got {self.fps!r}") from err
        if not (math.isfinite(fps) and fps > 0):
            raise ValueError(f"fps must be a positive number (Hz), got {self.fps!r}")
        self.fps = fps

        self.qpos = _float_array(self.qpos, "qpos")
        if self.qpos.ndim != 2 or self.qpos.shape[1] != _NJ or self.qpos.shape[0] < 1:
            raise ValueError(
                f"qpos must have shape (T, {_NJ}) with T >= 1 (columns {JOINT_NAMES}), got {self.qpos.shape}"
            )
        T = self.qpos.shape[0]
        _check(self.qpos, (T, _NJ), "qpos", "(T, 4)")
        self.keypoints = _float_array(self.keypoints, "keypoints")
        _check(self.keypoints, (T, _NK, 3), "keypoints", "(T, 3 keypoints, xyz)")
        if self.offsets is not None:
            self.offsets = _float_array(self.offsets, "offsets")
            _check(self.offsets, (_NK, 3), "offsets", "(3 keypoints, xyz)")
        if self.qvel is not None:
            self.qvel = _float_array(self.qvel, "qvel")
            _check(self.qvel, (T, _NJ), "qvel", "(T, 4)")
        if self.activations is not None:
            self.activations = _float_array(self.activations, "activations")
            _check(self.activations, (T, _NM), "activations", "(T, 9 muscles)")
            _check_unit_interval(self.activations, "activations")
        if self.emg is not None:
            if not isinstance(self.emg, dict):
                raise ValueError(f"emg must be a dict muscle name -> (T,) array, got {type(self.emg).__name__}")
            emg = {}
            for muscle, env in self.emg.items():
                if muscle not in MUSCLE_NAMES:
                    raise ValueError(f"emg key {muscle!r} is not a muscle; valid names: {MUSCLE_NAMES}")
                arr = _float_array(env, f"emg[{muscle!r}]")
                _check(arr, (T,), f"emg[{muscle!r}]", "(T,)")
                _check_unit_interval(arr, f"emg[{muscle!r}]")
                emg[muscle] = arr
            self.emg = emg
        if not isinstance(self.metadata, dict):
            raise ValueError(f"metadata must be a dict, got {type(self.metadata).__name__}")

    @property
    def n_frames(self) -> int:
        return int(self.qpos.shape[0])

    @property
    def dt_s(self) -> float:
        return 1.0 / self.fps

    @property
    def duration_s(self) -> float:
        return self.n_frames / self.fps


# ---------------------------------------------------------------------------
# Track-MJX HDF5
# ---------------------------------------------------------------------------


def _decode(names) -> list[str]:
    return [n.decode() if isinstance(n, bytes) else str(n) for n in np.asarray(names).ravel()]


def load_track_mjx_h5(path: str | Path, fps: float = TRACK_MJX_FPS, name: str | None = None) -> Clip:
    """Read a Track-MJX/STAC registration file (``*_ik.h5``) into a :class:`Clip`.

    The clip name is the file stem without a trailing ``_ik`` unless ``name``
    is given. ``fps`` defaults to 200 Hz (not stored in the files).
    """
    try:
        import h5py
    except ImportError as err:  # pragma: no cover - depends on the environment
        raise ImportError("reading Track-MJX clips needs h5py: pip install h5py") from err

    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such Track-MJX clip file: {path}")
    with h5py.File(path, "r") as f:
        missing = [k for k in ("qpos", "kp_data") if k not in f]
        if missing:
            raise ValueError(f"{path.name}: not a Track-MJX registration file (missing {missing})")
        if "names_qpos" in f:
            names = _decode(f["names_qpos"][()])
            if tuple(names) != JOINT_NAMES:
                raise ValueError(f"{path.name}: names_qpos {names} differ from the expected {list(JOINT_NAMES)}")
        if "kp_names" in f:
            kp_names = _decode(f["kp_names"][()])
            if tuple(kp_names) != KEYPOINT_NAMES:
                raise ValueError(f"{path.name}: kp_names {kp_names} differ from the expected {list(KEYPOINT_NAMES)}")
        qpos = np.asarray(f["qpos"][()], dtype=np.float64)
        kp = np.asarray(f["kp_data"][()], dtype=np.float64)
        if kp.ndim != 2 or kp.shape[1] != 3 * _NK:
            raise ValueError(f"{path.name}: kp_data must have shape (T, 9), got {kp.shape}")
        offsets = np.asarray(f["offsets"][()], dtype=np.float64) if "offsets" in f else None
        qvel = np.asarray(f["qvel"][()], dtype=np.float64) if "qvel" in f else None
        metadata: dict[str, Any] = {"source_format": "track-mjx-ik-h5", "source_file": path.name}
        if "config" in f:
            raw = f["config"][()]
            metadata["config_yaml"] = raw.decode() if isinstance(raw, bytes) else str(raw)
    clip_name = name if name is not None else path.stem.removesuffix("_ik")
    return Clip(
        name=clip_name,
        fps=fps,
        qpos=qpos,
        keypoints=kp.reshape(kp.shape[0], _NK, 3),
        offsets=offsets,
        qvel=qvel,
        metadata=metadata,
    )


# ---------------------------------------------------------------------------
# Our own format
# ---------------------------------------------------------------------------


def save_clip(clip: Clip, path: str | Path) -> Path:
    """Write ``clip`` in the mskbench clip format v1 (compressed ``.npz``). Returns the path.

    ``.npz`` is appended when ``path`` has another suffix (NumPy does so too).
    """
    path = Path(path)
    if path.suffix != ".npz":
        path = path.with_name(path.name + ".npz")
    try:
        metadata_json = json.dumps(clip.metadata, sort_keys=True)
    except TypeError as err:
        raise ValueError(f"clip {clip.name!r}: metadata must be JSON-serialisable ({err})") from err
    arrays: dict[str, np.ndarray] = {
        "format_version": np.array(FORMAT_VERSION, dtype=np.int64),
        "name": np.array(clip.name),
        "fps": np.array(clip.fps, dtype=np.float64),
        "joint_names": np.array(JOINT_NAMES),
        "keypoint_names": np.array(KEYPOINT_NAMES),
        "qpos": clip.qpos,
        "keypoints": clip.keypoints,
        "metadata_json": np.array(metadata_json),
    }
    if clip.offsets is not None:
        arrays["offsets"] = clip.offsets
    if clip.qvel is not None:
        arrays["qvel"] = clip.qvel
    if clip.activations is not None:
        arrays["activations"] = clip.activations
    if clip.emg is not None:
        names = list(clip.emg)
        arrays["emg_names"] = np.array(names, dtype=str)
        arrays["emg"] = (
            np.stack([clip.emg[n] for n in names]) if names else np.zeros((0, clip.n_frames))
        )
    path.parent.mkdir(parents=True, exist_ok=True)
    # numpy's stub lets a **dict fill its `allow_pickle: bool` keyword too, so mypy rejects
    # dict[str, ndarray] here; no key of `arrays` is 'allow_pickle'.
    np.savez_compressed(path, **arrays)  # type: ignore[arg-type]
    return path


def load_clip(path: str | Path) -> Clip:
    """Read a clip written by :func:`save_clip` (format version 1)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"no such clip file: {path}")
    with np.load(path, allow_pickle=False) as z:
        keys = set(z.files)
        if "format_version" not in keys:
            raise ValueError(f"{path.name}: not an mskbench clip file (no 'format_version' field)")
        version = int(z["format_version"])
        if version != FORMAT_VERSION:
            raise ValueError(
                f"{path.name}: unsupported clip format_version {version}; this mskbench reads version {FORMAT_VERSION}"
            )
        missing = {"name", "fps", "qpos", "keypoints"} - keys
        if missing:
            raise ValueError(f"{path.name}: clip file lacks required field(s) {sorted(missing)}")
        for key, expected in (("joint_names", JOINT_NAMES), ("keypoint_names", KEYPOINT_NAMES)):
            if key in keys and tuple(str(s) for s in z[key]) != expected:
                raise ValueError(f"{path.name}: {key} {list(z[key])} differ from the expected {list(expected)}")
        emg = None
        if "emg" in keys:
            names = [str(s) for s in z["emg_names"]]
            values = z["emg"]
            emg = {n: values[i].copy() for i, n in enumerate(names)}
        metadata = json.loads(str(z["metadata_json"])) if "metadata_json" in keys else {}
        return Clip(
            name=str(z["name"]),
            fps=float(z["fps"]),
            qpos=z["qpos"],
            keypoints=z["keypoints"],
            offsets=z["offsets"] if "offsets" in keys else None,
            qvel=z["qvel"] if "qvel" in keys else None,
            emg=emg,
            activations=z["activations"] if "activations" in keys else None,
            metadata=metadata,
        )


def kinematic_clip(
    name: str = "synthetic",
    n_frames: int = 100,
    fps: float = TRACK_MJX_FPS,
    seed: int = 0,
    noise_m: float = 0.0,
    offsets=None,
    model=None,
) -> Clip:
    """A clip generated from the model: smooth joint motion, keypoints by forward kinematics.

    Each joint follows ``mid + 0.35 * span * sin(2 pi f t + phi)`` inside its
    range (f uniform in 1..3 Hz, phi uniform, both from ``seed``); ``qvel`` is
    its exact derivative. ``offsets`` default to N(0, 1 mm) per coordinate.
    ``noise_m`` adds Gaussian noise (m, per coordinate) to the keypoints. The
    clip is exactly consistent with :func:`~mskbench.body.mouse_forelimb.build_mouse_model`,
    so it stands in for the real clips in tests and demos.
    """
    from mskbench.body.mouse_forelimb import MouseHandles, build_mouse_model, keypoint_trajectory

    if n_frames < 1:
        raise ValueError(f"n_frames must be >= 1, got {n_frames}")
    if noise_m < 0:
        raise ValueError(f"noise_m must be >= 0, got {noise_m}")
    model = model if model is not None else build_mouse_model()
    handles = MouseHandles.from_model(model)
    rng = np.random.default_rng(seed)
    lo, hi = handles.joint_range[:, 0], handles.joint_range[:, 1]
    mid, amp = 0.5 * (lo + hi), 0.35 * (hi - lo)
    freq = rng.uniform(1.0, 3.0, _NJ)
    phase = rng.uniform(0.0, 2 * np.pi, _NJ)
    t = np.arange(n_frames)[:, None] / float(fps)
    arg = 2 * np.pi * freq * t + phase
    qpos = mid + amp * np.sin(arg)
    qvel = amp * 2 * np.pi * freq * np.cos(arg)
    off = rng.normal(0.0, 1e-3, (_NK, 3)) if offsets is None else np.asarray(offsets, dtype=float)
    keypoints = keypoint_trajectory(model, qpos, off)
    if noise_m > 0:
        keypoints = keypoints + rng.normal(0.0, noise_m, keypoints.shape)
    return Clip(
        name=name, fps=fps, qpos=qpos, keypoints=keypoints, offsets=off, qvel=qvel,
        metadata={"source_format": "synthetic", "seed": int(seed), "noise_m": float(noise_m)},
    )


def load_any(path: str | Path) -> Clip:
    """Load one clip file, choosing the reader by suffix (``.npz`` ours, ``.h5``/``.hdf5`` Track-MJX)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix in OWN_SUFFIXES:
        return load_clip(path)
    if suffix in TRACK_MJX_SUFFIXES:
        return load_track_mjx_h5(path)
    raise ValueError(
        f"{path.name}: unknown clip file type {suffix!r}; expected one of {OWN_SUFFIXES + TRACK_MJX_SUFFIXES}"
    )


def load_clips(dir_or_files: str | Path | Iterable[str | Path]) -> list[Clip]:
    """Load clips from a directory (every ``.npz``/``.h5``/``.hdf5`` file in it), one file, or a list of files.

    Returns the clips sorted by name. A missing path raises
    :class:`FileNotFoundError`; a directory without clip files, an empty list
    or two clips with the same name raise :class:`ValueError`.
    """
    if isinstance(dir_or_files, (str, Path)):
        root = Path(dir_or_files)
        if not root.exists():
            raise FileNotFoundError(f"no such clip directory or file: {root}")
        if root.is_dir():
            files = sorted(
                p for p in root.iterdir()
                if p.is_file() and p.suffix.lower() in OWN_SUFFIXES + TRACK_MJX_SUFFIXES
            )
            if not files:
                raise ValueError(
                    f"no clip files (*{', *'.join(OWN_SUFFIXES + TRACK_MJX_SUFFIXES)}) in directory {root}"
                )
        else:
            files = [root]
    else:
        files = [Path(p) for p in dir_or_files]
        if not files:
            raise ValueError("load_clips got an empty list of files")
    clips = [load_any(p) for p in files]
    seen: dict[str, Path] = {}
    for clip, p in zip(clips, files):
        if clip.name in seen:
            raise ValueError(f"duplicate clip name {clip.name!r} in {seen[clip.name]} and {p}")
        seen[clip.name] = p
    return sorted(clips, key=lambda c: c.name)


def attach_emg(clips: Sequence[Clip], emg_dir: str | Path) -> list[Clip]:
    """``clips`` with EMG read from ``<emg_dir>/<clip name>.csv``: a header of muscle names, one row
    per frame, values in [0, 1]. Clips without a file keep what they have. A bad file, or a
    directory with no file for any clip, is a ``ValueError`` naming the file."""
    from dataclasses import replace

    emg_dir = Path(emg_dir)
    found, out = 0, []
    for clip in clips:
        path = emg_dir / f"{clip.name}.csv"
        if not path.exists():
            out.append(clip)
            continue
        with open(path) as f:
            header = [h.strip() for h in f.readline().split(",")]
        bad = [h for h in header if h not in MUSCLE_NAMES]
        if bad:
            raise ValueError(f"{path}: unknown muscle columns {bad}; valid: {', '.join(MUSCLE_NAMES)}")
        values = np.loadtxt(path, delimiter=",", skiprows=1, ndmin=2)
        if values.shape != (clip.n_frames, len(header)):
            raise ValueError(f"{path}: expected {clip.n_frames} rows x {len(header)} columns, got {values.shape}")
        try:  # replace() re-validates the clip, EMG range and finiteness included
            out.append(replace(clip, emg={m: values[:, i] for i, m in enumerate(header)}))
        except ValueError as exc:
            raise ValueError(f"{path}: {exc}") from None
        found += 1
    if found == 0:
        raise ValueError(f"no <clip name>.csv in {emg_dir} matches the clips")
    return out

"""Kinematic replay of clips through our forelimb model (track replay error).

Each clip's joint angles are played through :func:`build_mouse_model` with
``mj_kinematics`` only (no dynamics); the model markers
``x_body + R_body @ offset`` (the clip's offsets, zeros if it has none) are
compared with the clip's keypoints. The error of a frame and keypoint is the
Euclidean distance in mm; a clip's error is the mean over its frames and
keypoints; the overall error is the mean of the per-clip errors (each clip
weighs the same; the 46 published clips all have 100 frames).
"""

from __future__ import annotations

from collections.abc import Iterable

import mujoco
import numpy as np

from mskbench.body.mouse_forelimb import MouseHandles, build_mouse_model, keypoint_trajectory
from mskbench.mouse.clips import Clip


def clip_keypoint_errors_mm(clip: Clip, model: mujoco.MjModel, data: mujoco.MjData | None = None,
                            handles: MouseHandles | None = None) -> np.ndarray:
    """Per-frame, per-keypoint replay error (T, 3) in mm for one clip."""
    markers = keypoint_trajectory(model, clip.qpos, clip.offsets, data=data, handles=handles)
    return 1e3 * np.linalg.norm(markers - clip.keypoints, axis=-1)


def replay_errors(clips: Iterable[Clip], model: mujoco.MjModel | None = None) -> dict:
    """Replay ``clips`` and return ``{"mean_keypoint_error_mm": x, "per_clip": {name: x}}`` (mm)."""
    clips = list(clips)
    if not clips:
        raise ValueError("replay_errors needs at least one clip")
    names = [c.name for c in clips]
    if len(set(names)) != len(names):
        raise ValueError("clip names must be unique for replay_errors")
    model = model if model is not None else build_mouse_model()
    data = mujoco.MjData(model)
    handles = MouseHandles.from_model(model)
    per_clip = {c.name: float(np.mean(clip_keypoint_errors_mm(c, model, data, handles))) for c in clips}
    return {"mean_keypoint_error_mm": float(np.mean(list(per_clip.values()))), "per_clip": per_clip}

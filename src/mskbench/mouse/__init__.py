"""Mouse forelimb reaching: clips (data formats), STAC-style registration, kinematic replay."""

from mskbench.mouse.clips import (
    FORMAT_VERSION,
    Clip,
    load_clip,
    load_clips,
    load_track_mjx_h5,
    save_clip,
    kinematic_clip,
)
from mskbench.mouse.registration import RegistrationResult, register
from mskbench.mouse.replay import replay_errors

__all__ = [
    "FORMAT_VERSION",
    "Clip",
    "RegistrationResult",
    "load_clip",
    "load_clips",
    "load_track_mjx_h5",
    "register",
    "replay_errors",
    "save_clip",
    "kinematic_clip",
]

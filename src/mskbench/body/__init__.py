"""Embodiments and scene composition (MjSpec)."""

from mskbench.body.myofullbody import (
    BodyHandles,
    JointCouplings,
    N_MUSCLES,
    build_model,
    default_qpos,
    load_spec,
    place_on_ground,
    set_pose,
)

__all__ = [
    "BodyHandles",
    "JointCouplings",
    "N_MUSCLES",
    "build_model",
    "default_qpos",
    "load_spec",
    "place_on_ground",
    "set_pose",
]

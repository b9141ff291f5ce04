"""Embodiments behind one :class:`Body` description, and scene composition (MjSpec).

* :data:`MYOFULLBODY` — the 416-muscle MyoFullBody (:mod:`mskbench.body.myofullbody`);
* :data:`MOUSE_FORELIMB` — the 9-muscle mouse forelimb (:mod:`mskbench.body.mouse_forelimb`).
"""

from mskbench.body.base import Body, BodyHandles, JointCouplings, default_qpos, place_on_ground, set_pose
from mskbench.body.mouse_forelimb import MOUSE_FORELIMB
from mskbench.body.myofullbody import MYOFULLBODY, N_MUSCLES, build_model, load_spec

__all__ = [
    "Body",
    "BodyHandles",
    "JointCouplings",
    "MOUSE_FORELIMB",
    "MYOFULLBODY",
    "N_MUSCLES",
    "build_model",
    "default_qpos",
    "load_spec",
    "place_on_ground",
    "set_pose",
]

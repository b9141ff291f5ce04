"""Embodiments behind one :class:`Body` description, and scene composition (MjSpec).

* :data:`MYOFULLBODY` — the 416-muscle MyoFullBody (:mod:`mskbench.body.myofullbody`);
* :data:`MOUSE_FORELIMB` — the 9-muscle mouse forelimb (:mod:`mskbench.body.mouse_forelimb`).

The names below load on first use (MuJoCo with them), so :mod:`mskbench.body.sides` reads muscle
names without a simulator.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mskbench.body.base import Body, BodyHandles, JointCouplings, default_qpos, place_on_ground, set_pose
    from mskbench.body.mouse_forelimb import MOUSE_FORELIMB
    from mskbench.body.myofullbody import MYOFULLBODY, N_MUSCLES, build_model, load_spec

_EXPORTS = {
    "Body": "base", "BodyHandles": "base", "JointCouplings": "base", "default_qpos": "base",
    "place_on_ground": "base", "set_pose": "base", "MOUSE_FORELIMB": "mouse_forelimb", "MYOFULLBODY": "myofullbody",
    "N_MUSCLES": "myofullbody", "build_model": "myofullbody", "load_spec": "myofullbody",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        return getattr(importlib.import_module(f"mskbench.body.{_EXPORTS[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


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

"""The base observation ``O_base`` and the flat observation layout, for any body.

``O_base`` (Table IX caption): proprioception ``(q, q̇, v_CoM)`` and muscle
states (length, velocity, force, activation). Each block is defined once
here; a body chooses which it offers (:attr:`mskbench.body.base.Body.observation`),
always in this order, and a task's blocks follow as ``task/<name>``.

==================  =================  ==============================================
block               MyoFullBody size   content
==================  =================  ==============================================
qpos                127                the body's ``q``; with a free root, without
                                       its world ``x, y`` (root height, quaternion,
                                       122 joint angles), so policies do not depend
                                       on where on the floor the body is
qvel                128                the body's ``q̇`` (free root: linear world,
                                       angular local velocity; then the joints)
com_vel             3                  whole-body CoM velocity, m/s
muscle_length       416                actuator (muscle-tendon) length, m
muscle_velocity     416                actuator velocity, m/s
muscle_force        416                force / nominal F0 (−1 = nominal isometric max)
muscle_activation   416                activation in [0, 1]
task/<name>         ...                the task's blocks, in the task's order
==================  =================  ==============================================

Only the body's ``q, q̇`` are in ``O_base``; a task's moving props (a door,
a cube) are in its own blocks. The mouse forelimb offers ``qpos`` (4 joint
angles), ``qvel``, ``muscle_length``, ``muscle_velocity`` and
``muscle_activation``.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping

import numpy as np

from mskbench.sim.state import StateView

#: Every base block, as a function of the state view (the body picks a subset).
_BLOCKS = {
    "qpos": lambda s: s.q[2:s.h.nq_body] if s.h.free_root else s.q[:s.h.nq_body],
    "qvel": lambda s: s.qdot[:s.h.nv_body],
    "com_vel": lambda s: s.com_vel,
    "muscle_length": lambda s: s.muscle_length,
    "muscle_velocity": lambda s: s.muscle_velocity,
    "muscle_force": lambda s: s.muscle_force,
    "muscle_activation": lambda s: s.activation,
}


def observation_blocks(s: StateView, body_blocks: tuple[str, ...], task_blocks: Mapping) -> dict:
    """All blocks in layout order: the body's base blocks, then ``task/<name>``."""
    blocks = {name: _BLOCKS[name](s) for name in body_blocks}
    for name, value in task_blocks.items():
        blocks[f"task/{name}"] = value
    return blocks


def layout_of(blocks: Mapping) -> "OrderedDict[str, slice]":
    """Block name -> slice into the flat vector."""
    out, start = OrderedDict(), 0
    for name, value in blocks.items():
        n = int(np.size(value))
        out[name] = slice(start, start + n)
        start += n
    return out


def flatten(blocks: Mapping, xp=np, dtype=np.float32):
    """The blocks as one flat vector, in their order (cast once: a quarter of the cost of casting each block)."""
    return xp.concatenate([xp.ravel(xp.asarray(v)) for v in blocks.values()]).astype(dtype)

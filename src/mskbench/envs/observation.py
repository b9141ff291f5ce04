"""The shared base observation ``O_base`` and the flat observation layout.

``O_base`` (Table IX caption): proprioception ``(q, q̇, v_CoM)`` and muscle
states (length, velocity, force, activation). ``q`` leaves out the root's
world ``x, y`` (as the paper's Table XVII does) so policies do not depend on
where on the floor the body is. Only the humanoid's ``q, q̇`` are in
``O_base``; a task's moving props (a door, a cube) are in its own blocks.

==================  =====  ==================================================
block               size   content
==================  =====  ==================================================
qpos                127    root height, root quaternion, 122 joint angles
qvel                128    root linear (world) and angular (local) velocity,
                           122 joint velocities
com_vel             3      whole-body CoM velocity, m/s
muscle_length       416    actuator (muscle-tendon) length, m
muscle_velocity     416    actuator velocity, m/s
muscle_force        416    force / nominal F0 (−1 = nominal isometric max)
muscle_activation   416    activation in [0, 1]
task/<name>         ...    the task's blocks, in the task's order
==================  =====  ==================================================
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np

from mskbench.sim.state import StateView

BASE_BLOCKS = ("qpos", "qvel", "com_vel", "muscle_length", "muscle_velocity",
               "muscle_force", "muscle_activation")


def base_observation(s: StateView, xp=np) -> dict:
    return {
        "qpos": s.q[2:s.h.nq_body],
        "qvel": s.qdot[:s.h.nv_body],
        "com_vel": s.com_vel,
        "muscle_length": s.muscle_length,
        "muscle_velocity": s.muscle_velocity,
        "muscle_force": s.muscle_force,
        "muscle_activation": s.activation,
    }


def observation_blocks(s: StateView, task_blocks: dict, xp=np) -> dict:
    """All blocks in layout order: base blocks, then ``task/<name>``."""
    blocks = base_observation(s, xp)
    for name, value in task_blocks.items():
        blocks[f"task/{name}"] = value
    return blocks


def layout_of(blocks: dict) -> "OrderedDict[str, slice]":
    """Block name -> slice into the flat vector."""
    out, start = OrderedDict(), 0
    for name, value in blocks.items():
        n = int(np.size(value))
        out[name] = slice(start, start + n)
        start += n
    return out


def flatten(blocks: dict, xp=np, dtype=np.float32):
    return xp.concatenate([xp.ravel(xp.asarray(v, dtype=dtype)) for v in blocks.values()])

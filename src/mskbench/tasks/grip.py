"""Shared helpers of the grip tasks (Powerlift, ChinUp): hands held on a bar.

A hand "holds" a bar through a MuJoCo ``connect`` equality constraint between
two sites: one at the origin of the hand body (``thirdmc_l`` / ``thirdmc_r``,
the third metacarpal) and one on the bar's axis at ``y = ±half_width`` in the
bar's frame. The hand's site is attached to the nearest ancestor of the
metacarpal that has joints of its own (the lunate, which carries the wrist
joints; the metacarpal and capitate are welded to it), at the metacarpal's
origin: the same point, but on the body that moves. With the site on the welded
metacarpal, MuJoCo C 4.0 and MuJoCo Warp's sparse-Jacobian path disagreed
(ChinUp joint velocities by 1.5e-2 rad/s after one 1 ms step, 0.17 relative
after five control steps); with the site on the lunate they agree to float32
rounding, as they do on a two-link test model whose answer does not depend on
where the site is attached (``benchmarks/warp_scene_parity.py``). Site-to-site constraints pin the two points together whatever the
model's ``qpos0`` is (a body-to-body ``connect`` would take its second anchor
from ``qpos0``, where the arms hang at the sides), and the CPU, MJX and MuJoCo
Warp backends all support them. A ``connect`` is a ball joint: the hand may
roll about the bar, as a real grip does. The holds are stiffer than MuJoCo's
default (``solref = (0.01, 1)``, ``solimp = (0.95, 0.99, 0.001)`` instead of
``(0.02, 1)``, ``(0.9, 0.95, 0.001)``): with the defaults the whole body hanging
from them sags ~1 cm off the bar, with these < 1 mm (time constant still
10 physics steps).

Nothing here reads MuJoCo's contact list; the bar geoms never collide with the
body (the hold is the constraint, not friction).
"""

from __future__ import annotations

import mujoco
import numpy as np

#: Hand bodies that hold a bar, left then right.
HAND_BODIES = ("thirdmc_l", "thirdmc_r")
#: Constraint softness of the holds (see the module docstring).
HOLD_SOLREF = (0.01, 1.0)
HOLD_SOLIMP = (0.95, 0.99, 0.001, 0.5, 2.0)


def hand_anchor(spec: mujoco.MjSpec, hand: str) -> tuple[str, tuple[float, float, float]]:
    """The nearest ancestor of ``hand`` with joints, and ``hand``'s origin in that body's frame (m),
    read from the scene's ``MjSpec`` being built (no compilation): each welded body's offset and
    orientation, composed up the tree."""
    body = spec.body(hand)
    if body is None:
        raise ValueError(f"the scene has no body {hand!r}")
    pos = np.zeros(3)
    while not body.joints:  # a point in body's frame, expressed in its parent's
        if body.alt.type != mujoco.mjtOrientation.mjORIENTATION_QUAT or body.frame is not None:
            raise ValueError(f"{body.name}: hand_anchor reads orientations given as quaternions only")
        rotated = np.zeros(3)
        mujoco.mju_rotVecQuat(rotated, pos, np.asarray(body.quat, float) / np.linalg.norm(body.quat))
        pos = np.asarray(body.pos, float) + rotated
        body = body.parent
        if body.name == "world":
            raise ValueError(f"{hand} is welded to the world")
    return body.name, (float(pos[0]), float(pos[1]), float(pos[2]))


def add_grip(spec: mujoco.MjSpec, prefix: str, bar, half_width_m: float) -> None:
    """Pin both hands to ``bar`` (an ``MjsBody``) at ``y = ±half_width_m`` of its frame.

    Adds sites ``{prefix}_hand_l/r`` (at the hand bodies' origins, attached as
    :func:`hand_anchor` says), ``{prefix}_grip_l/r`` (on the bar) and the
    equalities ``{prefix}_hold_l/r``.
    """
    for side, hand, y in (("l", HAND_BODIES[0], half_width_m), ("r", HAND_BODIES[1], -half_width_m)):
        body, pos = hand_anchor(spec, hand)
        spec.body(body).add_site(name=f"{prefix}_hand_{side}", pos=list(pos), size=[0.01, 0, 0], group=4)
        bar.add_site(name=f"{prefix}_grip_{side}", pos=[0.0, y, 0.0], size=[0.01, 0, 0], group=4)
        spec.add_equality(name=f"{prefix}_hold_{side}", type=mujoco.mjtEq.mjEQ_CONNECT,
                          objtype=mujoco.mjtObj.mjOBJ_SITE,
                          name1=f"{prefix}_hand_{side}", name2=f"{prefix}_grip_{side}",
                          solref=list(HOLD_SOLREF), solimp=list(HOLD_SOLIMP))


def hand_positions(s) -> tuple[np.ndarray, np.ndarray]:
    """World positions of the left and right hand-body origins (NumPy state view)."""
    return np.asarray(s.pos("hand_l")), np.asarray(s.pos("hand_r"))


def bar_frame_from_hands(hand_l: np.ndarray, hand_r: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Position and quaternion of a bar whose ``±y`` grip points lie on the two hands.

    The bar's centre is the hands' midpoint, its ``y`` axis points from the
    right hand to the left one and its ``x`` axis stays horizontal.
    """
    y = hand_l - hand_r
    y = y / np.linalg.norm(y)
    x = np.cross(y, [0.0, 0.0, 1.0])
    x = x / np.linalg.norm(x)
    z = np.cross(x, y)
    quat = np.zeros(4)
    mujoco.mju_mat2Quat(quat, np.column_stack([x, y, z]).ravel())
    return 0.5 * (hand_l + hand_r), quat


def grip_residual_m(model: mujoco.MjModel, data: mujoco.MjData, prefix: str) -> float:
    """Largest hand–grip site distance (m) after ``mj_forward`` (0: both holds satisfied)."""
    out = 0.0
    for side in ("l", "r"):
        a = data.site_xpos[model.site(f"{prefix}_hand_{side}").id]
        b = data.site_xpos[model.site(f"{prefix}_grip_{side}").id]
        out = max(out, float(np.linalg.norm(a - b)))
    return out

"""Helpers shared by the locomotion tasks Crawl, Run, Jump and Sidestep (their start noise is
:mod:`mskbench.tasks.starts`'s).

* :func:`torso_angle` — the torso's lean (pelvis→head vector ``u_torso``) in
  the body's heading frame: pitch (+ forward) and roll (+ to the left), rad.
* :func:`heading_frame` — the pelvis heading (forward axis projected on the
  floor) and its left normal, both horizontal unit vectors.
* :func:`flat_foot_heights` / :func:`foot_clearance` — how far each foot is
  off the floor: the smaller of its heel (calcaneus origin) and toes origin
  heights above where they sit when the neutral pose stands flat. Rising on
  the toes lifts the heel ~7 cm but the toes origin < 2 cm, so clearance
  means a lifted foot.
"""

from __future__ import annotations

import numpy as np


def heading_frame(s, xp):
    """``(h_fwd, h_left)``: the pelvis forward axis projected on the floor (unit), and ``ẑ × h_fwd``."""
    f = s.u_fwd
    norm = xp.sqrt(f[0] ** 2 + f[1] ** 2) + 1e-9
    hx, hy = f[0] / norm, f[1] / norm
    zero = xp.zeros_like(hx)
    return xp.stack([hx, hy, zero]), xp.stack([-hy, hx, zero])


def torso_angle(s, xp):
    """Torso lean ``(pitch, roll)`` (2,), rad: the angle of ``u_torso`` from vertical
    in the heading's sagittal plane (+ leaning forward) and frontal plane (+ leaning left).

    In the neutral standing pose of MyoFullBody the head is 0.11 m behind the
    pelvis origin, so the neutral pitch is about −0.18 rad.
    """
    h_fwd, h_left = heading_frame(s, xp)
    u = s.u_torso
    return xp.stack([xp.arctan2(u @ h_fwd, u[2]), xp.arctan2(u @ h_left, u[2])])


def flat_foot_heights(ctx) -> np.ndarray:
    """Heights (m) of the heel (calcaneus) and toes origins, ``(heel, toes)`` averaged over
    both feet, in the neutral pose standing flat on the floor."""
    view = ctx.forward(ctx.pose())
    heel = np.mean(view.foot_heights)
    toes = 0.5 * (view.pos("toes_l")[2] + view.pos("toes_r")[2])
    return np.array([heel, toes], dtype=np.float64)


def foot_clearance(s, flat, xp):
    """Clearance of the left and right foot (2,), m: ``min(z_heel − z_heel,flat, z_toes − z_toes,flat)``.

    ``flat`` is :func:`flat_foot_heights`. Zero standing flat; on tiptoe the
    heel rises ~7 cm but the toes origin (the metatarsal heads) < 2 cm, so
    clearance means the whole foot is lifted.
    """
    heel = s.foot_heights - flat[0]
    toes = xp.stack([s.pos("toes_l")[2], s.pos("toes_r")[2]]) - flat[1]
    return xp.minimum(heel, toes)

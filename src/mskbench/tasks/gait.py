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

import mujoco
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


#: The bodies whose collision geoms make up the feet (heel and toes), left then right.
FOOT_BODIES = ("calcn_l", "toes_l", "calcn_r", "toes_r")


def foot_geoms(model) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The feet's colliding geoms (ids, MuJoCo geom types, sizes), for :func:`feet_lowest_height`; only
    spheres, capsules, ellipsoids and boxes (the MyoFullBody feet are capsules and an ellipsoid)."""
    bodies = [mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, b) for b in FOOT_BODIES]
    ids = [g for g in range(model.ngeom) if model.geom_bodyid[g] in bodies
           and (model.geom_contype[g] or model.geom_conaffinity[g])]
    known = {int(mujoco.mjtGeom.mjGEOM_SPHERE), int(mujoco.mjtGeom.mjGEOM_CAPSULE),
             int(mujoco.mjtGeom.mjGEOM_ELLIPSOID), int(mujoco.mjtGeom.mjGEOM_BOX)}
    bad = [int(model.geom_type[g]) for g in ids if int(model.geom_type[g]) not in known]
    if not ids or bad:
        raise ValueError(f"feet need colliding sphere, capsule, ellipsoid or box geoms; found types {bad or 'none'}")
    return (np.asarray(ids), np.asarray(model.geom_type[ids], dtype=np.int64),
            np.asarray(model.geom_size[ids], dtype=np.float64))


def feet_lowest_height(s, geoms: tuple[np.ndarray, np.ndarray, np.ndarray], xp):
    """The height (m) of the lowest point of any foot geom (:func:`foot_geoms`): above zero, no part of
    either foot is at the floor (z = 0) — both feet have left it."""
    ids, types, size = geoms
    rz = xp.reshape(s.data.geom_xmat[ids], (-1, 3, 3))[:, 2, :]  # world z of each local axis
    centre = s.data.geom_xpos[ids][:, 2]
    ellipsoid = xp.sqrt(xp.sum((rz * size) ** 2, axis=1))
    box = xp.sum(xp.abs(rz) * size, axis=1)
    capsule = size[:, 0] + size[:, 1] * xp.abs(rz[:, 2])
    extent = xp.where(types == int(mujoco.mjtGeom.mjGEOM_SPHERE), size[:, 0],
                      xp.where(types == int(mujoco.mjtGeom.mjGEOM_CAPSULE), capsule,
                               xp.where(types == int(mujoco.mjtGeom.mjGEOM_BOX), box, ellipsoid)))
    return xp.min(centre - extent)


def foot_clearance(s, flat, xp):
    """Clearance of the left and right foot (2,), m: ``min(z_heel − z_heel,flat, z_toes − z_toes,flat)``.

    ``flat`` is :func:`flat_foot_heights`. Zero standing flat; on tiptoe the
    heel rises ~7 cm but the toes origin (the metatarsal heads) < 2 cm, so
    clearance means the whole foot is lifted.
    """
    heel = s.foot_heights - flat[0]
    toes = xp.stack([s.pos("toes_l")[2], s.pos("toes_r")[2]]) - flat[1]
    return xp.minimum(heel, toes)

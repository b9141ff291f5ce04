"""Where a body can bear load, for the whole-body QP (:mod:`mskbench.control.qp`): the model's geometry only.

The candidate support points of a body (its colliding capsules' end spheres, its spheres and ellipsoids) and
the planes of its soles (a body whose capsule ends lie in a plane, as a foot's), from the model at its default
pose; the QP keeps them and, at each state, places them on the supporting surfaces.
"""

from __future__ import annotations

import mujoco
import numpy as np


def rot(quat: np.ndarray) -> np.ndarray:
    """The 3×3 rotation matrix of a unit quaternion."""
    out = np.zeros(9)
    mujoco.mju_quat2Mat(out, quat)
    return out.reshape(3, 3)


def candidate_points(m: mujoco.MjModel, body: int) -> list[tuple[np.ndarray, float]]:
    """(local point, radius) of a body's colliding capsule end spheres, spheres and ellipsoids."""
    out = []
    for g in np.flatnonzero(m.geom_bodyid == body):
        if not (m.geom_contype[g] or m.geom_conaffinity[g]):
            continue
        t, size = int(m.geom_type[g]), m.geom_size[g]
        if t == mujoco.mjtGeom.mjGEOM_CAPSULE:
            axis = rot(m.geom_quat[g])[:, 2] * size[1]
            out += [(m.geom_pos[g] + axis, float(size[0])), (m.geom_pos[g] - axis, float(size[0]))]
        elif t in (mujoco.mjtGeom.mjGEOM_SPHERE, mujoco.mjtGeom.mjGEOM_ELLIPSOID):
            out.append((m.geom_pos[g].copy(), float(size[0] if t == mujoco.mjtGeom.mjGEOM_SPHERE else size.min())))
    return out

def sole_normals(m: mujoco.MjModel) -> dict[int, np.ndarray]:
    """Body id -> the unit normal (body frame) of the plane through its capsules' end points, for bodies
    whose capsule ends (at least three) lie in a plane (a foot's sole): pointing up out of the sole in
    the model's default pose (the body standing)."""
    data = mujoco.MjData(m)
    mujoco.mj_kinematics(m, data)
    out = {}
    for body in range(m.nbody):
        ends: list[np.ndarray] = []
        for g in np.flatnonzero(m.geom_bodyid == body):
            if (m.geom_contype[g] or m.geom_conaffinity[g]) and m.geom_type[g] == mujoco.mjtGeom.mjGEOM_CAPSULE:
                axis = rot(m.geom_quat[g])[:, 2] * m.geom_size[g, 1]
                ends += [m.geom_pos[g] + axis, m.geom_pos[g] - axis]
        if len(ends) < 3:
            continue
        pts = np.array(ends)
        centred = pts - pts.mean(axis=0)
        _, sv, vt = np.linalg.svd(centred)
        if sv[1] < 1e-3 or sv[2] > 0.25 * sv[1]:  # no plane (collinear points or a bulky body)
            continue
        n = vt[2]
        if (data.xmat[body].reshape(3, 3) @ n)[2] < 0:
            n = -n
        out[body] = n
    return out

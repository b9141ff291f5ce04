"""Helpers shared by the obstacle tasks (Hurdle, WalkTurn, PoleWalk).

Everything here is a pure function of arrays written with an array namespace
``xp`` (``numpy`` or ``jax.numpy``), so it traces under ``jax.jit``. Obstacles
are static geometry known to the task as NumPy constants; contact with them is
a geometric test on body points, never MuJoCo's contact list.
"""

from __future__ import annotations

import numpy as np

#: Body roles whose origins stand in for the whole body in geometric contact tests.
BODY_POINT_ROLES = ("pelvis", "torso", "chest", "head", "knee_l", "knee_r", "foot_l", "foot_r",
                    "toes_l", "toes_r", "hand_l", "hand_r")
#: Body roles of the upper body ("head/torso") for fatal-contact tests.
UPPER_BODY_ROLES = ("head", "chest", "torso")


def body_points(s, roles, xp):
    """World positions (K, 3) of the origins of the given body roles."""
    return xp.stack([s.pos(r) for r in roles])


def horizontal_distances(points, centres, xp):
    """Horizontal (xy) distances (K, P) between points (K, ≥2) and vertical axes through centres (P, 2)."""
    d = points[:, None, :2] - xp.asarray(centres)[None, :, :]
    return xp.sqrt(xp.sum(d**2, axis=-1))


def ray_circle_distances(origin_xy, directions, centres, radius: float, max_range: float, xp):
    """Distance along each horizontal ray to the first circle it hits, capped at ``max_range``.

    ``origin_xy`` (2,), ``directions`` (R, 2) unit vectors, ``centres`` (P, 2)
    circle centres of radius ``radius``. A ray that starts inside a circle
    reads 0; a ray that hits nothing within ``max_range`` reads ``max_range``.
    """
    rel = xp.asarray(centres) - origin_xy[None, :]  # (P, 2)
    dirs = xp.asarray(directions)
    t = dirs @ rel.T  # (R, P): projection of each centre on each ray
    dist2 = xp.sum(rel**2, axis=-1)[None, :]  # (1, P)
    perp2 = dist2 - t**2
    half_chord = xp.sqrt(xp.maximum(radius**2 - perp2, 0.0))
    entry = t - half_chord
    inside = dist2 <= radius**2
    hit = xp.logical_and(perp2 <= radius**2, t + half_chord >= 0.0)
    d = xp.where(inside, 0.0, xp.where(xp.logical_and(hit, entry >= 0.0), entry, max_range))
    return xp.minimum(xp.min(d, axis=1), max_range)


def fan_directions(half_angle_rad: float, n_rays: int) -> np.ndarray:
    """``n_rays`` horizontal unit vectors fanned evenly over ``±half_angle_rad`` about +x (right to left)."""
    angles = np.linspace(-half_angle_rad, half_angle_rad, n_rays)
    return np.stack([np.cos(angles), np.sin(angles)], axis=1)

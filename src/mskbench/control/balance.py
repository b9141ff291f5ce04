"""Balance: the centre-of-mass acceleration that keeps the capture point over the support.

The linear inverted pendulum's divergent component of motion (capture point) ``ξ = x + ẋ/ω``,
``ω = √(g / z)``, moves as ``ξ̇ = ω (ξ − p)`` with ``p`` the centre of pressure. Steering ``ξ``
towards a reference ``ξ*`` at rate ``k`` asks for ``p = ξ + (k/ω)(ξ − ξ*)``; the centre of pressure
can only lie in the support polygon, so ``p`` is projected into it (shrunk by a margin) and the
horizontal centre-of-mass acceleration is ``ω² (x − p)``. Height is a PD on ``z``.
"""

from __future__ import annotations

import numpy as np

GRAVITY = 9.81


def omega(com_height_m: float) -> float:
    """The linear inverted pendulum's natural frequency ``√(g / z)`` (1/s) at a centre-of-mass height (at
    least 0.3 m)."""
    return float(np.sqrt(GRAVITY / max(com_height_m, 0.3)))


def convex_hull_2d(points: np.ndarray) -> np.ndarray:
    """The convex hull of 2-D points, counter-clockwise (Andrew's monotone chain)."""
    pts = sorted(map(tuple, np.asarray(points, float)))
    if len(pts) <= 2:
        return np.array(pts)

    def half(seq):
        out: list[tuple[float, float]] = []
        for p in seq:
            while len(out) >= 2 and ((out[-1][0] - out[-2][0]) * (p[1] - out[-2][1])
                                     - (out[-1][1] - out[-2][1]) * (p[0] - out[-2][0])) <= 0:
                out.pop()
            out.append(p)
        return out

    lower, upper = half(pts), half(reversed(pts))
    return np.array(lower[:-1] + upper[:-1])


def project_into(hull: np.ndarray, p: np.ndarray, margin: float) -> np.ndarray:
    """``p`` if it lies in the convex polygon ``hull`` (counter-clockwise) at least ``margin`` from its
    boundary, else the nearest boundary point moved ``margin`` towards the polygon's centroid (so a part
    of the polygon narrower than twice the margin stays usable)."""
    if len(hull) == 0:
        return p
    if len(hull) < 3:
        a, b = hull[0], hull[-1]
        e = b - a
        t = 0.0 if not np.any(e) else float(np.clip((p - a) @ e / (e @ e), 0.0, 1.0))
        return a + t * e
    edges = np.roll(hull, -1, axis=0) - hull
    outward = np.stack([edges[:, 1], -edges[:, 0]], axis=1)
    inside = bool(np.all(np.einsum("ij,ij->i", outward, p - hull) <= 0.0))
    t = np.clip(np.einsum("ij,ij->i", p - hull, edges) / np.maximum(np.einsum("ij,ij->i", edges, edges), 1e-18),
                0.0, 1.0)
    nearest = hull + t[:, None] * edges
    dist = np.linalg.norm(p - nearest, axis=1)
    k = int(np.argmin(dist))
    if inside and dist[k] >= margin:
        return p
    towards = hull.mean(axis=0) - nearest[k]
    length = float(np.linalg.norm(towards))
    return nearest[k] if length < 1e-12 else nearest[k] + min(margin, length) * towards / length


def com_acceleration(com: np.ndarray, com_vel: np.ndarray, ref: np.ndarray, support_xy: np.ndarray,
                     k_capture: float = 2.0, kp_z: float = 10.0, margin_m: float = 0.005,
                     ref_vel: np.ndarray | None = None, beyond: float = 0.0) -> tuple[np.ndarray, np.ndarray]:
    """``(desired CoM acceleration (3,), the centre of pressure it asks for (2,))``.

    ``ref`` is the CoM reference (x, y over the support, z the height), ``support_xy`` the support
    points (n, 2); with no support (airborne) the horizontal acceleration is 0. ``beyond`` (0 to 1):
    the share of the acceleration a centre of pressure outside the support would give that is asked
    for anyway — the centre of pressure cannot give it, a change of angular momentum (the hip
    strategy: trunk, arms, the free leg) can."""
    w = omega(float(com[2]))
    v_ref = np.zeros(3) if ref_vel is None else ref_vel
    xi = com[:2] + com_vel[:2] / w
    xi_ref = ref[:2] + v_ref[:2] / w
    p = xi + (k_capture / w) * (xi - xi_ref)
    acc = np.zeros(3)
    if len(support_xy):
        free = p
        p = project_into(convex_hull_2d(support_xy), p, margin_m)
        acc[:2] = w**2 * (com[:2] - p) + beyond * w**2 * (p - free)
    acc[2] = kp_z * (ref[2] - com[2]) + 2.0 * np.sqrt(kp_z) * (v_ref[2] - com_vel[2])
    return acc, p

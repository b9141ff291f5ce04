"""Static terrain for the terrain tasks (Stairs, StepStones, Slide).

Terrain is a handful of static boxes in the world body, known to the task as
NumPy constants, so that terrain heights, radar readings and slope normals are
computed analytically with the array namespace ``xp`` (NumPy or JAX) from those
constants instead of from the simulator's contact list.

Three kinds:

* :class:`BoxTerrain` — axis-aligned boxes standing on the floor (stair steps,
  platforms). The height at ``(x, y)`` is the highest box top whose footprint
  contains the point, else the floor (0 m).
* :class:`CylinderTerrain` — vertical cylinders standing on the floor (the
  stepping stones); the height is the highest top whose disc contains the point.
* :class:`SlopeProfile` — a piecewise-linear height profile ``z(x)`` along the
  world x axis, built from thin slabs tilted about y whose top faces meet
  exactly at the profile's breakpoints; it spans ``|y| ≤ half_width``. Outside
  the profile the height is the floor's.

Contact bits: terrain geoms have ``contype = 0``, ``conaffinity = 1``: the
body's collision geoms (``contype = 1``) touch them; static geoms never
collide with each other. A ``friction`` given to the terrain is applied with
``priority = 1``, so it (not MuJoCo's default maximum of the two geoms'
coefficients) is the coefficient of every body–terrain contact.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

#: Contact priority of terrain geoms that set their own friction.
TERRAIN_PRIORITY = 1


def _add_box(spec: mujoco.MjSpec, name: str, pos, half, quat=(1.0, 0.0, 0.0, 0.0), rgba=(0.6, 0.6, 0.6, 1.0),
             friction: float | None = None) -> None:
    kwargs = {}
    if friction is not None:
        kwargs = {"friction": [float(friction), 0.005, 0.0001], "priority": TERRAIN_PRIORITY}
    spec.worldbody.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_BOX, pos=[float(v) for v in pos],
                            size=[float(v) for v in half], quat=[float(v) for v in quat],
                            rgba=list(rgba), contype=0, conaffinity=1, **kwargs)


@dataclass(frozen=True)
class BoxTerrain:
    """Axis-aligned static boxes: centres ``(n, 3)`` and half sizes ``(n, 3)`` (m)."""

    prefix: str
    center: np.ndarray
    half: np.ndarray
    friction: float | None = None

    @classmethod
    def from_extents(cls, prefix: str, extents, friction: float | None = None) -> "BoxTerrain":
        """Boxes from rows ``(x_min, x_max, y_min, y_max, z_min, z_max)``."""
        e = np.asarray(extents, dtype=float).reshape(-1, 6)
        if np.any(e[:, 1::2] <= e[:, 0::2]):
            raise ValueError("every box needs min < max on each axis")
        lo, hi = e[:, 0::2], e[:, 1::2]
        return cls(prefix, 0.5 * (lo + hi), 0.5 * (hi - lo), friction)

    @property
    def names(self) -> list[str]:
        return [f"{self.prefix}_{i}" for i in range(len(self.center))]

    @property
    def top(self) -> np.ndarray:
        """Height of each box's top face (m)."""
        return self.center[:, 2] + self.half[:, 2]

    def add_to(self, spec: mujoco.MjSpec, rgba=(0.55, 0.55, 0.6, 1.0)) -> None:
        for name, c, h in zip(self.names, self.center, self.half):
            _add_box(spec, name, c, h, rgba=rgba, friction=self.friction)

    def height(self, x, y, xp):
        """Terrain height (m) under points ``(x, y)`` (same shape, any rank ≥ 0)."""
        x = xp.asarray(x)[..., None]
        y = xp.asarray(y)[..., None]
        inside = (xp.abs(x - self.center[:, 0]) <= self.half[:, 0]) & (xp.abs(y - self.center[:, 1]) <= self.half[:, 1])
        return xp.maximum(xp.max(xp.where(inside, self.top, 0.0), axis=-1), 0.0)


@dataclass(frozen=True)
class CylinderTerrain:
    """Vertical cylinders standing on the floor: centres ``(n, 2)`` (x, y), radii ``(n,)`` and tops ``(n,)`` (m)."""

    prefix: str
    center: np.ndarray
    radius: np.ndarray
    top: np.ndarray
    friction: float | None = None

    def __post_init__(self):
        n = len(self.center)
        if np.shape(self.center) != (n, 2) or np.shape(self.radius) != (n,) or np.shape(self.top) != (n,):
            raise ValueError("center must be (n, 2), radius and top (n,)")
        if np.any(np.asarray(self.radius) <= 0) or np.any(np.asarray(self.top) <= 0):
            raise ValueError("every cylinder needs a positive radius and top")

    @property
    def names(self) -> list[str]:
        return [f"{self.prefix}_{i}" for i in range(len(self.center))]

    def add_to(self, spec: mujoco.MjSpec, rgba=(0.6, 0.4, 0.2, 1.0)) -> None:
        kwargs = {}
        if self.friction is not None:
            kwargs = {"friction": [float(self.friction), 0.005, 0.0001], "priority": TERRAIN_PRIORITY}
        for name, (cx, cy), r, top in zip(self.names, self.center, self.radius, self.top):
            spec.worldbody.add_geom(name=name, type=mujoco.mjtGeom.mjGEOM_CYLINDER,
                                    pos=[float(cx), float(cy), 0.5 * float(top)],
                                    size=[float(r), 0.5 * float(top), 0.0], rgba=list(rgba),
                                    contype=0, conaffinity=1, **kwargs)

    def height(self, x, y, xp):
        """Terrain height (m) under points ``(x, y)`` (same shape, any rank ≥ 0)."""
        x = xp.asarray(x)[..., None]
        y = xp.asarray(y)[..., None]
        d2 = (x - self.center[:, 0]) ** 2 + (y - self.center[:, 1]) ** 2
        inside = d2 <= self.radius ** 2
        return xp.maximum(xp.max(xp.where(inside, self.top, 0.0), axis=-1), 0.0)


@dataclass(frozen=True)
class SlopeProfile:
    """A piecewise-linear ramp ``z(x)`` through breakpoints ``(xs, zs)``, ``|y| ≤ half_width``."""

    prefix: str
    xs: np.ndarray
    zs: np.ndarray
    half_width: float
    thickness: float = 0.5
    friction: float | None = None

    def __post_init__(self):
        if len(self.xs) != len(self.zs) or len(self.xs) < 2 or np.any(np.diff(self.xs) <= 0):
            raise ValueError("xs must increase and match zs, with at least two breakpoints")

    @property
    def slopes(self) -> np.ndarray:
        """``dz/dx`` of each segment."""
        return np.diff(self.zs) / np.diff(self.xs)

    @property
    def names(self) -> list[str]:
        return [f"{self.prefix}_{i}" for i in range(len(self.xs) - 1)]

    def slabs(self):
        """``(centre, half_size, quat)`` of each segment's slab (top face on the segment)."""
        out = []
        for i in range(len(self.xs) - 1):
            dx, dz = self.xs[i + 1] - self.xs[i], self.zs[i + 1] - self.zs[i]
            length = float(np.hypot(dx, dz))
            normal = np.array([-dz, 0.0, dx]) / length
            mid = np.array([0.5 * (self.xs[i] + self.xs[i + 1]), 0.0, 0.5 * (self.zs[i] + self.zs[i + 1])])
            centre = mid - 0.5 * self.thickness * normal
            beta = -np.arctan2(dz, dx)  # rotation about +y taking x̂ onto the segment direction
            quat = np.array([np.cos(beta / 2), 0.0, np.sin(beta / 2), 0.0])
            out.append((centre, np.array([0.5 * length, self.half_width, 0.5 * self.thickness]), quat))
        return out

    def add_to(self, spec: mujoco.MjSpec, rgba=(0.75, 0.8, 0.9, 1.0)) -> None:
        for name, (c, h, q) in zip(self.names, self.slabs()):
            _add_box(spec, name, c, h, quat=q, rgba=rgba, friction=self.friction)

    def _on(self, x, y, xp):
        return (x >= self.xs[0]) & (x <= self.xs[-1]) & (xp.abs(y) <= self.half_width)

    def height(self, x, y, xp):
        """Terrain height (m) under ``(x, y)``; the floor (0) off the profile."""
        x, y = xp.asarray(x), xp.asarray(y)
        return xp.where(self._on(x, y, xp), xp.interp(x, self.xs, self.zs), 0.0)

    def slope(self, x, y, xp):
        """``dz/dx`` under ``(x, y)`` (0 off the profile; a breakpoint takes the segment ahead)."""
        x, y = xp.asarray(x), xp.asarray(y)
        xe = x[..., None]
        in_seg = (xe >= self.xs[:-1]) & (xe < self.xs[1:])
        s = xp.sum(xp.where(in_seg, self.slopes, 0.0), axis=-1)
        return xp.where(self._on(x, y, xp), s, 0.0)

    def normal(self, x, y, xp):
        """Unit upward surface normal ``(−dz/dx, 0, 1)/‖·‖`` under a point (3,)."""
        s = self.slope(x, y, xp)
        inv = 1.0 / xp.sqrt(1.0 + s * s)
        return xp.stack([-s * inv, xp.zeros_like(s), inv], axis=-1)



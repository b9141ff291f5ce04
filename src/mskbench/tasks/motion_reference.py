"""Procedural reference motions for the imitation prior: walk, run and stair climbing.

The paper's motion references (MuscleMimic's motion-capture clips and the
original code's ``walking_medium09_poses.npz``, ``walking_run04_poses.npz``,
``stair_prior_89d.npz``) are gated. These references are generated instead,
from the synthetic gait of :mod:`mskbench.tasks.walk_reference`: sagittal
hip, knee and ankle curves over one stride (right heel strike at phase 0, the
left leg half a stride later, periodic cubic splines through knots, every
other joint neutral, the couplings resolved), the pose placed on the floor at
each phase, and a root path:

==========  ======================  ==================  ===============================================
motion      joint curves            speed, stride       root path
==========  ======================  ==================  ===============================================
``walk``    :data:`~mskbench.tasks  1.2 m/s; period     straight along +x at the speed
            .walk_reference           ``1.1·√(1.2/v)``
            .GAIT_KNOTS` (Walk's)     s (1.1 s at 1.2)
``run``     :data:`RUN_KNOTS`       3.0 m/s; period     straight along +x at the speed
                                    ``0.72·√(3/v)`` s
``stairs``  :data:`STAIR_KNOTS`     0.5 m/s; stride     along +x at the speed from the Stairs start
                                    of two treads       (``x = 0.3`` m), lifted by the staircase
                                    (1.0 m): period     height under the pelvis averaged over one
                                    ``1.0 / v`` s       tread (0.5 m: a ramp of the staircase's mean
                                                        slope, 0.15 m / 0.5 m); it stops ``4.3`` m
                                                        after the start, on the top landing
==========  ======================  ==================  ===============================================

What this reference is not: it has no arm swing, no trunk motion, no flight
phase (the run pose is placed on the floor at every phase, so the reference
root never leaves the ground) and its feet are not placed on the treads (the
stair pose is lifted as a whole; a foot may be inside a step or above one).
It is a smooth, kinematically consistent target for the prior and the
residual, not a recording of a person.

Tracked sites (Eq. 19, :data:`TRACKED_SITES`): the origins of the 16 bodies
of :data:`TRACKED_BODIES` (pelvis, head, and per
side hip, knee, heel, toes, shoulder, elbow, hand) — the same sites the
direct-control report tracks.

Tables (n phases per stride, ``n_samples`` = 200): joint angles and
velocities, the pelvis origin of the floor-placed pose with its root at
``x = y = 0``, the tracked sites relative to the pelvis, and the floor-placed
start states (``qpos``, ``qvel`` with the root moving at the speed). At step
time everything is a linear interpolation in the phase with the array
namespace ``xp`` (NumPy or JAX): the reference at reference time ``τ`` of an
episode that started at phase ``φ₀`` with its root at ``(x₀, y₀)`` is::

    φ(τ)       = (φ₀ + τ / period) mod 1
    d(τ)       = min(v τ, travel_max)                      (travel along +x)
    pelvis(τ)  = (x₀ + d, y₀, lift(x₀ + d)) + pelvis_table(φ)
    sites(τ)   = pelvis(τ) + site_table(φ)
    q(τ)       = q_table(φ),  root velocity (v, 0, v·lift'(x)) while travelling

``τ`` is the episode's *reference* clock (task state ``ref_t``): it advances
with time, or slower when a task paces it (the residual Stairs task).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

import mujoco
import numpy as np

from mskbench.tasks.walk_reference import GAIT_KNOTS, gait_tables

if TYPE_CHECKING:
    from mskbench.tasks.base import InitContext

#: Bodies whose origins are Eq. 19's tracked sites (N = 16): pelvis, head, and per side femur (hip),
#: tibia (knee), calcaneus (heel), toes, humerus (shoulder), ulna (elbow) and third metacarpal (hand).
#: The direct-control report (:mod:`mskbench.paradigms.direct`) tracks the same sites.
TRACKED_BODIES = ("pelvis", "head",
                  "femur_r", "tibia_r", "calcn_r", "toes_r", "femur_l", "tibia_l", "calcn_l", "toes_l",
                  "humerus_r", "ulna_r", "thirdmc_r", "humerus_l", "ulna_l", "thirdmc_l")

#: Eq. 19's tracked sites: the origins of these 16 bodies.
TRACKED_SITES = TRACKED_BODIES

#: Running (right leg; stride fraction, rad; OpenSim signs): stance ~35 % of the stride, knee flexion
#: ~0.7 rad at mid-stance and ~1.9 rad in swing, hip extension to −0.2 rad at toe-off, plantarflexion
#: −0.35 rad at toe-off (textbook sagittal running curves, ~3 m/s).
RUN_KNOTS = {
    "hip_flexion": [(0.00, 0.55), (0.15, 0.30), (0.35, -0.15), (0.45, -0.20), (0.60, 0.10), (0.80, 0.80),
                    (0.90, 0.70)],
    "knee_angle": [(0.00, 0.35), (0.12, 0.70), (0.35, 0.35), (0.50, 0.90), (0.70, 1.90), (0.85, 0.90),
                   (0.95, 0.40)],
    "ankle_angle": [(0.00, 0.05), (0.12, 0.30), (0.35, -0.35), (0.50, -0.15), (0.70, 0.10), (0.90, 0.15)],
}
#: Stair ascent (right leg): foot contact with the hip and knee flexed ~1 rad, extension to the top of
#: the step, swing with ~1.6 rad of knee flexion to clear the next riser (textbook stair-ascent curves).
STAIR_KNOTS = {
    "hip_flexion": [(0.00, 0.95), (0.20, 0.60), (0.45, 0.05), (0.60, 0.10), (0.75, 0.80), (0.88, 1.05)],
    "knee_angle": [(0.00, 1.00), (0.15, 0.85), (0.35, 0.25), (0.55, 0.15), (0.70, 1.10), (0.80, 1.60),
                   (0.92, 1.25)],
    "ankle_angle": [(0.00, 0.15), (0.15, 0.20), (0.45, 0.05), (0.60, -0.25), (0.75, 0.10), (0.90, 0.15)],
}
MOTION_KNOTS = {"walk": GAIT_KNOTS, "run": RUN_KNOTS, "stairs": STAIR_KNOTS}
#: Default speeds (m/s).
MOTION_SPEEDS = {"walk": 1.2, "run": 3.0, "stairs": 0.5}
#: Stride length on the stairs: two treads of the Stairs course (m).
STAIR_STRIDE_M = 1.0
#: Built references by body and settings (building one places 200 poses on the floor: ~1 s).
_CACHE: dict[tuple, "MotionReference"] = {}


def gait_period_s(motion: str, speed_mps: float) -> float:
    """The procedural stride period (s) of ``motion`` at ``speed_mps``: walking ``1.1·√(1.2/v)`` (Walk's
    1.1 s at 1.2 m/s; cadence grows with speed), running ``0.72·√(3/v)``, stairs one stride of two
    treads (``1.0 / v``)."""
    if speed_mps <= 0:
        raise ValueError(f"speed_mps must be > 0, got {speed_mps}")
    if motion == "walk":
        return 1.1 * math.sqrt(1.2 / speed_mps)
    if motion == "run":
        return 0.72 * math.sqrt(3.0 / speed_mps)
    if motion == "stairs":
        return STAIR_STRIDE_M / speed_mps
    raise ValueError(f"unknown motion {motion!r}; valid: {', '.join(MOTION_KNOTS)}")


def lookup(table, phase, xp=np):
    """Rows of ``table`` (n, ...) linearly interpolated at ``phase`` ∈ [0, 1) (periodic)."""
    n = table.shape[0]
    x = (phase % 1.0) * n
    i0f = xp.floor(x)
    frac = x - i0f
    i0 = i0f.astype(xp.int32) % n if hasattr(i0f, "astype") else int(i0f) % n
    i1 = (i0 + 1) % n
    t = xp.asarray(table)
    return t[i0] * (1.0 - frac) + t[i1] * frac


def body_ids(model: mujoco.MjModel, names=TRACKED_SITES) -> np.ndarray:
    ids = np.array([mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, b) for b in names])
    if (ids < 0).any():
        raise ValueError(f"the model has no bodies {', '.join(b for b, i in zip(names, ids) if i < 0)}")
    return ids


@dataclass(frozen=True)
class MotionReference:
    """A tabulated reference motion (see the module docstring for its formulas)."""

    motion: str
    speed_mps: float
    period_s: float
    q_table: np.ndarray  # (n, n_joints)
    qdot_table: np.ndarray  # (n, n_joints)
    pelvis_table: np.ndarray  # (n, 3): pelvis origin, root at x = y = 0, on the floor
    site_table: np.ndarray  # (n, n_sites, 3): tracked sites relative to the pelvis
    start_qpos: np.ndarray  # (n, nq): floor-placed poses, root at x = y = 0
    start_qvel: np.ndarray  # (n, nv)
    lift_x: np.ndarray  # (m,) grid of the root path's lift
    lift_z: np.ndarray  # (m,)
    travel_max_m: float = math.inf

    @classmethod
    def build(cls, ctx: "InitContext", motion: str, speed_mps: float, period_s: float | None = None, *,
              knots: Mapping[str, list[tuple[float, float]]] | None = None,
              lift: tuple[np.ndarray, np.ndarray] | None = None, travel_max_m: float = math.inf,
              n_samples: int = 200) -> "MotionReference":
        """Tabulate ``motion`` (``walk``, ``run``, ``stairs``) at ``speed_mps`` (host, once per env).
        ``period_s`` None: :func:`gait_period_s`. ``lift``: ``(x grid, z)`` of the root path's lift
        (default: flat)."""
        if knots is None:
            if motion not in MOTION_KNOTS:
                raise ValueError(f"unknown motion {motion!r}; valid: {', '.join(MOTION_KNOTS)}")
            knots = MOTION_KNOTS[motion]
        period = gait_period_s(motion, speed_mps) if period_s is None else float(period_s)
        lx, lz = lift if lift is not None else (np.array([-1e3, 1e3]), np.zeros(2))
        key = (ctx.handles.body, ctx.model.nq, ctx.model.nv, ctx.model.nbody, ctx.default_qpos.tobytes(), motion,
               float(speed_mps), period, repr(sorted(knots.items())), np.asarray(lx, float).tobytes(),
               np.asarray(lz, float).tobytes(), float(travel_max_m), n_samples)
        if key not in _CACHE:  # the tables depend on the body and these settings only (read-only arrays)
            _CACHE[key] = cls._tabulate(ctx, motion, speed_mps, period, knots, (lx, lz), travel_max_m, n_samples)
        return _CACHE[key]

    @classmethod
    def _tabulate(cls, ctx, motion, speed_mps, period, knots, lift, travel_max_m, n_samples) -> "MotionReference":
        q_table, qdot_table = gait_tables(ctx.model, ctx.handles, ctx.default_qpos, dict(knots), period, n_samples)
        ids = body_ids(ctx.model)
        pelvis = ctx.handles.bodies["pelvis"]
        h = ctx.handles
        pel, sites, qpos_rows, qvel_rows = [], [], [], []
        for k in range(n_samples):
            base = ctx.default_qpos.copy()
            base[h.joint_qpos] = q_table[k]
            qpos = ctx.pose(base=base)
            ctx.data.qpos[:] = qpos
            mujoco.mj_kinematics(ctx.model, ctx.data)
            p = ctx.data.xpos[pelvis].copy()
            pel.append(p)
            sites.append(ctx.data.xpos[ids] - p)
            qvel = np.zeros(ctx.model.nv)
            qvel[h.joint_dof] = qdot_table[k]
            qvel[0] = speed_mps
            qpos_rows.append(qpos)
            qvel_rows.append(qvel)
        arrays = [q_table, qdot_table, np.array(pel), np.array(sites), np.array(qpos_rows), np.array(qvel_rows),
                  np.asarray(lift[0], float).copy(), np.asarray(lift[1], float).copy()]
        for a in arrays:
            a.setflags(write=False)
        q, qd, pel_t, site_t, start_q, start_qd, lift_x, lift_z = arrays
        return cls(motion, float(speed_mps), period, q, qd, pel_t, site_t, start_q, start_qd, lift_x, lift_z,
                   float(travel_max_m))

    @property
    def n_samples(self) -> int:
        return self.q_table.shape[0]

    # -- the reference at reference time τ ------------------------------------------------------
    def phase(self, ref_t, phase0, xp=np):
        """``φ(τ) = (φ₀ + τ / period) mod 1``."""
        return (phase0 + ref_t / self.period_s) % 1.0

    def travel(self, ref_t, xp=np):
        """``d(τ) = min(v τ, travel_max)`` (m along +x)."""
        return xp.minimum(self.speed_mps * ref_t, self.travel_max_m)

    def lift(self, x, xp=np):
        """The root path's lift at ``x`` (m)."""
        return xp.interp(x, xp.asarray(self.lift_x), xp.asarray(self.lift_z))

    def pelvis(self, ref_t, phase0, root0, xp=np):
        """The reference pelvis origin (3,), world."""
        base = lookup(self.pelvis_table, self.phase(ref_t, phase0, xp), xp)
        x = root0[0] + self.travel(ref_t, xp)
        return base + xp.stack([x, root0[1], self.lift(x, xp)])

    def sites_relative(self, ref_t, phase0, xp=np):
        """The tracked sites relative to the reference pelvis (n_sites, 3)."""
        return lookup(self.site_table, self.phase(ref_t, phase0, xp), xp)

    def sites(self, ref_t, phase0, root0, xp=np):
        """The tracked sites' reference positions (n_sites, 3), world (Eq. 19's ``x^ref``)."""
        return self.pelvis(ref_t, phase0, root0, xp)[None, :] + self.sites_relative(ref_t, phase0, xp)

    def q(self, ref_t, phase0, xp=np):
        """Reference joint angles (n_joints,)."""
        return lookup(self.q_table, self.phase(ref_t, phase0, xp), xp)

    def root_velocity(self, ref_t, root0, rate=1.0, xp=np):
        """Reference root linear velocity (3,): ``rate·(v, 0, v·lift'(x))`` while travelling, else 0."""
        moving = xp.where(self.speed_mps * ref_t < self.travel_max_m, 1.0, 0.0)
        vx = self.speed_mps * rate * moving
        x = root0[0] + self.travel(ref_t, xp)
        h = 0.01
        slope = (self.lift(x + h, xp) - self.lift(x - h, xp)) / (2 * h)
        return xp.stack([vx, 0.0 * vx, vx * slope])

    def start_state(self, phase, xp=np):
        """A floor-placed start at ``phase`` (root at x = y = 0): ``(qpos, qvel)`` interpolated from the tables."""
        return lookup(self.start_qpos, phase, xp), lookup(self.start_qvel, phase, xp)


def smoothed_lift(height_fn, x_min: float = -2.0, x_max: float = 8.0, window_m: float = 0.5,
                  step_m: float = 0.01) -> tuple[np.ndarray, np.ndarray]:
    """``(x, z)``: the terrain height along ``y = 0`` averaged over a ``window_m`` box (a ramp over a
    staircase), never decreasing along +x, on a grid of ``step_m``. ``height_fn(x, y, xp)`` is the
    terrain's height."""
    x = np.arange(x_min, x_max + step_m / 2, step_m)
    z = np.asarray(height_fn(x, np.zeros_like(x), np), float)
    k = max(1, int(round(window_m / step_m)))
    kernel = np.ones(k) / k
    padded = np.concatenate([np.full(k, z[0]), z, np.full(k, z[-1])])
    smooth = np.convolve(padded, kernel, mode="same")[k:-k]
    return x, np.maximum.accumulate(smooth)  # the path only climbs (past the landing's end it stays up)

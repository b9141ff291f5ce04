"""The chair prop and seat geometry shared by Sit and WalkAndSit.

A static armless chair fixed in the world, its seat facing +x (the direction
the body faces), so a body standing in front of it with its back to it sits
down by moving backwards (−x):

* seat: a round plate (a cylinder, radius ``SEAT_RADIUS_M = 0.25`` m, 5 cm
  thick), top surface ``SEAT_TOP_M = 0.42`` m above the floor, front edge at
  ``x = FRONT_EDGE_X_M = −0.25`` m;
* backrest: a round plate (radius 0.22 m, 4 cm thick) behind the seat,
  reclined by ``BACKREST_RECLINE_RAD = 0.35`` rad (~20°) so a sitter can lean
  back;
* four legs: visual only (they collide with nothing: the seat and backrest
  are static and need no support).

Seat and backrest collide with the body (``contype = conaffinity = 1``).
Cylinders, not boxes: MJX's pure-JAX backend has no ellipsoid–box collision
and the body sits on its pelvis ellipsoids.

The *seat target point* (``Δp_chair = p_target − p_pelvis``) is where the
pelvis origin lies when the body sits upright on the seat, thighs on it, hips
1.5 and knees 1.6 rad: 0.20 m behind the front edge, on the seat's centre
line, ``SEATED_PELVIS_ABOVE_SEAT_M`` above the seat top (measured: the pelvis
origin sits that high above the lowest point of the pelvis and thigh collision
geoms in that pose). All of it is numpy constants, so step-time tests are
analytic.
"""

from __future__ import annotations

import mujoco
import numpy as np

SEAT_TOP_M = 0.42
SEAT_RADIUS_M = 0.25
SEAT_THICKNESS_M = 0.05
FRONT_EDGE_X_M = -0.25
CHAIR_Y_M = 0.0
BACKREST_RADIUS_M = 0.22
BACKREST_THICKNESS_M = 0.04
BACKREST_GAP_M = 0.05
BACKREST_RECLINE_RAD = 0.35
#: Pelvis origin height above the seat top when seated upright (hip 1.5, knee 1.6 rad).
SEATED_PELVIS_ABOVE_SEAT_M = 0.173
#: Pelvis origin behind the seat's front edge when seated.
SEATED_PELVIS_BEHIND_EDGE_M = 0.20

BACK_EDGE_X_M = FRONT_EDGE_X_M - 2 * SEAT_RADIUS_M
SEAT_CENTER = np.array([FRONT_EDGE_X_M - SEAT_RADIUS_M, CHAIR_Y_M, SEAT_TOP_M - SEAT_THICKNESS_M / 2])
#: The seat target point p_target (world, m).
SEAT_TARGET = np.array([FRONT_EDGE_X_M - SEATED_PELVIS_BEHIND_EDGE_M, CHAIR_Y_M,
                        SEAT_TOP_M + SEATED_PELVIS_ABOVE_SEAT_M])


def add_chair(spec: mujoco.MjSpec, prefix: str) -> None:
    """Add the chair to the world; geoms are named ``<prefix>_chair_seat`` etc."""
    chair = spec.worldbody.add_body(name=f"{prefix}_chair", pos=[0.0, 0.0, 0.0])
    wood = [0.55, 0.38, 0.22, 1.0]
    cyl = mujoco.mjtGeom.mjGEOM_CYLINDER
    chair.add_geom(name=f"{prefix}_chair_seat", type=cyl, size=[SEAT_RADIUS_M, SEAT_THICKNESS_M / 2, 0.0],
                   pos=SEAT_CENTER.tolist(), rgba=wood, contype=1, conaffinity=1)
    a = BACKREST_RECLINE_RAD
    up = np.array([-np.sin(a), 0.0, np.cos(a)])  # along the reclined plate, upwards
    normal = np.array([np.cos(a), 0.0, np.sin(a)])  # the plate's front face normal (the cylinder axis)
    base = np.array([BACK_EDGE_X_M, CHAIR_Y_M, SEAT_TOP_M])
    centre = base - normal * BACKREST_THICKNESS_M / 2 + up * (BACKREST_RADIUS_M + BACKREST_GAP_M)
    beta = np.pi / 2 - a  # turns the cylinder axis (local z) onto ``normal`` about y
    chair.add_geom(name=f"{prefix}_chair_back", type=cyl, size=[BACKREST_RADIUS_M, BACKREST_THICKNESS_M / 2, 0.0],
                   pos=centre.tolist(), quat=[np.cos(beta / 2), 0.0, np.sin(beta / 2), 0.0], rgba=wood,
                   contype=1, conaffinity=1)
    leg_h = (SEAT_TOP_M - SEAT_THICKNESS_M) / 2
    d = SEAT_RADIUS_M * 0.7
    for i, (dx, dy) in enumerate(((d, d), (d, -d), (-d, d), (-d, -d))):
        chair.add_geom(name=f"{prefix}_chair_leg{i}", type=mujoco.mjtGeom.mjGEOM_BOX, size=[0.02, 0.02, leg_h],
                       pos=[SEAT_CENTER[0] + dx, CHAIR_Y_M + dy, leg_h], rgba=wood,
                       contype=0, conaffinity=0, group=1)


def delta_p_chair(s, xp):
    """``Δp_chair = p_target − p_pelvis`` (3,), m."""
    return xp.asarray(SEAT_TARGET) - s.pelvis_pos


def native_seated(s, xp, xy_tol_m: float, z_tol_m: float):
    """The original code's seated test about the seat target point:
    ``‖Δp_chair^xy‖ < xy_tol ∧ |Δp_chair^z| < z_tol``."""
    d = delta_p_chair(s, xp)
    return xp.logical_and(xp.linalg.norm(d[:2]) < xy_tol_m, xp.abs(d[2]) < z_tol_m)


def over_seat(pelvis_xy, xp, margin_m: float = 0.0):
    """Whether the pelvis origin is above the (round) seat, its radius grown by ``margin_m``."""
    d2 = (pelvis_xy[0] - SEAT_CENTER[0]) ** 2 + (pelvis_xy[1] - SEAT_CENTER[1]) ** 2
    return d2 <= (SEAT_RADIUS_M + margin_m) ** 2


#: Seated test: pelvis over the seat and at most this far above the seated height.
SEATED_HEIGHT_TOL_M = 0.06


def seated(s, xp):
    """Instantaneous seated indicator: pelvis origin over the seat, at seated height (± tolerance)."""
    p = s.pelvis_pos
    return xp.logical_and(over_seat(p[:2], xp), p[2] <= SEAT_TARGET[2] + SEATED_HEIGHT_TOL_M)


#: has_sat_down: seated and pelvis speed below this for SIT_HOLD_STEPS consecutive steps.
SIT_SPEED_MAX_MPS = 0.25
SIT_HOLD_STEPS = 30


def sit_state() -> dict:
    """Initial task-state entries of the sitting state machine."""
    return {"seated_steps": np.int64(0), "has_sat_down": np.bool_(False)}


def advance_sit(s, ts, xp) -> dict:
    """Update ``seated_steps`` (consecutive slow seated steps) and the sticky ``has_sat_down``."""
    slow = xp.linalg.norm(s.vel("pelvis")) < SIT_SPEED_MAX_MPS
    ok = xp.logical_and(seated(s, xp), slow)
    count = xp.where(ok, ts["seated_steps"] + 1, 0)
    return {"seated_steps": count,
            "has_sat_down": xp.logical_or(ts["has_sat_down"], count >= SIT_HOLD_STEPS)}


def missed_seat(s, xp):
    """Pelvis origin below the seat top while not over the seat (grown by 10 cm): sat beside it / on the floor."""
    p = s.pelvis_pos
    return xp.logical_and(p[2] < SEAT_TOP_M, xp.logical_not(over_seat(p[:2], xp, 0.10)))


def mean_hip_knee(s, xp):
    """``(q̄_hip, q̄_knee)``: means of the left/right hip flexion and knee angles (rad)."""
    hip = 0.5 * (s.joint("hip_flexion_l") + s.joint("hip_flexion_r"))
    knee = 0.5 * (s.joint("knee_l") + s.joint("knee_r"))
    return hip, knee

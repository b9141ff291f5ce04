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

The sitting state machine (``advance_sit``) sets the sticky ``has_sat_down`` flag, the Table XII
criterion of Sit and the sit flag of WalkAndSit (our definition: the paper names the flag and the
original's is an instantaneous distance test, which a body falling onto the seat meets). It is set
once the pelvis origin has been over the seat at seated height, slower than 0.25 m/s, with the knees
flexed (mean knee angle ≥ 1.2 rad) and both heels at most 0.45 m ahead of the pelvis origin, for 30
consecutive control steps — and, on Sit, when the pelvis never moved down faster than 1.0 m/s
before that. The last three clauses are Fig. 11(e)'s words against "stiff-legged falling" ("enforces
active knee flexion, requires the feet to be retracted beneath the support area, and introduces a
'soft-landing' reward to limit pelvic descent velocity"); WalkAndSit leaves the soft landing out, as
its own reward asks for a fast descent (Fig. 13(a), ``fast_descent``). docs/tasks.md has the
measurements that chose the thresholds.
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
#: has_sat_down, "active knee flexion" (Fig. 11(e)): the mean knee angle at least this (rad) while seated. The
#: seated pose has 1.6; the zero and random policies fall back onto the seat with the knees at 0.2 or less.
SIT_KNEE_MIN_RAD = 1.2
#: has_sat_down, "the feet retracted beneath the support area" (Fig. 11(e)): both heels (calcaneus origins) at
#: most this far ahead (+x) of the pelvis origin while seated. The seated pose has 0.24 m (the knees 0.35 m);
#: a stiff-legged fall onto the seat leaves them 0.79 m or more ahead.
SIT_FEET_AHEAD_MAX_M = 0.45
#: has_sat_down on Sit, the "soft landing" that "limits pelvic descent velocity" (Fig. 11(e)): the pelvis never
#: moved down faster than this (m/s) before the flag. A controlled sit (a minimum-jerk descent of the pelvis
#: from Sit's start, 0.94 m, to the seated 0.59 m in 1.5 s) peaks at 1.875 · 0.34 / 1.5 = 0.43 m/s; the trivial
#: policies' falls onto the seat at 1.38 m/s or more.
SIT_DESCENT_MAX_MPS = 1.0


def sit_state() -> dict:
    """Initial task-state entries of the sitting state machine."""
    return {"seated_steps": np.int64(0), "has_sat_down": np.bool_(False), "max_descent_mps": np.float64(0.0)}


def knees_flexed(s, xp):
    """"Active knee flexion": the mean of the left and right knee angles at least ``SIT_KNEE_MIN_RAD``."""
    return mean_hip_knee(s, xp)[1] >= SIT_KNEE_MIN_RAD


def feet_retracted(s, xp):
    """"The feet retracted beneath the support area": both heels at most ``SIT_FEET_AHEAD_MAX_M`` ahead (+x, the
    way the chair faces) of the pelvis origin."""
    return xp.max(s.foot_pos[:, 0]) - s.pelvis_pos[0] <= SIT_FEET_AHEAD_MAX_M


def advance_sit(s, ts, xp, soft_landing: bool = True) -> dict:
    """Update the sitting state machine: ``max_descent_mps`` (the pelvis's fastest downward speed so far),
    ``seated_steps`` (consecutive steps seated, slower than ``SIT_SPEED_MAX_MPS``, knees flexed and feet
    retracted, and — with ``soft_landing`` — no descent so far faster than ``SIT_DESCENT_MAX_MPS``) and the
    sticky ``has_sat_down`` (``SIT_HOLD_STEPS`` of them)."""
    v = s.vel("pelvis")
    descent = xp.maximum(ts["max_descent_mps"], -v[2])
    slow = xp.linalg.norm(v) < SIT_SPEED_MAX_MPS
    ok = seated(s, xp) & slow & knees_flexed(s, xp) & feet_retracted(s, xp)
    if soft_landing:
        ok = ok & (descent <= SIT_DESCENT_MAX_MPS)
    count = xp.where(ok, ts["seated_steps"] + 1, 0)
    return {"seated_steps": count,
            "has_sat_down": xp.logical_or(ts["has_sat_down"], count >= SIT_HOLD_STEPS),
            "max_descent_mps": descent}


def sit_trace(ts, soft_landing: bool = True) -> dict:
    """The entries of the sitting state machine that ``has_sat_down`` reads, for ``info["success_trace"]``."""
    trace: dict[str, bool | int | float] = {"has_sat_down": bool(ts["has_sat_down"]),
                                            "seated_steps": int(ts["seated_steps"])}
    if soft_landing:
        trace["max_descent_mps"] = float(ts["max_descent_mps"])
    return trace


def missed_seat(s, xp):
    """Pelvis origin below the seat top while not over the seat (grown by 10 cm): sat beside it / on the floor."""
    p = s.pelvis_pos
    return xp.logical_and(p[2] < SEAT_TOP_M, xp.logical_not(over_seat(p[:2], xp, 0.10)))


def mean_hip_knee(s, xp):
    """``(q̄_hip, q̄_knee)``: means of the left/right hip flexion and knee angles (rad)."""
    hip = 0.5 * (s.joint("hip_flexion_l") + s.joint("hip_flexion_r"))
    knee = 0.5 * (s.joint("knee_l") + s.joint("knee_r"))
    return hip, knee

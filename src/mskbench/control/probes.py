"""Cheat probes: scripted, privileged controllers that aim at the letter of one success criterion, not
its intent.

Each probe is a behaviour of the whole-body QP (like ``hold``: it reads the simulator) that does
something a task's criterion might let through without doing the task. ``mskbench calibrate`` runs
every probe on the tasks it aims at (:data:`PROBE_TASKS`); any success of a probe there is a hole in
the criterion (:func:`mskbench.eval.calibration.free_policy`), and ``--check`` fails on it.

* :class:`CalfRaise` (``calf-raise``, Jump): rises on the toes and back down, the feet never leaving
  the floor — the paper's hop heights (the pelvis above 1.00 m on tiptoe) without a hop.
* :class:`FallBack` (``fall-back``, Sit, WalkAndSit): drives the pelvis backwards and down towards
  the seat target point, then goes limp (no excitation) before it lands: a fall onto the chair.
* :class:`Basket` (``basket``, Catch): both hands driven onto the thrown cube's predicted path, the
  forearms a basket, the fingers never closing: the cube may land in the arms, nothing grips it.
* :class:`Lean` (``lean``, Balance, SingleLegStand): the start kept, the trunk pitched forward to
  0.6 rad (the pitch limit is 0.8): a pose the clauses allow that is not the task's upright stance.
"""

from __future__ import annotations

import mujoco
import numpy as np

from mskbench.control.balance import GRAVITY
from mskbench.control.behaviours import Hold, Standing
from mskbench.control.expert import Context
from mskbench.control.qp import PointTask, Targets, Weights



class CalfRaise(Standing):
    """Calf raises: the ``expert``'s stand (:class:`~mskbench.control.behaviours.Standing`) with the knees
    and hips straightened, the ankles between flat and ``plantarflexion_rad``, the centre of mass raised by
    ``rise_m`` and moved from over the mid-foot to over the forefoot, one raise every ``period_s``; only
    what touches the floor carries load and no sole is laid flat. The posture weighs more than in the
    expert (``posture_weight``) so that the ankles follow their target."""

    tasks = ("Jump",)
    period_s = 2.0
    #: Ankle angle on the toes (rad, negative: plantarflexion) and the centre of mass's rise there (m).
    plantarflexion_rad = -0.5
    rise_m = 0.08
    #: Where the centre of mass is kept, as a share of the way from the heels' to the toes' origins (flat, up).
    com_share = (0.3, 0.8)
    posture_kp = 300.0
    posture_weight = 10.0

    def reset(self, ctx: Context) -> None:
        super().reset(ctx)
        adr = ctx.poses.joint_qpos_adr
        self.straight = [adr(f"{j}_{s}") for j in ("hip_flexion", "knee_angle") for s in "lr"]
        self.ankles = [adr(f"ankle_angle_{s}") for s in "lr"]
        self.heels = [ctx.body(r) for r in ("foot_l", "foot_r")]
        self.toes = [ctx.body(r) for r in ("toes_l", "toes_r")]
        self.start_com_z = float(ctx.start_com[2]) + 0.02  # legs straightened from the micro-squat

    def weights(self) -> Weights:
        return Weights(posture=self.posture_weight)

    def targets(self, ctx: Context) -> Targets:
        t_s = (ctx.step + 1) * ctx.control_dt_s
        wave = 2.0 * np.pi * t_s / self.period_s
        up = 0.5 - 0.5 * np.cos(wave)  # 0 flat .. 1 on the toes
        toes = np.mean([ctx.d.xpos[b][:2] for b in self.toes], axis=0)
        heels = np.mean([ctx.d.xpos[b][:2] for b in self.heels], axis=0)
        self.com_ref[:2] = heels + (self.com_share[0] + (self.com_share[1] - self.com_share[0]) * up) * (toes - heels)
        self.com_ref[2] = self.start_com_z + self.rise_m * up
        t = super().targets(ctx)
        t.posture = t.posture.copy()
        t.posture[self.straight] = 0.0
        t.posture[self.ankles] = up * self.plantarflexion_rad
        t.posture_kp = self.posture_kp
        # only what touches carries load (a lifted heel is no support), and no sole is laid flat
        t.level = frozenset()
        t.supports = ctx.qp.contacts_with(set(self.support_bodies)) or t.supports
        return t


class FallBack(Hold):
    """Fall back onto the seat: the pelvis driven backwards and down towards the chair's seat target
    point for ``drive_s``, then no control at all (``limp``: every excitation 0)."""

    tasks = ("Sit", "WalkAndSit")
    drive_s = 0.35

    def reset(self, ctx: Context) -> None:
        from mskbench.tasks import chair

        super().reset(ctx)
        self.pelvis_body = ctx.body("pelvis")
        self.seat = np.asarray(chair.SEAT_TARGET, float)

    def limp(self, ctx: Context) -> bool:
        return (ctx.step + 1) * ctx.control_dt_s > self.drive_s  # the landing is not controlled

    def targets(self, ctx: Context) -> Targets:
        posture = self.posture.copy()
        t = Targets(posture=posture, com_acc=None, supports=dict(self.surfaces))
        pelvis = ctx.d.xpos[self.pelvis_body]
        gap = self.seat - pelvis
        t.points.append(PointTask(self.pelvis_body, np.zeros(3), pelvis + 0.5 * gap, 2.0 * gap, kp=100.0,
                                  weight=1e4))
        return t


class Basket(Hold):
    """A basket of forearms in the throw's path: both hands driven to the cube's predicted crossing of
    the plane ``reach_m`` ahead of the chest, ``half_gap_m`` either side of it; the fingers keep the
    start's posture (they never close)."""

    tasks = ("Catch",)
    reach_m = 0.35
    half_gap_m = 0.10
    hand_kp = 80.0

    def reset(self, ctx: Context) -> None:
        super().reset(ctx)
        self.hands = (ctx.body("hand_l"), ctx.body("hand_r"))
        self.chest_body = ctx.body("chest")

    def _crossing(self, ctx: Context) -> np.ndarray:
        task, d = ctx.task, ctx.d
        p = d.qpos[task.cube_qpos:task.cube_qpos + 3].copy()
        v = d.qvel[task.cube_dof:task.cube_dof + 3].copy()
        plane_x = float(d.xpos[self.chest_body][0]) + self.reach_m
        if v[0] < -1e-6 and p[0] > plane_x:  # still coming: where it will cross the plane
            t = (plane_x - p[0]) / v[0]
            return p + v * t + np.array([0.0, 0.0, -0.5 * GRAVITY * t * t])
        return p  # passed or at rest: under the cube

    def targets(self, ctx: Context) -> Targets:
        t = super().targets(ctx)
        aim = self._crossing(ctx)
        for hand, side in zip(self.hands, (1.0, -1.0)):
            goal = aim + np.array([0.0, side * self.half_gap_m, -0.03])
            t.points.append(PointTask(hand, np.zeros(3), goal, kp=self.hand_kp))
        return t


class Lean(Hold):
    """The start kept, the trunk pitched forward by ``lean_rad`` about the body's left-right axis."""

    tasks = ("Balance", "SingleLegStand")
    lean_rad = 0.6

    def reset(self, ctx: Context) -> None:
        super().reset(ctx)
        q = np.zeros(4)
        mujoco.mju_axisAngle2Quat(q, np.array([0.0, 1.0, 0.0]), self.lean_rad)
        lean = np.zeros(4)
        mujoco.mju_mulQuat(lean, q, self.orient[self.chest])
        self.orient[self.chest] = lean


#: The probes by name: the behaviour and, through its ``tasks``, the tasks it aims at.
PROBES: dict[str, type[Standing]] = {"calf-raise": CalfRaise, "fall-back": FallBack, "basket": Basket, "lean": Lean}
#: The tasks each probe aims at (it runs on these only).
PROBE_TASKS: dict[str, tuple[str, ...]] = {name: cls.tasks for name, cls in PROBES.items()}

"""Sitting down on the chair: Sit, and WalkAndSit's walk backwards to it.

:class:`Sit` squats down onto the seat behind the body: the pelvis lowered on a minimum-jerk path to just
below its seated height through the balanced crouch of :class:`~mskbench.control.behaviours.Crouch` (knees,
ankles and hips bent together, the trunk leaning so that the centre of mass stays over the feet), until the
pelvis or a thigh touches the seat. Then the seat carries them: the trunk is turned back upright, the hips
and knees held at 1.5 rad and the heels drawn in to ``tuck_m`` ahead of the pelvis.

:class:`WalkAndSit` walks backwards (the gait layer of :mod:`mskbench.control.walking`, facing ahead, its
velocity pointing behind it) towards the chair, no foot landing closer to the seat than its front edge,
and sits (:class:`Sit`, from the state it is in) once a heel has come that close. The expert is
privileged: it reads the chair's place from the task's geometry.
"""

from __future__ import annotations

import copy

import mujoco
import numpy as np

from mskbench.control import gait
from mskbench.control.behaviours import Crouch
from mskbench.control.expert import Context
from mskbench.control.qp import PointTask, Targets
from mskbench.control.walking import SIDES, Walking
from mskbench.tasks import chair

#: Hip and knee angles on the seat (rad): the task's 90-degree pose.
SEATED = {"hip_flexion_l": 1.5, "hip_flexion_r": 1.5, "knee_angle_l": 1.5, "knee_angle_r": 1.5}


class Sit(Crouch):
    """Sit: a balanced squat down onto the seat, then sitting upright on it with the feet drawn in."""

    tasks = ("Sit",)
    #: Deep enough a crouch for the seat: the table goes to this knee flexion.
    max_knee_rad = 2.1
    n_table = 30
    #: The descent's duration (s) and how far below the seated pelvis height it aims (m).
    descent_s = 1.2
    seat_drop_m = 0.03
    #: Weight of the pelvis-height task on the way down.
    height_weight = 1e4
    #: The centre of mass held over the feet on the way down (True), or left to the body's momentum.
    balance_down = True
    #: The pelvis held over the seat's centre line (weight; 0: not).
    centre_weight = 0.0
    centre_kp = 20.0
    #: On the seat, each heel is drawn to ``tuck_m`` ahead of the pelvis (gain ``tuck_kp``) while it is more than
    #: ``tuck_slack_m`` from there; nearer, it is a support.
    tuck_m = 0.3
    tuck_kp = 60.0
    tuck_slack_m = 0.08
    #: The arms held near their start three times as firmly as the rest, on the way down and seated (they flung
    #: up while seated; seeds 0-49: all seated, a hand above the shoulder in 12 % of the steps against 31 %; at 10
    #: the legs were not drawn in on 7 of them: docs/controllers.md "The arms").
    arm_posture_scale = 3.0

    def reset(self, ctx: Context) -> None:
        super().reset(ctx)
        m = ctx.qp.m
        self.seat = next(g for g in range(m.ngeom)
                         if (mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_GEOM, g) or "").endswith("_chair_seat"))
        self.seat_bodies = [self.pelvis_body, ctx.body("femur_l"), ctx.body("femur_r")]
        self.heels = [ctx.body("foot_l"), ctx.body("foot_r")]
        self.z0 = float(ctx.d.xpos[self.pelvis_body][2])
        self.z1 = float(chair.SEAT_TARGET[2]) - self.seat_drop_m
        self.heel_z = float(min(ctx.d.xpos[h][2] for h in self.heels))
        self.t0 = ctx.step
        #: Whether the pelvis or a thigh has touched the seat (from then on the seat carries them).
        self.landed = False
        q_low, _ = self.pose_at(max(self.z1, self._table[0][0]))
        self.q_seated = ctx.poses.pose(SEATED, base=q_low, on_ground=False)

    def _centre(self) -> PointTask:
        return PointTask(self.pelvis_body, np.zeros(3), np.array([0.0, chair.CHAIR_Y_M, 0.0]), axes=(1,),
                         weight=self.centre_weight, kp=self.centre_kp)

    def targets(self, ctx: Context) -> Targets:
        self.landed = self.landed or any(b in ctx.qp.contacts_with() for b in self.seat_bodies)
        if not self.landed:
            return self._descend(ctx)
        supports = self.supports(ctx)
        for b in self.seat_bodies:
            supports[b] = self.seat
        t = Targets(posture=self.q_seated, orientations=dict(self.orient), supports=supports,
                    posture_weight=self.posture_weights)
        if self.centre_weight:
            t.points.append(self._centre())
        pelvis_x = float(ctx.d.xpos[self.pelvis_body][0])
        for heel in self.heels:
            goal_x = pelvis_x + self.tuck_m
            if abs(float(ctx.d.xpos[heel][0]) - goal_x) > self.tuck_slack_m:
                t.supports.pop(heel, None)
                t.points.append(PointTask(heel, np.zeros(3), np.array([goal_x, ctx.d.xpos[heel][1], self.heel_z]),
                                          kp=self.tuck_kp))
        return t

    def _descend(self, ctx: Context) -> Targets:
        blend, rate, _ = gait.min_jerk((ctx.step - self.t0 + 1) * ctx.control_dt_s / self.descent_s)
        z = self.z0 + blend * (self.z1 - self.z0)
        self.over_soles(ctx)  # the feet shift a little as the body goes down: stay over them
        t = super().targets(ctx)
        if t.com_acc is not None:
            t.com_acc[2] = 0.0  # the pelvis height task sets the height
            if not self.balance_down:
                t.com_acc = None
        t.posture, t.orientations = self.pose_at(max(z, self._table[0][0]))
        t.points.append(PointTask(self.pelvis_body, np.zeros(3), np.array([0.0, 0.0, z]),
                                  np.array([0.0, 0.0, rate / self.descent_s * (self.z1 - self.z0)]), axes=(2,),
                                  weight=self.height_weight))
        if self.centre_weight:
            t.points.append(self._centre())
        return t


class WalkAndSit(Walking):
    """WalkAndSit: walk backwards to the chair, then sit (:class:`Sit`) from the state the walk ends in."""

    tasks = ("WalkAndSit",)
    #: The start falls backwards from the first step (its centre of mass over the heels, moving back): no gait
    #: initiation, the first swing starts at once.
    start_s = 0.0
    beyond_support = 1.0
    #: The walk aims the centre of mass at ``sit_at_m`` ahead of the seat target point, on the chair's centre
    #: line: at ``walk_speed`` (reached over ``ramp_s``), slowing within ``slow_m`` of it; sideways, at
    #: ``side_gain`` times the offset (at most 0.3 m/s).
    walk_speed = 0.35
    ramp_s = 0.5
    sit_at_m = 0.3
    slow_m = 0.6
    side_gain = 1.5
    #: No heel lands closer to the seat than ``heel_clear_m`` in front of its front edge; the sit starts in
    #: double support once a heel is within ``sit_heel_m`` of that line.
    heel_clear_m = 0.0
    sit_heel_m = 0.1
    #: The sit after the walk: quicker, the body's backward momentum carrying it onto the seat, held over
    #: the seat's centre line.
    sit_descent_s = 0.8
    sit_centre_weight = 1e3
    #: The sit's arm weight (Sit's own, 3, sat 2 of seeds 0-49 after the walk, against 6 with 1).
    sit_arm_posture_scale = 1.0

    def reset(self, ctx: Context) -> None:
        super().reset(ctx)
        self.elapsed_s = 0.0
        #: The sit, once started (None while walking).
        self.sit: Sit | None = None

    def course(self, ctx: Context, com: np.ndarray) -> tuple[float, np.ndarray]:
        self.elapsed_s += ctx.control_dt_s
        speed = self.walk_speed * min(self.elapsed_s / self.ramp_s, 1.0)
        to = np.array([chair.SEAT_TARGET[0] + self.sit_at_m, chair.CHAIR_Y_M]) - com[:2]
        v = speed * to / max(float(np.linalg.norm(to)), self.slow_m)
        v[1] = float(np.clip(self.side_gain * to[1], -0.3, 0.3))
        return 0.0, v

    def foothold(self, ctx: Context, side: str, heel: np.ndarray) -> np.ndarray:
        out = np.array(heel, float)
        out[0] = max(out[0], chair.FRONT_EDGE_X_M + self.heel_clear_m)
        return out

    def targets(self, ctx: Context) -> Targets:
        if self.sit is None and self.schedule.phase == "double":
            rear = min(float(ctx.d.xpos[self.foot[s][0]][0]) for s in SIDES)
            if rear < chair.FRONT_EDGE_X_M + self.heel_clear_m + self.sit_heel_m:
                self.sit = Sit()
                self.sit.descent_s = self.sit_descent_s
                self.sit.balance_down = False
                self.sit.centre_weight = self.sit_centre_weight
                self.sit.arm_posture_scale = self.sit_arm_posture_scale
                here = copy.copy(ctx)  # the sit starts from the state the walk is in
                here.start_qpos = ctx.d.qpos.copy()
                here.start_com = ctx.qp.com()[0]
                self.sit.reset(here)
        if self.sit is not None:
            return self.sit.targets(ctx)
        return super().targets(ctx)


__all__ = ["SEATED", "Sit", "WalkAndSit"]

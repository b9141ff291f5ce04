"""Walking: the gait layer (:mod:`mskbench.control.gait`) on the whole-body QP.

A contact schedule alternates single support (one foot carries the body, the other swings) and double
support. In single support the swing foot follows a minimum-jerk path, raised at mid-swing, to a
foothold re-planned at every control step from the measured divergent component of motion: where the
DCM will be when the swing ends, less the offset a steady walk at the target speed has at touchdown
(:func:`mskbench.control.gait.steady_offset`), kept within a reachable step. Where the DCM will be is
predicted by integrating the linear pendulum over the rest of the swing under the centre-of-pressure law
this controller itself applies (:meth:`Walking._cop_law`), not with the pressure held at the foot's middle
(:func:`mskbench.control.gait.next_foothold`, option ``predict_law=0``). The foothold may be as wide as
the DCM asks, up to 0.55 m beside the stance foot and never across it; a touch of the swing foot before
80 % of the swing is a scuff, not a landing; the swing path's acceleration is fed forward. The centre of mass
follows the capture-point law over the stance foot towards a reference moving at the target speed;
the pelvis and chest are held upright and facing ahead; the task's reference gait is a weak posture
prior. Foot placement carries most of the balance.

Everything above is in the heading's frame: :meth:`Walking.course` gives the heading to face and the velocity
to walk at (Walk: straight ahead, +x, at the task's speed; :mod:`mskbench.control.courses`: towards waypoints),
the heading turns towards it at ``turn_rate`` and the pelvis, chest and swing foot face it. A start at rest
(PoleWalk, WalkTurn) begins with gait initiation: double support while the centre of mass accelerates ahead and
the DCM moves over the first stance foot, feet dropped onto the floor landing under the centre of mass.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from mskbench.control import gait
from mskbench.control.balance import com_acceleration, convex_hull_2d, project_into
from mskbench.control.behaviours import Standing
from mskbench.control.expert import Context
from mskbench.control.qp import PointTask, Targets, Weights

SIDES = ("l", "r")


@dataclass
class _Schedule(gait.ContactSchedule):
    """The contact schedule, whose double support lasts until the new stance foot carries ``accept_load`` of
    the body weight (``stance_load``, set before :meth:`advance`), at most ``max_double_s``."""

    accept_load: float = 0.0
    max_double_s: float = 0.3
    stance_load: float = 1.0

    def advance(self, dt_s: float, swing_load: float) -> bool:
        if self.phase == "double" and self.elapsed_s + dt_s >= self.double_s - 1e-9:
            if self.stance_load < self.accept_load and self.elapsed_s + dt_s < self.max_double_s - 1e-9:
                self.elapsed_s += dt_s
                return False
        return super().advance(dt_s, swing_load)


class Walking(Standing):
    """Walk ahead at the task's target speed (``speed_mps``; 0: step in place to a stop)."""

    #: The share of the centre-of-mass acceleration the pressure law asks for beyond the support that is asked
    #: for anyway (the hip strategy). Walk: none (with all of it, 0 of Walk's seeds 0-15 walk the 10 s, against 3).
    beyond_support = 0.0
    #: The schedule: single- and double-support times (s).
    single_s = 0.40
    double_s = 0.08
    #: The steady gait's step width (m), the swing's apex (m), the largest step (m, in the walking direction and
    #: sideways) and the largest step against it (m).
    width_m = 0.18
    apex_m = 0.07
    max_step_m = 0.75
    max_back_m = 0.3
    #: The swing foot lands at least ``min_width_m`` and at most ``max_width_m`` to its side of the stance foot (m).
    min_width_m = 0.0
    max_width_m = 0.55
    #: The centre-of-mass height the walk keeps, below the standing start's (m).
    crouch_m = 0.07
    swing_kp = 150.0
    #: The swing path's acceleration fed forward (share).
    swing_ff = 1.0
    swing_weight = 1e3
    posture_kp = 100.0
    #: Weight of the reference gait's posture (the QP's default is 0.1).
    posture_weight = 0.1
    #: The share of the task's target speed walked.
    speed_share = 1.0
    #: Leg posture in the schedule's terms (rad; knee flexion positive) and its weight in the QP: the stance
    #: knee near straight, the swing knee flexed to ``swing_knee_rad`` early in the swing (toe clearance),
    #: back to ``stance_knee_rad`` at touchdown; the swing ankle neutral.
    stance_knee_rad = 0.1
    swing_knee_rad = 1.0
    swing_knee_peak = 0.35
    leg_weight = 100.0
    #: A second swing point task on the toes (weight as a share of the heel's; 0: none), the toes kept level
    #: with the heel, and the swing foot's orientation weight (None: the QP's default).
    toe_share = 1.0
    #: The swing lands (at the latest) when the centre of mass is this far ahead of the stance foot
    #: (m; 0: by time only).
    land_ahead_m = 0.25
    #: In double support, a new stance foot that has not touched down is driven down to the floor where it is.
    press_down = True
    #: A swing foot's load counts as its landing only after this share of the swing (earlier: a scuff).
    landing_after = 0.8
    #: Double support lasts until the new stance foot carries this share of the body weight (at most 0.3 s).
    accept_load = 0.0
    #: The foothold is kept within this share of the straight leg's reach (0: no limit).
    reach_share = 0.8
    #: The foothold's DCM at touchdown is predicted under this controller's centre-of-pressure law (1) or with
    #: the pressure held at the stance foot's middle (0).
    predict_law = 1.0
    #: The centre-of-mass law tracks a DCM moving at the target speed (1) or the measured DCM (0).
    dcm_ff = 1.0
    #: The QP's activation weight (its default: 10).
    activation_weight = 100.0
    #: A pelvis-height task (weight; 0: none) and its gain.
    pelvis_weight = 1e4
    pelvis_kp = 30.0
    #: A start at rest (forward speed below 0.3 m/s) begins in double support (gait initiation) for at least
    #: ``start_s`` and until the first stance foot carries ``start_load`` of the body weight (at most
    #: ``start_max_s``): the centre of mass accelerates ahead while the DCM moves ``start_shift`` of the way
    #: from between the feet to the first stance foot (capture gain ``start_gain``). The heels are held where
    #: the centre of mass is ``start_lead_m`` ahead of the feet's middle (feet in the air land there).
    start_s = 0.6
    start_max_s = 1.5
    start_load = 0.6
    start_shift = 0.6
    start_gain = 1.0
    start_lead_m = 0.1
    #: The fastest turn of the heading (rad/s).
    turn_rate = 0.8

    def reset(self, ctx: Context) -> None:
        super().reset(ctx)
        self.speed = float(getattr(ctx.task, "target_speed_mps", 0.0)) * self.speed_share
        self.ref = getattr(ctx.task, "reference", None)
        self.foot = {s: (ctx.body(f"foot_{s}"), ctx.body(f"toes_{s}")) for s in SIDES}
        m, d = ctx.qp.m, ctx.d
        tree = np.asarray(ctx.env.handles.body_tree)
        self.weight_n = float(m.body_mass[tree].sum()) * gait.GRAVITY
        self.touch = {s: [ctx.env.handles.touch_adr[ctx.env.handles.touch_index(f"{s}_{part}")]
                          for part in ("foot", "toes")] for s in SIDES}
        self.flat = {s: d.xquat[self.foot[s][0]].copy() for s in SIDES}
        for s in SIDES:  # the start's feet may be tilted (mid-stride): their flat orientation is yaw only
            self.flat[s] = _yaw_only(self.flat[s])
        self.joint_qpos = np.asarray(ctx.env.handles.joint_qpos)
        self.joint_dof = np.asarray(ctx.env.handles.joint_dof)
        self.jidx = {s: {j: self._joint_index(ctx, f"{j}_{s}") for j in ("knee_angle", "ankle_angle", "hip_flexion")}
                     for s in SIDES}
        loads = {s: self._load(ctx, s) for s in SIDES}
        xs = {s: float(d.xpos[self.foot[s][0]][0]) for s in SIDES}
        if min(loads.values()) > 0.05 * self.weight_n:  # both down: stand next on the front foot
            stance, phase = max(SIDES, key=lambda s: xs[s]), "double"
        else:
            stance, phase = max(SIDES, key=lambda s: loads[s]), "single"
        #: Gait initiation time left (s): a start at rest.
        self.starting_s = 0.0
        if abs(float(d.qvel[0])) < 0.3 and self.start_s > 0:
            stance, phase, self.starting_s = "l", "double", self.start_max_s
        self.schedule = _Schedule(single_s=self.single_s, double_s=self.double_s, phase=phase, stance=stance,
                                  accept_load=self.accept_load, landing_after=self.landing_after)
        self._lift = {s: d.xpos[self.foot[s][0]].copy() for s in SIDES}
        self._d0 = float(ctx.start_com[0] - self._stance_xy(ctx, stance)[0])
        # the heel's height standing flat on the floor: where a swing ends
        scratch = mujoco.MjData(m)
        scratch.qpos[:] = ctx.poses.pose()
        mujoco.mj_kinematics(m, scratch)
        self.heel_z = float(np.mean([scratch.xpos[self.foot[s][0]][2] for s in SIDES]))
        # the heights the walk keeps, less the crouch: the start's; from a start at rest, the neutral pose's
        # standing on the floor where lower (a start dropped onto the feet is higher)
        com_z, pelvis_z = float(ctx.start_com[2]), float(d.xpos[ctx.body("pelvis")][2])
        if self.starting_s > 0:
            stand_com_z = float(m.body_mass[tree] @ scratch.xipos[tree][:, 2]) / float(m.body_mass[tree].sum())
            com_z, pelvis_z = min(com_z, stand_com_z), min(pelvis_z, float(scratch.xpos[ctx.body("pelvis")][2]))
        self.height = com_z - self.crouch_m
        #: The pelvis height held (the start's pelvis as far below the start as the centre of mass).
        self.pelvis_z = pelvis_z - self.crouch_m
        self.femur = {s: ctx.body(f"femur_{s}") for s in SIDES}
        #: Hip joint to heel, the leg straight (m).
        self.leg_m = float(np.mean([np.linalg.norm(scratch.xpos[self.femur[s]] - scratch.xpos[self.foot[s][0]])
                                    for s in SIDES]))
        self.hip_below_pelvis = float(scratch.xpos[ctx.body("pelvis")][2] - scratch.xpos[self.femur["l"]][2])
        self.toe_z = float(np.mean([scratch.xpos[self.foot[s][1]][2] for s in SIDES]))
        #: From the middle of a flat foot (heel and toes origins) back to its heel (m, along the heading).
        self.heel_back = float(np.mean([0.5 * (scratch.xpos[self.foot[s][1]][0] - scratch.xpos[self.foot[s][0]][0])
                                        for s in SIDES]))
        #: The heading walked (rad about the vertical; every gait task's start faces +x, heading 0) and the
        #: velocity asked for (world, m/s).
        self.heading = 0.0
        self._start_orient = dict(self.orient)
        self.v_goal = np.array([self.speed, 0.0])
        #: Where the heels are held during gait initiation (world x/y): the centre of mass ``start_lead_m`` ahead
        #: of the feet's middle, at the start's width (feet dropped onto the floor land there; feet on it are
        #: pulled that way).
        self._landing = {}
        for s_ in SIDES:
            heel = d.xpos[self.foot[s_][0]][:2].copy()
            heel[0] = float(ctx.start_com[0]) - self.heel_back - self.start_lead_m
            self._landing[s_] = heel
        self.steps = 0
        #: One entry per step landed: the heel's landing error from its foothold (m, x/y), the DCM's offset from
        #: the new stance foot and the steady walk's (m), the forward speed (m/s) — a traced episode's steps.
        self.touchdowns: list[dict] = []

    def _joint_index(self, ctx: Context, name: str) -> int:
        """Where joint ``name`` is among the body's joints (``joint_qpos``)."""
        return int(np.flatnonzero(self.joint_qpos == ctx.poses.joint_qpos_adr(name))[0])

    def _swing_knee(self, s: float) -> tuple[float, float]:
        """The swing knee's flexion and its rate (per unit phase) at swing phase ``s``."""
        a, b, pk = self.stance_knee_rad, self.swing_knee_rad, self.swing_knee_peak
        if s < pk:
            x = 0.5 * np.pi * s / pk
            return a + (b - a) * np.sin(x), (b - a) * np.cos(x) * 0.5 * np.pi / pk
        x = 0.5 * np.pi * min((s - pk) / (1.0 - pk), 1.0)
        return a + (b - a) * np.cos(x), -(b - a) * np.sin(x) * 0.5 * np.pi / (1.0 - pk) if s < 1.0 else 0.0

    def weights(self) -> Weights:
        return Weights(posture=self.posture_weight, activation=self.activation_weight)

    def course(self, ctx: Context, com: np.ndarray) -> tuple[float, np.ndarray]:
        """The heading to face (rad) and the centre of mass's velocity to walk at (world x/y, m/s) now; a
        walk straight ahead (+x) at the target speed. Tasks with a route override this."""
        return 0.0, np.array([self.speed, 0.0])

    def turned(self, ctx: Context, psi: float) -> tuple[float, float]:
        """The heading after one control step's turn towards ``psi`` (at most ``turn_rate`` rad/s), and how far
        ``psi`` is from the heading now (rad, in (-π, π])."""
        err = (psi - self.heading + np.pi) % (2.0 * np.pi) - np.pi
        step = self.turn_rate * ctx.control_dt_s
        return self.heading + float(np.clip(err, -step, step)), float(err)

    def _steer(self, ctx: Context, com: np.ndarray) -> None:
        """Turn the heading towards :meth:`course`'s (:meth:`turned`); face it (pelvis, chest)."""
        psi, self.v_goal = self.course(ctx, com)
        self.heading, _ = self.turned(ctx, psi)
        for b, q0 in self._start_orient.items():
            self.orient[b] = _yaw_quat(self.heading, q0)

    def foothold(self, ctx: Context, side: str, heel: np.ndarray) -> np.ndarray:
        """Where the swing foot ``side``'s heel lands (world, m), given the gait's foothold ``heel``: there.
        Tasks whose ground limits where a foot may go override this."""
        return heel

    def _load(self, ctx: Context, side: str) -> float:
        return float(ctx.env.data.sensordata[self.touch[side]].sum())

    def _stance_xy(self, ctx: Context, side: str) -> np.ndarray:
        d = ctx.d
        return 0.5 * (d.xpos[self.foot[side][0]][:2] + d.xpos[self.foot[side][1]][:2])

    def supports(self, ctx: Context) -> dict[int, int]:
        """The scheduled stance foot's (or both feet's) bodies that touch the floor."""
        sch = self.schedule
        sides = (sch.stance,) if sch.phase == "single" else SIDES
        touching = ctx.qp.contacts_with({b for s in sides for b in self.foot[s]})
        return {b: g for b, g in touching.items()}

    def targets(self, ctx: Context) -> Targets:
        d, sch, dt = ctx.d, self.schedule, ctx.control_dt_s
        swing = sch.swing
        com, vel = ctx.qp.com()
        self._steer(ctx, com)
        u = np.array([np.cos(self.heading), np.sin(self.heading)])  # ahead
        sense = -1.0 if float(self.v_goal @ u) < 0.0 else 1.0  # walking ahead (1) or backwards (-1)
        if sch.phase == "single" and self.land_ahead_m > 0:
            # the swing's phase runs at least as fast as the centre of mass passes the stance foot: it lands
            # when the centre of mass is ``land_ahead_m`` past it (in the walking direction), however fast the
            # body goes
            ahead = sense * float((com[:2] - self._stance_xy(ctx, sch.stance)) @ u)
            prog = (ahead - self._d0) / max(self.land_ahead_m - self._d0, 0.05)
            sch.elapsed_s = max(sch.elapsed_s, min(prog, 1.0) * self.single_s - dt)
        sch.stance_load = self._load(ctx, sch.stance) / self.weight_n
        if self.starting_s > 0:
            self.starting_s -= dt
            if self.start_max_s - self.starting_s >= self.start_s and sch.stance_load >= self.start_load:
                self.starting_s = 0.0
            else:
                sch.elapsed_s = -dt  # double support holds until the initiation is over
        if sch.advance(dt, self._load(ctx, swing) / self.weight_n):
            if sch.phase == "double":
                self.steps += 1
                self._touchdown(ctx, com, vel)
            else:  # a new swing starts from where that foot is
                self._lift[sch.swing] = d.xpos[self.foot[sch.swing][0]].copy()
                self._d0 = sense * float((com[:2] - self._stance_xy(ctx, sch.stance)) @ u)
        w = gait.omega(float(com[2]))
        ref = np.array([com[0], com[1], self.height])  # the speed is regulated, not a position
        supports = self.supports(ctx)
        pts = ctx.qp.support_points(supports)
        xy = np.array([p[1][:2] for p in pts]) if pts else np.zeros((0, 2))
        acc, _ = com_acceleration(com, vel, ref, xy, k_capture=self.capture_gain, kp_z=self.com_height_kp,
                                  ref_vel=np.array([*self.v_goal, 0.0]), beyond=self.beyond_support)
        if self.dcm_ff and len(xy):
            # the DCM moving at the target speed (not held still): the pendulum about the pressure law's point
            hull = convex_hull_2d(xy)
            cop = self._cop_law(com[:2], vel[:2], w, hull)
            acc[:2] = w**2 * (com[:2] - cop)
            if self.beyond_support > 0:  # the hip strategy: a share of what the support cannot give
                free = com[:2] + (1.0 / w + self.capture_gain / w**2) * (vel[:2] - self.v_goal)
                acc[:2] += self.beyond_support * w**2 * (cop - free)
        if self.starting_s > 0 and len(xy):
            acc[:2] = w**2 * (com[:2] - self._start_cop(ctx, com[:2], vel[:2], w, convex_hull_2d(xy)))
        posture = self.posture.copy()
        posture_vel = None
        if self.ref is not None:
            phase = (float(ctx.task_state["phase"]) + dt / ctx.task.period_s) % 1.0
            posture[self.joint_qpos] = self.ref.q_ref(phase)
            posture_vel = np.zeros(ctx.qp.nv)
            posture_vel[self.joint_dof] = self.ref.qdot_ref(phase)
        pw = None if self.arm_scale is None else self.posture_weight * self.arm_scale
        if self.leg_weight > 0:
            if posture_vel is None:
                posture_vel = np.zeros(ctx.qp.nv)
            if pw is None:
                pw = np.full(self.joint_qpos.size, self.posture_weight)
            stance_sides = SIDES if sch.phase == "double" else (sch.stance,)
            for s_ in SIDES:
                k = self.jidx[s_]["knee_angle"]
                if s_ in stance_sides:
                    posture[self.joint_qpos[k]] = self.stance_knee_rad
                    posture_vel[self.joint_dof[k]] = 0.0
                else:
                    q, dq = self._swing_knee(sch.swing_phase)
                    posture[self.joint_qpos[k]] = q
                    posture_vel[self.joint_dof[k]] = dq / self.single_s
                    a = self.jidx[s_]["ankle_angle"]
                    posture[self.joint_qpos[a]] = 0.0
                    posture_vel[self.joint_dof[a]] = 0.0
                    pw[a] = self.leg_weight
                pw[k] = self.leg_weight
        t = Targets(posture=posture, posture_vel=posture_vel, posture_weight=pw, posture_kp=self.posture_kp,
                    com_acc=acc,
                    orientations=dict(self.orient), supports=supports,
                    level=frozenset(b for s in SIDES for b in self.foot[s] if b in supports))
        for pressed in (SIDES if sch.phase == "double" and self.starting_s > 0 else (sch.stance,)):
            if self.press_down and (self.starting_s > 0 or not any(b in supports for b in self.foot[pressed])):
                heel = self.foot[pressed][0]
                goal = d.xpos[heel].copy()
                goal[2] = self.heel_z
                if self.starting_s > 0:  # gait initiation: the heels held where the start set them
                    goal[:2] = self._landing[pressed]
                t.points.append(PointTask(heel, np.zeros(3), goal, np.zeros(3), kp=self.swing_kp,
                                          weight=self.swing_weight))
        if sch.phase == "single":
            stance_xy = self._stance_xy(ctx, sch.stance)
            xi = gait.dcm(com[:2], vel[:2], w)
            rot = np.array([[u[0], -u[1]], [u[1], u[0]]])  # heading frame -> world
            b_body = gait.steady_offset(float(self.v_goal @ u), self.single_s + self.double_s, self.width_m, w,
                                        swing == "l")
            b = rot @ b_body
            if self.predict_law and len(xy):
                # the DCM at touchdown under the centre-of-pressure law this controller applies (the pendulum
                # integrated over the rest of the swing), then held at the stance foot's middle in double support
                xi_T = self._dcm_under_law(com[:2], vel[:2], w, convex_hull_2d(xy), sch.remaining_s())
                xi_T = gait.dcm_at_step_end(xi_T, stance_xy, w, self.double_s)
                goal_xy = xi_T - b
            else:
                goal_xy = gait.next_foothold(xi, stance_xy, w, sch.remaining_s() + self.double_s, b_body, self.heading)
            # a reachable step from the stance foot, the swing foot on its own side of it
            side = 1.0 if swing == "l" else -1.0
            step = rot.T @ (goal_xy - stance_xy)
            fwd, back = (self.max_step_m, self.max_back_m) if sense > 0 else (self.max_back_m, self.max_step_m)
            step[0] = float(np.clip(step[0], -back, fwd))
            step[1] = side * float(np.clip(side * step[1], self.min_width_m, self.max_width_m))
            heel = self.foot[swing][0]
            goal = np.array([*(stance_xy + rot @ step - self.heel_back * u), self.heel_z])
            if self.reach_share > 0:
                # within the leg's reach from where the hip will be at touchdown (heel on the floor)
                hip = d.xpos[self.femur[swing]]
                hip_x = float((hip[:2] + vel[:2] * sch.remaining_s()) @ u)
                hip_z = min(float(hip[2]), self.pelvis_z - self.hip_below_pelvis)  # its reach at the walk's height
                drop = hip_z - self.heel_z
                reach = self.reach_share * float(np.sqrt(max(self.leg_m**2 - drop**2, 0.0)))
                # (in the walking direction)
                goal[:2] -= sense * u * max(sense * (float(goal[:2] @ u) - hip_x) - reach, 0.0)
            #: The swing's foothold (the heel's world position at touchdown).
            self.goal = goal = self.foothold(ctx, swing, goal)
            pos, v, acc = gait.swing_point(self._lift[swing], goal, sch.swing_phase, self.single_s, self.apex_m)
            t.points.append(PointTask(heel, np.zeros(3), pos, v, kp=self.swing_kp, weight=self.swing_weight,
                                      acceleration=acc * self.swing_ff))
            t.orientations[heel] = _yaw_quat(self.heading, self.flat[swing])
            if self.toe_share > 0:
                toe_off = np.array([*(2.0 * self.heel_back * u), self.toe_z - self.heel_z])
                t.points.append(PointTask(self.foot[swing][1], np.zeros(3), pos + toe_off, v, kp=self.swing_kp,
                                          weight=self.swing_weight * self.toe_share, acceleration=acc * self.swing_ff))
        if self.pelvis_weight > 0:
            t.points.append(PointTask(self.pelvis, np.zeros(3), np.array([0.0, 0.0, self.pelvis_z]), np.zeros(3),
                                      kp=self.pelvis_kp, weight=self.pelvis_weight, axes=(2,)))
        return t


    def _touchdown(self, ctx: Context, com: np.ndarray, vel: np.ndarray) -> None:
        """Note the step that just landed in :attr:`touchdowns`."""
        side = self.schedule.stance
        heel = ctx.d.xpos[self.foot[side][0]]
        w = gait.omega(float(com[2]))
        xi = gait.dcm(com[:2], vel[:2], w)
        goal = getattr(self, "goal", None)
        u = np.array([np.cos(self.heading), np.sin(self.heading)])
        rot = np.array([[u[0], -u[1]], [u[1], u[0]]])  # heading frame -> world
        offset = rot.T @ (xi - self._stance_xy(ctx, side))
        wanted = gait.steady_offset(float(self.v_goal @ u), self.single_s + self.double_s, self.width_m, w, side == "l")
        self.touchdowns.append({
            "step": self.steps, "side": side, "control_step": int(ctx.step),
            "landing_error_m": None if goal is None else [float(v) for v in heel[:2] - goal[:2]],
            "dcm_offset_m": [float(v) for v in offset], "wanted_offset_m": [float(v) for v in wanted],
            "speed_mps": float(vel[:2] @ u)})

    def _cop_law(self, com_xy: np.ndarray, vel_xy: np.ndarray, w: float, hull: np.ndarray) -> np.ndarray:
        """The centre of pressure the centre-of-mass law asks for (``dcm_ff``): under the centre of mass at the
        target speed, ahead of it when faster, behind when slower, kept in the support ``hull``."""
        dv = vel_xy - self.v_goal
        return project_into(hull, com_xy + (1.0 / w + self.capture_gain / w**2) * dv, 0.005)

    def _start_cop(self, ctx: Context, com_xy: np.ndarray, vel_xy: np.ndarray, w: float,
                   hull: np.ndarray) -> np.ndarray:
        """Gait initiation's centre of pressure: ahead as :meth:`_cop_law`; sideways, the pressure that moves
        the DCM ``start_shift`` of the way over the first stance foot (the capture-point law)."""
        cop = self._cop_law(com_xy, vel_xy, w, hull)
        mid = 0.5 * (self._stance_xy(ctx, "l")[1] + self._stance_xy(ctx, "r")[1])
        goal_y = mid + self.start_shift * (self._stance_xy(ctx, self.schedule.stance)[1] - mid)
        xi_y = com_xy[1] + vel_xy[1] / w
        return project_into(hull, np.array([cop[0], xi_y + self.start_gain * (xi_y - goal_y)]), 0.005)

    def _dcm_under_law(self, com_xy: np.ndarray, vel_xy: np.ndarray, w: float, hull: np.ndarray,
                       duration_s: float, substeps_s: float = 0.01) -> np.ndarray:
        """The DCM after ``duration_s`` of the linear pendulum under :meth:`_cop_law` (explicit Euler)."""
        x, v = np.array(com_xy, float), np.array(vel_xy, float)
        n = int(np.ceil(max(duration_s, 0.0) / substeps_s))
        h = duration_s / n if n else 0.0
        for _ in range(n):
            a = w**2 * (x - self._cop_law(x, v, w, hull))
            x, v = x + h * v, v + h * a
        return gait.dcm(x, v, w)


def _yaw(quat: np.ndarray) -> float:
    """The heading of ``quat`` (w, x, y, z): the angle of its x axis about the vertical."""
    mat = np.zeros(9)
    mujoco.mju_quat2Mat(mat, quat)
    return float(np.arctan2(mat[3], mat[0]))


def _yaw_quat(angle: float, quat: np.ndarray | None = None) -> np.ndarray:
    """A turn by ``angle`` about the vertical (w, x, y, z), applied to ``quat`` when given."""
    q = np.array([np.cos(angle / 2), 0.0, 0.0, np.sin(angle / 2)])
    if quat is None:
        return q
    out = np.zeros(4)
    mujoco.mju_mulQuat(out, q, quat)
    return out


def _yaw_only(quat: np.ndarray) -> np.ndarray:
    """The rotation about the vertical axis in ``quat`` (w, x, y, z)."""
    return _yaw_quat(_yaw(quat))


class Walk(Walking):
    """Walk: 1.2 m/s straight ahead, the task's reference gait as the posture prior."""

    tasks = ("Walk",)


__all__ = ["Walk", "Walking"]

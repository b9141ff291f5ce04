"""Task behaviours: what the expert asks of the body on each task, from the task's own definition.

Every behaviour here stands on something: the bodies that carry the weight (the feet, or whatever
touches the floor or a prop at the start) are the QP's supports, the centre of mass is kept over
them by the capture-point law of :mod:`mskbench.control.balance`, the pelvis and the chest keep
their orientation and the joints are pulled (weakly) towards a posture. Task behaviours change the
posture, the centre-of-mass reference, the supports or add point tasks (a hand, a lifted foot).

* :class:`Hold` — the probe: the only target is the episode's start (its pose, its centre of mass,
  the bodies touching something at the start as supports). It does nothing clever; a task it solves
  asks for no more than keeping the start.
"""

from __future__ import annotations

import mujoco
import numpy as np

from mskbench.control.balance import GRAVITY, com_acceleration, convex_hull_2d, project_into
from mskbench.control.balance import omega as pendulum_omega
from mskbench.control.expert import Behaviour, Context
from mskbench.control.qp import PointTask, Targets, Weights

FEET = ("foot_l", "toes_l", "foot_r", "toes_r")
#: The friction coefficient of the behaviours that plan their support forces well inside the floor's
#: (Reach, Powerlift, Squat): at the default the QP planned the feet pushing against each other, the push
#: outlasted a foot's load as the weight shifted, and the unloaded foot slid (docs/controllers.md).
INSIDE_FRICTION = 0.4
#: The gain that brings a heel or toes hovering above the floor back down (Stand, SingleLegStand; chosen on
#: Stand's seeds 12 and 15, where a support 1 cm up still counted and the body fell: docs/controllers.md).
SEAT_KP = 400.0


def _chain(m: mujoco.MjModel, body: int) -> list[int]:
    """``body`` and its ancestors up to (not including) the world."""
    out = []
    while body > 0:
        out.append(body)
        body = int(m.body_parentid[body])
    return out


def arm_roots(m: mujoco.MjModel, hand_l: int, hand_r: int) -> tuple[int, int]:
    """The bodies where the left and the right arm leave the trunk: each hand's topmost ancestor that is not
    the other hand's (MyoFullBody: the clavicles)."""
    left, right = _chain(m, hand_l), _chain(m, hand_r)
    return [b for b in left if b not in right][-1], [b for b in right if b not in left][-1]


def subtree(m: mujoco.MjModel, root: int) -> list[int]:
    """``root`` and every body below it."""
    return [b for b in range(m.nbody) if root in _chain(m, b)]


def arm_joints(m: mujoco.MjModel, joint_dof: np.ndarray, hand_l: int, hand_r: int) -> np.ndarray:
    """Per joint (the order of ``joint_dof``): whether it moves an arm — its body descends from one of
    :func:`arm_roots` (MyoFullBody: the shoulder girdle, the shoulder, the elbow, the forearm, the wrist and the
    fingers)."""
    arms = {b for root in arm_roots(m, hand_l, hand_r) for b in subtree(m, root)}
    return np.array([int(m.dof_bodyid[dof]) in arms for dof in joint_dof])


class Standing(Behaviour):
    """Stand on the feet: posture and orientations of the start, the centre of mass over the feet.

    ``com_margin_m``: the centre-of-mass reference is the start's, moved into the feet's support
    polygon shrunk by this margin (the Stand start has its centre of mass 4.5 cm in front of the
    heels' back edge, where little push is left to stop a backward sway)."""

    com_margin_m = 0.06
    capture_gain = 2.0
    com_height_kp = 10.0
    #: The share of a centre-of-mass acceleration beyond what the support allows that is asked for anyway
    #: (the hip strategy; :func:`mskbench.control.balance.com_acceleration`).
    beyond_support = 0.0
    #: Support roles (the feet by default).
    support_roles: tuple[str, ...] = FEET
    #: The arms' posture weight as a multiple of the other joints' (:func:`arm_joints`); 1: all alike.
    arm_posture_scale = 1.0
    #: A supporting body hovering above its surface is brought back down at this gain (``Targets.support_seat_kp``).
    seat_kp = 0.0

    def reset(self, ctx: Context) -> None:
        d = ctx.d
        self.posture = ctx.start_qpos.copy()
        self.pelvis = ctx.body("pelvis")
        self.chest = ctx.body("chest")
        self.orient = {self.pelvis: d.xquat[self.pelvis].copy(), self.chest: d.xquat[self.chest].copy()}
        self.floor = mujoco.mj_name2id(ctx.qp.m, mujoco.mjtObj.mjOBJ_GEOM, "floor")
        self.support_bodies = [ctx.body(r) for r in self.support_roles]
        #: The feet among the supports: laid flat on their surface.
        self.feet = frozenset(ctx.body(r) for r in FEET)
        touching = ctx.qp.contacts_with(set(self.support_bodies))
        self.surfaces = {b: touching.get(b, self.floor) for b in self.support_bodies}
        self.com_ref = ctx.start_com.copy()
        #: Per joint, the multiple of its posture weight (the arms' :attr:`arm_posture_scale`; None: all 1).
        self.arm_scale: np.ndarray | None = None
        self.posture_weights = None
        if self.arm_posture_scale != 1.0:
            arms = arm_joints(ctx.qp.m, ctx.qp.joint_dof, ctx.body("hand_l"), ctx.body("hand_r"))
            self.arm_scale = np.where(arms, self.arm_posture_scale, 1.0)
            self.posture_weights = ctx.qp.weights.posture * self.arm_scale
        pts = self.sole_xy(ctx)
        if len(pts) >= 3 and self.com_margin_m > 0:
            self.com_ref[:2] = project_into(convex_hull_2d(pts), self.com_ref[:2], self.com_margin_m)

    def sole_xy(self, ctx: Context) -> np.ndarray:
        """The horizontal positions of every candidate point of the supporting bodies, touching or not
        (the whole soles: a reference over the feet must not depend on a heel lifted by the start's noise)."""
        d = ctx.d
        pts = [d.xpos[b][:2] + (d.xmat[b].reshape(3, 3) @ local)[:2]
               for b in self.support_bodies for local, _ in ctx.qp.candidates[b]]
        return np.array(pts) if pts else np.zeros((0, 2))

    def over_soles(self, ctx: Context) -> None:
        """Move the centre-of-mass reference (horizontally) over the middle of :meth:`sole_xy`'s points."""
        pts = self.sole_xy(ctx)
        if len(pts):
            self.com_ref[:2] = 0.5 * (pts.min(axis=0) + pts.max(axis=0))

    def pose_orientations(self, ctx: Context, qpos: np.ndarray, bodies) -> dict[int, np.ndarray]:
        """The world orientations of ``bodies`` in the pose ``qpos`` (forward kinematics on a scratch copy)."""
        scratch = getattr(self, "_scratch", None)
        if scratch is None:
            scratch = self._scratch = mujoco.MjData(ctx.qp.m)
        scratch.qpos[:] = qpos
        mujoco.mj_kinematics(ctx.qp.m, scratch)
        return {b: scratch.xquat[b].copy() for b in bodies}

    def supports(self, ctx: Context) -> dict[int, int]:
        touching = ctx.qp.contacts_with(set(self.support_bodies))
        self.surfaces.update(touching)
        return dict(self.surfaces)

    def support_xy(self, ctx: Context) -> np.ndarray:
        pts = ctx.qp.support_points(self.supports(ctx))
        return np.array([p[1][:2] for p in pts]) if pts else np.zeros((0, 2))

    def com_acc(self, ctx: Context) -> np.ndarray:
        com, vel = ctx.qp.com()
        acc, _ = com_acceleration(com, vel, self.com_ref, self.support_xy(ctx), k_capture=self.capture_gain,
                                  kp_z=self.com_height_kp, beyond=self.beyond_support)
        return acc

    def targets(self, ctx: Context) -> Targets:
        return Targets(posture=self.posture, com_acc=self.com_acc(ctx), orientations=dict(self.orient),
                       supports=self.supports(ctx), level=self.feet, posture_weight=self.posture_weights,
                       support_seat_kp=self.seat_kp)


class Hold(Standing):
    """Keep the episode's start: its pose, orientations and centre of mass, on whatever touches the
    floor or a prop at the start (no centre-of-mass task when nothing does)."""

    com_margin_m = 0.0

    def reset(self, ctx: Context) -> None:
        own = {int(b) for b in ctx.env.handles.body_tree}
        self.support_roles = ()
        super().reset(ctx)
        touching = ctx.qp.contacts_with(own)
        self.support_bodies = sorted(touching)
        self.surfaces = dict(touching)

    def com_acc(self, ctx: Context):
        if not self.support_bodies:
            return None
        return super().com_acc(ctx)


class Stand(Standing):
    """Stand (Table VI): stand still where the episode starts; a heel or toes that rise off the floor are
    brought back down (without, seeds 12 and 15 of 50 fall: a support hovering 1 cm up still counted); the
    centre of mass held 8 cm inside the soles' outline, not 6 (the start's is 4.5 cm in front of the heels' back
    edge; at 6 cm, under action noise of 0.2, every one of seeds 0-19 fell, seed 0 drifting back over the heels;
    at 8, 2 of seeds 0-9; at 10, none, but 3 of 22 episodes without noise then fell, a heel unloaded and rising:
    docs/controllers.md)."""

    tasks = ("Stand",)
    seat_kp = SEAT_KP
    com_margin_m = 0.08


class Powerlift(Standing):
    """Powerlift: hold the bar overhead standing (its start), the lumbar spine at the start's flexion."""

    tasks = ("Powerlift",)
    friction = INSIDE_FRICTION


class SingleLegStand(Standing):
    """SingleLegStand: stand on the right foot, the centre of mass over it, the left foot kept up."""

    tasks = ("SingleLegStand",)
    support_roles = ("foot_r", "toes_r")
    com_margin_m = 0.03
    beyond_support = 1.0
    #: The arms held near their start ten times as firmly as the rest (seeds 0-49: 70 % against 66 % at 1, within
    #: the spread; a hand above the shoulder in 12 % of the steps, nearly all of them in falls: docs/controllers.md).
    arm_posture_scale = 10.0
    #: The stance foot's heel or toes, risen off the floor, brought back down (as Stand's).
    seat_kp = SEAT_KP

    def reset(self, ctx: Context) -> None:
        super().reset(ctx)
        self.over_soles(ctx)  # over the middle of the stance foot
        self.lifted = ctx.body("foot_l")
        self.lift_z = float(ctx.d.xpos[self.lifted][2])

    def weights(self) -> Weights:
        # one narrow foot: the centre of mass outweighs everything else (measured: 10/12 episodes at 1e5
        # against 5/8 at the default 1e4)
        return Weights(com=1e5)

    def targets(self, ctx: Context) -> Targets:
        t = super().targets(ctx)
        t.points.append(PointTask(self.lifted, np.zeros(3), np.array([0.0, 0.0, max(self.lift_z, 0.2)]), axes=(2,)))
        return t


class Balance(Standing):
    """Balance: stand on the board, the body upright, the centre of mass over the board's contact with
    the ball. The board rolls on the ball, so its contact point — the whole system's centre of pressure —
    moves by ``r·θ`` when the board tilts by ``θ``: the capture-point law's centre of pressure is turned
    into a board tilt (at most :attr:`max_tilt_rad`), which the feet impose through a board-orientation
    task."""

    tasks = ("Balance",)
    beyond_support = 0.0
    max_tilt_rad = 0.15
    board_weight = 500.0

    def reset(self, ctx: Context) -> None:
        m = ctx.qp.m
        self.board_geom = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "balance_board_geom")
        self.ball = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "balance_ball")
        self.board = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, "balance_board")
        ball_geom = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_GEOM, "balance_ball_geom")
        self.ball_radius = float(m.geom_size[ball_geom, 0])
        super().reset(ctx)
        self.surfaces = {b: self.board_geom for b in self.support_bodies}
        self.com_ref = ctx.start_com.copy()
        self.com_ref[:2] = ctx.d.xpos[self.ball][:2]

    def supports(self, ctx: Context) -> dict[int, int]:
        return dict(self.surfaces)

    def targets(self, ctx: Context) -> Targets:
        d = ctx.d
        com, vel = ctx.qp.com()
        omega = pendulum_omega(float(com[2] - d.xpos[self.ball][2]))
        xi = com[:2] + vel[:2] / omega
        p = xi + (self.capture_gain / omega) * (xi - self.com_ref[:2])
        offset = (p - d.xpos[self.ball][:2]) / self.ball_radius
        tilt = float(np.linalg.norm(offset))
        quat = np.array([1.0, 0.0, 0.0, 0.0])
        if tilt > 1e-9:
            angle = min(tilt, self.max_tilt_rad)
            axis = np.array([-offset[1], offset[0], 0.0]) / tilt
            mujoco.mju_axisAngle2Quat(quat, axis, angle)
        # the rest of the capture-point law, beyond what the tilted board's contact gives, from the hip strategy
        contact = d.xpos[self.ball][:2] + self.ball_radius * offset * (min(tilt, self.max_tilt_rad) / max(tilt, 1e-9))
        com_acc, _ = com_acceleration(com, vel, self.com_ref, contact[None, :], k_capture=self.capture_gain,
                                      kp_z=self.com_height_kp, beyond=1.0)
        t = Targets(posture=self.posture, com_acc=com_acc, orientations=dict(self.orient), supports=self.supports(ctx),
                    level=self.feet)
        t.orientations[self.board] = quat
        t.orientation_weights[self.board] = self.board_weight
        return t


class Crouch(Standing):
    """Standing, with a table of balanced crouched poses by pelvis height: for each knee flexion ``κ`` the
    ankle takes ``min(0.25 κ, 0.4)``, the pelvis leans forward by ``λ`` and the hip flexes ``κ − α + λ``
    (feet stay flat), ``λ`` chosen so the centre of mass is over the middle of the feet — a squat as people
    do it. The poses are tabulated at each reset from that episode's start pose (:meth:`pose_at` reads
    them); :meth:`held` names the joints kept still."""

    com_height_kp = 0.0
    beyond_support = 1.0
    n_table = 24
    max_knee_rad = 1.5

    def reset(self, ctx: Context) -> None:
        super().reset(ctx)
        self.pelvis_body = ctx.body("pelvis")
        self.over_soles(ctx)
        # built from this episode's start pose (its posture), never an earlier episode's: an episode acts
        # the same whatever ran before it in the controller (0.23 s a reset of the whole expert, measured)
        self._table = self._balanced_table(ctx)

    def held(self) -> dict[str, float]:
        """The joints the crouch holds at fixed angles (rad); none: the start's."""
        return {}

    def _balanced_table(self, ctx: Context):
        m = ctx.qp.m
        scratch = mujoco.MjData(m)
        tree = np.asarray(ctx.env.handles.body_tree)
        mass = m.body_mass[tree]
        foot = [ctx.body(r) for r in FEET]
        base = self.posture.copy()
        pitch_axis = np.array([0.0, 1.0, 0.0])

        def pose(kappa: float, lean: float) -> np.ndarray:
            alpha = min(0.25 * kappa, 0.4)
            joints = self.held()
            for side in ("l", "r"):
                joints[f"knee_angle_{side}"] = kappa
                joints[f"ankle_angle_{side}"] = alpha
                joints[f"hip_flexion_{side}"] = kappa - alpha + lean
            q = base.copy()
            rot = np.zeros(4)
            mujoco.mju_axisAngle2Quat(rot, pitch_axis, lean)
            mujoco.mju_mulQuat(q[3:7], rot, base[3:7])
            return ctx.poses.pose(joints, base=q)

        def com_offset(q: np.ndarray) -> float:
            scratch.qpos[:] = q
            mujoco.mj_kinematics(m, scratch)
            com_x = float(mass @ scratch.xipos[tree, 0] / mass.sum())
            feet_x = scratch.xpos[foot, 0]
            return com_x - float(0.5 * (feet_x[[0, 2]].mean() + feet_x[[1, 3]].mean()))

        rows = []
        for kappa in np.linspace(0.0, self.max_knee_rad, self.n_table):
            lo, hi = -0.2, 1.2
            for _ in range(18):
                mid = 0.5 * (lo + hi)
                if com_offset(pose(kappa, mid)) < 0.0:  # centre of mass behind: lean more
                    lo = mid
                else:
                    hi = mid
            q = pose(kappa, 0.5 * (lo + hi))
            scratch.qpos[:] = q
            mujoco.mj_kinematics(m, scratch)
            rows.append((float(scratch.xpos[self.pelvis_body, 2]), q,
                         {b: scratch.xquat[b].copy() for b in (self.pelvis, self.chest)}))
        rows.sort(key=lambda r: r[0])
        return rows

    def pose_at(self, z: float):
        """The tabulated pose at pelvis height ``z`` (joints interpolated) and its pelvis and chest orientations."""
        heights = np.array([r[0] for r in self._table])
        k = int(np.clip(np.searchsorted(heights, z), 1, len(heights) - 1))
        lo, hi = self._table[k - 1], self._table[k]
        w = float(np.clip((z - lo[0]) / max(hi[0] - lo[0], 1e-9), 0.0, 1.0))
        q = lo[1] + w * (hi[1] - lo[1])
        return q, (lo[2] if w < 0.5 else hi[2])


class Squat(Crouch):
    """Squat: the pelvis follows the task's own height trajectory ``z_target(φ)`` through a balanced squat
    (:class:`Crouch`), the arms holding the barbell.

    The task's squat family (hip 1.5 d, knee 2.0 d, ankle 0.5 d with the pelvis upright) keeps the feet
    flat but puts the hips far behind the heels at depth; standing in it needs an ankle beyond its range.
    The expert squats as people do (:class:`Crouch`)."""

    tasks = ("Squat",)
    friction = INSIDE_FRICTION
    #: The expert's squat bottoms out here (below the task's 0.75 m success mark) rather than at the
    #: task's 0.55 m reference, where this body's hips reach their range.
    lowest_pelvis_m = 0.68
    #: The centre-of-mass reference follows the middle of the soles (the feet shift as the body goes down).
    follow_feet = True
    #: Weight of the pelvis-height task: above the point default, or the pelvis sinks past the table's
    #: deepest pose (measured: seeds 3, 8, 14-17, 20-23 fail at 1e3, succeed at 1e4).
    height_weight = 1e4

    def held(self) -> dict[str, float]:
        """The Squat task's barbell hold."""
        from mskbench.tasks.squat import BARBELL_HOLD

        return dict(BARBELL_HOLD)

    def targets(self, ctx: Context) -> Targets:
        task = ctx.task
        phase = (float(ctx.task_state["phase"]) + ctx.control_dt_s / task.period_s) % 1.0
        if self.follow_feet:
            self.over_soles(ctx)  # the feet shift a little as the body goes down and up: stay over them
        t = super().targets(ctx)
        if t.com_acc is not None:
            t.com_acc[2] = 0.0  # the pelvis height task sets the height
        z = float(task.z_target(phase))
        vz = float(task.vz_target(phase)) if z > self.lowest_pelvis_m else 0.0
        z = max(z, self.lowest_pelvis_m)
        t.posture, t.orientations = self.pose_at(z)
        t.points.append(PointTask(self.pelvis_body, np.zeros(3), np.array([0.0, 0.0, z]), np.array([0.0, 0.0, vz]),
                                  axes=(2,), weight=self.height_weight))
        return t


class Reach(Standing):
    """Reach: the right hand to the current target, the centre of mass over the feet."""

    tasks = ("Reach",)
    beyond_support = 1.0
    hand_kp = 60.0
    carrot_m = 0.1
    friction = INSIDE_FRICTION

    def reset(self, ctx: Context) -> None:
        super().reset(ctx)
        self.hand = ctx.body("hand_r")
        self.orient = {self.pelvis: self.orient[self.pelvis]}

    def targets(self, ctx: Context) -> Targets:
        t = super().targets(ctx)
        ts = ctx.task_state
        target = np.asarray(ts["targets"][int(ts["target_idx"])], float)
        t.points.append(PointTask(self.hand, np.zeros(3), self.lead(ctx, target), kp=self.hand_kp))
        return t

    def lead(self, ctx: Context, target: np.ndarray) -> np.ndarray:
        """The hand's target this step: ``target``, or ``carrot_m`` towards it (a far target pulls no harder)."""
        hand = ctx.d.xpos[self.hand]
        gap = target - hand
        dist = float(np.linalg.norm(gap))
        return hand + gap * (self.carrot_m / dist) if dist > self.carrot_m else target


class OpenDoor(Reach):
    """OpenDoor: standing, the right hand to the door's handle, then pushing it along the panel's normal (which
    turns with the door) until the door swings open at ``release_rate`` or the hand is ``reach_m`` ahead of
    the pelvis; then it stands as :class:`Stand` does (the arm let go) and the door swings on (its hinge
    barely damps it). The trunk is held upright throughout. The door counts as open at 1 rad (Table XII); the body does
    not walk through."""

    tasks = ("OpenDoor",)
    #: The hand stops ``approach_m`` before the handle's face, pushes to ``push_m`` beyond it.
    approach_m = 0.03
    push_m = 0.15
    #: Within ``near_m`` of its approach point the hand starts pushing.
    near_m = 0.06
    release_rate = 0.4
    reach_m = 0.55
    #: The default's, not Reach's (at INSIDE_FRICTION its QP went unsolved while pushing the door).
    friction = Behaviour.friction

    def reset(self, ctx: Context) -> None:
        super().reset(ctx)
        self.orient[self.chest] = ctx.d.xquat[self.chest].copy()  # the trunk held upright (Reach lets it lean)
        task = ctx.env.task
        self.handle, self.hinge_qpos, self.hinge_dof = task.handle_body, task.hinge_qpos, task.hinge_dof
        self.pushing = self.released = False
        self.beyond_support = type(self).beyond_support

    def targets(self, ctx: Context) -> Targets:
        t = Standing.targets(self, ctx)
        d = ctx.d
        hand = d.xpos[self.hand]
        reach = float(hand[0] - d.xpos[self.pelvis][0])
        if self.released or d.qvel[self.hinge_dof] >= self.release_rate or reach > self.reach_m:
            self.released = True
            self.beyond_support = 0.0  # standing again, as Stand does
            return t
        angle = float(d.qpos[self.hinge_qpos])
        normal = np.array([np.cos(angle), np.sin(angle), 0.0])  # the panel's push direction
        handle = d.xpos[self.handle]
        if np.linalg.norm(handle - self.approach_m * normal - hand) < self.near_m:
            self.pushing = True
        target = handle + (self.push_m if self.pushing else -self.approach_m) * normal
        t.points.append(PointTask(self.hand, np.zeros(3), self.lead(ctx, target), kp=self.hand_kp))
        return t


def coming_down_through(position: np.ndarray, velocity: np.ndarray, height_m: float) -> np.ndarray | None:
    """Where a ballistic point at ``position`` moving at ``velocity`` comes down through ``height_m`` (the later
    root of ``z + v_z t − g t²/2 = height``); None when it is below that height now."""
    p, v = np.asarray(position, float), np.asarray(velocity, float)
    if p[2] < height_m:
        return None
    g = GRAVITY
    t = (v[2] + np.sqrt(v[2] * v[2] + 2.0 * g * (p[2] - height_m))) / g
    return np.array([p[0] + v[0] * t, p[1] + v[1] * t, height_m])


class Catch(Standing):
    """Catch: both hands side by side, palms up as the start holds them, under the point where the cube comes
    down through ``tray_m`` (predicted from its state every step until it is caught); once the cube is within
    ``caught_m`` of the hands' midpoint, the hands give ``give_m`` downwards over ``give_s``, the palms tilting
    back by ``tilt_rad``, and hold."""

    tasks = ("Catch",)
    tray_m = 1.17
    #: The hands' origins this far either side of the tray's centre (m): nearly touching.
    half_gap_m = 0.025
    hand_kp = 300.0
    caught_m = 0.1
    give_m = 0.05
    give_s = 0.2
    #: Over the give, the palms tilt back (fingers up) by this much about the left-right axis (rad): untilted,
    #: the caught cube slid off forwards over the fingers (35 of 50 held, against 41 of 50).
    tilt_rad = -0.2

    def reset(self, ctx: Context) -> None:
        super().reset(ctx)
        self.hands = (ctx.body("hand_l"), ctx.body("hand_r"))
        self.palms = {h: ctx.d.xquat[h].copy() for h in self.hands}
        self.aim: np.ndarray | None = None
        #: When (control step) and where (the hands' midpoint) the cube was caught.
        self.caught_at: int | None = None
        self.hold = np.zeros(3)

    def targets(self, ctx: Context) -> Targets:
        t = super().targets(ctx)
        task, d = ctx.task, ctx.d
        cube = d.qpos[task.cube_qpos:task.cube_qpos + 3]
        middle = 0.5 * (d.xpos[self.hands[0]] + d.xpos[self.hands[1]])
        if self.caught_at is None and np.linalg.norm(cube - middle) < self.caught_m:
            self.caught_at, self.hold = ctx.step, middle.copy()
        if self.caught_at is None:
            aim = coming_down_through(cube, d.qvel[task.cube_dof:task.cube_dof + 3], self.tray_m)
            self.aim = self.aim if aim is None else aim
        else:
            give = min((ctx.step - self.caught_at) * ctx.control_dt_s / self.give_s, 1.0)
            self.aim = self.hold - np.array([0.0, 0.0, self.give_m * give])
        if self.aim is None:
            return t
        tilt = None
        if self.caught_at is not None and self.tilt_rad:
            tilt = np.zeros(4)
            share = min((ctx.step - self.caught_at) * ctx.control_dt_s / self.give_s, 1.0)
            mujoco.mju_axisAngle2Quat(tilt, np.array([0.0, 1.0, 0.0]), self.tilt_rad * share)
        for hand, side in zip(self.hands, (1.0, -1.0)):
            t.points.append(PointTask(hand, np.zeros(3), self.aim + np.array([0.0, side * self.half_gap_m, 0.0]),
                                      kp=self.hand_kp))
            q = self.palms[hand]
            if tilt is not None:
                q = np.zeros(4)
                mujoco.mju_mulQuat(q, tilt, self.palms[hand])
            t.orientations[hand] = q
        return t

"""Hanging from a bar: the expert's ChinUp.

:class:`ChinUp` pulls the body up from the dead hang. The hands' grip on the bar is the task's two
``connect`` equalities (:mod:`mskbench.tasks.grip`), which the QP takes among MuJoCo's own constraint rows
and satisfies exactly, as it does the joint couplings: the bar carries the body through them, so the
behaviour has no supports. The head is driven on a minimum-jerk path from where it hangs to
``margin_m`` above the height the task asks for (``bar_height_m + head_clearance_m``) in ``rise_s``, and
the centre of mass rises with it while it is held over the start's horizontal position (the body hangs
under the bar and is not swung); the pelvis and the chest keep the start's orientation (no kipping) and the
joints are pulled weakly towards the hang.
"""

from __future__ import annotations

import numpy as np

from mskbench.control.expert import Behaviour, Context
from mskbench.control.gait import min_jerk
from mskbench.control.qp import PointTask, Targets


class ChinUp(Behaviour):
    """ChinUp: the head pulled above the bar and held there."""

    tasks = ("ChinUp",)
    #: The head's goal above the task's required height (m), and the time to get there (s).
    margin_m = 0.05
    rise_s = 1.5
    #: Gain of the head and centre-of-mass paths (1/s²; damping critical).
    kp = 40.0
    #: Weight of the head's height task.
    head_weight = 1e4

    def reset(self, ctx: Context) -> None:
        d = ctx.d
        self.posture = ctx.start_qpos.copy()
        self.head = ctx.body("head")
        pelvis, chest = ctx.body("pelvis"), ctx.body("chest")
        self.orient = {pelvis: d.xquat[pelvis].copy(), chest: d.xquat[chest].copy()}
        self.com0 = ctx.start_com.copy()
        self.head0 = float(d.xpos[self.head][2])
        task = ctx.task
        self.rise_m = max(task.bar_height_m + task.head_clearance_m + self.margin_m - self.head0, 0.0)

    def path(self, t: float) -> tuple[float, float, float]:
        """How far the head (and the centre of mass) has risen at time ``t`` (s): height, speed, acceleration."""
        s, ds, dds = min_jerk(t / self.rise_s)
        return self.rise_m * s, self.rise_m * ds / self.rise_s, self.rise_m * dds / self.rise_s**2

    def targets(self, ctx: Context) -> Targets:
        rise, vel, acc = self.path(ctx.step * ctx.control_dt_s)
        kd = 2.0 * np.sqrt(self.kp)
        com, com_vel = ctx.qp.com()
        com_ref = self.com0 + np.array([0.0, 0.0, rise])
        com_acc = self.kp * (com_ref - com) + kd * (np.array([0.0, 0.0, vel]) - com_vel) + np.array([0.0, 0.0, acc])
        head = PointTask(self.head, np.zeros(3), np.array([0.0, 0.0, self.head0 + rise]), velocity=np.array([0.0, 0.0, vel]),
                         acceleration=np.array([0.0, 0.0, acc]), kp=self.kp, weight=self.head_weight, axes=(2,))
        return Targets(posture=self.posture, com_acc=com_acc, orientations=dict(self.orient), points=[head])

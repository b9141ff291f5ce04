"""Powerlift (stabilization): raise a 20 kg bar held in both hands to 1.6 m and hold it.

Paper rows: Table VI row 2 (rewards), Table IX row 2 (observations, init,
termination), Table XII (success).

==========================  ===================================================
reward term (weight)        formula
==========================  ===================================================
hold_stability (100)        ``I(z_bar > 1.6 m ∧ |ż_bar| < 0.1 m/s)``
height_threshold (50)       ``I(z_bar > 1.6 m)``
upright_alignment (100)     ``exp(−20(1 − u_torso·ẑ))``
lumbar_safety (80)          ``exp(−15|q_lumbar − (−0.4)|)``
muscular_effort (30)        ``mean(a)`` — the paper's weight is positive (+30)
                            and we keep its sign: this term *rewards* activation
hip_hinge (200)             ``I(q_lumbar > 0.1)``
efficiency (−1)             ``mean(a²)`` (our weight)
==========================  ===================================================

``z_bar``, ``ż_bar``: height and vertical velocity of the bar's centre (its
free joint's world position and linear velocity). ``q_lumbar`` is the model's
``flex_extension`` joint; in MyoFullBody it is positive in *extension*
(leaning back: the head moves to −x) and negative in flexion. The paper's
formulas are used with that sign as they stand, so the lumbar-safety target
−0.4 rad is a forward flexion, the hip-hinge indicator and the termination
``q_lumbar > 0.5`` are extensions (the two terms pull in opposite directions
in the paper too).

The load: a free body ``powerlift_bar`` (a 1.2 m shaft of 10 kg with two 5 kg
plates at ``y = ±0.5`` m: 20 kg in all) held by both hands through two
site-to-site ``connect`` equalities (:mod:`mskbench.tasks.grip`): the origin
of each third metacarpal is pinned to the shaft at ``y = ±0.247`` m, the hand
separation of the initial pose. The bar's geoms collide with the floor but not
with the body (contype 1, conaffinity 0).

Choices where the paper is open (also in ``docs/tasks.md``):

* Bar mass 20 kg (the paper gives none) and the grip above.
* Observation: ``p_bar`` = bar centre minus pelvis origin, world axes (3; the
  world x, y of the bar are not observed, as the body's are not);
  ``delta_p_bar`` = ``1.6 − z_bar``, the height still to go to the target (1);
  ``tilt`` = root tilt (Eq. 18) (1).
* Initial state ("high CoM, pre-loaded lumbar"): legs straight (neutral, so
  the CoM is as high as standing allows), the lumbar set at the safety term's
  target −0.4 rad (flexion), both arms raised 0.5 rad in the plane of
  elevation 1.4 rad so the bar hangs in front of the thighs at ~0.76 m; on the
  floor, at rest, no noise: a fixed start (``start``).
* Success "reach 900 steps" requires no earlier termination (as survival
  criteria do), and the maximum bar height (recorded in the task state over
  the episode, starting from the initial height) must be at least 1.6 m.

Observation: ``p_bar`` (3), ``delta_p_bar`` (1), ``tilt`` (1).
Termination: ``z_pelvis < 0.7`` m (``pelvis_too_low``) or ``q_lumbar > 0.5``
rad (``lumbar_collapse``). Success: 900 steps without earlier termination and
a maximum bar height ``≥ 1.6`` m. Horizon: 900 control steps (Table XII).

Options (``Powerlift.Config``): the thresholds above — ``bar_target_height_m``,
``bar_still_mps``, ``lumbar_target_rad``, ``hinge_lumbar_rad``,
``pelvis_height_min_m``, ``lumbar_max_rad`` — and the bar's masses
``bar_shaft_mass_kg``, ``bar_plate_mass_kg``.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from mskbench.tasks.base import (InitContext, InitialState, Task, TaskConfig, check_positive, efficiency, option,
                                 survived)
from mskbench.tasks.grip import add_grip, bar_frame_from_hands, hand_positions

#: "High CoM, pre-loaded lumbar": straight legs, lumbar at −0.4 rad, bar in front of the thighs.
POWERLIFT_START = {
    "flex_extension": -0.4,
    "elv_angle_l": 1.4, "elv_angle_r": 1.4,
    "shoulder_elv_l": 0.5, "shoulder_elv_r": 0.5,
}
#: Half the hand separation (third metacarpal origins) in ``POWERLIFT_START``, m.
GRIP_HALF_WIDTH_M = 0.2473


class Powerlift(Task):
    name = "Powerlift"
    family = "stabilization"
    horizon = 900
    summary = "Raise a 20 kg bar held in both hands to 1.6 m and hold it"
    reward_weights = {
        "hold_stability": 100.0,
        "height_threshold": 50.0,
        "upright_alignment": 100.0,
        "lumbar_safety": 80.0,
        "muscular_effort": 30.0,
        "hip_hinge": 200.0,
        "efficiency": -1.0,
    }

    @dataclass(frozen=True)
    class Config(TaskConfig):
        bar_target_height_m: float = option(1.6, "bar height to reach and hold (m)")
        bar_still_mps: float = option(0.1, "hold_stability: bar vertical speed below this (m/s)")
        lumbar_target_rad: float = option(-0.4, "lumbar_safety target of q_lumbar (rad; negative: flexion)")
        hinge_lumbar_rad: float = option(0.1, "hip_hinge: q_lumbar above this (rad)")
        pelvis_height_min_m: float = option(0.7, "pelvis_too_low below this pelvis height (m)")
        lumbar_max_rad: float = option(0.5, "lumbar_collapse above this q_lumbar (rad)")
        bar_shaft_mass_kg: float = option(10.0, "mass of the bar's shaft (kg)")
        bar_plate_mass_kg: float = option(5.0, "mass of each of the two plates (kg)")

        def __post_init__(self):
            check_positive(self, "bar_shaft_mass_kg", "bar_plate_mass_kg")

    #: The bar's free-joint addresses, resolved in ``bind``.
    bar_qpos_adr = bar_dof_adr = -1

    def add_props(self, spec: mujoco.MjSpec) -> None:
        bar = spec.worldbody.add_body(name="powerlift_bar", pos=[0.03, 0.0, 0.76])
        bar.add_freejoint(name="powerlift_bar_free")
        common = {"contype": 1, "conaffinity": 0, "rgba": [0.35, 0.35, 0.38, 1.0]}
        bar.add_geom(name="powerlift_bar_shaft", type=mujoco.mjtGeom.mjGEOM_CAPSULE,
                     fromto=[0.0, -0.6, 0.0, 0.0, 0.6, 0.0], size=[0.014, 0, 0],
                     mass=self.bar_shaft_mass_kg, **common)
        for side, y in (("l", 0.5), ("r", -0.5)):
            bar.add_geom(name=f"powerlift_bar_plate_{side}", type=mujoco.mjtGeom.mjGEOM_CYLINDER,
                         fromto=[0.0, y - 0.03, 0.0, 0.0, y + 0.03, 0.0], size=[0.15, 0, 0],
                         mass=self.bar_plate_mass_kg, **common)
        add_grip(spec, "powerlift", bar, GRIP_HALF_WIDTH_M)

    def bind(self, ctx: InitContext) -> None:
        super().bind(ctx)
        self.bar_qpos_adr = ctx.joint_qpos_adr("powerlift_bar_free")
        self.bar_dof_adr = ctx.joint_dof_adr("powerlift_bar_free")

    def start(self, ctx: InitContext) -> InitialState:
        qpos = ctx.pose(POWERLIFT_START)
        pos, quat = bar_frame_from_hands(*hand_positions(ctx.forward(qpos)))
        qpos[self.bar_qpos_adr:self.bar_qpos_adr + 3] = pos
        qpos[self.bar_qpos_adr + 3:self.bar_qpos_adr + 7] = quat
        return InitialState(qpos, np.zeros(ctx.model.nv), {"max_bar_height": np.float64(pos[2])})

    # -- step-time -------------------------------------------------------------------
    def _bar_z(self, s):
        return s.q[self.bar_qpos_adr + 2]

    def _bar_vz(self, s):
        return s.qdot[self.bar_dof_adr + 2]

    def advance(self, s, ts, xp):
        return {"max_bar_height": xp.maximum(ts["max_bar_height"], self._bar_z(s))}

    def observation(self, s, ts, xp):
        p_bar = s.q[self.bar_qpos_adr:self.bar_qpos_adr + 3]
        return {
            "p_bar": p_bar - s.pelvis_pos,
            "delta_p_bar": xp.reshape(self.bar_target_height_m - p_bar[2], (1,)),
            "tilt": xp.reshape(s.tilt, (1,)),
        }

    def reward_terms(self, s, ts, xp):
        above = self._bar_z(s) > self.bar_target_height_m
        still = xp.abs(self._bar_vz(s)) < self.bar_still_mps
        lumbar = s.joint("lumbar")
        return {
            "hold_stability": xp.where(xp.logical_and(above, still), 1.0, 0.0),
            "height_threshold": xp.where(above, 1.0, 0.0),
            "upright_alignment": xp.exp(-20.0 * (1.0 - s.u_torso[2])),
            "lumbar_safety": xp.exp(-15.0 * xp.abs(lumbar - self.lumbar_target_rad)),
            "muscular_effort": xp.mean(s.activation),
            "hip_hinge": xp.where(lumbar > self.hinge_lumbar_rad, 1.0, 0.0),
            "efficiency": efficiency(s, xp),
        }

    def termination(self, s, ts, xp):
        return {
            "pelvis_too_low": s.pelvis_pos[2] < self.pelvis_height_min_m,
            "lumbar_collapse": s.joint("lumbar") > self.lumbar_max_rad,
        }

    def success(self, ts, steps, terminated, xp):
        return xp.logical_and(survived(steps, terminated, self.horizon, xp),
                              ts["max_bar_height"] >= self.bar_target_height_m)

    def success_trace(self, ts):
        return {"max_bar_height": float(ts["max_bar_height"])}

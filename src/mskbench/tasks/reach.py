"""Reach (interaction): touch randomly placed targets with the right hand.

Paper rows: Table VIII (rewards), Table XI (observations, init, termination),
Table XII (success).

==========================  ===================================================
reward term (weight)        formula
==========================  ===================================================
dense_reach (50)            ``exp(−4‖Δp_reach‖)``
velocity_projection (20)    ``clip(v_hand · u_reach, 0, 2)``
touch_bonus (200)           ``I(‖Δp_reach‖ < 0.15 m)`` (the step the touch happens)
efficiency (−1)             ``mean(a²)`` (our weight)
==========================  ===================================================

``Δp_reach = p_target − p_hand`` (hand: right third metacarpal),
``u_reach = Δp_reach / ‖Δp_reach‖``.

Choices where the paper is open (also in ``docs/tasks.md``):

* Targets are drawn uniformly in a box in front of the right shoulder, in the
  initial body frame: ``x ∈ [0.30, 0.60]`` m ahead of the pelvis,
  ``y ∈ [−0.45, 0.05]`` m (right is −y), ``z ∈ [0.70, 1.50]`` m above the floor.
  32 targets are drawn at reset; a touch (``‖Δp_reach‖ < 0.15`` m) counts and
  brings up the next one; so does a 2 s window without a touch.
* The phase clock ``φ`` is the fraction of the current target's 2 s window
  that has elapsed.
* Initial state: quarter squat (hips 0.45 rad, knees 0.80 rad, ankles
  0.35 rad dorsiflexion), both arms raised forward (elevation plane 1.3 rad,
  elevation 0.9 rad, elbows 0.5 rad; the right hand starts ~0.35 m ahead of
  the pelvis at chest height), on the floor, at rest.

Observation: phase ``(sin 2πφ, cos 2πφ)`` (2), ``Δp_reach`` (3).
Termination: a knee below 0.15 m. Success: at least two touches.
Horizon: 1,000 steps (our choice; the paper gives none for Reach).
"""

from __future__ import annotations

import mujoco
import numpy as np

from mskbench.tasks.base import InitContext, InitialState, Task, efficiency, phase_clock

QUARTER_SQUAT_HANDS_RAISED = {
    "hip_flexion_l": 0.45, "hip_flexion_r": 0.45,
    "knee_angle_l": 0.80, "knee_angle_r": 0.80,
    "ankle_angle_l": 0.35, "ankle_angle_r": 0.35,
    "elv_angle_l": 1.3, "elv_angle_r": 1.3,
    "shoulder_elv_l": 0.9, "shoulder_elv_r": 0.9,
    "elbow_flex_l": 0.5, "elbow_flex_r": 0.5,
}


class Reach(Task):
    name = "Reach"
    family = "interaction"
    horizon = 1000
    summary = "Touch random targets with the right hand from a quarter squat"
    reward_weights = {
        "dense_reach": 50.0,
        "velocity_projection": 20.0,
        "touch_bonus": 200.0,
        "efficiency": -1.0,
    }
    touch_radius_m = 0.15
    knee_height_min_m = 0.15
    n_targets = 32
    target_low = np.array([0.30, -0.45, 0.70])
    target_high = np.array([0.60, 0.05, 1.50])

    def __init__(self, target_window_s: float = 2.0):
        if target_window_s <= 0:
            raise ValueError(f"target_window_s must be positive, got {target_window_s}")
        self.target_window_s = float(target_window_s)
        self.window_steps = 200

    def bind(self, ctx: InitContext) -> None:
        self.window_steps = max(1, int(round(self.target_window_s / ctx.control_dt_s)))

    def add_props(self, spec: mujoco.MjSpec) -> None:
        marker = spec.worldbody.add_body(name="reach_target", mocap=True, pos=[0.45, -0.2, 1.0])
        marker.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[self.touch_radius_m / 3, 0, 0],
                        rgba=[0.9, 0.2, 0.2, 0.8], contype=0, conaffinity=0, group=1)

    def sync_props(self, model, data, ts):
        body = model.body("reach_target")
        data.mocap_pos[body.mocapid[0]] = ts["targets"][int(ts["target_idx"])]

    def initial_state(self, ctx: InitContext, rng: np.random.Generator) -> InitialState:
        qpos = ctx.pose(QUARTER_SQUAT_HANDS_RAISED)
        pelvis = ctx.forward(qpos).pelvis_pos
        offsets = rng.uniform(self.target_low, self.target_high, size=(self.n_targets, 3))
        targets = offsets + np.array([pelvis[0], pelvis[1], 0.0])
        ts = {
            "targets": targets,
            "target_idx": np.int64(0),
            "steps_on_target": np.int64(0),
            "touch": np.bool_(False),
            "touches": np.int64(0),
        }
        return InitialState(qpos, np.zeros(ctx.model.nv), ts)

    def _delta(self, s, ts, xp):
        return ts["targets"][ts["target_idx"]] - s.pos("hand_r")

    def advance(self, s, ts, xp):
        touch = xp.linalg.norm(self._delta(s, ts, xp)) < self.touch_radius_m
        timeout = ts["steps_on_target"] + 1 >= self.window_steps
        switch = xp.logical_or(touch, timeout)
        return {
            "targets": ts["targets"],
            "target_idx": xp.minimum(ts["target_idx"] + xp.where(switch, 1, 0), self.n_targets - 1),
            "steps_on_target": xp.where(switch, 0, ts["steps_on_target"] + 1),
            "touch": touch,
            "touches": ts["touches"] + xp.where(touch, 1, 0),
        }

    def observation(self, s, ts, xp):
        return {"phase": phase_clock(ts["steps_on_target"] / self.window_steps, xp),
                "delta_p_reach": self._delta(s, ts, xp)}

    def reward_terms(self, s, ts, xp):
        delta = self._delta(s, ts, xp)
        dist = xp.linalg.norm(delta)
        u_reach = delta / (dist + 1e-9)
        return {
            "dense_reach": xp.exp(-4.0 * dist),
            "velocity_projection": xp.clip(s.vel("hand_r") @ u_reach, 0.0, 2.0),
            "touch_bonus": xp.where(ts["touch"], 1.0, 0.0),
            "efficiency": efficiency(s, xp),
        }

    def termination(self, s, ts, xp):
        return {"knee_dropped": xp.min(s.knee_heights) < self.knee_height_min_m}

    def success(self, ts, steps, terminated, xp):
        return ts["touches"] >= 2

    def success_trace(self, ts):
        return {"touches": int(ts["touches"])}

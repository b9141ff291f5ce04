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
  the pelvis at chest height), on the floor, at rest: a fixed pose
  (``start``); the targets are drawn by ``randomize``, so the batched
  environment draws them per world on the device.

Observation: phase ``(sin 2πφ, cos 2πφ)`` (2), ``Δp_reach`` (3).
Termination: a knee below 0.15 m. Success: at least two touches.
Horizon: 1,000 steps (our choice; the paper gives none for Reach).

Options (``Reach.Config``): ``target_window_s`` (2 s), ``touch_radius_m``,
``knee_height_min_m``, ``n_targets``, the target box ``target_low``,
``target_high`` (the values above).
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from mskbench.tasks.base import (InitContext, InitialState, Task, TaskConfig, check_positive, efficiency, option,
                                 phase_clock)

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

    @dataclass(frozen=True)
    class Config(TaskConfig):
        target_window_s: float = option(2.0, "time a target stays up without a touch (s)")
        touch_radius_m: float = option(0.15, "a touch: the hand within this of the target (m)")
        knee_height_min_m: float = option(0.15, "knee_dropped below this knee height (m)")
        n_targets: int = option(32, "targets drawn per episode")
        target_low: tuple[float, float, float] = option((0.30, -0.45, 0.70), "low corner of the target box (m)")
        target_high: tuple[float, float, float] = option((0.60, 0.05, 1.50), "high corner of the target box (m)")

        def __post_init__(self):
            check_positive(self, "target_window_s", "touch_radius_m", "n_targets")



    @property
    def window_steps(self) -> int:
        """The target window in control steps."""
        return max(1, int(round(self.target_window_s / self.control_dt_s)))

    def add_props(self, spec: mujoco.MjSpec) -> None:
        marker = spec.worldbody.add_body(name="reach_target", mocap=True, pos=[0.45, -0.2, 1.0])
        marker.add_geom(type=mujoco.mjtGeom.mjGEOM_SPHERE, size=[self.touch_radius_m / 3, 0, 0],
                        rgba=[0.9, 0.2, 0.2, 0.8], contype=0, conaffinity=0, group=1)

    def sync_props(self, model, data, ts):
        body = model.body("reach_target")
        data.mocap_pos[body.mocapid[0]] = ts["targets"][int(ts["target_idx"])]

    def start(self, ctx: InitContext) -> InitialState:
        """The quarter squat on the floor at rest, every target at the origin of the target box: the
        pelvis's ``x, y`` on the floor."""
        qpos = ctx.pose(QUARTER_SQUAT_HANDS_RAISED)
        pelvis = ctx.forward(qpos).pelvis_pos
        ts = {
            "targets": np.tile([pelvis[0], pelvis[1], 0.0], (self.n_targets, 1)),
            "target_idx": np.int64(0),
            "steps_on_target": np.int64(0),
            "touch": np.bool_(False),
            "touches": np.int64(0),
        }
        return InitialState(qpos, np.zeros(ctx.model.nv), ts)

    def randomize(self, init: InitialState, rng, xp) -> InitialState:
        """The targets drawn uniformly in the box ``[target_low, target_high]`` about that origin."""
        offsets = rng.uniform(self.target_low, self.target_high, shape=(self.n_targets, 3))
        ts = {**init.task_state, "targets": offsets + init.task_state["targets"]}
        return InitialState(init.qpos, init.qvel, ts)

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

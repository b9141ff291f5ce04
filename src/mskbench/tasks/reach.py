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

Choices where the paper is open (also in ``docs/tasks.md``), from the
original (``msk_bench_v0.py@a68b6ce::MSKBenchReachEnvV0``) where it has them:

* Targets (the original's ``_sample_target``): the ``k``-th target (drawn after
  ``k`` touches) is uniform in ``x ∈ [0.3, 0.8 + 0.1 c]`` m ahead of the pelvis,
  ``y ∈ [−0.6, 0.6]`` m, ``z ∈ [max(0.6, 1.2 − 0.15 c), 1.7]`` m above the
  floor, with the curriculum level ``c = min(k, 5)``, and at least 0.4 m from
  the start's pelvis (the original redraws; we draw 4 candidates per target and
  keep the first that is far enough, else the last). 32 targets are drawn at
  reset; a touch (``‖Δp_reach‖ < 0.15`` m) counts and brings up the next one.
  A target stays until it is touched (the original has no timeout; the option
  ``retarget_on_timeout`` brings up the next target after a 2 s window
  without a touch instead — target ``k`` is then not the k-th touch's).
* The phase clock ``φ`` is the time on the current target as a fraction of
  the 2 s window (wrapping); the original's phase is a constant 0.
* Initial state: the original's quarter squat (hips 0.25 rad, knees 0.40 rad,
  ankles 0.15 rad dorsiflexion), both arms raised forward (elevation plane
  1.3 rad, elevation 0.9 rad, elbows 0.5 rad; the right hand starts ~0.35 m
  ahead of the pelvis at chest height), on the floor, at rest: a fixed pose
  (``start``); the targets are drawn by ``randomize``, so the batched
  environment draws them per world on the device.
* Native solved (the original's ``solved = touch_count > 5``): at least six
  touches so far.

Observation: phase ``(sin 2πφ, cos 2πφ)`` (2), ``Δp_reach`` (3).
Termination: a knee below 0.15 m. Success: at least two touches.
Horizon: 500 control steps of 20 ms (the original's registry and its
``reach.xml`` 2 ms physics step: 10 s; the paper gives none for Reach).

Options (``Reach.Config``): ``target_window_s`` (2 s), ``retarget_on_timeout``
(False), ``touch_radius_m``, ``knee_height_min_m``, ``n_targets``, the
curriculum-level-0 target box ``target_low``, ``target_high`` (the values
above), ``min_pelvis_distance_m`` (0.4 m).
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from mskbench.tasks.base import (InitContext, InitialState, Task, TaskConfig, check_positive, efficiency, option,
                                 phase_clock)

QUARTER_SQUAT_HANDS_RAISED = {
    "hip_flexion_l": 0.25, "hip_flexion_r": 0.25,
    "knee_angle_l": 0.40, "knee_angle_r": 0.40,
    "ankle_angle_l": 0.15, "ankle_angle_r": 0.15,
    "elv_angle_l": 1.3, "elv_angle_r": 1.3,
    "shoulder_elv_l": 0.9, "shoulder_elv_r": 0.9,
    "elbow_flex_l": 0.5, "elbow_flex_r": 0.5,
}
#: The original's curriculum: per level (touches so far, at most 5) the box's x high grows, its z low falls.
CURRICULUM_LEVELS = 5
CURRICULUM_X_HIGH_STEP_M = 0.10
CURRICULUM_Z_LOW_STEP_M = 0.15
TARGET_Z_FLOOR_M = 0.6
#: Candidates drawn per target for the minimum distance from the pelvis.
TARGET_CANDIDATES = 4
#: The original's ``solved``: ``touch_count > 5``.
NATIVE_TOUCHES = 6


class Reach(Task):
    name = "Reach"
    family = "interaction"
    horizon = 500
    timestep_s = 0.002
    native_solved = ("more than 5 target touches so far (touch_count > 5) — "
                     "msk_bench/envs/msk/benchmark/msk_bench_v0.py@a68b6ce::MSKBenchReachEnvV0.get_reward_dict")
    summary = "Touch random targets with the right hand from a quarter squat"
    reward_weights = {
        "dense_reach": 50.0,
        "velocity_projection": 20.0,
        "touch_bonus": 200.0,
        "efficiency": -1.0,
    }

    @dataclass(frozen=True)
    class Config(TaskConfig):
        target_window_s: float = option(2.0, "phase clock period on a target; with retarget_on_timeout, its window (s)")
        retarget_on_timeout: bool = option(False, "bring up the next target after target_window_s without a touch")
        touch_radius_m: float = option(0.15, "a touch: the hand within this of the target (m)")
        knee_height_min_m: float = option(0.15, "knee_dropped below this knee height (m)")
        n_targets: int = option(32, "targets drawn per episode")
        target_low: tuple[float, float, float] = option((0.30, -0.60, 1.20), "low corner of the level-0 target box (m)")
        target_high: tuple[float, float, float] = option((0.80, 0.60, 1.70), "high corner of the level-0 target box (m)")
        min_pelvis_distance_m: float = option(0.4, "targets at least this far from the start's pelvis (m)")

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
        self.start_pelvis_height_m = float(pelvis[2])
        ts = {
            "targets": np.tile([pelvis[0], pelvis[1], 0.0], (self.n_targets, 1)),
            "target_idx": np.int64(0),
            "steps_on_target": np.int64(0),
            "touch": np.bool_(False),
            "touches": np.int64(0),
        }
        return InitialState(qpos, np.zeros(ctx.model.nv), ts)

    #: The start's pelvis height (m), measured in ``start``.
    start_pelvis_height_m = 0.9

    def target_boxes(self) -> tuple[np.ndarray, np.ndarray]:
        """Per target index ``k``, the low and high corners (``(n_targets, 3)``, about the origin) of the
        original's curriculum box at level ``min(k, 5)``."""
        level = np.minimum(np.arange(self.n_targets), CURRICULUM_LEVELS)[:, None]
        low = np.tile(np.asarray(self.target_low, float), (self.n_targets, 1))
        high = np.tile(np.asarray(self.target_high, float), (self.n_targets, 1))
        high[:, 0:1] += CURRICULUM_X_HIGH_STEP_M * level
        low[:, 2:3] = np.maximum(np.minimum(TARGET_Z_FLOOR_M, low[:, 2:3]), low[:, 2:3] - CURRICULUM_Z_LOW_STEP_M * level)
        return low, high

    def randomize(self, init: InitialState, rng, xp) -> InitialState:
        """The targets drawn in their curriculum boxes about that origin, each the first of
        ``TARGET_CANDIDATES`` draws at least ``min_pelvis_distance_m`` from the start's pelvis (else the last)."""
        low, high = self.target_boxes()
        u = rng.uniform(0.0, 1.0, shape=(self.n_targets, TARGET_CANDIDATES, 3))
        cand = xp.asarray(low)[:, None, :] + u * xp.asarray(high - low)[:, None, :]
        pelvis = np.array([0.0, 0.0, self.start_pelvis_height_m])
        far = xp.linalg.norm(cand - xp.asarray(pelvis), axis=-1) >= self.min_pelvis_distance_m
        far = xp.logical_or(far, xp.arange(TARGET_CANDIDATES) == TARGET_CANDIDATES - 1)
        first = xp.argmax(far, axis=1)
        chosen = xp.take_along_axis(cand, first[:, None, None], axis=1)[:, 0, :]
        ts = {**init.task_state, "targets": chosen + init.task_state["targets"]}
        return InitialState(init.qpos, init.qvel, ts)

    def _delta(self, s, ts, xp):
        return ts["targets"][ts["target_idx"]] - s.pos("hand_r")

    def advance(self, s, ts, xp):
        touch = xp.linalg.norm(self._delta(s, ts, xp)) < self.touch_radius_m
        timeout = xp.logical_and(self.retarget_on_timeout, ts["steps_on_target"] + 1 >= self.window_steps)
        switch = xp.logical_or(touch, timeout)
        return {
            "targets": ts["targets"],
            "target_idx": xp.minimum(ts["target_idx"] + xp.where(switch, 1, 0), self.n_targets - 1),
            "steps_on_target": xp.where(switch, 0, ts["steps_on_target"] + 1),
            "touch": touch,
            "touches": ts["touches"] + xp.where(touch, 1, 0),
        }

    def observation(self, s, ts, xp):
        return {"phase": phase_clock((ts["steps_on_target"] % self.window_steps) / self.window_steps, xp),
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

    def solved_native(self, s, ts, steps, xp):
        return ts["touches"] >= NATIVE_TOUCHES

    def success_trace(self, ts):
        return {"touches": int(ts["touches"])}

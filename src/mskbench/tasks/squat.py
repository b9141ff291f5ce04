"""Squat (stabilization): track a phase-clocked squat down below 0.75 m and back up.

Paper rows: Table VI row 6 (rewards), Table IX row 6 (observations, init,
termination), Table XII (success).

============================  =================================================
reward term (weight)          formula
============================  =================================================
height_tracking (200)         ``exp(−30(z_pelvis − z_target(φ))²)``
hip_tracking (200)            ``exp(−5(q̄_hip − q_target,hip(φ))²)``
knee_tracking (300)           ``exp(−5(q̄_knee − q_target,knee(φ))²)``
vertical_velocity_tracking    ``exp(−5(v_z,CoM − v_z,target(φ))²)``
(200)
com_centered (300)            ``exp(−15‖p_pelvis^xy − p_mid_feet^xy‖²)``
kneeling_penalty (−1000)      ``I(min(z_knee,L, z_knee,R) < 0.25 m)``
efficiency (−1)               ``mean(a²)`` (our weight)
============================  =================================================

The paper's ambiguous "Joint tracking ... 300/200" is resolved as the
original code does: ``knee_tracking`` 300, ``hip_tracking`` 200
(``msk_bench_v0.py@a68b6ce::MSKBenchSquatEnvV0.DEFAULT_RWD_KEYS_AND_WEIGHTS``).
``q̄_hip`` is the mean of both ``hip_flexion`` angles, ``q̄_knee`` of both
``knee_angle`` s.

Choices where the paper is open (also in ``docs/tasks.md``):

* Phase clock ``φ ∈ [0, 1)`` with a 4 s period, starting at 0 (standing).
  Pelvis-height target ``z_target(φ) = z_top − (z_top − z_bottom)(1 − cos 2πφ)/2``
  with ``z_top`` the pelvis height of the start pose on the floor (~0.947 m)
  and ``z_bottom = 0.55`` m (the original's ``0.75 − 0.20``; below the 0.75 m
  of the success criterion), period 4 s (the original's 0.25 Hz);
  ``v_z,target = dz_target/dt = −(z_top − z_bottom) π sin(2πφ) / 4 s``.
* Joint targets consistent with ``z_target``: a one-parameter squat family
  ``hip_flexion = 1.5 d``, ``knee_angle = 2.0 d``, ``ankle_angle = 0.5 d``
  (both legs, ``d ∈ [0, 1]``), the rest of the start pose unchanged, each
  lowered onto the floor; the pelvis height of 21 such poses is tabulated when
  the task is bound, and ``d(z_target)`` is read off that table by linear
  interpolation, giving ``q_target,hip = 1.5 d`` and ``q_target,knee = 2.0 d``
  (the original's hip target also peaks at 1.5 rad).
* ``p_mid_feet``: mean of the four foot points (both heels ``calcn`` and both
  ``toes`` body origins), the middle of the support area.
* "Barbell hold" without a barbell: the arms are put in a back-squat hold
  (plane of elevation 0, shoulder elevation 1.0 rad, shoulder rotation
  −1.5 rad, elbows flexed 2.2 rad: upper arms out to the sides, forearms up,
  hands ~0.38 m to either side of the midline at ~1.59 m, just behind the
  neck). The load is the original's (``squat.xml``): a 2 kg barbell rigidly
  fixed to the root body (a 1 kg capsule shaft of radius 0.015 m and
  half-length 0.8 m along y, two 0.5 kg plates of radius 0.15 m at
  ``y = ±0.7`` m, 0.45 m above and 0.05 m behind the root's origin), colliding
  with the floor only (contype 1, conaffinity 0). The initial
  state is that pose with legs straight on the floor, at rest (φ = 0 is the
  top of the squat), plus the original's per-episode noise ``N(0, 0.001²)``
  rad on every independent joint (clipped to its range, dependents resolved),
  velocities zero (``msk_bench_v0.py@a68b6ce::MSKBenchSquatEnvV0.reset``);
  drawn by ``randomize`` (on the device in the batched env), not re-placed.
* Observation: phase ``(sin 2πφ, cos 2πφ)`` (2) and ``z_target`` (1).
* Native solved: none — the original's ``solved`` is the constant 0.

Termination: ``z_pelvis < 0.35`` m (``pelvis_too_low``) or a knee below
0.25 m (``kneeling``, the "landmine"). Success: the pelvis first falls below
0.75 m and afterwards rises above 0.90 m (a two-state latch in the task
state). Horizon: 1,000 control steps of 10 ms (the original's registry and
``squat.xml``'s 1 ms physics step: 10 s, 2.5 squat periods).

Options (``Squat.Config``): ``period_s`` (4 s), ``bottom_height_m`` (0.55 m),
``barbell_mass_kg`` (2 kg), ``init_noise`` (0.001 rad),
``n_table`` (21), the termination heights ``pelvis_height_min_m``,
``knee_height_min_m`` and the success heights ``below_m``, ``above_m``.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from mskbench.tasks.base import (InitContext, InitialState, Task, TaskConfig, advance_phase, check_positive, efficiency,
                                 option, phase_clock)
from mskbench.tasks.starts import StartNoise, add_start_noise

#: Back-squat "barbell hold" of both arms (no bar): hands up beside the head.
BARBELL_HOLD = {
    "elv_angle_l": 0.0, "elv_angle_r": 0.0,
    "shoulder_elv_l": 1.0, "shoulder_elv_r": 1.0,
    "shoulder_rot_l": -1.5, "shoulder_rot_r": -1.5,
    "elbow_flex_l": 2.2, "elbow_flex_r": 2.2,
}
#: Squat family: joint angle (rad) at full depth d = 1, per model joint.
SQUAT_DEPTH_JOINTS = {"hip_flexion": 1.5, "knee_angle": 2.0, "ankle_angle": 0.5}


def squat_pose(depth: float) -> dict[str, float]:
    """Joints (model names) of the start pose lowered to squat depth ``d ∈ [0, 1]``."""
    joints = dict(BARBELL_HOLD)
    for joint, full in SQUAT_DEPTH_JOINTS.items():
        for side in ("l", "r"):
            joints[f"{joint}_{side}"] = full * depth
    return joints


class Squat(Task):
    name = "Squat"
    family = "stabilization"
    horizon = 1000
    summary = "Squat below 0.75 m and back up, tracking a phase-clocked pelvis trajectory"
    reward_weights = {
        "height_tracking": 200.0,
        "hip_tracking": 200.0,
        "knee_tracking": 300.0,
        "vertical_velocity_tracking": 200.0,
        "com_centered": 300.0,
        "kneeling_penalty": -1000.0,
        "efficiency": -1.0,
    }

    @dataclass(frozen=True)
    class Config(TaskConfig):
        period_s: float = option(4.0, "period of the squat's phase clock (s)")
        bottom_height_m: float = option(0.55, "z_bottom: pelvis-height target at the bottom of the squat (m)")
        pelvis_height_min_m: float = option(0.35, "pelvis_too_low below this pelvis height (m)")
        knee_height_min_m: float = option(0.25, "kneeling (and kneeling_penalty) below this knee height (m)")
        below_m: float = option(0.75, "success: the pelvis first goes below this height (m)")
        above_m: float = option(0.90, "success: ... and afterwards above this height (m)")
        n_table: int = option(21, "squat depths tabulated for the joint targets")
        barbell_mass_kg: float = option(2.0, "barbell on the back: shaft half, each plate a quarter (kg)")
        init_noise: float = option(0.001, "start noise N(0, this²) on every joint (rad); velocities zero")

        def __post_init__(self):
            check_positive(self, "period_s", "bottom_height_m")
            check_positive(self, "barbell_mass_kg", "init_noise", allow_zero=True)
            if self.n_table < 2:
                raise ValueError(f"n_table must be >= 2, got {self.n_table}")

    #: Measured in ``bind``: the start pose's pelvis height, and the table pelvis height (ascending) → depth.
    top_height_m = 0.947
    _table_z: np.ndarray = np.array((0.5, 0.947))
    _table_d: np.ndarray = np.array((1.0, 0.0))

    def add_props(self, spec: mujoco.MjSpec) -> None:
        """The original's barbell: geoms fixed to the root body (mass only; it collides with the floor)."""
        root = spec.body(self.body.root)
        common = {"contype": 1, "conaffinity": 0}
        shaft, plate = 0.5 * self.barbell_mass_kg, 0.25 * self.barbell_mass_kg

        def local(x: float, y: float, z: float) -> list[float]:
            # Body frame (x forward, y left) to the root's frame, in which the shipped model faces -y.
            return [y, -x, z]

        root.add_geom(name="squat_barbell_shaft", type=mujoco.mjtGeom.mjGEOM_CAPSULE,
                      fromto=local(-0.05, -0.8, 0.45) + local(-0.05, 0.8, 0.45), size=[0.015, 0, 0], mass=shaft,
                      rgba=[0.8, 0.8, 0.8, 1.0], **common)
        for side, y in (("l", 0.7), ("r", -0.7)):
            root.add_geom(name=f"squat_barbell_plate_{side}", type=mujoco.mjtGeom.mjGEOM_CYLINDER,
                          fromto=local(-0.05, y - 0.04, 0.45) + local(-0.05, y + 0.04, 0.45), size=[0.15, 0, 0],
                          mass=plate, rgba=[0.1, 0.1, 0.1, 1.0], **common)

    def bind(self, ctx: InitContext) -> None:
        super().bind(ctx)
        depths = np.linspace(0.0, 1.0, self.n_table)
        z = np.array([ctx.forward(ctx.pose(squat_pose(d))).pelvis_pos[2] for d in depths])
        if not np.all(np.diff(z) < 0):
            raise ValueError("squat pelvis height must fall monotonically with depth")
        if not z[-1] < self.bottom_height_m < z[0]:
            raise ValueError(f"bottom_height_m must lie in ({z[-1]:.3f}, {z[0]:.3f}) m")
        self.top_height_m = float(z[0])
        self._table_z = z[::-1].copy()
        self._table_d = depths[::-1].copy()

    # -- reference -------------------------------------------------------------------
    def z_target(self, phase, xp=np):
        amp = self.top_height_m - self.bottom_height_m
        return self.top_height_m - amp * 0.5 * (1.0 - xp.cos(2.0 * np.pi * phase))

    def vz_target(self, phase, xp=np):
        amp = self.top_height_m - self.bottom_height_m
        return -amp * np.pi * xp.sin(2.0 * np.pi * phase) / self.period_s

    def depth_target(self, phase, xp=np):
        return xp.interp(self.z_target(phase, xp), xp.asarray(self._table_z), xp.asarray(self._table_d))

    # -- episode ---------------------------------------------------------------------
    def start(self, ctx: InitContext) -> InitialState:
        qpos = ctx.pose(squat_pose(0.0))
        ts = {"phase": np.float64(0.0), "went_below": np.bool_(False), "rose_after": np.bool_(False)}
        return InitialState(qpos, np.zeros(ctx.model.nv), ts)

    def randomize(self, init: InitialState, rng, xp) -> InitialState:
        """The standing start with the original's joint noise, at rest."""
        qpos, qvel = add_start_noise(self.start_tables, StartNoise(joint_rad=self.init_noise), init.qpos, init.qvel,
                                     rng, xp)
        return InitialState(qpos, qvel, init.task_state)

    def advance(self, s, ts, xp):
        z = s.pelvis_pos[2]
        return {
            "phase": advance_phase(ts["phase"], self.control_dt_s, self.period_s),
            "went_below": xp.logical_or(ts["went_below"], z < self.below_m),
            "rose_after": xp.logical_or(ts["rose_after"], xp.logical_and(ts["went_below"], z > self.above_m)),
        }

    def observation(self, s, ts, xp):
        return {
            "phase": phase_clock(ts["phase"], xp),
            "z_target": xp.reshape(self.z_target(ts["phase"], xp), (1,)),
        }

    def _mid_feet_xy(self, s, xp):
        pts = xp.stack([s.pos("foot_l"), s.pos("foot_r"), s.pos("toes_l"), s.pos("toes_r")])
        return xp.mean(pts[:, :2], axis=0)

    def reward_terms(self, s, ts, xp):
        phase = ts["phase"]
        depth = self.depth_target(phase, xp)
        hip = 0.5 * (s.joint("hip_flexion_l") + s.joint("hip_flexion_r"))
        knee = 0.5 * (s.joint("knee_l") + s.joint("knee_r"))
        d_xy = s.pelvis_pos[:2] - self._mid_feet_xy(s, xp)
        return {
            "height_tracking": xp.exp(-30.0 * (s.pelvis_pos[2] - self.z_target(phase, xp)) ** 2),
            "hip_tracking": xp.exp(-5.0 * (hip - SQUAT_DEPTH_JOINTS["hip_flexion"] * depth) ** 2),
            "knee_tracking": xp.exp(-5.0 * (knee - SQUAT_DEPTH_JOINTS["knee_angle"] * depth) ** 2),
            "vertical_velocity_tracking": xp.exp(-5.0 * (s.com_vel[2] - self.vz_target(phase, xp)) ** 2),
            "com_centered": xp.exp(-15.0 * xp.sum(d_xy**2)),
            "kneeling_penalty": xp.where(xp.min(s.knee_heights) < self.knee_height_min_m, 1.0, 0.0),
            "efficiency": efficiency(s, xp),
        }

    def termination(self, s, ts, xp):
        return {
            "pelvis_too_low": s.pelvis_pos[2] < self.pelvis_height_min_m,
            "kneeling": xp.min(s.knee_heights) < self.knee_height_min_m,
        }

    def success(self, ts, steps, terminated, xp):
        return xp.asarray(ts["rose_after"])

    def success_trace(self, ts):
        return {"went_below": bool(ts["went_below"]), "rose_after": bool(ts["rose_after"])}

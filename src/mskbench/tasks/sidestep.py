"""Sidestep (locomotion): shuffle sideways to the left in a crab guard stance.

Paper rows: Table VII (rewards), Table X (observations, init, termination),
Table XII (success).

==========================  ===================================================
reward term (weight)        formula
==========================  ===================================================
lateral_velocity (400)      ``clip(v_y,CoM / v_target, −0.2, 1)``
phase_sync (200)            ``exp(−15(e_L + e_R))``
com_mid_feet_lock (−500)    ``|y_pelvis − ½(y_foot,L + y_foot,R)|``
rubber_band_splits (−400)   ``max(0, d_xy,feet − 0.3)``
efficiency (−1)             ``mean(a²)`` (our weight)
==========================  ===================================================

The phase clock ``φ ∈ [0, 1)`` advances by ``Δt / T`` per control step. The
stepping pattern: the leading (left) foot is lifted during the first half of
each cycle and the trailing (right) foot during the second half, each to a
peak clearance ``h``::

    h_L(φ) = h · max(0,  sin 2πφ)        h_R(φ) = h · max(0, −sin 2πφ)
    e_L = |c_foot,L − h_L(φ)|            e_R = |c_foot,R − h_R(φ)|

with ``c_foot = min(z_heel − z_heel,flat, z_toes − z_toes,flat)`` the foot's
clearance: how far both its heel (calcaneus origin) and toes origin are above
where they sit when standing flat (measured in ``bind``;
:func:`mskbench.tasks.gait.foot_clearance`).

Choices where the paper is open (also in ``docs/tasks.md``):

* Direction +y (to the body's left); ``v_target = 1.0`` m/s, the original's
  (``msk_bench_v0.py@a68b6ce::MSKBenchSidestepEnvV0._setup``, ``target_y_vel``).
* Step period ``T = 1/1.5`` s (the original's ``step_freq = 1.5`` Hz), peak
  clearance ``h = 0.08`` m and the left foot first (the original's
  ``0.08·max(0, sin φ)``, ``max(0, sin(φ + π))``); ``e_L``, ``e_R`` are height
  errors (m) against that reference — the lateral motion itself is rewarded by
  ``lateral_velocity`` and bounded by the split terms.
* The phase starts at 0 (both feet down) at every reset.
* Initial state ("crab guard stance, hips wide"), the original's
  (``MSKBenchSidestepEnvV0.reset``): hips flexed 0.2 rad and abducted 0.1 rad,
  knees 0.3 rad, ankles plantarflexed 0.1 rad, then every independent joint perturbed by
  ``N(0, 0.01²)`` rad (clipped to the joint ranges, dependents resolved) and every velocity of
  the body by ``N(0, 0.01²)`` (dependent joints' by the chain rule; :mod:`mskbench.tasks.starts`);
  on the floor (the original drops the root from 0.90 m and steps 10 ms before the episode: those
  settling steps are not run). Drawn on the host (``initial_state``): the
  placement depends on the noise.
* Horizon 1,000 steps (10 s at 1 ms × 10; the original's registry,
  ``registry.py@a68b6ce``): 9 m needs 0.9 m/s on average.

Observation: phase ``(sin 2πφ, cos 2πφ)`` (2), lateral distance of the feet
``Δy_feet = y_foot,L − y_foot,R`` (1).
Termination: ``z_pelvis < 0.45`` m (``pelvis_too_low``), ``d_xy,feet > 0.5`` m
(``split``). Success: maximum absolute lateral pelvis displacement from the
start ``≥ 9`` m (``max_lateral`` in the task state).

Native solved: none — the original's ``solved`` for Sidestep is never set (a constant 0,
``MSKBenchSidestepEnvV0.get_reward_dict``).

Options (``Sidestep.Config``): ``target_speed_mps`` (1.0), ``period_s`` (1/1.5),
``step_height_m``, ``band_m``, ``pelvis_height_min_m``, ``split_max_m``,
``success_distance_m``, ``init_noise_rad`` (the values above).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mskbench.tasks.base import (HostRandom, InitContext, InitialState, Task, TaskConfig, advance_phase, check_positive,
                                 efficiency, option, phase_clock)
from mskbench.tasks.gait import flat_foot_heights, foot_clearance
from mskbench.tasks.starts import StartNoise, place_noisy

CRAB_GUARD = {
    "hip_flexion_l": 0.2, "hip_flexion_r": 0.2,
    "hip_adduction_l": -0.1, "hip_adduction_r": -0.1,
    "knee_angle_l": 0.3, "knee_angle_r": 0.3,
    "ankle_angle_l": -0.1, "ankle_angle_r": -0.1,
}


class Sidestep(Task):
    name = "Sidestep"
    family = "locomotion"
    horizon = 1000
    summary = "Side-shuffle to the left in a crab guard stance (9 m in 10 s)"
    reward_weights = {
        "lateral_velocity": 400.0,
        "phase_sync": 200.0,
        "com_mid_feet_lock": -500.0,
        "rubber_band_splits": -400.0,
        "efficiency": -1.0,
    }

    @dataclass(frozen=True)
    class Config(TaskConfig):
        target_speed_mps: float = option(1.0, "v_target, to the left (m/s)")
        period_s: float = option(1.0 / 1.5, "step period T of the phase clock (s)")
        step_height_m: float = option(0.08, "peak reference clearance h of a stepping foot (m)")
        band_m: float = option(0.3, "rubber_band_splits above this horizontal feet distance (m)")
        pelvis_height_min_m: float = option(0.45, "pelvis_too_low below this pelvis height (m)")
        split_max_m: float = option(0.5, "split above this horizontal feet distance (m)")
        success_distance_m: float = option(9.0, "success: maximum lateral pelvis displacement (m)")
        init_noise_rad: float = option(0.01, "initial noise N(0, this²) on every joint (rad) and velocity")

        def __post_init__(self):
            check_positive(self, "target_speed_mps", "period_s")
            check_positive(self, "init_noise_rad", allow_zero=True)

    #: Heel and toes heights standing flat (m), measured in ``bind``.
    flat_feet_m: np.ndarray = np.zeros(2)

    def bind(self, ctx: InitContext) -> None:
        super().bind(ctx)
        self.flat_feet_m = flat_foot_heights(ctx)

    def initial_state(self, ctx: InitContext, rng: np.random.Generator) -> InitialState:
        """The crab guard stance with joint and velocity noise, on the floor (host: the placement depends on the noise)."""
        base = ctx.pose(CRAB_GUARD, on_ground=False)
        qpos, qvel = place_noisy(ctx, self.start_tables, StartNoise.uniform(self.init_noise_rad), base,
                                 np.zeros(ctx.model.nv), HostRandom(rng))
        pelvis = ctx.forward(qpos).pelvis_pos
        ts = {"phase": np.float64(0.0), "y0": np.float64(pelvis[1]), "max_lateral": np.float64(0.0)}
        return InitialState(qpos, qvel, ts)

    def advance(self, s, ts, xp):
        lateral = xp.abs(s.pelvis_pos[1] - ts["y0"])
        return {
            "phase": advance_phase(ts["phase"], self.control_dt_s, self.period_s),
            "y0": ts["y0"],
            "max_lateral": xp.maximum(ts["max_lateral"], lateral),
        }

    def reference_clearance(self, phase, xp):
        """``(h_L(φ), h_R(φ))``: the reference clearance of each foot (2,), m."""
        wave = xp.sin(2.0 * np.pi * phase)
        return self.step_height_m * xp.stack([xp.maximum(wave, 0.0), xp.maximum(-wave, 0.0)])

    def observation(self, s, ts, xp):
        return {
            "phase": phase_clock(ts["phase"], xp),
            "delta_y_feet": xp.reshape(s.d_feet[1], (1,)),
        }

    def reward_terms(self, s, ts, xp):
        errors = xp.abs(foot_clearance(s, self.flat_feet_m, xp) - self.reference_clearance(ts["phase"], xp))
        mid_y = 0.5 * (s.foot_pos[0, 1] + s.foot_pos[1, 1])
        return {
            "lateral_velocity": xp.clip(s.com_vel[1] / self.target_speed_mps, -0.2, 1.0),
            "phase_sync": xp.exp(-15.0 * (errors[0] + errors[1])),
            "com_mid_feet_lock": xp.abs(s.pelvis_pos[1] - mid_y),
            "rubber_band_splits": xp.maximum(0.0, s.d_xy_feet - self.band_m),
            "efficiency": efficiency(s, xp),
        }

    def termination(self, s, ts, xp):
        return {
            "pelvis_too_low": s.pelvis_pos[2] < self.pelvis_height_min_m,
            "split": s.d_xy_feet > self.split_max_m,
        }

    def success(self, ts, steps, terminated, xp):
        return ts["max_lateral"] >= self.success_distance_m

    def success_trace(self, ts):
        return {"max_lateral": float(ts["max_lateral"])}

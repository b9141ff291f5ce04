"""Run (locomotion): run forward as fast as possible.

Paper rows: Table VII (rewards), Table X (observations, init, termination),
Table XII (success).

==========================  ===================================================
reward term (weight)        formula
==========================  ===================================================
high_velocity (200)         ``clip(v_x,CoM, −0.5, 6)``
speed_bonus (100)           ``I(v_x,CoM > 3 m/s)``
asymmetric_stride (200)     ``clip(d_x,feet + 2 d_z,feet, 0, 1)``
knee_flexion (200)          ``clip((max(q_knee,L, q_knee,R) − 0.1) / 1, 0, 1)``
scissor_penalty (−300)      ``clip((0.15 − d_y,feet) / 0.15, 0, 1)``
kangaroo_penalty (−300)     ``I(d_x,feet < 0.2 ∧ d_z,feet < 0.1)``
efficiency (−1)             ``mean(a²)`` (our weight)
==========================  ===================================================

``d_x,feet``, ``d_y,feet``, ``d_z,feet`` are the absolute differences of the
two feet's (calcaneus origins') world x, y, z. The paper's "200/100" weight is
split into ``high_velocity`` (200) and ``speed_bonus`` (100).

Choices where the paper is open (also in ``docs/tasks.md``):

* The "bonus if ``v > 3``" is the indicator of ``v_x,CoM > 3`` m/s.
* "Kangaroo penalty: penalize ``d_x < 0.2 ∧ d_z < 0.1``" is that indicator
  (both feet side by side at the same height: hopping with feet together).
* "Torso angle" observation: ``(pitch, roll)`` of ``u_torso`` (pelvis → head)
  in the pelvis heading frame (:func:`mskbench.tasks.gait.torso_angle`; the
  neutral stance has pitch ≈ −0.18 rad).
* "Fall backward" termination (``fell_backward``): torso pitch below −0.6 rad
  (leaning back more than ~34° from vertical, ~24° beyond the neutral stance).
* Initial state ("standard standing"): the neutral pose with every independent
  joint perturbed by ``N(0, 0.01²)`` rad (clipped to the joint ranges,
  dependents resolved) and every velocity of the body by ``N(0, 0.01²)``
  (dependent joints' by the chain rule; :mod:`mskbench.tasks.starts`), the original's noise
  (``msk_bench_v0.py@a68b6ce::MSKBenchRunEnvV0.reset``), on the floor (the
  original puts the root at 0.95 m); drawn on the host (``initial_state``): the
  placement depends on the noise.

Observation: torso angle ``(pitch, roll)`` (2), feet heights (2).
Termination: ``z_pelvis < 0.45`` m (``pelvis_too_low``), ``fell_backward``.
Success: maximum forward pelvis displacement from the start ``≥ 15`` m
(``max_forward`` in the task state). Horizon: 1,000 steps (10 s at 1 ms × 10; the
original's registry, ``registry.py@a68b6ce``: 15 m needs an average of 1.5 m/s including
the start from rest, a jog).

Native solved: none — the original's ``solved`` for Run is a constant 0
(``msk_bench_v0.py@a68b6ce::MSKBenchRunEnvV0.get_reward_dict``).

Options (``Run.Config``): ``bonus_speed_mps``, ``pelvis_height_min_m``,
``backward_pitch_min_rad``, ``success_distance_m``, ``init_noise_rad`` (the
values above).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mskbench.tasks.base import HostRandom, InitContext, InitialState, Task, TaskConfig, check_positive, efficiency, option
from mskbench.tasks.gait import torso_angle
from mskbench.tasks.starts import StartNoise, place_noisy

STANDING_LEGS = {
    "hip_flexion_l": 0.0, "hip_flexion_r": 0.0,
    "knee_angle_l": 0.0, "knee_angle_r": 0.0,
    "ankle_angle_l": 0.0, "ankle_angle_r": 0.0,
}


class Run(Task):
    name = "Run"
    family = "locomotion"
    horizon = 1000
    summary = "Run forward fast (15 m in 10 s)"
    reward_weights = {
        "high_velocity": 200.0,
        "speed_bonus": 100.0,
        "asymmetric_stride": 200.0,
        "knee_flexion": 200.0,
        "scissor_penalty": -300.0,
        "kangaroo_penalty": -300.0,
        "efficiency": -1.0,
    }

    @dataclass(frozen=True)
    class Config(TaskConfig):
        bonus_speed_mps: float = option(3.0, "speed_bonus above this forward CoM speed (m/s)")
        pelvis_height_min_m: float = option(0.45, "pelvis_too_low below this pelvis height (m)")
        backward_pitch_min_rad: float = option(-0.6, "fell_backward below this torso pitch (rad)")
        success_distance_m: float = option(15.0, "success: maximum forward pelvis displacement (m)")
        init_noise_rad: float = option(0.01, "initial noise N(0, this²) on every joint (rad) and velocity")

        def __post_init__(self):
            check_positive(self, "init_noise_rad", allow_zero=True)

    def initial_state(self, ctx: InitContext, rng: np.random.Generator) -> InitialState:
        """Standing with joint and velocity noise, on the floor (host: the placement depends on the noise)."""
        base = ctx.pose(STANDING_LEGS, on_ground=False)
        qpos, qvel = place_noisy(ctx, self.start_tables, StartNoise.uniform(self.init_noise_rad), base,
                                 np.zeros(ctx.model.nv), HostRandom(rng))
        pelvis = ctx.forward(qpos).pelvis_pos
        ts = {"x0": np.float64(pelvis[0]), "max_forward": np.float64(0.0)}
        return InitialState(qpos, qvel, ts)

    def advance(self, s, ts, xp):
        return {"x0": ts["x0"], "max_forward": xp.maximum(ts["max_forward"], s.pelvis_pos[0] - ts["x0"])}

    def observation(self, s, ts, xp):
        return {"torso_angle": torso_angle(s, xp), "feet_height": s.foot_heights}

    def reward_terms(self, s, ts, xp):
        vx = s.com_vel[0]
        d = xp.abs(s.d_feet)
        q_knee = xp.maximum(s.joint("knee_l"), s.joint("knee_r"))
        one, zero = 1.0, 0.0
        return {
            "high_velocity": xp.clip(vx, -0.5, 6.0),
            "speed_bonus": xp.where(vx > self.bonus_speed_mps, one, zero),
            "asymmetric_stride": xp.clip(d[0] + 2.0 * d[2], 0.0, 1.0),
            "knee_flexion": xp.clip((q_knee - 0.1) / 1.0, 0.0, 1.0),
            "scissor_penalty": xp.clip((0.15 - d[1]) / 0.15, 0.0, 1.0),
            "kangaroo_penalty": xp.where(xp.logical_and(d[0] < 0.2, d[2] < 0.1), one, zero),
            "efficiency": efficiency(s, xp),
        }

    def termination(self, s, ts, xp):
        return {
            "pelvis_too_low": s.pelvis_pos[2] < self.pelvis_height_min_m,
            "fell_backward": torso_angle(s, xp)[0] < self.backward_pitch_min_rad,
        }

    def success(self, ts, steps, terminated, xp):
        return ts["max_forward"] >= self.success_distance_m

    def success_trace(self, ts):
        return {"max_forward": float(ts["max_forward"])}

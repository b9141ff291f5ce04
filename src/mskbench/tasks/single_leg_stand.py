"""SingleLegStand (stabilization): hold a "flamingo" stance on the right foot.

Paper rows: Table VI row 3 (rewards), Table IX row 3 (observations, init,
termination), Table XII (success), Fig. 11(d).

==========================  ===================================================
reward term (weight)        formula
==========================  ===================================================
balance_com (500)           ``exp(−15‖p_pelvis^xy − p_foot,R^xy‖²)``
lifted_foot_clear (300)     ``clip(z_foot,L / 0.3, 0, 1)``
absolute_stillness (400)    ``exp(−5‖v_CoM‖²)``
upright_alignment (200)     ``exp(−10(1 − u_torso·ẑ)²)``
foot_touch_penalty (−800)   ``I(z_foot,L < 0.05 m)``
lateral_lean_penalty (−200) ``|u_torso·ŷ|``
efficiency (−1)             ``mean(a²)`` (our weight, as in every task)
==========================  ===================================================

``p_foot`` / ``z_foot`` are the calcaneus origins (the project's foot point),
``u_torso`` the unit vector from pelvis to head.

Observation: torso quaternion (4), feet heights ``z_foot,L, z_foot,R`` (2),
CoM height ``z_CoM`` (1).

Initial state ("flamingo pose, noise"): standing on the right foot with the
left foot lifted — left hip flexed 0.4 rad, left knee flexed 1.7 rad (the
shank folded back, left heel ~0.43 m and toes ~0.26 m above the floor), right
hip adducted 0.1 rad so the stance foot is under the pelvis — plus the
original's noise ``N(0, 0.01²)`` rad on every independent joint
(``msk_bench_v0.py@a68b6ce::MSKBenchSingleLegStandEnvV0.reset``), clipped to
the joint ranges; couplings resolved, lowered onto the floor (the right foot
touches), zero velocity (the original's too; its 20 settling physics steps are
not run). Drawn on the host (``initial_state``): the ground placement depends
on the noise.

Termination:

* ``pelvis_too_low``: ``z_pelvis < 0.6`` m;
* ``dropped_foot``: after a tolerance of 10 control steps (from step 11 on),
  the lifted foot touches the ground: the lower of the left heel (calcaneus)
  and left toes origins is below 0.05 m.

Success: 1,000 steps without earlier termination. Horizon: 1,000 steps (10 s
at the body's 1 ms × 10, as the original's ``body/full_body.xml@4ffd2d6``).

Native solved: none (the original's ``solved`` is the constant 0.0,
``benchmark/msk_bench_v0.py@a68b6ce::MSKBenchSingleLegStandEnvV0.get_reward_dict``).

Choices where the paper is open:

* "Dropped foot" is a geometric test (no contact list): ``min(z_calcn,L,
  z_toes,L) < 0.05`` m, the 0.05 m of the foot-touch penalty; both origins sit
  ~0.02 m above the floor when the foot is planted, so a flat foot, a heel or a
  tip-toe touch all count. The penalty term keeps the paper's ``z_foot,L``
  (heel) only.
* The 10-step tolerance is counted in control steps (0.1 s) by a step counter
  in the task state (``steps``).
* The pose above (the noise is the original's); the right (not left) leg is the stance
  leg, as the paper's balance term (``p_foot,R``) implies. The folded-back
  shank was chosen over a thigh-forward pose (hip 0.9, knee 1.5 rad): left
  without control, its toes reach the floor after ~45 control steps instead
  of ~15, so the 10-step tolerance is not the only slack a learner gets.

Options (``SingleLegStand.Config``): ``init_noise_rad`` (0.01), ``tolerance_steps``
(10), ``touch_height_m`` (0.05), ``pelvis_height_min_m`` (0.6).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mskbench.tasks.base import (HostRandom, InitContext, InitialState, Task, TaskConfig, check_positive, efficiency,
                                 option, survived)
from mskbench.tasks.starts import StartNoise, add_start_noise

FLAMINGO_POSE = {
    "hip_flexion_l": 0.4,
    "knee_angle_l": 1.7,
    "hip_adduction_r": 0.1,
}


class SingleLegStand(Task):
    name = "SingleLegStand"
    family = "stabilization"
    horizon = 1000
    goal_is_start = True
    summary = "Hold a flamingo stance on the right foot, left foot lifted"
    reward_weights = {
        "balance_com": 500.0,
        "lifted_foot_clear": 300.0,
        "absolute_stillness": 400.0,
        "upright_alignment": 200.0,
        "foot_touch_penalty": -800.0,
        "lateral_lean_penalty": -200.0,
        "efficiency": -1.0,
    }

    @dataclass(frozen=True)
    class Config(TaskConfig):
        pelvis_height_min_m: float = option(0.6, "pelvis_too_low below this pelvis height (m)")
        touch_height_m: float = option(0.05, "the lifted foot touches below this height (m)")
        tolerance_steps: int = option(10, "control steps before dropped_foot can end the episode")
        init_noise_rad: float = option(0.01, "initial noise N(0, this²) on every joint (rad); velocities zero")

        def __post_init__(self):
            check_positive(self, "init_noise_rad", "tolerance_steps", allow_zero=True)

    def initial_state(self, ctx: InitContext, rng: np.random.Generator) -> InitialState:
        """The flamingo pose with the original's joint noise, clipped to the joint ranges, then lowered onto
        the floor (host: the placement depends on the noise)."""
        base = ctx.pose(FLAMINGO_POSE, on_ground=False)
        qpos, qvel = add_start_noise(self.start_tables, StartNoise(joint_rad=self.init_noise_rad), base,
                                     np.zeros(ctx.model.nv), HostRandom(rng), np)
        return InitialState(ctx.pose(base=qpos, root_xy=(float(qpos[0]), float(qpos[1]))), qvel,
                            {"steps": np.int64(0)})

    def advance(self, s, ts, xp):
        return {"steps": ts["steps"] + 1}

    def observation(self, s, ts, xp):
        return {
            "torso_quat": s.quat("torso"),
            "feet_height": s.foot_heights,
            "com_height": s.com_pos[2:3],
        }

    def reward_terms(self, s, ts, xp):
        d_xy = s.pelvis_pos[:2] - s.pos("foot_r")[:2]
        z_left = s.foot_heights[0]
        return {
            "balance_com": xp.exp(-15.0 * xp.sum(d_xy**2)),
            "lifted_foot_clear": xp.clip(z_left / 0.3, 0.0, 1.0),
            "absolute_stillness": xp.exp(-5.0 * xp.sum(s.com_vel**2)),
            "upright_alignment": xp.exp(-10.0 * (1.0 - s.u_torso[2]) ** 2),
            "foot_touch_penalty": xp.where(z_left < self.touch_height_m, 1.0, 0.0),
            "lateral_lean_penalty": xp.abs(s.u_torso[1]),
            "efficiency": efficiency(s, xp),
        }

    def termination(self, s, ts, xp):
        lifted_low = xp.minimum(s.foot_heights[0], s.pos("toes_l")[2])
        return {
            "pelvis_too_low": s.pelvis_pos[2] < self.pelvis_height_min_m,
            "dropped_foot": xp.logical_and(ts["steps"] > self.tolerance_steps, lifted_low < self.touch_height_m),
        }

    def success(self, ts, steps, terminated, xp):
        return survived(steps, terminated, self.horizon, xp)

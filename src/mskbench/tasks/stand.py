"""Stand (stabilization): hold a static upright posture from the neutral pose.

Paper rows: Table VI (rewards), Table IX (observations, init, termination),
Table XII (success).

==========================  ===================================================
reward term (weight)        formula
==========================  ===================================================
pose_preservation (10)      ``exp(−‖q_joints − q0_joints‖)``
absolute_stillness (15)     ``exp(−10‖v_CoM‖) · exp(−0.1‖q̇‖)``
feet_planted (10)           ``exp(−10(‖v_foot,L‖ + ‖v_foot,R‖))``
torso_balance (10)          ``exp(−5 max(0, 1 − u_torso·ẑ))``
survival (5)                ``1``
efficiency (−1)             ``mean(a²)`` — our choice of weight (the paper
                            applies it "broadly" without a number)
==========================  ===================================================

Observation: torso quaternion (4), feet heights (2).
Initial state ("default neutral, zero vel."): the neutral pose (couplings resolved) lowered onto
the floor, at zero velocity as the paper states, plus the original's per-episode noise
``N(0, 0.005²)`` on every independent joint (clipped to its range, dependents resolved), on the
root's ``x, y`` and on each root-quaternion component (then normalised)
(``msk_bench_v0.py@a68b6ce::MSKBenchStandEnvV0.reset``, which also noises every velocity: the
paper's "zero vel." decides those). Drawn per episode by ``randomize`` (on the device in the
batched env); the root height is not noised and the noisy pose is not re-placed (see docs/tasks.md
for how far the feet end up from the floor). ``q0_joints``/``q0_root`` in the task state are the
noise-free neutral pose (the original's pose term and native signal read ``qpos0``).
Termination: ``z_CoM < 0.8`` m or root tilt ``> 0.8`` rad.
Success: 1,000 steps without earlier termination. Horizon: 1,000 control steps
(10 s at the 1 ms × 10 control step of the original's ``full_body.xml``).

Native solved (the original's ``solved``, ``msk_bench_v0.py@a68b6ce::MSKBenchStandEnvV0.get_reward_dict``):
``‖q[2:] − q0[2:]‖ < 0.2 ∧ exp(−10‖v_CoM,xy‖)·exp(−0.1‖q̇‖) > 0.9`` — the distance over the
root height, root quaternion and every joint from the start pose (``q0_root`` and ``q0_joints``
in the task state), the stillness over the horizontal CoM velocity and all generalised
velocities. It holds at rest in the start pose.

Options (``Stand.Config``): the termination thresholds ``com_height_min_m``,
``tilt_max_rad``; ``init_noise`` (σ of the start noise above).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mskbench.tasks.base import (InitContext, InitialState, Task, TaskConfig, check_positive, efficiency, fell, option,
                                 survived)
from mskbench.tasks.starts import StartNoise, add_start_noise


class Stand(Task):
    name = "Stand"
    family = "stabilization"
    horizon = 1000
    summary = "Hold a static upright posture from the neutral pose"
    reward_weights = {
        "pose_preservation": 10.0,
        "absolute_stillness": 15.0,
        "feet_planted": 10.0,
        "torso_balance": 10.0,
        "survival": 5.0,
        "efficiency": -1.0,
    }
    goal_is_start = True
    native_solved = ("‖q[2:] − q0[2:]‖ < 0.2 (root height, root quaternion, joints vs the start) and "
                     "exp(−10‖v_CoM,xy‖)·exp(−0.1‖q̇‖) > 0.9; "
                     "msk_bench/envs/msk/benchmark/msk_bench_v0.py@a68b6ce::MSKBenchStandEnvV0.get_reward_dict")

    @dataclass(frozen=True)
    class Config(TaskConfig):
        com_height_min_m: float = option(0.8, "com_too_low below this CoM height (m)")
        tilt_max_rad: float = option(0.8, "tilted above this root tilt (rad)")
        init_noise: float = option(0.005, "start noise N(0, this²) on the joints (rad), root x, y (m) and quaternion")

        def __post_init__(self):
            check_positive(self, "init_noise", allow_zero=True)

    def start(self, ctx: InitContext) -> InitialState:
        qpos = ctx.pose()
        q0 = qpos[ctx.handles.joint_qpos].copy()
        return InitialState(qpos, np.zeros(ctx.model.nv), {"q0_joints": q0, "q0_root": qpos[2:7].copy()})

    def randomize(self, init: InitialState, rng, xp) -> InitialState:
        """The neutral start with the original's joint and root noise, at zero velocity."""
        noise = StartNoise(joint_rad=self.init_noise, root_xy_m=self.init_noise, root_quat=self.init_noise)
        qpos, qvel = add_start_noise(self.start_tables, noise, init.qpos, init.qvel, rng, xp)
        return InitialState(qpos, qvel, init.task_state)

    def observation(self, s, ts, xp):
        return {"torso_quat": s.quat("torso"), "feet_height": s.foot_heights}

    def reward_terms(self, s, ts, xp):
        norm = xp.linalg.norm
        return {
            "pose_preservation": xp.exp(-norm(s.q_joints - ts["q0_joints"])),
            "absolute_stillness": xp.exp(-10.0 * norm(s.com_vel)) * xp.exp(-0.1 * norm(s.qdot)),
            "feet_planted": xp.exp(-10.0 * (norm(s.vel("foot_l")) + norm(s.vel("foot_r")))),
            "torso_balance": xp.exp(-5.0 * xp.maximum(0.0, 1.0 - s.u_torso[2])),
            "survival": xp.ones(()),
            "efficiency": efficiency(s, xp),
        }

    def termination(self, s, ts, xp):
        return fell(s, self.com_height_min_m, self.tilt_max_rad, xp)

    def success(self, ts, steps, terminated, xp):
        return survived(steps, terminated, self.horizon, xp)

    def native_pose_distance(self, s, ts, xp):
        """``‖q[2:] − q0[2:]‖``: root height, root quaternion and joints from the start pose."""
        d_root = s.q[2:7] - ts["q0_root"]
        d_joints = s.q_joints - ts["q0_joints"]
        return xp.sqrt(xp.sum(d_root**2) + xp.sum(d_joints**2))

    def native_stillness(self, s, xp):
        """``exp(−10‖v_CoM,xy‖)·exp(−0.1‖q̇‖)`` (the original's CoM velocity is horizontal)."""
        return xp.exp(-10.0 * xp.linalg.norm(s.com_vel[:2])) * xp.exp(-0.1 * xp.linalg.norm(s.qdot))

    def solved_native(self, s, ts, steps, xp):
        return xp.logical_and(self.native_pose_distance(s, ts, xp) < 0.2, self.native_stillness(s, xp) > 0.9)

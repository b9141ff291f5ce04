"""Walk (locomotion): walk forward at a target speed, imitating a synthetic gait.

Paper rows: Table VII (rewards), Table X (observations, init, termination),
Table XII (success).

==========================  ===================================================
reward term (weight)        formula
==========================  ===================================================
velocity_tracking (10)      ``exp(−2‖v_CoM − v_target‖²)``
kinematic_imitation (3)     ``exp(−2‖q_joints − q_ref,joints(φ)‖²)``
upright (6)                 ``exp(−10(1 − u_torso·ẑ))``
no_hunch (8)                ``exp(−20(u_chest·ẑ + 0.1)²)``
forward_face (8)            ``exp(−5(1 − u_chest·x̂))``
efficiency (−1)             ``mean(a²)`` (our weight)
==========================  ===================================================

Choices where the paper is open: ``v_target = (1.2, 0, 0)`` m/s and a stride
period of 1.1 s (the synthetic reference of
:mod:`mskbench.tasks.walk_reference`, which is walked at that speed): options
``target_speed_mps`` and ``period_s``; the termination thresholds are options
``com_height_min_m`` and ``tilt_max_rad`` (``Walk.Config``).

Observation: phase clock ``(sin 2πφ, cos 2πφ)`` (2) and ``Δq = q_joints − q_ref``
(122). Initial state: a phase drawn uniformly, the reference pose and joint
velocities at that phase, root moving forward at ``v_target``, lowered onto
the floor (on the host, ``initial_state``: the placement depends on the
phase). Termination: ``z_CoM < 0.5`` m or root tilt ``> 0.8`` rad.
Success: 1,000 steps without earlier termination. Horizon: 1,000 steps (10 s at the
1 ms × 10 control step of the original's ``full_body.xml``).

Native solved (the original's ``solved``, ``walk_v0.py@4ffd2d6::WalkEnvV0.get_reward_dict``):
``kinematic_imitation > 0.8``, i.e. ``exp(−2‖q_joints − q_ref(φ)‖²) > 0.8``. It holds at the
reference start (every episode starts on the reference).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mskbench.tasks.base import (InitContext, InitialState, Task, TaskConfig, advance_phase, check_positive, efficiency,
                                 fell, option, phase_clock, survived)
from mskbench.tasks.walk_reference import WalkReference


class Walk(Task):
    name = "Walk"
    family = "locomotion"
    horizon = 1000
    summary = "Walk forward at 1.2 m/s, imitating a synthetic gait"
    reward_weights = {
        "velocity_tracking": 10.0,
        "kinematic_imitation": 3.0,
        "upright": 6.0,
        "no_hunch": 8.0,
        "forward_face": 8.0,
        "efficiency": -1.0,
    }
    native_solved = ("kinematic_imitation exp(−2‖q_joints − q_ref(φ)‖²) > 0.8; "
                     "msk_bench/envs/msk/benchmark/walk_v0.py@4ffd2d6::WalkEnvV0.get_reward_dict")
    native_degenerate = ("every episode starts on the reference pose, so the joint tracking exceeds 0.8 on the first "
                         "step: the zero, passive and random policies all meet it in 50 of 50 episodes "
                         "(benchmarks/native_degeneracy.py)")

    @dataclass(frozen=True)
    class Config(TaskConfig):
        target_speed_mps: float = option(1.2, "v_target, forward (m/s); also the speed of the reference gait")
        period_s: float = option(1.1, "stride period of the phase clock and the reference (s)")
        com_height_min_m: float = option(0.5, "com_too_low below this CoM height (m)")
        tilt_max_rad: float = option(0.8, "tilted above this root tilt (rad)")

        def __post_init__(self):
            check_positive(self, "target_speed_mps", "period_s")

    #: The synthetic gait, built in ``bind``.
    reference: WalkReference | None = None

    def bind(self, ctx: InitContext) -> None:
        super().bind(ctx)
        self.reference = WalkReference.build(ctx.model, ctx.handles, ctx.default_qpos,
                                             period_s=self.period_s, speed_mps=self.target_speed_mps)

    def _ref(self) -> WalkReference:
        if self.reference is None:
            raise RuntimeError("Walk task is not bound to a model; call bind() first")
        return self.reference

    def initial_state(self, ctx: InitContext, rng: np.random.Generator) -> InitialState:
        """The reference at a uniformly drawn phase, on the floor (host: the placement depends on the phase)."""
        phase = float(rng.uniform(0.0, 1.0))
        qpos, qvel = self._ref().state_at(ctx, phase, self.target_speed_mps)
        return InitialState(qpos, qvel, {"phase": np.float64(phase)})

    def advance(self, s, ts, xp):
        return {"phase": advance_phase(ts["phase"], self.control_dt_s, self.period_s)}

    def observation(self, s, ts, xp):
        return {
            "phase": phase_clock(ts["phase"], xp),
            "delta_q": s.q_joints - self._ref().q_ref(ts["phase"], xp),
        }

    def kinematic_imitation(self, s, ts, xp):
        """``exp(−2‖q_joints − q_ref(φ)‖²)``."""
        dq = s.q_joints - self._ref().q_ref(ts["phase"], xp)
        return xp.exp(-2.0 * xp.sum(dq**2))

    def reward_terms(self, s, ts, xp):
        v_target = xp.asarray([self.target_speed_mps, 0.0, 0.0])
        return {
            "velocity_tracking": xp.exp(-2.0 * xp.sum((s.com_vel - v_target) ** 2)),
            "kinematic_imitation": self.kinematic_imitation(s, ts, xp),
            "upright": xp.exp(-10.0 * (1.0 - s.u_torso[2])),
            "no_hunch": xp.exp(-20.0 * (s.u_chest[2] + 0.1) ** 2),
            "forward_face": xp.exp(-5.0 * (1.0 - s.u_chest[0])),
            "efficiency": efficiency(s, xp),
        }

    def termination(self, s, ts, xp):
        return fell(s, self.com_height_min_m, self.tilt_max_rad, xp)

    def success(self, ts, steps, terminated, xp):
        return survived(steps, terminated, self.horizon, xp)

    def solved_native(self, s, ts, steps, xp):
        return self.kinematic_imitation(s, ts, xp) > 0.8

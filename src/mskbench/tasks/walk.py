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
:mod:`mskbench.tasks.walk_reference`, which is walked at that speed).

Observation: phase clock ``(sin 2πφ, cos 2πφ)`` (2) and ``Δq = q_joints − q_ref``
(122). Initial state: a phase drawn uniformly, the reference pose and joint
velocities at that phase, root moving forward at ``v_target``, lowered onto
the floor. Termination: ``z_CoM < 0.5`` m or root tilt ``> 0.8`` rad.
Success: 1,000 steps without earlier termination. Horizon: 1,000 steps.
"""

from __future__ import annotations

import numpy as np

from mskbench.tasks.base import (InitContext, InitialState, Task, advance_phase, efficiency, fell, phase_clock,
                                 survived)
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
    com_height_min_m = 0.5
    tilt_max_rad = 0.8

    def __init__(self, target_speed_mps: float = 1.2, period_s: float = 1.1):
        if period_s <= 0:
            raise ValueError(f"period_s must be positive, got {period_s}")
        if target_speed_mps <= 0:
            raise ValueError(f"target_speed_mps must be positive (the reference gait walks forward), "
                             f"got {target_speed_mps}")
        self.target_speed_mps = float(target_speed_mps)
        self.period_s = float(period_s)
        self.control_dt_s = 0.01
        self.reference: WalkReference | None = None

    def bind(self, ctx: InitContext) -> None:
        self.control_dt_s = ctx.control_dt_s
        self.reference = WalkReference.build(ctx.model, ctx.handles, ctx.default_qpos,
                                             period_s=self.period_s, speed_mps=self.target_speed_mps)

    def _ref(self) -> WalkReference:
        if self.reference is None:
            raise RuntimeError("Walk task is not bound to a model; call bind() first")
        return self.reference

    def initial_state(self, ctx: InitContext, rng: np.random.Generator) -> InitialState:
        ref = self._ref()
        phase = float(rng.uniform(0.0, 1.0))
        base = ctx.default_qpos.copy()
        base[ctx.handles.joint_qpos] = ref.q_ref(phase)
        qpos = ctx.pose(base=base)
        qvel = np.zeros(ctx.model.nv)
        qvel[ctx.handles.joint_dof] = ref.qdot_ref(phase)
        qvel[0] = self.target_speed_mps
        return InitialState(qpos, qvel, {"phase": np.float64(phase)})

    def advance(self, s, ts, xp):
        return {"phase": advance_phase(ts["phase"], self.control_dt_s, self.period_s)}

    def observation(self, s, ts, xp):
        return {
            "phase": phase_clock(ts["phase"], xp),
            "delta_q": s.q_joints - self._ref().q_ref(ts["phase"], xp),
        }

    def reward_terms(self, s, ts, xp):
        v_target = xp.asarray([self.target_speed_mps, 0.0, 0.0])
        dq = s.q_joints - self._ref().q_ref(ts["phase"], xp)
        return {
            "velocity_tracking": xp.exp(-2.0 * xp.sum((s.com_vel - v_target) ** 2)),
            "kinematic_imitation": xp.exp(-2.0 * xp.sum(dq**2)),
            "upright": xp.exp(-10.0 * (1.0 - s.u_torso[2])),
            "no_hunch": xp.exp(-20.0 * (s.u_chest[2] + 0.1) ** 2),
            "forward_face": xp.exp(-5.0 * (1.0 - s.u_chest[0])),
            "efficiency": efficiency(s, xp),
        }

    def termination(self, s, ts, xp):
        return fell(s, self.com_height_min_m, self.tilt_max_rad, xp)

    def success(self, ts, steps, terminated, xp):
        return survived(steps, terminated, self.horizon, xp)

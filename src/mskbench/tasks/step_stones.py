"""StepStones (interaction): cross a row of elevated stepping stones.

Paper rows: Table VIII row 3 (rewards), Table XI row 3 (observations, init,
termination), Table XII (success), Fig. 13(b).

=============================  ================================================
reward term (weight)           formula
=============================  ================================================
stone_progress (800)           target stone progress: the number of stones
                               whose x the pelvis crossed in this step
                               (1 on the step a stone is crossed, else 0)
magnetic_reaching (150)        ``exp(−2 d_lead) · I(v_x,CoM > 0.1)``
stand_tall (50)                ``clip((Δz_leg − 0.6)/0.3, 0, 1)``
overbend_knee (−50)            ``Σ_knees max(q_knee − 1.0, 0)``
efficiency (−1)                ``mean(a²)`` (our weight)
=============================  ================================================

The course is the original scene's (``step_stones.xml@a68b6ce``; the paper gives
no sizes): 10 vertical cylinders of radius 0.15 m standing on the floor, tops at
2.0 m, centres ``(x, y)`` = (0, 0), (0.45, 0.05), (0.90, −0.05), (1.35, 0.02),
(1.80, −0.02), (2.25, 0.05), (2.70, −0.05), (3.15, 0), (3.60, 0), (4.50, 0);
friction 2.0 (``priority`` makes it the contact's coefficient). Stone 0 is the
start; between the stones there is nothing but the floor 2 m below
(:mod:`mskbench.tasks.terrain`).

Targets: the top centres of stones 1–9. ``current_stone_idx`` (task state
``stone_idx``) is the original's index: the number of stones after the start
stone whose centre x the pelvis has passed (it only increases; at most 9); the
current target is stone ``idx + 1`` (clipped to 9). The final index is 9:
success is passing the last stone's x.

Choices where the paper is open:

* ``d_lead``: distance from the lead foot (the calcaneus origin further
  along +x) to the top centre of the current target.
* Overbend knee: summed over both knees (knee flexion positive, rad).
* Observation ``stones_dp``: the next three targets (stones ``idx+1 …
  idx+3``, clipped to the last) relative to the pelvis, 3 × 3 values.
* Phase clock: period 1.1 s from phase 0 at reset.
* Initial state (Table XI "elevated platform z = 3.05 m", as the original's
  reset): root over stone 0, pelvis at 3.05 m (the feet ~0.1 m above the stone
  top: the body drops onto it), hips flexed 0.2 (left) and −0.1 (right) rad,
  left knee 0.1 rad, plus the original's per-episode noise ``N(0, 0.01²)`` on
  every independent joint (clipped to its range, dependents resolved) and on
  every velocity of the body (root and joints; dependents' by the chain rule)
  (``msk_bench_v0.py@a68b6ce::MSKBenchStepStonesEnvV0.reset``); drawn by
  ``randomize`` (on the device in the batched env). The original's 15 settling
  physics steps are not run (the body is in the air for them).

Observation: phase ``(sin 2πφ, cos 2πφ)`` (2), ``stones_dp`` (9).
Termination: ``fell_from_height`` (``z_pelvis < 2.5`` m, absolute).
Success: ``current_stone_idx`` reaches 9. Native solved: the same condition
(``current_stone_idx ≥ 9``, the original's ``solved``).
Timing: the original scene's 2 ms physics step × 10 (20 ms control step);
horizon 1,000 steps (the original's ``registry.py``) = 20 s.

Options (``StepStones.Config``): ``pelvis_height_min_m`` (2.5 m),
``n_obs_targets`` (3), ``period_s`` (1.1 s), ``init_noise`` (0.01). The course is fixed.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from mskbench.tasks.base import (InitContext, InitialState, Task, TaskConfig, advance_phase, check_positive, efficiency,
                                 option, phase_clock)
from mskbench.tasks.starts import StartNoise, add_start_noise
from mskbench.tasks.terrain import CylinderTerrain

#: Top of every stone (m).
TOP_Z_M = 2.0
STONE_RADIUS_M = 0.15
STONE_FRICTION = 2.0
#: Stone centres (x, y), stone 0 the start (``step_stones.xml@a68b6ce``).
STONE_XY = np.array([(0.00, 0.00), (0.45, 0.05), (0.90, -0.05), (1.35, 0.02), (1.80, -0.02),
                     (2.25, 0.05), (2.70, -0.05), (3.15, 0.00), (3.60, 0.00), (4.50, 0.00)])
N_STONES = len(STONE_XY)
#: Stone centres along x (m).
STONE_X = STONE_XY[:, 0]
#: Target points: the stone-top centres (N_STONES, 3); target ``idx + 1`` follows index ``idx``.
TARGETS = np.column_stack([STONE_XY, np.full(N_STONES, TOP_Z_M)])
#: Initial pelvis height (m): Table XI's "z = 3.05 m", the original's reset.
START_PELVIS_Z_M = 3.05
#: Joints of the start pose (rad), the original's reset.
START_JOINTS = {"hip_flexion_l": 0.2, "knee_angle_l": 0.1, "hip_flexion_r": -0.1}


def stone_course() -> CylinderTerrain:
    return CylinderTerrain("stepstones_stone", STONE_XY.copy(), np.full(N_STONES, STONE_RADIUS_M),
                           np.full(N_STONES, TOP_Z_M), friction=STONE_FRICTION)


class StepStones(Task):
    name = "StepStones"
    family = "interaction"
    horizon = 1000
    #: The original scene's 2 ms physics step (``step_stones.xml``), 10 per control step: 20 ms, 20 s episodes.
    timestep_s = 0.002
    summary = "Cross a row of elevated stepping stones"
    reward_weights = {
        "stone_progress": 800.0,
        "magnetic_reaching": 150.0,
        "stand_tall": 50.0,
        "overbend_knee": -50.0,
        "efficiency": -1.0,
    }

    @dataclass(frozen=True)
    class Config(TaskConfig):
        pelvis_height_min_m: float = option(2.5, "fell_from_height below this pelvis height (m, absolute)")
        n_obs_targets: int = option(3, "targets observed in stones_dp, from the current one")
        period_s: float = option(1.1, "period of the phase clock (s)")
        init_noise: float = option(0.01, "start noise N(0, this²) on every joint (rad) and velocity")

        def __post_init__(self):
            check_positive(self, "period_s", "n_obs_targets")
            check_positive(self, "init_noise", allow_zero=True)

    terrain = stone_course()
    stone_x = STONE_X
    targets = TARGETS
    #: The final ``current_stone_idx`` (the last stone).
    final_idx = N_STONES - 1
    native_solved = ("current_stone_idx reaches the final index 9 (the pelvis passed the last stone's x), "
                     "as Table XII; msk_bench/envs/msk/benchmark/msk_bench_v0.py@a68b6ce::"
                     "MSKBenchStepStonesEnvV0.get_reward_dict")

    def add_props(self, spec: mujoco.MjSpec) -> None:
        self.terrain.add_to(spec)

    def start(self, ctx: InitContext) -> InitialState:
        qpos = ctx.pose(START_JOINTS, root_xy=tuple(STONE_XY[0]), on_ground=False)
        qpos[2] += START_PELVIS_Z_M - ctx.forward(qpos).pelvis_pos[2]
        ts = {"phase": np.float64(0.0), "stone_idx": np.int64(0), "crossed": np.int64(0)}
        return InitialState(qpos, np.zeros(ctx.model.nv), ts)

    def randomize(self, init: InitialState, rng, xp) -> InitialState:
        """The pose over stone 0 with the original's joint and velocity noise."""
        qpos, qvel = add_start_noise(self.start_tables, StartNoise.uniform(self.init_noise), init.qpos, init.qvel,
                                     rng, xp)
        return InitialState(qpos, qvel, init.task_state)

    def _target(self, idx, xp):
        """Top centre of the target that follows index ``idx`` (stone ``idx + 1``, clipped to the last)."""
        return xp.asarray(self.targets)[xp.clip(idx + 1, 1, self.final_idx)]

    def advance(self, s, ts, xp):
        passed = xp.sum(xp.where(s.pelvis_pos[0] > self.stone_x[1:], 1, 0))
        idx = xp.maximum(ts["stone_idx"], xp.minimum(passed, self.final_idx))
        return {
            "phase": advance_phase(ts["phase"], self.control_dt_s, self.period_s),
            "stone_idx": idx,
            "crossed": idx - ts["stone_idx"],
        }

    def observation(self, s, ts, xp):
        idx = ts["stone_idx"] + xp.arange(self.n_obs_targets)
        dp = self._target(idx, xp) - s.pelvis_pos
        return {"phase": phase_clock(ts["phase"], xp), "stones_dp": xp.reshape(dp, (-1,))}

    def d_lead(self, s, ts, xp):
        feet = s.foot_pos
        lead = xp.where(feet[0, 0] >= feet[1, 0], feet[0], feet[1])
        return xp.linalg.norm(lead - self._target(ts["stone_idx"], xp))

    def reward_terms(self, s, ts, xp):
        knees = xp.stack([s.joint("knee_l"), s.joint("knee_r")])
        moving = xp.where(s.com_vel[0] > 0.1, 1.0, 0.0)
        return {
            "stone_progress": 1.0 * ts["crossed"],
            "magnetic_reaching": xp.exp(-2.0 * self.d_lead(s, ts, xp)) * moving,
            "stand_tall": xp.clip((s.dz_leg - 0.6) / 0.3, 0.0, 1.0),
            "overbend_knee": xp.sum(xp.maximum(knees - 1.0, 0.0)),
            "efficiency": efficiency(s, xp),
        }

    def termination(self, s, ts, xp):
        return {"fell_from_height": s.pelvis_pos[2] < self.pelvis_height_min_m}

    def success(self, ts, steps, terminated, xp):
        return ts["stone_idx"] >= self.final_idx

    def solved_native(self, s, ts, steps, xp):
        return ts["stone_idx"] >= self.final_idx

    def success_trace(self, ts):
        return {"current_stone_idx": int(ts["stone_idx"])}

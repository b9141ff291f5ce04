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

The course (static boxes standing on the floor, :mod:`mskbench.tasks.terrain`):
a start platform ``x ∈ [−1.5, 0.35]`` m, 8 stone pillars 0.40 m long (x) and
0.50 m wide (y) with centres at ``x = 0.85 + 0.70 i`` (gaps of 0.30 m), then a
far platform ``x ∈ [6.25, 8.25]`` m; every top at 2.10 m, everything 1.2 m
wide except the stones. Between the stones there is nothing but the floor
2.1 m below.

Targets: the 8 stone-top centres, then the far platform at
``(6.65, 0, 2.10)``; ``current_stone_idx`` (task state) is the index of the
current target, starting at 0. It only increases: it becomes the number of
stone centres the pelvis is past in x (at most 8). The final index is 8 (the
far platform): success is crossing every stone.

Choices where the paper is open:

* "Elevated platform z = 3.05 m" is read as the initial *pelvis* height: the
  platform top is 2.10 m, so the neutral standing pose starts with the pelvis
  at 3.05 m, and the termination ``z_pelvis < 2.5`` m fires when the pelvis
  is 0.4 m above the stone tops (a collapse) or the body drops between them.
* ``d_lead``: distance from the lead foot (the calcaneus origin further
  along +x) to the top centre of the current target.
* Overbend knee: summed over both knees (knee flexion positive, rad).
* Observation ``stones_dp``: the next three targets (indices ``idx, idx+1,
  idx+2``, clipped to the final one) relative to the pelvis, 3 × 3 values.
* Phase clock: period 1.1 s from phase 0 at reset.
* Initial state: neutral standing pose on the start platform, pelvis at
  ``x = 0``, at rest (no noise; the course is fixed): a fixed start
  (``start``).

Observation: phase ``(sin 2πφ, cos 2πφ)`` (2), ``stones_dp`` (9).
Termination: ``fell_from_height`` (``z_pelvis < 2.5`` m, absolute).
Success: ``current_stone_idx`` reaches 8. Horizon: 1,000 steps (our choice).

Options (``StepStones.Config``): ``pelvis_height_min_m`` (2.5 m),
``n_obs_targets`` (3), ``period_s`` (1.1 s). The course is fixed.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from mskbench.tasks.base import (InitContext, InitialState, Task, TaskConfig, advance_phase, check_positive, efficiency,
                                 option, phase_clock)
from mskbench.tasks.terrain import BoxTerrain

TOP_Z_M = 2.10
N_STONES = 8
STONE_X0_M = 0.85
STONE_PITCH_M = 0.70
STONE_HALF = (0.20, 0.25)
START_PLATFORM_X = (-1.5, 0.35)
FAR_PLATFORM_X = (6.25, 8.25)
PLATFORM_HALF_WIDTH_M = 0.6
FAR_TARGET_X_M = 6.65
#: Stone centres along x (m).
STONE_X = STONE_X0_M + STONE_PITCH_M * np.arange(N_STONES)
#: Target points: the stone-top centres, then the far platform (N_STONES + 1, 3).
TARGETS = np.stack([np.append(STONE_X, FAR_TARGET_X_M), np.zeros(N_STONES + 1), np.full(N_STONES + 1, TOP_Z_M)],
                   axis=1)


def stone_course() -> BoxTerrain:
    w = PLATFORM_HALF_WIDTH_M
    rows = [(START_PLATFORM_X[0], START_PLATFORM_X[1], -w, w, 0.0, TOP_Z_M)]
    for cx in STONE_X:
        rows.append((cx - STONE_HALF[0], cx + STONE_HALF[0], -STONE_HALF[1], STONE_HALF[1], 0.0, TOP_Z_M))
    rows.append((FAR_PLATFORM_X[0], FAR_PLATFORM_X[1], -w, w, 0.0, TOP_Z_M))
    return BoxTerrain.from_extents("stepstones_box", rows)


class StepStones(Task):
    name = "StepStones"
    family = "interaction"
    horizon = 1000
    summary = "Cross a row of elevated stepping stones to a far platform"
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

        def __post_init__(self):
            check_positive(self, "period_s", "n_obs_targets")

    terrain = stone_course()
    stone_x = STONE_X
    targets = TARGETS
    #: Index of the final target (the far platform).
    final_idx = N_STONES

    def add_props(self, spec: mujoco.MjSpec) -> None:
        self.terrain.add_to(spec, rgba=(0.5, 0.45, 0.4, 1.0))


    def start(self, ctx: InitContext) -> InitialState:
        base = ctx.default_qpos.copy()
        base[2] += TOP_Z_M  # start above the platform, then lower onto it
        qpos = ctx.pose(base=base, root_xy=(0.0, 0.0), ground_geom=self.terrain.names[0])
        ts = {"phase": np.float64(0.0), "stone_idx": np.int64(0), "crossed": np.int64(0)}
        return InitialState(qpos, np.zeros(ctx.model.nv), ts)

    def _target(self, idx, xp):
        return xp.asarray(self.targets)[xp.clip(idx, 0, self.final_idx)]

    def advance(self, s, ts, xp):
        passed = xp.sum(xp.where(s.pelvis_pos[0] > self.stone_x, 1, 0))
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

    def success_trace(self, ts):
        return {"current_stone_idx": int(ts["stone_idx"])}

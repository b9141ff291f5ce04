"""Slide (interaction): slide down an elevated, low-friction wave slope.

Paper rows: Table VIII row 4 (rewards), Table XI row 4 (observations, init,
termination), Table XII (success), Fig. 13(c).

=============================  ================================================
reward term (weight)           formula
=============================  ================================================
pitch_balance (2)              ``R_gate · exp(−5 θ_pitch²)``
stand_tall (2)                 ``R_gate · exp(−10(0.95 − Δz_leg)²)``
slope_forward_lean (20)        ``clip(−u_chest·ẑ / 0.3, 0, 1)``
backward_lean_penalty (−100)   ``max(u_chest·ẑ, 0)``
efficiency (−1)                ``mean(a²)`` (our weight)
=============================  ================================================

``u_chest`` is the thorax's forward (anterior) unit vector: ``−u_chest·ẑ > 0``
when the chest leans forward (faces down the slope).

The terrain ("elevated over wave terrain", :mod:`mskbench.tasks.terrain`): a
piecewise-linear profile ``z(x)`` of 0.5 m thick slabs, 4 m wide
(``|y| ≤ 2`` m): a flat start ``x ∈ [−2, 0.4]`` m at 4.46 m, then eleven
2.5 m segments whose slopes change — −10°, −16°, −5°, +3°, −12°, −18°, −6°,
+3°, −10°, −14°, −4° (the "waves": steeper and gentler stretches and two
short rises) — down to a flat run-out at 0.5 m that ends at ``x = 60`` m. The
slabs' sliding friction is 0.08 (``priority`` makes it the contact's
coefficient): the body slides on its feet rather than walks; on every
descending stretch except the −4° and −5° ones gravity beats friction.

Choices where the paper is open:

* ``θ_pitch`` (rad): the thorax pitch, ``arcsin(u_chest·ẑ)``; positive when
  the chest leans back, negative forward (the paper's Balance sign: its
  forward-leaning target is −0.15 rad).
* ``R_gate = I(z_pelvis − z_terrain(x_pelvis, y_pelvis) > 0.7 m)``: the
  upright terms count only while the body is up on its feet.
* Termination ``fell_backward`` ("backwards fall"): ``θ_pitch > 0.8`` rad;
  ``split``: lateral foot separation ``|y_foot,L − y_foot,R| > 1.2`` m (Fig. 13c
  speaks of the legs' lateral separation); and ours, ``pelvis_too_low``: the
  pelvis less than 0.45 m above the terrain under it (a fall in any other
  direction; without it a prone body sliding down would keep collecting the
  forward-lean reward).
* Observation ``n_slope``: the terrain's unit upward normal under the pelvis
  (``(−dz/dx, 0, 1)/‖·‖``; ``ẑ`` off the terrain); phase period 1.1 s from 0.
* Initial state: neutral standing pose on the flat start, pelvis at
  ``x = 0`` (the first drop is 0.4 m ahead), root moving forward at 0.8 m/s
  (the original's ``qvel[0]``) so that it glides onto the slope, plus the
  original's per-episode noise ``N(0, 0.005²)`` on the root's ``x, y``, on
  every independent joint (clipped to its range, dependents resolved) and on
  every velocity of the body (root and joints; dependents' by the chain rule),
  not on the root quaternion (``msk_bench_v0.py@a68b6ce::MSKBenchSlideEnvV0.reset``);
  drawn by ``randomize`` (on the device in the batched env). The root height is
  not noised. The original's stride pose (hips 0.6/0.3, knees 0.5/0.3, ankles
  0.2 rad) stands on its floor-level walking course; ours is a slide (see
  docs/tasks.md), so the neutral stance stays.

Observation: phase ``(sin 2πφ, cos 2πφ)`` (2), ``n_slope`` (3).
Success (Table XII): maximum forward pelvis displacement from the start
``max(x_pelvis − x_pelvis,0) ≥ 18`` m.
Timing: the original scene's 2 ms physics step × 10 (20 ms control step);
horizon 1,000 steps = 20 s (the original env ends its episodes at 1,000 steps;
its ``registry.py`` TimeLimit of 1,500 never comes).
Native solved (the original's ``solved``): pelvis height > 2.0 m, absolute (the
original's root height ``qpos[2] > 2.0``, which on its floor-level course means
climbing onto its raised ridges). On this elevated slope (the flat start at
4.46 m, the run-out at 0.5 m) it holds from the start until the body is below
2 m: it measures nothing here (see docs/tasks.md).

Options (``Slide.Config``): ``gate_height_m``, ``pitch_back_max_rad``,
``split_max_m``, ``pelvis_height_min_m``, ``success_distance_m``,
``initial_speed_mps``, ``period_s``, ``init_noise`` (the values above). The slope is fixed.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from mskbench.tasks.base import (InitContext, InitialState, Task, TaskConfig, advance_phase, check_positive, efficiency,
                                 option, phase_clock)
from mskbench.tasks.starts import StartNoise, add_start_noise
from mskbench.tasks.terrain import SlopeProfile

SEGMENT_SLOPES_DEG = (-10.0, -16.0, -5.0, 3.0, -12.0, -18.0, -6.0, 3.0, -10.0, -14.0, -4.0)
SEGMENT_LENGTH_M = 2.5
START_X_M = (-2.0, 0.4)
RUNOUT_END_X_M = 60.0
RUNOUT_Z_M = 0.5
SLIDE_FRICTION = 0.08


def wave_slope() -> SlopeProfile:
    drops = SEGMENT_LENGTH_M * np.tan(np.radians(SEGMENT_SLOPES_DEG))
    z_top = RUNOUT_Z_M - drops.sum()
    xs = [START_X_M[0], START_X_M[1]]
    zs = [z_top, z_top]
    for d in drops:
        xs.append(xs[-1] + SEGMENT_LENGTH_M)
        zs.append(zs[-1] + d)
    xs.append(RUNOUT_END_X_M)
    zs.append(zs[-1])
    return SlopeProfile("slide_slab", np.array(xs), np.array(zs), half_width=2.0, thickness=0.5,
                        friction=SLIDE_FRICTION)


class Slide(Task):
    name = "Slide"
    family = "interaction"
    horizon = 1000
    #: The original scene's 2 ms physics step (``slide.xml``), 10 per control step: 20 ms, 20 s episodes.
    timestep_s = 0.002
    native_solved = ("pelvis height > 2.0 m (absolute; the original's root height qpos[2] > 2.0 — on this "
                     "elevated slope it holds at the start); "
                     "msk_bench/envs/msk/benchmark/msk_bench_v0.py@a68b6ce::MSKBenchSlideEnvV0.get_reward_dict")
    native_degenerate = ("the slope's top is high enough that the pelvis starts above 2.0 m: the zero, passive and "
                         "random policies all meet it in 50 of 50 episodes (benchmarks/native_degeneracy.py)")
    #: The original's ``solved`` height (m, absolute).
    native_height_m = 2.0
    summary = "Slide down an elevated low-friction wave slope, leaning into the slope changes"
    reward_weights = {
        "pitch_balance": 2.0,
        "stand_tall": 2.0,
        "slope_forward_lean": 20.0,
        "backward_lean_penalty": -100.0,
        "efficiency": -1.0,
    }

    @dataclass(frozen=True)
    class Config(TaskConfig):
        gate_height_m: float = option(0.7, "R_gate: pelvis more than this above the terrain (m)")
        pitch_back_max_rad: float = option(0.8, "fell_backward above this trunk pitch (rad)")
        split_max_m: float = option(1.2, "split above this lateral feet separation (m)")
        pelvis_height_min_m: float = option(0.45, "pelvis_too_low below this height above the terrain (m)")
        success_distance_m: float = option(18.0, "success: maximum forward pelvis displacement (m)")
        initial_speed_mps: float = option(0.8, "initial forward speed of the root (m/s)")
        period_s: float = option(1.1, "period of the phase clock (s)")
        init_noise: float = option(0.005, "start noise N(0, this²) on the root x, y (m), joints (rad), velocities")

        def __post_init__(self):
            check_positive(self, "period_s")
            check_positive(self, "init_noise", allow_zero=True)

    terrain = wave_slope()

    def add_props(self, spec: mujoco.MjSpec) -> None:
        self.terrain.add_to(spec)

    def start(self, ctx: InitContext) -> InitialState:
        base = ctx.default_qpos.copy()
        base[2] += self.terrain.zs[0]  # start above the platform, then lower onto it
        qpos = ctx.pose(base=base, root_xy=(0.0, 0.0), ground_geom=self.terrain.names[0])
        qvel = np.zeros(ctx.model.nv)
        qvel[0] = self.initial_speed_mps
        x0 = ctx.forward(qpos).pelvis_pos[0]
        ts = {"phase": np.float64(0.0), "x0": np.float64(x0), "max_dx": np.float64(0.0)}
        return InitialState(qpos, qvel, ts)

    def randomize(self, init: InitialState, rng, xp) -> InitialState:
        """The start with the original's root-position, joint and velocity noise (the pelvis's start
        ``x0`` moves with the root)."""
        noise = StartNoise.uniform(self.init_noise, root_xy=True)
        qpos, qvel = add_start_noise(self.start_tables, noise, init.qpos, init.qvel, rng, xp)
        ts = {**init.task_state, "x0": init.task_state["x0"] + (qpos[0] - init.qpos[0])}
        return InitialState(qpos, qvel, ts)

    def height_above_terrain(self, s, xp):
        p = s.pelvis_pos
        return p[2] - self.terrain.height(p[0], p[1], xp)

    def advance(self, s, ts, xp):
        return {
            "phase": advance_phase(ts["phase"], self.control_dt_s, self.period_s),
            "x0": ts["x0"],
            "max_dx": xp.maximum(ts["max_dx"], s.pelvis_pos[0] - ts["x0"]),
        }

    def observation(self, s, ts, xp):
        p = s.pelvis_pos
        return {"phase": phase_clock(ts["phase"], xp), "n_slope": self.terrain.normal(p[0], p[1], xp)}

    def reward_terms(self, s, ts, xp):
        gate = xp.where(self.height_above_terrain(s, xp) > self.gate_height_m, 1.0, 0.0)
        up = s.u_chest[2]
        return {
            "pitch_balance": gate * xp.exp(-5.0 * s.chest_pitch ** 2),
            "stand_tall": gate * xp.exp(-10.0 * (0.95 - s.dz_leg) ** 2),
            "slope_forward_lean": xp.clip(-up / 0.3, 0.0, 1.0),
            "backward_lean_penalty": xp.maximum(up, 0.0),
            "efficiency": efficiency(s, xp),
        }

    def termination(self, s, ts, xp):
        return {
            "fell_backward": s.chest_pitch > self.pitch_back_max_rad,
            "split": xp.abs(s.d_feet[1]) > self.split_max_m,
            "pelvis_too_low": self.height_above_terrain(s, xp) < self.pelvis_height_min_m,
        }

    def success(self, ts, steps, terminated, xp):
        return ts["max_dx"] >= self.success_distance_m

    def solved_native(self, s, ts, steps, xp):
        return s.pelvis_pos[2] > self.native_height_m

    def success_trace(self, ts):
        return {"max_forward_displacement": float(ts["max_dx"])}

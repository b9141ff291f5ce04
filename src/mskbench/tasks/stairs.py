"""Stairs (interaction): climb a staircase ahead, using a look-ahead terrain radar.

Paper rows: Table VIII row 1 (rewards), Table XI row 1 (observations, init,
termination), Table XII (success), Fig. 13(d).

=============================  ================================================
reward term (weight)           formula
=============================  ================================================
fwd_trajectory (50)            ``clip(v_x,CoM, −0.2, 2.0)``
upward_trajectory (30)         ``clip(v_z,CoM, −0.5, 3.0)``
vertical_stable (20)           ``exp(−5(0.98 − u_torso·ẑ)²)``
lateral_stable (20)            ``exp(−5 y_pelvis²)``
anticipatory_lift (40)         ``I(radar) · max(ż_swing, 0)``
efficiency (−1)                ``mean(a²)`` (our weight)
=============================  ================================================

The staircase is the original scene's (``stairs.xml@4ffd2d6``; the paper gives
no sizes): 4 steps of 0.15 m rise and 0.50 m run, the first riser at
``x = 1.0`` m, then a 2 m top landing (``x ∈ [3, 5]`` m) at 0.75 m; 1 m wide
(``|y| ≤ 0.5`` m); friction 1.5 (``priority`` makes it the contact's
coefficient). Our steps are solid boxes standing on the floor (the original's
are 0.15 m slabs, open underneath), so the terrain height is the top of the
step under a point (:mod:`mskbench.tasks.terrain`).

Radar ``z_terrain`` ∈ R⁹: the terrain height at 9 points ahead of the pelvis,
at 0, 0.15, …, 1.20 m along the pelvis heading (horizontal projection of
``u_fwd``), each *relative to the pelvis height* (``z_terrain(p_i) − z_pelvis``;
the first point is the ground under the pelvis), computed analytically from
the staircase's boxes.

Choices where the paper is open:

* ``I(radar)``: a step ahead within the radar range, i.e. some radar point
  ``i ≥ 1`` is more than 0.05 m above the terrain under the pelvis.
* Swing foot: the foot carrying less load (heel + toe touch sensors); when
  both carry the same (both in the air) the one rising faster.
  ``ż_swing`` is the vertical velocity of its calcaneus origin.
* Phase clock: stride period 1.1 s (Walk's), ``φ`` advancing with time from
  the initial reference phase; observed as ``(sin 2πφ, cos 2πφ)``.
* Termination ``pelvis_too_low``: ``z_pelvis < 0.75`` m, absolute (Table XI,
  as the original's ``qpos[2] < min_height``); ``lateral_drift``:
  ``|y_pelvis| > 1.0`` m (the original's limit).
* Initial state ("walk posture, initial fwd vel"): Walk's synthetic reference
  pose at a uniformly drawn phase, its joint velocities, root moving forward
  at 0.5 m/s (the original's ``qvel[0]``), pelvis at ``x = 0.3`` m (the
  original's ``qpos[0]``: 0.7 m before the first riser), plus the original's
  per-episode noise ``N(0, 0.005²)`` on the root's ``x, y``, on each
  root-quaternion component (then normalised), on every independent joint
  (clipped to its range, dependents resolved) and on every velocity of the body
  (dependent joints' by the chain rule)
  (``msk_bench_v0.py@a68b6ce::MSKBenchStairsEnvV0.reset``; :mod:`mskbench.tasks.starts`),
  on the floor; drawn on the host (``initial_state``): the placement depends on
  the phase. The original's per-episode body-mass scaling ``U(0.95, 1.05)`` is
  not applied (a model change per episode is not part of a start).

Observation: phase ``(sin 2πφ, cos 2πφ)`` (2), radar ``z_terrain`` (9).
Success (Table XII): maximum pelvis height over the episode ≥ 1.6 m (absolute;
a standing pelvis is ~0.95 m above its feet: ~1.7 m on the 0.75 m landing).
Native solved (the original's ``solved``): pelvis height > 2.0 m (absolute; the
original's root height ``qpos[2] > 2.0``) — above a standing pelvis on the
landing, so it takes a jump there.
Timing: the original scene's 2 ms physics step × 10 (20 ms control step);
horizon 2,000 steps (the original's ``registry.py``; the paper gives none) = 40 s.

Options (``Stairs.Config``): ``period_s``, ``initial_speed_mps``, ``init_noise``, the radar
(``n_radar``, ``radar_spacing_m``, ``step_detect_m``), the termination
(``pelvis_height_min_m``, ``lateral_drift_max_m``) and success
(``success_pelvis_height_m``) thresholds (the values above; the staircase is
fixed).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import mujoco
import numpy as np

from mskbench.tasks.base import (HostRandom, InitContext, InitialState, Task, TaskConfig, advance_phase, check_positive,
                                 efficiency, option, phase_clock)
from mskbench.tasks.starts import StartNoise, place_noisy
from mskbench.tasks.terrain import BoxTerrain
from mskbench.tasks.walk_reference import WalkReference


#: Initial pelvis x (m): the original's ``qpos[0]``.
START_X_M = 0.3
STAIRS_FRICTION = 1.5


def staircase(n_steps: int = 4, rise_m: float = 0.15, run_m: float = 0.50, first_riser_x_m: float = 1.0,
              landing_m: float = 2.0, half_width_m: float = 0.5, friction: float | None = STAIRS_FRICTION) -> BoxTerrain:
    """Solid steps standing on the floor, then a top landing one rise above the last step."""
    rows = []
    for k in range(n_steps):
        x0 = first_riser_x_m + k * run_m
        rows.append((x0, x0 + run_m, -half_width_m, half_width_m, 0.0, (k + 1) * rise_m))
    x0 = first_riser_x_m + n_steps * run_m
    rows.append((x0, x0 + landing_m, -half_width_m, half_width_m, 0.0, (n_steps + 1) * rise_m))
    return BoxTerrain.from_extents("stairs_step", rows, friction=friction)


class Stairs(Task):
    name = "Stairs"
    family = "interaction"
    horizon = 2000
    #: The original scene's 2 ms physics step (``stairs.xml``), 10 per control step: 20 ms, 40 s episodes.
    timestep_s = 0.002
    native_solved = ("pelvis height > 2.0 m (absolute; the original's root height qpos[2] > 2.0); "
                     "msk_bench/envs/msk/benchmark/msk_bench_v0.py@a68b6ce::MSKBenchStairsEnvV0.get_reward_dict")
    summary = "Climb a staircase using a look-ahead terrain radar"
    reward_weights = {
        "fwd_trajectory": 50.0,
        "upward_trajectory": 30.0,
        "vertical_stable": 20.0,
        "lateral_stable": 20.0,
        "anticipatory_lift": 40.0,
        "efficiency": -1.0,
    }

    @dataclass(frozen=True)
    class Config(TaskConfig):
        pelvis_height_min_m: float = option(0.75, "pelvis_too_low below this pelvis height (m, absolute)")
        lateral_drift_max_m: float = option(1.0, "lateral_drift beyond this |y_pelvis| (m)")
        success_pelvis_height_m: float = option(1.6, "success: maximum pelvis height (m, absolute)")
        radar_spacing_m: float = option(0.15, "spacing of the radar points ahead of the pelvis (m)")
        n_radar: int = option(9, "radar points, the first under the pelvis")
        step_detect_m: float = option(0.05, "I(radar): a radar point this far above the ground under the pelvis (m)")
        initial_speed_mps: float = option(0.5, "initial forward speed of the root, and the reference's speed (m/s)")
        period_s: float = option(1.1, "stride period of the phase clock and the reference (s)")
        init_noise: float = option(0.005, "start noise N(0, this²) on the root x, y, quaternion, joints, velocities")

        def __post_init__(self):
            check_positive(self, "radar_spacing_m", "n_radar", "period_s")
            check_positive(self, "init_noise", allow_zero=True)

    terrain = staircase()
    #: The original's ``solved`` height (m, absolute).
    native_height_m = 2.0
    #: The synthetic gait of the initial states, built in ``bind``.
    reference: WalkReference | None = None

    @functools.cached_property
    def radar_offsets(self) -> np.ndarray:
        """Distances of the radar points ahead of the pelvis (n_radar,), m."""
        return self.radar_spacing_m * np.arange(self.n_radar)

    def add_props(self, spec: mujoco.MjSpec) -> None:
        self.terrain.add_to(spec)

    def bind(self, ctx: InitContext) -> None:
        super().bind(ctx)
        self.reference = WalkReference.build(ctx.model, ctx.handles, ctx.default_qpos,
                                             period_s=self.period_s, speed_mps=self.initial_speed_mps)

    def initial_state(self, ctx: InitContext, rng: np.random.Generator) -> InitialState:
        """Walk's reference at a uniformly drawn phase with the original's noise, on the floor (host: the
        placement depends on the phase and the noise)."""
        if self.reference is None:
            raise RuntimeError("Stairs task is not bound to a model; call bind() first")
        phase = float(rng.uniform(0.0, 1.0))
        qpos, qvel = self.reference.state_at(ctx, phase, self.initial_speed_mps)
        qpos[0] += START_X_M  # the floor is flat there: the placement holds
        noise = StartNoise.uniform(self.init_noise, root_xy=True, root_quat=True)
        qpos, qvel = place_noisy(ctx, self.start_tables, noise, qpos, qvel, HostRandom(rng))
        pelvis_z = ctx.forward(qpos).pelvis_pos[2]
        ts = {"phase": np.float64(phase), "max_pelvis_z": np.float64(pelvis_z)}
        return InitialState(qpos, qvel, ts)

    # -- terrain sensing ---------------------------------------------------------------
    def radar_heights(self, s, xp):
        """Absolute terrain heights at the 9 radar points (9,)."""
        p = s.pelvis_pos
        h = s.u_fwd[:2]
        h = h / (xp.linalg.norm(h) + 1e-9)
        x = p[0] + self.radar_offsets * h[0]
        y = p[1] + self.radar_offsets * h[1]
        return self.terrain.height(x, y, xp)

    def step_ahead(self, s, xp):
        """``I(radar)``: a step more than 5 cm above the ground under the pelvis within the radar range."""
        z = self.radar_heights(s, xp)
        return xp.max(z[1:]) - z[0] > self.step_detect_m

    def swing_zdot(self, s, xp):
        load_l = s.touch[0] + s.touch[1]
        load_r = s.touch[2] + s.touch[3]
        zl, zr = s.vel("foot_l")[2], s.vel("foot_r")[2]
        return xp.where(load_l < load_r, zl, xp.where(load_r < load_l, zr, xp.maximum(zl, zr)))

    # -- step-time -------------------------------------------------------------------------
    def advance(self, s, ts, xp):
        return {
            "phase": advance_phase(ts["phase"], self.control_dt_s, self.period_s),
            "max_pelvis_z": xp.maximum(ts["max_pelvis_z"], s.pelvis_pos[2]),
        }

    def observation(self, s, ts, xp):
        return {"phase": phase_clock(ts["phase"], xp),
                "radar": self.radar_heights(s, xp) - s.pelvis_pos[2]}

    def reward_terms(self, s, ts, xp):
        v = s.com_vel
        return {
            "fwd_trajectory": xp.clip(v[0], -0.2, 2.0),
            "upward_trajectory": xp.clip(v[2], -0.5, 3.0),
            "vertical_stable": xp.exp(-5.0 * (0.98 - s.u_torso[2]) ** 2),
            "lateral_stable": xp.exp(-5.0 * s.pelvis_pos[1] ** 2),
            "anticipatory_lift": xp.where(self.step_ahead(s, xp), 1.0, 0.0) * xp.maximum(self.swing_zdot(s, xp), 0.0),
            "efficiency": efficiency(s, xp),
        }

    def termination(self, s, ts, xp):
        return {
            "pelvis_too_low": s.pelvis_pos[2] < self.pelvis_height_min_m,
            "lateral_drift": xp.abs(s.pelvis_pos[1]) > self.lateral_drift_max_m,
        }

    def success(self, ts, steps, terminated, xp):
        return ts["max_pelvis_z"] >= self.success_pelvis_height_m

    def solved_native(self, s, ts, steps, xp):
        return s.pelvis_pos[2] > self.native_height_m

    def success_trace(self, ts):
        return {"max_pelvis_z": float(ts["max_pelvis_z"])}

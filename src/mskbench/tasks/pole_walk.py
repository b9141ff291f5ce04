"""PoleWalk (interaction): walk forward through a field of vertical poles, guided by a radar.

Paper rows: Table VIII row 10 (rewards), Table XI row 10 (observations, init,
termination), Table XII (success), Fig. 13j.

==========================  ===================================================
reward term (weight)        formula
==========================  ===================================================
target_feet_phases (400)    ``exp(−10(Δx_foot − 0.25 sin 2πφ)²)``
dynamic_radar_gap (800)     path ahead blocked (``z_radar,centre < 1.0`` m):
                            ``clip(2 v_y,CoM, 0, 1)`` if the gap is to the
                            left, ``clip(−2 v_y,CoM, 0, 1)`` if to the right;
                            path ahead clear: ``clip(v_x,CoM, 0, 1)``
fatal_collision (−1500)     ``I_fatal_contact``: head/torso touches a pole
efficiency (−1)             ``mean(a²)`` (our weight)
==========================  ===================================================

``Δx_foot = x_foot,L − x_foot,R`` (heel origins): the "±" of the paper's
``Δx_foot ± 0.25 sin φ`` is read as the left foot leading in the first half of
the gait cycle and the right foot in the second.

Radar ``z_radar ∈ R⁷``: seven horizontal rays from the pelvis (xy), fanned at
−45°, −30°, …, +45° about the course direction +x (right to left, index 3
straight ahead; yaw-stabilised: they do not turn with the body); each reads
the distance at which a disc of radius 0.2 m (the body's half-width) moving
along the ray would touch a pole, i.e. the distance to the first pole
inflated by 0.2 m, capped at 3 m (0 when already inside an inflated pole).
The gap is to the left when the ray 15° to the left of the centre reads at
least as far as the ray 15° to the right (the side with more room next to
the blocked centre ray).

Observation: gait phase ``(sin 2πφ, cos 2πφ)`` (2), radar ``z_radar`` (7).
Initial state: standing pose with hips flexed 0.1 rad and knees 0.05 rad (the
original's), root at ``x = y = 0``, lifted so the pelvis is at 1.05 m (feet ~10 cm above the
floor: a short drop onto the feet), at rest (``start``), plus the original's per-episode noise
``N(0, 0.01²)`` on every independent joint (clipped to its range, dependents resolved) and on every
velocity of the body (root and joints; dependents' by the chain rule)
(``msk_bench_v0.py@a68b6ce::MSKBenchPoleWalkEnvV0.reset``; its 30 settling physics steps are not
run); drawn by ``randomize`` (on the device in the batched env). Termination: fatal
upper-body collision (``fatal_collision``) or a fall (``pelvis_too_low``, see
below). Success: maximum forward pelvis displacement from the start ≥ 1.6 m.
Native solved signal: none (the original's ``solved`` is a constant 0).
Timing (the original's ``pole_walk.xml@4ffd2d6`` and ``registry.py@a68b6ce``):
2 ms physics step, 20 ms control step, horizon 1,000 steps = 20 s.

Choices where the paper is open:

* Pole field (the original's ``pole_walk.xml``): 16 static vertical capsules
  (radius 0.1 m, 2 m tall, friction 1.5) around the start at ``(±0.8, ±0.8)``,
  ``(±1.6, 0)``, ``(0, ±1.6)``, ``(±1.4, ±1.4)``, ``(±2.4, ±0.8)`` m
  (``POLES``); one stands straight ahead at the success distance. They
  collide with the body. The original's four bounding walls at ±5.5 m are
  left out (boxes do not collide with the body's ellipsoids in MJX).
* Fatal contact is geometric: the origin of the head, thorax or torso body
  within 0.22 m (pole radius + 0.12 m) of a pole axis, horizontally.
* "Elevated 1.05 m" is read as the pelvis height at reset; "high core gain"
  is a training-side detail of the paper's setup and is left out.
* Gait clock period 1.0 s, phase 0 at reset (both feet level: ``Δx_foot ≈ 0``).
* A fall ends the episode too (``pelvis_too_low``: pelvis below 0.5 m), our
  addition to the paper's one condition: without it a body lying between the
  poles ran to the horizon collecting the feet-phase and radar-gap rewards
  (a random policy: ~310 per step, more than a walker).

Options (``PoleWalk.Config``): the poles' ``pole_radius_m``, ``pole_height_m``
(their positions are fixed), ``fatal_distance_m``, the radar
(``radar_half_angle_rad``, ``n_rays``, ``radar_range_m``,
``radar_body_radius_m``, ``blocked_m``), ``foot_amplitude_m``,
``pelvis_start_m``, ``start_joints``, ``pelvis_min_m``, ``init_noise``,
``success_distance_m`` and ``period_s`` (the values above).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import mujoco
import numpy as np

from mskbench.tasks.base import (InitContext, InitialState, Task, TaskConfig, advance_phase, check_positive, efficiency,
                                 option, phase_clock)
from mskbench.tasks.obstacles import (UPPER_BODY_ROLES, body_points, fan_directions, horizontal_distances,
                                      ray_circle_distances)
from mskbench.tasks.starts import StartNoise, add_start_noise


#: Pole axes (x, y), m: the original's 16 poles around the start (``pole_walk.xml`` p1–p16).
POLES = np.array([
    [0.8, 0.8], [0.8, -0.8], [-0.8, 0.8], [-0.8, -0.8],
    [1.6, 0.0], [-1.6, 0.0], [0.0, 1.6], [0.0, -1.6],
    [1.4, 1.4], [1.4, -1.4], [-1.4, 1.4], [-1.4, -1.4],
    [2.4, 0.8], [2.4, -0.8], [-2.4, 0.8], [-2.4, -0.8],
])


class PoleWalk(Task):
    name = "PoleWalk"
    family = "interaction"
    horizon = 1000
    #: The original scene's 2 ms physics step (``pole_walk.xml``), 10 per control step: 20 ms, 20 s episodes.
    timestep_s = 0.002
    summary = "Walk forward through a field of poles, guided by a 7-ray radar"
    reward_weights = {
        "target_feet_phases": 400.0,
        "dynamic_radar_gap": 800.0,
        "fatal_collision": -1500.0,
        "efficiency": -1.0,
    }

    @dataclass(frozen=True)
    class Config(TaskConfig):
        pole_radius_m: float = option(0.1, "radius of the poles (m)")
        pole_height_m: float = option(2.0, "height of the poles (m)")
        fatal_distance_m: float = option(0.22, "fatal_collision: head, thorax or torso this close to a pole axis (m)")
        radar_half_angle_rad: float = option(np.pi / 4, "the radar's rays fan over ±this about +x (rad)")
        n_rays: int = option(7, "radar rays (odd: one straight ahead)")
        radar_range_m: float = option(3.0, "radar range (m)")
        radar_body_radius_m: float = option(0.2, "the body's half-width the radar inflates the poles by (m)")
        blocked_m: float = option(1.0, "dynamic_radar_gap: the path ahead is blocked below this centre reading (m)")
        foot_amplitude_m: float = option(0.25, "target_feet_phases: amplitude of the feet's x offset (m)")
        pelvis_start_m: float = option(1.05, "initial pelvis height (m)")
        start_joints: tuple[tuple[str, float], ...] = option(
            (("hip_flexion_l", 0.1), ("knee_angle_l", 0.05), ("hip_flexion_r", 0.1), ("knee_angle_r", 0.05)),
            "joint angles of the initial pose (model joint name, rad)")
        pelvis_min_m: float = option(0.5, "pelvis_too_low below this pelvis height (m)")
        init_noise: float = option(0.01, "start noise N(0, this²) on every joint (rad) and velocity")
        success_distance_m: float = option(1.6, "success: maximum forward pelvis displacement (m)")
        period_s: float = option(1.0, "period of the gait clock (s)")

        def __post_init__(self):
            check_positive(self, "init_noise", allow_zero=True)
            check_positive(self, "pole_radius_m", "pole_height_m", "radar_range_m", "period_s")
            if self.n_rays < 3 or self.n_rays % 2 == 0:
                raise ValueError(f"n_rays must be odd and at least 3, got {self.n_rays}")


    @functools.cached_property
    def ray_dirs(self) -> np.ndarray:
        """The radar's ray directions (n_rays, 2), right to left."""
        return fan_directions(self.radar_half_angle_rad, self.n_rays)

    def add_props(self, spec: mujoco.MjSpec) -> None:
        half = self.pole_height_m / 2
        for k, (x, y) in enumerate(POLES):
            spec.worldbody.add_geom(name=f"pole_walk_pole_{k}", type=mujoco.mjtGeom.mjGEOM_CAPSULE,
                                    size=[self.pole_radius_m, half - self.pole_radius_m, 0],
                                    pos=[float(x), float(y), half], rgba=[0.3, 0.3, 0.8, 1.0],
                                    contype=0, conaffinity=1, friction=[1.5, 0.005, 0.0001])


    def start(self, ctx: InitContext) -> InitialState:
        """The neutral pose at the origin, lifted so the pelvis is at ``pelvis_start_m``, at rest."""
        qpos = ctx.pose(dict(self.start_joints))
        pelvis = ctx.forward(qpos).pelvis_pos
        qpos[2] += self.pelvis_start_m - pelvis[2]
        ts = {
            "phase": np.float64(0.0),
            "x0": np.float64(pelvis[0]),
            "max_dx": np.float64(0.0),
        }
        return InitialState(qpos, np.zeros(ctx.model.nv), ts)

    def randomize(self, init: InitialState, rng, xp) -> InitialState:
        """The lifted start with the original's joint and velocity noise."""
        qpos, qvel = add_start_noise(self.start_tables, StartNoise.uniform(self.init_noise), init.qpos, init.qvel,
                                     rng, xp)
        return InitialState(qpos, qvel, init.task_state)

    def radar(self, s, xp):
        """``z_radar`` (7,): distance to the first pole along each ray, m (see module doc)."""
        radius = self.pole_radius_m + self.radar_body_radius_m
        return ray_circle_distances(s.pelvis_pos[:2], self.ray_dirs, POLES, radius, self.radar_range_m, xp)

    def fatal_contact(self, s, xp):
        d = horizontal_distances(body_points(s, UPPER_BODY_ROLES, xp), POLES, xp)
        return xp.min(d) < self.fatal_distance_m

    def advance(self, s, ts, xp):
        return {
            "phase": advance_phase(ts["phase"], self.control_dt_s, self.period_s),
            "x0": ts["x0"],
            "max_dx": xp.maximum(ts["max_dx"], s.pelvis_pos[0] - ts["x0"]),
        }

    def observation(self, s, ts, xp):
        return {"phase": phase_clock(ts["phase"], xp), "radar": self.radar(s, xp)}

    def reward_terms(self, s, ts, xp):
        z = self.radar(s, xp)
        centre = self.n_rays // 2
        gap_left = z[centre + 1] >= z[centre - 1]
        v = s.com_vel
        sideways = xp.where(gap_left, xp.clip(2.0 * v[1], 0.0, 1.0), xp.clip(-2.0 * v[1], 0.0, 1.0))
        gap = xp.where(z[centre] < self.blocked_m, sideways, xp.clip(v[0], 0.0, 1.0))
        dx_foot = s.foot_pos[0, 0] - s.foot_pos[1, 0]
        target = self.foot_amplitude_m * xp.sin(2.0 * np.pi * ts["phase"])
        return {
            "target_feet_phases": xp.exp(-10.0 * (dx_foot - target) ** 2),
            "dynamic_radar_gap": gap,
            "fatal_collision": xp.where(self.fatal_contact(s, xp), 1.0, 0.0),
            "efficiency": efficiency(s, xp),
        }

    def termination(self, s, ts, xp):
        return {"fatal_collision": self.fatal_contact(s, xp),
                "pelvis_too_low": s.pelvis_pos[2] < self.pelvis_min_m}

    def success(self, ts, steps, terminated, xp):
        return ts["max_dx"] >= self.success_distance_m

    def success_trace(self, ts):
        return {"max_dx": float(ts["max_dx"])}

"""Hurdle (interaction): run down a straight track and clear five hurdles.

Paper rows: Table VIII row 2 (rewards), Table XI row 2 (observations, init,
termination), Table XII (success), Fig. 13f.

==========================  ===================================================
reward term (weight)        formula
==========================  ===================================================
forward_velocity (300)      ``clip(v_x,CoM, −0.1, 4.0)``
clearance (100)             ``I(max(z_foot,L, z_foot,R) > h_target)``
sparse_clear_bonus (3000)   ``I(Δx < 0 ∧ |y_pelvis| < 0.5 m)``, paid once per
                            hurdle: on the step the pelvis passes it
crane_hopping (−150)        ``clip((|z_foot,L − z_foot,R| − 0.2)/0.5, 0, 1)``
efficiency (−1)             ``mean(a²)`` (our weight)
==========================  ===================================================

``Δx = x_hurdle − x_pelvis`` and ``h_target`` its height, for the next hurdle
not yet passed; ``z_foot`` are the heel (calcaneus) origin heights.

Observation: gait phase ``(sin 2πφ, cos 2πφ)`` (2); nearest hurdle
``Δh = (Δx, h)`` (2): forward distance from the pelvis to the next hurdle not
yet passed (after the last one: to the last one, negative) and its height.
Initial state: standing (neutral pose) on the floor at rest, facing +x, a
random distance before the first hurdle (root ``x ~ U(−0.5, 0)`` m), plus Stand's
draw: ``N(0, 0.005²)`` on every independent joint (clipped, dependents resolved),
on the root's ``x, y`` and on each root-quaternion component, zero velocity (on
the device in the batched env). The distance alone changed nothing a policy
observes (the zero policy's returns differed by 7e-8 over 50 seeds); the paper
says "standing" and the original starts from a walk frame
(``walk_v0.py@4ffd2d6::WalkEnvV0.reset``), so the standing task's noise is ours. Termination: ``z_pelvis < 0.55`` m
(``pelvis_too_low``) or ``|yaw| > asin 0.8 = 0.927`` rad (``heavy_yaw``; the
original's ``|R_pelvis[1,0]| > 0.8``). Success: the number of cleared hurdles
reaches the total (five). Native solved signal: none (the original's
``solved`` is a constant 0). Timing (the original's ``hurdle.xml@a68b6ce`` and
``registry.py@a68b6ce``): 2 ms physics step, 20 ms control step, horizon 1,000
steps = 20 s.

Choices where the paper is open:

* Track (the original's course): five static hurdles across the track at
  ``x = 2, 4, 6, 8, 10`` m, centred on ``y = 0``, 4 m wide, ``h = 0.2, 0.3,
  0.4, 0.45, 0.45`` m tall, friction 1.0. Each is built of horizontal capsule
  rails of radius 0.1 m lying along y, one on the floor and one whose top is
  at ``h`` (a single rail for 0.2 m): a solid barrier with nothing to slip
  under. They collide with the body (a foot can strike one) but not with
  each other or the floor. Capsules rather than the original's thin boxes:
  MJX's pure-JAX backend has no collision between the body's ellipsoid geoms
  and boxes.
* "Scan dynamic hurdles": the geometry is fixed in the model; per episode the
  start position is drawn from ``rng``: root ``x ∈ [−0.5, 0]`` m, so the
  distance to the first hurdle (and the gait phase at which each is met)
  varies. The nearest-hurdle observation is the "scan". The standing pose is
  placed on the floor once (``start``) and ``randomize`` moves its root in x:
  the floor is flat, so that is exactly the placement at that x, and the
  batched environment draws the start per world on the device.
* A hurdle counts as *passed* on the first step the pelvis is beyond its
  plane (``Δx < 0``); it is *cleared* if at that step ``|y_pelvis| < 0.5`` m
  (over the board, not around its end). A passed hurdle never counts again,
  so going around one makes the episode unsuccessful.
* The phase clock is a free-running 1.0 s gait clock starting at 0 (the paper
  lists a phase without a period).
* The original starts from a random frame of a walking reference; the paper's
  "standing" start is kept.

Options (``Hurdle.Config``): the track (``hurdle_x``, ``hurdle_heights_m``,
``hurdle_width_m``, ``rail_radius_m``), ``lateral_limit_m``, ``pelvis_min_m``, ``yaw_max_rad``,
``start_x_range``, ``init_noise`` and ``period_s`` (the values above).
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from mskbench.tasks.base import (InitContext, InitialState, Task, TaskConfig, advance_phase, check_positive,
                                 check_range, efficiency, option, phase_clock, put)
from mskbench.tasks.starts import StartNoise, add_start_noise


class Hurdle(Task):
    name = "Hurdle"
    family = "interaction"
    horizon = 1000
    #: The original scene's 2 ms physics step (``hurdle.xml``), 10 per control step: 20 ms, 20 s episodes.
    timestep_s = 0.002
    summary = "Run down a track and clear five hurdles"
    reward_weights = {
        "forward_velocity": 300.0,
        "clearance": 100.0,
        "sparse_clear_bonus": 3000.0,
        "crane_hopping": -150.0,
        "efficiency": -1.0,
    }

    @dataclass(frozen=True)
    class Config(TaskConfig):
        hurdle_x: tuple[float, ...] = option((2.0, 4.0, 6.0, 8.0, 10.0), "x of each hurdle (m)")
        hurdle_heights_m: tuple[float, ...] = option((0.2, 0.3, 0.4, 0.45, 0.45),
                                                     "h: height of each hurdle, and h_target of clearance (m)")
        hurdle_width_m: float = option(4.0, "length of each hurdle across the track (m)")
        rail_radius_m: float = option(0.1, "radius of the capsule rails a hurdle is built of (m)")
        lateral_limit_m: float = option(0.5, "a passed hurdle is cleared with |y_pelvis| below this (m)")
        pelvis_min_m: float = option(0.55, "pelvis_too_low below this pelvis height (m)")
        yaw_max_rad: float = option(float(np.arcsin(0.8)), "heavy_yaw beyond this |yaw| (rad)")
        start_x_range: tuple[float, float] = option((-0.5, 0.0), "initial root x (m)")
        init_noise: float = option(0.005, "start noise N(0, this²) on the joints (rad), root x, y (m) and quaternion")
        period_s: float = option(1.0, "period of the free-running gait clock (s)")

        def __post_init__(self):
            check_range(self, "start_x_range")
            check_positive(self, "hurdle_width_m", "rail_radius_m", "period_s")
            check_positive(self, "init_noise", allow_zero=True)
            if len(self.hurdle_x) < 1 or list(self.hurdle_x) != sorted(self.hurdle_x):
                raise ValueError(f"hurdle_x must list at least one hurdle, in increasing x, got {self.hurdle_x}")
            if len(self.hurdle_heights_m) != len(self.hurdle_x) or \
                    min(self.hurdle_heights_m) < 2 * self.rail_radius_m:
                raise ValueError(f"hurdle_heights_m must give one height per hurdle, each at least "
                                 f"2 * rail_radius_m, got {self.hurdle_heights_m}")


    @property
    def n_hurdles(self) -> int:
        return len(self.hurdle_x)

    def rail_heights(self, k: int) -> list[float]:
        """Centre heights of the rails of hurdle ``k``: one on the floor, one whose top is at its height
        (a single rail where they would coincide)."""
        r, h = self.rail_radius_m, self.hurdle_heights_m[k]
        return [r] if h - r <= r + 1e-9 else [r, h - r]

    def add_props(self, spec: mujoco.MjSpec) -> None:
        r = self.rail_radius_m
        along_y = [np.cos(np.pi / 4), np.sin(np.pi / 4), 0.0, 0.0]  # capsule axis z -> world -y
        for k, x in enumerate(self.hurdle_x):
            for j, z in enumerate(self.rail_heights(k)):
                spec.worldbody.add_geom(
                    name=f"hurdle_{k}_{j}", type=mujoco.mjtGeom.mjGEOM_CAPSULE,
                    size=[r, self.hurdle_width_m / 2, 0], pos=[float(x), 0.0, z], quat=along_y,
                    rgba=[0.9, 0.9, 0.9, 1.0], contype=0, conaffinity=1, friction=[1.0, 0.005, 0.0001])


    def start(self, ctx: InitContext) -> InitialState:
        """Standing on the floor at rest, root at the origin."""
        ts = {
            "phase": np.float64(0.0),
            "passed": np.int64(0),
            "cleared": np.int64(0),
            "clear": np.bool_(False),
        }
        return InitialState(ctx.pose(), np.zeros(ctx.model.nv), ts)

    def randomize(self, init: InitialState, rng, xp) -> InitialState:
        """The root moved to a random x before the first hurdle (the floor is flat: the height stays), then
        Stand's joint and root noise at zero velocity."""
        x0 = rng.uniform(*self.start_x_range)
        noise = StartNoise(joint_rad=self.init_noise, root_xy_m=self.init_noise, root_quat=self.init_noise)
        qpos, qvel = add_start_noise(self.start_tables, noise, put(xp, init.qpos, 0, x0), init.qvel, rng, xp)
        return InitialState(qpos, qvel, init.task_state)

    def _delta_x(self, s, passed, xp):
        idx = xp.minimum(passed, self.n_hurdles - 1)
        return xp.asarray(self.hurdle_x)[idx] - s.pelvis_pos[0]

    def _h_target(self, passed, xp):
        """Height of the next hurdle not yet passed (after the last one: the last one's)."""
        return xp.asarray(self.hurdle_heights_m)[xp.minimum(passed, self.n_hurdles - 1)]

    def advance(self, s, ts, xp):
        passing = xp.logical_and(ts["passed"] < self.n_hurdles, self._delta_x(s, ts["passed"], xp) < 0.0)
        clear = xp.logical_and(passing, xp.abs(s.pelvis_pos[1]) < self.lateral_limit_m)
        return {
            "phase": advance_phase(ts["phase"], self.control_dt_s, self.period_s),
            "passed": ts["passed"] + xp.where(passing, 1, 0),
            "cleared": ts["cleared"] + xp.where(clear, 1, 0),
            "clear": clear,
        }

    def observation(self, s, ts, xp):
        dx = self._delta_x(s, ts["passed"], xp)
        return {
            "phase": phase_clock(ts["phase"], xp),
            "hurdle": xp.stack([dx, self._h_target(ts["passed"], xp) + 0.0 * dx]),
        }

    def reward_terms(self, s, ts, xp):
        z = s.foot_heights
        return {
            "forward_velocity": xp.clip(s.com_vel[0], -0.1, 4.0),
            "clearance": xp.where(xp.max(z) > self._h_target(ts["passed"], xp), 1.0, 0.0),
            "sparse_clear_bonus": xp.where(ts["clear"], 1.0, 0.0),
            "crane_hopping": xp.clip((xp.abs(z[0] - z[1]) - 0.2) / 0.5, 0.0, 1.0),
            "efficiency": efficiency(s, xp),
        }

    def termination(self, s, ts, xp):
        return {
            "pelvis_too_low": s.pelvis_pos[2] < self.pelvis_min_m,
            "heavy_yaw": xp.abs(s.yaw) > self.yaw_max_rad,
        }

    def success(self, ts, steps, terminated, xp):
        return ts["cleared"] >= self.n_hurdles

    def success_trace(self, ts):
        return {"cleared": int(ts["cleared"]), "passed": int(ts["passed"])}

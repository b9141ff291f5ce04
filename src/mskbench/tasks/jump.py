"""Jump (locomotion): jump repeatedly, both feet together.

Paper rows: Table VII (rewards), Table X (observations, init, termination),
Table XII (success).

==========================  ===================================================
reward term (weight)        formula
==========================  ===================================================
flight_gradient (600)       ``clip(½(c_foot,L + c_foot,R) / 0.1, 0, 1)``
upward_explosion (300)      ``clip(ż_pelvis, 0, 2)``
feet_separation (−200)      ``d_xy,feet``
desync_penalty (−150)       ``|q_knee,L − q_knee,R| + |q_hip,L − q_hip,R|``
efficiency (−1)             ``mean(a²)`` (our weight)
==========================  ===================================================

``c_foot = min(z_heel − z_heel,flat, z_toes − z_toes,flat)`` is the foot's
clearance: how far both its heel (calcaneus origin) and its toes origin are
above where they sit when the neutral pose stands flat on the floor (0.022 m
and 0.020 m, measured in ``bind``; :func:`mskbench.tasks.gait.foot_clearance`).
``q_hip`` is hip flexion. ``ż_pelvis`` is the pelvis origin's vertical velocity.

Choices where the paper is open (also in ``docs/tasks.md``):

* The paper's ``z_foot`` is taken as the clearance above, so that standing
  earns no flight reward (the calcaneus origin is 2.2 cm above the floor when
  standing) and rising on the toes, which lifts the heel 7 cm at 0.3 rad
  plantarflexion, earns little (its toes origin rises < 2 cm): the reward
  asks for the whole foot in the air.
* "Wide split" termination (``wide_split``): ``d_xy,feet > 0.4`` m, the
  original's limit (``msk_bench_v0.py@a68b6ce::MSKBenchJumpEnvV0._get_done``;
  standing: 0.17 m).
* Hop counter (Table XII): a hop is counted when the pelvis, having been
  above 1.00 m since the last hop, comes back below 0.95 m (the paper's
  thresholds), **and both feet left the floor in between** (``armed``,
  ``flown``, ``hops`` in the task state). The neutral standing pelvis height
  of this model is 0.947 m, so a hop needs the pelvis ≥ 5.3 cm above standing.
  The flight clause is ours, from the paper's own word: rising on the toes
  (0.3 rad plantarflexion) puts the pelvis at 1.00 m without leaving the
  floor, so the thresholds alone are met by calf raises (the ``calf-raise``
  probe, :mod:`mskbench.control.probes`, did: docs/calibration.md), and a
  calf raise is not a *hop*. "Left the floor": at some control step since
  the last hop, the lowest point of every colliding geom of both feet (heels
  and toes) is more than ``flight_gap_m`` = 1 cm above the floor
  (:func:`mskbench.tasks.gait.feet_lowest_height`). Geometry, not the touch
  sensors: their zones miss some foot contacts (measured: 17 of 266 steps
  of zero/random/passive Jump episodes had a foot geom in contact with the
  floor and every touch sensor at zero), while the lowest geom point of a
  foot in contact was never more than 3.3 mm above the floor in those steps.
* Initial state ("micro-squat, pre-flexed"), the original's
  (``msk_bench_v0.py@a68b6ce::MSKBenchJumpEnvV0.reset``): hips flexed 0.3 rad
  (the original also adducts them 0.05 rad, which on this body puts the two
  feet's collision geoms 2.7 cm into each other: left out), knees 0.4 rad, ankles dorsiflexed 0.1 rad, then every
  independent joint perturbed by ``N(0, 0.01²)`` rad (clipped to the joint ranges, dependents
  resolved) and every velocity of the body by ``N(0, 0.01²)`` (dependent joints' by the chain rule;
  :mod:`mskbench.tasks.starts`); on the floor (the original drops the root from 0.95 m and steps
  10 ms before the episode: those settling steps are not run); drawn on the host
  (``initial_state``): the placement depends on the noise.

Observation: torso angle ``(pitch, roll)`` (2, :func:`mskbench.tasks.gait.torso_angle`),
``d_xy,feet`` (1). Termination: ``z_pelvis < 0.45`` m (``pelvis_too_low``),
``wide_split``. Success: at least 10 hops.
Horizon: 1,000 steps (10 s at 1 ms × 10; the original's registry, ``registry.py@a68b6ce``).

Native solved: none — the original's ``solved`` for Jump is never set (a constant 0,
``msk_bench_v0.py@a68b6ce::MSKBenchJumpEnvV0.get_reward_dict``).

Options (``Jump.Config``): ``pelvis_height_min_m``, ``split_max_m``,
``hop_high_m``, ``hop_low_m``, ``success_hops``, ``flight_gap_m``, ``init_noise_rad``
(the values above).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mskbench.tasks.base import HostRandom, InitContext, InitialState, Task, TaskConfig, check_positive, efficiency, option
from mskbench.tasks.gait import feet_lowest_height, flat_foot_heights, foot_clearance, foot_geoms, torso_angle
from mskbench.tasks.starts import StartNoise, place_noisy

#: The original's micro-squat without its 0.05 rad hip adduction (on this body that adduction puts
#: the two feet's collision geoms 2.7 cm into each other).
MICRO_SQUAT = {"hip_flexion": 0.3, "knee_angle": 0.4, "ankle_angle": 0.1}


class Jump(Task):
    name = "Jump"
    family = "locomotion"
    horizon = 1000
    summary = "Hop repeatedly with both feet together (10 hops)"
    reward_weights = {
        "flight_gradient": 600.0,
        "upward_explosion": 300.0,
        "feet_separation": -200.0,
        "desync_penalty": -150.0,
        "efficiency": -1.0,
    }

    @dataclass(frozen=True)
    class Config(TaskConfig):
        pelvis_height_min_m: float = option(0.45, "pelvis_too_low below this pelvis height (m)")
        split_max_m: float = option(0.4, "wide_split above this horizontal feet distance (m)")
        hop_high_m: float = option(1.00, "a hop: the pelvis above this height ... (m)")
        hop_low_m: float = option(0.95, "... then back below this height (m)")
        success_hops: int = option(10, "success: at least this many hops")
        flight_gap_m: float = option(0.01, "a hop's flight: every foot geom's lowest point above this height (m)")
        init_noise_rad: float = option(0.01, "initial noise N(0, this²) on every joint (rad) and velocity")

        def __post_init__(self):
            check_positive(self, "init_noise_rad", allow_zero=True)
            check_positive(self, "flight_gap_m")

    #: Heel and toes heights standing flat (m), measured in ``bind``.
    flat_feet_m: np.ndarray = np.zeros(2)
    #: The feet's colliding geoms (:func:`mskbench.tasks.gait.foot_geoms`), resolved in ``bind``.
    feet: tuple = ()

    def bind(self, ctx: InitContext) -> None:
        super().bind(ctx)
        self.flat_feet_m = flat_foot_heights(ctx)
        self.feet = foot_geoms(ctx.model)

    def initial_state(self, ctx: InitContext, rng: np.random.Generator) -> InitialState:
        """The micro-squat with joint and velocity noise, on the floor (host: the placement depends on the noise)."""
        joints = {f"{k}_{side}": v for k, v in MICRO_SQUAT.items() for side in ("l", "r")}
        base = ctx.pose(joints, on_ground=False)
        qpos, qvel = place_noisy(ctx, self.start_tables, StartNoise.uniform(self.init_noise_rad), base,
                                 np.zeros(ctx.model.nv), HostRandom(rng))
        ts = {"armed": np.bool_(False), "flown": np.bool_(False), "hops": np.int64(0)}
        return InitialState(qpos, qvel, ts)

    def advance(self, s, ts, xp):
        z = s.pelvis_pos[2]
        armed = xp.logical_or(ts["armed"], z > self.hop_high_m)
        flown = xp.logical_or(ts["flown"], feet_lowest_height(s, self.feet, xp) > self.flight_gap_m)
        hop = armed & flown & (z < self.hop_low_m)
        rest = xp.logical_not(hop)
        return {"armed": armed & rest, "flown": flown & rest, "hops": ts["hops"] + xp.where(hop, 1, 0)}

    def observation(self, s, ts, xp):
        return {"torso_angle": torso_angle(s, xp), "d_xy_feet": xp.reshape(s.d_xy_feet, (1,))}

    def reward_terms(self, s, ts, xp):
        clearance = foot_clearance(s, self.flat_feet_m, xp)
        desync = (xp.abs(s.joint("knee_l") - s.joint("knee_r"))
                  + xp.abs(s.joint("hip_flexion_l") - s.joint("hip_flexion_r")))
        return {
            "flight_gradient": xp.clip(0.5 * (clearance[0] + clearance[1]) / 0.1, 0.0, 1.0),
            "upward_explosion": xp.clip(s.vel("pelvis")[2], 0.0, 2.0),
            "feet_separation": s.d_xy_feet,
            "desync_penalty": desync,
            "efficiency": efficiency(s, xp),
        }

    def termination(self, s, ts, xp):
        return {
            "pelvis_too_low": s.pelvis_pos[2] < self.pelvis_height_min_m,
            "wide_split": s.d_xy_feet > self.split_max_m,
        }

    def success(self, ts, steps, terminated, xp):
        return ts["hops"] >= self.success_hops

    def success_trace(self, ts):
        return {"hops": int(ts["hops"]), "armed": bool(ts["armed"]), "flown": bool(ts["flown"])}

"""Motion tracking (the imitation prior): follow a reference motion — TrackWalk, TrackRun, TrackStairs.

The paper's imitation-prior paradigm (Sec. III, item 4) uses a pretrained
MuscleMimic policy, which tracks motion-capture clips; the clips are gated.
These tasks train a tracking policy with the project's own trainers on the
procedural references of :mod:`mskbench.tasks.motion_reference` (walk at
1.2 m/s, run at 3 m/s, stair climbing over the Stairs course). The policy is
the frozen base of the residual tasks (:mod:`mskbench.paradigms.residual.tasks`).

Reward (per control step; ``mean`` over the components; the reference is taken
at the episode's reference time ``ref_t`` after this step's advance):

==========================  ======================================================================
reward term (weight)        formula
==========================  ======================================================================
site_pos (0.5)              ``exp(−20·mean((x_site − x_pelvis) − (x̂_site − x̂_pelvis))²)``, 16 sites
joint_pos (0.3)             ``exp(−10·mean(q_joints − q̂)²)``
root_vel (0.2)              ``exp(−10·mean(v_root − v̂_root)²)`` (root linear velocity, world)
root_pos (0.2)              ``exp(−10·mean(p_pelvis − p̂_pelvis)²)``
efficiency (−0.1)           ``mean(a²)``
==========================  ======================================================================

Where the original (``msk_bench/envs/msk/benchmark/residualrl/walk.py@a68b6ce``,
``MSK-Bench/.../residualrl/walk.py@a816b26``; the residual tasks' imitation
reward, the only tracking reward the original ships) decides: the exponents 20
(relative site positions), 10 (joint positions, root position, root velocity)
and the weights 0.5 (relative site positions) and 0.2 (root velocity); the
distances are means of squares. Ours: the original's 0.3-weighted term compares
*site orientations* (relative site angles), for which joint angles stand in
here (``joint_pos``: the relative orientations are functions of them); the
original gives the root position weight 0, we give it 0.2 so that the root path
is tracked (the residual Stairs task makes this term planar, Eq. 39); the
original's root velocity is 6-D in the root frame, ours the 3-D linear velocity
in the world; ``efficiency`` is ours (the residual tasks drop it, App. A-J1).

Observation (the base policy's input; 382 task values): phase clock
``(sin 2πφ, cos 2πφ)`` (2), ``delta_q = q_joints − q̂`` (122), ``delta_sites``
(16×3, relative site positions minus the reference's), ``root_error``
``p_pelvis − p̂_pelvis`` (3), ``root_vel_error`` (3) and ``lookahead``: at
0.2, 0.4, 0.6 and 0.8 s ahead on the reference clock, the reference pelvis
displacement from now (3) and the reference sites relative to the pelvis
(48) — the original's goal block (``common.py@a816b26``: four look-ahead blocks
20 control steps apart) without its velocity deltas.

Initial state: the reference at a phase drawn uniformly, floor-placed, its
joint velocities, the root moving at the reference speed (TrackStairs: at
``x = 0.3`` m, the Stairs start). Starts are drawn on the device: the start
poses are tabulated per phase at bind time and interpolated
(:meth:`Task.randomize`).

Termination (early termination on large deviation): ``site_deviation``, the
mean over the 16 sites of ``‖(x_site − x_pelvis) − (x̂_site − x̂_pelvis)‖``
above ``site_dev_max_m`` (0.3 m, our choice; the residual tasks use the
original's 0.8 m); ``root_deviation``, ``‖p_pelvis − p̂_pelvis‖`` above
``root_dev_max_m`` (1.0 m); ``pelvis_too_low`` below ``pelvis_height_min_m``
(0.35 m, the original's); ``pelvis_too_high`` above ``pelvis_height_max_m``
(2.0 m, the original's).

Success: TrackWalk and TrackRun, the horizon (1,000 steps, 10 s) without
termination; TrackStairs, Stairs' Table XII criterion (maximum pelvis height
≥ ``success_pelvis_height_m``, 1.6 m absolute: the top landing) within its 900
steps (9 s; the reference reaches the landing after ~6 s). No native solved
signal (the original's residual environments report ``success = False``).

Options (``Track*.Config``): ``speed_mps`` (the reference speed),
``period_s`` (the stride period; 0: the procedural period for the speed,
:func:`~mskbench.tasks.motion_reference.gait_period_s`), ``site_dev_max_m``,
``root_dev_max_m``, ``pelvis_height_min_m``, ``pelvis_height_max_m`` and, for
TrackStairs, ``success_pelvis_height_m``. The control step is the body's
(1 ms × 10), as the original's reference environments (10 ms).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from mskbench.tasks.base import (InitContext, InitialState, Task, TaskConfig, check_positive, efficiency, option,
                                 phase_clock, put, survived)
from mskbench.tasks.motion_reference import MOTION_SPEEDS, MotionReference, body_ids, smoothed_lift
from mskbench.tasks.stairs import START_X_M, staircase

#: Look-ahead times of the observation (s on the reference clock).
LOOKAHEAD_S = (0.2, 0.4, 0.6, 0.8)
#: Travel of the stair reference before it stops (m): from x = 0.3 to 4.6, on the top landing (x ∈ [3, 5]).
STAIR_TRAVEL_M = 4.3


class Tracking(Task):
    """Shared logic of the tracking tasks (and the residual tasks built on them)."""

    family = "imitation"
    horizon = 1000
    motion: ClassVar[str] = "walk"
    #: Initial root x (m).
    start_x_m: ClassVar[float] = 0.0
    #: Root position error in the plane only (Eq. 39; the residual Stairs task).
    planar_root: ClassVar[bool] = False
    reward_weights = {"site_pos": 0.5, "joint_pos": 0.3, "root_vel": 0.2, "root_pos": 0.2, "efficiency": -0.1}

    @dataclass(frozen=True)
    class Config(TaskConfig):
        speed_mps: float = option(1.2, "reference speed (m/s)")
        period_s: float = option(0.0, "stride period of the reference (s); 0: the procedural period for the speed")
        site_dev_max_m: float = option(0.3, "site_deviation above this mean relative site error (m)")
        root_dev_max_m: float = option(1.0, "root_deviation above this pelvis distance from the reference (m)")
        pelvis_height_min_m: float = option(0.35, "pelvis_too_low below this pelvis height (m)")
        pelvis_height_max_m: float = option(2.0, "pelvis_too_high above this pelvis height (m)")

        def __post_init__(self):
            check_positive(self, "speed_mps", "site_dev_max_m", "root_dev_max_m")
            check_positive(self, "period_s", allow_zero=True)

    #: The reference, built in ``bind``.
    reference: MotionReference | None = None

    # -- scene and reference -------------------------------------------------------------------
    def lift(self) -> tuple[np.ndarray, np.ndarray] | None:
        """The reference root path's lift (``(x, z)``), None: flat."""
        return None

    def travel_max_m(self) -> float:
        return float("inf")

    def bind(self, ctx: InitContext) -> None:
        super().bind(ctx)
        self.reference = MotionReference.build(ctx, self.motion, self.speed_mps, self.period_s or None,
                                               lift=self.lift(), travel_max_m=self.travel_max_m())
        self._site_ids = body_ids(ctx.model)
        self._n_muscles = int(ctx.handles.muscle_ids.size)

    def _ref(self) -> MotionReference:
        if self.reference is None:
            raise RuntimeError(f"{self.name} is not bound to a model; call bind() first")
        return self.reference

    # -- episode -----------------------------------------------------------------------------
    def start(self, ctx: InitContext) -> InitialState:
        ref = self._ref()
        qpos, qvel = ref.start_qpos[0].copy(), ref.start_qvel[0].copy()
        qpos[0] += self.start_x_m
        ts = {"ref_t": np.float64(0.0), "phase0": np.float64(0.0), "root0": qpos[:2].copy(),
              "rate": np.float64(1.0), **self.start_extra(ctx)}
        return InitialState(qpos, qvel, ts)

    def start_extra(self, ctx: InitContext) -> dict:
        """Task-state entries beyond the reference clock (host, fixed)."""
        return {}

    def randomize(self, init: InitialState, rng, xp) -> InitialState:
        """The reference at a uniformly drawn phase (interpolated from the start tables)."""
        ref = self._ref()
        u = xp.asarray(rng.uniform(0.0, 1.0))
        qpos, qvel = ref.start_state(u, xp)
        qpos = put(xp, qpos, 0, qpos[0] + self.start_x_m)
        ts = dict(init.task_state)
        ts["phase0"] = u
        ts["root0"] = xp.stack([qpos[0], qpos[1]])
        ts = self.randomize_extra(ts, u, xp)
        return InitialState(qpos, qvel, ts)

    def randomize_extra(self, ts: dict, phase0, xp) -> dict:
        return ts

    # -- the reference now -----------------------------------------------------------------------
    def errors(self, s, ts, xp) -> dict:
        """This state's deviations from the reference at ``ts["ref_t"]``: ``dq`` (joints), ``drel``
        (sites relative to the pelvis, (16, 3)), ``droot`` (pelvis), ``dvel`` (root velocity)."""
        ref = self._ref()
        t, ph0, root0 = ts["ref_t"], ts["phase0"], ts["root0"]
        rel = s.data.xpos[self._site_ids] - s.pelvis_pos[None, :]
        return {
            "dq": s.q_joints - ref.q(t, ph0, xp),
            "drel": rel - ref.sites_relative(t, ph0, xp),
            "droot": s.pelvis_pos - ref.pelvis(t, ph0, root0, xp),
            "dvel": s.qdot[:3] - ref.root_velocity(t, root0, ts["rate"], xp),
        }

    def pacing_rate(self, s, ts, xp):
        """How fast the reference clock runs this step (1: real time)."""
        return xp.ones_like(xp.asarray(ts["rate"]))

    def tracking_relax(self, s, ts, xp):
        """Factor on the tracking exponents (1: none; the residual Run task halves them in flight)."""
        return 1.0

    def advance(self, s, ts, xp):
        rate = self.pacing_rate(s, ts, xp)
        return {**ts, "ref_t": ts["ref_t"] + self.control_dt_s * rate, "rate": rate, **self.advance_extra(s, ts, xp)}

    def advance_extra(self, s, ts, xp) -> dict:
        return {}

    def tracking_blocks(self, s, ts, xp) -> dict:
        ref = self._ref()
        e = self.errors(s, ts, xp)
        t, ph0, root0 = ts["ref_t"], ts["phase0"], ts["root0"]
        now = ref.pelvis(t, ph0, root0, xp)
        ahead = []
        for dt in LOOKAHEAD_S:
            ahead.append(ref.pelvis(t + dt, ph0, root0, xp) - now)
            ahead.append(xp.reshape(ref.sites_relative(t + dt, ph0, xp), (-1,)))
        return {
            "phase": phase_clock(ref.phase(t, ph0, xp), xp),
            "delta_q": e["dq"],
            "delta_sites": xp.reshape(e["drel"], (-1,)),
            "root_error": e["droot"],
            "root_vel_error": e["dvel"],
            "lookahead": xp.concatenate(ahead),
        }

    def observation(self, s, ts, xp):
        return self.tracking_blocks(s, ts, xp)

    def tracking_terms(self, s, ts, xp) -> dict:
        e = self.errors(s, ts, xp)
        k = self.tracking_relax(s, ts, xp)
        droot = e["droot"][:2] if self.planar_root else e["droot"]
        return {
            "site_pos": xp.exp(-20.0 * k * xp.mean(e["drel"] ** 2)),
            "joint_pos": xp.exp(-10.0 * k * xp.mean(e["dq"] ** 2)),
            "root_vel": xp.exp(-10.0 * k * xp.mean(e["dvel"] ** 2)),
            "root_pos": xp.exp(-10.0 * k * xp.mean(droot**2)),
        }

    def reward_terms(self, s, ts, xp):
        return {**self.tracking_terms(s, ts, xp), "efficiency": efficiency(s, xp)}

    def site_deviation(self, s, ts, xp):
        """Mean over the sites of the relative site position error (m)."""
        return xp.mean(xp.linalg.norm(self.errors(s, ts, xp)["drel"], axis=-1))

    def termination(self, s, ts, xp):
        e = self.errors(s, ts, xp)
        z = s.pelvis_pos[2]
        return {
            "site_deviation": xp.mean(xp.linalg.norm(e["drel"], axis=-1)) > self.site_dev_max_m,
            "root_deviation": xp.linalg.norm(e["droot"]) > self.root_dev_max_m,
            "pelvis_too_low": z < self.pelvis_height_min_m,
            "pelvis_too_high": z > self.pelvis_height_max_m,
        }

    def success(self, ts, steps, terminated, xp):
        return survived(steps, terminated, self.horizon, xp)


class TrackWalk(Tracking):
    name = "TrackWalk"
    summary = "Track a procedural walking reference (1.2 m/s): the imitation prior"
    motion = "walk"


class TrackRun(Tracking):
    name = "TrackRun"
    summary = "Track a procedural running reference (3 m/s): the imitation prior"
    motion = "run"

    @dataclass(frozen=True)
    class Config(Tracking.Config):
        speed_mps: float = option(MOTION_SPEEDS["run"], "reference speed (m/s)")


class StairsScene:
    """The Stairs course, the lifted root path and the landing success (mixed into the stair tasks)."""

    terrain = staircase()
    start_x_m = START_X_M
    horizon = 900

    def add_props(self, spec) -> None:
        self.terrain.add_to(spec)

    def lift(self):
        return smoothed_lift(self.terrain.height)

    def travel_max_m(self) -> float:
        return STAIR_TRAVEL_M

    def start_extra(self, ctx):
        return {"max_pelvis_z": np.float64(self._ref().pelvis_table[0, 2])}

    def randomize_extra(self, ts, phase0, xp):
        from mskbench.tasks.motion_reference import lookup

        return {**ts, "max_pelvis_z": lookup(self._ref().pelvis_table, phase0, xp)[2]}

    def advance_extra(self, s, ts, xp):
        return {"max_pelvis_z": xp.maximum(ts["max_pelvis_z"], s.pelvis_pos[2])}

    def success(self, ts, steps, terminated, xp):
        return ts["max_pelvis_z"] >= self.success_pelvis_height_m

    def success_trace(self, ts):
        return {"max_pelvis_z": float(ts["max_pelvis_z"])}


class TrackStairs(StairsScene, Tracking):
    name = "TrackStairs"
    summary = "Track a procedural stair-climbing reference over the Stairs course: the imitation prior"
    motion = "stairs"
    # Stairs' 2 ms physics step would change the control step; the original's reference envs step at 10 ms.

    @dataclass(frozen=True)
    class Config(Tracking.Config):
        speed_mps: float = option(MOTION_SPEEDS["stairs"], "reference speed (m/s)")
        success_pelvis_height_m: float = option(1.6, "success: maximum pelvis height (m, absolute)")

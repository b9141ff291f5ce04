"""Residual adaptation over an imitation prior (Eq. 2 / 38, App. A-J): ResidualWalk, ResidualRun, ResidualStairs.

A frozen base policy (a tracking prior trained on :mod:`mskbench.tasks.tracking`,
any trainer's checkpoint; task option ``base``) supplies ``a_base``; a trained
residual policy supplies ``a_res``; the muscles get (Eq. 38)::

    a = clip(a_base + α · clip(a_res, −1, 1), −1, 1)

These tasks are the tracking tasks with the residual study's changes. The
base policy's action is part of the observation (block ``base_action``,
computed from this task's own tracking blocks, which are exactly the prior's
observation: same blocks, same order), and so is foot contact (block
``foot_contact``, from which α is scheduled). The combination itself, the
residual L2 penalty ``c_res · mean(a_res²)`` (``residual_l2_weight``,
−0.02) and the schedule are applied between the trainer and the env by
:mod:`mskbench.paradigms.residual.wrapper` (the env sees only the executed action) —
one formula each, NumPy and JAX.

Reward (App. A-J1: no action-rate or activation cost — ``efficiency`` is
dropped — only the L2 residual penalty, added by the wrapper):

==========================  ======================================================================
reward term (weight)        formula
==========================  ======================================================================
site_pos (0.5)              tracking (:mod:`mskbench.tasks.tracking`): relative site positions
joint_pos (0.3)             tracking: joint angles
root_vel (0.2)              tracking: root velocity
root_pos (0.2)              tracking: pelvis position; ResidualStairs: planar, Eq. 39
metabolic (−0.05)           ResidualWalk, Eq. 42: ``Σ_j a_j,t² + λ (a_j,t − a_j,t−1)²``, λ = 0.1
propel (0.2)                ResidualRun, Eq. 43: ``max(0, v_x,CoM − v̂_x) · I_air``
grf_penalty (−0.1)          ResidualRun, Eq. 44: ``max(0, F_z / (m g) − 2.5)`` (body weights)
progress (0.3)              ResidualStairs, Eq. 40: ``clip(v_proj, 0, 2) + 0.5 clip(v_z, 0, 1.5)``
==========================  ======================================================================

Per task (App. A-J; the original's ``residualrl/{walk,run,stair}.py`` @ a68b6ce
and @ a816b26 where the paper is silent):

* **ResidualWalk** — α per limb from foot contact (Eq. 41): muscles of a side
  whose foot is off the ground get ``alpha_swing`` (0.6), of a side in
  contact ``alpha_stance`` (0.2); midline muscles ``alpha_stance`` (the
  original: actuators are split by their names' side, unsided ones keep the
  stance value; its ``residual_scale`` is 1.0 for walking). Eq. 42 sums over
  the 416 muscles (the paper, and the original at a816b26; at a68b6ce the
  original takes the mean: option ``metabolic_sum`` False), with
  ``a_t−1 = 0`` at the episode's start (the original's).
* **ResidualRun** — constant α (``alpha``, 0.6, the original's
  ``residual_scale``); in flight (neither foot in contact) the tracking
  exponents are halved (``flight_relax``: "relax the tracking penalty by 50 %");
  Eq. 43's ``v̂_x`` is the reference speed (3 m/s); Eq. 44's ``F_z`` is the
  sum of the four foot touch sensors, the limit ``grf_limit_bw`` (2.5) body
  weights. The original ships neither term (its run wrapper says
  ``partial_release_requires_author_confirmation``): the weights 0.2 and −0.1
  per body weight are ours; c_res is the paper's −0.02 (the original's run
  uses −0.05).
* **ResidualStairs** — constant α (0.6, "used for the stair task as well");
  the root position error is planar (Eq. 39); elastic pacing: the reference
  clock runs at full rate while the planar pelvis deviation from the
  reference is below ``pacing_dev_m`` (0.4 m), else at ``pacing_rate_slow``
  (0.5) — the original advances its reference every other step instead,
  which is the same rate; the progress reward (Eq. 40, ``w_prog`` = 0.3)
  projects the root velocity on the direction to the reference pelvis
  ``progress_ahead_s`` (1.0 s) ahead on the reference clock, and is 0 within
  0.1 m of it (the original's).

Termination (the original's): ResidualWalk and ResidualRun as the tracking
tasks with ``site_dev_max_m`` 0.8 m and ``root_dev_max_m`` 2.0 m;
ResidualStairs ``root_deviation`` (3-D pelvis distance above
``root_dev_max_m``, 1.0 m), ``pelvis_too_low`` (below 0.35 m) and
``below_reference`` (pelvis more than ``drop_max_m``, 0.45 m, below the
reference's).

Success: ResidualWalk and ResidualRun survive the horizon (1,000 steps);
ResidualStairs reaches the top landing (maximum pelvis height ≥
``success_pelvis_height_m``, 1.6 m, Stairs' Table XII criterion) within 900
steps. No native solved signal.

Options (``Residual*.Config``, besides the tracking options ``speed_mps``,
``period_s``, ``site_dev_max_m``, ``root_dev_max_m``, ``pelvis_height_min_m``,
``pelvis_height_max_m``): ``base`` (``zero``, ``passive``, or a checkpoint: a
``.npz`` file or a run directory, read with :func:`mskbench.agents.checkpoint.load`;
its observation layout must be the tracking tasks'), ``residual_l2_weight``,
``contact_min_n`` (a foot is in contact when its heel + toe touch sensors read
more than this, 1 N), and per task ``alpha_stance``, ``alpha_swing``,
``alpha``, ``metabolic_smoothing``, ``metabolic_sum``, ``flight_relax``, ``grf_limit_bw``,
``pacing_dev_m``, ``pacing_rate_slow``, ``progress_ahead_s``, ``drop_max_m``,
``success_pelvis_height_m`` (the values above).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mskbench.envs.observation import flatten, layout_of, observation_blocks
from mskbench.paradigms.residual.action import ALPHA, C_RES
from mskbench.tasks.base import InitContext, check_positive, option
from mskbench.tasks.motion_reference import MOTION_SPEEDS
from mskbench.tasks.tracking import StairsScene, Tracking

#: Built-in base policies: their constant action.
BUILTIN_BASES = {"zero": 0.0, "passive": -1.0}
_BASE_CACHE: dict[tuple, Any] = {}


def resolve_base(base: str) -> str:
    """A base spec as a task records it: a built-in name, or the absolute path of the checkpoint file
    (a run directory means its best.npz, else its checkpoint.npz)."""
    if base in BUILTIN_BASES:
        return base
    from mskbench.agents.run_dir import checkpoint_path

    path = checkpoint_path(str(base))
    if path is None:
        raise ValueError(f"base {base!r} is neither {' nor '.join(BUILTIN_BASES)} nor a checkpoint "
                         "(.npz file or run directory)")
    return str(Path(path).resolve())


def load_base(spec: str, layout, obs_size: int):
    """The frozen base policy ``spec``: ``None`` for a built-in constant, else the
    :class:`~mskbench.agents.base.PolicyCheckpoint` (its layout checked against ``layout``). Loaded
    checkpoints are cached per file, modification time and layout (one compile per process)."""
    if spec in BUILTIN_BASES:
        return None
    from mskbench.agents.base import layout_json
    from mskbench.agents.checkpoint import load

    path = Path(resolve_base(spec))
    key = (str(path), path.stat().st_mtime_ns, layout_json(layout), obs_size)
    if key not in _BASE_CACHE:
        _BASE_CACHE[key] = load(path, layout, obs_size)
    return _BASE_CACHE[key]


class Residual(Tracking):
    """What the residual tasks share: the base policy in the observation, foot contact, α."""

    family = "residual"
    reward_weights = {"site_pos": 0.5, "joint_pos": 0.3, "root_vel": 0.2, "root_pos": 0.2}

    @dataclass(frozen=True)
    class Config(Tracking.Config):
        base: str = option("zero", "the frozen base policy: zero, passive, or a checkpoint (.npz file or run "
                                   "directory)")
        residual_l2_weight: float = option(C_RES, "c_res: weight of the residual penalty mean(a_res²), added by "
                                                  "the residual wrapper")
        contact_min_n: float = option(1.0, "a foot is in contact when its heel + toe touch exceeds this (N)")

    def bind(self, ctx: InitContext) -> None:
        super().bind(ctx)
        from mskbench.body.sides import muscle_sides

        sides = np.array(muscle_sides(ctx.handles.muscle_names))
        self._left, self._right = sides == "left", sides == "right"
        self._body_weight_n = float(ctx.handles.total_mass * abs(ctx.model.opt.gravity[2]))
        init = self.start(ctx)
        view = ctx.forward(init.qpos, init.qvel)
        blocks = observation_blocks(view, self.body.observation, self.tracking_blocks(view, init.task_state, np))
        #: The prior's observation layout: the tracking tasks' (base and task blocks).
        self.base_layout = layout_of(blocks)
        self._base = load_base(self.base, self.base_layout, next(reversed(self.base_layout.values())).stop)

    # -- the base policy ---------------------------------------------------------------------
    def base_action(self, s, blocks: dict, xp):
        """``a_base``: the frozen base policy on this state's tracking observation (n_muscles,)."""
        if self._base is None:
            return xp.full((self._n_muscles,), BUILTIN_BASES[self.base])
        obs = flatten(observation_blocks(s, self.body.observation, blocks), xp)
        a = self._base.deterministic(self._base.params, self._base.normalize(obs, xp))
        if xp is np:
            a = np.asarray(a, np.float64)
        return xp.clip(a, -1.0, 1.0)

    def foot_contact(self, s, xp):
        """``(left, right)``: 1 where the foot's heel + toe touch exceeds ``contact_min_n``, else 0."""
        t = s.touch
        load = xp.stack([t[0] + t[1], t[2] + t[3]])
        return xp.where(load > self.contact_min_n, 1.0, 0.0)

    def observation(self, s, ts, xp):
        blocks = self.tracking_blocks(s, ts, xp)
        return {**blocks, "foot_contact": self.foot_contact(s, xp), "base_action": self.base_action(s, blocks, xp)}

    def residual_alpha(self, contact, xp):
        """α per muscle (Eq. 38) from the ``foot_contact`` observation (..., 2): constant ``alpha``."""
        return xp.full(tuple(contact.shape[:-1]) + (self._n_muscles,), self.alpha) + 0.0 * contact[..., :1]


class ResidualWalk(Residual):
    name = "ResidualWalk"
    summary = "Residual adaptation of a walking prior: α 0.6 swing / 0.2 stance, activation penalty (App. A-J3)"
    motion = "walk"
    reward_weights = {**Residual.reward_weights, "metabolic": -0.05}

    @dataclass(frozen=True)
    class Config(Residual.Config):
        site_dev_max_m: float = option(0.8, "site_deviation above this mean relative site error (m)")
        root_dev_max_m: float = option(2.0, "root_deviation above this pelvis distance from the reference (m)")
        alpha_stance: float = option(0.2, "α of a side whose foot is in contact (Eq. 41)")
        alpha_swing: float = option(ALPHA, "α of a side whose foot is in the air (Eq. 41)")
        metabolic_smoothing: float = option(0.1, "λ of Eq. 42 (activation change)")
        metabolic_sum: bool = option(True, "Eq. 42 sums over the muscles (the paper); False: the mean (a68b6ce)")

    def residual_alpha(self, contact, xp):
        """Eq. 41: ``α_stance + (α_swing − α_stance) · I_swing`` per side; midline muscles ``α_stance``."""
        swing = 1.0 - contact
        gap = self.alpha_swing - self.alpha_stance
        a_left = self.alpha_stance + gap * swing[..., 0:1]
        a_right = self.alpha_stance + gap * swing[..., 1:2]
        return xp.where(xp.asarray(self._left), a_left,
                        xp.where(xp.asarray(self._right), a_right, self.alpha_stance + 0.0 * a_left))

    def start_extra(self, ctx):
        zeros = np.zeros(int(ctx.handles.muscle_ids.size))
        return {"act_prev": zeros, "act_now": zeros.copy()}

    def advance_extra(self, s, ts, xp):
        return {"act_prev": ts["act_now"], "act_now": s.activation}

    def reward_terms(self, s, ts, xp):
        a, prev = ts["act_now"], ts["act_prev"]
        per_muscle = a**2 + self.metabolic_smoothing * (a - prev) ** 2
        return {**self.tracking_terms(s, ts, xp),
                "metabolic": xp.sum(per_muscle) if self.metabolic_sum else xp.mean(per_muscle)}


class ResidualRun(Residual):
    name = "ResidualRun"
    summary = "Residual adaptation of a running prior: relaxed flight tracking, propulsion, GRF penalty (App. A-J4)"
    motion = "run"
    reward_weights = {**Residual.reward_weights, "propel": 0.2, "grf_penalty": -0.1}

    @dataclass(frozen=True)
    class Config(Residual.Config):
        speed_mps: float = option(MOTION_SPEEDS["run"], "reference speed (m/s); also v̂_x of Eq. 43")
        site_dev_max_m: float = option(0.8, "site_deviation above this mean relative site error (m)")
        root_dev_max_m: float = option(2.0, "root_deviation above this pelvis distance from the reference (m)")
        alpha: float = option(ALPHA, "residual authority α (Eq. 38)")
        flight_relax: float = option(0.5, "in flight the tracking exponents are scaled by 1 − this")
        grf_limit_bw: float = option(2.5, "F_limit of Eq. 44 in body weights")

    def in_flight(self, s, xp):
        """``I_air``: 1 when neither foot is in contact."""
        c = self.foot_contact(s, xp)
        return xp.where(c[0] + c[1] == 0.0, 1.0, 0.0)

    def tracking_relax(self, s, ts, xp):
        return 1.0 - self.flight_relax * self.in_flight(s, xp)

    def ground_force_bw(self, s, xp):
        """Total vertical foot force ``F_z`` (the four touch sensors) in body weights."""
        return xp.sum(s.touch) / self._body_weight_n

    def propel(self, s, xp):
        """Eq. 43 without its weight: ``max(0, v_x,CoM − v̂_x) · I_air``."""
        return xp.maximum(0.0, s.com_vel[0] - self.speed_mps) * self.in_flight(s, xp)

    def grf_penalty(self, s, xp):
        """Eq. 44 without its weight: ``max(0, F_z / (m g) − grf_limit_bw)`` (body weights above the limit)."""
        return xp.maximum(0.0, self.ground_force_bw(s, xp) - self.grf_limit_bw)

    def reward_terms(self, s, ts, xp):
        return {**self.tracking_terms(s, ts, xp), "propel": self.propel(s, xp), "grf_penalty": self.grf_penalty(s, xp)}


class ResidualStairs(StairsScene, Residual):
    name = "ResidualStairs"
    summary = "Residual adaptation over the Stairs course: planar root error, elastic pacing, progress (App. A-J2)"
    motion = "stairs"
    planar_root = True
    reward_weights = {**Residual.reward_weights, "progress": 0.3}

    @dataclass(frozen=True)
    class Config(Residual.Config):
        speed_mps: float = option(MOTION_SPEEDS["stairs"], "reference speed (m/s)")
        root_dev_max_m: float = option(1.0, "root_deviation above this pelvis distance from the reference (m)")
        alpha: float = option(ALPHA, "residual authority α (Eq. 38)")
        pacing_dev_m: float = option(0.4, "the reference slows when the planar pelvis deviation reaches this (m)")
        pacing_rate_slow: float = option(0.5, "rate of the reference clock while slowed")
        progress_ahead_s: float = option(1.0, "Eq. 40 targets the reference pelvis this far ahead (s)")
        drop_max_m: float = option(0.45, "below_reference when the pelvis is this far below the reference's (m)")
        success_pelvis_height_m: float = option(1.6, "success: maximum pelvis height (m, absolute)")

        def __post_init__(self):
            super().__post_init__()
            check_positive(self, "pacing_dev_m", "pacing_rate_slow")

    def planar_deviation(self, s, ts, xp):
        """``‖p_xy − p̂_xy‖`` of the pelvis against the reference at ``ts`` (m)."""
        ref = self._ref().pelvis(ts["ref_t"], ts["phase0"], ts["root0"], xp)
        return xp.linalg.norm(s.pelvis_pos[:2] - ref[:2])

    def pacing_rate(self, s, ts, xp):
        """Elastic pacing: 1 while the planar deviation is below ``pacing_dev_m``, else ``pacing_rate_slow``."""
        return xp.where(self.planar_deviation(s, ts, xp) < self.pacing_dev_m, 1.0, self.pacing_rate_slow)

    def progress(self, s, ts, xp):
        """Eq. 40 without its weight: ``clip(v_proj, 0, 2) + 0.5 clip(v_z, 0, 1.5)``, 0 within 0.1 m of the target."""
        target = self._ref().pelvis(ts["ref_t"] + self.progress_ahead_s, ts["phase0"], ts["root0"], xp)
        d = target - s.pelvis_pos
        dist = xp.linalg.norm(d)
        v = s.qdot[:3]
        v_proj = xp.sum(v * d) / xp.maximum(dist, 1e-9)
        r = xp.clip(v_proj, 0.0, 2.0) + 0.5 * xp.clip(v[2], 0.0, 1.5)
        return xp.where(dist > 0.1, r, 0.0)

    def reward_terms(self, s, ts, xp):
        return {**self.tracking_terms(s, ts, xp), "progress": self.progress(s, ts, xp)}

    def termination(self, s, ts, xp):
        e = self.errors(s, ts, xp)
        z = s.pelvis_pos[2]
        return {
            "root_deviation": xp.linalg.norm(e["droot"]) > self.root_dev_max_m,
            "pelvis_too_low": z < self.pelvis_height_min_m,
            "below_reference": z < z - e["droot"][2] - self.drop_max_m,
        }

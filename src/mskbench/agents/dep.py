"""DEP: Differential Extrinsic Plasticity, the exploration controller of DepRL.

DEP (Der & Martius, "Novel plasticity rule can explain the development of
sensorimotor intelligence", PNAS 112(45) E6224, 2015) is a self-organising
linear controller whose weights are learned, at every control step, from how
the sensors *changed* recently. DepRL (Schumacher, Häufle, Büchler, Schmitt,
Martius, "DEP-RL: Embodied exploration for reinforcement learning in
overactuated and musculoskeletal systems", ICLR 2023) lets DEP take over from
the RL policy for short stretches ("interventions"), which produces the
correlated, large-amplitude muscle patterns that Gaussian action noise does
not. This module is DEP and its switching schedule (their settings,
:class:`DEPConfig`, are :mod:`mskbench.agents.dep_config`); the learner
that uses it lives elsewhere.

Symbols (per world; ``n`` worlds are stepped together, every array has a
leading axis of size ``n``):

==============  =======================================================================
``x_t``         sensor vector at control step ``t`` (``S`` values): normalised muscle
                lengths, see :func:`normalize_sensors`
``x̄_t``         smoothed sensors, ``x̄_t = x̄_{t−1} + (x_t − x̄_{t−1}) / s4avg``
                (``x̄_0 = x_0``; no smoothing when ``s4avg = 1``)
``ẋ_t``         sensor change ``x̄_t − x̄_{t−1}``
``δ``           ``time_dist``: the lag between the two sensor changes that are correlated
``τ``           ``tau``: the number of recent steps summed in the learning rule
``M``           inverse model (motor × sensor), fixed to ``−I``: exciting a muscle
                shortens it, so a length change points to the opposite motor change
``C``           sensorimotor (controller) matrix, motor × sensor
``C_n``         ``C`` normalised (``normalization``), the matrix that acts
``h``           controller bias (``Cb`` in deprl), one value per motor
``κ``           ``kappa``: the gain
``ε``           ``10^(−regularization)``: a regulariser in every division by a norm
``y_t``         DEP's action, ``M`` motors, in [−1, 1]
==============  =======================================================================

Per step (:func:`dep_step`):

1. Smooth: ``x̄_t`` as above.
2. Learn (when ``with_learning`` and ``t ≥ 2 + δ``, ``t`` counting the samples
   seen before this one since the last reset):

   * DEP rule, as a sum over the recent past instead of the paper's running
     average (deprl ``dep_controller.py``, ``_compute_C``)::

         C = Σ_{s=2}^{min(t−δ, τ)−1}  (M ẋ_{t−s+1}) (ẋ_{t−s+1−δ})ᵀ

     (the newest change ``ẋ_t`` is not used: deprl's sum starts at ``s = 2``);
   * normalisation with ``R = C Mᵀ`` (the linear response motor → motor):
     ``independent``: each motor row ``j`` scaled to ``κ / (‖R_j‖ + ε)``
     (Der & Martius' per-motor normalisation, lpzrobots ``dep.cpp``
     ``indnorm = 1``); ``global``: ``C_n = κ C / (‖R‖_F + ε)``; ``none``:
     ``C_n = C``; ``deprl_columns``: deprl's own ``independent`` variant, see
     "Differences" below;
   * bias, a leaky integral that pulls the mean action to zero::

         h ← h − clip(bias_rate · y_{t−1}, −0.05, 0.05) − 0.001 h     (h = 0 if bias_rate < 0)

3. Act::

       q = C_n x̄_t,   q̂ = q / (‖q‖₂ + ε)   (q_norm_selector l2; "max": ‖q‖_∞; "none": q̂ = q)
       y_t = clip(tanh(κ q̂ + h), −1, 1)

Switching (deprl ``custom_agents.py``, ``dep_factory(3, …)`` = ``StochSwitchDep``,
"the paper version"; :func:`switch_step`): while the environment has taken no
more than ``pretrain_steps`` steps in all (all worlds counted), DEP alone acts
(it fills the replay buffer before the learner starts). After that the policy
acts, and at each step on which it acts a world starts an intervention with
probability ``intervention_proba``: DEP then acts on that world for the next
``intervention_length`` steps. Every ``test_episode_every``-th episode of a
world (episodes 0, k, 2k, …) is DEP-free: the policy acts throughout. DEP is
meant to be stepped on every step, also while the policy acts, so that it
keeps learning from the motion the policy makes.

Sensors (:func:`normalize_sensors`; deprl ``env_wrappers/wrappers.py``,
``tendon_states``): DEP senses the muscle-tendon lengths ``l`` (MuJoCo's
``actuator_length``, our ``muscle_length`` block, metres), each rescaled by
the range seen so far on that world: ``x = 2 ((l − l_min) / (l_max − l_min + 0.1) − 0.5)``.
The range starts empty (``l_min = 100``, ``l_max = 0``) and is never reset at
episode ends (deprl keeps it on the environment wrapper). Muscle lengths,
not joint angles, are what DEP-RL feeds DEP for muscle models: one sensor per
motor, so ``M = −I`` is a valid inverse model. deprl can add a force term
(``force_scale``, 0 in every MSK-Bench config); it is left out here.

Differences from deprl (judged bugs or artefacts of deprl's single-agent design):

* ``independent`` normalisation: deprl computes the per-motor factors
  ``κ / (‖R_j‖ + ε)`` and then multiplies them with the einsum
  ``"ijk,ik->ijk"``, i.e. onto the *columns* (sensor ``k`` scaled by the factor
  of motor row ``k``); this only runs because its matrices are square. The
  method it names (Der & Martius 2015; lpzrobots ``dep.cpp``,
  ``C.multrowwise(normmot)``) scales the motor *rows*, which is what
  ``independent`` does here; ``deprl_columns`` reproduces deprl's arithmetic.
* ``global`` normalisation: deprl takes one norm over the whole
  ``(n_env, M, M)`` tensor, coupling the worlds; here it is per world.
* ``q_norm_selector="max"`` raises ``TypeError`` in deprl (Python's ``max``
  with an ``axis``); here it is ``‖q‖_∞`` per world.
* Episode ends: deprl never clears DEP, so the jump from a terminal state to
  the next initial state enters its sensor changes; here :func:`dep_reset`
  clears a world's history, matrices and bias (the sensor range is kept).
* Switching is per world (one random draw per world per step, a DEP-free
  episode counted per world); deprl's agent makes one draw for all its
  workers and counts DEP-free episodes on the sum of all workers' episodes.
  DEP is also stepped during DEP-free episodes here (deprl skips it, leaving
  gaps in its sensor history).
* A non-finite muscle length reads as the middle of its range (0) and does not
  update the range (deprl skips the range update but passes the NaN on).
* MSK-Bench's copy of deprl's DEP (``rl_paradigms/depRL/deprl/dep_controller.py``
  @ d7a28917) no longer re-sizes the controller to the number of workers: it
  keeps one ``C`` and one ``h`` for all of them and averages the workers'
  updates into it. Here, as in deprl, every world has its own matrices (deprl
  does so on purpose, for more varied exploration data), and a world's reset
  leaves the others alone.

Sources (GitHub, read for facts and numbers; no code taken): martius-lab/depRL
``deprl/dep_controller.py`` @ 1da6f8ce, ``deprl/custom_agents.py`` @ 188ec6d0,
``deprl/env_wrappers/wrappers.py`` @ d71f5722, ``deprl/param_files/default_agents.json``
@ 321f062f; ZZongzheng0918/MSK-Bench (branch ``code``) ``rl_paradigms/depRL/`` @ d7a28917 /
4ffd2d66 (configs, ``custom_trainer.py``, ``dep_controller.py``); georgmartius/lpzrobots
``selforg/controller/dep.cpp`` @ 15ffc18f (the reference DEP of Der & Martius).

JAX: every ``xp`` function here is pure (state in, state out) and traces
under ``jax.jit`` with ``cfg`` and ``xp`` static. This module imports no JAX.
"""

from __future__ import annotations

import dataclasses
from typing import Any, NamedTuple

import numpy as np

from mskbench.agents.dep_config import DEPConfig, _int_at_least
from mskbench.agents.dep_config import NORMALIZATIONS, Q_NORMS  # noqa: F401 - re-exported, as DEPConfig

#: Largest change of the bias ``h`` per step from the action term (deprl and lpzrobots).
BIAS_STEP_CLIP = 0.05
#: Leak of the bias ``h`` per step (deprl and lpzrobots).
BIAS_LEAK = 0.001
#: Initial (empty) sensor range of deprl's ``tendon_states``: ``l_min = 100``, ``l_max = 0`` (metres).
RANGE_INIT_MIN = 100.0
RANGE_INIT_MAX = 0.0
#: ``t`` (samples since reset) saturates here, far beyond any window, so it cannot overflow int32.
_T_MAX = 2**30
STATE_DICT_VERSION = 1


# -- DEP proper (pure, any xp) ------------------------------------------------------------------
class DEPState(NamedTuple):
    """DEP of ``n`` worlds (``S`` sensors, ``M`` motors); every field has a leading world axis.

    * ``hist`` ``(n, τ+δ, S)``: smoothed sensors, newest first: ``hist[:, k] = x̄_{t−k}``
      (``hist[:, 0]`` is the current ``x̄``); zeros before the first sample.
    * ``t`` ``(n,)`` int32: samples seen since the world's last reset (saturates at 2**30).
    * ``C`` ``(n, M, S)``: the sensorimotor matrix of the last learning step, before normalisation.
    * ``C_norm`` ``(n, M, S)``: ``C_n``, the normalised matrix that acts.
    * ``Cb`` ``(n, M)``: the bias ``h``.
    * ``y`` ``(n, M)``: the last action ``y_{t−1}`` (the bias update reads it).
    """

    hist: Any
    t: Any
    C: Any
    C_norm: Any
    Cb: Any
    y: Any


def dep_init(n_worlds: int, n_sensors: int, n_motors: int, cfg: DEPConfig, xp: Any,
             dtype: Any = None) -> DEPState:
    """DEP of ``n_worlds`` fresh worlds: empty history, ``C = C_n = 0``, ``h = 0``, ``y = 0``.

    ``dtype``: the float type of every array (default float32, as deprl's torch)."""
    for name, value in (("n_worlds", n_worlds), ("n_sensors", n_sensors), ("n_motors", n_motors)):
        _int_at_least("dep_init", name, value, 1)
    if cfg.normalization == "deprl_columns" and n_sensors != n_motors:
        raise ValueError(f"normalization 'deprl_columns' needs n_sensors == n_motors, got {n_sensors} and {n_motors}")
    f = xp.float32 if dtype is None else dtype
    return DEPState(
        hist=xp.zeros((n_worlds, cfg.window, n_sensors), dtype=f),
        t=xp.zeros((n_worlds,), dtype=xp.int32),
        C=xp.zeros((n_worlds, n_motors, n_sensors), dtype=f),
        C_norm=xp.zeros((n_worlds, n_motors, n_sensors), dtype=f),
        Cb=xp.zeros((n_worlds, n_motors), dtype=f),
        y=xp.zeros((n_worlds, n_motors), dtype=f),
    )


def _apply_model(chi: Any, n_motors: int, xp: Any) -> Any:
    """``μ = M χ`` with ``M = −I`` (motor × sensor, rectangular identity) over the last axis."""
    n_sensors = chi.shape[-1]
    k = min(n_motors, n_sensors)
    mu = -chi[..., :k]
    if n_motors > k:
        mu = xp.concatenate([mu, xp.zeros(mu.shape[:-1] + (n_motors - k,), dtype=mu.dtype)], axis=-1)
    return mu


def sensorimotor_matrix(hist: Any, t: Any, cfg: DEPConfig, n_motors: int, xp: Any) -> Any:
    """The DEP rule ``C = Σ_{s=2}^{min(t−δ, τ)−1} (M ẋ_{t−s+1})(ẋ_{t−s+1−δ})ᵀ``, ``(n, M, S)``.

    ``hist``: smoothed sensors newest first (``hist[:, k] = x̄_{t−k}``, at least ``τ+δ`` of
    them); ``t`` ``(n,)``: samples seen before ``x̄_t`` (terms reaching before the first sample
    are left out). ``ẋ_{t−k} = hist[:, k] − hist[:, k+1]``.
    """
    tau, lag = cfg.tau, cfg.time_dist
    d = hist[:, :-1] - hist[:, 1:]                            # d[:, k] = ẋ_{t−k}
    chi = d[:, 1:tau - 1]                                     # s = 2..τ−1  ->  ẋ_{t−s+1}
    v = d[:, 1 + lag:tau - 1 + lag]                           # ẋ_{t−s+1−δ}
    s = xp.arange(2, tau, dtype=xp.int32)
    valid = (s[None, :] < (t - lag)[:, None])[..., None]      # s < min(t−δ, τ)
    mu = xp.where(valid, _apply_model(chi, n_motors, xp), 0.0)
    v = xp.where(valid, v, 0.0)
    return xp.matmul(xp.swapaxes(mu, 1, 2), v)                # Σ_s μ_s v_sᵀ


def normalize_controller(C: Any, cfg: DEPConfig, xp: Any) -> Any:
    """``C_n`` from ``C`` per ``cfg.normalization``, with ``R = C Mᵀ`` (``M = −I``), per world."""
    if cfg.normalization == "none":
        return C
    eps = 10.0 ** (-cfg.regularization)
    k = min(C.shape[-2], C.shape[-1])
    r = C[..., :k]                                            # R = −C[..., :k] (zero-padded); only norms are used
    if cfg.normalization == "global":
        norm = xp.sqrt(xp.sum(r * r, axis=(-2, -1)))
        return C * (cfg.kappa / (norm + eps))[:, None, None]
    factor = cfg.kappa / (xp.linalg.norm(r, axis=-1) + eps)   # (n, M): κ / (‖R_j‖ + ε)
    if cfg.normalization == "independent":
        return C * factor[:, :, None]                         # row j (motor j) scaled
    if C.shape[-2] != C.shape[-1]:
        raise ValueError("normalization 'deprl_columns' needs as many sensors as motors")
    return C * factor[:, None, :]                             # deprl: column k scaled by row k's factor


def update_bias(Cb: Any, y_prev: Any, cfg: DEPConfig, xp: Any) -> Any:
    """``h ← h − clip(bias_rate · y_{t−1}, −0.05, 0.05) − 0.001 h``; ``0`` if ``bias_rate < 0``."""
    if cfg.bias_rate < 0:
        return xp.zeros_like(Cb)
    return Cb - xp.clip(cfg.bias_rate * y_prev, -BIAS_STEP_CLIP, BIAS_STEP_CLIP) - BIAS_LEAK * Cb


def motor_output(C_norm: Any, x_smooth: Any, Cb: Any, cfg: DEPConfig, xp: Any) -> Any:
    """``y = clip(tanh(κ q̂ + h), −1, 1)`` with ``q = C_n x̄`` normalised per ``q_norm_selector``."""
    q = xp.matmul(C_norm, x_smooth[..., None])[..., 0]
    eps = 10.0 ** (-cfg.regularization)
    if cfg.q_norm_selector == "l2":
        q = q / (xp.linalg.norm(q, axis=-1, keepdims=True) + eps)
    elif cfg.q_norm_selector == "max":
        q = q / (xp.max(xp.abs(q), axis=-1, keepdims=True) + eps)
    return xp.clip(xp.tanh(cfg.kappa * q + Cb), -1.0, 1.0)


def dep_step(state: DEPState, sensors: Any, cfg: DEPConfig, xp: Any) -> tuple[DEPState, Any]:
    """One control step of DEP on every world: smooth, learn, act.

    ``sensors`` ``(n, S)``: this step's ``x_t`` (normalised, :func:`normalize_sensors`).
    Returns the new state and the actions ``y_t`` ``(n, M)`` in [−1, 1].
    """
    x = xp.asarray(sensors, dtype=state.hist.dtype)
    prev = state.hist[:, 0]
    if cfg.s4avg > 1:
        x = xp.where((state.t == 0)[:, None], x, prev + (x - prev) / cfg.s4avg)
    hist = xp.concatenate([x[:, None], state.hist[:, :-1]], axis=1)
    C, C_norm, Cb = state.C, state.C_norm, state.Cb
    if cfg.with_learning:
        learn = state.t >= 2 + cfg.time_dist
        C_new = sensorimotor_matrix(hist, state.t, cfg, state.Cb.shape[-1], xp)
        C = xp.where(learn[:, None, None], C_new, C)
        C_norm = xp.where(learn[:, None, None], normalize_controller(C_new, cfg, xp), C_norm)
        Cb = xp.where(learn[:, None], update_bias(Cb, state.y, cfg, xp), Cb)
    y = motor_output(C_norm, x, Cb, cfg, xp)
    t = xp.minimum(state.t + 1, _T_MAX)
    return DEPState(hist=hist, t=t, C=C, C_norm=C_norm, Cb=Cb, y=y), y


def dep_reset(state: DEPState, mask: Any, xp: Any) -> DEPState:
    """``state`` with the worlds where ``mask`` ``(n,)`` is True back at :func:`dep_init`
    (history, counter, matrices, bias, last action); the other worlds are untouched."""
    m = xp.asarray(mask, dtype=bool)

    def clear(a: Any) -> Any:
        return xp.where(xp.reshape(m, m.shape + (1,) * (a.ndim - 1)), xp.zeros_like(a), a)

    return DEPState(*(clear(a) for a in state))


# -- sensors (pure, any xp) ---------------------------------------------------------------------
class SensorRange(NamedTuple):
    """Muscle-length range seen so far per world and muscle, ``(n, S)`` each, metres."""

    lo: Any
    hi: Any


def sensor_range_init(n_worlds: int, n_sensors: int, xp: Any, dtype: Any = None) -> SensorRange:
    """The empty range of deprl: ``l_min = 100``, ``l_max = 0``."""
    f = xp.float32 if dtype is None else dtype
    return SensorRange(lo=xp.full((n_worlds, n_sensors), RANGE_INIT_MIN, dtype=f),
                       hi=xp.full((n_worlds, n_sensors), RANGE_INIT_MAX, dtype=f))


def normalize_sensors(rng: SensorRange, lengths: Any, cfg: DEPConfig, xp: Any) -> tuple[SensorRange, Any]:
    """Update the range with ``lengths`` ``(n, S)`` (metres) and return ``x = 2((l − l_min) /
    (l_max − l_min + length_range_reg) − 0.5)``, about [−1, 1].

    A world whose lengths are not all finite keeps its range (as deprl); its non-finite entries
    read as 0 (the middle of the range) so that DEP's history stays finite."""
    lengths = xp.asarray(lengths, dtype=rng.lo.dtype)
    finite = xp.isfinite(lengths)
    world_ok = xp.all(finite, axis=-1, keepdims=True)
    lo = xp.where(world_ok, xp.minimum(rng.lo, lengths), rng.lo)
    hi = xp.where(world_ok, xp.maximum(rng.hi, lengths), rng.hi)
    x = 2.0 * ((lengths - lo) / (hi - lo + cfg.length_range_reg) - 0.5)
    return SensorRange(lo=lo, hi=hi), xp.where(finite, x, 0.0)


# -- switching between DEP and the policy (pure, any xp) ----------------------------------------
class SwitchState(NamedTuple):
    """Who acts, per world: ``remaining`` ``(n,)`` int32, DEP steps left in the current
    intervention (0: the policy acts); ``episodes`` ``(n,)`` int32, episodes the world finished."""

    remaining: Any
    episodes: Any


def switch_init(n_worlds: int, xp: Any) -> SwitchState:
    """No intervention running (the policy starts, as deprl's ``since_switch = 500``), no episode done."""
    return SwitchState(remaining=xp.zeros((n_worlds,), dtype=xp.int32),
                       episodes=xp.zeros((n_worlds,), dtype=xp.int32))


def dep_free_episode(state: SwitchState, cfg: DEPConfig, xp: Any) -> Any:
    """``(n,)`` bool: the world's current episode is DEP-free (episode index a multiple of
    ``test_episode_every``); all False when ``test_episode_every == 0``."""
    if cfg.test_episode_every == 0:
        return xp.zeros(state.episodes.shape, dtype=bool)
    return state.episodes % cfg.test_episode_every == 0


def switch_step(state: SwitchState, u: Any, steps: Any, cfg: DEPConfig, xp: Any) -> tuple[SwitchState, Any]:
    """Advance the schedule by one control step; returns the new state and ``use_dep`` ``(n,)``.

    ``u`` ``(n,)``: uniform draws in [0, 1), one per world (drawn by the caller every step);
    ``steps``: environment steps taken before this one, summed over all worlds (deprl's
    ``steps``). While ``steps <= pretrain_steps`` DEP acts everywhere. Afterwards, per world:
    in a DEP-free episode the policy acts; during an intervention DEP acts and the intervention
    shortens by one; otherwise the policy acts and, if ``u < intervention_proba``, an
    intervention of ``intervention_length`` DEP steps starts on the next step.
    """
    free = dep_free_episode(state, cfg, xp)
    active = (state.remaining > 0) & ~free
    start = (state.remaining <= 0) & ~free & (u < cfg.intervention_proba)
    after = xp.where(active, state.remaining - 1,
                     xp.where(start, cfg.intervention_length, state.remaining)).astype(xp.int32)
    pre = xp.asarray(steps) <= cfg.pretrain_steps
    use = xp.logical_or(pre, active)
    remaining = xp.where(pre, state.remaining, after)
    return SwitchState(remaining=remaining, episodes=state.episodes), use


def switch_reset(state: SwitchState, mask: Any, xp: Any) -> SwitchState:
    """The worlds where ``mask`` ``(n,)`` is True finished an episode: no intervention runs and
    their episode count goes up by one."""
    m = xp.asarray(mask, dtype=bool)
    return SwitchState(remaining=xp.where(m, 0, state.remaining).astype(xp.int32),
                       episodes=(state.episodes + m.astype(xp.int32)).astype(xp.int32))


# -- host side: a stateful NumPy wrapper for a vector env ---------------------------------------
class DEPExploration:
    """DEP and its schedule for ``n_worlds`` worlds of a (gymnasium-style) vector env, in NumPy.

    DEP has one motor per muscle and one sensor per muscle (its normalised length). Per control
    step, for all worlds::

        x     = dep.sensors(muscle_lengths)     # (n, n_muscles), the env's muscle_length block
        a_dep = dep.act(x)                      # every step: DEP learns while the policy acts too
        use   = dep.use_dep()                   # advances the schedule by one step
        a     = np.where(use[:, None], a_dep, a_policy)
        ...   = env.step(a)
        dep.episode_done(terminated | truncated)

    ``episode_done`` must come before the next episode's first lengths reach ``sensors``/``act``.
    All state (DEP, sensor range, schedule, step counter, random generator) is in
    :meth:`state_dict` for an exact resume.
    """

    def __init__(self, n_worlds: int, n_muscles: int, cfg: DEPConfig = DEPConfig(), seed: int = 0) -> None:
        if not isinstance(cfg, DEPConfig):
            raise ValueError(f"cfg must be a DEPConfig, got {type(cfg).__name__}")
        _int_at_least("DEPExploration", "n_worlds", n_worlds, 1)
        _int_at_least("DEPExploration", "n_muscles", n_muscles, 1)
        self.cfg = cfg
        self.n_worlds = int(n_worlds)
        self.n_muscles = int(n_muscles)
        self.state = dep_init(self.n_worlds, self.n_muscles, self.n_muscles, cfg, np)
        self.range = sensor_range_init(self.n_worlds, self.n_muscles, np)
        self.switch = switch_init(self.n_worlds, np)
        #: Environment steps taken so far, summed over the worlds (one ``use_dep`` call = n_worlds).
        self.total_steps = 0
        self.rng = np.random.Generator(np.random.PCG64(seed))

    def _check(self, name: str, value: Any) -> np.ndarray:
        a: np.ndarray = np.asarray(value)
        if a.shape != (self.n_worlds, self.n_muscles):
            raise ValueError(f"{name} must have shape ({self.n_worlds}, {self.n_muscles}), got {a.shape}")
        return a

    def sensors(self, muscle_lengths: Any) -> np.ndarray:
        """DEP's input ``x`` ``(n, n_muscles)`` from the muscle-tendon lengths (metres, the
        ``muscle_length`` observation block); updates the per-world length range."""
        self.range, x = normalize_sensors(self.range, self._check("muscle_lengths", muscle_lengths), self.cfg, np)
        return np.array(x)

    def act(self, sensors: Any) -> np.ndarray:
        """One DEP step on every world; its actions ``(n, n_muscles)`` in [−1, 1]."""
        self.state, y = dep_step(self.state, self._check("sensors", sensors), self.cfg, np)
        return np.array(y)  # a copy: the state keeps y for the bias update

    def use_dep(self, steps: int | None = None) -> np.ndarray:
        """``(n,)`` bool: True where DEP acts at this step, False where the policy does. Call once
        per control step: it draws this step's random numbers and advances the schedule.
        ``steps``: the environment steps taken so far in all worlds, if the caller counts them
        (default: this object's own count)."""
        if steps is not None:
            self.total_steps = int(steps)
        u = self.rng.random(self.n_worlds)
        self.switch, use = switch_step(self.switch, u, self.total_steps, self.cfg, np)
        self.total_steps += self.n_worlds
        return np.array(use, dtype=bool)

    @property
    def pretraining(self) -> bool:
        """Whether the next step is still in the DEP-only phase (``total_steps <= pretrain_steps``)."""
        return self.total_steps <= self.cfg.pretrain_steps

    @property
    def dep_free(self) -> np.ndarray:
        """``(n,)`` bool: the world's current episode is DEP-free (after the DEP-only phase)."""
        return np.array(dep_free_episode(self.switch, self.cfg, np), dtype=bool)

    def episode_done(self, mask: Any) -> None:
        """The worlds where ``mask`` ``(n,)`` is True ended an episode: clear their DEP history,
        matrices and bias, stop their intervention and count the episode. Their muscle-length
        range is kept."""
        m = np.asarray(mask, dtype=bool)
        if m.shape != (self.n_worlds,):
            raise ValueError(f"mask must have shape ({self.n_worlds},), got {m.shape}")
        self.state = dep_reset(self.state, m, np)
        self.switch = switch_reset(self.switch, m, np)

    def state_dict(self) -> dict[str, Any]:
        """Everything needed to resume exactly: NumPy arrays (copies) and JSON-able values."""
        return {
            "version": STATE_DICT_VERSION,
            "config": dataclasses.asdict(self.cfg),
            "n_worlds": self.n_worlds,
            "n_muscles": self.n_muscles,
            "dep": {k: np.array(v) for k, v in self.state._asdict().items()},
            "sensor_range": {k: np.array(v) for k, v in self.range._asdict().items()},
            "switch": {k: np.array(v) for k, v in self.switch._asdict().items()},
            "total_steps": int(self.total_steps),
            "rng": self.rng.bit_generator.state,
        }

    def load_state_dict(self, d: dict[str, Any]) -> None:
        """Restore :meth:`state_dict` output (arrays may also be nested lists, as after JSON).
        The configuration and sizes must equal this object's."""
        if d.get("version") != STATE_DICT_VERSION:
            raise ValueError(f"DEP state version must be {STATE_DICT_VERSION}, got {d.get('version')!r}")
        mine = dataclasses.asdict(self.cfg)
        diff = sorted(k for k in set(mine) | set(d["config"]) if mine.get(k) != d["config"].get(k))
        if diff:
            raise ValueError(f"DEP state was saved with a different config ({', '.join(diff)})")
        if (d["n_worlds"], d["n_muscles"]) != (self.n_worlds, self.n_muscles):
            raise ValueError(f"DEP state is for ({d['n_worlds']}, {d['n_muscles']}) worlds x muscles, "
                             f"this one for ({self.n_worlds}, {self.n_muscles})")

        def restore(cls: Any, current: Any, saved: dict[str, Any]) -> Any:
            out = {}
            for k, ref in current._asdict().items():
                a = np.array(saved[k], dtype=ref.dtype)
                if a.shape != ref.shape:
                    raise ValueError(f"DEP state field {k} has shape {a.shape}, expected {ref.shape}")
                out[k] = a
            return cls(**out)

        self.state = restore(DEPState, self.state, d["dep"])
        self.range = restore(SensorRange, self.range, d["sensor_range"])
        self.switch = restore(SwitchState, self.switch, d["switch"])
        self.total_steps = int(d["total_steps"])
        if d["rng"].get("bit_generator") != type(self.rng.bit_generator).__name__:
            raise ValueError(f"DEP state's random generator is {d['rng'].get('bit_generator')!r}, expected PCG64")
        self.rng.bit_generator.state = d["rng"]

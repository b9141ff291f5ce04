"""What a muscle-level controller reads of a world, on every backend: the muscles' parameters P, states S
and their rows of the actuator moment matrix M.

* :func:`muscle_priors` — P, ``(muscles, 5)``: the operating range of the normalised fibre length
  (``gainprm[0:2]``), the peak isometric force ``F0`` (``gainprm[2]``) in kN, and the actuator length
  range (``actuator_lengthrange``, m). Fixed per model.
* :func:`muscle_states` — S, ``(muscles, 4)``: actuator length (m), velocity (m/s), force / 1000
  (negative when pulling) and activation, of anything with MuJoCo's ``Data`` field names (an ``MjData``,
  or a batched backend's world through ``physics.fields``), in NumPy or JAX (``xp``).
* :class:`MomentPattern` — M's nonzeros. MuJoCo C and MuJoCo Warp keep ``actuator_moment`` in
  compressed rows (``moment_rownnz/rowadr/colind``) whose pattern the model fixes (which dofs each
  tendon spans); MJX keeps it dense ``(nu, nv)``. A pattern maps either layout to one vector of the
  muscles' nonzeros, in row-major order of ``muscles × nv`` (:attr:`MomentPattern.index`, the flat
  positions), so every backend gives the same numbers in the same places. On MyoFullBody that is 9,788
  of 416 × 128 entries.
"""

from __future__ import annotations

from typing import Any

import mujoco
import numpy as np

N_PRIOR = 5
N_STATE = 4
PRIOR_NAMES = ("range_lo", "range_hi", "f0_kN", "length_lo_m", "length_hi_m")
STATE_NAMES = ("length_m", "velocity_mps", "force_kN", "activation")
#: The field of a batched world that holds the muscles' moment nonzeros (with ``muscle_moments=True``).
MOMENT_FIELD = "muscle_moments"


def muscle_priors(model: mujoco.MjModel, muscle_ids: Any) -> np.ndarray:
    """P: ``(muscles, 5)`` float32 — operating range (2), F0 in kN, actuator length range (2, m)."""
    m = np.asarray(muscle_ids)
    return np.stack([model.actuator_gainprm[m, 0], model.actuator_gainprm[m, 1],
                     model.actuator_gainprm[m, 2] / 1000.0,
                     model.actuator_lengthrange[m, 0], model.actuator_lengthrange[m, 1]], axis=1).astype(np.float32)


def muscle_states(data: Any, muscle_ids: Any, act_adr: Any, xp: Any = np) -> Any:
    """S: ``(muscles, 4)`` float32 — length (m), velocity (m/s), force / 1000, activation."""
    return xp.stack([data.actuator_length[muscle_ids], data.actuator_velocity[muscle_ids],
                     data.actuator_force[muscle_ids] / 1000.0, data.act[act_adr]], axis=1).astype(xp.float32)


def _is_sparse(data: Any) -> bool:
    """MuJoCo >= 3.1 keeps ``actuator_moment`` in compressed rows."""
    return hasattr(data, "moment_colind")


class MomentPattern:
    """Where the muscles' nonzeros of ``actuator_moment`` are, in MuJoCo's compressed rows and densely.

    ``src``: indices into the compressed ``actuator_moment`` (MuJoCo C, MuJoCo Warp); ``dense_src``:
    flat indices into a dense ``(nu, nv)`` matrix (MJX); ``index``: where each nonzero sits in
    ``muscles × nv`` (what a latent model stores as its ``moment_index``).
    """

    def __init__(self, muscle_ids: Any, nv: int, rownnz: np.ndarray | None, rowadr: np.ndarray | None,
                 colind: np.ndarray | None):
        ids = np.asarray(muscle_ids, np.int64)
        self.muscle_ids = ids
        self.n_muscles = int(ids.size)
        self.nv = int(nv)
        if colind is None:  # a dense actuator_moment (older MuJoCo): every entry of the muscles' rows
            cols = [np.arange(self.nv)] * self.n_muscles
            self.src = (ids[:, None] * self.nv + np.arange(self.nv)[None, :]).reshape(-1)
            self.rownnz = self.colind = None
        else:
            assert rownnz is not None and rowadr is not None
            spans = [np.arange(rowadr[m], rowadr[m] + rownnz[m]) for m in ids]
            cols = [np.asarray(colind)[s] for s in spans]
            self.src = np.concatenate(spans).astype(np.int64)
            self.rownnz, self.colind = np.array(rownnz, copy=True), np.array(colind, copy=True)
        self.index = np.concatenate([row * self.nv + c for row, c in enumerate(cols)]).astype(np.int32)
        self.dense_src = np.concatenate([m * self.nv + c for m, c in zip(ids, cols)]).astype(np.int64)

    @property
    def nnz(self) -> int:
        return int(self.index.size)

    @classmethod
    def of_data(cls, model: mujoco.MjModel, data: Any, muscle_ids: Any) -> "MomentPattern":
        """The pattern of ``data`` (an ``MjData`` after a forward pass)."""
        if _is_sparse(data):
            return cls(muscle_ids, model.nv, np.asarray(data.moment_rownnz), np.asarray(data.moment_rowadr),
                       np.asarray(data.moment_colind))
        return cls(muscle_ids, model.nv, None, None, None)

    @classmethod
    def of_model(cls, model: mujoco.MjModel, muscle_ids: Any) -> "MomentPattern":
        """The pattern of ``model`` (read after a forward pass at ``qpos0``; the model fixes it)."""
        data = mujoco.MjData(model)
        mujoco.mj_forward(model, data)
        return cls.of_data(model, data, muscle_ids)

    def same_pattern(self, rownnz: Any, colind: Any) -> bool:
        """Whether compressed rows with this ``rownnz`` and ``colind`` have this pattern."""
        if self.colind is None or self.rownnz is None:
            return True
        return bool(np.array_equal(self.rownnz, rownnz) and np.array_equal(self.colind, colind))

    def check(self, data: Any) -> None:
        """A clear error when ``data``'s pattern is not this one (it must not change during a run)."""
        if _is_sparse(data) and not self.same_pattern(data.moment_rownnz, data.moment_colind):
            raise RuntimeError("the sparsity pattern of actuator_moment changed during the run; "
                               "the moment features assume MuJoCo's fixed, model-given pattern")

    def values(self, data: Any) -> np.ndarray:
        """The muscles' nonzeros of an ``MjData``'s ``actuator_moment``, ``(nnz,)`` float32 (pattern checked)."""
        self.check(data)
        return np.asarray(data.actuator_moment).reshape(-1)[self.src].astype(np.float32)

    def of_compressed(self, values: Any) -> Any:
        """The nonzeros from a compressed ``actuator_moment`` ``(..., nJmom)`` (NumPy or JAX)."""
        return values[..., self.src]

    def of_dense(self, dense: Any) -> Any:
        """The nonzeros from a dense ``actuator_moment`` ``(..., nu, nv)`` (NumPy or JAX)."""
        return dense.reshape(dense.shape[:-2] + (-1,))[..., self.dense_src]


def dense_moments(values: Any, index: Any, n_muscles: int, nv: int, xp: Any) -> Any:
    """M ``(..., muscles, nv)`` from its nonzeros ``values`` ``(..., nnz)`` at flat ``index`` (NumPy or JAX)."""
    lead = values.shape[:-1]
    flat_size = n_muscles * nv
    if xp is np:
        out = np.zeros((*lead, flat_size), dtype=values.dtype)
        out[..., index] = values
    else:
        out = xp.zeros((*lead, flat_size), dtype=values.dtype).at[..., index].set(values)
    return out.reshape(*lead, n_muscles, nv)


# -- MuJoCo's muscle model, vectorised --------------------------------------------------------------
# MuJoCo's muscle (``gaintype``/``biastype``/``dyntype`` = muscle) pulls with
# ``force = gain(l, v) · act + bias(l)`` (both negative: pulling), its activation follows a first-order
# law with activation/deactivation time constants that depend on the activation. The functions below
# are the same curves for all muscles at once, for NumPy or JAX (``xp``); tests/test_control.py checks
# them against ``mujoco.mju_muscleGain``, ``mju_muscleBias`` and ``mju_muscleDynamics``.
_MINVAL = 1e-15


class MuscleParams:
    """The per-muscle constants the curves read, from a compiled model (``gainprm`` for the active
    force, ``biasprm`` for the passive one — MyoFullBody has two muscles whose differ —, ``dynprm``,
    ``actuator_lengthrange``, ``actuator_acc0``). ``force`` is the peak isometric force F0 (N), resolved
    as MuJoCo does when ``prm[2] < 0`` (``scale / acc0``)."""

    def __init__(self, model: mujoco.MjModel, muscle_ids: Any):
        m = np.asarray(muscle_ids, np.int64)
        prm = np.asarray(model.actuator_gainprm[m, :9], np.float64)
        lr = np.asarray(model.actuator_lengthrange[m], np.float64)
        acc0 = np.asarray(model.actuator_acc0[m], np.float64)
        bprm = np.asarray(model.actuator_biasprm[m, :9], np.float64)
        self.range_lo, self.range_hi = prm[:, 0], prm[:, 1]
        self.force = np.where(prm[:, 2] < 0, prm[:, 3] / np.maximum(_MINVAL, acc0), prm[:, 2])
        self.lmin, self.lmax, self.vmax = prm[:, 4], prm[:, 5], prm[:, 6]
        self.fvmax = prm[:, 8]
        self.length_lo = lr[:, 0]
        #: Optimal fibre length L0 expressed in actuator length (m).
        self.l0 = (lr[:, 1] - lr[:, 0]) / np.maximum(_MINVAL, self.range_hi - self.range_lo)
        # The passive curve's own constants (biasprm).
        self.p_range_lo = bprm[:, 0]
        self.p_force = np.where(bprm[:, 2] < 0, bprm[:, 3] / np.maximum(_MINVAL, acc0), bprm[:, 2])
        self.p_lmax, self.fpmax = bprm[:, 5], bprm[:, 7]
        self.p_l0 = (lr[:, 1] - lr[:, 0]) / np.maximum(_MINVAL, bprm[:, 1] - bprm[:, 0])
        dyn = np.asarray(model.actuator_dynprm[m, :3], np.float64)
        self.tau_act, self.tau_deact, self.tau_smooth = dyn[:, 0], dyn[:, 1], dyn[:, 2]
        if np.any(self.tau_smooth > 0):
            raise ValueError("muscles with dynprm[2] > 0 (smoothed time constants) are not supported")


def _length_curve(L, lmin, lmax, xp):
    """MuJoCo's active force-length curve ``FL(L)`` (four half-parabolas, 1 at L = 1, 0 outside [lmin, lmax])."""
    a = 0.5 * (lmin + 1.0)
    b = 0.5 * (1.0 + lmax)
    x1 = (L - lmin) / xp.maximum(_MINVAL, a - lmin)
    x2 = (1.0 - L) / xp.maximum(_MINVAL, 1.0 - a)
    x3 = (L - 1.0) / xp.maximum(_MINVAL, b - 1.0)
    x4 = (lmax - L) / xp.maximum(_MINVAL, lmax - b)
    out = xp.where(L <= a, 0.5 * x1 * x1,
                   xp.where(L <= 1.0, 1.0 - 0.5 * x2 * x2,
                            xp.where(L <= b, 1.0 - 0.5 * x3 * x3, 0.5 * x4 * x4)))
    return xp.where((L < lmin) | (L > lmax), 0.0, out)


def _velocity_curve(V, fvmax, xp):
    """MuJoCo's force-velocity curve ``FV(V)`` (0 below V = −1, fvmax above V = fvmax − 1)."""
    y = fvmax - 1.0
    return xp.where(V <= -1.0, 0.0,
                    xp.where(V <= 0.0, (V + 1.0) ** 2,
                             xp.where(V <= y, fvmax - (y - V) ** 2 / xp.maximum(_MINVAL, y), fvmax)))


def muscle_gain_bias(p: MuscleParams, length: Any, velocity: Any, xp: Any = np) -> tuple[Any, Any]:
    """``(gain, bias)`` per muscle at actuator ``length`` (m) and ``velocity`` (m/s): the actuator force is
    ``gain · act + bias`` (N, negative when pulling), as ``mju_muscleGain`` / ``mju_muscleBias``."""
    L = p.range_lo + (length - p.length_lo) / xp.maximum(_MINVAL, p.l0)
    V = velocity / xp.maximum(_MINVAL, p.l0 * p.vmax)
    gain = -p.force * _length_curve(L, p.lmin, p.lmax, xp) * _velocity_curve(V, p.fvmax, xp)
    L = p.p_range_lo + (length - p.length_lo) / xp.maximum(_MINVAL, p.p_l0)
    b = 0.5 * (1.0 + p.p_lmax)
    x_q = (L - 1.0) / xp.maximum(_MINVAL, b - 1.0)
    x_l = (L - b) / xp.maximum(_MINVAL, b - 1.0)
    passive = xp.where(L <= 1.0, 0.0, xp.where(L <= b, 0.5 * x_q * x_q, 0.5 + x_l))
    return gain, -p.p_force * p.fpmax * passive


def activation_rate(p: MuscleParams, act: Any, ctrl: Any, xp: Any = np) -> Any:
    """``d act / dt`` of MuJoCo's muscle activation dynamics (``mju_muscleDynamics``, no smoothing):
    ``(u − a) / τ`` with ``τ = τ_act (0.5 + 1.5 a)`` when rising, ``τ_deact / (0.5 + 1.5 a)`` when falling."""
    u = xp.clip(ctrl, 0.0, 1.0)
    a = xp.clip(act, 0.0, 1.0)
    tau = xp.where(u - a > 0, p.tau_act * (0.5 + 1.5 * a), p.tau_deact / (0.5 + 1.5 * a))
    return (u - a) / xp.maximum(_MINVAL, tau)


def activation_after(p: MuscleParams, act: Any, ctrl: Any, dt_s: float, n_steps: int, xp: Any = np) -> Any:
    """The activation after ``n_steps`` Euler steps of ``dt_s`` holding excitation ``ctrl`` (what MuJoCo's
    Euler and implicit integrators do to a muscle's activation over one control step)."""
    a = act
    for _ in range(int(n_steps)):
        a = a + dt_s * activation_rate(p, a, ctrl, xp)
    return a


def excitation_for(p: MuscleParams, act: Any, target: Any, dt_s: float, n_steps: int, iterations: int = 30) -> Any:
    """The excitation in [0, 1] whose ``n_steps`` Euler steps take ``act`` closest to ``target`` (NumPy).

    The activation reached is monotone in the excitation, so a bisection per muscle finds it; a target
    outside what one step can reach gives the bound (0 or 1)."""
    act = np.asarray(act, np.float64)
    target = np.asarray(target, np.float64)
    lo = np.zeros_like(act)
    hi = np.ones_like(act)
    for _ in range(iterations):
        mid = 0.5 * (lo + hi)
        above = activation_after(p, act, mid, dt_s, n_steps) > target
        hi = np.where(above, mid, hi)
        lo = np.where(above, lo, mid)
    return 0.5 * (lo + hi)


__all__ = ["MOMENT_FIELD", "MomentPattern", "N_PRIOR", "N_STATE", "PRIOR_NAMES", "STATE_NAMES", "dense_moments",
           "muscle_priors", "muscle_states", "MuscleParams", "muscle_gain_bias", "activation_rate",
           "activation_after", "excitation_for"]

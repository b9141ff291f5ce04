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


__all__ = ["MOMENT_FIELD", "MomentPattern", "N_PRIOR", "N_STATE", "PRIOR_NAMES", "STATE_NAMES", "dense_moments",
           "muscle_priors", "muscle_states"]

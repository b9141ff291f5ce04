"""The formulas of hard-mode latent-action RL (App. A-G, Eqs. 22-28), once, for NumPy and JAX (``xp``).

Every function takes arrays with the muscles on the last axis and any leading
(world, batch) axes, and an array namespace ``xp`` (``numpy`` or
``jax.numpy``); nothing here imports JAX, and every function is usable inside
``jax.jit`` (no Python control flow on array values).

=====================  ======================================================================
function               paper
=====================  ======================================================================
:func:`unit_action`    Eq. 23: ``a01 = (a + 1) / 2`` (then clipped to [0, 1])
:func:`tube_clip`      Eq. 25: ``clip(a01, â − δ, â + δ)`` (then clipped to [0, 1])
:func:`env_action`     Eq. 26: ``a_env = 2 a01_env − 1``
:func:`hard_mode`      Eqs. 23, 25, 26 and 27 together
:func:`deviation`      Eq. 27: ``L_dev = ‖a01_RL − a01_env‖²`` (mean over muscles, see below)
:class:`PenaltySchedule`  Eq. 28's decaying ``λ_t``
:func:`penalized_reward`  Eq. 28: ``R' = R − λ_t L_dev``
:func:`bc_loss`        Eq. 22 (mean over muscles, see below)
=====================  ======================================================================

Choices where the paper is silent, from the authors' code (facts only):
``deprl_middleware_22tasks/deprl_middleware_22tasks/wrapper.py``
@ 740316b00ca6823ab62d4dda792862a23c045afd and ``.../registry.py`` @ the same
commit (and ``rl_paradigms/deprl_middleware_22tasks/deprl_middleware_22tasks/registry.py``
@ d7a289173d4b9301b23c74d00a59cf39233aa06a):

* the RL action is clipped to [0, 1] after Eq. 23, and the tube-clipped action
  once more to [0, 1] (a prior near 0 or 1 would otherwise let ``â ± δ`` leave
  the activation range);
* ``L_dev`` is the *mean* of the squared violation over the muscles (the
  paper's ``‖·‖²`` is their sum, 416 times larger on MyoFullBody); the
  coefficient is ``λ_t = 5 · max(0.01, 1 − t / 2e6)``;
* the tube radius defaults to 0.25 (:data:`DEFAULT_TUBE`);
* the behaviour-cloning loss is the mean over muscles and samples of the
  squared error against ``(A + 1) / 2`` (PyTorch's ``MSELoss``), Eq. 22
  divided by the number of muscles — the same minimiser.

One deviation from that code: its ``t`` is the wrapper's step counter, which
restarts at every episode reset (so with 1,000-step episodes ``λ_t`` never
falls below 4.997); the paper says ``λ_t`` decays as training progresses, so
here ``t`` counts training transitions over all worlds (as DynSyn's schedule
does, :mod:`mskbench.agents.dynsyn`) and survives a resume.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

#: The tube radius δ of the authors' hard mode (``tube_radius``; 0.10 is their ``primate_bimanual`` lower body).
DEFAULT_TUBE = 0.25
#: λ_t = PENALTY_SCALE · max(PENALTY_FLOOR, 1 − t / DECAY_STEPS) (the authors' ``penalty_scale``,
#: ``decay_steps`` and floor).
PENALTY_SCALE = 5.0
DECAY_STEPS = 2_000_000
PENALTY_FLOOR = 0.01
#: The latent sizes of Fig. 4 (the authors' config generator accepts exactly these).
LATENT_SIZES = (16, 32, 64, 128)


# -- Eqs. 23, 25, 26 ---------------------------------------------------------------------------------
def unit_action(actions: Any, xp: Any) -> Any:
    """Eq. 23: a policy action in [−1, 1] as a muscle activation in [0, 1] (clipped to it)."""
    return xp.clip((actions + 1.0) / 2.0, 0.0, 1.0)


def tube_clip(a01: Any, prior01: Any, delta: Any, xp: Any) -> Any:
    """Eq. 25: ``a01`` clipped into the tube of radius ``delta`` around the prior ``â`` (then to [0, 1])."""
    return xp.clip(xp.clip(a01, prior01 - delta, prior01 + delta), 0.0, 1.0)


def env_action(a01: Any, xp: Any) -> Any:
    """Eq. 26: an activation in [0, 1] back to the environment's action range [−1, 1]."""
    return xp.clip(2.0 * a01 - 1.0, -1.0, 1.0)


def deviation(a01: Any, safe01: Any, xp: Any) -> Any:
    """Eq. 27: the squared violation of the tube, averaged over the muscles (last axis)."""
    return xp.mean((a01 - safe01) ** 2, axis=-1)


def hard_mode(actions: Any, prior01: Any, delta: Any, xp: Any) -> tuple[Any, Any]:
    """Eqs. 23, 25-27: ``(env actions in [−1, 1], L_dev)`` of policy ``actions`` and the decoded prior.

    ``prior01`` is the decoder's ``â`` (Eq. 24) in [0, 1], same shape as
    ``actions``; ``delta`` the tube radius (a scalar, traced or not).
    """
    a01 = unit_action(actions, xp)
    safe = tube_clip(a01, prior01, delta, xp)
    return env_action(safe, xp), deviation(a01, safe, xp)


# -- Eq. 28 ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class PenaltySchedule:
    """Eq. 28's decaying coefficient: ``λ_t = scale · max(floor, 1 − t / decay_steps)``.

    ``t`` counts training transitions over all worlds. ``scale = 0`` turns the
    deviation penalty off (the tube still clips).
    """

    scale: float = PENALTY_SCALE
    decay_steps: int = DECAY_STEPS
    floor: float = PENALTY_FLOOR

    def __post_init__(self) -> None:
        if not (math.isfinite(self.scale) and self.scale >= 0):
            raise ValueError(f"the penalty scale must be a finite number >= 0, got {self.scale!r}")
        if not self.decay_steps >= 1:
            raise ValueError(f"decay_steps must be >= 1, got {self.decay_steps!r}")
        if not 0.0 <= self.floor <= 1.0:
            raise ValueError(f"the penalty floor must be in [0, 1], got {self.floor!r}")

    def __call__(self, step: Any, xp: Any = np) -> Any:
        """``λ_t`` after ``step`` transitions (a number with NumPy, an array with ``jax.numpy``)."""
        return self.scale * xp.maximum(self.floor, 1.0 - step / self.decay_steps)

    def as_dict(self) -> dict[str, Any]:
        return {"scale": self.scale, "decay_steps": self.decay_steps, "floor": self.floor}


def penalized_reward(reward: Any, dev: Any, lam: Any) -> Any:
    """Eq. 28: ``R' = R − λ_t L_dev``."""
    return reward - lam * dev


# -- Eq. 22 and the reconstruction statistics ----------------------------------------------------------
def bc_loss(reconstructed01: Any, actions: Any, xp: Any) -> Any:
    """Eq. 22 per muscle: ``mean((Â − (A + 1) / 2)²)`` over samples and muscles."""
    return xp.mean((reconstructed01 - (actions + 1.0) / 2.0) ** 2)


def reconstruction_stats(target01: np.ndarray, predicted01: np.ndarray, *, eps: float = 1e-12) -> dict[str, float]:
    """How well ``predicted01`` reconstructs ``target01`` (both ``(samples, muscles)``, in [0, 1]).

    * ``mse``: Eq. 22 per muscle (mean squared error); ``rmse`` its root;
    * ``explained_variance``: ``1 − Σ_j Var(y_j − ŷ_j) / Σ_j Var(y_j)`` (variances over samples,
      summed over muscles: the share of the actions' total variance the reconstruction accounts for,
      a bias-free error not counted against it);
    * ``r2``: ``1 − Σ (y − ŷ)² / Σ (y − ȳ_j)²`` (the same with the bias counted);
    * ``explained_variance_per_muscle``: the mean over muscles of ``1 − Var(y_j − ŷ_j) / Var(y_j)``
      (muscles whose target varies by less than ``eps`` left out; ``muscles_varying`` counts the rest);
    * ``target_variance``: ``Σ_j Var(y_j)`` (how much there is to explain).
    """
    y = np.asarray(target01, np.float64)
    p = np.asarray(predicted01, np.float64)
    if y.shape != p.shape or y.ndim != 2:
        raise ValueError(f"target and prediction must be (samples, muscles) arrays of one shape, got {y.shape} "
                         f"and {p.shape}")
    if y.shape[0] < 2:
        raise ValueError("reconstruction statistics need at least 2 samples")
    r = y - p
    var_y = y.var(axis=0)
    var_r = r.var(axis=0)
    total = float(var_y.sum())
    ss_tot = float(((y - y.mean(axis=0)) ** 2).sum())
    varying = var_y > eps
    mse = float((r ** 2).mean())
    return {
        "mse": mse,
        "rmse": math.sqrt(mse),
        "explained_variance": float(1.0 - var_r.sum() / total) if total > eps else float("nan"),
        "r2": float(1.0 - (r ** 2).sum() / ss_tot) if ss_tot > eps else float("nan"),
        "explained_variance_per_muscle": float(np.mean(1.0 - var_r[varying] / var_y[varying]))
        if varying.any() else float("nan"),
        "muscles_varying": int(varying.sum()),
        "target_variance": total,
    }


def pca_reconstruction(train01: np.ndarray, test01: np.ndarray, k: int) -> np.ndarray:
    """``test01`` reconstructed from its projection on the top ``k`` principal components of ``train01``
    (centred on the training mean): the best *linear* code of size ``k``, a reference for the encoder's."""
    x = np.asarray(train01, np.float64)
    mean = x.mean(axis=0)
    _, _, vt = np.linalg.svd(x - mean, full_matrices=False)
    basis = vt[: max(0, int(k))]
    centred = np.asarray(test01, np.float64) - mean
    return mean + (centred @ basis.T) @ basis


__all__ = ["DECAY_STEPS", "DEFAULT_TUBE", "LATENT_SIZES", "PENALTY_FLOOR", "PENALTY_SCALE", "PenaltySchedule",
           "bc_loss", "deviation", "env_action", "hard_mode", "pca_reconstruction", "penalized_reward",
           "reconstruction_stats", "tube_clip", "unit_action"]

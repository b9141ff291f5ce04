"""STAC-style registration of raw 3D keypoints onto the mouse forelimb model.

Given keypoints ``(T, 3, 3)`` in metres (Shoulder, Elbow, Wrist in the model's
``ground`` frame), find joint angles ``qpos (T, 4)`` and marker offsets
``(3, 3)`` (one per keypoint, in its body's frame) such that
``x_body(q_t) + R_body(q_t) @ offset_k`` matches the keypoints. As in STAC
(Wu et al. 2013; the Track-MJX pipeline that produced the published clips),
two steps alternate for ``n_iters`` rounds, then a final pose pass runs:

(a) **pose**: per-frame inverse kinematics, a bounded nonlinear least-squares
    problem (:func:`scipy.optimize.least_squares`, trust-region reflective)
    over the 4 joint angles inside the model's joint ranges, residuals in mm,
    analytic Jacobian from ``mj_jac``; each frame is warm-started from the
    previous one, and the first frame from a few starts spread over the ranges;
(b) **offsets**: with the poses fixed the markers are linear in the offsets,
    ``R_t o_k = p_tk - x_t``, solved in closed form
    ``o_k = (sum_t R_t^T (p_tk - x_t) + lambda o_k^0) / (T + lambda)``
    (``offset_reg`` = lambda pulls towards the initial offsets; 0 = STAC's
    ``M_REG_COEF: 0`` setting used for the published clips).

With ``fit_offsets=False`` only (a) runs, with the given (or zero) offsets.

Identifiability. With free offsets the problem has an exact symmetry: the
Elbow and Wrist markers both ride on the ulna, whose frame the elbow hinge
rotates, so adding a constant ``delta`` to ``elbow_joint`` in every frame and
rotating the two ulna-frame offsets (Elbow offset, and wrist_body position +
Wrist offset) by ``-delta`` about the hinge axis leaves every marker where it
was. The shoulder angles are only weakly determined too. So when offsets are
fitted, the keypoint error is the meaningful measure; joint angles agree with
the truth only up to this near-degenerate family (on a synthetic 100-frame clip
with 0.02 mm noise: keypoint error at the noise floor, joint angles within
~0.1 rad). With known offsets (``fit_offsets=False``) joint angles are
recovered to a few milliradians. ``offset_reg > 0`` selects the member of the
family closest to the initial offsets.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np
from scipy.optimize import least_squares

from mskbench.body.mouse_forelimb import (
    JOINT_NAMES,
    KEYPOINT_NAMES,
    MouseHandles,
    build_mouse_model,
)

_NK = len(KEYPOINT_NAMES)
_NJ = len(JOINT_NAMES)


@dataclass
class RegistrationResult:
    """Output of :func:`register`.

    ``qpos`` (T, 4) rad; ``offsets`` (3, 3) m; ``keypoint_error_mm`` (T, 3):
    Euclidean distance between each model marker and its keypoint, in mm;
    ``cost_history``: mean keypoint error (mm) after each pose pass.
    """

    qpos: np.ndarray
    offsets: np.ndarray
    keypoint_error_mm: np.ndarray
    markers: np.ndarray  # (T, 3, 3) m, model markers at the solution
    cost_history: list[float]

    @property
    def mean_keypoint_error_mm(self) -> float:
        return float(np.mean(self.keypoint_error_mm))


class _Kinematics:
    """Markers and their Jacobian w.r.t. the 4 joint angles (residuals in mm)."""

    def __init__(self, model: mujoco.MjModel) -> None:
        self.model = model
        self.data = mujoco.MjData(model)
        self.h = MouseHandles.from_model(model)
        self._jacp = np.zeros((3, model.nv))
        lo, hi = self.h.joint_range[:, 0], self.h.joint_range[:, 1]
        self.lo, self.hi = lo.copy(), hi.copy()

    def pose(self, q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Body positions (3, 3) and rotations (3, 3, 3) of the keypoint bodies."""
        self.data.qpos[self.h.qpos_adr] = q
        mujoco.mj_kinematics(self.model, self.data)
        ids = self.h.keypoint_body_ids
        return self.data.xpos[ids].copy(), self.data.xmat[ids].reshape(-1, 3, 3).copy()

    def markers(self, q: np.ndarray, offsets: np.ndarray) -> np.ndarray:
        x, rot = self.pose(q)
        return x + np.einsum("kij,kj->ki", rot, offsets)

    def residual(self, q: np.ndarray, offsets: np.ndarray, target: np.ndarray) -> np.ndarray:
        return 1e3 * (self.markers(q, offsets) - target).ravel()

    def jacobian(self, q: np.ndarray, offsets: np.ndarray, target: np.ndarray) -> np.ndarray:
        m = self.markers(q, offsets)
        mujoco.mj_comPos(self.model, self.data)
        jac = np.empty((3 * _NK, _NJ))
        for k, body in enumerate(self.h.keypoint_body_ids):
            mujoco.mj_jac(self.model, self.data, self._jacp, None, m[k], int(body))
            jac[3 * k : 3 * k + 3] = self._jacp[:, self.h.dof_adr]
        return 1e3 * jac

    def inside(self, q: np.ndarray) -> np.ndarray:
        margin = 1e-9 * (self.hi - self.lo)
        return np.clip(q, self.lo + margin, self.hi - margin)

    def solve(self, q0: np.ndarray, offsets: np.ndarray, target: np.ndarray, ftol: float) -> np.ndarray:
        res = least_squares(
            self.residual,
            self.inside(q0),
            jac=self.jacobian,
            bounds=(self.lo, self.hi),
            args=(offsets, target),
            method="trf",
            ftol=ftol,
            xtol=1e-10,
            gtol=1e-10,
            max_nfev=100,
        )
        return res.x


def _initial_guesses(kin: _Kinematics, n: int, rng: np.random.Generator) -> np.ndarray:
    mid = 0.5 * (kin.lo + kin.hi)
    return np.vstack([mid, rng.uniform(kin.lo, kin.hi, size=(max(n - 1, 0), _NJ))])


def register(
    keypoints,
    model: mujoco.MjModel | None = None,
    offsets=None,
    fit_offsets: bool = True,
    n_iters: int = 6,
    offset_reg: float = 0.0,
    q_init=None,
    n_starts: int = 8,
    ftol: float = 1e-8,
    seed: int = 0,
) -> RegistrationResult:
    """Register keypoints ``(T, 3, 3)`` (m) to joint angles and marker offsets.

    ``model`` defaults to :func:`build_mouse_model`. ``offsets`` (3, 3) m are
    the initial (or, with ``fit_offsets=False``, fixed) offsets, zeros if None.
    ``n_iters`` rounds of (pose pass, offset fit) are followed by a final pose
    pass. ``q_init`` (4,) seeds the first frame (otherwise ``n_starts`` starts:
    the middle of the ranges plus seeded random ones). Deterministic for a
    given ``seed``. A 100-frame clip takes about a second on one CPU core.
    """
    kp = np.asarray(keypoints, dtype=float)
    if kp.ndim != 3 or kp.shape[1:] != (_NK, 3) or kp.shape[0] < 1:
        raise ValueError(
            f"keypoints must have shape (T, 3, 3) (T >= 1, keypoints {KEYPOINT_NAMES} x xyz), got {kp.shape}"
        )
    if not np.all(np.isfinite(kp)):
        raise ValueError("keypoints must be finite (interpolate or drop frames with missing keypoints first)")
    if n_iters < 0:
        raise ValueError(f"n_iters must be >= 0, got {n_iters}")
    if offset_reg < 0:
        raise ValueError(f"offset_reg must be >= 0, got {offset_reg}")
    model = model if model is not None else build_mouse_model()
    kin = _Kinematics(model)
    off0 = np.zeros((_NK, 3)) if offsets is None else np.asarray(offsets, dtype=float).copy()
    if off0.shape != (_NK, 3):
        raise ValueError(f"offsets must have shape (3, 3), got {off0.shape}")
    rng = np.random.default_rng(seed)
    T = kp.shape[0]
    qpos = np.zeros((T, _NJ))
    off = off0.copy()
    history: list[float] = []

    def first_frame_start(previous: np.ndarray | None) -> np.ndarray:
        starts = [] if q_init is None else [np.asarray(q_init, dtype=float)]
        if previous is not None:
            starts.append(previous)
        if q_init is None:
            starts.extend(_initial_guesses(kin, n_starts, rng))
        best, best_cost = None, np.inf
        for s in starts:
            q = kin.solve(s, off, kp[0], ftol)
            c = float(np.sum(kin.residual(q, off, kp[0]) ** 2))
            if c < best_cost:
                best, best_cost = q, c
        if best is None:
            raise RuntimeError(f"frame 0: none of the {len(starts)} start poses gives a finite keypoint cost")
        return best

    def pose_pass(previous: np.ndarray | None) -> None:
        q = first_frame_start(None if previous is None else previous[0])
        qpos[0] = q
        for t in range(1, T):
            q = kin.solve(qpos[t - 1], off, kp[t], ftol)
            if previous is not None:
                # Keep the previous round's solution when it is still better (avoids drifting into a worse basin).
                alt = kin.solve(previous[t], off, kp[t], ftol)
                if np.sum(kin.residual(alt, off, kp[t]) ** 2) < np.sum(kin.residual(q, off, kp[t]) ** 2):
                    q = alt
            qpos[t] = q
        history.append(_mean_error_mm(kin, qpos, off, kp))

    pose_pass(None)
    if fit_offsets:
        for _ in range(n_iters):
            off = _fit_offsets(kin, qpos, kp, off0, offset_reg)
            pose_pass(qpos.copy())
    markers = np.stack([kin.markers(q, off) for q in qpos])
    err = 1e3 * np.linalg.norm(markers - kp, axis=-1)
    return RegistrationResult(qpos=qpos, offsets=off, keypoint_error_mm=err, markers=markers, cost_history=history)


def _mean_error_mm(kin: _Kinematics, qpos: np.ndarray, off: np.ndarray, kp: np.ndarray) -> float:
    markers = np.stack([kin.markers(q, off) for q in qpos])
    return float(1e3 * np.mean(np.linalg.norm(markers - kp, axis=-1)))


def _fit_offsets(kin: _Kinematics, qpos: np.ndarray, kp: np.ndarray, off0: np.ndarray, reg: float) -> np.ndarray:
    """Closed-form least-squares offsets for fixed poses (rotations are orthonormal)."""
    acc = reg * off0.copy()
    for q, p in zip(qpos, kp):
        x, rot = kin.pose(q)
        acc += np.einsum("kji,kj->ki", rot, p - x)
    return acc / (len(qpos) + reg)

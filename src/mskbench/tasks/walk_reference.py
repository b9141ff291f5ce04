"""A synthetic walking reference: joint angles as periodic functions of gait phase.

The paper's Walk task tracks ``q_ref`` and starts from states "sampled from
synthetic walk" without publishing the reference. Ours is built from
textbook sagittal-plane gait curves (hip flexion, knee flexion, ankle
dorsiflexion over one stride, right heel strike at phase 0; the left leg is
the same curve half a stride later), interpolated by periodic cubic splines
through the knots below, with every other joint at the neutral pose and the
joint couplings resolved sample by sample. Arms are not swung.

The reference is tabulated at ``n_samples`` phases per stride; at step time it
is read by linear interpolation with the array namespace ``xp`` (NumPy or JAX).
Walk and Stairs start episodes from it (:meth:`WalkReference.state_at`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import mujoco
import numpy as np
from scipy.interpolate import CubicSpline

from mskbench.body.base import BodyHandles

if TYPE_CHECKING:
    from mskbench.tasks.base import InitContext

#: Knots (stride fraction, angle in rad) for the right leg; OpenSim signs:
#: hip and knee flexion positive, ankle dorsiflexion positive.
GAIT_KNOTS = {
    "hip_flexion": [(0.00, 0.40), (0.15, 0.30), (0.35, 0.05), (0.52, -0.17), (0.62, -0.05),
                    (0.75, 0.35), (0.87, 0.45)],
    "knee_angle": [(0.00, 0.08), (0.13, 0.32), (0.30, 0.12), (0.42, 0.08), (0.58, 0.55),
                   (0.72, 1.10), (0.85, 0.55), (0.95, 0.08)],
    "ankle_angle": [(0.00, 0.00), (0.08, -0.10), (0.30, 0.10), (0.45, 0.17), (0.62, -0.30),
                    (0.72, -0.10), (0.85, 0.05)],
}


def _periodic_spline(knots: list[tuple[float, float]]) -> CubicSpline:
    x = np.array([k[0] for k in knots] + [1.0])
    y = np.array([k[1] for k in knots] + [knots[0][1]])
    return CubicSpline(x, y, bc_type="periodic")


@dataclass(frozen=True)
class WalkReference:
    """Tabulated reference ``q_ref(φ)`` and ``q̇_ref(φ)`` for the non-root joints.

    ``q_table`` is (n_samples, n_joints) in the order of ``BodyHandles.joint_qpos``;
    ``qdot_table`` is (n_samples, n_joints) in the order of ``joint_dof``, in rad/s
    for a stride of ``period_s`` seconds.
    """

    period_s: float
    speed_mps: float
    q_table: np.ndarray
    qdot_table: np.ndarray

    @classmethod
    def build(cls, model: mujoco.MjModel, handles: BodyHandles, default_qpos: np.ndarray,
              period_s: float = 1.1, speed_mps: float = 1.2, n_samples: int = 200) -> "WalkReference":
        q_table, qdot_table = gait_tables(model, handles, default_qpos, GAIT_KNOTS, period_s, n_samples)
        return cls(period_s, speed_mps, q_table, qdot_table)

    @property
    def n_samples(self) -> int:
        return self.q_table.shape[0]

    def lookup(self, table: np.ndarray, phase, xp=np):
        """Linear interpolation of ``table`` rows at ``phase`` ∈ [0, 1)."""
        n = table.shape[0]
        x = (phase % 1.0) * n
        i0 = xp.floor(x)
        frac = x - i0
        i0 = i0.astype(int) % n if hasattr(i0, "astype") else int(i0) % n
        i1 = (i0 + 1) % n
        t = xp.asarray(table)
        return t[i0] * (1.0 - frac) + t[i1] * frac

    def q_ref(self, phase, xp=np):
        return self.lookup(self.q_table, phase, xp)

    def qdot_ref(self, phase, xp=np):
        return self.lookup(self.qdot_table, phase, xp)

    def state_at(self, ctx: InitContext, phase: float, speed_mps: float) -> tuple[np.ndarray, np.ndarray]:
        """``(qpos, qvel)`` of a reference start (host): the pose and joint velocities at ``phase``
        (other coordinates neutral), lowered onto the floor, the root moving forward (+x) at ``speed_mps``."""
        base = ctx.default_qpos.copy()
        base[ctx.handles.joint_qpos] = self.q_ref(phase)
        qpos = ctx.pose(base=base)
        qvel = np.zeros(ctx.model.nv)
        qvel[ctx.handles.joint_dof] = self.qdot_ref(phase)
        qvel[0] = speed_mps
        return qpos, qvel


def gait_tables(model: mujoco.MjModel, handles: BodyHandles, default_qpos: np.ndarray,
                knots: dict[str, list[tuple[float, float]]], period_s: float,
                n_samples: int = 200) -> tuple[np.ndarray, np.ndarray]:
    """``(q_table, qdot_table)`` of a gait given by sagittal knots (:meth:`WalkReference.build` tabulates
    :data:`GAIT_KNOTS` with it): ``knots`` maps a joint's base name (``hip_flexion``, ...) to its
    right-leg knots (stride fraction, rad), the left leg runs the same curve half a stride later,
    every other joint stays at ``default_qpos``, the couplings are resolved sample by sample, and
    ``qdot`` is the spline's derivative for a stride of ``period_s`` seconds."""
    if period_s <= 0 or n_samples < 8:
        raise ValueError(f"period_s must be > 0 and n_samples >= 8, got {period_s}, {n_samples}")
    splines = {k: _periodic_spline(v) for k, v in knots.items()}
    adr = {}
    for side, shift in (("r", 0.0), ("l", 0.5)):
        for joint in knots:
            jid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, f"{joint}_{side}")
            if jid < 0:
                raise ValueError(f"the model has no joint {joint}_{side}")
            adr[(joint, side)] = (int(model.jnt_qposadr[jid]), int(model.jnt_dofadr[jid]), shift)
    q_rows, qd_rows = [], []
    for phi in np.arange(n_samples) / n_samples:
        qpos = default_qpos.copy()
        qvel = np.zeros(model.nv)
        for (joint, _side), (qa, da, shift) in adr.items():
            p = (phi + shift) % 1.0
            qpos[qa] = splines[joint](p)
            qvel[da] = splines[joint](p, 1) / period_s
        handles.couplings.apply(qpos, handles.qvel_of_qpos, qvel)
        q_rows.append(qpos[handles.joint_qpos])
        qd_rows.append(qvel[handles.joint_dof])
    return np.array(q_rows), np.array(qd_rows)

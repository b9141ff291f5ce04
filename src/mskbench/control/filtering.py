"""The expert's state estimate under observation noise: its own prediction blended with what it observes.

The protocol's observation noise (Eq. 5) adds ``N(0, σ²)`` to every entry of the observation the expert reads
its body from: joint angles, velocities, activations. The QP is very sensitive to joint angles (on Stand, a
few thousandths of a radian of noise on every joint angle end an episode within 2 s), mostly because the joint
couplings' dependent joints then no longer sit on their couplings and MuJoCo's equality rows ask for large
corrections. So each control step:

* **How noisy is the observation?** ``σ̂``: the observation carries each muscle's length twice over — as the
  length itself and through the joint angles (MuJoCo's actuator length at the observed pose). On a clean
  observation the two agree to the length the muscle moves in one physics substep (the observation's lengths
  are computed before the step's last substep; its angles after); with noise, they differ by about ``σ``:
  ``σ̂ = 1.4826 · median |L_obs + V_obs·Δt_sub − L(q_obs)|`` over the muscles. Action noise and a dynamics
  perturbation leave the two consistent.
* Below ``threshold`` (a clean observation) the observation is used as it is: the expert acts bit for bit as
  without this filter.
* Above it, the state the expert plans from is a blend, per quantity, of a prediction and the observation,
  with the gain of a scalar Kalman filter for a random walk whose step is the prediction's error
  (``process``) and whose measurement noise is ``σ̂`` (:func:`kalman_step`), the variance carried from step
  to step. The predictions: joint angles moved by the mean of the observed velocities before and after the
  step (unbiased; the accelerations the QP planned are not what the body does closely enough); velocities
  moved on by the planned accelerations; activations under the excitations sent (MuJoCo's own activation
  dynamics). Joint angles are blended in MuJoCo's tangent space (the root's quaternion too); the dependent
  joints are then put back on their couplings. The filter starts from a state known exactly
  (:meth:`ObservationFilter.start`: the expert's start, read at its reset).
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from mskbench.sim.muscles import MuscleParams, activation_after


def kalman_step(variance: float, process_std: float, noise_std: float) -> tuple[float, float]:
    """One step of a scalar Kalman filter on a random walk: ``(gain, posterior variance)`` from the last
    posterior ``variance``, the step's process noise ``process_std`` and the measurement noise ``noise_std``.
    The gain is 1 when the measurement is exact; from a first estimate that is one measurement
    (``variance = noise_std²``) it falls as measurements average, to the steady state
    ``P/(P + R)``, ``P = (Q + √(Q² + 4QR))/2``."""
    prior = variance + process_std**2
    r = noise_std**2
    if r <= 0.0:
        return 1.0, 0.0
    gain = prior / (prior + r)
    return float(gain), float((1.0 - gain) * prior)


@dataclass
class Process:
    """The prediction's error per control step: joint angles (rad, m), velocities (rad/s, m/s), activations."""

    position: float = 1e-4
    velocity: float = 0.1
    activation: float = 1e-3


class ObservationFilter:
    """The state estimate for one body (module docstring). ``model``: the controller's model; ``nq_body``,
    ``nv_body``: the body's share of ``qpos``/``qvel`` (props come after it and are not filtered);
    ``muscles``: the nominal muscle parameters, ``act_adr`` where their activations are in ``act``;
    ``frame_skip``: physics substeps per control step."""

    #: Noise levels below this count as a clean observation (the smallest protocol scale is 0.02).
    threshold = 2e-3

    def __init__(self, model: mujoco.MjModel, nq_body: int, nv_body: int, couplings, muscles: MuscleParams,
                 act_adr: np.ndarray, frame_skip: int, process: Process | None = None):
        self.m = model
        self.act_adr = np.asarray(act_adr)
        self.nq_body, self.nv_body = int(nq_body), int(nv_body)
        self.couplings = couplings
        self.muscles = muscles
        self.substep_s = float(model.opt.timestep)
        self.nsub = int(frame_skip)
        self.dt = self.substep_s * self.nsub
        self.process = process or Process()
        self.qvel_map = np.full(model.nq, -1)
        for j in range(model.njnt):
            if int(model.jnt_type[j]) in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)):
                self.qvel_map[model.jnt_qposadr[j]] = model.jnt_dofadr[j]
        self.reset()

    def reset(self) -> None:
        #: The last estimate (qpos, qvel, activations) and the step planned from it, or None.
        self._last: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
        self._plan: tuple[np.ndarray, np.ndarray] | None = None
        self.sigma = 0.0
        #: Each block's estimate variance (angles, velocities, activations).
        self._var = np.zeros(3)

    def start(self, qpos: np.ndarray, qvel: np.ndarray, act: np.ndarray) -> None:
        """Begin from a state known exactly (the episode's start, which the expert reads at its reset)."""
        self.reset()
        self._last = (qpos.copy(), qvel.copy(), act.copy())
        self._v_obs = qvel.copy()

    def noise_level(self, length_obs: np.ndarray, velocity_obs: np.ndarray, length_at_pose: np.ndarray) -> float:
        """``σ̂`` from the muscles' observed lengths against their lengths at the observed pose (m)."""
        gap = np.asarray(length_obs, float) + self.substep_s * np.asarray(velocity_obs, float) - length_at_pose
        return float(1.4826 * np.median(np.abs(gap)))

    def planned(self, qacc: np.ndarray, excitation: np.ndarray) -> None:
        """What the controller did from the last estimate: the accelerations it planned (nv) and the
        excitations it sent (per muscle)."""
        self._plan = (np.asarray(qacc, float).copy(), np.asarray(excitation, float).copy())

    def estimate(self, qpos: np.ndarray, qvel: np.ndarray, act: np.ndarray,
                 sigma: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The state to plan from, given the observed one and its noise level ``sigma``; the arrays passed in
        are not changed."""
        self.sigma = float(sigma)
        if sigma < self.threshold or self._last is None:
            out = (qpos.copy(), qvel.copy(), act.copy())
            if sigma >= self.threshold:
                self.couplings.apply(out[0], self.qvel_map, out[1])
            self._last = out
            self._v_obs = qvel.copy()
            self._var[:] = sigma**2  # the first estimate is one observation
            return out[0].copy(), out[1].copy(), out[2].copy()
        q0, v0, a0 = self._last
        qacc, u = self._plan if self._plan is not None else (np.zeros(self.m.nv), a0[self.act_adr])
        nq, nv, p = self.nq_body, self.nv_body, self.process
        # the prediction: the velocities one control step on under the plan; the angles moved by the mean of
        # the observed velocities before and after the step (unbiased, unlike the estimate of the velocity)
        v_pred = v0 + self.dt * qacc
        q_pred = q0.copy()
        mujoco.mj_integratePos(self.m, q_pred, 0.5 * (self._v_obs + qvel), self.dt)
        a_pred = activation_after(self.muscles, a0[self.act_adr], u, self.substep_s, self.nsub)
        # the blend: the body's coordinates (props and the unobserved root x, y as observed)
        dq = np.zeros(self.m.nv)
        mujoco.mj_differentiatePos(self.m, dq, 1.0, q_pred, qpos)
        kq = np.ones(self.m.nv)
        gains = []
        for i, proc in enumerate((float(np.hypot(p.position, self.dt * sigma)), p.velocity, p.activation)):
            g, self._var[i] = kalman_step(float(self._var[i]), proc, sigma)
            gains.append(g)
        kq[:nv] = gains[0]
        q = q_pred.copy()
        mujoco.mj_integratePos(self.m, q, kq * dq, 1.0)
        q[nq:] = qpos[nq:]
        q[0:2] = qpos[0:2]
        v = qvel.copy()
        v[:nv] = v_pred[:nv] + gains[1] * (qvel[:nv] - v_pred[:nv])
        a = act.copy()
        a[self.act_adr] = np.clip(a_pred + gains[2] * (act[self.act_adr] - a_pred), 0.0, 1.0)
        self.couplings.apply(q, self.qvel_map, v)
        self._last = (q, v, a)
        self._v_obs = qvel.copy()
        return q.copy(), v.copy(), a.copy()


__all__ = ["ObservationFilter", "Process", "kalman_step"]

"""Each muscle's strength, estimated from the forces the observation carries.

A dynamics perturbation (Eq. 6) scales every muscle's peak force ``F0`` — its active and its passive
force — by its own factor for the episode, and the controller is not told. The observation carries each
muscle's force (normalised by the nominal ``F0``), its length, velocity and activation, so the factor can
be read off: the nominal model's force at the observed length, velocity and activation, ``F_nom``, against
the observed force ``f``; per muscle, the least-squares factor over the episode so far,
``s = (w₀ + Σ f·F_nom) / (w₀ + Σ F_nom²)`` (``w₀``: a prior of one, worth ``w₀`` in squared normalised
force), clipped to ``bounds``.

MuJoCo computes a step's muscle forces (and lengths and velocities) before its last physics substep
integrates the activations, so the observation's activation is one substep newer than its forces: the
activation they were computed with is recovered by undoing that substep's activation dynamics under the
excitation the controller sent (:meth:`StrengthEstimate.update`). On the nominal plant the estimate is 1
to float32 precision; factors within ``deadband`` of 1 are reported as exactly 1, so the controller plans
with the nominal model there, bit for bit. Under action noise the excitation that reached a muscle is not
the one sent, so its activation one substep back is not known: a muscle whose observed activation is not
what the sent excitation makes of the one observed before is left out of that step.
"""

from __future__ import annotations

import numpy as np

from mskbench.sim.muscles import MuscleParams, activation_after, activation_rate, muscle_gain_bias


class StrengthEstimate:
    """Per-muscle strength factors from observed muscle forces (module docstring).

    ``params``: the nominal muscles (:class:`~mskbench.sim.muscles.MuscleParams`); ``f0``: the nominal peak
    forces the observation's forces are normalised by (N); ``substep_s``: the physics timestep."""

    def __init__(self, params: MuscleParams, f0: np.ndarray, substep_s: float, prior: float = 1e-3,
                 bounds: tuple[float, float] = (0.5, 1.5), deadband: float = 0.005, substeps: int = 1,
                 tolerance: float = 1e-5):
        if prior <= 0:
            raise ValueError(f"prior must be positive, got {prior}")
        self.params = params
        self.f0 = np.asarray(f0, float)
        self.substep_s = float(substep_s)
        self.prior, self.bounds, self.deadband = float(prior), bounds, float(deadband)
        self.substeps, self.tolerance = int(substeps), float(tolerance)
        self.reset()

    def reset(self) -> None:
        n = self.f0.size
        self._num = np.full(n, self.prior)
        self._den = np.full(n, self.prior)

    def update(self, force: np.ndarray, length: np.ndarray, velocity: np.ndarray, activation: np.ndarray,
               excitation: np.ndarray | None, previous: np.ndarray | None = None) -> np.ndarray:
        """Add one observation (forces normalised by ``f0``, lengths m, velocities m/s, activations) and
        return the factors. ``excitation``: what was sent for the step just observed (None: the
        activation is taken as it is). ``previous``: the activations observed before that step; a muscle
        whose activation is not what the excitation sent makes of them over ``substeps`` (within
        ``tolerance``: action noise changed what reached it, so its activation one substep back is not
        known) adds nothing this step."""
        p = self.params
        use = np.ones(self.f0.size, bool)
        if previous is not None and excitation is not None:
            reached = activation_after(p, np.asarray(previous, float), np.asarray(excitation, float),
                                       self.substep_s, self.substeps)
            use = np.abs(reached - np.asarray(activation, float)) <= self.tolerance
        gain, bias = muscle_gain_bias(p, np.asarray(length, float), np.asarray(velocity, float))
        act = np.asarray(activation, float)
        if excitation is not None:  # the activation one substep back (a fixed point of the Euler step)
            u = np.asarray(excitation, float)
            prev = act
            for _ in range(30):  # contracts by dt/τ (< 0.5) per pass
                nxt = np.clip(act - self.substep_s * activation_rate(p, prev, u), 0.0, 1.0)
                done = np.abs(nxt - prev).max(initial=0.0) < 1e-12
                prev = nxt
                if done:
                    break
            act = prev
        nominal = np.where(use, (gain * act + bias) / self.f0, 0.0)
        self._num += np.asarray(force, float) * nominal
        self._den += nominal * nominal
        return self.factors()

    def factors(self) -> np.ndarray:
        s = np.clip(self._num / self._den, *self.bounds)
        return np.where(np.abs(s - 1.0) <= self.deadband, 1.0, s)


__all__ = ["StrengthEstimate"]

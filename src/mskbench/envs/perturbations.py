"""Perturbations of the robustness protocol (paper App. A-B2, Eqs. 4–6).

The formulas take standard-normal or uniform draws as arguments so that each
backend keeps its own randomness (NumPy ``Generator`` on the CPU, JAX keys on
the GPU) while sharing the arithmetic.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass

import numpy as np

#: Clip range of the perturbed normalised observation (Eq. 5).
OBS_CLIP = 20.0


@dataclass(frozen=True)
class Perturbation:
    """Noise levels of one evaluation setting.

    Attributes
    ----------
    action_noise_std:
        ``σ_act`` of Gaussian noise added to the normalised action, which is
        then clipped to [-1, 1] (Eq. 4).
    observation_noise_std:
        ``σ_obs`` of Gaussian noise added to the *policy-normalised*
        observation, which is then clipped to [-20, 20] (Eq. 5). The env does
        not know the policy's normalisation: it exposes
        ``perturb_normalized_observation`` for the policy wrapper to call.
    muscle_gain_range:
        ``σ_dyn`` ∈ [0, 1): at each reset every muscle's peak force is scaled
        by ``1 + U(−σ_dyn, σ_dyn)`` for the episode (Eq. 6).
    """

    action_noise_std: float = 0.0
    observation_noise_std: float = 0.0
    muscle_gain_range: float = 0.0

    def __post_init__(self):
        for name in ("action_noise_std", "observation_noise_std", "muscle_gain_range"):
            value = getattr(self, name)
            if (not isinstance(value, numbers.Real) or isinstance(value, (bool, np.bool_))
                    or not math.isfinite(value) or value < 0):
                raise ValueError(f"{name} must be a finite number >= 0, got {value!r}")
            object.__setattr__(self, name, float(value))
        if self.muscle_gain_range >= 1.0:
            raise ValueError(
                f"muscle_gain_range must be in [0, 1) so gains stay positive, got {self.muscle_gain_range}")

    @property
    def active(self) -> bool:
        return bool(self.action_noise_std or self.observation_noise_std or self.muscle_gain_range)


def noisy_action(action, std, standard_normal, xp=np):
    """Eq. 4: ``clip(u + σ ε, −1, 1)`` with ``ε`` standard normal, same shape as ``u``."""
    return xp.clip(action + std * standard_normal, -1.0, 1.0)


def noisy_observation(normalized_obs, std, standard_normal, xp=np):
    """Eq. 5: ``clip(s̃ + σ ε, −20, 20)`` on the policy-normalised observation."""
    return xp.clip(normalized_obs + std * standard_normal, -OBS_CLIP, OBS_CLIP)


def muscle_gain_scale(uniform01, sigma, xp=np):
    """Eq. 6: per-muscle factor ``1 + δ``, ``δ = σ(2U − 1) ~ U(−σ, σ)``, from ``U ~ U(0, 1)``."""
    return 1.0 + sigma * (2.0 * uniform01 - 1.0)


#: Independent random streams of one episode, in the order they are spawned from its seed.
STREAMS = ("init", "action", "observation", "gain")


def seed_streams(seed: int) -> dict[str, np.random.Generator]:
    """The episode's random streams for ``seed`` (initial state, action noise,
    observation noise, muscle gains). Every backend draws initial states and
    gains from these, so an episode seed means the same start everywhere."""
    children = np.random.SeedSequence(int(seed)).spawn(len(STREAMS))
    return {n: np.random.default_rng(c) for n, c in zip(STREAMS, children)}


def draw_muscle_gain(rng: np.random.Generator, sigma: float, n: int) -> np.ndarray:
    """Per-muscle Eq. 6 factors for one episode (ones when ``sigma`` is 0; no draw then)."""
    if sigma > 0.0:
        return muscle_gain_scale(rng.uniform(size=n), sigma)
    return np.ones(n)

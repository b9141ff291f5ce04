"""DEP's settings (:class:`DEPConfig`: the controller and its switching schedule, with the DepRL defaults of
MSK-Bench's MyoFullBody configs) and their checks; DEP itself is :mod:`mskbench.agents.dep`.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from numbers import Integral, Real
from typing import Any

import numpy as np

NORMALIZATIONS = ("independent", "global", "none", "deprl_columns")
Q_NORMS = ("l2", "max", "none")


# -- configuration ------------------------------------------------------------------------------
def _int_at_least(owner: str, name: str, value: Any, low: int, high: int | None = None) -> None:
    ok = isinstance(value, Integral) and not isinstance(value, bool)
    if ok:
        v = int(value)
        ok = v >= low and (high is None or v <= high)
    if not ok:
        valid = f"an integer in [{low}, {high}]" if high is not None else f"an integer >= {low}"
        raise ValueError(f"{owner}.{name} must be {valid}, got {value!r}")


def _real_in(owner: str, name: str, value: Any, low: float, high: float, valid: str,
             open_low: bool = False) -> None:
    ok = isinstance(value, Real) and not isinstance(value, bool) and math.isfinite(float(value))
    ok = ok and (value > low if open_low else value >= low) and value <= high
    if not ok:
        raise ValueError(f"{owner}.{name} must be {valid}, got {value!r}")


@dataclass(frozen=True)
class DEPConfig:
    """DEP and its switching schedule. Defaults: the ``DEP`` block shared by every DepRL
    config of the MSK-Bench MyoFullBody tasks, e.g. GitHub ``ZZongzheng0918/MSK-Bench`` (branch
    ``code``) ``rl_paradigms/depRL/experiments/msk_bench_training_files/msk_bench_stand.yaml``
    @ ``d7a289173d4b9301b23c74d00a59cf39233aa06a`` (identical in ``msk_bench_run``, ``_jump``,
    ``_chin_up`` @ d7a28917 and ``_agentic_walk``, ``_residual_walk`` @ 4ffd2d66). (The same
    repository's MyoSuite ``myoLegWalk.yaml`` differs: ``intervention_proba`` 0.0004,
    ``regularization`` 16, ``test_episode_every`` 3, 2e5 steps before batches.) ``pretrain_steps`` is that config's
    ``Buffer(steps_before_batches=1e5)``, the step up to which deprl's switching agent lets DEP
    alone act (martius-lab/depRL ``deprl/custom_agents.py`` @ 188ec6d0).

    Fields:

    * ``kappa`` (κ > 0): gain of the controller; with the ``l2`` action normalisation
      (``q̂`` has unit norm) a large κ saturates ``tanh``, giving near bang-bang actions.
    * ``tau`` (τ >= 3): the learning rule sums the sensor-change products of the steps
      ``s = 2 … τ−1`` back.
    * ``buffer_size`` (>= τ + δ): length of deprl's sensor/action history; only its last
      ``τ + δ`` entries are ever read, so that is what :class:`DEPState` stores.
    * ``bias_rate``: rate of the bias ``h`` (``h ← h − clip(bias_rate·y_{t−1}, ±0.05) −
      0.001 h``); a negative value switches the bias off (``h = 0``).
    * ``s4avg`` (>= 1): smoothing of the sensors, ``x̄ ← x̄ + (x − x̄)/s4avg``.
    * ``time_dist`` (δ >= 0): lag, in steps, between the two sensor changes the rule correlates.
    * ``normalization``: how ``C`` is normalised (``independent``, ``global``, ``none``,
      ``deprl_columns``; see :mod:`mskbench.agents.dep`).
    * ``sensor_delay`` (>= 0): in the original configs (1) but read by neither deprl's
      DEP nor this one; kept so configs round-trip.
    * ``regularization`` (0 … 37): ``ε = 10^(−regularization)`` in every division by a norm
      (37 keeps ε a normal float32).
    * ``with_learning``: learn ``C`` and ``h`` (False: ``C_n`` stays 0, DEP outputs ``tanh(h)=0``).
    * ``q_norm_selector``: normalisation of ``q = C_n x̄`` before the gain (``l2``, ``max``, ``none``).
    * ``intervention_length`` (>= 1): steps DEP acts once an intervention starts.
    * ``intervention_proba`` ([0, 1]): per world and policy step, probability to start one.
    * ``test_episode_every`` (>= 0): every k-th episode of a world (0, k, 2k, …) is DEP-free;
      0 switches DEP-free episodes off.
    * ``pretrain_steps`` (>= 0): DEP alone acts while the environment steps taken so far,
      summed over all worlds, are <= this.
    * ``length_range_reg`` (> 0, metres): added to the observed length range before dividing
      (0.1 in deprl's ``tendon_states``).
    """

    kappa: float = 1169.7
    tau: int = 40
    buffer_size: int = 200
    bias_rate: float = 0.002
    s4avg: int = 2
    time_dist: int = 5
    normalization: str = "independent"
    sensor_delay: int = 1
    regularization: int = 32
    with_learning: bool = True
    q_norm_selector: str = "l2"
    intervention_length: int = 5
    intervention_proba: float = 0.001
    test_episode_every: int = 5
    pretrain_steps: int = 100_000
    length_range_reg: float = 0.1

    def __post_init__(self) -> None:
        o = "DEPConfig"
        _real_in(o, "kappa", self.kappa, 0.0, math.inf, "a finite number > 0", open_low=True)
        _int_at_least(o, "tau", self.tau, 3)
        _int_at_least(o, "time_dist", self.time_dist, 0)
        _int_at_least(o, "buffer_size", self.buffer_size, self.tau + self.time_dist)
        _real_in(o, "bias_rate", self.bias_rate, -math.inf, math.inf,
                 "a finite number (< 0 switches the bias off)")
        _int_at_least(o, "s4avg", self.s4avg, 1)
        if self.normalization not in NORMALIZATIONS:
            raise ValueError(f"{o}.normalization must be one of {', '.join(NORMALIZATIONS)}, "
                             f"got {self.normalization!r}")
        _int_at_least(o, "sensor_delay", self.sensor_delay, 0)
        _int_at_least(o, "regularization", self.regularization, 0, 37)
        if not isinstance(self.with_learning, (bool, np.bool_)):
            raise ValueError(f"{o}.with_learning must be True or False, got {self.with_learning!r}")
        if self.q_norm_selector not in Q_NORMS:
            raise ValueError(f"{o}.q_norm_selector must be one of {', '.join(Q_NORMS)}, "
                             f"got {self.q_norm_selector!r}")
        _int_at_least(o, "intervention_length", self.intervention_length, 1)
        _real_in(o, "intervention_proba", self.intervention_proba, 0.0, 1.0, "a number in [0, 1]")
        _int_at_least(o, "test_episode_every", self.test_episode_every, 0)
        _int_at_least(o, "pretrain_steps", self.pretrain_steps, 0)
        _real_in(o, "length_range_reg", self.length_range_reg, 0.0, math.inf,
                 "a finite number > 0", open_low=True)

    @property
    def window(self) -> int:
        """Smoothed-sensor samples the learning rule reads: ``τ + δ`` (newest first)."""
        return self.tau + self.time_dist

    def replace(self, **overrides: Any) -> "DEPConfig":
        return dataclasses.replace(self, **overrides)

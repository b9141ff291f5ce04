"""Peak efficiency steps (App. A-B5, Eqs. 11-12)."""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from mskbench.metrics._validate import as_float_array


class PeakEfficiency(NamedTuple):
    """Result of :func:`peak_efficiency`: ``(t_max, r_max)``."""

    t_max: float
    """Earliest evaluated training step (environment steps) attaining ``r_max``."""
    r_max: float
    """Maximum mean evaluation return (task reward units)."""


def peak_efficiency(steps, mean_returns) -> PeakEfficiency:
    """Training step of the best evaluation and that best mean return (Eqs. 11-12).

    ``T_max = argmax_t E[R_t]`` and ``R_max = max_t E[R_t]`` over the evaluated
    training steps. Ties (exactly equal mean returns) resolve to the EARLIEST step.

    Parameters
    ----------
    steps:
        Evaluated training steps, shape (K,), K >= 1, in environment
        interactions; strictly increasing.
    mean_returns:
        Mean evaluation return at each step, shape (K,), in the task's reward
        units (already averaged over evaluation episodes).

    Returns
    -------
    PeakEfficiency
        ``(t_max, r_max)``; ``t_max`` is one of ``steps`` (as float),
        ``r_max`` the corresponding mean return.

    Raises
    ------
    ValueError
        On non-1-D or empty inputs, unequal lengths, NaN/inf, or steps that are
        not strictly increasing.
    """
    s = as_float_array(steps, "steps", ndim=1)
    r = as_float_array(mean_returns, "mean_returns", ndim=1)
    if s.shape != r.shape:
        raise ValueError(f"steps and mean_returns must have equal length, got {s.size} and {r.size}")
    if not np.all(np.diff(s) > 0):
        raise ValueError("steps must be strictly increasing")
    i = int(np.argmax(r))  # argmax returns the first maximum: ties -> earliest step
    return PeakEfficiency(float(s[i]), float(r[i]))

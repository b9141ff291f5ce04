"""Robustness score: normalised area under success rate vs perturbation scale (App. A-B2)."""

from __future__ import annotations

import numpy as np


def robustness_auc(scales, success_rates) -> float:
    """Trapezoidal area under ``success_rates`` over ``scales``, divided by the scale range.

    Parameters
    ----------
    scales:
        Perturbation scales, shape (K,), K >= 2, strictly increasing (e.g. 0, .05, .1, .15, .2).
    success_rates:
        Success rate at each scale, shape (K,), in the unit the result should have
        (percent gives a 0–100 score, fractions a 0–1 score).

    Returns
    -------
    float
        The mean success over the tested range; a policy whose success is
        constant ``s`` scores ``s``.

    Raises
    ------
    ValueError
        If the inputs are not 1-D of equal length K >= 2, contain NaN/inf, or
        ``scales`` is not strictly increasing.
    """
    x = np.asarray(scales, dtype=np.float64)
    y = np.asarray(success_rates, dtype=np.float64)
    if x.ndim != 1 or y.shape != x.shape:
        raise ValueError(f"scales and success_rates must be 1-D of equal length, got {x.shape} and {y.shape}")
    if x.size < 2:
        raise ValueError(f"need at least 2 scales, got {x.size}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("scales and success_rates must be finite (no NaN/inf)")
    if not np.all(np.diff(x) > 0):
        raise ValueError(f"scales must be strictly increasing, got {x.tolist()}")
    return float(np.sum(0.5 * (y[1:] + y[:-1]) * np.diff(x)) / (x[-1] - x[0]))

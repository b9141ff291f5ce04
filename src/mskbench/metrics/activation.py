"""Activation cost: mean squared muscle activation (App. A-B3, Eq. 7)."""

from __future__ import annotations

import numpy as np

from mskbench.metrics._validate import as_float_array, check_unit_interval


def activation_cost(activations) -> float:
    """Mean squared muscle activation over time and muscles (Eq. 7).

    ``E = (1/T) sum_t (1/M) sum_m a_{m,t}^2``; an effort proxy, not metabolic energy.

    Parameters
    ----------
    activations:
        Muscle activations of one episode, shape (T, M): T time steps, M muscles.
        Dimensionless, in [0, 1]. Values outside [0, 1] by at most 1e-6
        (float round-off) are clipped; anything further out is rejected.

    Returns
    -------
    float
        The cost, dimensionless, in [0, 1] (a constant activation ``c`` gives ``c**2``).

    Raises
    ------
    ValueError
        If ``activations`` is not 2-D with T >= 1 and M >= 1, is not numeric,
        contains NaN/inf, or lies outside [0, 1].
    """
    a = as_float_array(activations, "activations", ndim=2)
    a = check_unit_interval(a, "activations")
    return float(np.mean(a * a))

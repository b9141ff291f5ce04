"""Joint smoothness: mean squared finite-difference jerk (App. A-B4, Eqs. 8-10)."""

from __future__ import annotations

import math

import numpy as np

from mskbench.metrics._validate import as_float_array, positive


def mean_squared_jerk(qvel, dt) -> float:
    """Mean squared finite-difference jerk ``J_sq`` (Eqs. 8-9).

    The second difference of joint velocity,
    ``D2 v_{j,t} = (v_{j,t} - 2 v_{j,t-1} + v_{j,t-2}) / dt**2``,
    approximates the third derivative of the joint angle. ``J_sq`` is the mean
    of its square over all joints and the ``T - 2`` steps where it is defined.

    Parameters
    ----------
    qvel:
        Joint velocities, shape (T, J): T >= 3 time steps, J >= 1 joints,
        in rad/s (or m/s for slide joints) sampled every ``dt``.
    dt:
        Sampling interval in seconds (> 0), e.g. the control time step.

    Returns
    -------
    float
        ``J_sq`` in rad^2/s^6 (units of qvel squared per s^4).

    Raises
    ------
    ValueError
        If ``qvel`` is not 2-D, has fewer than 3 time steps, is not numeric or
        not finite, or if ``dt`` is not a positive finite number.
    """
    d = positive(dt, "dt", "seconds")
    v = as_float_array(qvel, "qvel", ndim=2, min_len=3)
    d2 = (v[2:] - 2.0 * v[1:-1] + v[:-2]) / (d * d)
    return float(np.mean(d2 * d2))


def joint_smoothness(qvel, dt, eps: float = 1e-12) -> float:
    """Log mean squared jerk, ``log10(J_sq + eps)`` (Eq. 10); lower is smoother.

    Parameters
    ----------
    qvel:
        Joint velocities, shape (T, J), T >= 3, in rad/s (see :func:`mean_squared_jerk`).
    dt:
        Sampling interval in seconds (> 0).
    eps:
        Small non-negative constant in rad^2/s^6 that keeps the log finite for a
        perfectly smooth (zero-jerk) signal; must be > 0 if the jerk can be 0.

    Returns
    -------
    float
        ``log10(J_sq + eps)``, with ``J_sq`` in rad^2/s^6.

    Raises
    ------
    ValueError
        As :func:`mean_squared_jerk`; also if ``eps`` is negative or not finite,
        or if ``J_sq + eps`` is 0.
    """
    e = float(eps)
    if not math.isfinite(e) or e < 0.0:
        raise ValueError(f"eps must be a finite number >= 0, got {eps!r}")
    j = mean_squared_jerk(qvel, dt) + e
    if j <= 0.0:
        raise ValueError("J_sq + eps is 0 (zero jerk and eps=0); the log is undefined, use eps > 0")
    return math.log10(j)

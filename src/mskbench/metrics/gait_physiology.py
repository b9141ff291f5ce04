"""Gait physiology from per-sample traces: stance phases, the vertical ground-reaction force's shape in
stance, and stride length and duration.

Human walking has a vertical ground-reaction force (GRF) per foot shaped like a double hump: a first
peak after heel strike (weight acceptance), a mid-stance minimum (the body vaults over the stance leg)
and a second peak before toe-off (push-off). At about 1.2 m/s the peaks are commonly reported at about
1.1-1.2 body weights and the minimum at about 0.7-0.8 (e.g. Winter, *Biomechanics and Motor Control of
Human Movement*). These functions take one foot's load and return those figures; they know nothing of
the simulator (the caller extracts the loads).

* :func:`stance_phases`: one foot's complete stance phases, with the load hysteresis and minimum time in
  the air of :func:`mskbench.metrics.progress.touchdowns` (a stance starts at a touchdown and ends where
  the foot is next up);
* :func:`stance_grf` : the first peak (maximum over the first half of a stance), the second peak (maximum
  over the second half), the minimum between them, and whether that is a double hump;
* :func:`strides`: stride lengths (horizontal travel of a point between same-foot strikes) and durations.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from mskbench.metrics._validate import as_float_array

#: A stance's force curve is a double hump when its mid-stance minimum lies at least this far below the
#: lower of its two peaks, in the force's units (body weights for :func:`stance_grf` on normalised loads).
MIN_DIP = 0.05


def stance_phases(load, down_n: float, up_n: float, min_air_samples: int = 1) -> np.ndarray:
    """One foot's complete stance phases as ``[start, end)`` sample ranges.

    The foot is up once ``load < up_n`` has held for ``min_air_samples`` consecutive samples (a foot that
    starts the trace loaded is down, one that starts unloaded must stay so that long); a stance starts at
    the first sample of an up foot with ``load > down_n`` (a touchdown, as
    :func:`mskbench.metrics.progress.touchdowns`) and ends (exclusive) at the first sample of the run
    below ``up_n`` that makes the foot up again. Only complete stances count: one whose start or end the
    trace does not contain (the foot down at the first sample, or still down at the last) is left out.

    Parameters
    ----------
    load:
        The foot's load per sample, shape (T,), >= 0 (N, or body weights).
    down_n, up_n:
        Touchdown and lift-off thresholds in the load's units, ``0 < up_n < down_n``.
    min_air_samples:
        Consecutive samples below ``up_n`` that make the foot up (>= 1).

    Returns
    -------
    numpy.ndarray
        int64, shape (n, 2): each row ``(start, end)``, ``start < end``, rows in time order.

    Raises
    ------
    ValueError
        On a load that is not a finite 1-D array or is negative, thresholds that are not
        ``0 < up_n < down_n``, or ``min_air_samples < 1``.
    """
    f = as_float_array(load, "load", ndim=1)
    if f.size and f.min() < 0.0:
        raise ValueError(f"load must be >= 0, got a minimum of {f.min():.6g}")
    down, up = float(down_n), float(up_n)
    if not (math.isfinite(down) and math.isfinite(up) and 0.0 < up < down):
        raise ValueError(f"need 0 < up_n < down_n, got up_n={up_n!r}, down_n={down_n!r}")
    if isinstance(min_air_samples, bool) or int(min_air_samples) != min_air_samples or min_air_samples < 1:
        raise ValueError(f"min_air_samples must be an integer >= 1, got {min_air_samples!r}")
    out: list[tuple[int, int]] = []
    air, is_up, start, run_start = 0, False, None, 0
    for t, x in enumerate(f.tolist()):
        if x < up:
            if air == 0:
                run_start = t
            air += 1
            if not is_up and air >= min_air_samples:
                is_up = True
                if start is not None:
                    out.append((start, run_start))
                    start = None
        else:
            air = 0
            if is_up and x > down:
                start, is_up = t, False
    return np.asarray(out, dtype=np.int64).reshape(-1, 2)


class StanceGRF(NamedTuple):
    """Result of :func:`stance_grf` (forces in the input's units, positions in % of the stance)."""

    first_peak: float
    """Maximum over the first half of the stance (weight acceptance)."""
    second_peak: float
    """Maximum over the second half (push-off)."""
    valley: float
    """Minimum from the first peak to the second (mid-stance)."""
    first_peak_pct: float
    second_peak_pct: float
    valley_pct: float
    """Where each lies, in % of the stance (sample index / (n - 1) * 100)."""
    double_hump: bool
    """``min(first_peak, second_peak) - valley >= min_dip``."""


def stance_grf(force, min_dip: float = MIN_DIP) -> StanceGRF:
    """The double-hump figures of one stance's vertical force.

    With ``n`` samples, the first half is samples ``i < n / 2`` and the second the rest; the first peak is
    the first half's maximum (its earliest sample on ties), the second peak the second half's maximum
    (its latest sample on ties) and the valley the minimum over the samples from the first peak's to
    the second peak's, inclusive. A single hump therefore has its valley at one of its peaks (a dip of
    0).

    Parameters
    ----------
    force:
        The stance's vertical force per sample, shape (n,), n >= 2 (e.g. body weights).
    min_dip:
        The smallest dip below the lower peak that makes a double hump (>= 0, the force's units).

    Returns
    -------
    StanceGRF

    Raises
    ------
    ValueError
        If ``force`` is not a finite 1-D array of at least 2 samples or ``min_dip`` is negative.
    """
    f = as_float_array(force, "force", ndim=1, min_len=2)
    dip = float(min_dip)
    if not math.isfinite(dip) or dip < 0.0:
        raise ValueError(f"min_dip must be a finite number >= 0, got {min_dip!r}")
    n = f.size
    half = (n + 1) // 2  # samples i < n / 2
    i1 = int(np.argmax(f[:half]))
    second = f[half:]
    i2 = half + int(second.size - 1 - np.argmax(second[::-1]))
    iv = i1 + int(np.argmin(f[i1:i2 + 1]))
    p1, p2, v = float(f[i1]), float(f[i2]), float(f[iv])
    pct = 100.0 / (n - 1)
    return StanceGRF(p1, p2, v, i1 * pct, i2 * pct, iv * pct, bool(min(p1, p2) - v >= dip))


class Strides(NamedTuple):
    """Result of :func:`strides`."""

    length_m: np.ndarray
    """Horizontal distance between consecutive strikes, shape (n - 1,), m."""
    duration_s: np.ndarray
    """Time between them, shape (n - 1,), s."""


def strides(strikes, position_xy, dt: float) -> Strides:
    """Stride lengths and durations from one foot's strikes.

    A stride runs from a strike of a foot to its next strike; its length is the horizontal distance
    travelled meanwhile by the point whose position is given (the heel: the classic stride length; the
    pelvis: the body's travel), its duration ``(next - this) * dt``.

    Parameters
    ----------
    strikes:
        Strike sample indices of one foot, shape (n,), strictly increasing, within the trace.
    position_xy:
        The point's horizontal position per sample, shape (T, 2), m.
    dt:
        Seconds between samples (> 0).

    Returns
    -------
    Strides
        Empty arrays when fewer than two strikes are given.

    Raises
    ------
    ValueError
        On strikes that are not increasing integer indices within the trace, a position trace that is
        not (T, 2) and finite, or a ``dt`` that is not positive.
    """
    xy = as_float_array(position_xy, "position_xy", ndim=2)
    if xy.shape[1] != 2:
        raise ValueError(f"position_xy must have shape (T, 2), got {xy.shape}")
    step = float(dt)
    if not math.isfinite(step) or step <= 0.0:
        raise ValueError(f"dt must be a positive, finite number, got {dt!r}")
    s = np.asarray(strikes)
    if s.ndim != 1 or (s.size and not np.issubdtype(s.dtype, np.integer)):
        raise ValueError("strikes must be a 1-D array of integer sample indices")
    s = s.astype(np.int64)
    if s.size and (np.any(np.diff(s) <= 0) or s[0] < 0 or s[-1] >= xy.shape[0]):
        raise ValueError(f"strikes must be strictly increasing within [0, {xy.shape[0] - 1}]")
    d = np.diff(xy[s], axis=0) if s.size >= 2 else np.zeros((0, 2))
    return Strides(np.hypot(d[:, 0], d[:, 1]), np.diff(s).astype(np.float64) * step)


def cadence_steps_per_min(stride_duration_s) -> float:
    """Cadence from stride durations: two steps per stride, ``120 / mean(duration)`` steps/min.

    Raises ValueError on an empty or non-positive input.
    """
    d = as_float_array(stride_duration_s, "stride_duration_s", ndim=1, min_len=1)
    if d.min() <= 0.0:
        raise ValueError("stride durations must be positive")
    return 120.0 / float(d.mean())


__all__ = ["MIN_DIP", "StanceGRF", "Strides", "cadence_steps_per_min", "stance_grf", "stance_phases", "strides"]

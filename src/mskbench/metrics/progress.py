"""Gait progress: steps taken (foot touchdowns), distance covered and mean forward speed of an episode.

Figures that show how far a gait policy got when it did not succeed, from per-control-step traces:

* a foot's load is the sum of its touch sensors (MyoFullBody: heel ``{l,r}_foot`` and toes
  ``{l,r}_toes``, :data:`FOOT_SENSORS`; :func:`foot_loads`), in N;
* a foot is *up* once its load has stayed below ``up_fraction`` of the body weight for at least
  ``min_air_s`` (consecutive samples); a *touchdown* is the first sample of a foot that is up whose load
  exceeds ``down_fraction`` of the body weight (:func:`touchdowns`). The load band between the two
  fractions (hysteresis) and the minimum time in the air keep contact chatter (a heel or toe that
  unloads for a sample or two while the foot stays planted) from counting as steps. A foot that starts
  the trace loaded is down; one that starts unloaded must still be up for ``min_air_s`` before its
  touchdown counts;
* steps taken: the touchdowns of all feet (:func:`gait_progress`);
* distance covered: the horizontal displacement of the pelvis from the first sample to the last, and its
  component along the heading given (the start heading); the mean forward speed is that component over
  the time between the two samples, ``(T - 1) dt``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from mskbench.metrics._validate import as_float_array, as_names, positive

#: The touch sensors of each foot (heel, toes), left foot first, as MyoFullBody names them.
FOOT_SENSORS: tuple[tuple[str, ...], ...] = (("l_foot", "l_toes"), ("r_foot", "r_toes"))
#: A foot that is up touches down when its load exceeds this fraction of the body weight.
DOWN_FRACTION = 0.05
#: A foot is up once its load has stayed below this fraction of the body weight for :data:`MIN_AIR_S`.
UP_FRACTION = 0.01
#: Seconds a foot's load must stay below :data:`UP_FRACTION` before the foot is up: far below a swing phase
#: (about 0.3-0.4 s walking or running), far above contact chatter (one or two 10 ms control steps).
MIN_AIR_S = 0.1


class GaitProgress(NamedTuple):
    """Result of :func:`gait_progress`."""

    steps: int
    """Touchdowns of all feet."""
    steps_per_foot: tuple[int, ...]
    """Touchdowns of each foot, in the order of the loads' columns."""
    distance_m: float
    """Horizontal displacement of the pelvis from the first sample to the last (m, >= 0)."""
    forward_distance_m: float
    """Its component along the heading given (m; negative: backwards)."""
    duration_s: float
    """Time from the first sample to the last, ``(T - 1) dt`` (s)."""
    forward_speed_mps: float
    """``forward_distance_m / duration_s`` (m/s)."""


def foot_loads(touch, touch_names, feet: tuple[tuple[str, ...], ...] = FOOT_SENSORS) -> np.ndarray:
    """Each foot's load: the sum of its touch sensors.

    Parameters
    ----------
    touch:
        Touch sensor readings, shape (T, S), in N.
    touch_names:
        The S sensors' names, in the order of ``touch``'s columns.
    feet:
        Per foot, the names of its sensors (default :data:`FOOT_SENSORS`: left, right).

    Returns
    -------
    numpy.ndarray
        Shape (T, len(feet)), N.

    Raises
    ------
    ValueError
        If ``touch`` is not a finite 2-D array with one column per name, or a foot's sensor is not named.
    """
    names = as_names(touch_names, "touch_names")
    x = as_float_array(touch, "touch", ndim=2)
    if x.shape[1] != len(names):
        raise ValueError(f"touch has {x.shape[1]} columns but {len(names)} touch_names")
    missing = [s for foot in feet for s in foot if s not in names]
    if missing:
        raise ValueError(f"no touch sensor named {', '.join(missing)}; touch_names: {', '.join(names)}")
    return np.stack([x[:, [names.index(s) for s in foot]].sum(axis=1) for foot in feet], axis=1)


def touchdowns(load, down_n: float, up_n: float, min_air_samples: int = 1) -> np.ndarray:
    """Sample indices of one foot's touchdowns.

    The foot is up once ``load < up_n`` has held for ``min_air_samples`` consecutive samples (from the
    first sample on: a foot that starts unloaded must stay so as long); a touchdown is the first sample
    of an up foot with ``load > down_n``, after which the foot is down until it is up again.

    Parameters
    ----------
    load:
        The foot's load per sample, shape (T,), N (>= 0).
    down_n, up_n:
        The touchdown and lift-off thresholds, N, ``0 < up_n < down_n``.
    min_air_samples:
        Consecutive samples below ``up_n`` that make the foot up (>= 1).

    Returns
    -------
    numpy.ndarray
        int64 indices, strictly increasing (possibly empty).

    Raises
    ------
    ValueError
        On a load that is not a finite 1-D array or has a negative value, thresholds that are not
        ``0 < up_n < down_n``, or ``min_air_samples < 1``.
    """
    f = as_float_array(load, "load", ndim=1)
    if f.min() < 0.0:
        raise ValueError(f"load must be >= 0 N, got a minimum of {f.min():.6g}")
    down, up = positive(down_n, "down_n"), positive(up_n, "up_n")
    if up >= down:
        raise ValueError(f"up_n must be below down_n (hysteresis), got up_n={up_n!r}, down_n={down_n!r}")
    if int(min_air_samples) != min_air_samples or min_air_samples < 1:
        raise ValueError(f"min_air_samples must be an integer >= 1, got {min_air_samples!r}")
    out, air, is_up = [], 0, False
    for t, x in enumerate(f.tolist()):
        if x < up:
            air += 1
            is_up = is_up or air >= min_air_samples
        else:
            air = 0
            if is_up and x > down:
                out.append(t)
                is_up = False
    return np.asarray(out, dtype=np.int64)


def foot_touchdowns(load, dt, body_weight_n, *, down_fraction: float = DOWN_FRACTION,
                    up_fraction: float = UP_FRACTION, min_air_s: float = MIN_AIR_S) -> np.ndarray:
    """One foot's touchdowns (:func:`touchdowns`) with the thresholds :func:`gait_progress` counts steps with:
    ``down_fraction`` and ``up_fraction`` of ``body_weight_n``, and ``min_air_s`` (at least one sample of
    ``dt``) below the lower one. The gait cycles of the EMG metric start at the right foot's."""
    step, weight = positive(dt, "dt"), positive(body_weight_n, "body_weight_n")
    down, up = positive(down_fraction, "down_fraction"), positive(up_fraction, "up_fraction")
    if up >= down:
        raise ValueError(f"up_fraction must be below down_fraction, got {up_fraction!r} and {down_fraction!r}")
    air = max(1, math.ceil(positive(min_air_s, "min_air_s") / step - 1e-9))
    return touchdowns(load, down * weight, up * weight, air)


def gait_progress(foot_load, pelvis_xy, heading_rad, dt, body_weight_n, *, down_fraction: float = DOWN_FRACTION,
                  up_fraction: float = UP_FRACTION, min_air_s: float = MIN_AIR_S) -> GaitProgress:
    """Steps taken, distance covered and mean forward speed from per-sample traces (see the module docstring).

    Parameters
    ----------
    foot_load:
        Each foot's load per sample, shape (T, F), T >= 2, F >= 1, N (:func:`foot_loads`).
    pelvis_xy:
        The pelvis's horizontal position per sample, shape (T, 2), m.
    heading_rad:
        The heading along which progress counts as forward (rad about world z, 0 facing +x), e.g. the
        pelvis's at the first sample.
    dt:
        Seconds between samples (> 0), e.g. the control time step.
    body_weight_n:
        The body's weight, N (> 0); the thresholds are ``down_fraction`` and ``up_fraction`` of it.
    down_fraction, up_fraction:
        Touchdown and lift-off thresholds as fractions of the body weight, ``0 < up < down``.
    min_air_s:
        Seconds below the lift-off threshold that make a foot up (> 0); at least one sample.

    Returns
    -------
    GaitProgress

    Raises
    ------
    ValueError
        On traces of the wrong shapes or lengths, non-finite or negative loads, or parameters out of range.
    """
    loads = as_float_array(foot_load, "foot_load", ndim=2, min_len=2)
    xy = as_float_array(pelvis_xy, "pelvis_xy", ndim=2, min_len=2)
    if xy.shape != (loads.shape[0], 2):
        raise ValueError(f"pelvis_xy must have shape ({loads.shape[0]}, 2) (one row per load sample), "
                         f"got {xy.shape}")
    heading = float(as_float_array(heading_rad, "heading_rad", ndim=0))
    step = positive(dt, "dt")
    per_foot = tuple(int(foot_touchdowns(loads[:, k], step, body_weight_n, down_fraction=down_fraction,
                                         up_fraction=up_fraction, min_air_s=min_air_s).size)
                     for k in range(loads.shape[1]))
    delta = xy[-1] - xy[0]
    forward = float(delta @ np.array([math.cos(heading), math.sin(heading)]))
    duration = (loads.shape[0] - 1) * step
    return GaitProgress(sum(per_foot), per_foot, float(np.hypot(delta[0], delta[1])), forward, duration,
                        forward / duration)

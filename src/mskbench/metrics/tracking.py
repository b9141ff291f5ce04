"""Site-tracking error, its RMSE and the first sustained divergence (App. A-F, Eqs. 19-20).

* :func:`site_tracking_error` — Eq. 19: at each sample ``t``, the root mean
  square over ``N`` tracked sites and their three coordinates of the distance
  to the reference, ``e_t = sqrt((1/3N) Σ_j ‖x_{j,t} − x^ref_{j,t}‖²)`` (m).
* :func:`tracking_rmse` — the reported tracking RMSE, ``sqrt((1/T) Σ_t e_t²)``
  over the samples given (the paper: every native control sample of the
  first-fall-truncated prefix).
* :func:`divergence_time` — Eq. 20: the time of the first sample of the first
  run of ``run_length`` (5) consecutive samples whose error exceeds both a
  reference rollout's error interpolated at the same time and the 95th
  percentile of the reference errors; ``None`` (the paper's N/A) when no such
  run occurs.

The components the paper reports for the imitation prior and the residual
study (Sec. II T2, Fig. 5f: absolute-site and root-XYZ error; Table V: tracking
error in rad), per sample:

* :func:`joint_position_error` — RMS over the joints of ``q − q̂`` (rad);
* :func:`root_position_error` — ``‖p_root − p̂_root‖`` (m; ``planar``: x, y only, Eq. 39);
* :func:`relative_site_error` — Eq. 19 on the sites' positions relative to the
  root (m): the posture error without the root's drift;
* :func:`absolute_site_error` — Eq. 19 itself (world positions, m);
* :func:`site_tracking_rmse` — the reported 16-site tracking RMSE of a rollout,
  :func:`tracking_rmse` of Eq. 19's errors.

Where the paper is silent the authors' code decides
(``experiments/gpt6_direct_control/analyze_failure.py@4ffd2d6``): the
reference error is interpolated linearly in time and held at its first/last
value outside the reference's time range; the percentile is NumPy's default
(linear) quantile.
"""

from __future__ import annotations

import numpy as np

from mskbench.metrics._validate import as_float_array

#: Consecutive samples that make a divergence "sustained" (five native samples = 0.05 s).
DIVERGENCE_RUN = 5
#: Quantile of the reference errors the error must also exceed.
DIVERGENCE_QUANTILE = 0.95


def site_tracking_error(positions, reference) -> np.ndarray:
    """Eq. 19: the per-sample site-tracking error.

    Parameters
    ----------
    positions, reference:
        Site positions and their reference positions, shape (T, N, 3) for T
        samples of N sites (or (N, 3) for one sample), metres.

    Returns
    -------
    numpy.ndarray
        ``e_t`` (m), shape (T,) (or a 0-d array for one sample).

    Raises
    ------
    ValueError
        If the shapes differ, the last axis is not 3, or a value is not finite.
    """
    x = as_float_array(positions, "positions")
    r = as_float_array(reference, "reference")
    if x.shape != r.shape:
        raise ValueError(f"positions {x.shape} and reference {r.shape} must have the same shape")
    if x.ndim not in (2, 3) or x.shape[-1] != 3:
        raise ValueError(f"positions must have shape (T, N, 3) or (N, 3), got {x.shape}")
    return np.sqrt(np.mean((x - r) ** 2, axis=(-2, -1)))


def tracking_rmse(errors) -> float:
    """The tracking RMSE ``sqrt((1/T) Σ_t e_t²)`` of per-sample errors ``e_t`` (shape (T,), T >= 1).

    Raises ``ValueError`` for an empty, multi-dimensional, negative or non-finite input.
    """
    e = as_float_array(errors, "errors", ndim=1)
    if (e < 0).any():
        raise ValueError("errors are distances and must be >= 0")
    return float(np.sqrt(np.mean(e * e)))


def divergence_time(times, errors, reference_times, reference_errors, *, run_length: int = DIVERGENCE_RUN,
                    quantile: float = DIVERGENCE_QUANTILE) -> float | None:
    """Eq. 20: the first sustained divergence from a reference rollout, or ``None``.

    Parameters
    ----------
    times, errors:
        The analysed rollout's sample times (s, increasing) and tracking errors ``e_t^GPT``, shape (T,).
    reference_times, reference_errors:
        The reference rollout's sample times (s, strictly increasing) and errors, shape (R,), R >= 1.
    run_length:
        Consecutive samples that must satisfy Eq. 20 (default 5).
    quantile:
        The reference-error quantile of Eq. 20 (default 0.95).

    Returns
    -------
    float or None
        The time of the first sample of the first run of ``run_length``
        samples with ``e_t > ẽ_t^ref`` and ``e_t > Q_q^ref``; ``None`` when
        there is none (including when T < ``run_length``).

    Raises
    ------
    ValueError
        For mismatched lengths, non-finite values, decreasing times, reference times that do not
        strictly increase, a ``run_length`` that is not a positive integer or a ``quantile`` outside [0, 1].
    """
    if isinstance(run_length, bool) or not isinstance(run_length, (int, np.integer)) or run_length < 1:
        raise ValueError(f"run_length must be a positive integer, got {run_length!r}")
    if not 0.0 <= float(quantile) <= 1.0:
        raise ValueError(f"quantile must lie in [0, 1], got {quantile!r}")
    t = as_float_array(times, "times", ndim=1)
    e = as_float_array(errors, "errors", ndim=1)
    rt = as_float_array(reference_times, "reference_times", ndim=1)
    re = as_float_array(reference_errors, "reference_errors", ndim=1)
    if t.shape != e.shape:
        raise ValueError(f"times {t.shape} and errors {e.shape} must have the same length")
    if rt.shape != re.shape:
        raise ValueError(f"reference_times {rt.shape} and reference_errors {re.shape} must have the same length")
    if t.size > 1 and (np.diff(t) < 0).any():
        raise ValueError("times must be non-decreasing")
    if rt.size > 1 and (np.diff(rt) <= 0).any():
        raise ValueError("reference_times must be strictly increasing")
    if t.size < run_length:
        return None
    threshold = float(np.quantile(re, quantile))
    aligned = np.interp(t, rt, re, left=re[0], right=re[-1])
    above = (e > threshold) & (e > aligned)
    # Length of the run of True values ending at each sample.
    run = 0
    for i, flag in enumerate(above):
        run = run + 1 if flag else 0
        if run == run_length:
            return float(t[i - run_length + 1])
    return None


# -- components: joints, root, relative and absolute sites -----------------------------------------
def joint_position_error(q, q_ref) -> np.ndarray:
    """Per-sample joint-angle error: the RMS over the joints of ``q − q̂`` (rad).

    ``q``, ``q_ref``: shape (T, J) for T samples of J joints (or (J,) for one sample). Returns (T,)
    (or a 0-d array). Raises ``ValueError`` for different or wrong shapes or a non-finite value.
    """
    x = as_float_array(q, "q")
    r = as_float_array(q_ref, "q_ref")
    if x.shape != r.shape or x.ndim not in (1, 2):
        raise ValueError(f"q {x.shape} and q_ref {r.shape} must have the same shape (T, J) or (J,)")
    return np.sqrt(np.mean((x - r) ** 2, axis=-1))


def root_position_error(root, root_ref, *, planar: bool = False) -> np.ndarray:
    """Per-sample root position error ``‖p − p̂‖`` (m); ``planar``: of ``(x, y)`` only (Eq. 39).

    ``root``, ``root_ref``: shape (T, 3) or (3,). Returns (T,) (or a 0-d array). Raises
    ``ValueError`` for different or wrong shapes or a non-finite value.
    """
    x = as_float_array(root, "root")
    r = as_float_array(root_ref, "root_ref")
    if x.shape != r.shape or x.ndim not in (1, 2) or x.shape[-1] != 3:
        raise ValueError(f"root {x.shape} and root_ref {r.shape} must have the same shape (T, 3) or (3,)")
    d = (x - r)[..., :2] if planar else x - r
    return np.linalg.norm(d, axis=-1)


def relative_site_error(positions, reference, root, root_ref) -> np.ndarray:
    """Eq. 19 on root-relative positions: ``sqrt((1/3N) Σ_j ‖(x_j − p) − (x̂_j − p̂)‖²)`` per sample (m).

    ``positions``, ``reference``: shape (T, N, 3) or (N, 3); ``root``, ``root_ref``: (T, 3) or (3,).
    Returns (T,) (or a 0-d array). Raises ``ValueError`` for mismatched shapes or a non-finite value.
    """
    x = as_float_array(positions, "positions")
    r = as_float_array(reference, "reference")
    p = as_float_array(root, "root")
    pr = as_float_array(root_ref, "root_ref")
    if p.shape != x.shape[:-2] + (3,) or pr.shape != p.shape:
        raise ValueError(f"root {p.shape} and root_ref {pr.shape} must have shape {x.shape[:-2] + (3,)}")
    return site_tracking_error(x - p[..., None, :], r - pr[..., None, :])


def absolute_site_error(positions, reference) -> np.ndarray:
    """Eq. 19 on world positions (m): :func:`site_tracking_error` (shape (T, N, 3) or (N, 3) in, (T,)
    out). Raises ``ValueError`` as it does."""
    return site_tracking_error(positions, reference)


def site_tracking_rmse(positions, reference) -> float:
    """The tracking RMSE of a rollout's sites (m): :func:`tracking_rmse` of Eq. 19's errors.

    ``positions``, ``reference``: shape (T, N, 3), every sample of the (first-fall-truncated)
    rollout. Raises ``ValueError`` for other shapes or a non-finite value.
    """
    x = as_float_array(positions, "positions", ndim=3)
    return tracking_rmse(site_tracking_error(x, reference))

"""Empirical Dynamic Modeling (EDM): time-delay embedding and simplex projection.

Pure NumPy. The conventions follow pyEDM (Sugihara lab), which the paper used
with ``E = 2``, ``tau = -1``, ``Tp = 1``; for ``Tp >= 0`` the predictions agree
with pyEDM 2.5.7 ``Simplex`` to floating-point round-off (see
``tests/test_simplex.py``, which also checks them against kEDM).

Rows and ranges
---------------
A series has ``T`` rows, numbered ``0 .. T-1``. ``lib`` and ``pred`` are
0-based, half-open row ranges ``(start, stop)``: they select the rows
``start, start+1, .., stop-1``, and default to the whole series ``(0, T)``.
pyEDM's 1-based, inclusive strings map onto them as::

    pyEDM  lib="a b"   <->  here  lib=(a - 1, b)
    pyEDM  pred="c d"  <->  here  pred=(c - 1, d)

For example, pyEDM's ``lib="1 100", pred="101 200"`` is ``lib=(0, 100),
pred=(100, 200)``.

Embedding
---------
:func:`embed` builds, for each column ``x`` of the source, the lagged
coordinates ``x[t], x[t + tau], .., x[t + (E-1)*tau]`` (columns grouped per
source column, as pyEDM names them ``x(t-0), x(t-1), ..``). ``tau < 0`` looks
into the past (the usual case, pyEDM's default ``tau = -1``); ``tau > 0`` looks
into the future. Rows whose lags fall outside the series are NaN: the first
``(E-1)*|tau|`` rows for ``tau < 0``, the last ``(E-1)*tau`` rows for
``tau > 0``. (kEDM writes the past-lag delay as a positive ``tau``: its
``tau = 1`` is ``tau = -1`` here.)

Which rows are used
-------------------
*Prediction rows* are the rows ``t`` of ``pred`` whose embedding vector is
complete; their lags may reach rows before ``pred`` (as in pyEDM: with
``pred=(100, 200)``, ``E = 2``, ``tau = -1``, row 100 uses row 99). Row ``t``
predicts the target at row ``t + Tp`` (``Tp`` may be 0, cross-mapping, or
negative, hindcasting).

*Library rows* must lie, together with their lags and their ``Tp``-ahead
target, inside the ``lib`` range itself: from ``lib`` one drops the first
``(E-1)*|tau|`` rows when ``tau < 0`` (the last ``(E-1)*tau`` rows when
``tau > 0``), then the last ``Tp`` rows when ``Tp > 0`` (the first ``|Tp|``
rows when ``Tp < 0``). For ``tau < 0 <= Tp`` this keeps exactly the rows
``n`` with ``lib_start + (E-1)*|tau| <= n < lib_stop - Tp``. This is pyEDM's
rule for every ``tau`` and ``Tp >= 0`` (for ``tau > 0`` both trims come off
the end, one after the other). For ``Tp < 0`` pyEDM 2.5.7 drops one row fewer
(``|Tp| - 1``), so that its first library row's target lies just before
``lib``; here it does not, so predictions may differ slightly for ``Tp < 0``.
(Also for ``tau > 0`` only: pyEDM blanks the observations of the last
``(E-1)*tau`` rows of the series, which changes its rho when ``pred`` reaches
the end; here those observations are kept.)

*Leave-one-out / exclusion*: for prediction row ``t`` the library rows ``n``
with ``|n - t| <= exclusion_radius`` are not candidates. With the default
``exclusion_radius = 0`` this removes only ``t`` itself, which matters only
when ``lib`` and ``pred`` overlap (pyEDM's leave-one-out).

Prediction
----------
Among the candidates, the ``E + 1`` nearest neighbours ``n_1 .. n_{E+1}``
of row ``t`` in Euclidean distance ``d_1 <= .. <= d_{E+1}`` (ties broken by
the lower row index) are weighted ``w_i = exp(-d_i / max(d_1, 1e-6))``; the
floor ``1e-6`` (pyEDM's) handles ``d_1 = 0``: neighbours at distance 0 get
weight 1 and any neighbour farther than a few 1e-5 practically 0. Then::

    predicted(t + Tp) = sum_i w_i * target[n_i + Tp] / sum_i w_i

and ``observed(t + Tp) = target[t + Tp]`` when ``0 <= t + Tp < T`` (even when
``t + Tp`` lies outside ``pred``), else NaN: like pyEDM, the last rows of a
``pred`` that ends the series forecast beyond the data. The result's
``times`` are the rows ``t + Tp`` (pyEDM's ``Time`` column minus 1 when its
time column is ``1 .. T``; pyEDM also prints ``Tp`` leading rows with NaN
predictions, which are not returned here).

:func:`simplex_rho` is Pearson's correlation between ``observed`` and
``predicted`` over the rows where both are defined.
"""

from __future__ import annotations

import operator
from typing import NamedTuple

import numpy as np

from mskbench.metrics._validate import as_float_array

__all__ = ["MIN_WEIGHT_DISTANCE", "SimplexResult", "embed", "simplex_predict", "simplex_rho"]

#: Lower bound on the nearest-neighbour distance used to scale the weights (pyEDM's).
MIN_WEIGHT_DISTANCE = 1e-6

# Upper bound on the number of float64 entries in one block of pairwise differences.
_BLOCK_ENTRIES = 1 << 21


class SimplexResult(NamedTuple):
    """Simplex predictions, one entry per prediction row (see the module docstring).

    Attributes
    ----------
    times:
        (P,) int rows of the predicted values, ``rows + Tp`` (may be ``>= T``, or ``< 0`` for ``Tp < 0``).
    observed:
        (P,) ``target[times]``, NaN where ``times`` is outside the series.
    predicted:
        (P,) the simplex predictions of ``target[times]``.
    rows:
        (P,) int prediction rows ``t`` whose embedding vectors were used.
    neighbors:
        (P, E+1) int library rows of the nearest neighbours, nearest first.
    distances:
        (P, E+1) their Euclidean distances in the embedding space.
    """

    times: np.ndarray
    observed: np.ndarray
    predicted: np.ndarray
    rows: np.ndarray
    neighbors: np.ndarray
    distances: np.ndarray


def _as_int(value, name: str) -> int:
    if isinstance(value, bool | np.bool_):
        raise ValueError(f"{name} must be an integer, got a bool ({value!r})")
    try:
        return operator.index(value)
    except TypeError:
        raise ValueError(f"{name} must be an integer, got {value!r}") from None


def _check_E_tau(E, tau) -> tuple[int, int]:
    E = _as_int(E, "E")
    tau = _as_int(tau, "tau")
    if E < 1:
        raise ValueError(f"E must be >= 1, got {E}")
    if tau == 0:
        raise ValueError("tau must be a non-zero integer (negative: past lags, pyEDM's default -1)")
    return E, tau


def _as_series(x, name: str) -> np.ndarray:
    a = as_float_array(x, name)
    if a.ndim == 1:
        a = a[:, None]
    if a.ndim != 2:
        raise ValueError(f"{name} must be a (T,) or (T, k) array, got shape {a.shape}")
    if a.shape[1] == 0:
        raise ValueError(f"{name} has no columns, got shape {a.shape}")
    return a


def _embed(a: np.ndarray, E: int, tau: int) -> np.ndarray:
    T, k = a.shape
    out = np.full((T, k * E), np.nan)
    for i in range(E):
        s = i * tau  # column i holds x[t + s]
        if abs(s) >= T:
            continue
        cols = slice(i, k * E, E)  # lag i of every source column
        if s <= 0:
            out[-s:, cols] = a[: T + s]
        else:
            out[: T - s, cols] = a[s:]
    return out


def embed(x, E: int = 2, tau: int = -1) -> np.ndarray:
    """Time-delay embedding of a (T,) or (T, k) series.

    Parameters
    ----------
    x:
        Series, shape (T,) or (T, k); finite.
    E:
        Embedding dimension (number of lags per column), ``E >= 1``.
    tau:
        Lag step, non-zero; ``tau < 0`` uses past values (pyEDM convention).

    Returns
    -------
    numpy.ndarray
        Shape (T, k*E); column ``j*E + i`` is ``x[t + i*tau, j]``. Rows where a
        lag falls outside ``0 .. T-1`` are NaN.

    Raises
    ------
    ValueError
        On a bad ``E`` or ``tau``, a wrong shape, or NaN/inf in ``x``.
    """
    E, tau = _check_E_tau(E, tau)
    return _embed(_as_series(x, "x"), E, tau)


def _check_range(r, name: str, T: int) -> tuple[int, int]:
    if r is None:
        return 0, T
    if isinstance(r, str):
        raise ValueError(
            f"{name} must be a 0-based half-open (start, stop) pair of ints, not a string {r!r} "
            "(pyEDM's 1-based inclusive 'a b' is (a - 1, b) here)"
        )
    try:
        start, stop = r
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a (start, stop) pair of ints, got {r!r}") from None
    start, stop = _as_int(start, f"{name} start"), _as_int(stop, f"{name} stop")
    if not 0 <= start < stop <= T:
        raise ValueError(f"{name}=({start}, {stop}) must satisfy 0 <= start < stop <= T = {T}")
    return start, stop


def _library_rows(lib: tuple[int, int], E: int, tau: int, Tp: int) -> np.ndarray:
    start, stop = lib
    shift = (E - 1) * abs(tau)
    if tau < 0:
        start += shift
    else:
        stop -= shift
    if Tp > 0:
        stop -= Tp
    else:
        start -= Tp
    return np.arange(start, max(start, stop))


def simplex_predict(
    source,
    target=None,
    *,
    E: int = 2,
    tau: int = -1,
    Tp: int = 1,
    lib=None,
    pred=None,
    exclusion_radius: int = 0,
) -> SimplexResult:
    """Simplex projection (Sugihara & May 1990) of ``target`` from the embedding of ``source``.

    Parameters
    ----------
    source:
        Series whose delay embedding defines the state space, shape (T,) or (T, k); finite.
    target:
        Series to predict, shape (T,); default: ``source`` (its first column if 2-D).
    E, tau:
        Embedding dimension (>= 1) and lag step (non-zero, negative = past); see :func:`embed`.
    Tp:
        Prediction horizon in rows (int; 0 = cross-mapping, negative = hindcast).
    lib, pred:
        0-based half-open row ranges ``(start, stop)`` of the library and of the
        rows to predict from; default ``(0, T)``. pyEDM's ``lib="a b"`` is ``(a - 1, b)``.
    exclusion_radius:
        Library rows within this many rows of the prediction row are not
        neighbours (int >= 0); 0 excludes only the row itself.

    Returns
    -------
    SimplexResult
        ``times`` (rows ``t + Tp``), ``observed``, ``predicted``, and the
        prediction ``rows``, ``neighbors`` and ``distances``.

    Raises
    ------
    ValueError
        On bad ``E``/``tau``/``Tp``/``exclusion_radius``, shapes or lengths that
        differ, NaN/inf, ranges outside the series, no usable prediction row, or
        a library with fewer than ``E + 1`` candidates for some prediction row.
    """
    E, tau = _check_E_tau(E, tau)
    Tp = _as_int(Tp, "Tp")
    radius = _as_int(exclusion_radius, "exclusion_radius")
    if radius < 0:
        raise ValueError(f"exclusion_radius must be >= 0, got {radius}")

    src = _as_series(source, "source")
    T = src.shape[0]
    if target is None:
        tgt = src[:, 0]
    else:
        tgt = as_float_array(target, "target")
        if tgt.ndim != 1:
            raise ValueError(f"target must be 1-D (T,), got shape {tgt.shape}")
        if tgt.shape[0] != T:
            raise ValueError(f"target has {tgt.shape[0]} rows but source has {T}")
    lib_range = _check_range(lib, "lib", T)
    pred_range = _check_range(pred, "pred", T)

    k = E + 1
    X = _embed(src, E, tau)
    complete = np.isfinite(X).all(axis=1)

    lib_rows = _library_rows(lib_range, E, tau, Tp)
    if lib_rows.size < k:
        raise ValueError(
            f"library too short: lib={lib_range} leaves {lib_rows.size} usable rows for "
            f"E={E}, tau={tau}, Tp={Tp}, but E + 1 = {k} neighbours are needed"
        )
    pred_rows = np.arange(*pred_range)
    pred_rows = pred_rows[complete[pred_rows]]
    if pred_rows.size == 0:
        raise ValueError(
            f"no prediction row in pred={pred_range} has a complete embedding "
            f"(E={E}, tau={tau} needs {(E - 1) * abs(tau)} rows of lags)"
        )

    # Candidates per prediction row: the library minus rows within the exclusion radius.
    lo = np.searchsorted(lib_rows, pred_rows - radius, side="left")
    hi = np.searchsorted(lib_rows, pred_rows + radius, side="right")
    n_candidates = lib_rows.size - (hi - lo)
    if n_candidates.min() < k:
        bad = int(pred_rows[np.argmin(n_candidates)])
        raise ValueError(
            f"library too short: prediction row {bad} has {int(n_candidates.min())} candidate "
            f"neighbours (lib={lib_range}, exclusion_radius={radius}), but E + 1 = {k} are needed"
        )

    L = X[lib_rows]
    P = pred_rows.size
    neighbors = np.empty((P, k), dtype=np.intp)
    distances = np.empty((P, k))
    block = max(1, _BLOCK_ENTRIES // (lib_rows.size * X.shape[1]))
    for b0 in range(0, P, block):
        rows = pred_rows[b0 : b0 + block]
        diff = X[rows][:, None, :] - L[None, :, :]
        d = np.sqrt(np.einsum("pld,pld->pl", diff, diff))
        d[np.abs(rows[:, None] - lib_rows[None, :]) <= radius] = np.inf
        order = np.argsort(d, axis=1, kind="stable")[:, :k]
        neighbors[b0 : b0 + block] = lib_rows[order]
        distances[b0 : b0 + block] = np.take_along_axis(d, order, axis=1)

    scale = np.maximum(distances[:, :1], MIN_WEIGHT_DISTANCE)
    weights = np.exp(-distances / scale)
    predicted = (weights * tgt[neighbors + Tp]).sum(axis=1) / weights.sum(axis=1)

    times = pred_rows + Tp
    inside = (times >= 0) & (times < T)
    observed = np.full(P, np.nan)
    observed[inside] = tgt[times[inside]]
    return SimplexResult(times, observed, predicted, pred_rows, neighbors, distances)


def simplex_rho(
    source,
    target=None,
    *,
    E: int = 2,
    tau: int = -1,
    Tp: int = 1,
    lib=None,
    pred=None,
    exclusion_radius: int = 0,
) -> float:
    """Pearson's rho between observed and simplex-predicted ``target`` (forecast skill).

    Same arguments as :func:`simplex_predict` (``source`` of shape (T,) or
    (T, k), ``target`` of shape (T,)); the correlation is taken over the rows
    where both ``observed`` and ``predicted`` are defined (forecasts past the
    end of the series are left out). Returns a float in [-1, 1], or NaN when
    either side is constant over those rows.

    Raises
    ------
    ValueError
        As :func:`simplex_predict`, and when fewer than 2 rows have an observation.
    """
    res = simplex_predict(
        source, target, E=E, tau=tau, Tp=Tp, lib=lib, pred=pred, exclusion_radius=exclusion_radius
    )
    ok = np.isfinite(res.observed) & np.isfinite(res.predicted)
    if ok.sum() < 2:
        raise ValueError(
            f"need at least 2 predicted rows with an observation to correlate, got {int(ok.sum())}"
        )
    o = res.observed[ok] - res.observed[ok].mean()
    p = res.predicted[ok] - res.predicted[ok].mean()
    denom = np.sqrt((o @ o) * (p @ p))
    if denom == 0.0:
        return float("nan")
    return float(np.clip((o @ p) / denom, -1.0, 1.0))

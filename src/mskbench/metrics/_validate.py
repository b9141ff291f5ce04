"""Shared input checks for the metrics package (private).

Every public metric converts its inputs with these helpers so that wrong
shapes, non-numeric values, NaN and inf are rejected with a ``ValueError``
that names the offending argument.
"""

from __future__ import annotations

import math

import numpy as np

#: Tolerance for activations slightly outside [0, 1] (float32 round-off).
ACTIVATION_TOL = 1e-6


def as_float_array(x, name: str, ndim: int | None = None, min_len: int = 1) -> np.ndarray:
    """``x`` as a finite float64 array of ``ndim`` dims whose first axis has at least ``min_len`` entries."""
    if np.iscomplexobj(x):
        raise ValueError(f"{name} must be real-valued, got a complex array")
    try:
        a = np.asarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be numeric: {exc}") from None
    if ndim is not None and a.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {a.shape}")
    if a.ndim >= 1 and a.shape[0] < min_len:
        raise ValueError(f"{name} needs at least {min_len} entries along axis 0, got shape {a.shape}")
    if a.size == 0:
        raise ValueError(f"{name} must not be empty, got shape {a.shape}")
    if not np.isfinite(a).all():
        raise ValueError(f"{name} must be finite (no NaN/inf)")
    return a


def check_unit_interval(a: np.ndarray, name: str, tol: float = ACTIVATION_TOL) -> np.ndarray:
    """Reject values outside [0, 1] by more than ``tol``; return ``a`` clipped to [0, 1]."""
    lo, hi = float(a.min()), float(a.max())
    if lo < -tol or hi > 1.0 + tol:
        raise ValueError(f"{name} must lie in [0, 1] (tolerance {tol:g}), got range [{lo:.6g}, {hi:.6g}]")
    return np.clip(a, 0.0, 1.0)


def as_names(names, name: str, length: int | None = None) -> tuple[str, ...]:
    """``names`` as a tuple of strings (optionally of a given length)."""
    if isinstance(names, str):
        raise ValueError(f"{name} must be a sequence of strings, not a single string")
    out = tuple(names)
    bad = [n for n in out if not isinstance(n, str)]
    if bad:
        raise ValueError(f"{name} must contain only strings, got {bad[:3]!r}")
    if length is not None and len(out) != length:
        raise ValueError(f"{name} has {len(out)} entries but {length} were expected")
    return out


def positive(value, name: str, unit: str = "") -> float:
    """``value`` as a positive, finite float (``unit``, e.g. ``"seconds"``, named in the error)."""
    of = f" of {unit}" if unit else ""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a positive number{of}, got {value!r}") from None
    if not math.isfinite(v) or v <= 0.0:
        raise ValueError(f"{name} must be a positive, finite number{of}, got {value!r}")
    return v

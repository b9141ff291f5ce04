"""The bounds and the shared weights file of agentic reward tuning (App. A-E).

:func:`normalize_l1` and :func:`bound_weights` (±20 % per update, ‖w‖₁ fixed, one Euclidean
projection); :class:`WeightStore`, the JSON file every training world reloads, written atomically under
an exclusive ``fcntl.flock``.
"""

from __future__ import annotations

import fcntl
import json
import math
import os
import tempfile
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np


#: ‖w‖₁ of the matched reasoner comparison (Table III).
L1_NORM = 40.0
#: Largest relative change of a nonzero weight per update.
RELATIVE_LIMIT = 0.2
WEIGHTS_FILE = "reward_weights.json"


def _utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds").replace("+00:00", "Z")


# -- the bounds ----------------------------------------------------------------------------------------
def _finite_weights(weights: Mapping[str, Any], name: str) -> dict[str, float]:
    out = {}
    for key, value in weights.items():
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise ValueError(f"{name}[{key!r}] must be a number, got {value!r}")
        if not math.isfinite(float(value)):
            raise ValueError(f"{name}[{key!r}] must be finite, got {value!r}")
        out[str(key)] = float(value)
    if not out:
        raise ValueError(f"{name} must not be empty")
    return out


def normalize_l1(weights: Mapping[str, float], l1_norm: float | None = L1_NORM) -> dict[str, float]:
    """``weights`` scaled so that ``Σ|w| = l1_norm`` (unchanged for ``l1_norm=None``)."""
    w = _finite_weights(weights, "weights")
    if l1_norm is None:
        return w
    if not (math.isfinite(l1_norm) and l1_norm > 0):
        raise ValueError(f"l1_norm must be positive and finite, got {l1_norm!r}")
    mass = sum(abs(v) for v in w.values())
    if mass == 0.0:
        raise ValueError("cannot normalise weights that are all zero")
    return {k: v * l1_norm / mass for k, v in w.items()}


def _project_magnitudes(m: np.ndarray, lo: np.ndarray, hi: np.ndarray, total: float) -> np.ndarray:
    """The point of ``{x : lo <= x <= hi, Σx = total}`` nearest to ``m``: ``clip(m − τ, lo, hi)`` with τ
    solved exactly (``Σ clip(m − τ, lo, hi)`` is piecewise linear and non-increasing in τ)."""
    def mass(tau: float) -> float:
        return float(np.clip(m - tau, lo, hi).sum())

    knots = np.unique(np.concatenate([m - hi, m - lo]))
    values = np.array([mass(t) for t in knots])  # non-increasing from Σhi to Σlo
    below = np.flatnonzero(values <= total)
    k = int(below[0])  # the first knot whose mass is at most `total` (the last knot's is Σlo <= total)
    if values[k] == total or k == 0:
        tau = float(knots[k])
    else:  # linear between knots k−1 and k
        t0, t1, v0, v1 = knots[k - 1], knots[k], values[k - 1], values[k]
        tau = float(t0 + (v0 - total) * (t1 - t0) / (v0 - v1))
    return np.clip(m - tau, lo, hi)


def bound_weights(current: Mapping[str, float], proposed: Mapping[str, float], *,
                  relative_limit: float = RELATIVE_LIMIT, l1_norm: float | None = L1_NORM) -> dict[str, float]:
    """The weights an update applies: ``proposed`` brought within the bounds around ``current``.

    With ``l1_norm`` (default 40): the nearest weights (Euclidean, on the
    magnitudes) with every nonzero weight's sign kept and its magnitude within
    ``[1 − relative_limit, 1 + relative_limit] · |current|``, zero weights
    zero, and ``Σ|w| = l1_norm``. ``current`` must already have that norm
    (:func:`normalize_l1`). With ``l1_norm=None``: each nonzero weight clipped
    to ``current ± relative_limit · |current|``; a zero weight takes the
    proposed value (the original code's unnormalised mode). A key missing from
    ``proposed`` keeps its current value; an unknown key is an error.
    """
    cur = _finite_weights(current, "current")
    unknown = sorted(set(proposed) - set(cur))
    if unknown:
        raise ValueError(f"unknown reward weight(s) {', '.join(map(repr, unknown))}; "
                         f"valid: {', '.join(map(repr, cur))}")
    prop = _finite_weights({**cur, **proposed}, "proposed")
    if not 0.0 <= relative_limit < 1.0:
        raise ValueError(f"relative_limit must lie in [0, 1), got {relative_limit!r}")
    keys = list(cur)
    old = np.array([cur[k] for k in keys])
    new = np.array([prop[k] for k in keys])
    delta = np.abs(old) * relative_limit
    if l1_norm is None:
        out = np.where(old == 0.0, new, np.clip(new, old - delta, old + delta))
    else:
        if not (math.isfinite(l1_norm) and l1_norm > 0):
            raise ValueError(f"l1_norm must be positive and finite, got {l1_norm!r}")
        if not math.isclose(float(np.abs(old).sum()), l1_norm, rel_tol=1e-9):
            raise ValueError(f"the current weights have ‖w‖₁ = {np.abs(old).sum():.6g}, not {l1_norm:g}; "
                             "normalise them first (normalize_l1)")
        sign = np.sign(old)
        nz = sign != 0
        mag = _project_magnitudes(new[nz] * sign[nz], np.abs(old[nz]) - delta[nz], np.abs(old[nz]) + delta[nz],
                                  float(l1_norm))
        out = np.zeros_like(old)
        out[nz] = sign[nz] * mag
    return {k: float(v) for k, v in zip(keys, out)}


# -- the shared weights file ---------------------------------------------------------------------------
class WeightStore:
    """The shared reward-weights file: ``{"version": int, "weights": {...}, "updated_at_utc": str}``.

    Writers hold an exclusive ``fcntl.flock`` on ``<file>.lock`` for the whole
    read-modify-write (:meth:`update`), so concurrent writers in any number of
    processes serialise and lose no update; the file itself is replaced
    atomically, so readers (:meth:`read`, :meth:`poll`) never see a partial
    file and need no lock.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        self.lock_path = self.path.with_name(self.path.name + ".lock")
        self._seen: tuple[int, int, int] | None = None

    def exists(self) -> bool:
        return self.path.is_file()

    @contextmanager
    def locked(self, blocking: bool = True) -> Iterator[bool]:
        """Hold the writers' lock; yields False (holding nothing) when ``blocking=False`` and it is taken."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with open(self.lock_path, "a+") as handle:
            try:
                fcntl.flock(handle.fileno(), fcntl.LOCK_EX | (0 if blocking else fcntl.LOCK_NB))
            except BlockingIOError:
                yield False
                return
            try:
                yield True
            finally:
                fcntl.flock(handle.fileno(), fcntl.LOCK_UN)

    def _write(self, version: int, weights: Mapping[str, float], **extra: Any) -> None:
        payload = {"version": int(version), "weights": {k: float(v) for k, v in weights.items()},
                   "updated_at_utc": _utc_now(), **extra}
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.", suffix=".tmp", dir=self.path.parent)
        try:
            with os.fdopen(fd, "w") as handle:
                json.dump(payload, handle, indent=2, allow_nan=False)
                handle.flush()
                os.fsync(handle.fileno())
            os.chmod(tmp, 0o644)
            os.replace(tmp, self.path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)

    def reset(self, weights: Mapping[str, float]) -> None:
        """Start over: version 0 with ``weights`` (under the lock)."""
        with self.locked():
            self._write(0, _finite_weights(weights, "weights"))

    def read(self) -> tuple[int, dict[str, float]]:
        """``(version, weights)`` as stored now."""
        try:
            payload = json.loads(self.path.read_text())
        except FileNotFoundError:
            raise FileNotFoundError(f"no reward weights at {self.path}") from None
        except json.JSONDecodeError as exc:
            raise ValueError(f"{self.path} is not valid JSON: {exc}") from None
        if not isinstance(payload, dict) or not isinstance(payload.get("weights"), dict) \
                or not isinstance(payload.get("version"), int):
            raise ValueError(f"{self.path} is not a reward-weights file (needs 'version' and 'weights')")
        return payload["version"], _finite_weights(payload["weights"], "stored weights")

    def _stat_key(self) -> tuple[int, int, int] | None:
        try:
            st = os.stat(self.path)
        except FileNotFoundError:
            return None
        return st.st_ino, st.st_mtime_ns, st.st_size

    def poll(self) -> tuple[int, dict[str, float]] | None:
        """``(version, weights)`` when the file changed since the last poll (or on the first), else None."""
        key = self._stat_key()
        if key is None or key == self._seen:
            return None
        self._seen = key
        return self.read()

    def update(self, change: Callable[[int, dict[str, float]], Mapping[str, float] | None], *,
               blocking: bool = True) -> tuple[int, dict[str, float]] | None:
        """Read, ``change(version, weights)`` and write ``version + 1`` — all under the lock.

        ``change`` returning None writes nothing. Returns the new ``(version,
        weights)``, or None when nothing was written (no change, or the lock
        was taken and ``blocking=False``).
        """
        with self.locked(blocking) as held:
            if not held:
                return None
            version, weights = self.read()
            new = change(version, dict(weights))
            if new is None:
                return None
            new = _finite_weights(new, "new weights")
            self._write(version + 1, new)
            return version + 1, new

"""EMG-envelope similarity of simulated activations (App. A-B6, Eqs. 13-14; App. A-H, Eqs. 29-32).

Pipeline for one rollout:

1. :func:`heel_strikes` finds gait events (rising edges of a foot-contact series).
2. :func:`cycle_envelopes` cuts the activation series at consecutive strikes
   and resamples every cycle to 101 points (0 %, 1 %, ..., 100 %).
3. :func:`mean_envelope` averages the cycles and min-max normalises the mean
   (Eq. 30); the across-cycle SD is divided by the same peak-to-peak (Eq. 31).
4. :func:`emg_envelope_similarity` cyclically shifts the simulated envelope to
   maximise Pearson r against the human envelope (Eq. 32).
5. :func:`emg_similarity` does 2-4 for every reference channel that has a
   mapping to model actuators (:data:`SANTUZ_TO_MYOFULLBODY`) and averages r
   over channels (Eq. 14).

Differences from the paper's wording, by design: cycles are resampled with
LINEAR interpolation (the paper's Eq. 29 uses cubic for raw EMG); linear keeps
activations inside their original range and is exact for piecewise-linear
signals. Normalisation and cyclic shifting remove amplitude and absolute
timing, so r measures phase-optimised waveform shape only.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import NamedTuple

import numpy as np

from mskbench.metrics._validate import as_float_array, as_names, check_unit_interval

#: Points per gait cycle: 0 %, 1 %, ..., 100 %.
N_POINTS = 101

#: Small constant of Eqs. 30-31 that avoids division by zero.
NORM_EPS = 1e-8


# -- single envelope ------------------------------------------------------------------------
class EnvelopeMatch(NamedTuple):
    """Result of :func:`emg_envelope_similarity`."""

    r: float
    """Pearson correlation of the best-aligned envelopes, in [-1, 1]."""
    shift: int
    """Roll (in points = % of cycle) applied to the simulated envelope:
    ``np.roll(sim, shift)`` is the best-aligned simulated envelope. In [-50, 50]."""


def _minmax(x: np.ndarray, eps: float = NORM_EPS) -> np.ndarray:
    """Eq. 30 along axis 0: ``(x - min) / (max - min + eps)``."""
    lo = x.min(axis=0)
    return (x - lo) / (x.max(axis=0) - lo + eps)


def _check_envelope(x, name: str) -> np.ndarray:
    a = as_float_array(x, name)
    if a.shape != (N_POINTS,):
        raise ValueError(
            f"{name} must be a 1-D envelope of exactly {N_POINTS} points (0..100 % of the gait cycle), "
            f"got shape {a.shape}"
        )
    if np.ptp(a) == 0.0:
        raise ValueError(f"{name} is constant; its correlation with any envelope is undefined")
    return a


#: Candidate shifts ordered 0, 1, -1, 2, -2, ..., 50, -50, so that exact ties
#: resolve to the smallest |shift| (then the positive one).
_SHIFTS = np.array([0] + [s for k in range(1, N_POINTS // 2 + 1) for s in (k, -k)], dtype=np.int64)
_ROLL_INDEX = (np.arange(N_POINTS)[None, :] - _SHIFTS[:, None]) % N_POINTS  # row i = np.roll index for _SHIFTS[i]


def emg_envelope_similarity(sim, ref) -> EnvelopeMatch:
    """Phase-optimised Pearson correlation of one simulated and one human envelope (Eqs. 13, 32).

    Both envelopes are min-max normalised (Eq. 30); the simulated one is then
    rolled by every shift ``s`` in -50..50 (``np.roll(sim, s)``, i.e. the value
    at cycle point ``i`` moves to ``i + s``) and the shift with the largest
    Pearson r is kept. Exact ties go to the smallest ``|s|``, then to ``s > 0``.

    Parameters
    ----------
    sim:
        Simulated activation envelope, shape (101,), values at 0..100 % of
        the gait cycle (any units; normalisation removes amplitude).
    ref:
        Human EMG envelope, shape (101,), same time base.

    Returns
    -------
    EnvelopeMatch
        ``(r, shift)``: best Pearson r (dimensionless, in [-1, 1]) and the roll
        applied to ``sim`` in cycle points (1 point = 1 % of the cycle).
        If ``sim == np.roll(ref, k)`` then ``shift == -k`` (mod 101) and r = 1.

    Raises
    ------
    ValueError
        If either input is not a finite 1-D array of exactly 101 points, or is
        constant (zero variance, so r is undefined).
    """
    s = _minmax(_check_envelope(sim, "sim"))
    e = _minmax(_check_envelope(ref, "ref"))
    rolled = s[_ROLL_INDEX]  # (101 shifts, 101 points)
    rc = rolled - rolled.mean(axis=1, keepdims=True)
    ec = e - e.mean()
    r_all = (rc @ ec) / (np.sqrt((rc * rc).sum(axis=1)) * math.sqrt(float(ec @ ec)))
    i = int(np.argmax(r_all))
    return EnvelopeMatch(float(np.clip(r_all[i], -1.0, 1.0)), int(_SHIFTS[i]))


# -- gait cycles ----------------------------------------------------------------------------
def heel_strikes(contact, threshold: float = 0.5) -> np.ndarray:
    """Indices of heel strikes: rising edges of a foot-contact series.

    A sample is "in contact" when ``contact > threshold``. A strike is a sample
    ``t >= 1`` in contact whose predecessor ``t - 1`` is not. Sample 0 is
    never a strike (its predecessor is unknown), so a series that starts in
    contact does not produce a strike at 0.

    Parameters
    ----------
    contact:
        Contact series of one foot, shape (T,): booleans, 0/1 flags, or a
        vertical contact force in N (then choose ``threshold`` in N).
    threshold:
        Contact threshold in the units of ``contact``; 0.5 suits boolean/0-1 input.

    Returns
    -------
    numpy.ndarray
        int64 sample indices, shape (n_strikes,), strictly increasing (possibly empty).

    Raises
    ------
    ValueError
        If ``contact`` is not 1-D, non-numeric or not finite, or ``threshold`` is not finite.
    """
    c = as_float_array(contact, "contact", ndim=1)
    thr = float(threshold)
    if not math.isfinite(thr):
        raise ValueError(f"threshold must be finite, got {threshold!r}")
    on = c > thr
    return (np.flatnonzero(on[1:] & ~on[:-1]) + 1).astype(np.int64)


def _check_strikes(strikes, n_samples: int) -> np.ndarray:
    s = np.asarray(strikes)
    if s.ndim != 1:
        raise ValueError(f"strikes must be 1-D sample indices, got shape {s.shape}")
    if s.size < 2:
        raise ValueError(
            f"need at least 2 heel strikes (1 complete gait cycle) to build an envelope, got {s.size}"
        )
    if not (np.issubdtype(s.dtype, np.integer) or (np.issubdtype(s.dtype, np.floating)
                                                    and np.isfinite(s).all() and np.all(s == np.round(s)))):
        raise ValueError("strikes must be integer sample indices")
    s = s.astype(np.int64)
    if not np.all(np.diff(s) > 0):
        raise ValueError("strikes must be strictly increasing")
    if s[0] < 0 or s[-1] >= n_samples:
        raise ValueError(f"strikes must lie in [0, {n_samples - 1}] (signal length {n_samples}), "
                         f"got [{s[0]}, {s[-1]}]")
    return s


def cycle_envelopes(signal, strikes, n_points: int = N_POINTS) -> np.ndarray:
    """Cut a signal into gait cycles and resample each cycle to ``n_points`` points.

    Cycle ``i`` runs from sample ``strikes[i]`` (0 %) to sample
    ``strikes[i+1]`` (100 %), both ends included; it is linearly interpolated
    at ``n_points`` evenly spaced phases. n strikes give n - 1 cycles; samples
    before the first and after the last strike are ignored.

    Parameters
    ----------
    signal:
        Samples of shape (T,) or (T, C) (C channels, e.g. muscles), any units.
    strikes:
        Strike sample indices, shape (n,), n >= 2, strictly increasing, within [0, T-1]
        (e.g. from :func:`heel_strikes`).
    n_points:
        Points per cycle (>= 2); 101 gives 0, 1, ..., 100 %.

    Returns
    -------
    numpy.ndarray
        Shape (n - 1, n_points) for 1-D ``signal`` or (n - 1, n_points, C) for
        2-D, in the units of ``signal``.

    Raises
    ------
    ValueError
        If ``signal`` is not 1-D/2-D or not finite, fewer than 2 strikes (no
        complete cycle) are given, strikes are not increasing integers inside
        the signal, or ``n_points < 2``.
    """
    x = as_float_array(signal, "signal")
    if x.ndim not in (1, 2):
        raise ValueError(f"signal must be 1-D (T,) or 2-D (T, C), got shape {x.shape}")
    if isinstance(n_points, bool) or not isinstance(n_points, (int, np.integer)) or n_points < 2:
        raise ValueError(f"n_points must be an integer >= 2, got {n_points!r}")
    s = _check_strikes(strikes, x.shape[0])
    phase = np.linspace(0.0, 1.0, int(n_points))
    pos = s[:-1, None] + np.diff(s)[:, None] * phase[None, :]  # (n_cycles, n_points) fractional sample index
    lo = np.minimum(np.floor(pos).astype(np.int64), x.shape[0] - 2 if x.shape[0] > 1 else 0)
    frac = pos - lo
    if x.ndim == 2:
        frac = frac[..., None]
    hi = np.minimum(lo + 1, x.shape[0] - 1)
    return x[lo] * (1.0 - frac) + x[hi] * frac


class MeanEnvelope(NamedTuple):
    """Result of :func:`mean_envelope`."""

    mean: np.ndarray
    """Cycle-averaged envelope, min-max normalised to [0, 1] (Eq. 30), shape (n_points,) or (n_points, C)."""
    std: np.ndarray
    """Across-cycle SD (ddof=0) divided by the mean's peak-to-peak (Eq. 31), same shape."""
    n_cycles: int
    """Number of complete cycles averaged."""


def mean_envelope(signal, strikes, n_points: int = N_POINTS, eps: float = NORM_EPS) -> MeanEnvelope:
    """Cycle-averaged, min-max normalised envelope with its normalised SD (App. A-H, Eqs. 30-31).

    The cycles from :func:`cycle_envelopes` are averaged point by point. With
    ``m`` the raw mean and ``ptp = max(m) - min(m)`` (per channel):
    ``mean = (m - min(m)) / (ptp + eps)`` and ``std = std_cycles / (ptp + eps)``.
    Normalising the mean (not each cycle) keeps relative cycle amplitudes.

    Parameters
    ----------
    signal:
        Samples of shape (T,) or (T, C), e.g. activations in [0, 1].
    strikes:
        Strike sample indices (n,), n >= 2 (at least one complete cycle).
    n_points:
        Points per cycle (default 101).
    eps:
        The small constant of Eqs. 30-31 (> 0, in signal units).

    Returns
    -------
    MeanEnvelope
        ``(mean, std, n_cycles)``; ``mean`` and ``std`` are dimensionless, of shape
        (n_points,) or (n_points, C). A single cycle has ``std`` all zeros.

    Raises
    ------
    ValueError
        As :func:`cycle_envelopes`; also if ``eps`` is not a positive finite number.
    """
    e = float(eps)
    if not math.isfinite(e) or e <= 0.0:
        raise ValueError(f"eps must be a positive finite number, got {eps!r}")
    cycles = cycle_envelopes(signal, strikes, n_points)
    m = cycles.mean(axis=0)
    sd = cycles.std(axis=0)
    lo = m.min(axis=0)
    scale = m.max(axis=0) - lo + e
    return MeanEnvelope((m - lo) / scale, sd / scale, int(cycles.shape[0]))


# -- reference data -------------------------------------------------------------------------
@dataclass(frozen=True)
class EMGReference:
    """Human EMG envelopes on a 101-point gait-cycle time base."""

    muscles: tuple[str, ...]
    """Channel names, in file column order."""
    envelopes: np.ndarray
    """Envelopes, shape (101, K), one column per channel (as stored; usually min-max normalised)."""
    gait_cycle_pct: np.ndarray
    """The time base, shape (101,): 0, 1, ..., 100 (% of the gait cycle)."""

    def __getitem__(self, muscle: str) -> np.ndarray:
        """Envelope of one channel, shape (101,)."""
        try:
            return self.envelopes[:, self.muscles.index(muscle)]
        except ValueError:
            raise KeyError(f"no channel {muscle!r} in the reference; channels: {list(self.muscles)}") from None

    def __contains__(self, muscle: object) -> bool:
        return muscle in self.muscles

    def as_dict(self) -> dict[str, np.ndarray]:
        """Channel name -> envelope (101,) copy."""
        return {m: self.envelopes[:, i].copy() for i, m in enumerate(self.muscles)}


def load_emg_reference(path) -> EMGReference:
    """Read a gait-cycle EMG reference table from CSV.

    Expected layout: a header row ``gait_cycle_pct,<muscle 1>,...,<muscle K>``
    (K >= 1, unique non-empty names) followed by exactly 101 data rows whose
    first column is 0, 1, ..., 100 and whose other columns are finite numbers
    (envelope values, usually min-max normalised to [0, 1]).

    Parameters
    ----------
    path:
        Path to the CSV file (str or Path), e.g.
        ``.../emg_reference/walking_treadmill_santuz.csv``.

    Returns
    -------
    EMGReference
        ``.muscles`` (K names), ``.envelopes`` (101, K) float64 and
        ``.gait_cycle_pct`` (101,).

    Raises
    ------
    ValueError
        On a missing/misnamed first column, no muscle columns, duplicate or
        empty names, rows with the wrong number of fields, a row count other
        than 101, a percentage column other than 0..100, or non-numeric / non-finite values.
    FileNotFoundError
        If ``path`` does not exist.
    """
    p = Path(path)
    with p.open(newline="", encoding="utf-8") as fh:
        rows = [row for row in csv.reader(fh) if row and any(cell.strip() for cell in row)]
    if not rows:
        raise ValueError(f"{p}: empty file, expected a header row and {N_POINTS} data rows")
    header = [h.strip() for h in rows[0]]
    if header[0] != "gait_cycle_pct":
        raise ValueError(f"{p}: first column must be 'gait_cycle_pct', got {header[0]!r}")
    muscles = tuple(header[1:])
    if not muscles:
        raise ValueError(f"{p}: no muscle columns after 'gait_cycle_pct'")
    if any(not m for m in muscles):
        raise ValueError(f"{p}: empty muscle column name in header {header}")
    if len(set(muscles)) != len(muscles):
        raise ValueError(f"{p}: duplicate muscle column names in header {header}")
    data = rows[1:]
    if len(data) != N_POINTS:
        raise ValueError(f"{p}: expected exactly {N_POINTS} data rows (0..100 % gait cycle), got {len(data)}")
    values = np.empty((N_POINTS, len(header)), dtype=np.float64)
    for i, row in enumerate(data):
        if len(row) != len(header):
            raise ValueError(f"{p}: data row {i + 1} has {len(row)} fields, header has {len(header)}")
        for j, cell in enumerate(row):
            try:
                values[i, j] = float(cell)
            except ValueError:
                raise ValueError(
                    f"{p}: non-numeric value {cell!r} in data row {i + 1}, column {header[j]!r}"
                ) from None
    if not np.isfinite(values).all():
        raise ValueError(f"{p}: values must be finite (no NaN/inf)")
    pct = values[:, 0]
    if not np.allclose(pct, np.arange(N_POINTS), rtol=0.0, atol=1e-9):
        raise ValueError(f"{p}: gait_cycle_pct must be 0, 1, ..., 100")
    env = values[:, 1:].copy()
    env.setflags(write=False)
    pct = np.arange(N_POINTS, dtype=np.float64)
    pct.setflags(write=False)
    return EMGReference(muscles=muscles, envelopes=env, gait_cycle_pct=pct)


#: Santuz et al. treadmill-walking channels (right leg) -> right-leg MyoFullBody actuators.
#: A channel mapped to several actuators is compared through the MEAN activation of
#: those actuators at each time step (e.g. the three gluteus medius heads for "ME").
#:
#: ====  =========================  ======================================
#: ch.   muscle                     MyoFullBody actuators
#: ====  =========================  ======================================
#: ME    gluteus medius             glmed1_r, glmed2_r, glmed3_r
#: MA    gluteus maximus            glmax1_r, glmax2_r, glmax3_r
#: FL    tensor fasciae latae       tfl_r
#: RF    rectus femoris             recfem_r
#: VM    vastus medialis            vasmed_r
#: VL    vastus lateralis           vaslat_r
#: ST    semitendinosus             semiten_r
#: BF    biceps femoris             bflh_r (long head; surface EMG sits over it)
#: TA    tibialis anterior          tibant_r
#: PL    peroneus longus            perlong_r
#: GM    gastrocnemius medialis     gasmed_r
#: GL    gastrocnemius lateralis    gaslat_r
#: SO    soleus                     soleus_r
#: ====  =========================  ======================================
SANTUZ_TO_MYOFULLBODY: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "ME": ("glmed1_r", "glmed2_r", "glmed3_r"),
        "MA": ("glmax1_r", "glmax2_r", "glmax3_r"),
        "FL": ("tfl_r",),
        "RF": ("recfem_r",),
        "VM": ("vasmed_r",),
        "VL": ("vaslat_r",),
        "ST": ("semiten_r",),
        "BF": ("bflh_r",),
        "TA": ("tibant_r",),
        "PL": ("perlong_r",),
        "GM": ("gasmed_r",),
        "GL": ("gaslat_r",),
        "SO": ("soleus_r",),
    }
)


# -- whole comparison -------------------------------------------------------------------------
@dataclass(frozen=True)
class EMGSimilarity:
    """Result of :func:`emg_similarity`."""

    per_muscle: Mapping[str, EnvelopeMatch]
    """Reference channel -> (r, shift), in reference column order."""
    mean_r: float
    """``r_EMG``: mean of the per-channel r (Eq. 14)."""
    n_cycles: int
    """Number of complete gait cycles averaged."""
    sim_envelopes: Mapping[str, np.ndarray]
    """Reference channel -> simulated mean envelope (101,), normalised, before shifting."""

    @property
    def r(self) -> dict[str, float]:
        """Reference channel -> r."""
        return {k: v.r for k, v in self.per_muscle.items()}

    @property
    def shift(self) -> dict[str, int]:
        """Reference channel -> shift (points, roll applied to the simulated envelope)."""
        return {k: v.shift for k, v in self.per_muscle.items()}


def emg_similarity(
    activations,
    actuator_names,
    strikes,
    reference,
    mapping: Mapping[str, tuple[str, ...] | list[str] | str] = SANTUZ_TO_MYOFULLBODY,
    on_constant: str = "raise",
) -> EMGSimilarity:
    """Per-muscle and mean EMG-envelope similarity of a rollout (Eqs. 13-14, App. A-H).

    For every reference channel that also appears in ``mapping`` (in reference
    column order): the simulated channel is the mean activation of the mapped
    actuators at each time step; it is cut at ``strikes``, cycle-averaged and
    normalised (:func:`mean_envelope`), then compared with the reference
    envelope by :func:`emg_envelope_similarity`. ``mean_r`` averages r over
    those channels.

    Parameters
    ----------
    activations:
        Muscle activations, shape (T, M), dimensionless in [0, 1].
    actuator_names:
        The M actuator names (e.g. the model's actuator names, in order).
    strikes:
        Heel-strike sample indices into the T axis, shape (n,), n >= 2, of the
        same leg as the reference (right leg for the Santuz data), e.g.
        ``heel_strikes(right_foot_contact)``.
    reference:
        An :class:`EMGReference` or a mapping channel -> envelope (101,).
    mapping:
        Reference channel -> actuator name(s); default :data:`SANTUZ_TO_MYOFULLBODY`.
    on_constant:
        What to do when a simulated channel's envelope is constant (e.g. a
        muscle that never activates), which leaves r undefined: ``"raise"``
        (default) raises ValueError; ``"zero"`` scores it r = 0, shift = 0.

    Returns
    -------
    EMGSimilarity
        ``per_muscle`` (channel -> (r, shift)), ``mean_r``, ``n_cycles`` and the
        simulated envelopes.

    Raises
    ------
    ValueError
        On bad shapes / values (see the helpers), a mapped actuator missing from
        ``actuator_names``, no channel shared by ``reference`` and ``mapping``,
        or a constant simulated envelope with ``on_constant="raise"``.
    """
    if on_constant not in ("raise", "zero"):
        raise ValueError(f"on_constant must be 'raise' or 'zero', got {on_constant!r}")
    a = as_float_array(activations, "activations", ndim=2)
    a = check_unit_interval(a, "activations")
    names = as_names(actuator_names, "actuator_names", length=a.shape[1])
    index = {n: i for i, n in enumerate(names)}

    if isinstance(reference, EMGReference):
        ref = reference.as_dict()
    elif isinstance(reference, Mapping):
        ref = dict(reference)
    else:
        raise ValueError(f"reference must be an EMGReference or a mapping name -> (101,) envelope, "
                         f"got {type(reference).__name__}")

    channels = [c for c in ref if c in mapping]
    if not channels:
        raise ValueError(
            f"no reference channel has a mapping: reference {list(ref)}, mapping {list(mapping)}"
        )
    columns = []
    for c in channels:
        target = mapping[c]
        targets = (target,) if isinstance(target, str) else tuple(target)
        if not targets:
            raise ValueError(f"mapping for channel {c!r} is empty")
        missing = [t for t in targets if t not in index]
        if missing:
            raise ValueError(f"channel {c!r}: actuator(s) {missing} not in actuator_names")
        columns.append(a[:, [index[t] for t in targets]].mean(axis=1))
    sim = np.stack(columns, axis=1)  # (T, n_channels)
    env = mean_envelope(sim, strikes)

    per_muscle: dict[str, EnvelopeMatch] = {}
    sim_env: dict[str, np.ndarray] = {}
    for k, c in enumerate(channels):
        s = env.mean[:, k]
        sim_env[c] = s
        if np.ptp(s) == 0.0:
            if on_constant == "zero":
                per_muscle[c] = EnvelopeMatch(0.0, 0)
                continue
            raise ValueError(f"channel {c!r}: simulated envelope is constant, r is undefined "
                             "(pass on_constant='zero' to score it 0)")
        try:
            per_muscle[c] = emg_envelope_similarity(s, ref[c])
        except ValueError as exc:
            raise ValueError(f"channel {c!r}: {exc}") from None
    mean_r = float(np.mean([m.r for m in per_muscle.values()]))
    return EMGSimilarity(
        per_muscle=MappingProxyType(per_muscle),
        mean_r=mean_r,
        n_cycles=env.n_cycles,
        sim_envelopes=MappingProxyType(sim_env),
    )


__all__ = [
    "N_POINTS",
    "SANTUZ_TO_MYOFULLBODY",
    "EMGReference",
    "EMGSimilarity",
    "EnvelopeMatch",
    "MeanEnvelope",
    "cycle_envelopes",
    "emg_envelope_similarity",
    "emg_similarity",
    "heel_strikes",
    "load_emg_reference",
    "mean_envelope",
]

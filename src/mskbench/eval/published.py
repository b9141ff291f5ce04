"""The MSK-Bench paper's published baseline results, shipped with the package.

Pure Python: no simulator imports, and nothing outside the installed package
is read. Two CSV files under ``mskbench/data`` hold the numbers transcribed
from the paper ("MSK-Bench: Benchmarking Full-Body Musculoskeletal Motor
Control Across Tasks, Control Paradigms, and Physiological Metrics"), digit for
digit as printed; their ``#`` header blocks repeat the column meanings below.

``published_tables.csv`` (``read_published_tables``)
----------------------------------------------------
Tables XIII (stabilization), XIV (locomotion) and XV (interaction): one row per
(task, method) for the four reward-based baselines (DepRL, SAC, PPO,
DynSyn-SAC) on the 22 suite tasks, 88 rows. Columns:

``task``
    Suite id of ``mskbench.catalog.SUITE`` (the paper's ``walk forward`` is
    ``Walk``, ``singlestand`` is ``SingleLegStand``, ``stair`` is ``Stairs``,
    ``steppingstones`` is ``StepStones`` ...); case-insensitive on reading,
    stored in canonical spelling.
``paper_task``
    The task as the paper's tables spell it (provenance only).
``method``
    As the paper writes it.
``activation_cost``
    Mean squared muscle activation over muscles and time (App. A-B3).
``action_<s>``, ``observation_<s>``, ``dynamics_<s>``
    Robustness sweeps (App. A-B2): success rate (%) under that perturbation
    at scale ``s``, on the paper's grids ``SCALES`` (action and dynamics
    0, 0.05, 0.1, 0.15, 0.2; observation 0, 0.02, 0.05, 0.08, 0.1). The
    0-scale point of a sweep is a separately configured evaluation, *not* the
    train-environment success rate.
``max_steps_1e7``
    The tables' "Max Steps (×10⁷)", in units of 1e7 environment steps. The
    tables do not define it further; it is most likely App. A-B5's "Peak
    Efficiency Steps" (the training step with the highest evaluation return).
``train_sr``
    "Train-env. SR (%)": success rate in the training environment with its
    native noise (App. A-B1).
``log10_smooth``
    log10 of the mean squared finite-difference joint angular jerk, in
    rad²/s⁶ before the log (App. A-B4, Eq. 10).

``published_table2.csv`` (``read_published_table2``)
----------------------------------------------------
Table II, the full-suite leaderboard, one row per method in the paper's
column order (DynSyn-SAC, DepRL, SAC, PPO): ``sr_stabilization``,
``sr_locomotion``, ``sr_interaction``, ``sr_all`` (the "Average (22)"),
``robustness_action``, ``robustness_observation``, ``robustness_dynamics``,
``robustness_average`` and ``coverage`` printed as ``k/n``.

Both readers reject a missing, repeated or extra column, a non-number, a
success rate or robustness outside [0, 100] percent, an unknown task id and a
repeated (task, method) or method, naming the file and line. Lines whose first
non-blank character is ``#`` and blank lines are skipped.

As leaderboard input (``published_rows``)
-----------------------------------------
``published_rows`` turns Tables XIII–XV into ``mskbench.eval.leaderboard``
rows: per (task, method) one ``none`` row with ``train_sr`` and five rows per
sweep type. Methods come in Table II's order, so
``compute_leaderboard(published_rows())`` lists them as the paper does; it
reproduces ``published_table2()`` (every success rate, robustness score and
coverage) to the two decimals the paper prints — checked in
``tests/test_published.py``. ``published_table2`` is the printed Table II in
the ``compute_leaderboard`` output shape (values as printed, so to two
decimals), which is what ``mskbench leaderboard --published`` shows.
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import resources

from mskbench.catalog import FAMILIES, SUITE, task_id
from mskbench.eval.leaderboard import ResultRow, check_header

__all__ = [
    "METHODS",
    "SCALES",
    "TABLE2_COLUMNS",
    "TASK_COLUMNS",
    "PublishedSummary",
    "PublishedTaskResult",
    "best_published",
    "published_rows",
    "published_table2",
    "read_published_table2",
    "read_published_tables",
]

#: The four reward-based baselines, in Table II's column order.
METHODS: tuple[str, ...] = ("DynSyn-SAC", "DepRL", "SAC", "PPO")

#: The paper's perturbation grids (App. A-B2), per sweep type.
SCALES: dict[str, tuple[float, ...]] = {
    "action": (0.0, 0.05, 0.1, 0.15, 0.2),
    "observation": (0.0, 0.02, 0.05, 0.08, 0.1),
    "dynamics": (0.0, 0.05, 0.1, 0.15, 0.2),
}

SWEEP_COLUMNS: tuple[str, ...] = tuple(f"{kind}_{s:g}" for kind, grid in SCALES.items() for s in grid)
TASK_COLUMNS: tuple[str, ...] = (
    "task", "paper_task", "method", "activation_cost", *SWEEP_COLUMNS, "max_steps_1e7", "train_sr", "log10_smooth",
)
TABLE2_COLUMNS: tuple[str, ...] = (
    "method", "sr_stabilization", "sr_locomotion", "sr_interaction", "sr_all", "robustness_action",
    "robustness_observation", "robustness_dynamics", "robustness_average", "coverage",
)

TASKS_CSV = "published_tables.csv"
TABLE2_CSV = "published_table2.csv"


@dataclass(frozen=True)
class PublishedTaskResult:
    """One (task, method) row of Tables XIII–XV; sweeps are success rates (%) on ``SCALES[kind]``."""

    task: str
    paper_task: str
    method: str
    activation_cost: float
    action: tuple[float, ...]
    observation: tuple[float, ...]
    dynamics: tuple[float, ...]
    max_steps_1e7: float
    train_sr: float
    log10_smooth: float

    @property
    def family(self) -> str:
        return SUITE[self.task]

    def sweep(self, kind: str) -> tuple[tuple[float, float], ...]:
        """``(scale, success_rate)`` pairs of the ``action``, ``observation`` or ``dynamics`` sweep."""
        if kind not in SCALES:
            raise ValueError(f"unknown sweep {kind!r}; valid sweeps: {', '.join(SCALES)}")
        return tuple(zip(SCALES[kind], getattr(self, kind)))


@dataclass(frozen=True)
class PublishedSummary:
    """One method's column of Table II, as printed."""

    method: str
    sr_stabilization: float
    sr_locomotion: float
    sr_interaction: float
    sr_all: float
    robustness_action: float
    robustness_observation: float
    robustness_dynamics: float
    robustness_average: float
    coverage: tuple[int, int]

    def board_entry(self) -> dict:
        """This column in the per-method shape of ``compute_leaderboard``'s output."""
        success = {fam: getattr(self, f"sr_{fam}") for fam in FAMILIES}
        success["all"] = self.sr_all
        robustness = {kind: getattr(self, f"robustness_{kind}") for kind in (*SCALES, "average")}
        return {"success_rate": success, "coverage": list(self.coverage), "robustness": robustness}


def _lines(path: str | os.PathLike[str] | None, default: str) -> tuple[str, list[str]]:
    """The file's name for messages and its lines; ``None`` reads the copy shipped in ``mskbench/data``."""
    if path is None:
        resource = resources.files("mskbench").joinpath("data", default)
        return f"mskbench/data/{default}", resource.read_text(encoding="utf-8-sig").splitlines()
    with open(path, encoding="utf-8-sig", newline="") as fh:
        return str(path), fh.read().splitlines()


def _records(name: str, lines: list[str], columns: tuple[str, ...]) -> Iterator[tuple[int, dict[str, str]]]:
    """``(line number, {column: cell})`` per data line, after checking the header names exactly ``columns``."""
    header: list[str] | None = None
    for number, line in enumerate(lines, start=1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        cells = [c.strip() for c in next(csv.reader([line]))]
        if header is None:
            check_header(cells, columns, f"{name}: line {number}")
            header = cells
            continue
        if len(cells) != len(header):
            raise ValueError(f"{name}: line {number}: expected {len(header)} fields, got {len(cells)}")
        yield number, dict(zip(header, cells))
    if header is None:
        raise ValueError(f"{name}: no header; expected the columns {','.join(columns)}")


def _number(text: str, column: str, *, percent: bool = False) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ValueError(f"{column} must be a number, got {text!r}") from None
    if not math.isfinite(value):
        raise ValueError(f"{column} must be finite, got {text!r}")
    if percent and not 0.0 <= value <= 100.0:
        raise ValueError(f"{column} must be a percent within [0, 100], got {text!r}")
    return value


def _name(text: str, column: str) -> str:
    if not text:
        raise ValueError(f"{column} must be non-empty")
    return text


def read_published_tables(path: str | os.PathLike[str] | None = None) -> list[PublishedTaskResult]:
    """Tables XIII–XV, in file order (the paper's): the shipped CSV, or ``path`` in the same format."""
    name, lines = _lines(path, TASKS_CSV)
    out: list[PublishedTaskResult] = []
    seen: dict[tuple[str, str], int] = {}
    for number, rec in _records(name, lines, TASK_COLUMNS):
        try:
            row = PublishedTaskResult(
                task=task_id(rec["task"], suite_only=True),
                paper_task=_name(rec["paper_task"], "paper_task"),
                method=_name(rec["method"], "method"),
                activation_cost=_number(rec["activation_cost"], "activation_cost"),
                action=tuple(_number(rec[f"action_{s:g}"], f"action_{s:g}", percent=True)
                             for s in SCALES["action"]),
                observation=tuple(_number(rec[f"observation_{s:g}"], f"observation_{s:g}", percent=True)
                                  for s in SCALES["observation"]),
                dynamics=tuple(_number(rec[f"dynamics_{s:g}"], f"dynamics_{s:g}", percent=True)
                               for s in SCALES["dynamics"]),
                max_steps_1e7=_number(rec["max_steps_1e7"], "max_steps_1e7"),
                train_sr=_number(rec["train_sr"], "train_sr", percent=True),
                log10_smooth=_number(rec["log10_smooth"], "log10_smooth"),
            )
        except ValueError as exc:
            raise ValueError(f"{name}: line {number}: {exc}") from None
        key = (row.task, row.method)
        if key in seen:
            raise ValueError(f"{name}: duplicate (task, method) = {key} at lines {seen[key]} and {number}")
        seen[key] = number
        out.append(row)
    return out


def best_published(task: str, path: str | os.PathLike[str] | None = None) -> dict | None:
    """The paper's method with the highest train SR on ``task`` (ties: the lower activation cost):
    ``{"method", "sr_pct", "activation_cost", "log_smoothness"}``, or None for a task the tables lack."""
    rows = [r for r in read_published_tables(path) if r.task == task]
    if not rows:
        return None
    best = max(rows, key=lambda r: (r.train_sr, -(r.activation_cost or 0.0)))
    return {"method": best.method, "sr_pct": best.train_sr, "activation_cost": best.activation_cost,
            "log_smoothness": best.log10_smooth}


def _coverage(text: str) -> tuple[int, int]:
    k, sep, n = text.partition("/")
    try:
        pair = (int(k), int(n))
    except ValueError:
        pair = (-1, -1)
    if not sep or not 0 <= pair[0] <= pair[1] or pair[1] == 0:
        raise ValueError(f"coverage must be 'k/n' with 0 <= k <= n and n > 0, got {text!r}")
    return pair


def read_published_table2(path: str | os.PathLike[str] | None = None) -> list[PublishedSummary]:
    """Table II as printed, one entry per method in the paper's column order (or ``path``'s order)."""
    name, lines = _lines(path, TABLE2_CSV)
    out: list[PublishedSummary] = []
    seen: dict[str, int] = {}
    for number, rec in _records(name, lines, TABLE2_COLUMNS):
        try:
            values = {c: _number(rec[c], c, percent=True) for c in TABLE2_COLUMNS[1:-1]}
            row = PublishedSummary(method=_name(rec["method"], "method"), coverage=_coverage(rec["coverage"]),
                                   **values)
        except ValueError as exc:
            raise ValueError(f"{name}: line {number}: {exc}") from None
        if row.method in seen:
            raise ValueError(f"{name}: method {row.method!r} repeated at lines {seen[row.method]} and {number}")
        seen[row.method] = number
        out.append(row)
    return out


def published_table2(path: str | os.PathLike[str] | None = None) -> dict[str, dict]:
    """Table II as printed, in the JSON-ready shape ``compute_leaderboard`` returns (methods in the paper's order)."""
    return {row.method: row.board_entry() for row in read_published_table2(path)}


def published_rows(path: str | os.PathLike[str] | None = None) -> list[ResultRow]:
    """Tables XIII–XV as ``compute_leaderboard`` input (see the module docstring).

    Per (task, method): a ``none`` row with the train-environment success rate,
    then the action, observation and dynamics sweep points. Rows are grouped by
    method in Table II's order (any other method after, in file order), tasks in
    file order within a method.
    """
    results = read_published_tables(path)
    order = list(dict.fromkeys([m for m in METHODS if any(r.method == m for r in results)]
                               + [r.method for r in results]))
    rows: list[ResultRow] = []
    for method in order:
        for r in results:
            if r.method != method:
                continue
            rows.append(ResultRow(r.task, r.method, "none", 0.0, r.train_sr))
            for kind in SCALES:
                rows.extend(ResultRow(r.task, r.method, kind, scale, sr) for scale, sr in r.sweep(kind))
    return rows

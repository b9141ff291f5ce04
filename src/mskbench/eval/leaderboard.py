"""Full-suite leaderboard (paper Table II) from per-task success rates.

Pure Python/NumPy: no simulator imports. The input is one CSV row per
(task, method, perturbation, scale) with the measured success rate; the output
is the Table II numbers per method, as JSON-ready data, and a ``rich`` table
laid out like the paper's.

Input (``read_results_csv``)
----------------------------
A CSV file with a header naming exactly the columns
``task,method,perturbation,scale,success_rate`` (any order; whitespace around
names and cells is ignored; a missing, duplicated or extra column is an error,
so that a typo such as ``sucess_rate`` cannot silently drop data). Each row:

``task``
    One of the 22 suite ids of ``mskbench.catalog.SUITE``,
    case-insensitive (``stand``, ``WALK``); stored in canonical spelling.
``method``
    Free text, case-sensitive, non-empty (``DepRL``, ``SAC`` ...).
``perturbation``
    ``none``, ``action``, ``observation`` or ``dynamics``, case-insensitive.
    ``none`` is the train-environment success rate (App. A-B1), which is not
    the zero-scale point of a sweep; the other three are points of a
    robustness sweep (App. A-B2).
``scale``
    Perturbation scale, finite and >= 0. For ``none`` it must be empty or 0
    (stored as 0.0); for the sweeps it is required.
``success_rate``
    Percent, finite, within [0, 100].

A second row with the same (task, method, perturbation, scale) is an error
naming both line numbers.

Definitions (``compute_leaderboard``)
-------------------------------------
Per method, over the tasks it has rows for:

* **Success rate** of a family (stabilization / locomotion / interaction) is
  the arithmetic mean of the ``none`` success rates of that method's tasks in
  that family, each task weighted equally; ``all`` is the same mean over all
  of the method's tasks with a ``none`` row (so it is *not* the mean of the
  three family means unless the families have equal sizes; the paper's
  "Average (22)" is this all-task mean).
* **Tasks averaged** (``tasks_averaged``) is, per family and ``all``, the
  number of the method's tasks with a ``none`` row there: the number of tasks
  each success rate averages. The paper's averages are over the whole suite
  (6, 6, 10 and 22 tasks, :func:`suite_task_counts`); a smaller count is shown
  beside the value, ``"100.00 (2 of 22)"``.
* **Coverage** is ``[number of tasks with none-SR > 0 (strictly), number of
  tasks with a none row]``.
* **Robustness tasks** (``robustness_tasks``) is, per perturbation type, the
  number of tasks whose robustness areas that type's score averages; shown
  beside a score over fewer than the 22 tasks, as for the success rates.
* **Fell after success** (``fell_after_success``) is the share (%) of the
  method's successful train-environment episodes that then fell: success first
  held before the episode's last step and one of the task's termination
  conditions then ended it (:func:`mskbench.eval.episodes.fell_after`), pooled
  over the method's tasks: ``{"percent": 100 * fell / successes, "fell",
  "successes"}``. It needs the counts that a results store gives its ``none``
  rows (``ResultRow.successes`` and ``ResultRow.fell_after_success``); a row
  without them (a CSV row, a store row written before schema 3) with a success
  rate above 0 makes the method's share unknown (``None``), never 0; no
  success at all also leaves it ``None``. ``per_task`` gives each task's
  success rate with the same share. Success here is the paper's rule.
* **Robustness** of a perturbation type: for each task with rows of that
  type, ``mskbench.metrics.robustness_auc`` over the task's scales (sorted
  ascending) and success rates, i.e. the trapezoidal area divided by the
  tested scale range (0–100 for percent); then the mean over those tasks,
  each weighted equally. A task with fewer than 2 scales for a type is an
  error naming task, method and type. Scales are not required to match the
  paper's grid (action/dynamics 0–0.20, observation 0–0.10) nor to be the
  same across tasks. ``average`` is the mean of the three type scores with
  equal weights, and ``None`` unless all three are present.

Where a family or type has no data for a method, the value is ``None``
(``null`` in JSON), never 0. Nothing is rounded here; ``format_leaderboard``
rounds to two decimals for display. Methods appear in order of first
appearance in the rows.

Output shape::

    {method: {"success_rate": {"stabilization": x, "locomotion": x,
                               "interaction": x, "all": x},
              "tasks_averaged": {"stabilization": n, "locomotion": n,
                                 "interaction": n, "all": n},
              "coverage": [n_tasks_with_sr_gt_0, n_tasks],
              "robustness": {"action": x, "observation": x,
                             "dynamics": x, "average": x},
              "robustness_tasks": {"action": n, "observation": n, "dynamics": n},
              "fell_after_success": {"percent": x, "fell": k, "successes": n},
              "per_task": {task: {"success_rate": x,
                                  "fell_after_success": {"percent": x, "fell": k,
                                                         "successes": n}}}}}
"""

from __future__ import annotations

import csv
import math
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from rich.table import Table
from rich.text import Text

from mskbench.catalog import FAMILIES, SUITE, suite_ids, task_id
from mskbench.metrics import robustness_auc

__all__ = [
    "COLUMNS",
    "FAMILIES",
    "PERTURBATIONS",
    "ResultRow",
    "check_header",
    "compute_leaderboard",
    "family_task_counts",
    "format_leaderboard",
    "privileged_columns",
    "published_columns",
    "read_results_csv",
    "robustness_counts",
    "suite_task_counts",
]

COLUMNS: tuple[str, ...] = ("task", "method", "perturbation", "scale", "success_rate")
PERTURBATIONS: tuple[str, ...] = ("none", "action", "observation", "dynamics")
SWEEPS: tuple[str, ...] = ("action", "observation", "dynamics")


@dataclass(frozen=True)
class ResultRow:
    """One measured success rate.

    Validated and canonicalised on construction (task id spelling, lower-case
    perturbation, float scale / success rate); invalid values raise
    ``ValueError``. ``line`` is the CSV line it came from, used in messages only.
    """

    task: str
    method: str
    perturbation: str
    scale: float
    success_rate: float
    #: Of a ``none`` row from a results store: the successful episodes (the paper's rule) and how many of them
    #: then fell; None where unknown (a CSV row, store rows written before schema 3).
    successes: int | None = None
    fell_after_success: int | None = None
    line: int | None = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        task = task_id(str(self.task).strip(), suite_only=True)
        method = str(self.method).strip()
        if not method:
            raise ValueError("method must be a non-empty name")
        pert = str(self.perturbation).strip().lower()
        if pert not in PERTURBATIONS:
            raise ValueError(
                f"unknown perturbation {self.perturbation!r}; valid perturbations: {', '.join(PERTURBATIONS)}"
            )
        scale = _to_float(self.scale, "scale", allow_empty=pert == "none")
        if not math.isfinite(scale) or scale < 0:
            raise ValueError(f"scale must be a finite number >= 0, got {self.scale!r}")
        if pert == "none" and scale != 0:
            raise ValueError(
                f"scale must be empty or 0 for perturbation 'none' (train environment), got {self.scale!r}"
            )
        sr = _to_float(self.success_rate, "success_rate", allow_empty=False)
        if not (math.isfinite(sr) and 0.0 <= sr <= 100.0):
            raise ValueError(
                f"success_rate must be a finite percent within [0, 100], got {self.success_rate!r}"
            )
        for name in ("successes", "fell_after_success"):
            n = getattr(self, name)
            if n is not None and (isinstance(n, bool) or not isinstance(n, int) or n < 0):
                raise ValueError(f"{name} must be a count (an int >= 0) or None, got {n!r}")
        if self.fell_after_success is not None and (self.successes is None
                                                     or self.fell_after_success > self.successes):
            raise ValueError(f"fell_after_success ({self.fell_after_success}) needs successes >= it, "
                             f"got {self.successes!r}")
        object.__setattr__(self, "task", task)
        object.__setattr__(self, "method", method)
        object.__setattr__(self, "perturbation", pert)
        object.__setattr__(self, "scale", scale)
        object.__setattr__(self, "success_rate", sr)

    @property
    def family(self) -> str:
        return SUITE[self.task]

    @property
    def key(self) -> tuple[str, str, str, float]:
        return (self.task, self.method, self.perturbation, self.scale)


def _to_float(value: object, name: str, *, allow_empty: bool) -> float:
    if value is None or (isinstance(value, str) and not value.strip()):
        if allow_empty:
            return 0.0
        raise ValueError(f"{name} is required (empty only allowed for scale with perturbation 'none')")
    if isinstance(value, bool):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        return float(value.strip() if isinstance(value, str) else value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number, got {value!r}") from None


def _where(row: ResultRow) -> str:
    return f"line {row.line}" if row.line is not None else "row"


def _check_duplicates(rows: Iterable[ResultRow]) -> None:
    seen: dict[tuple[str, str, str, float], ResultRow] = {}
    for row in rows:
        first = seen.get(row.key)
        if first is not None:
            raise ValueError(
                f"duplicate (task, method, perturbation, scale) = "
                f"({row.task}, {row.method}, {row.perturbation}, {row.scale:g}) "
                f"at {_where(first)} and {_where(row)}"
            )
        seen[row.key] = row


def check_header(names: list[str], columns: tuple[str, ...], where: str) -> None:
    """A ``ValueError`` (``"<where>: bad header (...)"``) unless ``names`` are exactly ``columns``, once each,
    in any order: it names the missing, unexpected and repeated columns."""
    missing = [c for c in columns if c not in names]
    extra = [n for n in names if n not in columns]
    repeated = sorted({n for n in names if names.count(n) > 1})
    if missing or extra or repeated:
        parts = []
        if missing:
            parts.append(f"missing column(s) {', '.join(missing)}")
        if extra:
            parts.append(f"unexpected column(s) {', '.join(map(repr, extra))}")
        if repeated:
            parts.append(f"repeated column(s) {', '.join(repeated)}")
        raise ValueError(f"{where}: bad header ({'; '.join(parts)}); expected exactly the columns {','.join(columns)}")


def read_results_csv(path: str | os.PathLike[str]) -> list[ResultRow]:
    """Read and validate a results CSV (see the module docstring for the format).

    Raises ``ValueError`` with the line number on the first bad row: missing,
    duplicated or extra columns, unknown task or perturbation, bad scale,
    success rate outside [0, 100] percent, duplicate rows. Blank lines are skipped.
    """
    with open(path, newline="", encoding="utf-8-sig") as fh:
        reader = csv.reader(fh)
        try:
            header = next(reader)
        except StopIteration:
            raise ValueError(f"{path}: empty file; expected a header with columns {','.join(COLUMNS)}") from None
        names = [h.strip() for h in header]
        check_header(names, COLUMNS, str(path))
        index = {name: names.index(name) for name in COLUMNS}
        rows: list[ResultRow] = []
        for cells in reader:
            line = reader.line_num
            if not cells or all(not c.strip() for c in cells):
                continue
            if len(cells) != len(names):
                raise ValueError(f"{path}: line {line}: expected {len(names)} fields, got {len(cells)}")
            values = {name: cells[i] for name, i in index.items()}
            try:
                row = ResultRow(**values, line=line)  # type: ignore[arg-type]
            except ValueError as exc:
                raise ValueError(f"{path}: line {line}: {exc}") from None
            rows.append(row)
    try:
        _check_duplicates(rows)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    return rows


def _mean(values: list[float]) -> float | None:
    return math.fsum(values) / len(values) if values else None


def suite_task_counts() -> dict[str, int]:
    """The suite's task count per family and ``"all"`` (6, 6, 10, 22): what the paper's averages are over."""
    counts = {fam: len(suite_ids(fam)) for fam in FAMILIES}
    counts["all"] = len(SUITE)
    return counts


def _fell_share(rows: list[ResultRow]) -> dict[str, float | int | None]:
    """``{"percent", "fell", "successes"}`` of train-environment rows (see the module docstring): unknown
    (``None``) where a row with successes lacks the counts; ``percent`` None without a success."""
    if any(r.success_rate > 0 and r.fell_after_success is None for r in rows):
        return {"percent": None, "fell": None, "successes": None}
    successes = sum(r.successes or 0 for r in rows)
    fell = sum(r.fell_after_success or 0 for r in rows)
    return {"percent": 100.0 * fell / successes if successes else None, "fell": fell, "successes": successes}


def compute_leaderboard(rows: Iterable[ResultRow]) -> dict[str, dict]:
    """Table II numbers per method (shape and definitions in the module docstring).

    Raises ``ValueError`` on duplicate rows, and when a task has fewer than 2
    scales for a perturbation type it has rows for.
    """
    rows = list(rows)
    for row in rows:
        if not isinstance(row, ResultRow):
            raise TypeError(f"compute_leaderboard expects ResultRow items, got {type(row).__name__}")
    _check_duplicates(rows)

    methods = list(dict.fromkeys(r.method for r in rows))
    board: dict[str, dict] = {}
    for method in methods:
        mine = [r for r in rows if r.method == method]
        # train-environment success rate, one per task
        train_rows = [r for r in mine if r.perturbation == "none"]
        train = {r.task: r.success_rate for r in train_rows}
        success = {
            fam: _mean([sr for task, sr in train.items() if SUITE[task] == fam]) for fam in FAMILIES
        }
        success["all"] = _mean(list(train.values()))
        averaged = {fam: sum(1 for task in train if SUITE[task] == fam) for fam in FAMILIES}
        averaged["all"] = len(train)
        coverage = [sum(1 for sr in train.values() if sr > 0), len(train)]

        robustness: dict[str, float | None] = {}
        robust_tasks: dict[str, int] = {}
        for kind in SWEEPS:
            sweeps: dict[str, list[ResultRow]] = {}
            for r in mine:
                if r.perturbation == kind:
                    sweeps.setdefault(r.task, []).append(r)
            scores = []
            for task, points in sweeps.items():
                if len(points) < 2:
                    raise ValueError(
                        f"task {task}, method {method}, perturbation {kind}: need at least 2 scales "
                        f"for a robustness area, got {len(points)} ({_where(points[0])})"
                    )
                points.sort(key=lambda r: r.scale)
                scores.append(robustness_auc([p.scale for p in points], [p.success_rate for p in points]))
            robustness[kind] = _mean(scores)
            robust_tasks[kind] = len(scores)
        types = [robustness[k] for k in SWEEPS]
        robustness["average"] = None if any(v is None for v in types) else _mean(types)  # type: ignore[arg-type]

        board[method] = {"success_rate": success, "tasks_averaged": averaged, "coverage": coverage,
                         "robustness": robustness, "robustness_tasks": robust_tasks,
                         "fell_after_success": _fell_share(train_rows),
                         "per_task": {r.task: {"success_rate": r.success_rate, "fell_after_success": _fell_share([r])}
                                      for r in sorted(train_rows, key=lambda r: list(SUITE).index(r.task))}}
    return board


def published_columns(table2: Mapping[str, Mapping], rows: Iterable[ResultRow]) -> dict[str, dict]:
    """The paper's Table II columns (:func:`mskbench.eval.published.published_table2`) completed to the
    shape of :func:`compute_leaderboard`'s output: ``tasks_averaged`` and ``robustness_tasks`` from the
    paper's per-task rows (``rows``: Tables XIII–XV, :func:`mskbench.eval.published.published_rows`, same
    method names), the share that fell after success unknown (the paper does not report it) and
    ``per_task`` from the train rows."""
    rows = list(rows)
    out = {}
    for method, entry in table2.items():
        mine = [r for r in rows if r.method == method and r.perturbation == "none"]
        averaged = {fam: sum(1 for r in mine if r.family == fam) for fam in FAMILIES}
        averaged["all"] = len(mine)
        robust_tasks = {kind: len({r.task for r in rows if r.method == method and r.perturbation == kind})
                        for kind in SWEEPS}
        unknown = {"percent": None, "fell": None, "successes": None}
        out[method] = {"success_rate": dict(entry["success_rate"]), "tasks_averaged": averaged,
                       "coverage": list(entry["coverage"]), "robustness": dict(entry["robustness"]),
                       "robustness_tasks": robust_tasks, "fell_after_success": dict(unknown),
                       "per_task": {r.task: {"success_rate": r.success_rate, "fell_after_success": dict(unknown)}
                                    for r in mine}}
    return out


def family_task_counts(rows: Iterable[ResultRow]) -> dict[str, str]:
    """Row-label task counts for ``format_leaderboard``: tasks with a ``none`` row per family and overall.

    A count is ``"6"`` when every method has the same number of such tasks
    there, else the range over methods, ``"3–6"``.
    """
    per_method: dict[str, set[str]] = {}
    for r in rows:
        if r.perturbation == "none":
            per_method.setdefault(r.method, set()).add(r.task)
    out: dict[str, str] = {}
    for fam in (*FAMILIES, "all"):
        counts = [sum(1 for t in tasks if fam == "all" or SUITE[t] == fam) for tasks in per_method.values()]
        if not counts:
            continue
        lo, hi = min(counts), max(counts)
        out[fam] = str(lo) if lo == hi else f"{lo}–{hi}"
    return out


_DASH = "—"


def averaged_note(n: int | tuple[int, int] | None, key: str) -> str:
    """``" (n of N)"`` when a value of row ``key`` averages ``n`` tasks, fewer than the suite's ``N`` there
    (:func:`suite_task_counts` for a family or ``"all"``; all 22 for a robustness row); ``n`` may be a range
    ``(lo, hi)`` (the robustness average over types of different task counts: ``" (1–3 of 22)"``); ``""`` for
    the whole suite or an unknown count."""
    total = suite_task_counts().get(key, len(SUITE))
    if n is None:
        return ""
    lo, hi = n if isinstance(n, tuple) else (n, n)
    if hi >= total and lo >= total:
        return ""
    return f" ({lo} of {total})" if lo == hi else f" ({lo}–{hi} of {total})"


def robustness_counts(entry: Mapping, key: str) -> int | tuple[int, int] | None:
    """The tasks behind an entry's robustness value ``key`` (a type, or ``"average"``: the range over the
    three types); None when the entry does not say (``robustness_tasks`` absent)."""
    counts = entry.get("robustness_tasks")
    if not counts:
        return None
    if key != "average":
        return counts.get(key)
    values = [counts.get(k, 0) for k in SWEEPS]
    return (min(values), max(values)) if min(values) != max(values) else values[0]


def best_marks(values: list[float | None], counts: list[int | tuple[int, int] | None]) -> list[bool]:
    """Which cells of a row are bold: the best value among the cells that average the most tasks (ties all
    bold), so that an average over fewer tasks never outranks one over more (a range of counts compares by
    its low end). ``counts`` None: all equal."""
    counts = [c[0] if isinstance(c, tuple) else c for c in counts]
    known = [c for v, c in zip(values, counts) if v is not None and c is not None]
    most = max(known) if known else None
    eligible = [v for v, c in zip(values, counts) if v is not None and (c is None or c == most)]
    best = max(eligible) if eligible else None
    return [v is not None and v == best and (c is None or c == most) for v, c in zip(values, counts)]


def fell_cell(share: Mapping | None) -> str:
    """A ``fell_after_success`` entry as text: ``"25.00 (1 of 4)"``, ``"—"`` when unknown or without success."""
    if not share or share.get("percent") is None:
        return _DASH
    return f"{share['percent']:.2f} ({share['fell']} of {share['successes']})"


def _row_cells(values: list[float | None], fmt, counts: list[int | tuple[int, int] | None] | None = None,
               key: str | None = None) -> list[Text]:
    """Formatted cells; the best displayed value(s) bold (:func:`best_marks`), None as a dash; with ``counts``
    and the row's ``key``, a value averaged over fewer tasks than the suite's says over how many."""
    shown = [None if v is None else fmt(v) for v in values]
    keys = [None if s is None else float(s) for s in shown]  # compare what is displayed
    counts = counts if counts is not None else [None] * len(values)
    cells = []
    for s, bold, n in zip(shown, best_marks(keys, counts), counts):
        if s is None:
            cells.append(Text(_DASH))
            continue
        note = averaged_note(n, key) if key is not None else ""
        cells.append(Text.assemble((s, "bold" if bold else ""), (note, "dim")))
    return cells


def privileged_columns(methods: Iterable[str], privileged: Iterable[str] | None = None) -> tuple[list[str], set[str]]:
    """The methods in display order — the observation-only ones first, the privileged ones (those in
    ``privileged``; None: the names of :data:`mskbench.policies.PRIVILEGED_POLICIES`) apart after them — and
    the privileged set."""
    from mskbench.policies import PRIVILEGED_POLICIES

    methods = list(methods)
    marked = set(PRIVILEGED_POLICIES if privileged is None else privileged) & set(methods)
    return [m for m in methods if m not in marked] + [m for m in methods if m in marked], marked


#: The caption of a leaderboard with privileged columns.
PRIVILEGED_CAPTION = ("† privileged: reads the simulator (model, contacts, task state) — the expert, hold, or a "
                      "policy acting over the expert — not an observation-only policy")


#: The caption of a leaderboard with values over fewer tasks than the suite's.
AVERAGED_CAPTION = ("(n of N): over the n of the suite's N tasks that the method has results for, not the "
                    "paper's average over all of them")


def format_leaderboard(board: Mapping[str, Mapping], task_counts: Mapping[str, object] | None = None,
                       privileged: Iterable[str] | None = None) -> Table:
    """A ``rich`` table laid out like paper Table II: metric rows, one column per method.

    Rows: SR (%) per family and "Average" over all tasks; the share (%) of successful episodes that
    then fell (over all tasks, "fell of successes" beside it; "—" when unknown or without success;
    never bold: it describes, it does not rank); robustness per perturbation type and "Average";
    coverage "SR > 0" as ``k/n``. Values have two decimals, ``None`` shows as "—". A success rate,
    robustness score or coverage over fewer tasks than the suite has there says over how many
    (``"100.00 (2 of 22)"``, from the entry's ``tasks_averaged`` and ``robustness_tasks``; an entry
    without them, such as the paper's Table II as printed, shows none), and the best value of each row
    is bold among the methods that average the most tasks there (ties on the displayed value are all
    bold; coverage compares the fraction k/n).

    ``task_counts`` gives the "(n)" in the SR row labels, keyed by family and
    ``"all"`` (see ``family_task_counts``). Without it the labels carry the
    suite sizes (6, 6, 10, 22) when every method covers all 22 tasks, and no
    counts otherwise.

    ``privileged`` names the methods that read the simulator (a results store's
    :meth:`~mskbench.eval.store.ResultsStore.privileged_methods`; None: the names of
    :data:`mskbench.policies.PRIVILEGED_POLICIES`): their columns come after the others, marked ``†``.
    """
    methods, marked = privileged_columns(board, privileged)
    suite = suite_task_counts()
    if task_counts is None:
        if methods and all(board[m]["coverage"][1] == len(SUITE) for m in methods):
            task_counts = dict(suite)
        else:
            task_counts = {}

    def label(name: str, key: str) -> str:
        n = task_counts.get(key)
        return f"{name} ({n})" if n is not None else name

    def averaged(m: str, key: str) -> int | None:
        return (board[m].get("tasks_averaged") or {}).get(key)

    keys = (*FAMILIES, "all")
    noted = any(averaged_note(averaged(m, k), k) for m in methods for k in keys
                if board[m]["success_rate"][k] is not None)
    table = Table(title="Full-suite leaderboard (Table II)")
    table.add_column("Group")
    table.add_column("Metric")
    for m in methods:
        table.add_column(f"{m} †" if m in marked else str(m), justify="right")

    def two(v: float) -> str:
        return f"{v:.2f}"

    sr_rows = [(label(f.capitalize(), f), f) for f in FAMILIES] + [(label("Average", "all"), "all")]
    for i, (name, key) in enumerate(sr_rows):
        values = [board[m]["success_rate"][key] for m in methods]
        counts: list[int | tuple[int, int] | None] = [averaged(m, key) for m in methods]
        table.add_row("SR (%) ↑" if i == 0 else "", name, *_row_cells(values, two, counts, key),
                      end_section=i == len(sr_rows) - 1)
    table.add_row("Then fell (%)", "of successes", *[Text(fell_cell(board[m].get("fell_after_success")))
                                                     for m in methods], end_section=True)
    rob_rows = [(k.capitalize(), k) for k in SWEEPS] + [("Average", "average")]
    for i, (name, key) in enumerate(rob_rows):
        values = [board[m]["robustness"][key] for m in methods]
        counts = [robustness_counts(board[m], key) for m in methods]
        noted = noted or any(averaged_note(n, key) for n, v in zip(counts, values) if v is not None)
        table.add_row("Robust. ↑" if i == 0 else "", name, *_row_cells(values, two, counts, key),
                      end_section=i == len(rob_rows) - 1)

    covs = [board[m]["coverage"] for m in methods]
    fractions = [k / n if n else None for k, n in covs]
    runs = [n for _k, n in covs]
    cells = [Text.assemble((f"{k}/{n}", "bold" if bold else ""), (averaged_note(n, "all"), "dim"))
             for (k, n), bold in zip(covs, best_marks(fractions, runs))]
    table.add_row("Coverage ↑", "SR > 0", *cells)
    notes = ([AVERAGED_CAPTION] if noted else []) + ([PRIVILEGED_CAPTION] if marked else [])
    table.caption = ". ".join(notes) or None
    return table

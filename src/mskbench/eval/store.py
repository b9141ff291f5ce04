"""The results store: one SQLite file of per-episode records.

Schema version 4 (``PRAGMA user_version = 4``; table ``meta`` repeats it):

``episodes`` — one row per unit, primary key
``(method, task, perturbation, scale, seed)``:

==================  =======  ==================================================
column              type     meaning
==================  =======  ==================================================
method              TEXT     policy / method name
task                TEXT     task id
perturbation        TEXT     none | action | observation | dynamics
scale               REAL     perturbation scale (0 for none)
seed                INTEGER  episode seed
success             INTEGER  success by the paper's rule (0/1): Table XII, or
                             the task's native solved signal seen when it
                             counts (App. A-B1; mskbench.tasks.base.paper_success)
episode_return      REAL     undiscounted return
length              INTEGER  control steps
termination         TEXT     termination condition, time_limit,
                             physics_unstable, contact_overflow (batched)
                             or native_solved (the evaluator ended the
                             episode at a counted native solved signal)
activation_cost     REAL     Eq. 7 over the episode
smoothness          REAL     Eq. 10, log10 mean squared jerk (control-step Δt)
recruitment         TEXT     JSON {family: activation mass} (Eq. 35)
emg                 TEXT     JSON {"mean_r": x, "per_muscle": {...}} or
                             {"absent": reason}
wall_time_s         REAL     seconds the episode took
mskbench_version    TEXT     version that produced the row
created_at          TEXT     UTC ISO-8601 time of writing
success_table_xii   INTEGER  the Table XII criterion alone (0/1)
solved_native_seen  INTEGER  the native solved flag was raised at some step
                             (0/1; NULL for rows written by schema 1)
success_step        INTEGER  the first control step (1-based) at which the
                             paper's success held (Table XII so far, or a
                             counted native signal); NULL when it never held
                             or, for rows written by schema 1 or 2, unknown
fell_after_success  INTEGER  the episode succeeded, success first held before
                             its last step and one of the task's termination
                             conditions then ended it (not time_limit,
                             native_solved, physics_unstable or
                             contact_overflow) (0/1; NULL = unknown: rows
                             written by schema 1 or 2)
steps_taken         INTEGER  gait progress (mskbench.eval.episodes): foot
                             touchdowns of either foot (load hysteresis 1-5 %
                             of body weight, >= 0.1 s in the air between)
distance_m          REAL     horizontal displacement of the pelvis from the
                             first physical step to the last (m)
forward_distance_m  REAL     its component along the pelvis's heading at the
                             first step (m; negative: backwards)
forward_speed_mps   REAL     forward_distance_m over the time between those
                             steps (m/s)
==================  =======  ==================================================

The four gait progress columns are NULL for a body without feet and a pelvis, an episode with fewer
than two physical steps, and rows written by schema 1 to 3.

``meta`` also records, per method written since it could, whether the method is *privileged* — its
policy reads the simulator (it says so: ``privileged = True``, as the expert, ``hold`` and a policy
trained over the expert do): key ``privileged:METHOD``, value ``1`` or ``0``; once ``1``, it stays.
A method without that key (written by an older mskbench) is privileged when its name is one of
:data:`mskbench.policies.PRIVILEGED_POLICIES` (:meth:`ResultsStore.privileged_methods`). No schema
change: older versions read such a store and ignore those keys.

Older stores are upgraded in place when opened, in one transaction, one version at a time; no row
is changed otherwise and none is lost:

* schema 1 (written before native signals existed; its ``success`` was the Table XII criterion) to
  2: ``success_table_xii`` and ``solved_native_seen`` are added, ``success_table_xii`` copied from
  ``success`` and ``solved_native_seen`` left NULL;
* schema 2 to 3: ``success_step`` and ``fell_after_success`` are added, NULL (unknown) in every
  existing row;
* schema 3 to 4: ``steps_taken``, ``distance_m``, ``forward_distance_m`` and ``forward_speed_mps`` are
  added, NULL (unknown) in every existing row.

Each record is written in its own transaction by the single writer (the
process running the sweep), so a killed sweep leaves only complete units and
a rerun skips them.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Iterator
from contextlib import closing
from datetime import datetime, timezone
from pathlib import Path

from mskbench.eval.protocol import Unit

SCHEMA_VERSION = 4
KEY_COLUMNS = ("method", "task", "perturbation", "scale", "seed")
COLUMNS = KEY_COLUMNS + ("success", "episode_return", "length", "termination", "activation_cost",
                         "smoothness", "recruitment", "emg", "wall_time_s", "mskbench_version", "created_at",
                         "success_table_xii", "solved_native_seen", "success_step", "fell_after_success",
                         "steps_taken", "distance_m", "forward_distance_m", "forward_speed_mps")
JSON_COLUMNS = ("recruitment", "emg")
BOOL_COLUMNS = ("success", "success_table_xii", "solved_native_seen", "fell_after_success")
#: The ``meta`` key prefix of a method's privileged flag (``privileged:METHOD``).
PRIVILEGED_KEY = "privileged:"
#: Success labels a store can report (``success_rates(label=...)``) and the column of each.
SUCCESS_LABELS = {"paper": "success", "table-xii": "success_table_xii"}

_DDL = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS episodes (
    method TEXT NOT NULL,
    task TEXT NOT NULL,
    perturbation TEXT NOT NULL,
    scale REAL NOT NULL,
    seed INTEGER NOT NULL,
    success INTEGER NOT NULL CHECK (success IN (0, 1)),
    episode_return REAL NOT NULL,
    length INTEGER NOT NULL,
    termination TEXT NOT NULL,
    activation_cost REAL,
    smoothness REAL,
    recruitment TEXT,
    emg TEXT,
    wall_time_s REAL,
    mskbench_version TEXT,
    created_at TEXT NOT NULL,
    success_table_xii INTEGER CHECK (success_table_xii IN (0, 1)),
    solved_native_seen INTEGER CHECK (solved_native_seen IN (0, 1)),
    success_step INTEGER CHECK (success_step >= 1),
    fell_after_success INTEGER CHECK (fell_after_success IN (0, 1)),
    steps_taken INTEGER CHECK (steps_taken >= 0),
    distance_m REAL CHECK (distance_m >= 0),
    forward_distance_m REAL,
    forward_speed_mps REAL,
    PRIMARY KEY (method, task, perturbation, scale, seed)
);
"""

#: Schema 1 -> 2: the two success labels beside ``success`` (which was the Table XII criterion).
_UPGRADE_1_TO_2 = """
ALTER TABLE episodes ADD COLUMN success_table_xii INTEGER CHECK (success_table_xii IN (0, 1));
ALTER TABLE episodes ADD COLUMN solved_native_seen INTEGER CHECK (solved_native_seen IN (0, 1));
UPDATE episodes SET success_table_xii = success;
"""

#: Schema 2 -> 3: when success first held and whether the episode then fell (NULL: unknown for older rows).
_UPGRADE_2_TO_3 = """
ALTER TABLE episodes ADD COLUMN success_step INTEGER CHECK (success_step >= 1);
ALTER TABLE episodes ADD COLUMN fell_after_success INTEGER CHECK (fell_after_success IN (0, 1));
"""

#: Schema 3 -> 4: the gait progress (NULL: unknown for older rows).
_UPGRADE_3_TO_4 = """
ALTER TABLE episodes ADD COLUMN steps_taken INTEGER CHECK (steps_taken >= 0);
ALTER TABLE episodes ADD COLUMN distance_m REAL CHECK (distance_m >= 0);
ALTER TABLE episodes ADD COLUMN forward_distance_m REAL;
ALTER TABLE episodes ADD COLUMN forward_speed_mps REAL;
"""

#: The upgrade from each older schema version to the next.
_UPGRADES = {1: _UPGRADE_1_TO_2, 2: _UPGRADE_2_TO_3, 3: _UPGRADE_3_TO_4}


class StoreError(RuntimeError):
    pass


class ResultsStore:
    """Open (creating if needed) a results store at ``path``.

    An existing file is checked read-only first: one that is not an intact store this
    version reads raises :class:`StoreError` naming it, and is left untouched.
    """

    def __init__(self, path: str | Path):
        self.path = Path(path)
        if self.path.is_dir():
            raise StoreError(f"results store path {self.path} is a directory; give a file path")
        state = None
        if self.path.exists():
            with closing(sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, timeout=60.0)) as ro:
                state = self._inspect(ro)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._conn = sqlite3.connect(str(self.path), timeout=60.0)
        try:
            # None: a new file, or one whose last write a kill interrupted (rolled back by opening it here).
            state = state or self._inspect(self._conn)
            if state is not None and state[0] in _UPGRADES and state[1] == {"meta", "episodes"}:
                with self._conn:  # an older store: every upgrade to this version, in one transaction
                    self._conn.execute("BEGIN IMMEDIATE")  # DDL too; a second opener waits, then finds it done
                    current = self._conn.execute("PRAGMA user_version").fetchone()[0]
                    for version in range(current, SCHEMA_VERSION):
                        for statement in filter(str.strip, _UPGRADES[version].split(";")):
                            self._conn.execute(statement)
                    self._conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                    self._conn.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'",
                                       (str(SCHEMA_VERSION),))
            elif state != (SCHEMA_VERSION, {"meta", "episodes"}):  # new or empty: create the schema
                with self._conn:
                    self._conn.executescript(_DDL)
                    self._conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                    self._conn.execute("INSERT OR IGNORE INTO meta VALUES ('schema_version', ?)",
                                       (str(SCHEMA_VERSION),))
        except Exception:
            self._conn.close()
            raise

    def _inspect(self, conn: sqlite3.Connection) -> tuple[int, set[str]] | None:
        """``(schema version, tables)`` of the file behind ``conn``, once it is known to be intact and a
        store this version reads (else StoreError). None when a read-only ``conn`` cannot read it
        because a killed writer left a transaction that only a writer can roll back."""
        def refuse(problem: str) -> StoreError:
            return StoreError(f"results store {self.path} {problem}; the file was left unchanged: "
                              "pass another store file, or move this one away")

        try:
            conn.execute("BEGIN")  # one read transaction: no writer commits in between
            try:
                problems = [r[0] for r in conn.execute("PRAGMA quick_check")]
                version = conn.execute("PRAGMA user_version").fetchone()[0]
                tables = {r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")}
                expected = conn.execute("PRAGMA page_count").fetchone()[0] * \
                    conn.execute("PRAGMA page_size").fetchone()[0]
                size = self.path.stat().st_size
            finally:
                conn.rollback()
        except sqlite3.DatabaseError as exc:
            if getattr(exc, "sqlite_errorname", None) == "SQLITE_READONLY_ROLLBACK":
                return None
            raise refuse(f"is not an intact SQLite database ({exc})") from None
        if problems != ["ok"]:
            raise refuse(f"is not an intact SQLite database ({problems[0]})")
        if size != expected:
            raise refuse(f"is truncated ({size} bytes; its header says {expected})")
        if version > SCHEMA_VERSION:
            raise StoreError(f"{self.path} has schema version {version}; this mskbench reads up to "
                             f"{SCHEMA_VERSION} — upgrade mskbench")
        if tables - {"meta", "episodes"}:
            raise refuse(f"is an SQLite file but not an mskbench results store (tables: {sorted(tables)})")
        return version, tables

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> "ResultsStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- writing ----------------------------------------------------------------------
    def write(self, record: dict) -> bool:
        """Write one unit's record atomically; False if that unit is already stored. A record's
        ``privileged`` (bool) is recorded for its method in ``meta`` (see the module docstring)."""
        from mskbench._version import __version__

        row = dict(record)
        privileged = row.pop("privileged", None)
        missing = [c for c in KEY_COLUMNS + ("success", "episode_return", "length", "termination") if c not in row]
        if missing:
            raise ValueError(f"record lacks {missing}")
        row.setdefault("mskbench_version", __version__)
        row.setdefault("created_at", datetime.now(timezone.utc).isoformat(timespec="seconds"))
        for c in JSON_COLUMNS:
            if row.get(c) is not None and not isinstance(row[c], str):
                row[c] = json.dumps(row[c], sort_keys=True)
        row["success"] = int(bool(row["success"]))
        row.setdefault("success_table_xii", row["success"])
        for c in ("success_table_xii", "solved_native_seen", "fell_after_success"):
            if row.get(c) is not None:
                row[c] = int(bool(row[c]))
        for c in ("success_step", "steps_taken"):
            if row.get(c) is not None:
                row[c] = int(row[c])
        for c in ("distance_m", "forward_distance_m", "forward_speed_mps"):
            if row.get(c) is not None:
                row[c] = float(row[c])
        values = [row.get(c) for c in COLUMNS]
        with self._conn:
            cur = self._conn.execute(
                f"INSERT OR IGNORE INTO episodes ({', '.join(COLUMNS)}) VALUES ({', '.join('?' * len(COLUMNS))})",
                values)
            if privileged is not None:
                self._conn.execute("INSERT INTO meta VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET "
                                   "value = max(value, excluded.value)",
                                   (PRIVILEGED_KEY + str(row["method"]), str(int(bool(privileged)))))
        return cur.rowcount == 1

    # -- reading ----------------------------------------------------------------------
    def done_keys(self) -> set[tuple]:
        rows = self._conn.execute(f"SELECT {', '.join(KEY_COLUMNS)} FROM episodes")
        return {(m, t, p, float(s), int(seed)) for m, t, p, s, seed in rows}

    def missing(self, units: Iterable[Unit]) -> list[Unit]:
        done = self.done_keys()
        return [u for u in units if u.key not in done]

    def records(self, **where) -> list[dict]:
        """Episode records, optionally filtered by equality on columns, in key order."""
        for k in where:
            if k not in COLUMNS:
                raise ValueError(f"unknown column {k!r}; columns: {', '.join(COLUMNS)}")
        clause = " AND ".join(f"{k} = ?" for k in where)
        sql = f"SELECT {', '.join(COLUMNS)} FROM episodes"
        if clause:
            sql += f" WHERE {clause}"
        sql += f" ORDER BY {', '.join(KEY_COLUMNS)}"
        out = []
        for row in self._conn.execute(sql, list(where.values())):
            rec = dict(zip(COLUMNS, row))
            for c in BOOL_COLUMNS:
                if rec[c] is not None:
                    rec[c] = bool(rec[c])
            for c in JSON_COLUMNS:
                if rec[c] is not None:
                    rec[c] = json.loads(rec[c])
            out.append(rec)
        return out

    def success_rates(self, label: str = "paper") -> Iterator[tuple[str, str, str, float, float, int]]:
        """(task, method, perturbation, scale, success % , episodes) per setting, success by ``label``:
        ``"paper"`` (Table XII or a counted native signal) or ``"table-xii"`` (the criterion alone)."""
        if label not in SUCCESS_LABELS:
            raise ValueError(f"unknown success label {label!r}; valid: {', '.join(SUCCESS_LABELS)}")
        sql = (f"SELECT task, method, perturbation, scale, 100.0 * AVG({SUCCESS_LABELS[label]}), COUNT(*) "
               "FROM episodes "
               "GROUP BY task, method, perturbation, scale ORDER BY method, task, perturbation, scale")
        yield from self._conn.execute(sql)

    def fell_after_success_counts(self, label: str = "paper") -> dict[tuple[str, str, str, float],
                                                                      tuple[int, int | None]]:
        """Per (task, method, perturbation, scale): the successful episodes (success by ``label``, as
        :meth:`success_rates`) and how many of them then fell (``fell_after_success``); that count is None
        (unknown) when any successful episode's flag is NULL (a row written before schema 3)."""
        if label not in SUCCESS_LABELS:
            raise ValueError(f"unknown success label {label!r}; valid: {', '.join(SUCCESS_LABELS)}")
        column = SUCCESS_LABELS[label]
        sql = (f"SELECT task, method, perturbation, scale, COALESCE(SUM({column} = 1), 0), "
               f"COALESCE(SUM({column} = 1 AND fell_after_success = 1), 0), "
               f"COALESCE(SUM({column} = 1 AND fell_after_success IS NULL), 0) "
               "FROM episodes GROUP BY task, method, perturbation, scale")
        return {(t, m, p, float(s)): (int(n), None if unknown else int(fell))
                for t, m, p, s, n, fell, unknown in self._conn.execute(sql)}

    def privileged_methods(self) -> list[str]:
        """The stored methods that are privileged: recorded so in ``meta``; a method without a record (written
        by an older mskbench) when its name is one of :data:`mskbench.policies.PRIVILEGED_POLICIES`."""
        from mskbench.policies import PRIVILEGED_POLICIES

        recorded = {k[len(PRIVILEGED_KEY):]: v == "1" for k, v in
                    self._conn.execute("SELECT key, value FROM meta WHERE substr(key, 1, ?) = ?",
                                       (len(PRIVILEGED_KEY), PRIVILEGED_KEY))}
        methods = [m for (m,) in self._conn.execute("SELECT DISTINCT method FROM episodes ORDER BY method")]
        return [m for m in methods if recorded.get(m, m in PRIVILEGED_POLICIES)]

    def __len__(self) -> int:
        return self._conn.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]

"""Success and what followed (issue 47, item 3): the step at which an episode's success first held and whether
it then fell, in the episode record (CPU loop; the batched evaluator's parity is in tests/test_batched_eval.py),
the results store (schema 3, and older stores upgraded in place), ``mskbench eval`` and ``mskbench leaderboard``
(the report's: tests/test_report.py)."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest
from click.testing import CliRunner

from mskbench.cli import main
from mskbench.envs import MSKEnv
from mskbench.eval import store as store_module
from mskbench.eval.episodes import episode_record, fell_after, run_episode, success_onset
from mskbench.eval.protocol import load_policy
from mskbench.eval.store import SCHEMA_VERSION, ResultsStore
from mskbench.eval.summary import fell_after_success_share, summarize_eval
from mskbench.tasks import REGISTRY
from mskbench.tasks.stand import Stand

MUSCLES = [f"m{i}" for i in range(416)]


class _SucceedsThenFalls(Stand):
    """A 30-step Stand whose Table XII criterion holds from step 3 on: passive bodies succeed, then tip over
    (``tilted`` at step 20); zero stands to the time limit."""

    horizon = 30

    def success(self, ts, steps, terminated, xp):
        return xp.asarray(steps) >= 3


def _traces(n: int):
    return np.full((n, 416), 0.5), np.zeros((n, 122)), np.zeros(n)


# -- the rule ---------------------------------------------------------------------------------------
def test_success_onset_is_the_first_step_of_table_xii_or_a_counted_native_signal():
    counted = next(cls for cls in REGISTRY.values() if cls.native_counts())
    degenerate = REGISTRY["Walk"]  # its native flag is raised by any policy: it does not count
    assert not degenerate.native_counts()
    xii = np.array([False, False, False, True, True, False])
    native = np.array([False, True, False, False, False, False])
    assert success_onset(counted, xii, native, 6) == 2  # the native flag, counted, came first
    assert success_onset(degenerate, xii, native, 6) == 4  # not counted: Table XII decides
    assert success_onset(None, xii, native, 6) == 4  # an unregistered task: no native signal counts
    assert success_onset(counted, xii, np.zeros(6, bool), 3) is None  # only the steps taken count
    assert success_onset(degenerate, np.zeros(6, bool), native, 6) is None


@pytest.mark.parametrize(("success", "onset", "length", "termination", "fell"), [
    (True, 3, 20, "tilted", True),  # succeeded at step 3, then a termination condition ended it
    (True, 20, 20, "tilted", False),  # success first held at the last step: nothing came after it
    (True, 3, 30, "time_limit", False),  # the time limit is not a fall
    (True, 3, 5, "native_solved", False),  # the evaluator stopped at a counted native signal
    (True, 3, 20, "physics_unstable", False),  # non-physical ends
    (True, 3, 20, "contact_overflow", False),
    (False, 3, 20, "tilted", False),  # held at step 3 but the episode did not succeed by its end
    (False, None, 20, "tilted", False),
])
def test_fell_after_needs_success_before_the_last_step_and_a_task_termination(success, onset, length,
                                                                               termination, fell):
    assert fell_after(success, onset, length, termination) is fell


def test_episode_record_fills_both_from_the_traces_and_leaves_them_unknown_without():
    acts, qvels, heel = _traces(20)
    success = np.arange(1, 21) >= 3
    rec = episode_record("Stand", 0, 1.0, 20, True, "tilted", acts, qvels, heel, 0.01, MUSCLES,
                         success_trace=success, native_trace=np.zeros(20, bool))
    assert (rec.success_step, rec.fell_after_success) == (3, True)
    assert rec.as_dict()["success_step"] == 3 and rec.as_dict()["fell_after_success"] is True
    old = episode_record("Stand", 0, 1.0, 20, True, "tilted", acts, qvels, heel, 0.01, MUSCLES)
    assert (old.success_step, old.fell_after_success) == (None, None)  # no traces: unknown, not "never"
    never = episode_record("Stand", 0, 1.0, 20, False, "tilted", acts, qvels, heel, 0.01, MUSCLES,
                           success_trace=np.zeros(20, bool), native_trace=np.zeros(20, bool))
    assert (never.success_step, never.fell_after_success) == (None, False)


def test_the_cpu_episode_loop_records_when_success_held_and_whether_the_body_then_fell():
    env = MSKEnv(_SucceedsThenFalls())
    try:
        fell = run_episode(env, load_policy("passive", env, 0), 0)
        stood = run_episode(env, load_policy("zero", env, 0), 0)
    finally:
        env.close()
    assert (fell.success, fell.success_step, fell.termination, fell.fell_after_success) == (True, 3, "tilted", True)
    assert fell.length > 3
    assert (stood.success, stood.success_step, stood.termination, stood.fell_after_success) == (
        True, 3, "time_limit", False)


# -- the store --------------------------------------------------------------------------------------
def _record(seed: int, success: bool, fell: bool | None, method: str = "m", task: str = "Squat", **extra) -> dict:
    rec = {"method": method, "task": task, "perturbation": "none", "scale": 0.0, "seed": seed, "success": success,
           "episode_return": 1.0, "length": 80, "termination": "kneeling" if fell or not success else "time_limit",
           "emg": {"absent": "no EMG reference given"}, "activation_cost": None, "smoothness": None, **extra}
    if fell is not None:
        rec.update(success_step=40 if success else None, fell_after_success=fell)
    return rec


_V2_DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE episodes (method TEXT NOT NULL, task TEXT NOT NULL, perturbation TEXT NOT NULL, scale REAL NOT NULL,
    seed INTEGER NOT NULL, success INTEGER NOT NULL CHECK (success IN (0, 1)), episode_return REAL NOT NULL,
    length INTEGER NOT NULL, termination TEXT NOT NULL, activation_cost REAL, smoothness REAL, recruitment TEXT,
    emg TEXT, wall_time_s REAL, mskbench_version TEXT, created_at TEXT NOT NULL,
    success_table_xii INTEGER CHECK (success_table_xii IN (0, 1)),
    solved_native_seen INTEGER CHECK (solved_native_seen IN (0, 1)),
    PRIMARY KEY (method, task, perturbation, scale, seed));
INSERT INTO meta VALUES ('schema_version', '2');
INSERT INTO meta VALUES ('privileged:expert', '1');
INSERT INTO episodes VALUES ('expert', 'Squat', 'none', 0.0, 0, 1, 5.0, 900, 'kneeling', 0.1, 2.0, NULL, NULL, 1.0,
    '0.1.0', '2026-01-01T00:00:00+00:00', 1, 0);
INSERT INTO episodes VALUES ('expert', 'Squat', 'none', 0.0, 1, 0, 2.0, 40, 'kneeling', 0.1, 2.0, NULL, NULL, 1.0,
    '0.1.0', '2026-01-01T00:00:00+00:00', 0, 0);
PRAGMA user_version = 2;
"""


def _v2_store(path):
    with sqlite3.connect(path) as conn:
        conn.executescript(_V2_DDL)
    return path


def test_store_keeps_success_step_and_fell_after_success(tmp_path):
    with ResultsStore(tmp_path / "r.db") as store:
        assert store.write(_record(0, True, True))
        assert store.write(_record(1, True, False))
        assert store.write(_record(2, False, False))
        recs = store.records()
        assert [(r["success_step"], r["fell_after_success"]) for r in recs] == [(40, True), (40, False), (None, False)]
        assert store.fell_after_success_counts() == {("Squat", "m", "none", 0.0): (2, 1)}
        with pytest.raises(ValueError, match="valid: paper, table-xii"):
            store.fell_after_success_counts("native")
    with sqlite3.connect(tmp_path / "r.db") as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4


def test_a_schema_2_store_is_upgraded_in_place_with_unknown_for_its_rows(tmp_path):
    path = _v2_store(tmp_path / "old.db")
    with ResultsStore(path) as store:
        old = store.records()
        assert [(r["seed"], r["success"], r["termination"], r["success_step"], r["fell_after_success"])
                for r in old] == [(0, True, "kneeling", None, None), (1, False, "kneeling", None, None)]
        assert store.privileged_methods() == ["expert"]
        assert store.write(_record(2, True, True, method="expert"))  # new rows carry the new columns
        assert store.fell_after_success_counts()[("Squat", "expert", "none", 0.0)] == (2, None)  # one unknown
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)
        assert conn.execute("SELECT COUNT(*) FROM episodes").fetchone()[0] == 3
    with ResultsStore(path) as store:  # reopening an upgraded store changes nothing
        assert len(store) == 3


def test_a_failed_upgrade_leaves_the_old_store_as_it_was(tmp_path, monkeypatch):
    """The upgrade is one transaction, DDL included: a failure half-way adds no column and keeps schema 2."""
    path = _v2_store(tmp_path / "old.db")
    before = path.read_bytes()
    broken = store_module._UPGRADE_2_TO_3 + "\nALTER TABLE no_such_table ADD COLUMN x INTEGER;\n"
    monkeypatch.setitem(store_module._UPGRADES, 2, broken)
    with pytest.raises(sqlite3.OperationalError, match="no_such_table"):
        ResultsStore(path)
    with sqlite3.connect(path) as conn:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == 2
        columns = [r[1] for r in conn.execute("PRAGMA table_info(episodes)")]
        assert "success_step" not in columns and "fell_after_success" not in columns
    assert path.read_bytes() == before
    monkeypatch.undo()
    with ResultsStore(path) as store:  # and the real upgrade then succeeds
        assert len(store) == 2 and store.records()[0]["fell_after_success"] is None


# -- summaries ----------------------------------------------------------------------------------------
def test_eval_summary_gives_the_share_of_successes_that_then_fell():
    recs = [_record(0, True, True), _record(1, True, False), _record(2, True, True), _record(3, False, False),
            _record(4, False, False, task="Stand"), _record(5, True, None, task="Reach")]
    summary = summarize_eval(recs)
    assert summary["Squat"]["fell_after_success"] == {"percent": pytest.approx(200 / 3), "fell": 2, "successes": 3}
    assert summary["Stand"]["fell_after_success"] == {"percent": None, "fell": 0, "successes": 0}  # no success
    assert summary["Reach"]["fell_after_success"] == {"percent": None, "fell": None, "successes": 1}  # unknown
    assert fell_after_success_share([]) == {"percent": None, "fell": 0, "successes": 0}


def test_eval_table_shows_the_share_and_says_once_why_emg_is_absent(tmp_path):
    store = tmp_path / "e.db"
    with ResultsStore(store) as s:  # stored already: the command reruns nothing and summarises them
        for seed in range(2):
            s.write(_record(seed, True, seed == 0, method="passive", task="Stand"))
            s.write(_record(seed, False, False, method="passive", task="Hurdle"))
    args = ["eval", "--task", "Stand,Hurdle", "--policy", "passive", "--episodes", "2", "--store", str(store)]
    out = CliRunner().invoke(main, [*args, "--json"])
    assert out.exit_code == 0, out.output
    summary = json.loads(out.stdout)
    assert summary["Stand"]["fell_after_success"] == {"percent": 50.0, "fell": 1, "successes": 2}
    assert summary["Hurdle"]["fell_after_success"]["percent"] is None
    table = CliRunner().invoke(main, args, terminal_width=200)
    assert table.exit_code == 0, table.output
    assert "then fell %" in table.output and "50 (1/2)" in table.output
    assert table.output.count("no EMG reference given") == 1
    assert "EMG r absent (all 2 tasks): no EMG reference given" in table.output


# -- the leaderboard ----------------------------------------------------------------------------------
def test_leaderboard_gives_the_share_per_method_and_task_and_unknown_for_csv_and_old_rows(tmp_path):
    store = tmp_path / "r.db"
    with ResultsStore(store) as s:
        for seed in range(4):  # Squat: 4 successes, 3 then fell; Stand: 2 successes, none fell
            s.write(_record(seed, True, seed < 3, method="expert", privileged=True))
            s.write(_record(seed, seed < 2, False, method="expert", task="Stand"))
        s.write(_record(0, True, None, method="older", task="Stand"))  # written without the flag: unknown
    csv = tmp_path / "theirs.csv"
    csv.write_text("task,method,perturbation,scale,success_rate\nstand,DepRL,none,,50\n")
    out = CliRunner().invoke(main, ["leaderboard", "--store", str(store), "--from", str(csv), "--json"])
    assert out.exit_code == 0, out.output
    board = json.loads(out.output)
    expert = board["expert"]
    assert expert["fell_after_success"] == {"percent": 50.0, "fell": 3, "successes": 6}
    assert expert["per_task"]["Squat"] == {"success_rate": 100.0,
                                           "fell_after_success": {"percent": 75.0, "fell": 3, "successes": 4}}
    assert expert["per_task"]["Stand"]["fell_after_success"]["percent"] == 0.0
    assert expert["success_rate"]["all"] == 75.0  # Table II's number: the paper's rule, unchanged
    assert expert["tasks_averaged"] == {"stabilization": 2, "locomotion": 0, "interaction": 0, "all": 2}
    assert board["older"]["fell_after_success"]["percent"] is None
    assert board["DepRL"]["fell_after_success"]["percent"] is None  # a CSV has no such column: unknown, never 0
    table = CliRunner().invoke(main, ["leaderboard", "--store", str(store), "--from", str(csv)], terminal_width=200)
    assert table.exit_code == 0, table.output
    assert "50.00 (3 of 6)" in table.output and "75.00 (2 of 22)" in table.output


def test_leaderboard_beside_the_paper_marks_partial_averages(tmp_path):
    store = tmp_path / "r.db"
    with ResultsStore(store) as s:
        s.write(_record(0, True, False, method="expert", task="Stand", privileged=True))
        s.write(_record(0, True, True, method="expert", task="Reach", privileged=True))
    out = CliRunner().invoke(main, ["leaderboard", "--store", str(store), "--published", "--json"])
    assert out.exit_code == 0, out.output
    board = json.loads(out.output)
    assert board["expert"]["tasks_averaged"]["all"] == 2 and board["expert"]["privileged"]
    assert board["DepRL (paper)"]["tasks_averaged"]["all"] == 22
    assert board["DepRL (paper)"]["robustness_tasks"] == {"action": 22, "observation": 22, "dynamics": 22}
    assert board["DepRL (paper)"]["fell_after_success"]["percent"] is None
    table = CliRunner().invoke(main, ["leaderboard", "--store", str(store), "--published"], terminal_width=250)
    assert "100.00 (2 of 22)" in table.output and "48.36" in table.output and "of 22)" not in table.output.split(
        "Robust.")[1].split("Coverage")[0]  # the paper's robustness is over all 22 tasks: no note

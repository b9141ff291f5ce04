"""Comparability with the paper's tables: task-name aliases, the optional original action map, the two
success labels (the paper's rule and Table XII alone) from the evaluator through the store to the
leaderboard, and the store's upgrade from schema 1."""

from __future__ import annotations

import json
import sqlite3

import gymnasium as gym
import numpy as np
import pytest
from click.testing import CliRunner

import mskbench  # noqa: F401  (registers the Gymnasium ids)
from mskbench.catalog import SUITE, task_id
from mskbench.cli import main
from mskbench.envs.action_map import ACTION_MAPS, excitation
from mskbench.eval.leaderboard import read_results_csv
from mskbench.eval.store import SCHEMA_VERSION, ResultsStore
from mskbench.tasks import REGISTRY, make_task
from mskbench.tasks.base import paper_success


# -- names users already have ------------------------------------------------------------------------
@pytest.mark.parametrize("name, canonical", [
    ("DoorOpen", "OpenDoor"), ("dooropen", "OpenDoor"), ("open door", "OpenDoor"), ("MSKBenchDoorOpen-v0", "OpenDoor"),
    ("MSKBenchWalk-v0", "Walk"), ("mskbench/Walk-v0", "Walk"), ("walk forward", "Walk"), ("walkandsit", "WalkAndSit"),
    ("Walk_And_Sit", "WalkAndSit"), ("singlestand", "SingleLegStand"), ("stair", "Stairs"),
    ("steppingstones", "StepStones"), ("walk turn", "WalkTurn"), ("CHINUP", "ChinUp"), ("polewalk", "PoleWalk"),
])
def test_aliases_resolve_to_the_canonical_id(name, canonical):
    assert task_id(name) == canonical
    assert task_id(name, suite_only=True) == canonical
    assert make_task(name).name == canonical


def test_every_paper_spelling_of_tables_xiii_to_xv_resolves():
    spellings = ["stand", "powerlift", "squat", "sit", "singlestand", "balance", "walk forward", "run", "walk turn",
                 "jump", "sidestep", "crawl", "stair", "catch", "hurdle", "slide", "steppingstones", "open door",
                 "reach", "walkandsit", "chinup", "polewalk"]
    assert sorted(task_id(s) for s in spellings) == sorted(SUITE)


def test_unknown_name_lists_the_valid_ones():
    with pytest.raises(ValueError, match="unknown task 'Doors'; valid tasks: Stand, .*OpenDoor"):
        task_id("Doors")


def test_gym_make_accepts_the_original_ids():
    for env_id, canonical in (("mskbench/DoorOpen-v0", "OpenDoor"), ("MSKBenchDoorOpen-v0", "OpenDoor"),
                              ("MSKBenchStand-v0", "Stand")):
        env = gym.make(env_id)
        assert env.unwrapped.task.name == canonical
        env.close()


def test_cli_run_takes_the_original_id_and_prints_the_canonical_one():
    result = CliRunner().invoke(main, ["run", "DoorOpen", "--policy", "passive", "--episodes", "1", "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.output.strip().splitlines()[-1])
    assert record["task"] == "OpenDoor"
    assert {"success", "success_table_xii", "solved_native_seen"} <= set(record)


def test_csv_naming_dooropen_is_read_as_opendoor(tmp_path):
    csv = tmp_path / "theirs.csv"
    csv.write_text("task,method,perturbation,scale,success_rate\nDoorOpen,Theirs,none,,40\n"
                   "walk forward,Theirs,none,,20\n")
    rows = read_results_csv(csv)
    assert [r.task for r in rows] == ["OpenDoor", "Walk"]
    result = CliRunner().invoke(main, ["leaderboard", "--from", str(csv), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["Theirs"]["coverage"] == [2, 2]


# -- the action map ------------------------------------------------------------------------------------
def test_action_maps():
    a = np.array([-1.0, 0.0, 0.5, 1.0])
    np.testing.assert_allclose(excitation(a, "linear", np), [0.0, 0.5, 0.75, 1.0])
    # The original code's logistic: a = 0 gives ~0.076, the range is [0.0006, 0.924].
    np.testing.assert_allclose(excitation(a, "myosuite", np), 1 / (1 + np.exp(-5 * (a - 0.5))))
    assert excitation(np.array(0.0), "myosuite", np) == pytest.approx(0.0759, abs=1e-4)
    assert excitation(np.array(-1.0), "myosuite", np) == pytest.approx(0.00055, abs=1e-5)
    assert excitation(np.array(1.0), "myosuite", np) == pytest.approx(0.924, abs=1e-3)
    with pytest.raises(ValueError, match="valid: linear, myosuite"):
        excitation(a, "sigmoid", np)


def test_action_map_numpy_and_jax_agree():
    jnp = pytest.importorskip("jax.numpy", reason="JAX not installed (pip install -e '.[test]')")
    a = np.linspace(-1, 1, 11)
    for name in ACTION_MAPS:
        np.testing.assert_allclose(np.asarray(excitation(jnp.asarray(a), name, jnp)), excitation(a, name, np),
                                   rtol=1e-6)


def test_env_applies_the_chosen_action_map(shared_envs):
    from mskbench.envs import MSKEnv

    action = np.random.default_rng(0).uniform(-1, 1, 416).astype(np.float32)
    for name in ACTION_MAPS:
        env = shared_envs("Stand") if name == "linear" else MSKEnv("Stand", action_map=name)
        env.reset(seed=0)
        env.step(action)
        np.testing.assert_allclose(env.data.ctrl, excitation(action.astype(np.float64), name, np), rtol=1e-6)
    with pytest.raises(ValueError, match="unknown action_map 'tanh'; valid: linear, myosuite"):
        MSKEnv("Stand", action_map="tanh")


# -- success labels ----------------------------------------------------------------------------------
class _Counted(REGISTRY["Stand"]):  # type: ignore[misc, valid-type]
    native_solved = "test signal (nowhere@0000000)"


class _Degenerate(_Counted):
    native_degenerate = "a zero policy meets it"


def test_paper_success_rule():
    for table_xii in (False, True):
        for seen in (False, True):
            assert paper_success(_Counted, table_xii, seen) == (table_xii or seen)
            assert paper_success(_Degenerate, table_xii, seen) == table_xii
    assert _Counted.native_counts() and not _Degenerate.native_counts()


def test_episode_record_keeps_both_labels():
    from mskbench.eval.episodes import episode_record

    acts, qvels, heel = np.full((5, 416), 0.5), np.zeros((5, 122)), np.zeros(5)
    muscles = [f"m{i}" for i in range(416)]
    rec = episode_record("Stand", 0, 1.0, 5, True, "time_limit", acts, qvels, heel, 0.01, muscles)
    assert rec.success and rec.success_table_xii and not rec.solved_native_seen
    counted = [name for name, cls in REGISTRY.items() if cls.native_counts()]
    if counted:
        rec = episode_record(counted[0], 0, 1.0, 5, False, "tilted", acts, qvels, heel, 0.01, muscles,
                             solved_native_seen=True)
        assert rec.success and not rec.success_table_xii and rec.solved_native_seen


def _record(seed: int, success: bool, table_xii: bool, native: bool) -> dict:
    return {"method": "m", "task": "Walk", "perturbation": "none", "scale": 0.0, "seed": seed, "success": success,
            "success_table_xii": table_xii, "solved_native_seen": native, "episode_return": 1.0, "length": 3,
            "termination": "tilted"}


def test_leaderboard_success_label(tmp_path):
    path = tmp_path / "r.db"
    with ResultsStore(path) as store:
        store.write(_record(0, True, False, True))
        store.write(_record(1, True, True, False))
        store.write(_record(2, False, False, False))
        store.write(_record(3, False, False, True))
        assert [r["solved_native_seen"] for r in store.records()] == [True, False, False, True]
        with pytest.raises(ValueError, match="valid: paper, table-xii"):
            list(store.success_rates("native"))
    rates = {}
    for label in ("paper", "table-xii"):
        out = CliRunner().invoke(main, ["leaderboard", "--store", str(path), "--success", label, "--json"])
        assert out.exit_code == 0, out.output
        rates[label] = json.loads(out.output)["m"]["success_rate"]["all"]
    assert rates == {"paper": 50.0, "table-xii": 25.0}
    bad = CliRunner().invoke(main, ["leaderboard", "--store", str(path), "--success", "native"])
    assert bad.exit_code != 0 and "'paper', 'table-xii'" in bad.output


_V1_DDL = """
CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE episodes (method TEXT NOT NULL, task TEXT NOT NULL, perturbation TEXT NOT NULL, scale REAL NOT NULL,
    seed INTEGER NOT NULL, success INTEGER NOT NULL CHECK (success IN (0, 1)), episode_return REAL NOT NULL,
    length INTEGER NOT NULL, termination TEXT NOT NULL, activation_cost REAL, smoothness REAL, recruitment TEXT,
    emg TEXT, wall_time_s REAL, mskbench_version TEXT, created_at TEXT NOT NULL,
    PRIMARY KEY (method, task, perturbation, scale, seed));
INSERT INTO meta VALUES ('schema_version', '1');
INSERT INTO episodes VALUES ('m', 'Walk', 'none', 0.0, 0, 1, 5.0, 10, 'time_limit', 0.1, 2.0, NULL, NULL, 1.0,
    '0.1.0', '2026-01-01T00:00:00+00:00');
INSERT INTO episodes VALUES ('m', 'Walk', 'none', 0.0, 1, 0, 2.0, 4, 'tilted', 0.1, 2.0, NULL, NULL, 1.0,
    '0.1.0', '2026-01-01T00:00:00+00:00');
PRAGMA user_version = 1;
"""


def test_schema_1_store_is_upgraded_without_losing_rows(tmp_path):
    path = tmp_path / "old.db"
    with sqlite3.connect(path) as conn:
        conn.executescript(_V1_DDL)
    with ResultsStore(path) as store:
        recs = store.records()
        assert [(r["seed"], r["success"], r["success_table_xii"], r["solved_native_seen"]) for r in recs] == \
            [(0, True, True, None), (1, False, False, None)]
        assert [r["episode_return"] for r in recs] == [5.0, 2.0]
        assert store.write(_record(2, True, False, True))
        assert list(store.success_rates("table-xii"))[0][4] == pytest.approx(100 / 3)
    with sqlite3.connect(path) as conn:  # upgraded to the current schema (1 -> 2 -> 3 -> 4)
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()[0] == str(SCHEMA_VERSION)

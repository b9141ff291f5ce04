"""The paper's published results shipped with mskbench (mskbench.eval.published) and `leaderboard --published`.

Expected numbers are read off the paper's Table II and Tables XIII–XV by hand,
independently of the transcribed CSVs they check.
"""

from __future__ import annotations

import json
from importlib import resources

import pytest
from click.testing import CliRunner

from mskbench.catalog import SUITE
from mskbench.cli import main
from mskbench.eval.leaderboard import compute_leaderboard
from mskbench.eval.published import (METHODS, SCALES, TASK_COLUMNS, published_rows, published_table2,
                                     read_published_table2, read_published_tables)

#: Table II as printed: SR per family and all, robustness per type and average, coverage.
TABLE_II = {
    "DynSyn-SAC": ((57.33, 81.33, 31.20, 52.00), (46.66, 43.37, 34.75, 41.59), [16, 22]),
    "DepRL": ((50.33, 41.33, 51.40, 48.36), (53.06, 38.10, 39.84, 43.67), [22, 22]),
    "SAC": ((42.33, 0.00, 2.80, 12.82), (15.36, 4.26, 14.50, 11.37), [4, 22]),
    "PPO": ((0.00, 0.00, 7.40, 3.36), (3.10, 3.40, 2.92, 3.14), [1, 22]),
}


def _flat(entry: dict) -> tuple[tuple[float, ...], tuple[float, ...], list[int]]:
    sr = entry["success_rate"]
    rob = entry["robustness"]
    return (
        tuple(sr[k] for k in ("stabilization", "locomotion", "interaction", "all")),
        tuple(rob[k] for k in ("action", "observation", "dynamics", "average")),
        entry["coverage"],
    )


def _invoke(args):
    result = CliRunner().invoke(main, ["leaderboard", *args])
    assert result.exit_code == 0, result.output
    return result


# ------------------------------------------------------------------ the shipped CSVs


def test_csvs_ship_in_the_package_with_a_source_header():
    data = resources.files("mskbench").joinpath("data")
    for name in ("published_tables.csv", "published_table2.csv"):
        text = data.joinpath(name).read_text(encoding="utf-8")
        head = [line for line in text.splitlines() if line.startswith("#")]
        assert head and text.startswith("#")
        assert "MSK-Bench" in "\n".join(head)
    assert "Tables XIII" in data.joinpath("published_tables.csv").read_text(encoding="utf-8")


def test_tables_xiii_to_xv_have_22_tasks_by_4_methods():
    rows = read_published_tables()
    assert len(rows) == 88
    assert {(r.task, r.method) for r in rows} == {(t, m) for t in SUITE for m in METHODS}
    assert {r.task for r in rows} == set(SUITE)  # every canonical task id
    for r in rows:
        assert all(len(getattr(r, kind)) == len(SCALES[kind]) == 5 for kind in SCALES)
    families = {r.task: r.family for r in rows}
    assert families == SUITE


def test_paper_spellings_map_to_suite_ids():
    spelled = {r.paper_task: r.task for r in read_published_tables()}
    assert spelled["walk forward"] == "Walk"
    assert spelled["singlestand"] == "SingleLegStand"
    assert spelled["stair"] == "Stairs"
    assert spelled["steppingstones"] == "StepStones"
    assert spelled["open door"] == "OpenDoor"
    assert spelled["walk turn"] == "WalkTurn"
    assert len(spelled) == 22


def test_table_cells_spot_checks():
    rows = {(r.task, r.method): r for r in read_published_tables()}
    stand = rows["Stand", "DepRL"]  # Table XIII
    assert stand.activation_cost == 0.4488
    assert stand.action == (94, 94, 90, 96, 98)
    assert stand.observation == (100, 12, 0, 0, 0)
    assert stand.dynamics == (98, 48, 28, 12, 4)
    assert (stand.max_steps_1e7, stand.train_sr, stand.log10_smooth) == (3.74, 86, 3.152)
    assert stand.sweep("observation")[1] == (0.02, 12)
    crawl = rows["Crawl", "DynSyn-SAC"]  # Table XIV
    assert crawl.train_sr == 100 and crawl.max_steps_1e7 == 10.00 and crawl.log10_smooth == 3.444
    assert rows["Sidestep", "SAC"].max_steps_1e7 == 0.000032  # printed that way
    squat = rows["Squat", "DepRL"]
    assert squat.max_steps_1e7 == 14.02 and squat.observation == (24, 56, 34, 62, 26)
    chin = rows["ChinUp", "PPO"]  # Table XV: PPO's only non-zero task
    assert chin.train_sr == 74 and chin.activation_cost == 0.3620 and chin.dynamics == (74, 66, 56, 60, 76)
    assert rows["ChinUp", "DepRL"].action == (50, 59, 50, 62, 54)
    door = rows["OpenDoor", "DynSyn-SAC"]
    assert door.dynamics == (100, 100, 14, 4, 0) and door.log10_smooth == 6.461
    assert rows["WalkAndSit", "DynSyn-SAC"].max_steps_1e7 == 0.45


def test_table2_csv_as_printed():
    rows = read_published_table2()
    assert [r.method for r in rows] == list(METHODS)
    board = published_table2()
    assert list(board) == list(METHODS)
    assert {m: _flat(e) for m, e in board.items()} == TABLE_II


def test_rows_feed_the_leaderboard():
    rows = published_rows()
    assert len(rows) == 88 * (1 + 15)
    assert list(dict.fromkeys(r.method for r in rows)) == list(METHODS)
    none = {(r.task, r.method): r.success_rate for r in rows if r.perturbation == "none"}
    assert none["Crawl", "DynSyn-SAC"] == 100 and none["Stand", "DepRL"] == 86


def test_per_task_tables_reproduce_table_ii_to_two_decimals():
    """compute_leaderboard over Tables XIII–XV gives every Table II number as printed (2 decimals)."""
    board = compute_leaderboard(published_rows())
    assert list(board) == list(METHODS)
    for method, (sr, rob, cov) in TABLE_II.items():
        got_sr, got_rob, got_cov = _flat(board[method])
        assert [round(v, 2) for v in got_sr] == list(sr), method
        assert [round(v, 2) for v in got_rob] == list(rob), method
        assert got_cov == cov, method


@pytest.mark.parametrize(
    ("edit", "words"),
    [
        pytest.param(lambda t: t.replace("Stand,stand,DepRL,0.4488", "Stnad,stand,DepRL,0.4488"),
                     ["line", "Stnad", "valid suite task ids"], id="unknown-task"),
        pytest.param(lambda t: t.replace(",3.74,86,3.152", ",3.74,186,3.152"), ["train_sr", "[0, 100]"],
                     id="sr-above-100"),
        pytest.param(lambda t: t.replace("log10_smooth\n", "log10_smoth\n"), ["missing", "log10_smooth"],
                     id="bad-header"),
        pytest.param(lambda t: t + t.splitlines()[-1] + "\n", ["duplicate", "OpenDoor"], id="duplicate"),
    ],
)
def test_bad_tables_csv(tmp_path, edit, words):
    text = resources.files("mskbench").joinpath("data", "published_tables.csv").read_text(encoding="utf-8")
    path = tmp_path / "t.csv"
    path.write_text(edit(text))
    with pytest.raises(ValueError) as info:
        read_published_tables(path)
    assert all(w in str(info.value) for w in words), str(info.value)
    assert str(path) in str(info.value)


def test_bad_table2_coverage(tmp_path):
    path = tmp_path / "t2.csv"
    path.write_text("# comment\n" + ",".join(("method", "sr_stabilization", "sr_locomotion", "sr_interaction",
                    "sr_all", "robustness_action", "robustness_observation", "robustness_dynamics",
                    "robustness_average", "coverage")) + "\nX,1,1,1,1,1,1,1,1,23/22\n")
    with pytest.raises(ValueError, match="line 3: coverage"):
        read_published_table2(path)


def test_task_columns_name_each_sweep_point():
    assert {"action_0.05", "observation_0.02", "dynamics_0.1", "observation_0.1"} <= set(TASK_COLUMNS)


# ------------------------------------------------------------------ mskbench leaderboard --published


def test_cli_published_json_is_table_ii():
    board = json.loads(_invoke(["--published", "--json"]).output)
    assert list(board) == list(METHODS)
    assert {m: _flat(e) for m, e in board.items()} == TABLE_II
    assert board["DynSyn-SAC"]["success_rate"]["all"] == 52.00
    assert board["DepRL"]["robustness"]["average"] == 43.67 and board["DepRL"]["coverage"] == [22, 22]


def test_cli_published_table(monkeypatch, tmp_path):
    monkeypatch.setenv("MSKBENCH_STORE", str(tmp_path / "absent.db"))  # --published alone reads no store
    out = _invoke(["--published"]).output
    for text in ("Table II", "Stabilization (6)", "Average (22)", "DynSyn-SAC", "PPO", "52.00", "48.36",
                 "41.59", "43.67", "16/22", "22/22", "4/22", "1/22"):
        assert text in out, text


@pytest.fixture
def local_csv(tmp_path):
    path = tmp_path / "local.csv"
    path.write_text("task,method,perturbation,scale,success_rate\n"
                    "stand,Mine,none,,50\nwalk,Mine,none,0,30\nstairs,DepRL,none,,10\n")
    return path


def test_cli_published_beside_local_csv(local_csv):
    board = json.loads(_invoke(["--published", "--from", str(local_csv), "--json"]).output)
    assert list(board) == ["Mine", "DepRL", *(f"{m} (paper)" for m in METHODS)]
    assert board["Mine"]["success_rate"]["all"] == 40.0 and board["Mine"]["coverage"] == [2, 2]
    assert board["DepRL"]["coverage"] == [1, 1]  # a local DepRL stays apart from the paper's
    assert _flat(board["DepRL (paper)"]) == TABLE_II["DepRL"]

    out = _invoke(["--published", "--from", str(local_csv)]).output
    for text in ("Mine", "DepRL (paper)", "DynSyn-SAC (paper)", "40.00", "52.00", "2/2", "16/22",
                 "Average (1–22)"):
        assert text in out, text


def test_cli_without_published_is_unchanged(local_csv):
    board = json.loads(_invoke(["--from", str(local_csv), "--json"]).output)
    assert list(board) == ["Mine", "DepRL"]


def test_cli_published_name_clash_is_one_line_error(tmp_path):
    path = tmp_path / "clash.csv"
    path.write_text("task,method,perturbation,scale,success_rate\nstand,SAC (paper),none,,50\n")
    result = CliRunner().invoke(main, ["leaderboard", "--published", "--from", str(path)])
    assert result.exit_code == 2
    assert isinstance(result.exception, SystemExit)  # a click usage error, no traceback
    (line,) = [ln for ln in result.output.splitlines() if ln.startswith("Error:")]
    assert "'SAC (paper)'" in line and "rename" in line


def test_cli_published_with_missing_store_errors(tmp_path):
    result = CliRunner().invoke(main, ["leaderboard", "--published", "--store", str(tmp_path / "none.db")])
    assert result.exit_code == 2 and "does not exist" in result.output

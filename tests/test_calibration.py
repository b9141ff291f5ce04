"""The calibration (``mskbench calibrate``, :mod:`mskbench.eval.calibration`) on a cheap slice: policies that
control nothing never succeed, degenerate native signals are seen but end nothing, episodes of different
seeds start differently, the table is the store's records and a rerun
resumes from the store."""

from __future__ import annotations

import json
from collections import Counter

import numpy as np
import pytest
from click.testing import CliRunner

from mskbench import policies
from mskbench.cli import main
from mskbench.eval import calibration as cal
from mskbench.eval.store import ResultsStore

#: Tasks whose episodes under the trivial policies end within ~120 steps (< 3 s each); Powerlift's and
#: Walk's native signals are degenerate, Stand's counts.
SLICE = ("Stand", "Powerlift", "Walk")
EPISODES = 2


def _calibrate(store, *args):
    return CliRunner().invoke(main, ["calibrate", "--store", str(store), *args])


@pytest.fixture(scope="module")
def slice_run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("calibration")
    args = ["--task", ",".join(SLICE), "--episodes", str(EPISODES), "--policies", "zero,passive,random",
            "--json", str(tmp / "table.json"), "--markdown", str(tmp / "table.md"), "--check"]
    result = _calibrate(tmp / "cal.db", *args)
    return {"result": result, "args": args, "dir": tmp, "table": json.loads((tmp / "table.json").read_text()),
            "markdown": (tmp / "table.md").read_text()}


def test_trivial_policies_never_succeed_on_the_slice(slice_run):
    result, table = slice_run["result"], slice_run["table"]
    assert result.exit_code == 0, result.output  # --check: no free success
    assert "free successes: none" in result.output
    assert table["free_successes"] == [] and table["missing"] == 0
    assert len(table["rows"]) == len(SLICE) * 3
    for row in table["rows"]:
        assert row["episodes"] == EPISODES
        assert row["sr_paper_pct"] == row["sr_table_xii_pct"] == 0.0, row
        assert row["native_counts"] is False or row["sr_native_pct"] == 0.0, row


def test_degenerate_native_signals_are_seen_but_end_no_episode(slice_run):
    table = slice_run["table"]
    walk = [r for r in table["rows"] if r["task"] == "Walk"]
    assert table["native"]["Walk"] == {"signal": True, "counts": False, "degenerate": table["native"]["Walk"][
        "degenerate"], "skips_clauses": False} and table["native"]["Walk"]["degenerate"]
    for r in walk:  # raised at step 1 by every policy; the episodes run on until the body falls
        assert r["sr_native_pct"] == 100.0 and r["length_min"] > 1 and "native_solved" not in r["terminations"]
    verdicts = table["native_verdicts"]
    assert verdicts["Walk"]["degenerate"] and verdicts["Walk"]["declared_degenerate"] and verdicts["Walk"]["agrees"]
    assert verdicts["Stand"] == {"has_native": True, "max_native_pct": 0.0, "degenerate": False,
                                 "declared_degenerate": False, "agrees": True}


def test_the_table_is_the_stores_records(slice_run):
    table, tmp = slice_run["table"], slice_run["dir"]
    with ResultsStore(tmp / "cal.db") as store:
        records = store.records(perturbation="none")
    assert len(records) == len(SLICE) * 3 * EPISODES
    for row in table["rows"]:
        rs = [r for r in records if r["task"] == row["task"] and r["method"] == row["policy"]]
        assert sorted(r["seed"] for r in rs) == list(range(EPISODES))
        assert row["terminations"] == dict(Counter(r["termination"] for r in rs))
        assert row["length_median"] == float(np.median([r["length"] for r in rs]))
        assert row["return_mean"] == pytest.approx(np.mean([r["episode_return"] for r in rs]), rel=1e-12)
        assert row["sr_native_pct"] == 100.0 * np.mean([r["solved_native_seen"] for r in rs])
    assert table["command"] == ("mskbench calibrate --task Stand,Powerlift,Walk --policies zero,passive,random "
                                f"--episodes {EPISODES} --seed 0")
    md = slice_run["markdown"].splitlines()
    assert md[0].startswith("| task | policy | episodes | SR Table XII %") and len(md) == 2 + len(table["rows"])
    assert md[2].startswith("| Stand | zero | 2 | 0 | 0 (counts) | 0 |")


def test_a_rerun_runs_nothing_and_writes_the_same_table(slice_run):
    tmp = slice_run["dir"]
    args = [a.replace("table.json", "again.json").replace("table.md", "again.md") for a in slice_run["args"]]
    result = _calibrate(tmp / "cal.db", *args)
    assert result.exit_code == 0, result.output
    assert "mean return" in slice_run["result"].output and "mean return" not in result.output  # a line per task run
    assert json.loads((tmp / "again.json").read_text()) == slice_run["table"]
    assert (tmp / "again.md").read_text() == slice_run["markdown"]
    with ResultsStore(tmp / "cal.db") as store:
        assert len(store) == len(SLICE) * 3 * EPISODES


#: Tasks whose every episode starts from one state: none (Powerlift's was, until it drew Stand's noise).
FIXED_STARTS: tuple[str, ...] = ()


@pytest.mark.parametrize("task", SLICE)
def test_episodes_of_different_seeds_start_differently(task, slice_run, shared_envs):
    """What calibrate records differs between seeds (the zero policy's returns), as the paper's "native noise"
    requires (Powerlift included: its start draws Stand's noise)."""
    env = shared_envs(task)
    starts = []
    for seed in range(EPISODES):
        env.reset(seed=seed)
        starts.append(np.concatenate([env.data.qpos, env.data.qvel]))
    zero = next(r for r in slice_run["table"]["rows"] if r["task"] == task and r["policy"] == "zero")
    if task in FIXED_STARTS:
        assert all(np.array_equal(starts[0], s) for s in starts[1:]), task
        assert zero["distinct_returns"] == 1 and zero["return_std"] == 0, zero
    else:
        assert not any(np.array_equal(starts[0], s) for s in starts[1:]), task
        assert zero["distinct_returns"] == EPISODES and zero["return_std"] > 0, zero


def test_sit_is_not_met_by_the_passive_policy(tmp_path):
    """The passive policy collapses onto the seat (~2.8 m/s): it raises Sit's native signal (an instantaneous
    position test, declared degenerate) but not has_sat_down, whose soft landing it fails."""
    result = _calibrate(tmp_path / "sit.db", "--task", "Sit", "--policies", "passive", "--episodes", "1", "--check",
                        "--json", str(tmp_path / "sit.json"))
    assert result.exit_code == 0, result.output
    table = json.loads((tmp_path / "sit.json").read_text())
    (row,) = table["rows"]
    assert row["sr_table_xii_pct"] == row["sr_paper_pct"] == 0.0 and row["sr_native_pct"] == 100.0, row
    assert table["native"]["Sit"]["counts"] is False
    assert table["native_verdicts"]["Sit"]["agrees"], table["native_verdicts"]["Sit"]


# -- policies and errors (no simulator) --------------------------------------------------------------------
def test_policies_are_checked_by_name_and_probes_join_the_default_when_registered(monkeypatch):
    assert cal.check_policies(["zero", " random", "zero", ""]) == ["zero", "random"]
    with pytest.raises(ValueError, match="unknown policy 'nope' for calibration; built-in policies: zero, passive"):
        cal.check_policies(["zero", "nope"])
    with pytest.raises(ValueError, match="no policy given"):
        cal.check_policies([])
    assert cal.default_policies()[:3] == ("zero", "passive", "random")
    monkeypatch.setattr(policies, "BUILTIN_POLICIES", ("zero", "passive", "random", "expert", "hold"))
    assert cal.default_policies() == ("zero", "passive", "random", "hold", "expert")
    assert cal.check_policies(["hold"]) == ["hold"]


def test_bad_input_is_a_one_line_error_naming_the_choices(tmp_path):
    result = _calibrate(tmp_path / "x.db", "--policies", "zero,nope")
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "unknown policy 'nope' for calibration; built-in policies: zero, passive, random" in result.output
    result = _calibrate(tmp_path / "x.db", "--task", "Nope")
    assert result.exit_code == 2 and "valid tasks: Stand" in result.output
    result = _calibrate(tmp_path / "x.db", "--json", str(tmp_path / "no" / "t.json"))
    assert result.exit_code == 2 and "does not exist" in result.output
    assert not (tmp_path / "x.db").exists()  # nothing was run or created


def test_hold_counts_as_free_only_where_the_goal_is_more_than_the_start():
    """``hold`` keeps the start: a success of it is free on Crawl (and degenerates Crawl's native signal), not
    on Stand, whose goal is the start; the expert's successes are never free."""
    def row(task, policy, sr, native):
        return {"task": task, "policy": policy, "sr_paper_pct": sr, "sr_table_xii_pct": sr,
                "sr_native_pct": native, "native_counts": False}

    tasks = ["Stand", "Crawl"]
    table = {"tasks": tasks, "native": {t: cal._native(t) for t in tasks},
             "rows": [row("Stand", "hold", 10.0, 0.0), row("Crawl", "hold", 70.0, 70.0),
                      row("Stand", "expert", 96.0, 0.0), row("Crawl", "zero", 0.0, 0.0)]}
    assert cal.free_policy("hold", "Crawl") and not cal.free_policy("hold", "Stand")
    assert cal.free_policy("random", "Stand") and not cal.free_policy("expert", "Crawl")
    assert [(f["task"], f["policy"]) for f in cal.free_successes(table)] == [("Crawl", "hold")]
    verdicts = cal.native_verdicts(table)
    assert verdicts["Crawl"]["max_native_pct"] == 70.0 and verdicts["Crawl"]["degenerate"]
    assert verdicts["Crawl"]["declared_degenerate"] and verdicts["Crawl"]["agrees"]


def test_the_table_says_which_successes_then_fell():
    """Squat's expert completes its squats and then kneels: the row shows the share of successes that fell."""
    def rec(success, fell, termination):
        return {"success": success, "fell_after_success": fell, "termination": termination, "length": 500,
                "episode_return": 1.0, "success_table_xii": success, "solved_native_seen": False}

    recs = [rec(True, True, "kneeling"), rec(True, False, "time_limit"), rec(False, False, "kneeling"),
            rec(True, True, "kneeling")]
    row = cal._row("Squat", "expert", recs, cal._native("Squat"))
    assert row["sr_paper_pct"] == 75.0 and row["fell_after_success_pct"] == pytest.approx(200 / 3)
    assert cal._row("Squat", "zero", [rec(False, False, "kneeling")], cal._native("Squat"))[
        "fell_after_success_pct"] is None  # nothing succeeded
    assert cal._row("Squat", "old", [rec(True, None, "kneeling")], cal._native("Squat"))[
        "fell_after_success_pct"] is None  # a record from before the field: unknown, not 0
    table = {"native": {"Squat": cal._native("Squat")}, "rows": [row]}
    assert "| Squat | expert | 4 | 75 | — (none) | 75 | 67 |" in cal.markdown(table)

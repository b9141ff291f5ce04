"""The command line: task table, rollouts, offscreen rendering, bad input."""

from __future__ import annotations

import ctypes.util
import json
import os
import subprocess
import sys

import pytest
from click.testing import CliRunner

import mskbench

from mskbench.cli import main


def test_tasks_json_lists_every_task_with_sizes():
    result = CliRunner().invoke(main, ["tasks", "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["task"]: r for r in json.loads(result.output)}
    assert list(rows) == list(mskbench.TASK_IDS) and len(rows) == 22
    assert rows["Stand"]["obs_size"] == 1928 and rows["Walk"]["obs_size"] == 2046
    assert rows["Reach"]["obs_size"] == 1927 and rows["Balance"]["obs_size"] == 1935
    assert rows["Catch"]["horizon"] == 200 and rows["StepStones"]["family"] == "interaction"
    assert all(r["action_size"] == 416 for r in rows.values())
    assert rows["Walk"]["family"] == "locomotion" and rows["Stand"]["horizon"] == 1000


def test_run_prints_reproducible_episode_records():
    args = ["run", "stand", "--policy", "passive", "--episodes", "2", "--seed", "5", "--json"]
    first = CliRunner().invoke(main, args)
    second = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    records = [json.loads(line) for line in first.output.splitlines()]
    assert [r["seed"] for r in records] == [5, 6]
    for r in records:
        assert r["task"] == "Stand" and r["length"] >= 1
        # A body with no excitation falls: the episode ends by a Stand condition, unsuccessfully.
        assert r["termination"] in ("com_too_low", "tilted") and r["success"] is False
    again = [json.loads(line) for line in second.output.splitlines()]
    for r in records + again:
        assert r.pop("wall_time_s") > 0
    assert records == again


def test_run_table_has_summary_row():
    result = CliRunner().invoke(main, ["run", "Reach", "--policy", "zero", "--episodes", "1"])
    assert result.exit_code == 0, result.output
    assert "Reach" in result.output and "SR" in result.output


def test_unknown_task_names_valid_ones():
    result = CliRunner().invoke(main, ["run", "Flyy", "--episodes", "1"])
    assert result.exit_code == 2
    assert "Stand" in result.output and "Walk" in result.output and "Reach" in result.output


def test_unknown_policy_names_valid_ones():
    result = CliRunner().invoke(main, ["run", "Stand", "--policy", "clever"])
    assert result.exit_code == 2
    assert "zero" in result.output and "random" in result.output


@pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")  # fork+exec of the CLI, not a bare fork
@pytest.mark.skipif(ctypes.util.find_library("OSMesa") is None,
                    reason="OSMesa not installed (apt-get install libosmesa6)")
def test_render_writes_video(tmp_path):
    imageio = pytest.importorskip("imageio.v2")
    out = tmp_path / "stand.mp4"
    # A headless machine with nothing set: the CLI must pick OSMesa by itself.
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "MUJOCO_GL")}
    cmd = [sys.executable, "-m", "mskbench.cli", "render", "Stand", "--policy", "random",
           "--steps", "3", "--width", "96", "--height", "64", "--out", str(out)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    reader = imageio.get_reader(out)
    assert reader.count_frames() == 4  # the reset frame and three steps
    frames = [reader.get_data(i) for i in range(4)]
    assert frames[0].shape[:2] == (64, 96)
    assert frames[0].std() > 5  # an actual scene, not a blank buffer
    # Refuses to overwrite without --overwrite; the first video is kept.
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode != 0 and "exists" in proc.stderr
    assert imageio.get_reader(out).count_frames() == 4


def test_durations_read_seconds_minutes_and_hours():
    from mskbench.cli import Duration

    read = Duration().convert
    assert [read(v, None, None) for v in ("90", "90s", "3m", "1.5h", " 2M ", 7)] == [90, 90, 180, 5400, 120, 7]

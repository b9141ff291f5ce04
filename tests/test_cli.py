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


@pytest.mark.slow
def test_tasks_json_lists_every_task_with_sizes():
    result = CliRunner().invoke(main, ["tasks", "--json"])
    assert result.exit_code == 0, result.output
    rows = {r["task"]: r for r in json.loads(result.stdout)}
    assert list(rows) == [*mskbench.TASK_IDS, "MouseImitation", "TrackWalk", "TrackRun", "TrackStairs",
                          "ResidualWalk", "ResidualRun", "ResidualStairs"]
    assert rows["Stand"]["obs_size"] == 1928 and rows["Walk"]["obs_size"] == 2046
    assert rows["Reach"]["obs_size"] == 1927 and rows["Balance"]["obs_size"] == 1935
    assert rows["Catch"]["horizon"] == 200 and rows["StepStones"]["family"] == "interaction"
    assert all(rows[t]["action_size"] == 416 for t in mskbench.TASK_IDS)
    assert rows["Walk"]["family"] == "locomotion" and rows["Stand"]["horizon"] == 1000
    mouse = rows["MouseImitation"]
    assert (mouse["family"], mouse["action_size"], mouse["obs_size"]) == ("imitation", 9, 55)


def test_tasks_options_lists_a_tasks_options_and_python_m_works():
    import subprocess
    import sys

    result = CliRunner().invoke(main, ["tasks", "--options", "reach", "--json"])
    assert result.exit_code == 0, result.output
    options = json.loads(result.stdout)
    assert options["target_window_s"]["default"] == 2.0 and "s" in options["target_window_s"]["doc"]
    bad = CliRunner().invoke(main, ["tasks", "--options", "Nope"])
    assert bad.exit_code == 2 and "--options" in bad.output and "valid tasks" in bad.output
    out = subprocess.run([sys.executable, "-m", "mskbench", "tasks", "--options", "Stand", "--json"],
                         capture_output=True, text=True, check=True).stdout
    assert set(json.loads(out)) == {"com_height_min_m", "tilt_max_rad", "init_noise"}


def test_run_prints_reproducible_episode_records():
    args = ["run", "stand", "--policy", "passive", "--episodes", "2", "--seed", "5", "--json"]
    first = CliRunner().invoke(main, args)
    second = CliRunner().invoke(main, args)
    assert first.exit_code == 0, first.output
    records = [json.loads(line) for line in first.stdout.splitlines()]
    assert [r["seed"] for r in records] == [5, 6]
    for r in records:
        assert r["task"] == "Stand" and r["length"] >= 1
        # A body with no excitation falls: the episode ends by a Stand condition, unsuccessfully.
        assert r["termination"] in ("com_too_low", "tilted") and r["success"] is False
    again = [json.loads(line) for line in second.stdout.splitlines()]
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


@pytest.mark.slow
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
    from mskbench.cli.common import Duration

    read = Duration().convert
    assert [read(v, None, None) for v in ("90", "90s", "3m", "1.5h", " 2M ", 7)] == [90, 90, 180, 5400, 120, 7]


@pytest.mark.parametrize("args", [["run", "Stand", "--episodes", "1"],
                                  ["eval", "--task", "Stand", "--episodes", "1"],
                                  ["sweep", "--task", "Stand", "--episodes", "1", "--types", "action"]],
                         ids=["run", "eval", "sweep"])
def test_negative_seeds_are_usage_errors_before_anything_is_written(tmp_path, args):
    store = tmp_path / "x.db"
    extra = [] if args[0] == "run" else ["--store", str(store)]
    result = CliRunner().invoke(main, [*args, "--seed", "-5", *extra])
    assert result.exit_code == 2 and result.exception is not None  # SystemExit(2), not a traceback
    assert "'--seed'" in result.output and "-5" in result.output and "x>=0" in result.output
    assert not store.exists()


def test_eval_unknown_task_names_the_option_and_the_valid_tasks(tmp_path):
    result = CliRunner().invoke(main, ["eval", "--task", "Nope", "--store", str(tmp_path / "x.db")])
    assert result.exit_code == 2
    assert "Invalid value for --task: unknown task 'Nope'" in result.output
    assert "Stand" in result.output and "Walk" in result.output and "'all'" in result.output
    assert not (tmp_path / "x.db").exists()


def test_missing_policy_paths_say_they_do_not_exist(tmp_path):
    from mskbench.agents.checkpoint import checkpoint_path

    for spec in (str(tmp_path / "missing" / "dir"), "runs/ppo-stand", "missing.npz"):
        with pytest.raises(ValueError, match=f"'{spec}' does not exist"):
            checkpoint_path(spec)
        result = CliRunner().invoke(main, ["eval", "--task", "Stand", "--policy", spec,
                                           "--store", str(tmp_path / "x.db")])
        assert result.exit_code == 2 and f"'{spec}' does not exist" in result.output
    other = tmp_path / "notes.txt"
    other.write_text("x")
    with pytest.raises(ValueError, match="neither a .npz file nor a run directory"):
        checkpoint_path(str(other))
    assert checkpoint_path("zero") is None and checkpoint_path("pkg.mod:factory") is None
    assert not (tmp_path / "x.db").exists()


def test_piped_run_keeps_whole_cells_and_reports_each_task_on_stderr():
    # Not a terminal (CliRunner), and a console narrower than the table.
    result = CliRunner().invoke(main, ["run", "SingleLegStand,Stand", "--policy", "zero", "--episodes", "2"],
                                env={"COLUMNS": "40"})
    assert result.exit_code == 0, result.output
    rows = [line for line in result.stdout.splitlines() if "SingleLegStand" in line]
    assert len(rows) == 3 and "…" not in result.stdout  # two episodes and the mean, one line each
    termination = json.loads(CliRunner().invoke(main, ["run", "SingleLegStand", "--policy", "zero",
                                                       "--episodes", "1", "--json"]).stdout)["termination"]
    assert f" {termination} " in rows[0]
    lines = result.stderr.splitlines()
    assert [line.split(":")[0] for line in lines] == ["SingleLegStand", "Stand"]
    assert all(" 2 episodes, mean return " in line for line in lines)


@pytest.mark.parametrize("width", [80, 50])
def test_tables_on_a_narrow_terminal_are_never_cut(width):
    import io

    from rich.console import Console
    from rich.table import Table

    from mskbench.cli.common import print_table as _print_table

    table = Table(title="policy 'passive', seeds 0..0")
    for col in ("task", "episode", "seed", "return", "length", "success", "termination"):
        table.add_column(col)
    table.add_row("SingleLegStand", "0", "0", "30462.84", "32", "no", "pelvis_too_low")
    table.add_row("[bold]SingleLegStand[/bold]", "mean", "", "30462.84", "32.0", "SR 0%", "", end_section=True)
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, width=width, color_system=None)
    _print_table(table, console)
    text = out.getvalue()
    assert "…" not in text and max(len(line) for line in text.splitlines()) <= width
    if width == 80:  # fits once the outer border goes: whole cells, a line a row
        rows = [line for line in text.splitlines() if "SingleLegStand" in line]
        assert len(rows) == 2 and "pelvis_too_low" in rows[0]


def test_an_episode_depends_only_on_its_seed(tmp_path):
    """Episode i of a run is episode seed+i of any other run: run, run from that seed, and eval agree."""
    def run(*args):
        result = CliRunner().invoke(main, ["run", "Stand", "--policy", "random", *args, "--json"])
        assert result.exit_code == 0, result.output
        return [json.loads(line) for line in result.stdout.splitlines()]

    second = run("--episodes", "2", "--seed", "3")[1]
    alone = run("--episodes", "1", "--seed", "4")[0]
    store = tmp_path / "e.db"
    result = CliRunner().invoke(main, ["eval", "--task", "Stand", "--policy", "random", "--episodes", "2",
                                       "--seed", "3", "--store", str(store)])
    assert result.exit_code == 0, result.output
    from mskbench.eval.store import ResultsStore

    with ResultsStore(store) as s:
        (evaluated,) = s.records(seed=4)
    assert second["seed"] == alone["seed"] == 4
    assert (second["episode_return"], second["length"]) == (alone["episode_return"], alone["length"])
    assert (evaluated["episode_return"], evaluated["length"]) == (alone["episode_return"], alone["length"])

"""The four reward-based baselines through one command line: train a real task briefly, checkpoint,
resume (also after kill -9), evaluate and sweep the checkpoint with the shared protocol."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

pytest.importorskip("jax", reason="JAX not installed")
pytest.importorskip("sbx", reason="sbx-rl not installed (pip install -e '.[offpolicy]')")

from mskbench.cli import main  # noqa: E402
from mskbench.training import Run  # noqa: E402

#: Small networks and a short run on Stand (2 worlds x 100 steps per iteration).
SMALL = ["--num-envs", "2", "--rollout", "100", "--hidden", "32", "--eval-every-steps", "200",
         "--eval-episodes", "1"]
OFF_POLICY = ["--set", "learning_starts=100", "--set", "buffer_size=4000"]
EXTRA = {
    "ppo": ["--minibatch", "50", "--epochs", "1"],
    "sac": OFF_POLICY,
    "deprl": [*OFF_POLICY, "--set", "gradient_steps=2", "--set", "train_freq=10",
              "--set", 'dep={"pretrain_steps": 100, "intervention_proba": 0.1}'],
    "dynsyn": OFF_POLICY,
}


@pytest.fixture(scope="module")
def groups(tmp_path_factory):
    """Muscle groups for DynSyn from a short recording (the default records 25,600 steps)."""
    path = tmp_path_factory.mktemp("syn") / "groups.json"
    result = CliRunner().invoke(main, ["synergies", "Stand", "--out", str(path), "--steps", "300"])
    assert result.exit_code == 0, result.output
    return path


def _args(algo: str, groups: Path) -> list[str]:
    extra = EXTRA[algo] + (["--set", json.dumps({"groups": str(groups)}).join(["dynsyn=", ""])]
                           if algo == "dynsyn" else [])
    return ["--algo", algo, *SMALL, *extra]


@pytest.mark.slow
@pytest.mark.parametrize("algo", ["ppo", "sac", "deprl", "dynsyn"])
def test_each_baseline_trains_resumes_and_evaluates_through_the_cli(tmp_path, algo, groups):
    runner = CliRunner()
    run = tmp_path / algo
    result = runner.invoke(main, ["train", "Stand", "--out", str(run), "--steps", "200", *_args(algo, groups)])
    assert result.exit_code == 0, result.output
    settings = json.loads((run / "run.json").read_text())
    assert settings["algo"] == algo and settings["config"]["num_envs"] == 2
    result = runner.invoke(main, ["train", "Stand", "--out", str(run), "--steps", "400", "--resume",
                                  *_args(algo, groups)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (run / "eval_log.jsonl").read_text().splitlines()]
    assert [r["steps"] for r in rows] == [200, 400] and all("eval" in r for r in rows)
    # DepRL reports its last checkpoint (Table XVI); the others their best evaluation.
    assert (run / "best.npz").exists() == (algo != "deprl")
    assert Run.load(run).best_path.name == ("checkpoint.npz" if algo == "deprl" else "best.npz")
    best = max(rows, key=lambda r: r["eval"]["mean_return"])  # ties: the earliest
    assert Run.load(run).peak_efficiency() == (best["steps"], best["eval"]["mean_return"])
    result = runner.invoke(main, ["eval", "--task", "Stand", "--policy", str(run), "--episodes", "1",
                                  "--store", str(tmp_path / "results.db")])
    assert result.exit_code == 0, result.output
    assert "Stand" in result.output
    result = runner.invoke(main, ["train", "Stand", "--out", str(run), "--steps", "400", *_args(algo, groups)])
    assert result.exit_code != 0 and "already holds a run" in result.output
    other = "sac" if algo != "sac" else "ppo"
    result = runner.invoke(main, ["train", "Stand", "--out", str(run), "--steps", "600", "--resume",
                                  *_args(other, groups)])
    assert result.exit_code != 0 and "other settings" in result.output and "Traceback" not in result.output


@pytest.mark.slow
def test_a_killed_sac_run_resumes_from_its_last_checkpoint(tmp_path, groups):
    """kill -9 mid-run: the checkpoint and the replay chunks on disk are whole, and --resume continues."""
    run = tmp_path / "sac"
    cmd = [sys.executable, "-m", "mskbench", "train", "Stand", "--out", str(run), "--steps", "100000",
           *_args("sac", groups)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:
            log = run / "eval_log.jsonl"
            if log.exists() and len(log.read_text().splitlines()) >= 2:
                break
            time.sleep(0.2)
        else:
            pytest.fail("no checkpoint within 300 s")
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    with np.load(run / "checkpoint.npz") as z:  # the log row follows its checkpoint; a kill can fall between
        done = int(z["steps"])
    target = done + 200
    result = CliRunner().invoke(main, ["train", "Stand", "--out", str(run), "--steps", str(target), "--resume",
                                       *_args("sac", groups)])
    assert result.exit_code == 0, result.output
    rows = [json.loads(line) for line in (run / "eval_log.jsonl").read_text().splitlines()]
    assert rows[-1]["steps"] == target and rows[-1]["buffer"] == min(target, 4000)

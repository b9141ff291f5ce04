"""`mskbench train --backend jax`: PPO on the batched JAX env, checkpoints evaluated on the CPU.

Uses ``--impl cpu`` (MuJoCo C behind the JAX interface) and ``--impl warp``
(MuJoCo Warp on Warp's CPU device): the GPU path's own chain, train on the
batched env, evaluate the checkpoint on the CPU protocol. Compiling MJX
(``--impl jax``) for the full body takes many minutes on a CPU, so it is left
to benchmarks/gpu_check.py on a GPU machine.
"""

from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

pytest.importorskip("jax", reason="JAX not installed")
pytest.importorskip("mujoco.mjx", reason="MJX not installed")

from mskbench.cli import main  # noqa: E402


@pytest.mark.slow
@pytest.mark.parametrize("impl", ["cpu", "warp"])
def test_jax_backend_trains_and_the_cpu_protocol_evaluates_the_checkpoint(tmp_path, impl):
    if impl == "warp":
        pytest.importorskip("mujoco_warp", reason="MuJoCo Warp not installed (pip install 'mskbench[warp]')")
    run = tmp_path / "run"
    args = ["train", "Stand", "--backend", "jax", "--impl", impl, "--out", str(run), "--steps", "64",
            "--num-envs", "2", "--rollout", "16", "--hidden", "16", "--minibatch", "16", "--epochs", "1",
            "--eval-every-steps", "32", "--eval-episodes", "1"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert f"2 worlds (jax, {impl})" in result.output
    assert {p.name for p in run.iterdir()} >= {"checkpoint.npz", "best.npz", "config.json", "eval_log.jsonl",
                                               "best.json"}
    log = [json.loads(line) for line in (run / "eval_log.jsonl").read_text().splitlines()]
    assert [r["steps"] for r in log] == [32, 64]
    for r in log:
        ev = r["eval"]
        assert ev["episodes"] == 1 and 1 <= ev["mean_length"] <= 1000
        assert sum(ev["terminations"].values()) == 1 and "running" not in ev["terminations"]
    config = json.loads((run / "config.json").read_text())
    assert config["hidden"] == [16, 16] and config["num_steps"] == 16 and config["minibatch_size"] == 16
    best = json.loads((run / "best.json").read_text())
    assert best["mean_return"] == max(r["eval"]["mean_return"] for r in log)

    # The CPU protocol loads the checkpoint; seed 10000 is the episode the training evaluation ran
    # (same initial state, and the same physics: MuJoCo C, or MuJoCo Warp in float32), so the returns agree.
    store = tmp_path / "r.db"
    result = CliRunner().invoke(main, ["eval", "--policy", str(run), "--task", "Stand", "--episodes", "1",
                                       "--seed", "10000", "--method", "ppo-jax", "--store", str(store), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)["Stand"]
    assert summary["episodes"] == 1
    assert summary["return_mean"] == pytest.approx(best["mean_return"], rel=1e-3)


@pytest.mark.parametrize("extra, message", [(["--impl", "cpu"], "impl chooses the physics of backend='jax'"),
                                            (["--eval-env", "jax"], "eval_env='jax' needs backend='jax'")])
def test_jax_only_options_are_refused_on_the_cpu_backend(tmp_path, extra, message):
    result = CliRunner().invoke(main, ["train", "Stand", "--out", str(tmp_path / "run"), *extra])
    assert result.exit_code == 2 and message in result.output
    assert not (tmp_path / "run").exists()

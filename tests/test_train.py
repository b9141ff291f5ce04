"""PPO on a full-body task (CPU), its checkpoints evaluated by the shared protocol."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from mskbench.cli import main
from mskbench.envs.vector import MSKVectorEnv
from mskbench.eval.protocol import check_policy_spec

pytest.importorskip("jax", reason="JAX not installed")


def test_vector_env_restarts_finished_episodes():
    env = MSKVectorEnv("Stand", num_envs=2)
    obs = env.reset(seed=4)
    assert obs.shape == (2, env.obs_size) and env.action_size == 416
    np.testing.assert_array_equal(obs[0], env.envs[0].reset(seed=4)[0])  # env i starts from seed + i
    obs = env.reset(seed=4)
    finished, steps = [], 0
    while not finished and steps < 200:  # a passive body falls within ~50 steps
        obs, reward, term, trunc, info = env.step(-np.ones((2, 416)))
        finished = info["episode_returns"]
        steps += 1
    assert finished and term.any()
    i = int(np.flatnonzero(term)[0])
    assert not np.array_equal(info["final_obs"][i], obs[i])  # obs is the new episode's first
    assert env.envs[i].steps == 0
    with pytest.raises(ValueError, match=r"\(2, 416\)"):
        env.step(np.zeros(416))
    env.close()


@pytest.mark.slow
def test_train_then_evaluate_the_checkpoint_with_the_protocol(tmp_path):
    run = tmp_path / "run"
    args = ["train", "stand", "--out", str(run), "--steps", "128", "--num-envs", "2", "--rollout", "32",
            "--hidden", "16", "--minibatch", "32", "--epochs", "1", "--eval-every-steps", "64",
            "--eval-episodes", "1"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert {p.name for p in run.iterdir()} >= {"checkpoint.npz", "best.npz", "config.json", "eval_log.jsonl"}
    log = [json.loads(line) for line in (run / "eval_log.jsonl").read_text().splitlines()]
    assert [r["steps"] for r in log] == [64, 128] and all("eval" in r for r in log)
    best = json.loads((run / "best.json").read_text())
    assert best["mean_return"] == max(r["eval"]["mean_return"] for r in log)

    store = tmp_path / "r.db"
    result = CliRunner().invoke(main, ["eval", "--task", "Stand", "--policy", str(run), "--method", "ppo-test",
                                       "--episodes", "2", "--store", str(store), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)["Stand"]
    assert summary["episodes"] == 2
    # The deterministic policy gives the same episode for the same seed: the eval during training
    # used seed 10000; this run's episodes are seeds 0 and 1, reproducible on rerun.
    again = CliRunner().invoke(main, ["eval", "--task", "Stand", "--policy", str(run / "best.npz"), "--method",
                                      "ppo-again", "--episodes", "2", "--store", str(store), "--json"])
    assert json.loads(again.stdout)["Stand"]["return_mean"] == pytest.approx(summary["return_mean"])

    # The exported policy (what comes back from a GPU machine) is evaluated with the same result.
    exported = tmp_path / "policy.npz"
    result = CliRunner().invoke(main, ["export-policy", str(run), "--out", str(exported)])
    assert result.exit_code == 0, result.output
    assert exported.stat().st_size < (run / "best.npz").stat().st_size
    small = CliRunner().invoke(main, ["eval", "--task", "Stand", "--policy", str(exported), "--method",
                                      "ppo-exported", "--episodes", "2", "--store", str(store), "--json"])
    assert json.loads(small.stdout)["Stand"]["return_mean"] == pytest.approx(summary["return_mean"])
    # Nothing already there is replaced unasked, and the checkpoint is never the target.
    again = CliRunner().invoke(main, ["export-policy", str(run), "--out", str(exported)])
    assert again.exit_code == 1 and "--overwrite" in again.output
    same = CliRunner().invoke(main, ["export-policy", str(run), "--out", str(run / "best.npz"), "--overwrite"])
    assert same.exit_code == 2 and "checkpoint itself" in same.output
    assert CliRunner().invoke(main, ["export-policy", str(tmp_path / "r.db"), "--out", "x.npz"]).exit_code == 2


def test_bad_checkpoint_paths_are_clear_errors(tmp_path):
    with pytest.raises(ValueError, match="does not exist"):
        check_policy_spec(str(tmp_path / "missing.npz"))
    with pytest.raises(ValueError, match="holds no best.npz or checkpoint.npz"):
        check_policy_spec(str(tmp_path))


def test_the_training_api_records_its_settings_resumes_and_refuses_bad_input(tmp_path):
    """mskbench.train: one call from Python; run.json holds the resolved settings; a run is never
    overwritten by accident and resumes only with the same settings; bad names list the valid ones."""
    import mskbench
    from mskbench.training import Run

    kw = dict(steps=64, num_envs=2, num_steps=16, epochs=1, minibatch_size=16, encoder_hidden=(8,),
              decoder_hidden=(8,), value_hidden=(8,), latent_size=2, task_options={"synthetic_clips": 1})
    with pytest.raises(ValueError, match="unknown algorithm 'mpo'; valid algorithms: ppo, sac, deprl, dynsyn"):
        mskbench.train("MouseImitation", algo="mpo", **kw)
    with pytest.raises(ValueError, match="sac trains on backend 'cpu', not 'jax'"):
        mskbench.train("MouseImitation", algo="sac", backend="jax", steps=64)
    with pytest.raises(ValueError, match="ppo has no setting 'hiden'; its settings: .*hidden"):
        mskbench.train("MouseImitation", hiden=(8,), **kw)
    with pytest.raises(ValueError, match="backend must be one of 'cpu', 'jax'"):
        mskbench.train("MouseImitation", backend="gpu", **kw)
    run = mskbench.train("MouseImitation", out=tmp_path / "r", **kw)
    assert run.steps == 64 and run.metric == "track_replay_error_mm" and run.best_path.name == "best.npz"
    loaded = Run.load(tmp_path / "r")
    assert (loaded.steps, loaded.best, loaded.task) == (64, run.best, "MouseImitation")
    assert loaded.settings["config"]["num_envs"] == 2 and loaded.settings["task_options"]["synthetic_clips"] == 1
    with pytest.raises(FileExistsError, match="already holds a run"):
        mskbench.train("MouseImitation", out=tmp_path / "r", **kw)
    with pytest.raises(ValueError, match="other settings.*learning_rate"):
        mskbench.train("MouseImitation", out=tmp_path / "r", resume=True, learning_rate=1.0, **kw)
    more = mskbench.train("MouseImitation", out=tmp_path / "r", resume=True, **{**kw, "steps": 128})
    assert more.steps == 128 and [r["steps"] for r in Run.load(tmp_path / "r").history] == [32, 64, 96, 128]


def test_train_without_jax_is_a_one_line_error(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "jax", None)  # as if JAX were not installed
    result = CliRunner().invoke(main, ["train", "Stand", "--out", str(tmp_path / "run"), "--steps", "8"])
    assert result.exit_code == 1 and "Traceback" not in result.output
    assert result.output.strip().splitlines()[-1].startswith("Error: training needs JAX")
    assert "pip install 'mskbench[gpu]'" in result.output and not (tmp_path / "run").exists()


def test_an_error_raised_during_training_is_not_called_a_usage_error(tmp_path, monkeypatch):
    """A ValueError before training starts is about the options (usage, exit 2); one raised by the env
    mid-run is not (exit 1, no usage text), and still one line, no traceback."""
    def broken(self, actions):
        raise ValueError("the env broke at its first step")

    monkeypatch.setattr(MSKVectorEnv, "step", broken)
    result = CliRunner().invoke(main, ["train", "Stand", "--out", str(tmp_path / "run"), "--steps", "32",
                                       "--num-envs", "1", "--rollout", "32", "--hidden", "8"])
    assert result.exit_code == 1, result.output
    assert "Error: the env broke at its first step" in result.output
    assert "Usage:" not in result.output and "Traceback" not in result.output
    result = CliRunner().invoke(main, ["train", "Stand", "--out", str(tmp_path / "run2"), "--set", "nonsense=1"])
    assert result.exit_code == 2 and "Usage:" in result.output


def test_a_single_width_sets_one_hidden_layer():
    """``--set hidden=512`` arrives as the number 512: it means one layer of 512, not an error about ints."""
    from mskbench.agents import ALGORITHMS

    assert ALGORITHMS["ppo"].config("cpu", hidden=512, value_hidden=[64, 64]).hidden == (512,)
    assert ALGORITHMS["ppo"].config("cpu", value_hidden=[64, 64]).value_hidden == (64, 64)
    assert ALGORITHMS["bc"].config("cpu", hidden=64).hidden == (64,)


def test_set_takes_a_comma_separated_list_of_widths(tmp_path):
    """``--set hidden=2048,2048`` (what docs/distillation.md gives for ``--init`` from an ensemble) is two layers;
    a width that is not a number is a one-line usage error naming the setting."""
    out = tmp_path / "run"
    result = CliRunner().invoke(main, ["train", "Stand", "--out", str(out), "--steps", "32", "--num-envs", "1",
                                       "--rollout", "32", "--set", "hidden=8,8", "--set", "value_hidden=4",
                                       "--eval-episodes", "1", "--eval-every-steps", "1000"])
    assert result.exit_code == 0, result.output
    config = json.loads((out / "run.json").read_text())["config"]
    assert config["hidden"] == [8, 8] and config["value_hidden"] == [4]
    result = CliRunner().invoke(main, ["train", "Stand", "--out", str(tmp_path / "bad"), "--set", "hidden=8,8x"])
    assert result.exit_code == 2 and "hidden must be widths >= 1" in result.output, result.output
    assert "Traceback" not in result.output

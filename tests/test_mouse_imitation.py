"""Mouse imitation: synthetic clips, the imitation task on the shared env stack, train -> eval end to end.

(The batched env's agreement with the CPU env on this task is in ``test_jax_env.py``.)"""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from mskbench.cli import main
from mskbench.envs import MSKEnv
from mskbench.tasks.mouse_imitation import (MouseImitation, ReferenceBank, control_cost, energy_cost, reference_at,
                                      tracking_reward)
from mskbench.mouse.synthetic import SyntheticConfig, make_synthetic_clip, make_synthetic_clips


@pytest.fixture(scope="module")
def clips():
    return make_synthetic_clips(3, seed=0)


def test_synthetic_clips_are_deterministic_with_known_activations(clips):
    again = make_synthetic_clip(0)
    np.testing.assert_array_equal(again.qpos, clips[0].qpos)
    np.testing.assert_array_equal(again.activations, clips[0].activations)
    c = clips[0]
    assert c.qpos.shape == (100, 4) and c.activations.shape == (100, 9) and c.fps == 200.0
    assert 0.0 <= c.activations.min() and c.activations.max() <= 1.0
    assert c.activations.max() > 0.1  # the muscles did work
    np.testing.assert_array_equal(c.emg["Biceps_Long"], c.activations[:, 8])
    # The reach moved the arm towards its goal.
    goal = np.array(c.metadata["q_goal"])
    assert np.linalg.norm(c.qpos[-1] - goal) < 0.5 * np.linalg.norm(c.qpos[0] - goal)


def test_synthetic_keypoints_are_forward_kinematics_plus_noise(clips):
    from mskbench.body.mouse_forelimb import build_mouse_model, keypoint_trajectory

    c = clips[1]
    exact = keypoint_trajectory(build_mouse_model(), c.qpos, c.offsets)
    noise = c.keypoints - exact
    assert abs(noise.std() - SyntheticConfig().keypoint_noise_m) < 2e-5
    assert abs(noise.mean()) < 2e-5


def test_reference_interpolation_and_reward_terms():
    table = np.arange(2 * 5 * 4, dtype=float).reshape(2, 5, 4)
    np.testing.assert_allclose(reference_at(table, 1, 2.5), 0.5 * (table[1, 2] + table[1, 3]))
    np.testing.assert_allclose(reference_at(table, 0, 10.0), table[0, 4])  # clamped to the last frame
    q, q_ref = np.array([0.1, 0.0, 0.0, 0.2]), np.zeros(4)
    u = np.full(9, 0.5)
    qd, tau = np.array([1.0, -2.0, 0.0, 0.0]), np.array([0.01, 0.02, 0.3, 0.0])
    assert tracking_reward(q, q_ref, 0.2) == pytest.approx(np.exp(-0.2 * (0.01 + 0.04)))
    assert control_cost(u) == pytest.approx(9 * 0.25)
    assert energy_cost(qd, tau) == pytest.approx(1.0 * 0.01 + 2.0 * 0.02)
    task = MouseImitation(synthetic_clips=1, joint_weight=5.0, ctrl_cost=0.15, energy_cost=0.1)
    assert task.reward_weights == {"joint": 5.0, "ctrl": -0.15, "energy": -0.1}
    with pytest.raises(ValueError, match="ctrl_cost"):
        MouseImitation(synthetic_clips=1, ctrl_cost=-1.0)
    with pytest.raises(ValueError, match="no option 'substeps'"):
        MouseImitation(synthetic_clips=1, substeps=3)


def test_the_task_on_the_cpu_env_starts_on_the_reference_and_ends_episodes(clips):
    env = MSKEnv(MouseImitation(clips=clips, ctrl_cost=0.15))
    assert env.action_space.shape == (9,) and env.observation_space.shape == (4 + 4 + 9 + 9 + 9 + 5 * 4,)
    assert list(env.obs_layout) == ["qpos", "qvel", "muscle_length", "muscle_velocity", "muscle_activation",
                                    "task/reference"]
    bank = ReferenceBank.from_clips(clips)
    obs, _ = env.reset(seed=1, options={"initial_state": env.task.start_at(1, 10.0)})
    q = bank.qpos[1, 10]
    np.testing.assert_allclose(obs[env.obs_layout["qpos"]], q, atol=1e-6)
    np.testing.assert_allclose(obs[env.obs_layout["task/reference"]], np.ravel(bank.qpos[1, 11:16] - q), atol=1e-6)
    _, reward, term, trunc, info = env.step(np.zeros(9))
    terms = info["reward_terms"]
    assert terms["ctrl"] == pytest.approx(9 * 0.25)  # excitation 0.5 on every muscle
    assert reward == pytest.approx(5.0 * terms["joint"] - 0.15 * terms["ctrl"])
    # Near the clip's end the episode is truncated (the clip has no frame left), not terminated.
    env.reset(options={"initial_state": env.task.start_at(1, 98.6)})
    _, _, term, trunc, info = env.step(np.zeros(9))
    assert trunc and not term and info["termination"] == "time_limit" and info["success"]
    # Far from the reference it terminates.
    env.reset(options={"initial_state": env.task.start_at(0, 10.0)})
    env.data.qpos[:4] += 1.5
    _, _, term, _, info = env.step(np.zeros(9))
    assert term and info["termination"] == "joint_error" and not info["success"]
    env.reset(seed=0)
    with pytest.raises(ValueError, match=r"\(9,\)"):
        env.step(np.zeros(416))
    with pytest.raises(ValueError, match="non-finite"):
        env.step(np.full(9, np.nan))
    # Random starts: a clip and a start frame at least min_frames before its end.
    starts = set()
    for seed in range(8):
        env.reset(seed=seed)
        starts.add((int(env.task_state["clip"]), float(env.task_state["frame"])))
    assert len(starts) > 4 and all(f <= 100 - 1 - 20 for _, f in starts)


@pytest.mark.slow
def test_train_then_eval_end_to_end_on_cpu(tmp_path):
    runner = CliRunner()
    clips_dir = tmp_path / "clips"
    assert runner.invoke(main, ["mouse", "synth", "--out", str(clips_dir), "-n", "2"]).exit_code == 0
    run = tmp_path / "run"
    args = ["mouse", "train", "--clips", str(clips_dir), "--out", str(run), "--steps", "1024", "--num-envs", "8",
            "--hidden", "16", "--rollout", "32", "--backend", "cpu", "--ctrl-cost", "0.15", "--eval-every", "2"]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    log = [json.loads(line) for line in (run / "eval_log.jsonl").read_text().splitlines()]
    assert [r["steps"] for r in log] == [256, 512, 768, 1024]
    assert all("eval" in r for r in log[1::2])
    # best.npz is the evaluated checkpoint with the lowest replay error; mouse eval prefers it.
    best = json.loads((run / "best.json").read_text())
    errors = {r["steps"]: r["eval"]["track_replay_error_mm"] for r in log if "eval" in r}
    assert best["track_replay_error_mm"] == min(errors.values()) and errors[best["steps"]] == min(errors.values())
    assert (run / "best.npz").exists()
    settings = json.loads((run / "run.json").read_text())
    assert settings["task"] == "MouseImitation" and settings["task_options"]["ctrl_cost"] == 0.15
    assert settings["config"]["policy"] == "encoder_decoder" and settings["metric"] == "track_replay_error_mm"
    # Resume continues the same run.
    result = runner.invoke(main, [*args[:6], "--out", str(run), "--steps", "1536", *args[8:], "--resume"])
    assert result.exit_code == 0, result.output
    assert len((run / "eval_log.jsonl").read_text().splitlines()) == 6

    result = runner.invoke(main, ["mouse", "eval", "--clips", str(clips_dir), "--policy", str(run), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    overall = report["overall"]
    assert overall["clips"] == 2 and overall["track_replay_error_mm"] >= 0.0
    assert set(overall["emg_fit_mae"]["per_muscle"]) >= {"Biceps_Long", "Triceps_Long"}
    assert 0.0 <= overall["emg_fit_mae"]["mean"] <= 1.0
    rho = overall["simplex_rho"]
    assert rho["E"] == 2 and rho["tau"] == -1 and rho["Tp"] == 1
    assert all(v is None or -1.0 <= v <= 1.0 for v in rho["per_muscle"].values())
    assert set(report["per_clip"]) == {"synthetic_0000", "synthetic_0001"}
    best_only = runner.invoke(main, ["mouse", "eval", "--clips", str(clips_dir), "--policy", str(run / "best.npz"),
                                     "--json"])
    assert json.loads(best_only.output) == report  # a run directory means its best.npz

    # EMG supplied separately (--emg DIR of <clip>.csv) for clips that carry none.
    from mskbench.mouse.clips import Clip, load_clips, save_clip

    bare_dir, emg_dir = tmp_path / "bare", tmp_path / "emg"
    bare_dir.mkdir()
    emg_dir.mkdir()
    src = load_clips(clips_dir)
    for c in src:
        save_clip(Clip(name=c.name, fps=c.fps, qpos=c.qpos, keypoints=c.keypoints, offsets=c.offsets),
                  bare_dir / f"{c.name}.npz")
    biceps = src[0].emg["Biceps_Long"]
    (emg_dir / f"{src[0].name}.csv").write_text("Biceps_Long\n" + "\n".join(f"{v:.6f}" for v in biceps) + "\n")
    result = runner.invoke(main, ["mouse", "eval", "--clips", str(bare_dir), "--policy", str(run), "--emg",
                                  str(emg_dir), "--json"])
    assert result.exit_code == 0, result.output
    per_clip = json.loads(result.output)["per_clip"]
    assert set(per_clip[src[0].name]["emg_fit_mae"]) == {"Biceps_Long"}
    assert per_clip[src[0].name]["emg_fit_mae"]["Biceps_Long"] == pytest.approx(
        report["per_clip"][src[0].name]["emg_fit_mae"]["Biceps_Long"], abs=1e-5)
    assert per_clip[src[1].name]["emg_fit_mae"] == {"absent": "clip has no EMG"}
    (emg_dir / f"{src[1].name}.csv").write_text("Deltoid\n0.1\n")
    result = runner.invoke(main, ["mouse", "eval", "--clips", str(bare_dir), "--policy", str(run), "--emg",
                                  str(emg_dir)])
    assert result.exit_code == 2 and "unknown muscle columns" in result.output


@pytest.mark.slow
def test_eval_reports_missing_emg_as_absent(tmp_path):
    import mskbench
    from mskbench.agents.checkpoint import load_policy
    from mskbench.mouse.clips import Clip
    from mskbench.eval.mouse import evaluate

    clip = make_synthetic_clip(5)
    bare = Clip(name="bare", fps=clip.fps, qpos=clip.qpos, keypoints=clip.keypoints, offsets=clip.offsets)
    task = MouseImitation(clips=[bare])
    run = mskbench.train(task, out=tmp_path, steps=64, num_envs=4, num_steps=16, epochs=1, minibatch_size=32,
                         encoder_hidden=(8,), decoder_hidden=(8,), value_hidden=(8,), latent_size=4)
    assert run.steps == 64 and run.metric == "track_replay_error_mm" and run.best is not None
    env = MSKEnv(task)
    policy = load_policy(run.best_path, env.obs_layout, env.observation_space.shape[0])
    result = evaluate(policy, [bare], task)
    assert result["overall"]["emg_fit_mae"] == {"absent": "no clip has EMG"}
    assert result["per_clip"]["bare"]["emg_fit_mae"] == {"absent": "clip has no EMG"}
    assert result["overall"]["track_replay_error_mm"] == pytest.approx(run.best, rel=1e-9)


def test_mouse_cli_bad_input(tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["mouse", "eval", "--policy", str(tmp_path), "--synthetic", "1"])
    assert result.exit_code == 2 and "no checkpoint" in result.output
    result = runner.invoke(main, ["mouse", "replay", "--clips", str(tmp_path)])
    assert result.exit_code == 2


@pytest.mark.slow
def test_train_time_limit_from_the_command_line(tmp_path):
    runner = CliRunner()
    run = tmp_path / "run"
    args = ["mouse", "train", "--synthetic", "2", "--out", str(run), "--steps", "100000", "--num-envs", "8",
            "--hidden", "16", "--rollout", "32", "--backend", "cpu", "--eval-every", "1000"]
    result = runner.invoke(main, [*args, "--time-limit", "0.001s"])
    assert result.exit_code == 0, result.output
    assert "trained 256 steps (stopped at the time limit" in result.output
    log = [json.loads(line) for line in (run / "eval_log.jsonl").read_text().splitlines()]
    assert len(log) == 1 and log[0]["stopped"] == "time_limit" and "eval" in log[0]
    assert (run / "best.npz").exists()  # the policy it reached is the best so far, kept
    for bad in ("0", "-3m", "3x", "m"):
        result = runner.invoke(main, [*args, "--time-limit", bad])
        assert result.exit_code == 2 and "--time-limit" in result.output, (bad, result.output)
    assert "90s, 3m, 1.5h" in runner.invoke(main, [*args, "--time-limit", "soon"]).output


@pytest.mark.slow
def test_train_on_the_batched_mujoco_warp_env_then_resume_and_eval(tmp_path):
    """The GPU training path (whole rollouts in lax.scan over MuJoCo Warp worlds), on Warp's CPU device."""
    pytest.importorskip("mujoco_warp", reason="MuJoCo Warp not installed (pip install 'mskbench[warp]')")
    runner = CliRunner()
    run = tmp_path / "run"
    args = ["mouse", "train", "--synthetic", "2", "--out", str(run), "--steps", "512", "--num-envs", "8",
            "--hidden", "16", "--rollout", "32", "--backend", "jax", "--impl", "warp", "--eval-every", "1"]
    result = runner.invoke(main, args)
    assert result.exit_code == 0, result.output
    log = [json.loads(line) for line in (run / "eval_log.jsonl").read_text().splitlines()]
    assert [r["steps"] for r in log] == [256, 512] and all("eval" in r for r in log)
    result = runner.invoke(main, [*args[:7], "1024", *args[8:], "--resume"])
    assert result.exit_code == 0, result.output
    assert [json.loads(line)["steps"] for line in (run / "eval_log.jsonl").read_text().splitlines()] == [
        256, 512, 768, 1024]
    result = runner.invoke(main, ["mouse", "eval", "--synthetic", "2", "--policy", str(run), "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["overall"]["stable_clips"] == 2

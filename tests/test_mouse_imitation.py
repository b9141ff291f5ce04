"""Mouse imitation: synthetic clips, the CPU and JAX environments, train -> eval end to end."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from mskbench.cli import main
from mskbench.mouse.imitation import (ImitationConfig, MouseImitationVectorEnv, ReferenceBank, reference_at,
                                      reward_terms)
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
    cfg = ImitationConfig(joint_weight=5.0, joint_scale=0.2, ctrl_cost=0.15, energy_cost=0.1)
    q, q_ref = np.array([0.1, 0.0, 0.0, 0.2]), np.zeros(4)
    u = np.full(9, 0.5)
    qd, tau = np.array([1.0, -2.0, 0.0, 0.0]), np.array([0.01, 0.02, 0.3, 0.0])
    reward, terms = reward_terms(q, q_ref, qd, u, tau, cfg)
    joint = np.exp(-0.2 * (0.01 + 0.04))
    ctrl = 9 * 0.25
    energy = 1.0 * 0.01 + 2.0 * 0.02
    assert terms["joint"] == pytest.approx(joint) and terms["ctrl"] == pytest.approx(ctrl)
    assert terms["energy"] == pytest.approx(energy)
    assert reward == pytest.approx(5 * joint - 0.15 * ctrl - 0.1 * energy)
    with pytest.raises(ValueError, match="ctrl_cost"):
        ImitationConfig(ctrl_cost=-1.0)


def test_cpu_env_starts_on_the_reference_and_ends_episodes(clips):
    env = MouseImitationVectorEnv(clips, num_envs=2, seed=0)
    assert env.action_size == 9 and env.obs_size == 5 * 4 + 4 + 4 + 9 + 9 + 9
    env.reset(seed=1)
    env.set_start(0, 1, 10.0)
    obs = env._flat(0)
    bank = ReferenceBank.from_clips(clips)
    q = bank.qpos[1, 10]
    np.testing.assert_allclose(obs[env.obs_layout["proprio/qpos"]], q, atol=1e-6)
    expect = np.ravel(bank.qpos[1, 11:16] - q)
    np.testing.assert_allclose(obs[env.obs_layout["reference/future_delta"]], expect, atol=1e-6)
    # Near the clip's end the episode is truncated and the env restarts.
    env.set_start(0, 1, 98.6)
    _, _, term, trunc, info = env.step(np.zeros((2, 9)))
    assert trunc[0] and not term[0] and len(info["episode_returns"]) >= 1
    # Far from the reference it terminates.
    env.datas[1].qpos[env.handles.qpos_adr] += 1.5
    _, _, term, _, _ = env.step(np.zeros((2, 9)))
    assert term[1]
    with pytest.raises(ValueError, match=r"\(2, 9\)"):
        env.step(np.zeros((9,)))
    with pytest.raises(ValueError, match="non-finite"):
        env.step(np.full((2, 9), np.nan))


@pytest.mark.parametrize("impl", ["jax", "warp"])
def test_jax_env_matches_the_cpu_env(clips, impl):
    pytest.importorskip("mujoco.mjx", reason="MJX not installed (pip install 'mskbench[gpu]')")
    if impl == "warp":
        pytest.importorskip("mujoco_warp", reason="MuJoCo Warp not installed (pip install 'mskbench[warp]')")
    import jax.numpy as jnp

    from mskbench.mouse.jax_env import MouseImitationJaxEnv

    jenv = MouseImitationJaxEnv(clips, num_envs=2, impl=impl)
    cenv = MouseImitationVectorEnv(clips, num_envs=1)
    assert jenv.obs_layout == cenv.obs_layout
    cenv.set_start(0, 2, 30.0)
    state = jenv.start_at(2, 30.0)
    np.testing.assert_allclose(np.asarray(state["obs"][0]), cenv._flat(0), atol=1e-5)
    rng = np.random.default_rng(0)
    for _ in range(4):
        a = rng.uniform(-1, 1, (1, 9))
        obs_c, r_c, _, _, _ = cenv.step(a)
        state, out = jenv.step(state, jnp.asarray(np.repeat(a, 2, axis=0), jnp.float32))
        np.testing.assert_allclose(np.asarray(out["obs"][0]), obs_c[0], atol=1e-4, rtol=1e-4)
        assert float(out["reward"][0]) == pytest.approx(r_c[0], abs=1e-4)


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
    best = json.loads((run / "best_replay.json").read_text())
    errors = {r["steps"]: r["eval"]["track_replay_error_mm"] for r in log if "eval" in r}
    assert best["track_replay_error_mm"] == min(errors.values()) and errors[best["steps"]] == min(errors.values())
    assert (run / "best.npz").exists()
    assert json.loads((run / "imitation.json").read_text())["ctrl_cost"] == 0.15
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


def test_eval_reports_missing_emg_as_absent(tmp_path):
    from mskbench.agents.ppo import PPOConfig, train
    from mskbench.mouse.clips import Clip
    from mskbench.mouse.evaluate import evaluate

    clip = make_synthetic_clip(5)
    bare = Clip(name="bare", fps=clip.fps, qpos=clip.qpos, keypoints=clip.keypoints, offsets=clip.offsets)
    env = MouseImitationVectorEnv([bare], num_envs=4)
    cfg = PPOConfig(total_steps=64, num_steps=16, epochs=1, minibatch_size=32, policy="encoder_decoder",
                    encoder_hidden=(8,), decoder_hidden=(8,), value_hidden=(8,), latent_size=4)
    train(env, cfg, out_dir=tmp_path)
    from mskbench.agents.ppo import load_policy_checkpoint

    policy = load_policy_checkpoint(tmp_path / "checkpoint.npz", env.obs_layout, env.obs_size)
    result = evaluate(policy, [bare])
    assert result["overall"]["emg_fit_mae"] == {"absent": "no clip has EMG"}
    assert result["per_clip"]["bare"]["emg_fit_mae"] == {"absent": "clip has no EMG"}


def test_mouse_cli_bad_input(tmp_path):
    runner = CliRunner()
    result = runner.invoke(main, ["mouse", "eval", "--policy", str(tmp_path), "--synthetic", "1"])
    assert result.exit_code == 2 and "no checkpoint" in result.output
    result = runner.invoke(main, ["mouse", "replay", "--clips", str(tmp_path)])
    assert result.exit_code == 2


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

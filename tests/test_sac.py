"""The SAC family (SBX) on a small problem with a known optimum: learning, checkpoints, exact resume."""

from __future__ import annotations

import json
import shutil

import numpy as np
import pytest

pytest.importorskip("jax", reason="JAX not installed")
pytest.importorskip("sbx", reason="sbx-rl not installed (pip install -e '.[offpolicy]')")

from test_ppo import TargetVectorEnv, _eval  # noqa: E402

from mskbench.agents.checkpoint import export_policy, load_policy  # noqa: E402
from mskbench.agents.sac import SACConfig  # noqa: E402
from mskbench.training.loop import train_loop  # noqa: E402


def train(env, cfg, **kwargs):
    """The SAC family's learner in the training loop."""
    return train_loop("sac", env, cfg, **kwargs)

SMALL = dict(num_envs=8, num_steps=50, hidden=(32, 32), critic_hidden=(32, 32), learning_rate=3e-3,
             batch_size=64, buffer_size=1000, learning_starts=100, seed=1)


def _rows(tmp_path):
    return [json.loads(line) for line in (tmp_path / "eval_log.jsonl").read_text().splitlines()]


@pytest.mark.slow
def test_sac_learns_to_track_a_target(tmp_path):
    cfg = SACConfig(**{**SMALL, "num_steps": 100, "hidden": (64, 64), "critic_hidden": (64, 64),
                       "buffer_size": 20_000, "learning_starts": 200, "total_steps": 8 * 100 * 6, "batch_size": 128})
    env = TargetVectorEnv(num_envs=8)
    state = train(env, cfg, out_dir=tmp_path, eval_fn=lambda p: {"mse": _eval(p)}, eval_every=2)
    mse = [r["eval"]["mse"] for r in state.history if "eval" in r]
    # Chance (a = 0) is 2 x 1/12 ~ 0.17; the target is observed, so SAC gets far below it.
    assert mse[-1] < 0.02, mse
    assert state.history[-1]["episode_return"] > state.history[0]["episode_return"] + 1.0
    # The saved checkpoint acts as the in-memory policy that was evaluated, also as a policy-only export.
    assert _eval(load_policy(tmp_path / "checkpoint.npz", env.obs_layout, env.obs_size)) == pytest.approx(mse[-1])
    export_policy(tmp_path / "checkpoint.npz", tmp_path / "policy.npz")
    assert _eval(load_policy(tmp_path / "policy.npz", env.obs_layout, env.obs_size)) == pytest.approx(mse[-1])


def _leaves(tree):
    import jax

    return [np.asarray(x) for x in jax.tree_util.tree_leaves(tree)]


def test_resume_restores_networks_optimisers_replay_and_random_states(tmp_path):
    cfg = SACConfig(**SMALL, total_steps=8 * 50 * 4)
    first = train(TargetVectorEnv(num_envs=8), cfg, out_dir=tmp_path / "run")
    a = first.learner.model
    # A resume with nothing left to do only loads: everything must equal the run's end state.
    b = train(TargetVectorEnv(num_envs=8), cfg, out_dir=tmp_path / "run", resume=True).learner.model
    assert b.num_timesteps == a.num_timesteps == 1600 and b._n_updates == a._n_updates > 0
    for x, y in [(a.policy.actor_state, b.policy.actor_state), (a.policy.qf_state, b.policy.qf_state),
                 (a.ent_coef_state, b.ent_coef_state)]:
        for u, v in zip(_leaves(x), _leaves(y), strict=True):
            np.testing.assert_array_equal(u, v)
    for name in ("observations", "next_observations", "actions", "rewards", "dones", "timeouts"):
        np.testing.assert_array_equal(getattr(a.replay_buffer, name), getattr(b.replay_buffer, name))
    assert (a.replay_buffer.pos, a.replay_buffer.full) == (b.replay_buffer.pos, b.replay_buffer.full)
    np.testing.assert_array_equal(a.get_env().obs_rms.mean, b.get_env().obs_rms.mean)
    np.testing.assert_array_equal(np.asarray(a.key), np.asarray(b.key))
    # The buffer (125 rows of 8 worlds) wrapped: chunks wholly overwritten are gone, the rest is kept.
    chunks = sorted((tmp_path / "run" / "replay").glob("*.npz"))
    assert chunks and int(chunks[0].name.split(".")[0]) > 0


def test_two_resumes_from_one_checkpoint_continue_identically(tmp_path):
    """Same checkpoint, same seed -> the same next transitions, losses and evaluations; the first run's
    own continuation differs only through the episodes that were running at the checkpoint."""
    cfg = SACConfig(**SMALL, total_steps=8 * 50 * 2)
    train(TargetVectorEnv(num_envs=8), cfg, out_dir=tmp_path / "a")
    shutil.copytree(tmp_path / "a", tmp_path / "b")
    more = SACConfig(**SMALL, total_steps=8 * 50 * 4)
    ra = train(TargetVectorEnv(num_envs=8), more, out_dir=tmp_path / "a", resume=True).history
    rb = train(TargetVectorEnv(num_envs=8), more, out_dir=tmp_path / "b", resume=True).history
    keys = ("steps", "actor_loss", "critic_loss", "ent_coef", "episode_return")
    assert [[r[k] for k in keys] for r in ra] == [[r[k] for k in keys] for r in rb]
    assert [r["steps"] for r in _rows(tmp_path / "a")] == [400, 800, 1200, 1600]


def test_resume_refuses_other_settings_and_missing_runs(tmp_path):
    cfg = SACConfig(**SMALL, total_steps=400)
    train(TargetVectorEnv(num_envs=8), cfg, out_dir=tmp_path)
    with pytest.raises(ValueError, match="different config"):
        train(TargetVectorEnv(num_envs=8), SACConfig(**{**SMALL, "learning_rate": 1e-3}, total_steps=800),
              out_dir=tmp_path, resume=True)
    with pytest.raises(FileNotFoundError, match="nothing to resume"):
        train(TargetVectorEnv(num_envs=8), cfg, out_dir=tmp_path / "none", resume=True)
    with pytest.raises(ValueError, match="exploration must be one of gaussian, dep"):
        SACConfig(exploration="noise")


def test_a_checkpoint_refuses_an_env_with_other_observation_blocks(tmp_path):
    cfg = SACConfig(**SMALL, total_steps=400)
    env = TargetVectorEnv(num_envs=8)
    train(env, cfg, out_dir=tmp_path)
    other = {"task/reference": slice(0, 1), "proprio": slice(1, 3)}
    with pytest.raises(ValueError, match="trained on observation blocks"):
        load_policy(tmp_path / "checkpoint.npz", other, 3)
    with pytest.raises(ValueError, match="expects observations of size 3"):
        load_policy(tmp_path / "checkpoint.npz", env.obs_layout, 4)


def test_iterations_leave_no_logger_folders(tmp_path, monkeypatch):
    """SB3's default logger would create an empty SB3-<time> folder in the temporary directory per iteration."""
    import tempfile

    scratch = tmp_path / "tmp"
    scratch.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(scratch))
    state = train(TargetVectorEnv(num_envs=8), SACConfig(**{**SMALL, "total_steps": 8 * 50 * 3}),
                  out_dir=tmp_path / "run")
    assert state.history[-1]["steps"] == 8 * 50 * 3
    assert "critic_loss" in state.history[-1]  # the losses still reach the log rows
    assert list(scratch.iterdir()) == []

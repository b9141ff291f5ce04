"""The JAX PPO learner on a small problem with a known optimum; checkpoints and resume."""

from __future__ import annotations

import json
from typing import NamedTuple

import numpy as np
import pytest

pytest.importorskip("jax", reason="JAX not installed")

from mskbench.agents.checkpoint import load_policy  # noqa: E402
from mskbench.agents.ppo import PPOConfig, RunningNorm, gae, load_checkpoint  # noqa: E402
from mskbench.training.loop import train_loop  # noqa: E402


def train(env, cfg, **kwargs):
    """PPO's learner in the training loop."""
    return train_loop("ppo", env, cfg, **kwargs)


class TargetVectorEnv:
    """Each step shows a target in [-0.5, 0.5]^2 (block 'task/reference', what the encoder reads) and a constant
    (block 'proprio'); the reward is −‖a − target‖². Episodes last 8 steps."""

    def __init__(self, num_envs=16, seed=0):
        self.num_envs, self.obs_size, self.action_size = num_envs, 3, 2
        self.obs_layout = {"task/reference": slice(0, 2), "proprio": slice(2, 3)}
        self._rng = np.random.default_rng(seed)
        self._t = np.zeros(num_envs, int)
        self._ret = np.zeros(num_envs)

    def _obs(self):
        self._target = self._rng.uniform(-0.5, 0.5, (self.num_envs, 2))
        return np.concatenate([self._target, np.ones((self.num_envs, 1))], axis=1).astype(np.float32)

    def reset(self, seed=None):
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self._t[:] = 0
        self._ret[:] = 0
        return self._obs()

    def step(self, actions):
        reward = -np.sum((actions - self._target) ** 2, axis=1)
        self._t += 1
        self._ret += reward
        truncated = self._t >= 8
        terminated = np.zeros(self.num_envs, bool)
        obs = self._obs()
        info = {"final_obs": obs, "episode_returns": list(self._ret[truncated])}
        self._t[truncated] = 0
        self._ret[truncated] = 0
        return obs, reward, terminated, truncated, info


def _eval(policy, n=256, seed=123):
    rng = np.random.default_rng(seed)
    target = rng.uniform(-0.5, 0.5, (n, 2))
    obs = np.concatenate([target, np.ones((n, 1))], axis=1).astype(np.float32)
    return float(np.mean(np.sum((policy.act(obs) - target) ** 2, axis=1)))


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["mlp", "encoder_decoder"])
def test_ppo_learns_to_track_a_target(tmp_path, policy):
    cfg = PPOConfig(num_envs=16, total_steps=16 * 16 * 40, num_steps=16, epochs=4, minibatch_size=64, learning_rate=3e-3,
                    policy=policy, hidden=(32, 32), value_hidden=(32, 32), encoder_hidden=(32,),
                    decoder_hidden=(32,), latent_size=4, init_log_std=-1.0, seed=1)
    env = TargetVectorEnv()
    evals = []
    state = train(env, cfg, out_dir=tmp_path, eval_fn=lambda p: {"mse": _eval(p)}, eval_every=10,
                  on_iteration=lambda row: evals.append(row))
    first, last = evals[0]["mean_reward"], evals[-1]["mean_reward"]
    assert last > first + 0.05, (first, last)
    # The target is observed, so a good policy's squared error is far below chance (2 × 1/6 ≈ 0.33).
    mse = [r["eval"]["mse"] for r in evals if "eval" in r]
    assert mse[-1] < 0.05, mse
    log = [json.loads(line) for line in (tmp_path / "eval_log.jsonl").read_text().splitlines()]
    assert len(log) == state.iteration == 40 and log[-1]["steps"] == cfg.total_steps
    policy_obj = load_policy(tmp_path / "checkpoint.npz", env.obs_layout, env.obs_size)
    assert _eval(policy_obj) == pytest.approx(mse[-1], abs=1e-6)


@pytest.mark.slow
def test_resume_continues_from_the_checkpoint(tmp_path):
    cfg = PPOConfig(num_envs=16, total_steps=16 * 8 * 3, num_steps=8, epochs=2, minibatch_size=32, hidden=(8,),
                    value_hidden=(8,), seed=0)
    train(TargetVectorEnv(), cfg, out_dir=tmp_path)
    saved = load_checkpoint(tmp_path / "checkpoint.npz")
    assert saved.iteration == 3 and saved.steps == cfg.total_steps
    more = PPOConfig(**{**cfg.__dict__, "total_steps": 16 * 8 * 5})
    state = train(TargetVectorEnv(), more, out_dir=tmp_path, resume=True)
    assert state.iteration == 5 and state.steps == more.total_steps
    assert len((tmp_path / "eval_log.jsonl").read_text().splitlines()) == 5
    other = PPOConfig(**{**cfg.__dict__, "learning_rate": 1.0})
    with pytest.raises(ValueError, match="different config"):
        train(TargetVectorEnv(), other, out_dir=tmp_path, resume=True)
    with pytest.raises(FileNotFoundError):
        train(TargetVectorEnv(), cfg, out_dir=tmp_path / "empty", resume=True)


@pytest.mark.slow
def test_time_limit_stops_after_an_evaluated_checkpointed_iteration(tmp_path):
    cfg = PPOConfig(num_envs=16, total_steps=16 * 8 * 50, num_steps=8, epochs=1, minibatch_size=32, hidden=(8,),
                    value_hidden=(8,), seed=0)
    evals = []
    state = train(TargetVectorEnv(), cfg, out_dir=tmp_path, eval_fn=lambda p: evals.append(1) or {"mse": _eval(p)},
                  eval_every=1000, time_limit_s=1e-9)
    # The first iteration already ends past the limit: it is the last, evaluated although eval_every
    # is not due, marked, and saved.
    assert state.iteration == 1 and len(evals) == 1
    assert state.history[-1]["stopped"] == "time_limit" and "eval" in state.history[-1]
    assert load_checkpoint(tmp_path / "checkpoint.npz").iteration == 1
    resumed = train(TargetVectorEnv(), cfg, out_dir=tmp_path, resume=True, time_limit_s=1e-9)
    assert resumed.iteration == 2 and load_checkpoint(tmp_path / "checkpoint.npz").steps == 2 * 16 * 8
    # A limit long enough changes nothing: the run ends at total_steps, not marked.
    short = PPOConfig(**{**cfg.__dict__, "total_steps": 16 * 8 * 2})
    done = train(TargetVectorEnv(), short, out_dir=tmp_path / "full", time_limit_s=3600.0)
    assert done.iteration == 2 and "stopped" not in done.history[-1]
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError, match="time_limit_s"):
            train(TargetVectorEnv(), cfg, time_limit_s=bad)


@pytest.mark.parametrize("policy", ["mlp", "encoder_decoder"])
def test_exported_policy_acts_like_the_checkpoint_and_is_not_resumable(tmp_path, policy):
    from mskbench.agents.ppo import export_policy

    cfg = PPOConfig(num_envs=16, total_steps=16 * 8 * 2, num_steps=8, epochs=1, minibatch_size=32, hidden=(16,),
                    value_hidden=(16,), policy=policy, encoder_hidden=(8,), decoder_hidden=(8,), latent_size=2)
    env = TargetVectorEnv()
    train(env, cfg, out_dir=tmp_path)
    full = tmp_path / "checkpoint.npz"
    small = export_policy(full, tmp_path / "policy.npz")
    with np.load(small) as z:
        assert not any(k.startswith(("opt/", "params/value/")) or k == "key" for k in z.files)
    assert small.stat().st_size < full.stat().st_size
    obs = np.random.default_rng(0).uniform(-0.5, 0.5, (32, 3)).astype(np.float32)
    a = load_policy(full, env.obs_layout, env.obs_size).act(obs)
    b = load_policy(small, env.obs_layout, env.obs_size).act(obs)
    np.testing.assert_array_equal(a, b)
    with pytest.raises(ValueError, match="only a policy"):
        load_checkpoint(small)


def test_gae_matches_hand_computation():
    rewards = np.array([[1.0], [2.0], [3.0]])
    values = np.array([[0.5], [0.5], [0.5]])
    next_values = np.array([[0.5], [0.5], [10.0]])
    terminated = np.array([[0.0], [0.0], [1.0]])
    done = terminated
    adv, ret = gae(rewards, values, next_values, terminated, done, gamma=0.9, lam=0.8)
    d2 = 3.0 - 0.5                       # terminal: no bootstrap
    d1 = 2.0 + 0.9 * 0.5 - 0.5
    d0 = 1.0 + 0.9 * 0.5 - 0.5
    a2, a1 = d2, d1 + 0.9 * 0.8 * d2
    a0 = d0 + 0.9 * 0.8 * a1
    np.testing.assert_allclose(adv[:, 0], [a0, a1, a2])
    np.testing.assert_allclose(ret, adv + values)


def test_device_gae_matches_numpy_gae():
    import jax.numpy as jnp

    from mskbench.agents.ppo import gae_device

    rng = np.random.default_rng(3)
    T, N = 12, 5
    r, v, nv = (rng.normal(size=(T, N)).astype(np.float32) for _ in range(3))
    term = (rng.uniform(size=(T, N)) < 0.1).astype(np.float32)
    done = np.maximum(term, (rng.uniform(size=(T, N)) < 0.1).astype(np.float32))
    expect, _ = gae(r, v, nv, term, done, 0.97, 0.9)
    got = gae_device(*(jnp.asarray(x) for x in (r, v, nv, term, done)), 0.97, 0.9)
    np.testing.assert_allclose(np.asarray(got), expect, rtol=1e-5, atol=1e-5)


def test_running_norm_matches_batch_statistics():
    rng = np.random.default_rng(0)
    data = rng.normal(3.0, 2.0, (1000, 4))
    norm = RunningNorm.create(4)
    for chunk in np.split(data, 10):
        norm.update(chunk)
    np.testing.assert_allclose(norm.mean, data.mean(0), atol=1e-3)
    np.testing.assert_allclose(norm.var, data.var(0), rtol=1e-3)


def test_config_validation():
    with pytest.raises(ValueError, match="'mlp' or 'encoder_decoder'"):
        PPOConfig(policy="transformer")
    with pytest.raises(ValueError, match="num_steps"):
        PPOConfig(num_steps=0)


class _TargetState(NamedTuple):
    key: object
    obs: object
    t: object
    reused: object


class FunctionalTargetEnv:
    """TargetVectorEnv as a batched JAX env (the GPU path): the rollout runs in lax.scan."""

    termination_names = ("time_limit",)

    def __init__(self, num_envs=16):
        self.num_envs, self.obs_size, self.action_size = num_envs, 3, 2
        self.obs_layout = {"task/reference": slice(0, 2), "proprio": slice(2, 3)}
        self.refreshes = 0

    def _obs(self, key):
        import jax
        import jax.numpy as jnp

        target = jax.random.uniform(key, (self.num_envs, 2), minval=-0.5, maxval=0.5)
        return jnp.concatenate([target, jnp.ones((self.num_envs, 1))], axis=1)

    def reset(self, key):
        import jax
        import jax.numpy as jnp

        k, k_obs = jax.random.split(key)
        return _TargetState(k, self._obs(k_obs), jnp.zeros(self.num_envs, jnp.int32), jnp.int32(0))

    def step(self, state, actions, auto_reset=True, record=False):
        import jax
        import jax.numpy as jnp

        from mskbench.envs.protocols import StepOut

        reward = -jnp.sum((actions - state.obs[:, :2]) ** 2, axis=1)
        t = state.t + 1
        truncated = t >= 8
        k, k_obs = jax.random.split(state.key)
        obs = self._obs(k_obs)
        out = StepOut(obs, reward, jnp.zeros(self.num_envs, bool), truncated, obs, truncated, {},
                      jnp.where(truncated, 0, -1), None)
        return _TargetState(k, obs, jnp.where(truncated, 0, t), state.reused), out

    def refresh(self, state):
        self.refreshes += 1
        return state


@pytest.mark.slow
def test_ppo_learns_on_a_functional_env_with_scanned_rollouts(tmp_path):
    cfg = PPOConfig(num_envs=16, total_steps=16 * 16 * 40, num_steps=16, epochs=4, minibatch_size=64, learning_rate=3e-3,
                    policy="encoder_decoder", hidden=(32, 32), value_hidden=(32, 32), encoder_hidden=(32,),
                    decoder_hidden=(32,), latent_size=4, init_log_std=-1.0, seed=1)
    rows = []
    env = FunctionalTargetEnv()
    train(env, cfg, out_dir=tmp_path, eval_fn=lambda p: {"mse": _eval(p)}, eval_every=40, on_iteration=rows.append)
    assert env.refreshes == len(rows) == 40  # the bank of starts is refreshed after every rollout
    assert rows[-1]["resets"] == 2 * 16 and rows[-1]["starts_reused"] == 0
    assert rows[-1]["mean_reward"] > rows[0]["mean_reward"] + 0.05
    assert rows[-1]["eval"]["mse"] < 0.05
    # Episodes of 8 steps finish within each 16-step rollout and are reported.
    assert rows[-1]["episode_return"] is not None and rows[-1]["episode_return"] > -1.0


def test_a_checkpoint_knows_its_observation_layout(tmp_path):
    """Same size, other blocks (e.g. a mouse checkpoint from before the shared stack reordered the
    blocks): evaluation and resume refuse it by name instead of feeding it permuted observations."""
    cfg = PPOConfig(num_envs=16, total_steps=16 * 8, num_steps=8, epochs=1, minibatch_size=32, hidden=(8,),
                    value_hidden=(8,))
    env = TargetVectorEnv()
    train(env, cfg, out_dir=tmp_path)
    swapped = {"proprio": slice(0, 1), "task/reference": slice(1, 3)}
    with pytest.raises(ValueError, match=r"trained on observation blocks \(sizes\) \{'task/reference': 2, 'proprio': 1\}; "
                                         r"this task's are \{'proprio': 1, 'task/reference': 2\}"):
        load_policy(tmp_path / "checkpoint.npz", swapped, 3)
    with pytest.raises(ValueError, match=r"this task's are \{'task/reference': 2, 'proprio': 2\}"):
        load_policy(tmp_path / "checkpoint.npz", {"task/reference": slice(0, 2), "proprio": slice(2, 4)}, 4)
    env.obs_layout = swapped
    with pytest.raises(ValueError, match="trained on observation blocks"):
        train(env, PPOConfig(**{**cfg.__dict__, "total_steps": 16 * 8 * 2}), out_dir=tmp_path, resume=True)


def test_an_encoder_decoder_checkpoint_without_a_layout_is_refused(tmp_path):
    """Mouse checkpoints from before the layout was recorded had their blocks in another order."""
    cfg = PPOConfig(num_envs=16, total_steps=16 * 8, num_steps=8, epochs=1, minibatch_size=32, hidden=(8,),
                    value_hidden=(8,), policy="encoder_decoder", encoder_hidden=(8,), decoder_hidden=(8,),
                    latent_size=2)
    env = TargetVectorEnv()
    train(env, cfg, out_dir=tmp_path)
    with np.load(tmp_path / "checkpoint.npz") as z:
        old = {k: z[k] for k in z.files if k != "obs_layout"}
    np.savez(tmp_path / "old.npz", **old)
    load_policy(tmp_path / "checkpoint.npz", env.obs_layout, env.obs_size)  # with its layout: fine
    with pytest.raises(ValueError, match="written before checkpoints recorded their observation layout"):
        load_policy(tmp_path / "old.npz", env.obs_layout, env.obs_size)


class WideActionEnv(TargetVectorEnv):
    """416 actions (MyoFullBody's muscle count), reward −mean(a²): PPO's log-ratio sums over all of them."""

    def __init__(self, num_envs=4, dim=416):
        super().__init__(num_envs)
        self.action_size = dim

    def step(self, actions):
        obs, _, terminated, truncated, info = super().step(actions[:, :2])
        return obs, -np.mean(actions ** 2, axis=1), terminated, truncated, info


def _wide_cfg(**kw):
    return PPOConfig(num_envs=4, total_steps=4 * 64 * 2, num_steps=64, epochs=10, minibatch_size=64,
                     learning_rate=1e-2, hidden=(256, 256), value_hidden=(32, 32), seed=0, **kw)


def test_the_ratio_of_a_far_moved_policy_stays_finite(monkeypatch):
    """On 416 muscles one aggressive update can move log π by hundreds of nats (measured on TrackWalk at
    lr 3e-4: 590 after one iteration), past float32's exp: the ratio comes from the log-ratio clamped to
    ±LOG_RATIO_LIMIT, so the loss and the update stay finite; unclamped, the same update is NaN."""
    import jax

    import mskbench.agents.ppo as ppo

    def one_update():
        cfg = PPOConfig(num_envs=4, num_steps=16, epochs=1, minibatch_size=64, hidden=(32,), value_hidden=(8,))
        act, _, _, update = ppo.make_functions(cfg, None)
        params = ppo.init_params(jax.random.PRNGKey(0), cfg, 3, 416, None)
        rng = np.random.default_rng(0)
        obs = rng.normal(size=(64, 3)).astype(np.float32)
        actions, logp, _ = act(params, obs, jax.random.PRNGKey(1))
        data = {"obs": obs, "actions": np.asarray(actions), "logp": np.asarray(logp) - 200.0,  # 200 nats moved
                "adv": rng.normal(size=64).astype(np.float32), "returns": np.zeros(64, np.float32)}
        new, _, stats = update(params, ppo.adam_init(params), data, jax.random.PRNGKey(2))
        return ppo._finite(new), stats

    finite, stats = one_update()
    assert finite and np.isfinite(float(stats["approx_kl"])) and np.isfinite(float(stats["grad_norm"]))
    monkeypatch.setattr(ppo, "LOG_RATIO_LIMIT", float("inf"))
    finite, stats = one_update()
    assert not finite and not np.isfinite(float(stats["grad_norm"]))


def test_a_non_finite_policy_is_refused_before_it_reaches_the_checkpoint(tmp_path, monkeypatch):
    import jax

    import mskbench.agents.ppo as ppo

    cfg = PPOConfig(num_envs=4, total_steps=64, num_steps=16, epochs=1, minibatch_size=32, hidden=(8,),
                    value_hidden=(8,))
    train(TargetVectorEnv(num_envs=4), cfg, out_dir=tmp_path)
    before = (tmp_path / "checkpoint.npz").read_bytes()
    make = ppo.make_functions

    def poisoned(cfg, split):
        act, value_fn, det, update = make(cfg, split)

        def bad_update(params, opt_state, data, key, **kwargs):
            params, opt_state, stats = update(params, opt_state, data, key, **kwargs)
            return jax.tree_util.tree_map(lambda x: x * np.nan, params), opt_state, stats
        return act, value_fn, det, bad_update

    monkeypatch.setattr(ppo, "make_functions", poisoned)
    with pytest.raises(RuntimeError, match=r"update of iteration 2 made the policy non-finite .* lower learning_rate"):
        train(TargetVectorEnv(num_envs=4), PPOConfig(**{**cfg.__dict__, "total_steps": 128}), out_dir=tmp_path,
              resume=True)
    assert (tmp_path / "checkpoint.npz").read_bytes() == before
    assert len((tmp_path / "eval_log.jsonl").read_text().splitlines()) == 1


def test_target_kl_stops_the_epochs_at_the_first_minibatch_past_it(tmp_path):
    rows = []
    train(WideActionEnv(), _wide_cfg(target_kl=1e-12), on_iteration=rows.append)
    # The first minibatch of every iteration starts at the rollout's policy (KL 0); the second is past 1.5e-12.
    assert all(0 < r["updates_applied"] < 0.1 for r in rows)
    rows = []
    train(WideActionEnv(), _wide_cfg(), on_iteration=rows.append)
    assert all(r["updates_applied"] == 1.0 for r in rows)
    with pytest.raises(ValueError, match="target_kl must be > 0"):
        PPOConfig(target_kl=0.0)


def test_actor_learning_rate_scales_the_actors_step_and_leaves_the_critics():
    """``actor_learning_rate`` (for a started actor, docs/distillation.md): one Adam step moves the actor by that
    step instead of ``learning_rate``'s, and the critic exactly as without it."""
    import jax

    import mskbench.agents.ppo as ppo

    rng = np.random.default_rng(0)
    obs = rng.normal(size=(64, 3)).astype(np.float32)
    adv = rng.normal(size=64).astype(np.float32)

    def one_update(**kw):
        cfg = PPOConfig(num_envs=4, num_steps=16, epochs=1, minibatch_size=64, hidden=(32,), value_hidden=(8,),
                        learning_rate=1e-3, **kw)
        act, _, _, update = ppo.make_functions(cfg, None)
        params = ppo.init_params(jax.random.PRNGKey(0), cfg, 3, 5, None)
        actions, logp, _ = act(params, obs, jax.random.PRNGKey(1))
        data = {"obs": obs, "actions": np.asarray(actions), "logp": np.asarray(logp),
                "adv": adv, "returns": np.ones(64, np.float32)}
        new, _, _ = update(params, ppo.adam_init(params), data, jax.random.PRNGKey(2))
        moved = jax.tree_util.tree_map(lambda a, b: np.asarray(a) - np.asarray(b), new, params)
        return {k: np.concatenate([x.ravel() for x in jax.tree_util.tree_leaves(v)]) for k, v in moved.items()}

    same, tenth, frozen = one_update(), one_update(actor_learning_rate=1e-4), one_update(actor_learning_rate=0.0)
    np.testing.assert_array_equal(tenth["value"], same["value"])
    np.testing.assert_array_equal(frozen["value"], same["value"])
    for key in ("policy", "log_std"):
        assert np.abs(same[key]).max() > 1e-4
        np.testing.assert_allclose(tenth[key], 0.1 * same[key], rtol=1e-3, atol=1e-8)
        assert not frozen[key].any()
    with pytest.raises(ValueError, match="actor_learning_rate must be >= 0"):
        PPOConfig(actor_learning_rate=-1e-4)

"""Behaviour cloning with DAgger (mskbench.agents.bc) and PPO started from its actor (--init)."""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("jax")

from mskbench.agents import bc  # noqa: E402


class ToyEnv:
    """A 1-D world: the observation is the position, the action moves it; an episode lasts 5 steps."""

    def __init__(self):
        self.x, self.t = 0.0, 0

    def reset(self, seed=None):
        self.x = float(np.random.default_rng(seed).uniform(-1, 1)) if seed is not None else 0.0
        self.t = 0
        return np.array([self.x], np.float32), {}

    def step(self, action):
        self.x += float(action[0])
        self.t += 1
        done = self.t >= 5
        info = {"step": self.t, "success": False, "termination": "time_limit" if done else None}
        return np.array([self.x], np.float32), -abs(self.x), False, done, info


class ToyTeacher:
    """Labels a state ``-0.5 x`` and remembers every state it was asked about."""

    def __init__(self):
        self.seen: list[float] = []

    def reset(self):
        pass

    def act(self, obs):
        self.seen.append(float(obs[0]))
        return np.array([-0.5 * obs[0]], np.float32)


def _constant_student(value: float, obs_size: int = 1, action_size: int = 1) -> dict:
    """A one-layer student whose action is ``value`` everywhere."""
    params = [{"w": np.zeros((obs_size, action_size), np.float32), "b": np.full(action_size, value, np.float32)}]
    return {"params": params, "mean": np.zeros(obs_size), "std": np.ones(obs_size), "clip": 10.0}


def test_dagger_labels_the_students_states_with_the_teacher():
    env, teacher = ToyEnv(), ToyTeacher()
    worlds = bc.DaggerWorlds([env], [teacher], [3], rng_seed=0)
    start = float(worlds.obs[0][0])
    data = worlds.collect(_constant_student(0.25), beta=0.0, steps=4)
    # The student acted (+0.25 per step): the states visited are start + 0.25 t, not the teacher's path.
    visited = start + 0.25 * np.arange(4)
    np.testing.assert_allclose(data["obs"][:, 0], visited, rtol=0, atol=1e-6)
    np.testing.assert_allclose(teacher.seen, visited, rtol=0, atol=1e-6)
    # Each label is the teacher's action in that visited state.
    np.testing.assert_allclose(data["labels"][:, 0], -0.5 * visited, rtol=0, atol=1e-6)
    assert not data["teacher_acted"].any()


def test_dagger_mixture_and_restarts():
    env, teacher = ToyEnv(), ToyTeacher()
    worlds = bc.DaggerWorlds([env], [teacher], [1], rng_seed=0)
    data = worlds.collect(None, beta=0.0, steps=7)  # no student yet: the teacher acts
    assert data["teacher_acted"].all()
    # The teacher's path halves the position each step; the episode restarts after 5 steps.
    x = data["obs"][:5, 0]
    np.testing.assert_allclose(x[1:], 0.5 * x[:-1], rtol=1e-5)
    assert [f["length"] for f in data["finished"]] == [5]
    mixed = worlds.collect(_constant_student(0.25), beta=0.5, steps=400)
    assert 0.4 < mixed["teacher_acted"].mean() < 0.6


def test_horizon_restarts_a_world_without_counting_an_episode():
    env, teacher = ToyEnv(), ToyTeacher()
    worlds = bc.DaggerWorlds([env], [teacher], [1], rng_seed=0, horizon=3)
    data = worlds.collect(None, beta=1.0, steps=7)
    x = data["obs"][:, 0]
    # Steps 0-2 follow the teacher (halving), step 3 is a fresh start, not half of step 2.
    np.testing.assert_allclose(x[1:3], 0.5 * x[:2], rtol=1e-5)
    assert abs(x[3] - 0.5 * x[2]) > 1e-3
    np.testing.assert_allclose(x[4:6], 0.5 * x[3:5], rtol=1e-5)
    assert data["finished"] == []  # cut at 3 steps, before the task's 5: no episode ended


def test_the_gate_hands_over_to_the_teacher_where_the_student_strays():
    env, teacher = ToyEnv(), ToyTeacher()
    worlds = bc.DaggerWorlds([env], [teacher], [3], rng_seed=0)
    x0 = float(worlds.obs[0][0])
    # The student says +0.25 everywhere; the label is -0.5 x: they differ by more than 0.01 (squared)
    # unless x is within 0.1 of -0.5.
    data = worlds.collect(_constant_student(0.25), beta=0.0, steps=4, gate=0.01)
    x = data["obs"][:, 0]
    strays = (0.25 + 0.5 * x) ** 2 > 0.01
    np.testing.assert_array_equal(data["gated"][:, 0], strays)
    np.testing.assert_array_equal(data["teacher_acted"][:, 0], strays)
    assert x[0] == pytest.approx(x0) and strays[0] == ((0.25 + 0.5 * x0) ** 2 > 0.01)


def test_bc_config_checks_its_settings():
    from mskbench.agents import algorithm as mskbench_algorithm

    with pytest.raises(ValueError, match="beta_decay"):
        bc.BCConfig(beta_decay=1.5)
    with pytest.raises(ValueError, match="valid: excitation, activation"):
        bc.BCConfig(loss="force")
    with pytest.raises(ValueError, match="hold, expert"):
        bc.BCConfig(teacher="oracle")
    cfg = bc.BCConfig(beta0=1.0, beta_decay=0.5)
    assert [cfg.beta(i) for i in range(3)] == [1.0, 0.5, 0.25]
    with pytest.raises(ValueError, match="workers must be >= 0"):
        bc.BCConfig(workers=-1)
    for name in bc.REMOVED:  # the settings docs/distillation.md measured and did not keep have left
        with pytest.raises(ValueError, match=repr(name)):
            mskbench_algorithm("bc").config("cpu", **{name: bc.REMOVED[name]})
    stored = {"gate": 0.1, "noise": 0.05, "average": 0.0, "polish": None}  # a run.json from before they left
    assert bc.stored_config(stored).gate == 0.1 and bc.removed_settings(stored) == {"noise": 0.05}


def test_bc_loss_falls_on_recorded_data(tmp_path):
    from mskbench.envs import MSKEnv
    from mskbench.eval.demos import record_demos

    path = tmp_path / "demos.npz"
    record_demos("Stand", "hold", 1, 0, path, max_steps=40)
    env = MSKEnv("Stand")
    obs, labels = bc.read_demos(path, "Stand", env.obs_layout)
    assert obs.shape == (40, env.observation_space.shape[0]) and labels.shape == (40, 416)
    import jax
    import jax.numpy as jnp

    from mskbench.agents.ppo_networks import RunningNorm, adam_init, mlp_init

    cfg = bc.BCConfig(updates=60, minibatch_size=32, hidden=(32,), learning_rate=1e-3)
    params = mlp_init(jax.random.PRNGKey(0), [obs.shape[1], 32, 416], last_scale=0.01)
    norm = RunningNorm.create(obs.shape[1])
    norm.update(obs)
    idx = np.random.default_rng(0).integers(0, len(obs), (cfg.updates, cfg.minibatch_size))
    _, _, losses, _ = bc.make_fit(cfg)(params, adam_init(params), jnp.asarray(norm(obs)), jnp.asarray(labels),
                                        jnp.zeros((len(obs), 0)),
                                        jnp.asarray(idx))
    losses = np.asarray(losses)
    assert losses[-10:].mean() < 0.5 * losses[:5].mean()
    with pytest.raises(ValueError, match="not Walk"):
        bc.read_demos(path, "Walk", env.obs_layout)


def test_a_run_with_a_removed_setting_evaluates_as_before_and_is_not_resumed(tmp_path, benchmark_script):
    from mskbench.agents.base import savez_atomic
    from mskbench.envs import MSKEnv
    from mskbench.eval.protocol import load_policy

    out = tmp_path / "old"
    _small_bc(out, 16)
    env = MSKEnv("Stand")
    observations = [env.reset(seed=s)[0] for s in range(3)]

    def acts():  # the run directory as evaluation loads it
        policy = load_policy(str(out), env, 0)
        return np.array([policy.act(o) for o in observations])

    before = acts()
    # As a run of an earlier BC with `average` and `polish` recorded it (and `noise` at its old default)
    old = {"average": 0.5, "polish": "1e-3:5", "noise": 0.0}
    settings = json.loads((out / "run.json").read_text())
    settings["config"].update(old)
    (out / "run.json").write_text(json.dumps(settings))
    for name in ("checkpoint.npz", "best.npz"):
        with np.load(out / name) as z:
            arrays = {k: z[k] for k in z.files}
        arrays["bc_config"] = np.array(json.dumps({**json.loads(str(arrays["bc_config"])), **old}))
        savez_atomic(out / name, arrays)
    np.testing.assert_array_equal(acts(), before)  # it evaluates as it did
    with pytest.raises(ValueError, match=r"trained with polish=1e-3:5, average=0.5, removed from BC .*not resumed$"):
        _small_bc(out, 24, resume=True)

    # benchmarks/studies/bc_refit.py refits the student that acted; bc_average.py means two students
    ckpt = out / "checkpoint.npz"
    refit, mean = benchmark_script("bc_refit"), benchmark_script("bc_average")
    refit.refit(ckpt, tmp_path / "refit", [(1e-3, 5)])
    with np.load(ckpt) as a, np.load(tmp_path / "refit" / "checkpoint.npz") as b:
        before_w, after_w = a["params/policy/0/w"], b["params/policy/0/w"]
        assert "bc_fitted/0/w" not in b.files and 0 < np.abs(after_w - before_w).max() < 0.1
        assert "average" not in json.loads(str(b["bc_config"]))  # written as today's BC
    mean.average([ckpt, tmp_path / "refit" / "checkpoint.npz"], tmp_path / "mean.npz")
    with np.load(tmp_path / "mean.npz") as z:
        np.testing.assert_allclose(z["params/policy/0/w"], (before_w + after_w) / 2, rtol=1e-6)


def test_activation_space_predicts_the_simulators_activations_and_fits_in_them():
    import jax
    import jax.numpy as jnp

    from mskbench.agents.ppo_networks import RunningNorm, adam_init, mlp_init
    from mskbench.envs import MSKEnv

    env = MSKEnv("Stand")
    space = bc.ActivationSpace(env, env.obs_layout)
    rng = np.random.default_rng(0)
    obs, _ = env.reset(seed=0)
    rows, labels = [], []
    for _ in range(30):
        action = rng.uniform(-1, 1, 416).astype(np.float32)
        nxt, *_ = env.step(action)
        # what the simulator's activations became is what the space says the action reaches
        np.testing.assert_allclose(nxt[space.act], space.reached(obs[space.act], action), atol=1e-5)
        rows.append(obs)
        labels.append(action)
        obs = nxt
    assert space.distance(obs, labels[0], labels[0]) == 0.0
    assert space.distance(obs, labels[0], labels[1]) > 0.0
    obs, labels = np.array(rows), np.array(labels)
    cfg = bc.BCConfig(updates=300, minibatch_size=16, hidden=(32,), learning_rate=3e-3, loss="activation")
    params = mlp_init(jax.random.PRNGKey(0), [obs.shape[1], 32, 416], last_scale=0.01)
    norm = RunningNorm.create(obs.shape[1])
    norm.update(obs)
    idx = rng.integers(0, len(obs), (cfg.updates, cfg.minibatch_size))
    _, _, losses, _ = bc.make_fit(cfg, space)(params, adam_init(params), jnp.asarray(norm(obs)), jnp.asarray(labels),
                                              jnp.asarray(obs[:, space.act]), jnp.asarray(idx))
    losses = np.asarray(losses)
    assert losses[-10:].mean() < 0.5 * losses[:5].mean()


def _small_bc(out, steps, **kw):
    import mskbench

    return mskbench.train("Stand", algo="bc", out=out, steps=steps, num_envs=2, num_steps=4, updates=3,
                          hidden=(16,), workers=1, minibatch_size=8, eval_episodes=1, eval_every_steps=10**6, **kw)


def test_bc_brings_its_own_worlds_and_train_builds_one(monkeypatch, tmp_path):
    from mskbench.agents import algorithm
    from mskbench.training import run as training_run

    built = []
    make_env = training_run.make_env

    def recording(task, backend, num_envs, **kw):
        built.append(num_envs)
        return make_env(task, backend, num_envs, **kw)

    monkeypatch.setattr(training_run, "make_env", recording)
    run = _small_bc(tmp_path / "bc", 8)  # num_envs=2: BC's own worlds, in its pool
    assert built == [1] and run.history[0]["steps"] == 8  # train() built one world, for the task and layout
    assert algorithm("bc").brings_own_worlds and not algorithm("ppo").brings_own_worlds


def test_bc_run_resumes_with_its_data_and_loads_as_a_ppo_policy(tmp_path):
    from mskbench.agents.checkpoint import checkpoint_format, load_policy
    from mskbench.envs import MSKEnv

    out = tmp_path / "bc"
    first = _small_bc(out, 16)
    assert [r["steps"] for r in first.history] == [8, 16]
    assert first.history[0]["teacher_share"] == 1.0
    assert sorted(p.name for p in (out / "dagger").iterdir()) == ["00001.npz", "00002.npz"]
    run_json = out / "run.json"
    settings = json.loads(run_json.read_text())
    del settings["config"]["loss"]  # a run from before this setting existed resumes ...
    settings["config"].update(teacher_rate=0.0, std_floor=0.0)  # ... and one from before these left, at 0
    run_json.write_text(json.dumps(settings))
    resumed = _small_bc(out, 24, resume=True)
    assert [r["steps"] for r in resumed.history] == [24]
    assert resumed.history[0]["samples"] == 24  # the two earlier iterations' data read back, and this one's
    assert resumed.history[0]["beta"] == pytest.approx(0.7**2)  # the schedule goes on: beta0 * 0.7^2
    ckpt = out / "checkpoint.npz"
    assert checkpoint_format(ckpt) == "mskbench-bc"
    env = MSKEnv("Stand")
    obs, _ = env.reset(seed=0)
    action = load_policy(ckpt, env.obs_layout, obs.size).act(obs)
    assert action.shape == (416,) and np.all(np.abs(action) <= 1.0)
    with pytest.raises(ValueError, match="other settings"):
        _small_bc(out, 32, resume=True, learning_rate=1e-3)
    with pytest.raises(ValueError, match=r"other settings \(horizon\)"):  # a new key, set: a difference
        _small_bc(out, 32, resume=True, horizon=3)


def test_ppo_init_loads_the_actor_exactly_and_warms_the_critic_up(tmp_path):
    import jax

    import mskbench
    from mskbench.agents.checkpoint import load_policy
    from mskbench.agents.ppo import load_checkpoint
    from mskbench.envs import MSKEnv

    _small_bc(tmp_path / "bc", 8)
    src = tmp_path / "bc" / "best.npz"  # a run directory starts from its evaluated checkpoint
    run = mskbench.train("Stand", algo="ppo", out=tmp_path / "ppo", steps=16, num_envs=2, num_steps=4,
                         minibatch_size=4, epochs=1, hidden=(16,), value_hidden=(16,), init=tmp_path / "bc",
                         critic_warmup=1, eval_episodes=1, eval_every_steps=10**6)
    settings = json.loads((tmp_path / "ppo" / "run.json").read_text())
    assert settings["config"]["init"] == str(src.resolve())
    assert [bool(r.get("critic_warmup")) for r in run.history] == [True, False]
    with np.load(src) as z:
        bc_policy = {k: z[k] for k in z.files if k.startswith("params/policy/")}
        bc_log_std, bc_mean = z["params/log_std"], z["norm/mean"]
    # Exactly the BC actor at the start: one PPO iteration that trains the critic alone leaves it as loaded.
    warm = mskbench.train("Stand", algo="ppo", out=tmp_path / "warm", steps=8, num_envs=2, num_steps=4,
                          minibatch_size=4, epochs=1, hidden=(16,), value_hidden=(16,), init=src,
                          eval_episodes=1, eval_every_steps=10**6)
    assert warm.settings["config"]["critic_warmup"] == 2  # the defaults with init
    assert warm.settings["config"]["update_norm"] is False
    state = load_checkpoint(tmp_path / "warm" / "checkpoint.npz")
    flat = {f"params/policy/{i}/{k}": np.asarray(v) for i, layer in enumerate(state.params["policy"])
            for k, v in layer.items()}
    assert flat.keys() == bc_policy.keys()
    for k in flat:
        np.testing.assert_array_equal(flat[k], bc_policy[k])
    np.testing.assert_array_equal(np.asarray(state.params["log_std"]), bc_log_std)
    assert not np.array_equal(np.asarray(jax.tree_util.tree_leaves(state.params["value"])[0]), 0)
    np.testing.assert_array_equal(state.norm.mean, bc_mean)  # the actor's normalisation, not the rollouts'
    env = MSKEnv("Stand")
    obs, _ = env.reset(seed=1)
    np.testing.assert_array_equal(load_policy(tmp_path / "warm" / "checkpoint.npz", env.obs_layout, obs.size).act(obs),
                                  load_policy(src, env.obs_layout, obs.size).act(obs))
    from mskbench.agents.ppo import init_actor, init_params, make_policy
    from mskbench.agents.ppo_networks import PPOConfig

    cfg = PPOConfig(hidden=(16,), value_hidden=(16,))
    params, norm = init_actor(tmp_path / "bc", init_params(jax.random.PRNGKey(5), cfg, obs.size, 416, None), cfg,
                              env.obs_layout, obs.size)
    np.testing.assert_array_equal(norm.mean, bc_mean)
    np.testing.assert_array_equal(make_policy(params, norm, cfg, None).act(obs),
                                  load_policy(src, env.obs_layout, obs.size).act(obs))
    with pytest.raises(ValueError, match="widths"):
        init_actor(src, params, PPOConfig(hidden=(32,)), env.obs_layout, obs.size)
    # After the warm-up the actor moves.
    after = load_checkpoint(tmp_path / "ppo" / "checkpoint.npz")
    assert not np.array_equal(np.asarray(after.params["policy"][0]["w"]), bc_policy["params/policy/0/w"])


def test_init_errors_are_one_line(tmp_path):
    import mskbench

    with pytest.raises(ValueError, match="actor is not PPO's"):
        mskbench.train("Stand", algo="sac", out=tmp_path / "s", steps=8, init=tmp_path)
    with pytest.raises(ValueError, match="names no checkpoint|holds no"):
        mskbench.train("Stand", algo="ppo", out=tmp_path / "p", steps=8, init=tmp_path)
    with pytest.raises(ValueError, match="has no behaviour for Crawl"):
        mskbench.train("Crawl", algo="bc", out=tmp_path / "c", steps=8, num_envs=1, workers=1)


def test_train_command_options_for_bc_and_init(tmp_path):
    from click.testing import CliRunner

    from mskbench.cli import main

    bad = CliRunner().invoke(main, ["train", "Stand", "--algo", "sac", "--init", str(tmp_path), "--out",
                                    str(tmp_path / "r")])
    assert bad.exit_code == 2 and "--init starts PPO from a trained actor" in bad.output
    assert "Traceback" not in bad.output
    bad = CliRunner().invoke(main, ["train", "Stand", "--algo", "bc", "--epochs", "3", "--out", str(tmp_path / "r")])
    assert bad.exit_code == 2 and "updates=N" in bad.output


def test_report_names_a_run_started_from_bc(tmp_path):
    from mskbench.training import Run

    (tmp_path / "bc").mkdir()
    (tmp_path / "bc" / "run.json").write_text(json.dumps({"task": "Stand", "algo": "bc", "backend": "cpu"}))
    (tmp_path / "bc" / "checkpoint.npz").write_bytes(b"")
    run = Run(tmp_path / "ppo", "Stand", "ppo", "cpu", {"config": {"init": str(tmp_path / "bc" / "best.npz")}})
    assert run.label == "ppo (from bc)"
    assert Run(tmp_path / "p", "Stand", "ppo", "cpu", {"config": {"init": None}}).label == "ppo"


def test_an_ensemble_acts_as_the_mean_of_its_members_and_resumes(tmp_path, benchmark_script):
    import jax

    from mskbench.agents.bc.student import stack_members, widen_members
    from mskbench.agents.checkpoint import load_policy
    from mskbench.agents.ppo_networks import RunningNorm, mlp_apply, mlp_init
    from mskbench.envs import MSKEnv

    nets = [mlp_init(jax.random.PRNGKey(k), [5, 4, 6, 3]) for k in range(3)]
    x = np.random.default_rng(0).normal(size=(7, 5)).astype(np.float32)
    wide = widen_members(stack_members(nets))
    assert [layer["w"].shape for layer in wide] == [(5, 12), (12, 18), (18, 3)]
    mean = np.mean([np.asarray(mlp_apply(n, x)) for n in nets], axis=0)
    np.testing.assert_allclose(np.asarray(mlp_apply(wide, x)), mean, rtol=1e-5, atol=1e-6)

    out = tmp_path / "ens"
    _small_bc(out, 16, ensemble=2)
    ckpt = out / "checkpoint.npz"
    with np.load(ckpt) as z:
        assert z["params/policy/0/w"].shape == (1928, 32) and z["bc_members/0/w"].shape == (2, 1928, 16)
        members = [[{"w": z[f"bc_members/{i}/w"][k], "b": z[f"bc_members/{i}/b"][k]} for i in range(2)]
                   for k in range(2)]
        assert not np.allclose(members[0][0]["w"], members[1][0]["w"])  # each from its own initial weights
        assert json.loads(str(z["config"]))["hidden"] == [32]  # the deployed actor's widths, for --init
        norm = RunningNorm(z["norm/mean"], z["norm/var"])
    env = MSKEnv("Stand")
    obs, _ = env.reset(seed=0)
    x = norm(obs)[None]
    members_mean = np.mean([mlp_apply(m, x) for m in members], axis=0)[0]
    np.testing.assert_allclose(load_policy(ckpt, env.obs_layout, obs.size).act(obs), np.clip(members_mean, -1, 1),
                               atol=1e-5)
    with np.load(bc.export_policy(ckpt, tmp_path / "policy.npz")) as z:
        assert not any(k.startswith("bc_members") for k in z.files)
    cfg = bc.BCConfig(**json.loads((out / "run.json").read_text())["config"])
    loaded = bc.load_checkpoint(ckpt, cfg, env.obs_layout)
    np.testing.assert_array_equal(np.asarray(loaded.params[0]["w"][1]), members[1][0]["w"])
    assert [r["steps"] for r in _small_bc(out, 24, resume=True, ensemble=2).history] == [24]
    with pytest.raises(ValueError, match=r"other settings \(ensemble\)"):
        _small_bc(out, 32, resume=True)
    benchmark_script("bc_refit").refit(ckpt, tmp_path / "refit", [(1e-3, 5)])  # refits the members
    with np.load(ckpt) as a, np.load(tmp_path / "refit" / "checkpoint.npz") as b:
        assert b["bc_members/0/w"].shape == (2, 1928, 16) and 0 < np.abs(b["bc_members/0/w"] - a["bc_members/0/w"]).max()


def test_the_bounded_loss_is_free_past_a_label_at_a_bound():
    import jax.numpy as jnp

    # One row, three actions: the student's mean (1.5, -1.5, 1.5) against the labels (1, -1, 0.5). Clipped,
    # the first two are their labels exactly: only the third is an error (1.0) for the bounded loss.
    params = [{"w": jnp.zeros((1, 3)), "b": jnp.array([1.5, -1.5, 1.5])}]
    x, y = jnp.zeros((1, 1)), jnp.array([[1.0, -1.0, 0.5]])
    acts, idx = jnp.zeros((1, 0)), jnp.zeros((1, 1), jnp.int32)

    def first_loss(loss):
        fit = bc.make_fit(bc.BCConfig(loss=loss))
        return float(fit.fn(params, bc.adam_init(params), x, y, acts, idx)[2][0])

    assert first_loss("bounded") == pytest.approx(1.0 / 3)
    assert first_loss("excitation") == pytest.approx((0.25 + 0.25 + 1.0) / 3)
    # Short of a bound it is the excitation loss: (0.5 - 1)^2, (-0.5 + 1)^2 and (1.5 - 0.5)^2.
    params[0]["b"] = jnp.array([0.5, -0.5, 1.5])
    assert first_loss("bounded") == pytest.approx((0.25 + 0.25 + 1.0) / 3)

"""Latent-action RL, hard mode (App. A-G): the tube clip and Eqs. 23/26 round trip, the deviation
penalty's decay (Eqs. 27-28) in NumPy and under jax.jit, the reconstruction statistics, the encoder-decoder's
shapes and a tiny fit, the moment features (MuJoCo C; MJX and MuJoCo Warp in tests/test_jax_env.py and
tests/test_warp_backend.py), collect -> fit -> train --latent
--tube -> eval through the CLI, and the same map inside the batched JAX env's step."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mskbench.paradigms.latent import (PenaltySchedule, deviation, env_action, hard_mode, pca_reconstruction,
                                       penalized_reward, reconstruction_stats, tube_clip, unit_action)

jax = pytest.importorskip("jax", reason="JAX not installed")
jnp = jax.numpy


# -- Eqs. 23, 25, 26, 27 -------------------------------------------------------------------------------
def test_tube_clip_and_the_eq23_eq26_round_trip():
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, (5, 7))
    prior = rng.uniform(0, 1, (5, 7))
    # Eq. 26 undoes Eq. 23 inside [-1, 1]; outside it Eq. 23 clips to [0, 1].
    np.testing.assert_allclose(env_action(unit_action(a, np), np), a, atol=1e-12)
    np.testing.assert_array_equal(unit_action(np.array([-3.0, 3.0]), np), [0.0, 1.0])
    delta = 0.1
    a01 = unit_action(a, np)
    safe = tube_clip(a01, prior, delta, np)
    inside = np.abs(a01 - prior) <= delta
    np.testing.assert_array_equal(safe[inside], a01[inside])  # inside the tube: untouched
    np.testing.assert_allclose(np.abs(safe[~inside] - prior[~inside]), delta, atol=1e-12)  # outside: on its edge
    assert np.all(np.abs(safe - prior) <= delta + 1e-12)
    # The tube never leaves the activation range, even around a prior at its end.
    assert tube_clip(np.array([0.0]), np.array([0.02]), 0.1, np)[0] == 0.0
    assert tube_clip(np.array([1.0]), np.array([0.97]), 0.1, np)[0] == 1.0
    env, dev = hard_mode(a, prior, delta, np)
    np.testing.assert_allclose(env, 2 * safe - 1)
    np.testing.assert_allclose(dev, np.mean((a01 - safe) ** 2, axis=-1))  # Eq. 27, mean over muscles
    np.testing.assert_allclose(deviation(a01, safe, np), dev)
    # delta = 1: nothing is clipped; delta = 0: the executed action is the prior's.
    env1, dev1 = hard_mode(a, prior, 1.0, np)
    np.testing.assert_allclose(env1, a, atol=1e-12)
    assert np.all(dev1 == 0)
    env0, _ = hard_mode(a, prior, 0.0, np)
    np.testing.assert_allclose(env0, 2 * prior - 1, atol=1e-12)
    # One formula: jax.numpy, jitted, gives the same.
    jitted = jax.jit(lambda a, p, d: hard_mode(a, p, d, jnp))
    env_j, dev_j = jitted(jnp.asarray(a, jnp.float32), jnp.asarray(prior, jnp.float32), 0.1)
    np.testing.assert_allclose(np.asarray(env_j), env, atol=1e-6)
    np.testing.assert_allclose(np.asarray(dev_j), dev, atol=1e-6)


def test_deviation_penalty_decays_to_its_floor():
    sched = PenaltySchedule()  # λ_t = 5 · max(0.01, 1 − t / 2e6)
    assert sched(0) == 5.0
    assert sched(1_000_000) == pytest.approx(2.5)
    assert sched(1_980_000) == pytest.approx(0.05)
    assert sched(2_000_000) == pytest.approx(0.05) and sched(10**9) == pytest.approx(0.05)
    values = [sched(t) for t in range(0, 3_000_000, 100_000)]
    assert all(b <= a for a, b in zip(values, values[1:]))
    steps = jnp.asarray([0, 1_000_000, 5_000_000], jnp.float32)
    np.testing.assert_allclose(np.asarray(jax.jit(lambda t: sched(t, jnp))(steps)), [5.0, 2.5, 0.05], rtol=1e-6)
    assert penalized_reward(1.0, 0.2, sched(0)) == pytest.approx(0.0)  # Eq. 28
    assert PenaltySchedule(scale=0.0)(0) == 0.0
    for bad in ({"scale": -1.0}, {"decay_steps": 0}, {"floor": 2.0}):
        with pytest.raises(ValueError):
            PenaltySchedule(**bad)


def test_reconstruction_statistics():
    rng = np.random.default_rng(1)
    y = rng.uniform(0, 1, (200, 6))
    perfect = reconstruction_stats(y, y)
    assert perfect["mse"] == 0 and perfect["explained_variance"] == 1 and perfect["r2"] == 1
    mean = reconstruction_stats(y, np.broadcast_to(y.mean(0), y.shape))
    assert mean["explained_variance"] == pytest.approx(0.0, abs=1e-12) and mean["r2"] == pytest.approx(0.0, abs=1e-12)
    shifted = reconstruction_stats(y, y + 0.1)  # a bias is not variance left unexplained, but it is error
    assert shifted["explained_variance"] == pytest.approx(1.0) and shifted["r2"] < 1
    assert shifted["mse"] == pytest.approx(0.01)
    low_rank = rng.normal(size=(300, 2)) @ rng.normal(size=(2, 6))
    np.testing.assert_allclose(pca_reconstruction(low_rank, low_rank, 2), low_rank, atol=1e-9)
    with pytest.raises(ValueError):
        reconstruction_stats(y, y[:, :3])


# -- the encoder-decoder ---------------------------------------------------------------------------
#: The tiny network of the command-line fit below (--embed-dim 8 --heads 1 --blocks 1 --encoder-hidden 16),
#: so both fits share the compiled step.
TINY = {"embed_dim": 8, "heads": 1, "blocks": 1, "encoder_hidden": (16,)}
TINY_FIT = {"batch_size": 32, "learning_rate": 1e-3}


def _synthetic(n=96, muscles=416, nv=128, episodes=4, seed=0):
    """Actions that depend on a 2-d code and the muscle states: learnable by the encoder-decoder."""
    from mskbench.paradigms.latent.data import LatentData

    rng = np.random.default_rng(seed)
    code = rng.uniform(-1, 1, (n, 2))
    states = rng.normal(size=(n, muscles, 4)).astype(np.float32)
    mix = rng.normal(size=(2, muscles))
    actions = np.tanh(code @ mix + 0.3 * states[..., 0]).astype(np.float32)
    index = np.array([i * nv + (i % nv) for i in range(muscles)] + [i * nv + ((i + 1) % nv) for i in range(muscles)],
                     np.int32)
    moments = rng.normal(0, 0.02, (n, index.size)).astype(np.float32)
    priors = rng.uniform(0, 1, (muscles, 5)).astype(np.float32)
    return LatentData(actions, states, moments, index, priors, rng.normal(size=(n, 3)).astype(np.float32),
                      np.repeat(np.arange(episodes), n // episodes).astype(np.int32), np.zeros(n, np.int32),
                      {"nv": nv, "muscle_names": [f"m{i}" for i in range(muscles)], "task": "synthetic"})


def test_encoder_decoder_shapes_tiny_fit_and_file(tmp_path):
    pytest.importorskip("flax", reason="flax not installed")
    from mskbench.paradigms.latent.data import dense_moments
    from mskbench.paradigms.latent.model import LatentModel, fit

    data = _synthetic()
    model = fit(data, 4, epochs=5, seed=0, **TINY_FIT, **TINY)
    history = [r["train_loss"] for r in model.metrics["history"]]
    assert history[-1] < 0.85 * history[0]  # the fit lowers Eq. 22's loss
    m = model.metrics
    assert m["heldout_by"] == "episodes" and m["n_heldout"] == 24 and m["updates"] == 5 * 2
    assert set(m["heldout"]) >= {"mse", "explained_variance", "r2"} and m["pca_heldout"]["mse"] >= 0
    b = slice(0, 32)  # the fit's batch: its compiled shape
    z = model.encode(data.actions[b])
    assert z.shape == (32, 4) and np.all(np.abs(z) < 1)  # tanh latent
    prior = model.prior(data.actions[b], data.states[b], data.moments[b])
    assert prior.shape == (32, 416) and np.all((prior > 0) & (prior < 1))  # sigmoid: activations
    path = model.save(tmp_path / "model.npz")
    again = LatentModel.load(path)
    np.testing.assert_allclose(again.prior(data.actions[b], data.states[b], data.moments[b]), prior, atol=1e-6)
    assert again.metrics["latent_dim"] == 4 and again.config == model.config
    # The batched path: the whole map as one jittable JAX function (dense M), equal to the host map.
    f = jax.jit(again.hard_filter())
    dense = dense_moments(jnp.asarray(data.moments[b]), jnp.asarray(data.moment_index), 416, 128, jnp)
    env, dev, p = f(again.params, jnp.asarray(data.actions[b]), jnp.asarray(data.states[b]), dense, 0.1)
    np.testing.assert_allclose(np.asarray(p), prior, atol=1e-5)
    env_np, dev_np = hard_mode(data.actions[b].astype(np.float64), prior, 0.1, np)
    np.testing.assert_allclose(np.asarray(env), env_np, atol=1e-5)
    np.testing.assert_allclose(np.asarray(dev), dev_np, atol=1e-6)
    data.save(tmp_path / "data.npz")
    with pytest.raises(ValueError, match="not a latent-action model"):
        LatentModel.load(tmp_path / "data.npz")


def test_moment_features_match_mujoco(stand_env):
    import mujoco

    from mskbench.paradigms.latent.data import MuscleFeatures, muscle_states

    env = stand_env
    env.reset(seed=0)
    env.step(np.zeros(env.action_space.shape))
    feats = MuscleFeatures(env.model, env.handles)
    values = feats.moments(env.data)
    m, d = env.model, env.data
    full = np.zeros((m.nu, m.nv))
    mujoco.mju_sparse2dense(full, d.actuator_moment, d.moment_rownnz, d.moment_rowadr, d.moment_colind)
    np.testing.assert_allclose(feats.dense(values), full[env.handles.muscle_ids], atol=1e-6)
    assert values.size < full.size / 4  # stored sparse
    s = muscle_states(d, env.handles)
    assert s.shape == (env.n_muscles, 4)
    np.testing.assert_allclose(s[:, 3], d.act[env.handles.muscle_act_adr], atol=1e-7)


def test_muscle_priors_are_the_compiled_body_under_a_dynamics_perturbation(make_env):
    """P describes the body as compiled: an env whose model a dynamics perturbation scaled (for its episode,
    and until its next reset) gives the same P, so a latent map built on it passes the model's body check
    (the suite once failed here: a cached env left scaled by an earlier dynamics unit)."""
    from mskbench.envs.perturbations import Perturbation
    from mskbench.paradigms.latent.data import MuscleFeatures

    env = make_env("Stand", perturbation=Perturbation(muscle_gain_range=0.2))
    nominal = MuscleFeatures(env.model, env.handles).priors.copy()
    env.reset(seed=3)
    scaled = env.model.actuator_gainprm[env.handles.muscle_ids, 2]
    assert not np.allclose(scaled, env.handles.muscle_force_nominal)  # the perturbation acts on the model
    np.testing.assert_array_equal(MuscleFeatures(env.model, env.handles).priors, nominal)


# -- through the command line --------------------------------------------------------------------------
@pytest.fixture(scope="module")
def latent_files(tmp_path_factory):
    pytest.importorskip("flax", reason="flax not installed")
    from click.testing import CliRunner

    from mskbench.cli import main

    tmp = tmp_path_factory.mktemp("latent")
    runner = CliRunner()
    data, model = tmp / "stand.npz", tmp / "z4.npz"
    result = runner.invoke(main, ["latent", "collect", "Stand", "--policy", "random", "--steps", "120", "--seed", "3",
                                  "--out", str(data), "--json"])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.output)
    assert summary["samples"] == 120 and summary["muscles"] == 416 and summary["moment_nonzeros"] > 0
    result = runner.invoke(main, ["latent", "fit", str(data), "--latent", "4", "--out", str(model), "--epochs", "1",
                                  "--batch-size", "32", "--embed-dim", "8", "--heads", "1", "--blocks", "1",
                                  "--encoder-hidden", "16", "--learning-rate", "1e-3", "--json"])
    assert result.exit_code == 0, result.output
    stats = json.loads(result.output[result.output.index("{"):])
    assert stats["latent_dim"] == 4 and 0 < stats["heldout"]["mse"] < 1
    return tmp, data, model


def test_collect_fit_train_through_the_latent_filter(latent_files):
    from click.testing import CliRunner

    from mskbench.cli import main
    from mskbench.paradigms.latent import resumed_steps
    from mskbench.paradigms.latent.data import LatentData

    tmp, data_path, model_path = latent_files
    data = LatentData.load(data_path)
    assert data.states.shape == (120, 416, 4) and data.observations.shape[0] == 120
    assert np.all(np.abs(data.actions) <= 1) and data.meta["task"] == "Stand"
    runner = CliRunner()
    run = tmp / "run"
    result = runner.invoke(main, ["train", "Stand", "--latent", str(model_path), "--tube", "0.1", "--out", str(run),
                                  "--steps", "100", "--num-envs", "1", "--rollout", "100", "--hidden", "16",
                                  "--minibatch", "50", "--epochs", "1", "--eval-every-steps", "100",
                                  "--eval-episodes", "1"])
    assert result.exit_code == 0, result.output
    wrapper = json.loads((run / "run.json").read_text())["env_wrapper"]
    assert wrapper["paradigm"] == "latent" and wrapper["tube"] == 0.1 and wrapper["latent_dim"] == 4
    rows = [json.loads(line) for line in (run / "eval_log.jsonl").read_text().splitlines()]
    assert rows[-1]["steps"] == 100 and "eval" in rows[-1]
    assert resumed_steps(run) == 100  # where a resumed run's λ_t continues from
    result = runner.invoke(main, ["latent", "eval", str(run), "--episodes", "1", "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    assert report["tube"] == 0.1 and report["mean_length"] >= 1
    assert report["mean_return"] == pytest.approx(rows[-1]["eval"]["mean_return"])  # the run's evaluation, filtered
    result = runner.invoke(main, ["train", "Stand", "--tube", "0.1", "--out", str(tmp / "x"), "--steps", "10"])
    assert result.exit_code != 0 and "--tube needs --latent" in result.output


def test_wrapper_penalises_exactly_the_tube_violation(latent_files):
    """Eq. 28 in the vector wrapper: reward = the task's reward for the executed action − λ_t · L_dev."""
    from mskbench.envs.vector import MSKVectorEnv
    from mskbench.paradigms.latent.model import LatentModel
    from mskbench.paradigms.latent.wrapper import LatentActionMap, LatentActionWrapper

    _, _, model_path = latent_files
    model = LatentModel.load(model_path)
    wrapped = LatentActionWrapper(MSKVectorEnv("Stand", num_envs=1), model, tube=0.05, steps=1_000_000)
    twin = MSKVectorEnv("Stand", num_envs=1)
    try:
        wrapped.reset(seed=7)
        twin.reset(seed=7)
        rng = np.random.default_rng(0)
        for k in range(2):
            a = rng.uniform(-1, 1, (1, 416))
            states, moments = wrapped.observe()
            executed, dev, prior = wrapped.map(a, states, moments)
            assert np.all(np.abs(unit_action(executed, np) - prior) <= 0.05 + 1e-9)
            _, reward, _, _, info = wrapped.step(a)
            _, raw, _, _, _ = twin.step(executed)
            assert info["latent_lambda"] == pytest.approx(PenaltySchedule()(1_000_000 + k))
            np.testing.assert_allclose(info["latent_deviation"], dev)
            np.testing.assert_allclose(reward, raw - info["latent_lambda"] * dev, rtol=1e-6, atol=1e-9)
        assert wrapped.steps == 1_000_002
        # mode="latent" (not the paper's): the learner's action is z itself; the env executes 2 â − 1.
        z_map = LatentActionMap(model, mode="latent")
        assert z_map.action_size == 4
        executed, dev, prior = z_map(np.zeros((1, 4)), *wrapped.observe())
        np.testing.assert_allclose(executed, 2 * prior - 1)
        assert executed.shape == (1, 416) and np.all(dev == 0)
    finally:
        wrapped.close()
        twin.close()


# -- on the batched JAX env -------------------------------------------------------------------------------
def test_batched_env_maps_and_penalises_as_the_cpu_map(latent_files):
    """LatentBatchedEnv (inside the jitted step) = the NumPy LatentActionMap on the same S and M, and its
    reward = the task's for the executed action − λ_t · L_dev with λ_t of its transition counter."""
    from mskbench.paradigms.latent.batched import DEVIATION_TERM, LatentBatchedEnv
    from mskbench.paradigms.latent.data import MuscleFeatures
    from mskbench.paradigms.latent.model import LatentModel
    from mskbench.paradigms.latent.wrapper import LatentActionMap
    from mskbench.envs.cpu_env import MSKEnv
    from mskbench.envs.jax_env import TaskJaxEnv

    model = LatentModel.load(latent_files[2])
    env = TaskJaxEnv("Stand", 2, impl="cpu", muscle_moments=True, reset_bank=2)
    wrapped = LatentBatchedEnv(env, model, tube=0.05, schedule=PenaltySchedule(), steps=1_000_000)
    assert wrapped.action_size == 416 and wrapped.termination_names == env.termination_names
    state = wrapped.reset_to([7, 8])
    states, values = jax.vmap(env.muscle_features)(state.worlds.data)
    # The batched worlds' features are the CPU env's at the same episode start.
    cpu = MSKEnv("Stand")
    try:
        cpu.reset(seed=7)
        feats = MuscleFeatures(cpu.model, cpu.handles)
        np.testing.assert_allclose(np.asarray(values[0]), feats.moments(cpu.data), rtol=1e-6, atol=1e-9)
        np.testing.assert_allclose(np.asarray(states[0]), feats.states(cpu.data), rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(feats.index, env.moment_pattern.index)
    finally:
        cpu.close()
    a = np.random.default_rng(0).uniform(-1, 1, (2, 416)).astype(np.float32)
    executed, dev, _ = LatentActionMap(model, 0.05)(a, np.asarray(states), np.asarray(values))
    assert np.all(dev > 0)
    new, out = wrapped.step(state, a)
    twin, raw = env.step(env.reset_to([7, 8]), executed.astype(np.float32))
    np.testing.assert_allclose(np.asarray(out.reward_terms[DEVIATION_TERM]), dev, rtol=1e-4, atol=1e-7)
    lam = PenaltySchedule()(1_000_000)
    np.testing.assert_allclose(np.asarray(out.reward), np.asarray(raw.reward) - lam * dev, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(out.obs), np.asarray(raw.obs), atol=1e-4)
    assert int(new.transitions) == 1_000_002
    # Without a schedule (evaluation) the reward is the task's; mode="latent" acts on z.
    plain = LatentBatchedEnv(env, model, tube=0.05)
    _, out = plain.step(plain.reset_to([7, 8]), a)
    np.testing.assert_allclose(np.asarray(out.reward), np.asarray(raw.reward), rtol=1e-5)
    assert LatentBatchedEnv(env, model, mode="latent").action_size == 4
    with pytest.raises(ValueError, match="muscle_moments=True"):
        LatentBatchedEnv(TaskJaxEnv("Stand", 1, impl="cpu", reset_bank=1), model)


@pytest.mark.slow
def test_train_latent_on_the_batched_backend_and_evaluate_on_the_cpu(latent_files):
    """``train --latent --backend jax``: the map in the device rollout and the batched evaluation; the run's
    evaluation agrees with ``mskbench latent eval`` on the CPU env and with the protocol's ``mskbench eval``
    (CPU and batched) of its checkpoint (same physics with ``--impl cpu``)."""
    from click.testing import CliRunner

    from mskbench.cli import main

    run = latent_files[0] / "run-jax"
    runner = CliRunner()
    result = runner.invoke(main, ["train", "Stand", "--latent", str(latent_files[2]), "--tube", "0.1", "--backend",
                                  "jax", "--impl", "cpu", "--out", str(run), "--steps", "32", "--num-envs", "2",
                                  "--rollout", "16", "--hidden", "16", "--minibatch", "16", "--epochs", "1",
                                  "--eval-every-steps", "32", "--eval-episodes", "1"])
    assert result.exit_code == 0, result.output
    assert "2 worlds (jax, cpu)" in result.output
    rows = [json.loads(line) for line in (run / "eval_log.jsonl").read_text().splitlines()]
    assert rows[-1]["steps"] == 32 and rows[-1]["eval"]["episodes"] == 1
    expected = rows[-1]["eval"]["mean_return"]
    result = runner.invoke(main, ["latent", "eval", str(run), "--episodes", "1", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output)["mean_return"] == pytest.approx(expected, rel=1e-4)
    # The protocol (CPU workers, and batched) runs a latent run's checkpoint through the map it trained with.
    for backend in (["--backend", "cpu"], ["--backend", "jax", "--impl", "cpu"]):
        result = runner.invoke(main, ["eval", "--policy", str(run), "--task", "Stand", "--episodes", "1", "--seed",
                                      "10000", "--method", "latent", "--store", str(run / f"{backend[1]}.db"),
                                      "--json", *backend])
        assert result.exit_code == 0, result.output
        assert json.loads(result.stdout)["Stand"]["return_mean"] == pytest.approx(expected, rel=1e-4)

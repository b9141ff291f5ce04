"""DEP (mskbench.agents.dep): the learning rule on numbers worked out by hand, NumPy/JAX parity,
independence of batched worlds, the DEP/policy switching schedule, exact resume, config checks."""

from __future__ import annotations

import dataclasses
import json
import math
import subprocess
import sys

import numpy as np
import pytest

from mskbench.agents.dep import (
    DEPConfig,
    DEPExploration,
    DEPState,
    dep_init,
    dep_reset,
    dep_step,
    normalize_sensors,
    sensor_range_init,
    switch_init,
    switch_reset,
    switch_step,
)

# A small DEP for hand arithmetic: τ = 4 (terms s = 2, 3), δ = 1, no smoothing, window τ+δ = 5.
SMALL = DEPConfig(kappa=1.0, tau=4, time_dist=1, buffer_size=5, s4avg=1, bias_rate=0.0,
                  normalization="none", q_norm_selector="none", pretrain_steps=0)

# Sensors x_0 … x_6 of 2 sensors; their changes ẋ_k = x_k − x_{k−1}:
#   ẋ1 = (1, 0), ẋ2 = (0, 2), ẋ3 = (2, −1), ẋ4 = (−1, 1), ẋ5 = (−2, −1), ẋ6 = (1, 0).
XS = np.array([[0, 0], [1, 0], [1, 2], [3, 1], [2, 2], [0, 1], [1, 1]], dtype=np.float32)


def run(cfg: DEPConfig, xs: np.ndarray, xp=np, n_motors: int | None = None) -> list[tuple[DEPState, np.ndarray]]:
    """Step one world through ``xs``; the state and action after each step."""
    state = dep_init(1, xs.shape[1], n_motors or xs.shape[1], cfg, xp)
    out = []
    for x in xs:
        state, y = dep_step(state, xp.asarray(x[None]), cfg, xp)
        out.append((state, y))
    return out


# -- the learning rule, by hand -----------------------------------------------------------------
def test_sensorimotor_matrix_by_hand():
    # C = Σ_{s=2}^{min(t−δ, τ)−1} (M ẋ_{t−s+1})(ẋ_{t−s+1−δ})ᵀ with M = −I, δ = 1, τ = 4,
    # t = samples before the current one. Learning starts at t = 2 + δ = 3.
    steps = run(SMALL, XS)
    # t = 0, 1, 2: no learning yet, C = 0, and y = tanh(κ·0 + 0) = 0.
    for t in range(3):
        assert np.all(steps[t][0].C == 0) and np.all(steps[t][1] == 0)
    # t = 3: s runs over range(2, min(3−1, 4)) = range(2, 2): no term, C = 0.
    np.testing.assert_array_equal(steps[3][0].C[0], np.zeros((2, 2)))
    # t = 4: s = 2 only: C = −ẋ3 ẋ2ᵀ = −[[2·0, 2·2], [−1·0, −1·2]] = [[0, −4], [0, 2]].
    np.testing.assert_allclose(steps[4][0].C[0], [[0, -4], [0, 2]])
    # t = 5: s = 2, 3: C = −(ẋ4 ẋ3ᵀ + ẋ3 ẋ2ᵀ)
    #   ẋ4 ẋ3ᵀ = [[−1·2, −1·−1], [1·2, 1·−1]] = [[−2, 1], [2, −1]],  ẋ3 ẋ2ᵀ = [[0, 4], [0, −2]]
    #   C = −[[−2, 5], [2, −3]] = [[2, −5], [−2, 3]].
    np.testing.assert_allclose(steps[5][0].C[0], [[2, -5], [-2, 3]])
    # t = 6: the window slides (τ = 4 caps s at 3): C = −(ẋ5 ẋ4ᵀ + ẋ4 ẋ3ᵀ)
    #   ẋ5 ẋ4ᵀ = [[−2·−1, −2·1], [−1·−1, −1·1]] = [[2, −2], [1, −1]]
    #   C = −([[2, −2], [1, −1]] + [[−2, 1], [2, −1]]) = −[[0, −1], [3, −2]] = [[0, 1], [−3, 2]].
    np.testing.assert_allclose(steps[6][0].C[0], [[0, 1], [-3, 2]])
    # normalization "none", κ = 1, q_norm "none", h = 0: y = tanh(C x̄); at t = 6, x̄ = x_6 = (1, 1):
    #   C x̄ = (0 + 1, −3 + 2) = (1, −1)  ->  y = (tanh 1, −tanh 1).
    np.testing.assert_allclose(steps[6][1][0], [math.tanh(1.0), -math.tanh(1.0)], rtol=1e-6)


def test_independent_normalization_and_l2_action_by_hand():
    cfg = SMALL.replace(kappa=2.0, normalization="independent", q_norm_selector="l2")
    state, y = run(cfg, XS[:6])[-1]       # t = 5: C = [[2, −5], [−2, 3]] (above)
    # R = C Mᵀ = −C; row norms ‖R_0‖ = √(4 + 25) = √29, ‖R_1‖ = √(4 + 9) = √13;
    # each motor row j is scaled by κ / ‖R_j‖ (ε = 1e−32 is negligible).
    r29, r13 = math.sqrt(29.0), math.sqrt(13.0)
    c_norm = [[2 * 2 / r29, 2 * -5 / r29], [2 * -2 / r13, 2 * 3 / r13]]
    np.testing.assert_allclose(state.C_norm[0], c_norm, rtol=1e-6)
    # q = C_n x̄_5 with x̄_5 = x_5 = (0, 1): q = (−10/√29, 6/√13); q̂ = q / ‖q‖;
    # y = tanh(κ q̂) with κ = 2 (bias 0).
    q = np.array([-10 / r29, 6 / r13])
    np.testing.assert_allclose(y[0], np.tanh(2.0 * q / np.linalg.norm(q)), rtol=1e-6)
    # deprl's arithmetic ("deprl_columns"): column k scaled by the factor of row k:
    #   [[2·2/√29, −5·2/√13], [−2·2/√29, 3·2/√13]].
    state_d, _ = run(cfg.replace(normalization="deprl_columns"), XS[:6])[-1]
    np.testing.assert_allclose(state_d.C_norm[0], [[4 / r29, -10 / r13], [-4 / r29, 6 / r13]], rtol=1e-6)
    # "global": C κ / ‖R‖_F, ‖R‖_F = √(4 + 25 + 4 + 9) = √42.
    state_g, _ = run(cfg.replace(normalization="global"), XS[:6])[-1]
    np.testing.assert_allclose(state_g.C_norm[0], np.array([[2, -5], [-2, 3]]) * 2 / math.sqrt(42), rtol=1e-6)


def test_max_action_normalization_by_hand():
    cfg = SMALL.replace(q_norm_selector="max")
    _, y = run(cfg, XS)[-1]
    # t = 6: q = C x̄ = (1, −1) (above); ‖q‖_∞ = 1, so q̂ = q and y = (tanh 1, −tanh 1).
    np.testing.assert_allclose(y[0], [math.tanh(1.0), -math.tanh(1.0)], rtol=1e-6)


def test_smoothing_by_hand():
    cfg = SMALL.replace(s4avg=2)
    steps = run(cfg, XS[:3])
    # x̄_0 = x_0 = (0, 0); x̄_1 = x̄_0 + (x_1 − x̄_0)/2 = (0.5, 0); x̄_2 = (0.5, 0) + ((1, 2) − (0.5, 0))/2 = (0.75, 1).
    hist = steps[-1][0].hist[0]
    np.testing.assert_allclose(hist[:3], [[0.75, 1.0], [0.5, 0.0], [0.0, 0.0]])


def test_bias_update_by_hand():
    cfg = SMALL.replace(bias_rate=0.1)
    # A world well past the start (t = 10) with constant sensors, so C = 0 and only h moves.
    s0 = dep_init(1, 2, 2, cfg, np)
    state = s0._replace(t=np.array([10], np.int32), Cb=np.array([[0.5, -2.0]], np.float32),
                        y=np.array([[0.2, -0.9]], np.float32))
    state, y = dep_step(state, np.zeros((1, 2), np.float32), cfg, np)
    # h ← h − clip(0.1·y, ±0.05) − 0.001 h:
    #   h_0 = 0.5 − clip(0.02) − 0.0005 = 0.4795;   h_1 = −2 − clip(−0.09 → −0.05) + 0.002 = −1.948.
    np.testing.assert_allclose(state.Cb[0], [0.4795, -1.948], rtol=1e-6)
    np.testing.assert_allclose(y[0], np.tanh([0.4795, -1.948]), rtol=1e-6)   # C x̄ = 0: y = tanh(h)
    # a negative bias_rate switches the bias off
    off, _ = dep_step(state, np.zeros((1, 2), np.float32), cfg.replace(bias_rate=-1.0), np)
    np.testing.assert_array_equal(off.Cb, 0)


def test_rectangular_model_pads_and_truncates():
    # M = −I of 3 motors × 2 sensors: μ = (−χ_0, −χ_1, 0); the third motor row of C stays 0.
    state, _ = run(SMALL, XS, n_motors=3)[-1]
    np.testing.assert_allclose(state.C[0], [[0, 1], [-3, 2], [0, 0]])
    # 1 motor × 2 sensors: only the first row.
    state, _ = run(SMALL, XS, n_motors=1)[-1]
    np.testing.assert_allclose(state.C[0], [[0, 1]])


def test_without_learning_dep_stays_silent():
    steps = run(SMALL.replace(with_learning=False), XS)
    assert all(np.all(s.C_norm == 0) and np.all(y == 0) for s, y in steps)


# -- sensors ------------------------------------------------------------------------------------
def test_sensor_normalization_by_hand():
    cfg = DEPConfig()
    rng = sensor_range_init(1, 2, np)
    # first lengths: l_min = l_max = l, so x = 2(0/0.1 − 0.5) = −1
    rng, x = normalize_sensors(rng, np.array([[0.30, 0.20]]), cfg, np)
    np.testing.assert_allclose(x, [[-1.0, -1.0]])
    # muscle 0 lengthens to 0.35: x = 2(0.05/(0.05 + 0.1) − 0.5) = 2(1/3 − 1/2) = −1/3;
    # muscle 1 shortens to 0.15: l_min = 0.15 = l, x = −1
    rng, x = normalize_sensors(rng, np.array([[0.35, 0.15]]), cfg, np)
    np.testing.assert_allclose(x, [[-1 / 3, -1.0]], rtol=1e-5)
    # back to 0.30: x_0 = 2((0.30 − 0.30)/0.15 − 0.5) = −1; x_1 at 0.20: 2(0.05/0.15 − 0.5) = −1/3
    rng, x = normalize_sensors(rng, np.array([[0.30, 0.20]]), cfg, np)
    np.testing.assert_allclose(x, [[-1.0, -1 / 3]], rtol=1e-5, atol=1e-6)
    # a non-finite length: that world's range stays, the bad entry reads 0
    rng2, x = normalize_sensors(rng, np.array([[np.nan, 9.0]]), cfg, np)
    np.testing.assert_array_equal(rng2.hi, rng.hi)
    assert x[0, 0] == 0 and np.isfinite(x).all()


def test_exploration_keeps_sensor_range_across_episodes():
    dep = DEPExploration(2, 3)
    dep.sensors(np.full((2, 3), 0.3))
    dep.sensors(np.full((2, 3), 0.4))
    dep.episode_done(np.array([True, False]))
    np.testing.assert_allclose(dep.range.lo, 0.3)
    np.testing.assert_allclose(dep.range.hi, 0.4)


# -- NumPy and JAX give the same step -----------------------------------------------------------
def _random_sensors(n: int, s: int, steps: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(size=(steps, n, s)).astype(np.float32)


PARITY = DEPConfig(kappa=2.0, tau=6, time_dist=2, buffer_size=8, s4avg=2, bias_rate=0.01)


@pytest.mark.parametrize("normalization", ["independent", "global", "deprl_columns"])
def test_numpy_and_jax_take_the_same_steps(normalization):
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    cfg = PARITY.replace(normalization=normalization)
    xs = _random_sensors(3, 5, 14)
    s_np = dep_init(3, 5, 5, cfg, np)
    s_jx = dep_init(3, 5, 5, cfg, jnp)
    step = jax.jit(dep_step, static_argnames=("cfg", "xp"))
    for x in xs:
        s_np, y_np = dep_step(s_np, x, cfg, np)
        s_jx, y_jx = step(s_jx, jnp.asarray(x), cfg=cfg, xp=jnp)
        np.testing.assert_allclose(np.asarray(y_jx), y_np, rtol=1e-4, atol=1e-5)
    for name, a, b in zip(DEPState._fields, s_np, s_jx):
        np.testing.assert_allclose(np.asarray(b), a, rtol=1e-4, atol=1e-5, err_msg=name)
    assert np.abs(s_np.C).max() > 0 and np.abs(s_np.Cb).max() > 0   # the run did learn
    mask = np.array([False, True, False])
    for a, b in zip(dep_reset(s_np, mask, np), dep_reset(s_jx, jnp.asarray(mask), jnp)):
        np.testing.assert_allclose(np.asarray(b), a, rtol=1e-4, atol=1e-5)


def test_numpy_and_jax_sensors_and_switching_agree():
    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    cfg = DEPConfig(intervention_proba=0.3, intervention_length=3, test_episode_every=3, pretrain_steps=8)
    lengths = np.random.default_rng(1).uniform(0.1, 0.5, size=(6, 4, 7)).astype(np.float32)
    r_np, r_jx = sensor_range_init(4, 7, np), sensor_range_init(4, 7, jnp)
    norm = jax.jit(normalize_sensors, static_argnames=("cfg", "xp"))
    for l in lengths:
        r_np, x_np = normalize_sensors(r_np, l, cfg, np)
        r_jx, x_jx = norm(r_jx, jnp.asarray(l), cfg=cfg, xp=jnp)
        np.testing.assert_allclose(np.asarray(x_jx), x_np, rtol=1e-5, atol=1e-6)
    u = np.random.default_rng(2).random((30, 4))
    w_np, w_jx = switch_init(4, np), switch_init(4, jnp)
    sw = jax.jit(switch_step, static_argnames=("cfg", "xp"))
    for k in range(30):
        w_np, use_np = switch_step(w_np, u[k], 4 * k, cfg, np)
        w_jx, use_jx = sw(w_jx, jnp.asarray(u[k]), jnp.asarray(4 * k), cfg=cfg, xp=jnp)
        np.testing.assert_array_equal(np.asarray(use_jx), use_np)
        if k % 7 == 6:
            done = np.array([True, False, k % 2 == 0, False])
            w_np, w_jx = switch_reset(w_np, done, np), switch_reset(w_jx, jnp.asarray(done), jnp)
    for a, b in zip(w_np, w_jx):
        np.testing.assert_array_equal(np.asarray(b), a)


# -- batched worlds are independent -------------------------------------------------------------
def test_worlds_step_independently_and_reset_alone():
    cfg = PARITY
    xs = _random_sensors(3, 4, 12, seed=3)
    batched = dep_init(3, 4, 4, cfg, np)
    solo = [dep_init(1, 4, 4, cfg, np) for _ in range(3)]
    for k, x in enumerate(xs):
        if k == 7:  # world 1's episode ends
            before = batched
            batched = dep_reset(batched, np.array([False, True, False]), np)
            for name, a, b in zip(DEPState._fields, before, batched):
                np.testing.assert_array_equal(a[[0, 2]], b[[0, 2]], err_msg=name)   # others untouched
                np.testing.assert_array_equal(b[1], np.zeros_like(b[1]), err_msg=name)
            solo[1] = dep_init(1, 4, 4, cfg, np)
        batched, y = dep_step(batched, x, cfg, np)
        for i in range(3):
            solo[i], y_i = dep_step(solo[i], x[i:i + 1], cfg, np)
            np.testing.assert_allclose(y[i], y_i[0], rtol=1e-6, atol=1e-7)
    for i in range(3):
        for name, a, b in zip(DEPState._fields, batched, solo[i]):
            np.testing.assert_allclose(a[i], b[0], rtol=1e-6, atol=1e-7, err_msg=name)


# -- the switching schedule ---------------------------------------------------------------------
def _schedule(dep: DEPExploration, steps: int, done_at: dict[int, np.ndarray] | None = None) -> np.ndarray:
    out = []
    for k in range(steps):
        out.append(dep.use_dep())
        if done_at and k in done_at:
            dep.episode_done(done_at[k])
    return np.array(out)


def test_dep_alone_acts_during_pretraining():
    cfg = DEPConfig(pretrain_steps=10, intervention_proba=0.0, test_episode_every=0)
    dep = DEPExploration(2, 3, cfg)
    use = _schedule(dep, 10)
    # steps taken before each call: 0, 2, 4, 6, 8, 10 (<= 10: DEP), then 12, … (the policy)
    assert use[:6].all() and not use[6:].any()
    assert dep.total_steps == 20 and not dep.pretraining


def test_interventions_have_the_configured_length():
    cfg = DEPConfig(pretrain_steps=0, intervention_proba=1.0, intervention_length=3, test_episode_every=0)
    use = _schedule(DEPExploration(2, 3, cfg), 10)
    # step 0 is the DEP-only phase (0 steps taken <= 0); then the policy acts once (and the
    # draw u < 1 starts an intervention), DEP acts 3 steps, the policy once, …
    expected = [True, False, True, True, True, False, True, True, True, False]
    np.testing.assert_array_equal(use, np.array([expected, expected]).T)
    never = _schedule(DEPExploration(2, 3, cfg.replace(intervention_proba=0.0)), 10)
    assert never[0].all() and not never[1:].any()


def test_intervention_rate_and_runs_with_a_seeded_rng():
    cfg = DEPConfig(pretrain_steps=0, intervention_proba=0.1, intervention_length=5, test_episode_every=0)
    use = _schedule(DEPExploration(200, 1, cfg, seed=7), 3001)[1:]   # drop the DEP-only step 0
    # A cycle is a geometric number of policy steps (mean 1/p = 10, the last one starting the
    # intervention) and then L = 5 DEP steps: DEP acts 5 / (10 + 5) = 1/3 of the time.
    assert abs(use.mean() - 1 / 3) < 0.01
    for w in range(200):   # every finished DEP run is exactly L steps long
        edges = np.flatnonzero(np.diff(np.concatenate([[0], use[:, w].astype(int), [0]])))
        lengths = edges[1::2] - edges[::2]
        if use[-1, w]:
            lengths = lengths[:-1]
        assert (lengths == 5).all()
    again = _schedule(DEPExploration(200, 1, cfg, seed=7), 3001)[1:]
    other = _schedule(DEPExploration(200, 1, cfg, seed=8), 3001)[1:]
    np.testing.assert_array_equal(use, again)
    assert not np.array_equal(use, other)
    # worlds draw independently
    assert not all(np.array_equal(use[:, 0], use[:, w]) for w in range(1, 200))


def test_dep_free_episodes_and_episode_end():
    cfg = DEPConfig(pretrain_steps=0, intervention_proba=1.0, intervention_length=4, test_episode_every=2)
    dep = DEPExploration(2, 3, cfg)
    assert dep.use_dep().all()                    # DEP-only step
    # episode 0 of each world is DEP-free (0 % 2 == 0): the policy acts even though p = 1
    assert not _schedule(dep, 5).any()
    assert dep.dep_free.all()
    dep.episode_done(np.array([True, False]))     # world 0 -> episode 1 (DEP may act), world 1 stays
    use = _schedule(dep, 3)
    np.testing.assert_array_equal(use[:, 0], [False, True, True])
    assert not use[:, 1].any()
    dep.episode_done(np.array([False, True]))     # world 1 -> episode 1; world 0 is mid-intervention
    use = _schedule(dep, 2)
    np.testing.assert_array_equal(use, [[True, False], [True, True]])
    dep.episode_done(np.array([True, False]))     # world 0 -> episode 2: DEP-free, intervention dropped
    assert not _schedule(dep, 3)[:, 0].any()
    np.testing.assert_array_equal(dep.switch.episodes, [2, 1])


# -- the host wrapper: shapes, ranges, exact resume ---------------------------------------------
def test_exploration_actions_on_muscle_lengths():
    dep = DEPExploration(3, 416, seed=0)
    rng = np.random.default_rng(0)
    base = rng.uniform(0.1, 0.5, size=(3, 416))
    for k in range(20):
        a = dep.act(dep.sensors(base + 0.01 * np.sin(0.3 * k + np.arange(416))))
        assert a.shape == (3, 416) and a.dtype == np.float32
        assert np.isfinite(a).all() and (np.abs(a) <= 1).all()
    assert np.abs(a).mean() > 0.5   # with κ = 1169.7 DEP's output is close to bang-bang
    a[:] = 99                        # the caller's copy; DEP's own last action is not touched
    assert (np.abs(dep.state.y) <= 1).all()
    with pytest.raises(ValueError, match=r"shape \(3, 416\)"):
        dep.sensors(np.zeros((3, 415)))


def test_state_dict_resumes_exactly_through_json():
    cfg = DEPConfig(pretrain_steps=6, intervention_proba=0.2, intervention_length=3,
                    test_episode_every=3, tau=6, time_dist=2, buffer_size=8)
    rng = np.random.default_rng(5)
    lengths = rng.uniform(0.1, 0.5, size=(30, 4, 6))
    dones = rng.random((30, 4)) < 0.1

    def drive(dep: DEPExploration, ks: range) -> list:
        out = []
        for k in ks:
            a = dep.act(dep.sensors(lengths[k]))
            out.append((a, dep.use_dep()))
            dep.episode_done(dones[k])
        return out

    a = DEPExploration(4, 6, cfg, seed=11)
    drive(a, range(15))
    saved = a.state_dict()
    text = json.dumps(saved, default=lambda v: v.tolist())   # plain numpy / JSON-able values
    b = DEPExploration(4, 6, cfg, seed=999)
    b.load_state_dict(json.loads(text))
    for (ya, ua), (yb, ub) in zip(drive(a, range(15, 30)), drive(b, range(15, 30))):
        np.testing.assert_array_equal(ya, yb)
        np.testing.assert_array_equal(ua, ub)
    with pytest.raises(ValueError, match="different config"):
        DEPExploration(4, 6, cfg.replace(kappa=3.0)).load_state_dict(saved)
    with pytest.raises(ValueError, match="worlds x muscles"):
        DEPExploration(2, 6, cfg).load_state_dict(saved)


# -- configuration ------------------------------------------------------------------------------
def test_defaults_are_the_msk_bench_deprl_values():
    # msk_bench_stand.yaml @ d7a28917 (ZZongzheng0918/MSK-Bench, branch code), DEP block, and
    # steps_before_batches=1e5 of its replay buffer.
    expected = dict(bias_rate=0.002, buffer_size=200, intervention_length=5, intervention_proba=0.001,
                    kappa=1169.7, normalization="independent", q_norm_selector="l2", regularization=32,
                    s4avg=2, sensor_delay=1, tau=40, test_episode_every=5, time_dist=5, with_learning=True,
                    pretrain_steps=100_000, length_range_reg=0.1)
    assert dataclasses.asdict(DEPConfig()) == expected


@pytest.mark.parametrize("field,value,valid", [
    ("kappa", 0.0, "> 0"), ("kappa", float("nan"), "> 0"),
    ("tau", 2, ">= 3"), ("tau", 4.5, ">= 3"),
    ("time_dist", -1, ">= 0"),
    ("buffer_size", 44, ">= 45"),
    ("bias_rate", float("inf"), "finite number"),
    ("s4avg", 0, ">= 1"),
    ("normalization", "rows", "independent, global, none, deprl_columns"),
    ("sensor_delay", -1, ">= 0"),
    ("regularization", 38, r"\[0, 37\]"),
    ("with_learning", "yes", "True or False"),
    ("q_norm_selector", "l1", "l2, max, none"),
    ("intervention_length", 0, ">= 1"),
    ("intervention_proba", 1.5, r"\[0, 1\]"),
    ("test_episode_every", -1, ">= 0"),
    ("pretrain_steps", True, ">= 0"),
    ("length_range_reg", 0.0, "> 0"),
])
def test_bad_config_values_name_the_valid_range(field, value, valid):
    with pytest.raises(ValueError, match=f"DEPConfig.{field} must be .*{valid}") as err:
        DEPConfig(**{field: value})
    assert "\n" not in str(err.value)


def test_bad_sizes_are_refused():
    with pytest.raises(ValueError, match="n_worlds must be an integer >= 1"):
        DEPExploration(0, 4)
    with pytest.raises(ValueError, match="n_sensors == n_motors"):
        dep_init(1, 3, 2, DEPConfig(normalization="deprl_columns"), np)


def test_importing_dep_loads_no_jax():
    code = "import sys, mskbench.agents.dep; print('jax' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert out == "False"

"""The batched JAX environment gives the CPU environment's signals.

* ``impl="cpu"`` (MuJoCo C behind the JAX interface): whole episodes follow
  the CPU env step by step — observation, reward, terms, termination, success.
* MJX data (``mjx.put_data`` of CPU states, including constructed falls):
  every task's observation, reward terms, conditions and success agree.
* MJX stepping (``impl="jax"``) agrees with MuJoCo C on the small forelimb
  muscle model, with per-world muscle gains; MJX stepping of MyoFullBody is
  left to the GPU check (it takes minutes to compile on a CPU).
* Bad input and bad worlds: too many worlds for memory, unknown impl, NaN
  worlds (counted, reset, never propagated).
* Resets: every reset takes a fresh start from the bank; a task with
  ``randomize`` draws its starts on the device (4,096 resets, 4,096 distinct
  starts), a host-sampled task has its used entries replaced at each refresh;
  a bank used up is counted; the bank's precomputed worlds equal worlds
  computed anew.
"""

from __future__ import annotations

import numpy as np
import pytest

jax = pytest.importorskip("jax", reason="JAX not installed (pip install -e '.[test]')")
pytest.importorskip("mujoco.mjx", reason="MJX not installed (pip install -e '.[test]')")
jnp = jax.numpy

from mskbench.envs import MSKEnv  # noqa: E402
from mskbench.jax_env import PHYSICS_UNSTABLE, TaskJaxEnv, make  # noqa: E402
from mskbench.sim.batched import check_fits  # noqa: E402
from mskbench.sim.host import decode_f64, encode_f64  # noqa: E402
from mskbench.sim.state import StateView  # noqa: E402
from mskbench.tasks.base import step_signals  # noqa: E402


@pytest.mark.parametrize("task, action, steps", [("Stand", 0.0, 30), ("Walk", -1.0, 40), ("Reach", 0.0, 30)])
def test_cpu_backend_follows_the_cpu_env(task, action, steps, short_task):
    seeds = [3, 11]
    jenv = make(short_task(task, steps), num_envs=2, impl="cpu", reset_bank=1)
    state = jenv.reset_to(seeds)
    cenvs = [MSKEnv(short_task(task, steps)) for _ in seeds]
    for i, (c, s) in enumerate(zip(cenvs, seeds)):
        obs, _ = c.reset(seed=s)
        np.testing.assert_allclose(np.asarray(state.obs[i]), obs, rtol=1e-5, atol=1e-5)
    actions = jnp.full((2, 416), action, jnp.float32)
    ended = [None, None]
    for k in range(steps):
        state, out = jenv.step(state, actions, auto_reset=False)
        for i, c in enumerate(cenvs):
            if ended[i] is not None:  # a finished world stays finished and reports nothing
                assert not bool(out.terminated[i]) and int(out.termination[i]) == -1
                continue
            obs, reward, term, trunc, info = c.step(np.full(416, action, np.float32))
            np.testing.assert_allclose(np.asarray(out.obs[i]), obs, rtol=1e-4, atol=1e-4)
            assert float(out.reward[i]) == pytest.approx(reward, rel=1e-5, abs=1e-5)
            for name, value in info["reward_terms"].items():
                assert float(out.reward_terms[name][i]) == pytest.approx(value, rel=1e-5, abs=1e-6), name
            assert bool(out.terminated[i]) == term and bool(out.truncated[i]) == trunc
            assert bool(out.success[i]) == info["success"]
            code = int(out.termination[i])
            assert (None if code < 0 else jenv.termination_names[code]) == info["termination"]
            if term or trunc:
                ended[i] = info["termination"]
    assert all(e is not None for e in ended)
    if task == "Walk":  # passive muscles: the body falls, and both paths say how
        assert set(ended) <= {"tilted", "com_too_low"}
    else:
        assert ended == ["time_limit", "time_limit"]
        assert bool(state.worlds.success.all()) == (task == "Stand")


def _tilt(qpos, angle):
    """Turn the root about world x by ``angle`` (rad)."""
    q = qpos.copy()
    w, x, y, z = q[3:7]
    c, s = np.cos(angle / 2), np.sin(angle / 2)
    q[3:7] = [c * w - s * x, c * x + s * w, c * y - s * z, c * z + s * y]
    return q


@pytest.mark.parametrize("task", ["Stand", "Walk", "Reach", "Jump"])
def test_mjx_data_gives_the_cpu_signals(task):
    """Observation, terms, conditions and success from ``mjx.Data`` equal the CPU values."""
    import mujoco
    from mujoco import mjx

    cenv = MSKEnv(task)
    jenv = TaskJaxEnv(task, num_envs=1, impl="jax", reset_bank=1, check_memory=False)
    signals = jax.jit(jenv.signals)
    cenv.reset(seed=5)
    rng = np.random.default_rng(1)
    for _ in range(4):
        cenv.step(rng.uniform(-1, 1, 416).astype(np.float32))
    base = cenv.data.qpos.copy()
    states = {"moving": base, "tilted": _tilt(base, 1.2), "low": base - np.eye(base.size)[2] * 0.75}
    if task == "Jump":
        states["lifted"] = base + np.eye(base.size)[2] * 0.2  # both feet in the air
    ts = cenv.task_state
    for label, qpos in states.items():
        cenv.data.qpos[:] = qpos
        mujoco.mj_forward(cenv.model, cenv.data)
        view = StateView(cenv.data, cenv.handles, np)
        ts_np, terms, conds, terminated, _, success, native = step_signals(cenv.task, view, ts, 1000, np)
        obs = cenv._observe(view, ts_np)
        d = mjx.put_data(jenv.model, cenv.data)
        out = signals(d, {k: jnp.asarray(v) for k, v in ts.items()}, jnp.int32(1000))
        np.testing.assert_allclose(np.asarray(out["obs"]), obs, rtol=1e-4, atol=1e-4, err_msg=label)
        for k, v in terms.items():
            assert float(out["reward_terms"][k]) == pytest.approx(float(v), rel=1e-4, abs=1e-5), (label, k)
        for k, v in conds.items():
            assert bool(out["conditions"][k]) == bool(v), (label, k)
        assert bool(out["terminated"]) == bool(terminated) and bool(out["success"]) == bool(success), label
        assert bool(out["solved_native"]) == bool(native), label
        if label in ("tilted", "low") and task in ("Stand", "Walk") or label == "low" and task == "Jump":
            assert bool(terminated), f"{label} state should end a {task} episode"
        if task == "Jump":  # the hop's flight test reads the feet's geoms from mjx.Data too
            assert bool(out["ts"]["flown"]) == bool(ts_np["flown"]), label
            if label in ("moving", "lifted"):
                assert bool(ts_np["flown"]) is (label == "lifted"), label
        if label == "low" and task == "Reach":
            assert bool(conds["knee_dropped"])


@pytest.mark.slow
def test_mjx_stepping_matches_mujoco_c_on_a_small_muscle_model(forelimb_worlds):
    """MJX (pure JAX) and MuJoCo C step the forelimb alike, per-world gains and all; the muscles' moment
    nonzeros (MJX keeps the matrix dense) come out in MuJoCo C's order."""
    from mskbench.sim.host import HostPhysics
    from mskbench.sim.mjx import MjxPhysics
    from mskbench.sim.muscles import MOMENT_FIELD

    w = forelimb_worlds
    mjx_physics = MjxPhysics(w.model, w.muscle_ids, 4, moments=True)
    (d_mjx, bad_mjx), (d_c, bad_c) = (w.roll(p, w.gain) for p in
                                      (mjx_physics, HostPhysics(w.model, w.muscle_ids, 4, moments=True)))
    # The first step flags the exploding world on both backends (the env then resets it).
    assert list(bad_mjx) == list(bad_c) == [False, False, True]
    q_mjx, q_c = np.asarray(d_mjx.qpos), np.asarray(d_c["qpos"])
    np.testing.assert_allclose(q_mjx[:2], q_c[:2], atol=2e-4)
    m_mjx = np.asarray(jax.vmap(lambda d: getattr(mjx_physics.fields(d), MOMENT_FIELD))(d_mjx))
    m_c = np.asarray(d_c[MOMENT_FIELD])
    assert m_c.shape == (3, mjx_physics.moment_pattern.nnz) and np.abs(m_c[:2]).max() > 1e-4
    np.testing.assert_allclose(m_mjx[:2], m_c[:2], atol=1e-6)
    # The weaker muscles of world 1 make a visible difference (the check above is not vacuous).
    d_nominal, _ = w.roll(HostPhysics(w.model, w.muscle_ids, 4), None)
    assert np.abs(np.asarray(d_nominal["qpos"])[1] - q_c[1]).max() > 1e-3


def test_an_unstable_world_is_counted_reset_and_not_propagated(short_task):
    env = make(short_task("Stand", 50), num_envs=2, impl="cpu", reset_bank=2)
    state = env.reset(jax.random.PRNGKey(0))
    data = dict(state.worlds.data)
    phys = decode_f64(np.array(data["state"]))
    nq, nv = env.model.nq, env.model.nv
    phys[0, 1 + nq: 1 + nq + nv] = 1e12  # FULLPHYSICS: time, qpos, qvel, ...
    data["state"] = jnp.asarray(encode_f64(phys))
    state = state._replace(worlds=state.worlds._replace(data=data))
    state, out = env.step(state, jnp.zeros((2, 416), jnp.float32))
    assert bool(out.terminated[0]) and not bool(out.terminated[1])
    assert env.termination_names[int(out.termination[0])] == PHYSICS_UNSTABLE
    assert float(out.reward[0]) == 0.0 and not np.asarray(out.final_obs[0]).any()
    assert list(np.asarray(state.worlds.unstable_resets)) == [1, 0]
    assert int(state.steps[0]) == 0 and int(state.steps[1]) == 1  # world 0 started over
    assert np.isfinite(np.asarray(state.obs)).all()
    state, out = env.step(state, jnp.zeros((2, 416), jnp.float32))
    assert np.isfinite(np.asarray(out.obs)).all() and not bool(out.terminated.any())


def test_bad_configuration_is_a_clear_error():
    with pytest.raises(MemoryError, match=r"num_envs=1000000000 .* need an estimated .* GiB"):
        make("Stand", num_envs=10**9, impl="cpu", reset_bank=1)
    with pytest.raises(MemoryError, match="at most about 10 fit"):
        check_fits(11, 2**20, factor=1.0, available=10 * 2**20 + 1)
    with pytest.raises(ValueError, match="'jax', 'warp', 'cpu'"):
        make("Stand", num_envs=2, impl="cuda")
    env = make("Stand", num_envs=2, impl="cpu", reset_bank=1)
    with pytest.raises(ValueError, match="vary_gain=True"):
        env.reset_to([0, 1], gain_range=0.1)


@pytest.mark.filterwarnings("ignore:MJX follows MuJoCo 3.x")
def test_a_scene_mjx_cannot_collide_names_the_backends_that_can():
    """Catch's cube is a box and the body has ellipsoids: MJX in pure JAX has no such collision."""
    pytest.importorskip("mujoco.mjx")
    with pytest.raises(ValueError, match=r"impl='jax'.*ELLIPSOID.*BOX.*impl='warp'"):
        make("Catch", num_envs=1, impl="jax", reset_bank=1, check_memory=False)


def test_gain_perturbation_uses_the_cpu_env_gains():
    """``reset_to`` gives each world the gains the CPU env draws for that seed."""
    from mskbench.envs.perturbations import Perturbation

    env = make("Stand", num_envs=2, impl="cpu", reset_bank=1, vary_gain=True)
    state = env.reset_to([4, 9], gain_range=[0.2, 0.0])
    cpu = MSKEnv("Stand", perturbation=Perturbation(muscle_gain_range=0.2))
    _, info = cpu.reset(seed=4)
    np.testing.assert_allclose(np.asarray(state.worlds.gain[0]), info["muscle_gain"], rtol=1e-6)
    np.testing.assert_array_equal(np.asarray(state.worlds.gain[1]), 1.0)


def test_cpu_backend_worlds_do_not_leak_into_each_other(short_task):
    """A world steps bit-for-bit the same alone or beside others (warm starts travel with the state)."""
    env = make(short_task("Stand", 50), num_envs=2, impl="cpu", reset_bank=1)
    rng = np.random.default_rng(0)
    actions = jnp.asarray(rng.uniform(-1, 1, (6, 2, 416)), jnp.float32)
    alone, pair = env.reset_to([3]), env.reset_to([8, 3])
    for a in actions:
        alone, _ = env.step(alone, a[1:], auto_reset=False)
        pair, _ = env.step(pair, a, auto_reset=False)
    np.testing.assert_array_equal(np.asarray(alone.worlds.data["state"][0]), np.asarray(pair.worlds.data["state"][1]))


@pytest.mark.slow
def test_the_banks_precomputed_worlds_equal_worlds_computed_anew(short_task):
    """An auto-reset gathers a world the bank computed at refill (in chunks of the step's batch size);
    it equals the world a forward pass at reset computes (per-world gains of 1: no precomputation)."""
    kw = dict(num_envs=3, impl="cpu", reset_bank=5, seed=2)
    fast, slow = make(short_task("Walk", 5), **kw), make(short_task("Walk", 5), vary_gain=True, **kw)
    assert fast.bank_size == 6 and fast._chunk == 3  # rounded up to whole chunks
    a = jnp.zeros((3, 416), jnp.float32)
    s_fast, s_slow = fast.reset(jax.random.PRNGKey(7)), slow.reset(jax.random.PRNGKey(7))
    assert s_fast.bank.data is not None and s_slow.bank.data is None
    for _ in range(7):  # past the 5-step horizon: every world auto-resets once
        s_fast, _ = fast.step(s_fast, a)
        s_slow, _ = slow.step(s_slow, a)
        np.testing.assert_array_equal(np.asarray(s_fast.steps), np.asarray(s_slow.steps))
        np.testing.assert_allclose(np.asarray(s_fast.obs), np.asarray(s_slow.obs), rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(np.asarray(s_fast.worlds.data["state"]), np.asarray(s_slow.worlds.data["state"]))
    assert int(np.asarray(s_fast.steps).max()) < 5 and int(s_fast.cursor) == 6


def _starts(state, n):
    """The first ``n`` bank entries' initial configurations (host copies)."""
    return np.asarray(decode_f64(np.asarray(state.bank.initial["qpos"][:n])))


def test_host_sampled_banks_are_refreshed_and_a_used_up_bank_is_counted(short_task):
    """Walk samples its starts on the host (a gait phase, then ground placement): each refresh replaces
    the entries used since the last one with fresh draws; resets beyond the bank reuse entries, counted."""
    env = make(short_task("Walk", 2), num_envs=2, impl="cpu", reset_bank=4, seed=1)
    assert not env.device_resets and env.bank_size == 4
    state = env.reset(jax.random.PRNGKey(0))
    first = _starts(state, 4)
    assert len({row.tobytes() for row in first}) == 4  # four different phases
    a = jnp.zeros((2, 416), jnp.float32)
    for _ in range(2):  # both worlds reach the 2-step horizon: two resets, entries 2 and 3
        state, _ = env.step(state, a)
    assert int(state.cursor) == 4 and int(state.reused) == 0
    for _ in range(2):  # two more: the bank is used up, they take entries 0 and 1 again
        state, _ = env.step(state, a)
    assert int(state.cursor) == 6 and int(state.reused) == 2
    state = env.refresh(state)
    assert int(state.cursor) == 0 and int(state.reused) == 0
    fresh = _starts(state, 4)
    seen = {row.tobytes() for row in first}
    assert not any(row.tobytes() in seen for row in fresh)  # every used entry was replaced by a new draw


@pytest.mark.slow
@pytest.mark.parametrize("task", ["Catch", "Reach"])
def test_4096_batched_resets_give_4096_distinct_starts(task):
    """Catch's throws and Reach's targets are drawn on the device, per world: 4,096 worlds reset from a
    fresh bank start 4,096 different episodes (with the host bank of old, 64 at most)."""
    env = make(task, num_envs=4096, impl="cpu", reset_bank=4096, check_memory=False)
    assert env.device_resets
    bank = env._draw(jax.random.PRNGKey(3))  # the refill the env runs: drawn on the device
    ts = {k: np.asarray(v) for k, v in bank[1].items()}
    key = {"Catch": lambda i: np.asarray(bank[0]["qvel"][i]).tobytes(),
           "Reach": lambda i: ts["targets"][i].tobytes()}[task]
    assert len({key(i) for i in range(4096)}) == 4096
    state = env.reset(jax.random.PRNGKey(3))
    starts = np.asarray(state.worlds.task["targets"] if task == "Reach" else state.obs)
    assert len({row.tobytes() for row in starts}) == 4096


@pytest.mark.slow
def test_mouse_imitation_on_the_batched_env_follows_the_cpu_env():
    """The mouse forelimb is a task like any other: from the same clip and frame, with the same
    actions, the batched env gives the CPU env's observations and rewards. On MuJoCo C physics: MJX's
    forelimb physics is checked against MuJoCo C's by test_mjx_stepping_matches_mujoco_c_on_a_small_muscle_model
    (compiling MJX for this task too cost a minute of the suite), MuJoCo Warp's by
    tests/test_warp_backend.py::test_forelimb_stepping_matches_mujoco_c_with_per_world_gains."""
    from mskbench.tasks import make_task

    task = make_task("MouseImitation", synthetic_clips=3, ctrl_cost=0.15, energy_cost=0.1)
    cenv = MSKEnv(task)
    start = cenv.task.start_at(2, 30.0)
    obs, _ = cenv.reset(options={"initial_state": start})
    rng = np.random.default_rng(0)
    actions = rng.uniform(-1, 1, (4, 9))
    expected = []
    for a in actions:
        o, r, *_ = cenv.step(a)
        expected.append((o, r))
    for impl in ("cpu",):
        jenv = make(make_task("MouseImitation", synthetic_clips=3, ctrl_cost=0.15, energy_cost=0.1),
                    num_envs=2, impl=impl, reset_bank=2)
        assert jenv.device_resets and jenv.obs_layout == cenv.obs_layout
        state = jenv.reset_to_states([start, start])
        np.testing.assert_allclose(np.asarray(state.obs[0]), obs, atol=1e-5)
        for a, (o, r) in zip(actions, expected):
            state, out = jenv.step(state, jnp.asarray(np.repeat(a[None], 2, 0), jnp.float32), auto_reset=False)
            np.testing.assert_allclose(np.asarray(out.obs[0]), o, atol=1e-4, rtol=1e-4, err_msg=impl)
            assert float(out.reward[0]) == pytest.approx(r, abs=1e-4), impl


def test_mjx_wrapping_rule_difference_is_announced_once(monkeypatch):
    """MJX 3.17 wraps tendons with side sites by MuJoCo 3.x's rule; with MuJoCo 4 C that is said, once."""
    import warnings

    from mskbench.body.mouse_forelimb import build_mouse_model
    from mskbench.body.myofullbody import build_model
    from mskbench.sim import parity

    monkeypatch.setattr(parity, "_warned", False)
    body = build_model()
    assert parity.side_site_wraps(body) > 100 and parity.side_site_wraps(build_mouse_model()) == 0
    if not parity.mjx_uses_old_wrapping():
        pytest.skip("the installed MJX follows MuJoCo C's wrapping rule")
    with pytest.warns(RuntimeWarning, match=r"side site.*impl='warp'"):
        parity.warn_if_skewed(body)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parity.warn_if_skewed(body)  # once per process

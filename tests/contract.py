"""Checks every task must pass, as functions of an environment.

``test_array_namespace.py`` and ``test_task_contract.py`` run them over every
registered task; a task's own tests may call them on a non-default
configuration (``MSKEnv(MyTask(option=...))``).
"""

from __future__ import annotations

import re
import sys
from types import SimpleNamespace

import mujoco
import numpy as np

from mskbench.body.myofullbody import rotate_root as body_rotate_root
from mskbench.envs import MSKEnv
from mskbench.envs.observation import flatten, observation_blocks
from mskbench.sim.state import StateView

FIELDS = ("qpos", "qvel", "xpos", "xmat", "xquat", "xipos", "cvel", "subtree_com", "act", "ctrl",
          "actuator_length", "actuator_velocity", "actuator_force", "qfrc_actuator", "sensordata",
          "geom_xpos", "geom_xmat")


def as_jax(data) -> SimpleNamespace:
    """The state view's fields of a ``MjData`` as JAX arrays (xmat shaped as in ``mjx.Data``)."""
    import jax.numpy as jnp

    out = {f: jnp.asarray(getattr(data, f)) for f in FIELDS}
    out["xmat"] = out["xmat"].reshape(-1, 3, 3)
    out["geom_xmat"] = out["geom_xmat"].reshape(-1, 3, 3)
    return SimpleNamespace(**out)


def ts_as_jax(ts: dict) -> dict:
    import jax.numpy as jnp

    return {k: jnp.asarray(v) for k, v in ts.items()}


# -- constructed states -----------------------------------------------------------------------
def forward(env: MSKEnv):
    """Forward kinematics of the env's current ``data`` and its NumPy state view."""
    mujoco.mj_forward(env.model, env.data)
    return env.sim.view()


def rotate_root(env: MSKEnv, angle: float, axis=(1.0, 0.0, 0.0)) -> None:
    """Rotate the root of ``env.data`` by ``angle`` (rad) about a world axis, in place."""
    env.data.qpos[:] = body_rotate_root(env.data.qpos, angle, axis)


class NoiseFreeGenerator(np.random.Generator):
    """A NumPy generator whose Gaussian draws are their mean: a task's start drawn with it is its
    designed start without the per-episode noise (:mod:`mskbench.tasks.starts`); uniform draws (a
    phase, a placement, targets) are kept."""

    def normal(self, loc=0.0, scale=1.0, size=None):
        if size is None:
            return float(loc)
        return np.broadcast_to(np.asarray(loc, dtype=float), size).copy()


def reset_noise_free(env: MSKEnv, seed: int = 0):
    """``env.reset(seed=seed)`` from the task's start without its per-episode noise (for tests of the
    designed pose: heights, pitches, contacts)."""
    init = env.task.initial_state(env._ctx, NoiseFreeGenerator(np.random.PCG64(seed)))
    return env.reset(seed=seed, options={"initial_state": init})


def ts_copy(ts: dict) -> dict:
    """A task state whose arrays can be changed without touching the env's."""
    return {k: (v.copy() if isinstance(v, np.ndarray) else v) for k, v in ts.items()}


def moving_state(env: MSKEnv, seed: int = 3, steps: int = 5) -> None:
    """Reset and take a few random steps: a state with motion, muscle activity and contacts."""
    env.reset(seed=seed)
    rng = np.random.default_rng(0)
    for _ in range(steps):
        _, _, terminated, truncated, _ = env.step(rng.uniform(-1, 1, env.n_muscles).astype(np.float32))
        if terminated or truncated:
            env.reset(seed=seed + 1)


def check_numpy_jax_parity(env: MSKEnv) -> None:
    """The task's functions give the NumPy results under ``jax.numpy`` (call inside ``jax.enable_x64``)."""
    import jax.numpy as jnp

    ts = env.task_state
    view_np = env.sim.view()
    view_jx = StateView(as_jax(env.data), env.handles, jnp)

    ts_np = env.task.advance(view_np, ts, np)
    ts_jx = env.task.advance(view_jx, ts_as_jax(ts), jnp)
    assert set(ts_np) == set(ts_jx) == set(ts), "advance() must keep the task state's keys"
    for k in ts_np:
        np.testing.assert_allclose(np.asarray(ts_jx[k]), ts_np[k], rtol=1e-12, atol=1e-12, err_msg=k)
        assert np.shape(ts_np[k]) == np.shape(ts[k]), f"task state {k!r} changed shape in advance()"

    terms_np = env.task.reward_terms(view_np, ts_np, np)
    terms_jx = env.task.reward_terms(view_jx, ts_jx, jnp)
    assert list(terms_np) == list(terms_jx) == list(env.task.reward_weights)
    for k in terms_np:
        assert np.shape(terms_np[k]) == (), f"reward term {k!r} is not a scalar"
        np.testing.assert_allclose(float(terms_jx[k]), float(terms_np[k]), rtol=1e-9, atol=1e-12, err_msg=k)

    term_np = env.task.termination(view_np, ts_np, np)
    term_jx = env.task.termination(view_jx, ts_jx, jnp)
    assert {k: bool(v) for k, v in term_np.items()} == {k: bool(v) for k, v in term_jx.items()}

    blocks = env.task.body.observation
    obs_np = flatten(observation_blocks(view_np, blocks, env.task.observation(view_np, ts_np, np)), np)
    obs_jx = flatten(observation_blocks(view_jx, blocks, env.task.observation(view_jx, ts_jx, jnp)), jnp)
    np.testing.assert_allclose(np.asarray(obs_jx), obs_np, rtol=1e-6, atol=1e-6)

    for steps, terminated in ((1, False), (env.task.horizon, False), (env.task.horizon, True)):
        assert bool(env.task.success(ts_jx, steps, terminated, jnp)) == bool(
            env.task.success(ts_np, steps, terminated, np))

    for steps in (1, env.task.horizon):
        native_np = env.task.solved_native(view_np, ts_np, steps, np)
        native_jx = env.task.solved_native(view_jx, ts_jx, steps, jnp)
        assert np.shape(native_np) == np.shape(native_jx) == (), "solved_native must be a scalar boolean"
        assert bool(native_jx) == bool(native_np), f"solved_native differs under jax.numpy at step {steps}"


def check_traces_under_jit(env: MSKEnv) -> None:
    """The step-time functions trace under ``jax.jit`` (no Python branching on array values)."""
    import jax
    import jax.numpy as jnp

    fields = vars(as_jax(env.data))
    ts = ts_as_jax(env.task_state)

    @jax.jit
    def step_logic(fields, ts):
        view = StateView(SimpleNamespace(**fields), env.handles, jnp)
        ts = env.task.advance(view, ts, jnp)
        terms = env.task.reward_terms(view, ts, jnp)
        done = env.task.termination(view, ts, jnp)
        obs = flatten(observation_blocks(view, env.task.body.observation, env.task.observation(view, ts, jnp)), jnp)
        return ts, terms, done, obs, env.task.success(ts, 5, False, jnp), env.task.solved_native(view, ts, 5, jnp)

    _, terms, done, obs, _, _ = step_logic(fields, ts)
    view = env.sim.view()
    ts_np = env.task.advance(view, env.task_state, np)
    ref = env.task.reward_terms(view, ts_np, np)
    for k in ref:
        np.testing.assert_allclose(float(terms[k]), ref[k], rtol=1e-9, atol=1e-12, err_msg=k)
    assert {k: bool(v) for k, v in done.items()} == {
        k: bool(v) for k, v in env.task.termination(view, ts_np, np).items()}
    assert obs.shape == env.observation_space.shape


def check_contract(env: MSKEnv) -> None:
    """What every task promises, checked on its default configuration.

    * the docstring names every reward term (the module reads like its table row);
    * observations have the same layout and a finite value for several seeds;
    * an initial state is not terminated and not yet a success;
    * the base observation holds the humanoid only (props' state goes in task blocks);
    * task-state entries keep their shape, dtype kind and are arrays/scalars;
    * a native solved signal is documented (``native_solved`` cites the original) exactly when the
      task implements one, and a degenerate one says why.
    """
    task = env.task
    from mskbench.tasks.base import Task

    implements = type(task).solved_native is not Task.solved_native
    assert implements == (task.native_solved is not None), \
        f"{task.name}: solved_native implemented={implements} but native_solved={task.native_solved!r}"
    if task.native_solved is not None:
        assert "@" in task.native_solved, f"{task.name}: native_solved must cite file@commit"
    assert task.native_degenerate is None or (task.native_solved is not None and task.native_degenerate.strip())
    doc = sys.modules[type(task).__module__].__doc__ or ""
    for term in task.reward_weights:
        assert re.search(rf"\b{re.escape(term)}\b", doc), f"{task.name}: reward term {term!r} not in the module docstring"
    assert task.horizon >= 1
    layout = dict(env.obs_layout)
    if task.body.name == "myofullbody":
        assert layout["qpos"] == slice(0, 127) and layout["qvel"] == slice(127, 255)
    for seed in (0, 1, 2):
        obs, info = env.reset(seed=seed)
        assert np.isfinite(obs).all(), f"{task.name}: non-finite initial observation (seed {seed})"
        assert dict(env.obs_layout) == layout
        view = env.sim.view()
        conditions = task.termination(view, env.task_state, np)
        assert not any(bool(v) for v in conditions.values()), f"{task.name}: initial state terminated: {conditions}"
        assert not bool(task.success(env.task_state, 0, False, np)), f"{task.name}: success at reset"
        for k, v in env.task_state.items():
            assert isinstance(v, (np.ndarray, np.generic)), f"{task.name}: task state {k!r} is {type(v)}"


def check_device_resets(env: MSKEnv, n: int = 16) -> None:
    """Starts drawn on the device: ``randomize(start(ctx), KeyRandom(k), jnp)`` under ``jax.jit`` and
    ``jax.vmap`` over ``n`` keys, with x64 off (float32/int32), as the batched environment draws them.

    * the task state has the host draw's keys and shapes;
    * ``qpos``/``qvel`` are finite float32, and every limited joint the host draw keeps within its
      range stays within it (to float32 rounding);
    * a random start (the task overrides ``randomize``) gives pairwise-distinct draws; a fixed start
      gives the host's start in every world.
    """
    import jax
    import jax.numpy as jnp

    from mskbench.tasks.base import KeyRandom, Task

    task, ctx, model = env.task, env._ctx, env.model
    assert task.device_resets, f"{task.name} draws its starts on the host"
    host = task.initial_state(ctx, np.random.default_rng(0))
    start = task.start(ctx)

    def draw(key):
        init = task.randomize(start, KeyRandom(key), jnp)
        return init.qpos, init.qvel, init.task_state

    with jax.enable_x64(False):
        qpos, qvel, ts = jax.jit(jax.vmap(draw))(jax.random.split(jax.random.PRNGKey(0), n))
    qpos, qvel = np.asarray(qpos), np.asarray(qvel)
    ts = {k: np.asarray(v) for k, v in ts.items()}

    assert set(ts) == set(host.task_state), f"{task.name}: device task-state keys {sorted(ts)}"
    for k, v in ts.items():
        assert v.shape == (n, *np.shape(host.task_state[k])), f"{task.name}: task state {k!r} has shape {v.shape}"
    assert qpos.shape == (n, model.nq) and qvel.shape == (n, model.nv)
    assert qpos.dtype == qvel.dtype == np.float32, f"{task.name}: device draw is {qpos.dtype}, not float32"
    assert np.isfinite(qpos).all() and np.isfinite(qvel).all(), f"{task.name}: non-finite device draw"

    hinge_or_slide = (mujoco.mjtJoint.mjJNT_HINGE, mujoco.mjtJoint.mjJNT_SLIDE)
    for j in range(model.njnt):
        if not model.jnt_limited[j] or model.jnt_type[j] not in hinge_or_slide:
            continue
        adr, (lo, hi) = model.jnt_qposadr[j], model.jnt_range[j]
        if lo <= host.qpos[adr] <= hi:
            q = qpos[:, adr]
            assert np.all((q >= lo - 1e-5) & (q <= hi + 1e-5)), \
                f"{task.name}: joint {model.joint(j).name} leaves [{lo}, {hi}] on the device: {q.min()}..{q.max()}"

    rows = np.concatenate([qpos, qvel, *(v.reshape(n, -1).astype(np.float64) for v in ts.values())], axis=1)
    if type(task).randomize is not Task.randomize:
        assert len({r.tobytes() for r in rows}) == n, f"{task.name}: device draws repeat across keys"
    else:
        assert len({r.tobytes() for r in rows}) == 1, f"{task.name}: a fixed start differs across keys"
        np.testing.assert_allclose(qpos[0], host.qpos, rtol=1e-6, atol=1e-6, err_msg=f"{task.name}: qpos")
        np.testing.assert_allclose(qvel[0], host.qvel, rtol=1e-6, atol=1e-6, err_msg=f"{task.name}: qvel")


def check_placement_ignores_root_xy(env: MSKEnv, seeds=range(4)) -> None:
    """For a task whose ``randomize`` moves the start's root over the flat floor: ground placement
    (:meth:`InitContext.pose`) of the start pose at a drawn root ``x, y`` gives, bit for bit, the
    placement at the origin with only ``x, y`` changed. So shifting a start placed once is exactly
    placing it where the episode starts (what the old host sampler did)."""
    ctx, task = env._ctx, env.task
    start = task.start(ctx).qpos
    at_origin = ctx.pose(base=start)
    for seed in seeds:
        xy = tuple(float(v) for v in task.initial_state(ctx, np.random.default_rng(seed)).qpos[:2])
        assert xy != (0.0, 0.0)
        placed = ctx.pose(base=start, root_xy=xy)
        np.testing.assert_array_equal(placed[:2], xy)
        np.testing.assert_array_equal(placed[2:], at_origin[2:], err_msg=f"{task.name}: placement depends on x, y")


def check_zero_action_rollout(env: MSKEnv, steps: int = 50) -> None:
    """Half excitation (action 0) from seed 0 for ``steps`` steps: finite, never physics-unstable."""
    env.reset(seed=0)
    for _ in range(steps):
        obs, reward, terminated, truncated, info = env.step(np.zeros(env.n_muscles, np.float32))
        assert np.isfinite(obs).all() and np.isfinite(reward), f"{env.task.name}: non-finite step"
        assert info["termination"] != "physics_unstable", f"{env.task.name}: physics unstable"
        if terminated or truncated:
            break

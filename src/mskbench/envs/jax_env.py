"""Batched JAX environments: any task on MyoFullBody, thousands of worlds at once.

Functional core in the Brax / MuJoCo Playground shape::

    env = mskbench.jax_env.make("Walk", num_envs=4096, impl="warp")
    state = env.reset(jax.random.PRNGKey(0))
    state, out = env.step(state, actions)          # jitted; vmapped over worlds

The observation, reward terms, termination conditions and success come from
the *same* task functions and :class:`~mskbench.sim.state.StateView` as the
CPU environment (:func:`mskbench.tasks.base.step_signals`, evaluated with
``jax.numpy``); only the physics differs (:mod:`mskbench.sim.batched`:
``impl="warp"`` MuJoCo Warp, ``"jax"`` MJX, ``"cpu"`` MuJoCo C).

``state`` (a dict of arrays with a leading world axis): ``data`` (physics),
``ts`` (task state, including the success traces), ``steps``, ``success``
(Table XII so far), ``done``, ``key``, ``obs``, the world's perturbation
(``action_std``, ``gain_range``, ``gain``), and the counters
``unstable_resets`` and ``overflows``.

``out``: ``obs``, ``reward``, ``terminated``, ``truncated``, ``final_obs``
(the observation the step reached, before any reset), ``success``,
``reward_terms`` (by name), ``termination`` (an index into
:attr:`TaskJaxEnv.termination_names`, −1 while running) and, with
``record=True``, ``activation``, ``qvel_joints`` and ``heel_touch`` for the
evaluation metrics.

Initial states come from the task's own sampler (which uses MuJoCo C for
ground placement), run on the host: :meth:`TaskJaxEnv.reset` draws from a
bank of ``init_bank`` states sampled once (episode seeds ``seed, seed+1,
...``), :meth:`TaskJaxEnv.reset_to` starts each world exactly where the CPU
environment starts an episode of that seed (initial state and muscle gains).

Differences from the CPU environment, by design: actions are never rejected
(NaN → −1, ±inf → ±1, as ``nonfinite_action="clip"``); a world whose physics
goes unstable (MuJoCo C's reset conditions) or whose contact buffer fills
ends with termination ``physics_unstable`` / ``contact_overflow``, zero
reward and observation, is counted, and (``auto_reset``) starts over — a
NaN never reaches the next step.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import mujoco
import numpy as np

from mskbench._jax import require_jax
from mskbench.body.myofullbody import (DEFAULT_MEMORY_BYTES, N_MUSCLES, RIGHT_HEEL, BodyHandles, build_model,
                                       default_qpos)
from mskbench.envs.cpu_env import CONTACT_OVERFLOW, PHYSICS_UNSTABLE, TIME_LIMIT
from mskbench.envs.observation import flatten, layout_of, observation_blocks
from mskbench.envs.perturbations import Perturbation, draw_muscle_gain, muscle_gain_scale, noisy_action, seed_streams
from mskbench.sim.batched import NACONMAX_PER_WORLD, NJMAX, check_fits, check_impl, make_physics
from mskbench.sim.state import StateView
from mskbench.tasks import InitContext, Task, make_task
from mskbench.tasks.base import step_signals



def _jax():
    return require_jax("the JAX environment")


def _stack_task_states(states: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    keys = list(states[0])
    out = {}
    for k in keys:
        arr = np.stack([np.asarray(s[k]) for s in states])
        if arr.dtype == np.float64:
            arr = arr.astype(np.float32)
        elif arr.dtype == np.int64:
            arr = arr.astype(np.int32)
        out[k] = arr
    return out


class TaskJaxEnv:
    """A MyoFullBody task as a batched, functional JAX environment.

    Parameters
    ----------
    task:
        Task id (case-insensitive) or a :class:`~mskbench.tasks.Task`.
    num_envs:
        Worlds per batch for :meth:`reset` (training). Checked against the
        device memory: too many is a ``MemoryError`` with the estimated need.
    impl:
        ``"warp"``, ``"jax"`` or ``"cpu"`` (see :mod:`mskbench.sim.batched`).
    perturbation:
        Noise of every world started by :meth:`reset` (action noise, muscle
        gains; observation noise belongs to the policy's normalisation).
    vary_gain:
        Compile the step with per-world muscle gains (needed for any
        ``muscle_gain_range`` > 0; costs a per-world copy of two model fields).
        Defaults to whether ``perturbation`` has a gain range.
    init_bank, seed:
        :meth:`reset` draws initial states from ``init_bank`` states sampled
        for episode seeds ``seed .. seed + init_bank − 1``.
    naconmax_per_world, njmax:
        MuJoCo Warp's buffers: contacts per world (pooled across the batch)
        and constraint rows per world; a world that fills one ends with
        ``contact_overflow``. Other backends ignore them.
    precompute_resets:
        Compute the bank's worlds once (one batched forward pass at
        construction) so that an auto-reset is a gather. Ignored with
        per-world gains, which compute a reset world anew.
    """

    functional = True

    def __init__(self, task: str | Task = "Stand", num_envs: int = 1024, *, impl: str = "jax",
                 frame_skip: int = 10, perturbation: Perturbation | None = None,
                 reward_weights: Mapping[str, float] | None = None, vary_gain: bool | None = None,
                 init_bank: int = 64, seed: int = 0, task_kwargs: Mapping[str, Any] | None = None,
                 memory_bytes: int = DEFAULT_MEMORY_BYTES, naconmax_per_world: int = NACONMAX_PER_WORLD,
                 njmax: int | None = NJMAX, check_memory: bool = True, precompute_resets: bool = True):
        jax, jnp = _jax()
        check_impl(impl)
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        if init_bank < 1:
            raise ValueError(f"init_bank must be >= 1, got {init_bank}")
        self.task = task if isinstance(task, Task) else make_task(task, **(task_kwargs or {}))
        self.impl = impl
        self.num_envs = int(num_envs)
        self.perturbation = perturbation or Perturbation()
        self.vary_gain = bool(self.perturbation.muscle_gain_range > 0) if vary_gain is None else bool(vary_gain)
        if self.perturbation.muscle_gain_range > 0 and not self.vary_gain:
            raise ValueError("a muscle_gain_range > 0 needs vary_gain=True")
        self.reward_weights = self.task.resolved_weights(reward_weights)
        self._weights = jnp.asarray(list(self.reward_weights.values()), jnp.float32)

        self.model = build_model(self.task.add_props, memory_bytes=memory_bytes)
        self.handles = BodyHandles.from_model(self.model)
        self.control_dt_s = frame_skip * float(self.model.opt.timestep)
        self._ctx = InitContext(self.model, mujoco.MjData(self.model), self.handles,
                                default_qpos(self.model, self.handles), self.control_dt_s)
        self.task.bind(self._ctx)
        self.physics = make_physics(self.model, self.handles.muscle_ids, frame_skip, impl, handles=self.handles,
                                    naconmax_per_world=naconmax_per_world, njmax=njmax)
        if check_memory:  # MuJoCo Warp allocates outside JAX's memory pool and says what is free itself
            free = getattr(self.physics, "free_bytes", lambda: None)()
            check_fits(self.num_envs, self.physics.bytes_per_world, what=f"{self.task.name} worlds ({impl})",
                       available=free)
        self.physics.prepare(self.num_envs, gains=self.vary_gain)

        init0 = self.task.initial_state(self._ctx, seed_streams(seed)["init"])
        view = self._ctx.forward(init0.qpos, init0.qvel)
        self.obs_layout = layout_of(observation_blocks(view, self.task.observation(view, init0.task_state, np), np))
        self.obs_size = next(reversed(self.obs_layout.values())).stop
        self.action_size = N_MUSCLES
        conditions = self.task.termination(view, init0.task_state, np)
        #: ``out["termination"]`` indexes this list (−1: still running).
        self.termination_names = (*conditions, TIME_LIMIT, PHYSICS_UNSTABLE, CONTACT_OVERFLOW)
        self._code = {n: i for i, n in enumerate(self.termination_names)}

        # The initial-state bank for reset(key), sampled with the CPU env's per-seed streams.
        self.seed = int(seed)
        bank = self.initial_states(range(self.seed, self.seed + init_bank))
        self._bank = jax.tree_util.tree_map(jnp.asarray, bank)
        self._bank_size = int(init_bank)
        # The bank's worlds, computed once, so an auto-reset is a gather rather than a forward pass.
        # Not with per-world gains (the first observation's muscle forces depend on them).
        self._bank_ready = None
        if precompute_resets and not self.vary_gain:
            self.physics.prepare(self._bank_size)

            def ready(prepared, ts):
                d = self.physics.init_one(prepared)
                return d, self._observe(d, ts)

            self._bank_ready = jax.jit(jax.vmap(ready))(self._bank["physics"], self._bank["ts"])

        self.reset = jax.jit(self._reset)
        self._reset_to = jax.jit(self._reset_to_impl)
        self.step = jax.jit(self._step, static_argnames=("auto_reset", "record"))

    # -- host-side sampling --------------------------------------------------------------
    def initial_states(self, seeds) -> dict:
        """Initial states (physics, prepared for the backend, and task states) of episode ``seeds``.

        Each is what :meth:`MSKEnv.reset(seed=s) <mskbench.envs.MSKEnv.reset>` starts from.
        """
        inits = [self.task.initial_state(self._ctx, seed_streams(s)["init"]) for s in seeds]
        if not inits:
            raise ValueError("no seeds given")
        qpos = np.stack([i.qpos for i in inits])
        qvel = np.stack([i.qvel for i in inits])
        return {"physics": self.physics.prepare_initial(qpos, qvel),
                "ts": _stack_task_states([i.task_state for i in inits])}

    def muscle_gains(self, seeds, gain_ranges) -> np.ndarray:
        """The CPU environment's per-muscle gain factors for these episode seeds and σ_dyn."""
        return np.stack([draw_muscle_gain(seed_streams(s)["gain"], float(g), N_MUSCLES)
                         for s, g in zip(seeds, gain_ranges)]).astype(np.float32)

    # -- one world ---------------------------------------------------------------------------
    def _view(self, d):
        _, jnp = _jax()
        return StateView(self.physics.fields(d), self.handles, jnp)

    def _observe(self, d, ts):
        _, jnp = _jax()
        view = self._view(d)
        return flatten(observation_blocks(view, self.task.observation(view, ts, jnp), jnp), jnp, jnp.float32)

    def _world(self, prepared, ts, key, action_std, gain_range, gain=None, ready=None):
        """A fresh world (all of the state but the counters); ``ready`` = its (data, obs) if known."""
        jax, jnp = _jax()
        k_gain, key = jax.random.split(key)
        if gain is None:
            gain = muscle_gain_scale(jax.random.uniform(k_gain, (N_MUSCLES,)), gain_range, jnp)
        if ready is None:
            d = self.physics.init_one(prepared, gain.astype(jnp.float32) if self.vary_gain else None)
            obs = self._observe(d, ts)
        else:
            d, obs = ready
        world = {"data": d, "ts": ts, "steps": jnp.zeros((), jnp.int32), "success": jnp.zeros((), bool),
                 "done": jnp.zeros((), bool), "key": key, "obs": obs,
                 "action_std": jnp.asarray(action_std, jnp.float32),
                 "gain_range": jnp.asarray(gain_range, jnp.float32)}
        if self.vary_gain:
            world["gain"] = gain.astype(jnp.float32)
        return world

    def _bank_world(self, key, action_std, gain_range):
        jax, _ = _jax()
        k_idx, k_world = jax.random.split(key)
        idx = jax.random.randint(k_idx, (), 0, self._bank_size)
        pick = jax.tree_util.tree_map(lambda x: x[idx], self._bank)
        ready = None
        if self._bank_ready is not None:
            ready = jax.tree_util.tree_map(lambda x: x[idx], self._bank_ready)
        return self._world(pick["physics"], pick["ts"], k_world, action_std, gain_range, ready=ready)

    def _step_one(self, w, action, auto_reset: bool, record: bool):
        jax, jnp = _jax()
        key, k_act, k_reset = jax.random.split(w["key"], 3)
        a = jnp.nan_to_num(jnp.asarray(action, jnp.float32), nan=-1.0, posinf=1.0, neginf=-1.0)
        a = noisy_action(jnp.clip(a, -1.0, 1.0), w["action_std"], jax.random.normal(k_act, a.shape), jnp)
        d, health = self.physics.step_one(w["data"], 0.5 * (a + 1.0), w.get("gain"))
        steps = w["steps"] + 1
        view = self._view(d)
        ts, terms, conditions, term_task, success = step_signals(self.task, view, w["ts"], steps, jnp)
        terms = {k: jnp.asarray(terms[k], jnp.float32) for k in self.reward_weights}
        bad = health["unstable"] | health["overflow"]
        ok = jnp.logical_not(bad)
        reward = jnp.where(ok, self._weights @ jnp.stack(list(terms.values())), 0.0)
        terms = {k: jnp.where(ok, v, 0.0) for k, v in terms.items()}
        terminated = term_task | bad
        truncated = jnp.logical_not(terminated) & (steps >= self.task.horizon)
        # The first named condition that holds, as the CPU env reports it.
        code = jnp.int32(-1)
        for name in reversed(list(conditions)):
            code = jnp.where(conditions[name], self._code[name], code)
        code = jnp.where(truncated, self._code[TIME_LIMIT], code)
        code = jnp.where(health["overflow"], self._code[CONTACT_OVERFLOW], code)
        code = jnp.where(health["unstable"], self._code[PHYSICS_UNSTABLE], code)
        success = ok & success
        obs = jnp.where(ok, self._observe(d, ts), 0.0)
        done = terminated | truncated

        new = dict(w, data=d, ts=ts, steps=steps, success=success, done=done, key=key, obs=obs)
        new["unstable_resets"] = w["unstable_resets"] + health["unstable"].astype(jnp.int32)
        new["overflows"] = w["overflows"] + health["overflow"].astype(jnp.int32)
        if auto_reset:
            new = self._select(done, self._bank_world(k_reset, w["action_std"], w["gain_range"]), new)
        else:  # a finished world stays as it ended
            new = self._select(w["done"], w, new)
        out = {"obs": new["obs"], "reward": reward, "terminated": terminated, "truncated": truncated,
               "final_obs": obs, "success": success, "reward_terms": terms, "termination": code}
        if record:
            out["activation"] = jnp.where(ok, view.activation, 0.0)
            out["qvel_joints"] = jnp.where(ok, view.qdot_joints, 0.0)
            out["heel_touch"] = jnp.where(ok, view.touch[RIGHT_HEEL], 0.0)
        if not auto_reset:
            out = {k: (jax.tree_util.tree_map(lambda x: jnp.where(w["done"], jnp.zeros_like(x), x), v))
                   for k, v in out.items()}
            out["termination"] = jnp.where(w["done"], -1, code)
        return new, out

    def _select(self, cond, a, b):
        """World ``a`` where ``cond`` else ``b``, entry by entry (entries only ``b`` has are kept)."""
        jax, jnp = _jax()
        out = {}
        for k, v in b.items():
            if k not in a:
                out[k] = v
            elif k == "data":
                out[k] = self.physics.where(cond, a[k], v)
            else:
                out[k] = jax.tree_util.tree_map(lambda x, y: jnp.where(cond, x, y), a[k], v)
        return out

    # -- batch -------------------------------------------------------------------------------
    def _counters(self, world):
        _, jnp = _jax()
        return dict(world, unstable_resets=jnp.zeros((), jnp.int32), overflows=jnp.zeros((), jnp.int32))

    def _reset(self, key):
        jax, jnp = _jax()
        keys = jax.random.split(key, self.num_envs)
        p = self.perturbation
        return jax.vmap(lambda k: self._counters(self._bank_world(
            k, jnp.float32(p.action_noise_std), jnp.float32(p.muscle_gain_range))))(keys)

    def _reset_to_impl(self, initial, keys, action_std, gain_range, gain):
        jax, _ = _jax()

        def one(prepared, ts, k, s, g, gn):
            return self._counters(self._world(prepared, ts, k, s, g, gn))

        return jax.vmap(one)(initial["physics"], initial["ts"], keys, action_std, gain_range, gain)

    def reset_to(self, seeds, *, key=None, action_std=0.0, gain_range=0.0):
        """Worlds starting the episodes of ``seeds`` exactly as the CPU environment does.

        Initial states and muscle gains come from the seeds' CPU streams;
        ``action_std`` and ``gain_range`` are per world (scalars broadcast),
        so perturbation scales can share the batch with episodes.
        """
        jax, jnp = _jax()
        seeds = [int(s) for s in seeds]
        n = len(seeds)
        action_std = np.broadcast_to(np.asarray(action_std, np.float32), (n,))
        gain_range = np.broadcast_to(np.asarray(gain_range, np.float32), (n,))
        if np.any(gain_range > 0) and not self.vary_gain:
            raise ValueError("muscle-gain perturbation needs an environment made with vary_gain=True")
        initial = jax.tree_util.tree_map(jnp.asarray, self.initial_states(seeds))
        gain = jnp.asarray(self.muscle_gains(seeds, gain_range))
        self.physics.prepare(n, gains=self.vary_gain)
        keys = jax.random.split(jax.random.PRNGKey(0) if key is None else key, n)
        return self._reset_to(initial, keys, jnp.asarray(action_std), jnp.asarray(gain_range), gain)

    def _step(self, state, actions, auto_reset: bool = True, record: bool = False):
        jax, _ = _jax()
        return jax.vmap(lambda w, a: self._step_one(w, a, auto_reset, record))(state, actions)

    # -- parity / diagnostics ---------------------------------------------------------------
    def signals(self, data, ts, steps):
        """Observation, reward terms, conditions and success of one world's physics state
        (no stepping; for parity checks against the CPU environment)."""
        _, jnp = _jax()
        view = self._view(data)
        ts, terms, conditions, terminated, success = step_signals(self.task, view, ts, steps, jnp)
        return {"obs": self._observe(data, ts), "ts": ts, "reward_terms": terms, "conditions": conditions,
                "terminated": terminated, "success": success}


def make(task: str | Task = "Stand", num_envs: int = 1024, impl: str = "jax", **kwargs) -> TaskJaxEnv:
    """A batched JAX environment for ``task`` (see :class:`TaskJaxEnv`)."""
    return TaskJaxEnv(task, num_envs, impl=impl, **kwargs)

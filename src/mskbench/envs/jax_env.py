"""Batched JAX environments: any task, on its body, thousands of worlds at once.

Functional core in the Brax / MuJoCo Playground shape::

    env = mskbench.jax_env.make("Walk", num_envs=4096, impl="warp")
    state = env.reset(jax.random.PRNGKey(0))        # a State (mskbench.envs.protocols)
    state, out = env.step(state, actions)           # jitted; vmapped over worlds
    state = env.refresh(state)                      # between rollouts: fresh initial states

The observation, reward terms, termination, truncation and success come from
the *same* task functions and :class:`~mskbench.sim.state.StateView` as the
CPU environment (:func:`mskbench.tasks.base.step_signals`, evaluated with
``jax.numpy``); only the physics differs (:mod:`mskbench.sim.batched`:
``impl="warp"`` MuJoCo Warp, ``"jax"`` MJX, ``"cpu"`` MuJoCo C).

``state`` is a :class:`~mskbench.envs.protocols.State`: the worlds
(:class:`~mskbench.envs.protocols.World`, a leading world axis) and a *bank*
of initial states that auto-resets draw from. ``step`` returns a
:class:`~mskbench.envs.protocols.StepOut`; with ``record=True`` its
``record`` has ``activation``, ``qvel_joints``, ``touch`` and, for a body
with a pelvis, ``pelvis_xy`` and ``yaw`` (its heading) for the evaluation
metrics.

Resets. Every reset takes the next unused entry of the bank, so no two resets
between refreshes share a start. :meth:`TaskJaxEnv.refresh` refills the bank:

* a task with :meth:`~mskbench.tasks.Task.randomize` (its starts written in
  the array namespace, e.g. Catch's throws, Reach's targets, the mouse's clip
  and frame) draws ``reset_bank`` fresh starts *on the device*, per entry;
* a task whose every draw needs MuJoCo C on the host (joint noise, then ground
  placement) has the entries used since the last refresh replaced by fresh
  host draws.

Either way the bank's worlds are computed once per refresh (one batched
forward pass), so an auto-reset is a gather. When more worlds end between two
refreshes than the bank holds, resets go round the bank again; ``state.reused``
counts them (the trainer logs it). The default bank holds two starts per world.
:meth:`TaskJaxEnv.reset_to` starts each world exactly where the CPU
environment starts an episode of a given seed (initial state and muscle gains).

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
from mskbench.body.base import default_qpos
from mskbench.envs.cpu_env import CONTACT_OVERFLOW, PHYSICS_UNSTABLE, TIME_LIMIT, control_timing
from mskbench.envs.observation import flatten, layout_of, observation_blocks
from mskbench.envs.perturbations import Perturbation, draw_muscle_gain, muscle_gain_scale, noisy_action, seed_streams
from mskbench.envs.action_map import check_action_map, excitation
from mskbench.envs.protocols import WORLD_AXIS, Bank, State, StepOut, World
from mskbench.sim.batched import NACONMAX_PER_WORLD, NJMAX, check_fits, check_impl, make_physics
from mskbench.sim.muscles import MOMENT_FIELD, muscle_states
from mskbench.sim.state import StateView
from mskbench.tasks import InitContext, Task, make_task
from mskbench.tasks.base import InitialState, KeyRandom, step_signals


def _jax():
    return require_jax("the JAX environment")


def _sharded() -> bool:
    """Whether this is traced inside a ``shard_map`` over :data:`~mskbench.envs.protocols.WORLD_AXIS`."""
    jax, _ = _jax()
    try:
        jax.lax.axis_index(WORLD_AXIS)
    except NameError:
        return False
    return True


def _canonical(x) -> np.ndarray:
    """A task-state value as the batched env keeps it: float32, int32 or bool."""
    a = np.asarray(x)
    if a.dtype.kind == "f":
        return a.astype(np.float32)
    if a.dtype.kind in "iu":
        return a.astype(np.int32)
    return a


def _stack_task_states(states: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    return {k: _canonical(np.stack([np.asarray(s[k]) for s in states])) for k in states[0]}


class TaskJaxEnv:
    """A task as a batched, functional JAX environment (a :class:`~mskbench.envs.protocols.BatchedEnv`).

    Parameters
    ----------
    task:
        Task id (case-insensitive) or a :class:`~mskbench.tasks.Task`; any body.
    num_envs:
        Worlds per batch for :meth:`reset` (training). Checked against the
        device memory: too many is a ``MemoryError`` with the estimated need.
    impl:
        ``"warp"``, ``"jax"`` or ``"cpu"`` (see :mod:`mskbench.sim.batched`).
    frame_skip:
        Physics steps per control step (default: the task's, else its body's).
    perturbation:
        Noise of every world started by :meth:`reset` (action noise, muscle
        gains; observation noise belongs to the policy's normalisation).
    vary_gain:
        Compile the step with per-world muscle gains (needed for any
        ``muscle_gain_range`` > 0; costs a per-world copy of two model fields).
        Defaults to whether ``perturbation`` has a gain range.
    reset_bank:
        Initial states kept ready for auto-resets (default ``2 * num_envs``).
    seed:
        Seeds the host draws of the bank (with a draw counter) and the
        observation layout's probe.
    naconmax_per_world, njmax:
        MuJoCo Warp's buffers: contacts per world (pooled across the batch)
        and constraint rows per world; a world that fills one ends with
        ``contact_overflow``. Other backends ignore them.
    action_map:
        ``"linear"`` (default, the paper's ``(a+1)/2``) or ``"myosuite"`` (the original code's
        logistic; :mod:`mskbench.envs.action_map`), as the CPU environment.
    muscle_moments:
        Worlds also carry the muscles' moment nonzeros, so :meth:`muscle_features` can read the
        muscle states S and moment matrix M a latent-action decoder is conditioned on
        (:mod:`mskbench.sim.muscles`; costs one gather per step and the nonzeros' memory).
    devices:
        The worlds are stepped in this many equal shards, one per device (the first ``devices`` of
        ``jax.devices()``, :mod:`mskbench.agents.data_parallel`): the physics' buffers are also prepared
        for ``num_envs / devices`` worlds on each of those devices this process drives. Must divide
        ``num_envs``.
    """

    def __init__(self, task: str | Task = "Stand", num_envs: int = 1024, *, impl: str = "jax",
                 frame_skip: int | None = None, perturbation: Perturbation | None = None,
                 reward_weights: Mapping[str, float] | None = None, vary_gain: bool | None = None,
                 reset_bank: int | None = None, seed: int = 0, task_kwargs: Mapping[str, Any] | None = None,
                 memory_bytes: int | None = None, naconmax_per_world: int = NACONMAX_PER_WORLD,
                 njmax: int | None = NJMAX, check_memory: bool = True, action_map: str = "linear",
                 muscle_moments: bool = False, devices: int = 1):
        jax, jnp = _jax()
        check_impl(impl)
        self.action_map = check_action_map(action_map)
        if num_envs < 1:
            raise ValueError(f"num_envs must be >= 1, got {num_envs}")
        if devices < 1 or num_envs % devices:
            raise ValueError(f"devices must be >= 1 and divide num_envs={num_envs}, got {devices}")
        if reset_bank is not None and reset_bank < 1:
            raise ValueError(f"reset_bank must be >= 1, got {reset_bank}")
        self.task = task if isinstance(task, Task) else make_task(task, **(task_kwargs or {}))
        self.body = self.task.body
        self.impl = impl
        self.num_envs = int(num_envs)
        wanted = int(reset_bank or 2 * self.num_envs)
        #: Bank entries are computed ``_chunk`` at a time, with the step's buffers when they fit.
        self._chunk = min(self.num_envs, wanted)
        self.bank_size = self._chunk * -(-wanted // self._chunk)
        self.perturbation = perturbation or Perturbation()
        self.vary_gain = bool(self.perturbation.muscle_gain_range > 0) if vary_gain is None else bool(vary_gain)
        if self.perturbation.muscle_gain_range > 0 and not self.vary_gain:
            raise ValueError("a muscle_gain_range > 0 needs vary_gain=True")
        self.reward_weights = self.task.resolved_weights(reward_weights)
        self._weights = jnp.asarray(list(self.reward_weights.values()), jnp.float32)

        timestep_s, frame_skip = control_timing(self.task, frame_skip)
        self.model = self.body.build_model(self.task.add_props, timestep_s=timestep_s, memory_bytes=memory_bytes)
        self.handles = self.body.handles(self.model)
        self.control_dt_s = frame_skip * timestep_s
        self._ctx = InitContext(self.model, mujoco.MjData(self.model), self.handles,
                                default_qpos(self.model, self.handles), self.control_dt_s)
        self.task.bind(self._ctx)
        self.physics = make_physics(self.model, self.handles.muscle_ids, frame_skip, impl, handles=self.handles,
                                    naconmax_per_world=naconmax_per_world, njmax=njmax, moments=muscle_moments)
        #: Where the muscles' moment nonzeros are (:class:`~mskbench.sim.muscles.MomentPattern`), or None.
        self.moment_pattern = self.physics.moment_pattern if muscle_moments else None
        if check_memory:  # MuJoCo Warp allocates outside JAX's memory pool and says what is free itself
            free = getattr(self.physics, "free_bytes", lambda: None)()
            check_fits(self.num_envs, self.physics.bytes_per_world, what=f"{self.task.name} worlds ({impl})",
                       available=free)
        self.physics.prepare(self.num_envs, gains=self.vary_gain)
        self.physics.prepare(self._chunk)
        if devices > 1:
            for device in jax.devices()[:devices]:
                if device.process_index == jax.process_index():
                    self.physics.prepare(self.num_envs // devices, gains=self.vary_gain, device=device)

        self.seed = int(seed)
        init0 = self.task.initial_state(self._ctx, seed_streams(self.seed)["init"])
        view = self._ctx.forward(init0.qpos, init0.qvel)
        self.obs_layout = layout_of(observation_blocks(view, self.body.observation,
                                                       self.task.observation(view, init0.task_state, np)))
        self.obs_size = next(reversed(self.obs_layout.values())).stop
        self.action_size = self.body.n_muscles
        conditions = self.task.termination(view, init0.task_state, np)
        #: ``out.termination`` indexes this tuple (−1: still running).
        self.termination_names = (*conditions, TIME_LIMIT, PHYSICS_UNSTABLE, CONTACT_OVERFLOW)
        self._code = {n: i for i, n in enumerate(self.termination_names)}

        #: Whether the bank is drawn on the device (the task's ``randomize``) or on the host.
        self.device_resets = self.task.device_resets
        self._host_draws = 0
        if self.device_resets:
            self._start = self.task.start(self._ctx)
            self._draw = jax.jit(self._draw_bank)
        else:
            self._host_bank: dict | None = None
        self._ready = jax.jit(self._ready_bank)
        self._reset_worlds = jax.jit(self._reset_worlds_impl)
        self._reset_to = jax.jit(self._reset_to_impl)
        self.step = jax.jit(self._step, static_argnames=("auto_reset", "record"))

    # -- initial states --------------------------------------------------------------------------
    def initial_states(self, seeds) -> dict:
        """Initial states (physics, prepared for the backend, and task states) of episode ``seeds``,
        each what :meth:`MSKEnv.reset(seed=s) <mskbench.envs.MSKEnv.reset>` starts from (host)."""
        return self._prepare([self.task.initial_state(self._ctx, seed_streams(s)["init"]) for s in seeds])

    def _prepare(self, inits: Sequence[InitialState]) -> dict:
        if not inits:
            raise ValueError("no initial states")
        qpos = np.stack([i.qpos for i in inits])
        qvel = np.stack([i.qvel for i in inits])
        return {"physics": self.physics.prepare_initial(qpos, qvel),
                "ts": _stack_task_states([i.task_state for i in inits])}

    def muscle_gains(self, seeds, gain_ranges) -> np.ndarray:
        """The CPU environment's per-muscle gain factors for these episode seeds and σ_dyn."""
        return np.stack([draw_muscle_gain(seed_streams(s)["gain"], float(g), self.action_size)
                         for s, g in zip(seeds, gain_ranges)]).astype(np.float32)

    def _host_draw(self, n: int) -> list[InitialState]:
        """``n`` fresh host draws of the task's sampler (seeded by the env seed and a draw counter)."""
        out = [self.task.initial_state(self._ctx, np.random.default_rng([self.seed, self._host_draws + i]))
               for i in range(n)]
        self._host_draws += n
        return out

    def _draw_bank(self, key):
        """``bank_size`` starts drawn on the device with the task's ``randomize`` (jitted)."""
        jax, jnp = _jax()
        start = self._start

        def one(k):
            init = self.task.randomize(start, KeyRandom(k), jnp)
            ts = {name: jnp.asarray(v, _canonical(start.task_state[name]).dtype) for name, v in init.task_state.items()}
            return {"qpos": jnp.asarray(init.qpos, jnp.float32), "qvel": jnp.asarray(init.qvel, jnp.float32)}, ts

        return jax.vmap(one)(jax.random.split(key, self.bank_size))

    def _ready_one(self, initial, ts):
        """A bank entry's world after a forward pass, and its first observation."""
        d = self.physics.init_one(initial)
        return d, self._observe(self._view(d), ts)

    def _ready_bank(self, initial, ts):
        """Every bank entry's world and first observation, ``_chunk`` entries per batched call."""
        jax, _ = _jax()
        k = self.bank_size // self._chunk
        split = lambda x: x.reshape((k, self._chunk) + x.shape[1:])  # noqa: E731
        merge = lambda x: x.reshape((self.bank_size,) + x.shape[2:])  # noqa: E731
        out = jax.lax.map(lambda part: jax.vmap(self._ready_one)(*part),
                          jax.tree_util.tree_map(split, (initial, ts)))
        return jax.tree_util.tree_map(merge, out)

    def _bank(self, initial, ts) -> Bank:
        jax, jnp = _jax()
        initial = jax.tree_util.tree_map(jnp.asarray, initial)
        ts = jax.tree_util.tree_map(jnp.asarray, ts)
        if self.vary_gain:  # each reset computes its world with its own gains
            return Bank(initial, ts, None, None)
        d, obs = self._ready(initial, ts)
        return Bank(initial, ts, d, obs)

    def _refill(self, key, used: int) -> Bank:
        """A bank of fresh starts: all of it drawn on the device, or its first ``used`` entries
        replaced by fresh host draws."""
        if self.device_resets:
            initial, ts = self._draw(key)
            return self._bank(initial, ts)
        if self._host_bank is None:
            self._host_bank = self._prepare(self._host_draw(self.bank_size))
        elif used > 0:
            fresh = self._prepare(self._host_draw(min(used, self.bank_size)))
            for part in ("physics", "ts"):
                for name, arr in fresh[part].items():
                    self._host_bank[part][name][:len(arr)] = arr
        return self._bank(self._host_bank["physics"], self._host_bank["ts"])

    def refresh(self, state: State) -> State:
        """``state`` with its bank refilled by fresh starts (host side; call it between rollouts)."""
        jax, jnp = _jax()
        key, k_draw = jax.random.split(state.key)
        bank = self._refill(k_draw, min(int(state.cursor), self.bank_size))
        return State(state.worlds, bank, jnp.zeros((), jnp.int32), jnp.zeros((), jnp.int32), key)

    # -- one world -------------------------------------------------------------------------------
    def muscle_features(self, d):
        """``(S, M)`` of one world's physics ``d`` (vmap it over worlds): the muscle states
        ``(muscles, 4)`` and the moment nonzeros ``(nnz,)`` in :attr:`moment_pattern`'s order. Needs
        ``muscle_moments=True``."""
        _, jnp = _jax()
        if self.moment_pattern is None:
            raise ValueError("this environment was made without muscle_moments=True; its worlds do not carry "
                             "the moment matrix")
        f = self.physics.fields(d)
        states = muscle_states(f, self.handles.muscle_ids, self.handles.muscle_act_adr, jnp)
        return states, jnp.asarray(getattr(f, MOMENT_FIELD), jnp.float32)

    def _view(self, d):
        _, jnp = _jax()
        return StateView(self.physics.fields(d), self.handles, jnp)

    def _observe(self, view, ts):
        _, jnp = _jax()
        blocks = observation_blocks(view, self.body.observation, self.task.observation(view, ts, jnp))
        return flatten(blocks, jnp, jnp.float32)

    def _world(self, initial, ts, key, action_std, gain_range, gain=None, ready=None, counters=None) -> World:
        """A fresh world; ``ready`` = its (data, obs) if the bank computed them."""
        jax, jnp = _jax()
        k_gain, key = jax.random.split(key)
        if gain is None:
            gain = muscle_gain_scale(jax.random.uniform(k_gain, (self.action_size,)), gain_range, jnp)
        gain = gain.astype(jnp.float32) if self.vary_gain else None
        if ready is None:
            d = self.physics.init_one(initial, gain)
            obs = self._observe(self._view(d), ts)
        else:
            d, obs = ready
        zero = jnp.zeros((), jnp.int32)
        unstable, overflows = counters if counters is not None else (zero, zero)
        return World(d, ts, obs, zero, jnp.zeros((), bool), jnp.zeros((), bool), key,
                     jnp.asarray(action_std, jnp.float32), jnp.asarray(gain_range, jnp.float32), gain,
                     unstable, overflows)

    def _bank_world(self, bank: Bank, idx, w: World, key) -> World:
        """World ``w`` restarted from bank entry ``idx`` (its perturbation and counters kept)."""
        jax, _ = _jax()
        pick = jax.tree_util.tree_map(lambda x: x[idx], (bank.initial, bank.task))
        ready = None if bank.data is None else jax.tree_util.tree_map(lambda x: x[idx], (bank.data, bank.obs))
        return self._world(pick[0], pick[1], key, w.action_std, w.gain_range, ready=ready,
                           counters=(w.unstable_resets, w.overflows))

    def _step_one(self, w: World, action, record: bool):
        jax, jnp = _jax()
        key, k_act = jax.random.split(w.key)
        a = jnp.nan_to_num(jnp.asarray(action, jnp.float32), nan=-1.0, posinf=1.0, neginf=-1.0)
        a = noisy_action(jnp.clip(a, -1.0, 1.0), w.action_std, jax.random.normal(k_act, a.shape), jnp)
        d, health = self.physics.step_one(w.data, excitation(a, self.action_map, jnp), w.gain)
        steps = w.steps + 1
        view = self._view(d)
        sig = step_signals(self.task, view, w.task, steps, jnp)
        ts = {k: v.astype(w.task[k].dtype) for k, v in ((k, jnp.asarray(v)) for k, v in sig.ts.items())}
        terms = {k: jnp.asarray(sig.terms[k], jnp.float32) for k in self.reward_weights}
        bad = health["unstable"] | health["overflow"]
        ok = jnp.logical_not(bad)
        reward = jnp.where(ok, self._weights @ jnp.stack(list(terms.values())), 0.0)
        terms = {k: jnp.where(ok, v, 0.0) for k, v in terms.items()}
        terminated = sig.terminated | bad
        truncated = jnp.logical_not(terminated) & sig.truncated
        # The first named condition that holds, as the CPU env reports it.
        code = jnp.int32(-1)
        for name in reversed(list(sig.conditions)):
            code = jnp.where(sig.conditions[name], self._code[name], code)
        code = jnp.where(truncated, self._code[TIME_LIMIT], code)
        code = jnp.where(health["overflow"], self._code[CONTACT_OVERFLOW], code)
        code = jnp.where(health["unstable"], self._code[PHYSICS_UNSTABLE], code)
        success = ok & sig.success
        solved_native = ok & sig.solved_native
        obs = jnp.where(ok, self._observe(view, ts), 0.0)
        new = w._replace(data=d, task=ts, steps=steps, success=success, done=terminated | truncated, key=key,
                         obs=obs, unstable_resets=w.unstable_resets + health["unstable"].astype(jnp.int32),
                         overflows=w.overflows + health["overflow"].astype(jnp.int32))
        rec = None
        if record:
            rec = {"activation": jnp.where(ok, view.activation, 0.0),
                   "qvel_joints": jnp.where(ok, view.qdot_joints, 0.0),
                   "touch": jnp.where(ok, view.touch, 0.0)}
            if "pelvis" in self.handles.bodies:  # the gait progress's position and heading
                rec["pelvis_xy"] = jnp.where(ok, view.pelvis_pos[:2], 0.0)
                rec["yaw"] = jnp.where(ok, view.yaw, 0.0)
        return new, StepOut(obs, reward, terminated, truncated, obs, success, terms, code, rec, solved_native)

    def _select(self, cond, a: World, b: World) -> World:
        """World ``a`` where ``cond`` else ``b``, leaf by leaf (physics through the backend)."""
        jax, jnp = _jax()
        pick = lambda x, y: jax.tree_util.tree_map(lambda u, v: jnp.where(cond, u, v), x, y)  # noqa: E731
        return World(*(self.physics.where(cond, a.data, b.data) if name == "data" else pick(getattr(a, name),
                                                                                               getattr(b, name))
                       for name in World._fields))

    # -- batch -----------------------------------------------------------------------------------
    def _reset_worlds_impl(self, bank: Bank, key):
        jax, jnp = _jax()
        p = self.perturbation
        keys = jax.random.split(key, self.num_envs)
        idx = jnp.arange(self.num_envs) % self.bank_size
        std, rng = jnp.float32(p.action_noise_std), jnp.float32(p.muscle_gain_range)

        def one(i, k):
            pick = jax.tree_util.tree_map(lambda x: x[i], (bank.initial, bank.task))
            ready = None if bank.data is None else jax.tree_util.tree_map(lambda x: x[i], (bank.data, bank.obs))
            return self._world(pick[0], pick[1], k, std, rng, ready=ready)

        return jax.vmap(one)(idx, keys)

    def reset(self, key) -> State:
        """``num_envs`` worlds started from a fresh bank (its first entries), with the env's perturbation."""
        jax, jnp = _jax()
        k_bank, k_worlds, k_next = jax.random.split(key, 3)
        if not self.device_resets:
            self._host_bank = None  # a new bank of host draws
        bank = self._refill(k_bank, self.bank_size)
        worlds = self._reset_worlds(bank, k_worlds)
        cursor = min(self.num_envs, self.bank_size)
        return State(worlds, bank, jnp.int32(cursor), jnp.int32(max(0, self.num_envs - self.bank_size)), k_next)

    def _auto_reset(self, state: State, done) -> State:
        """Finished worlds take the next bank entries, in world order. Stepped inside a ``shard_map`` over
        :data:`~mskbench.envs.protocols.WORLD_AXIS` (this device holding a slice of the worlds), the entries
        follow those the earlier devices' worlds took, and the cursor and the reuse count add up every
        device's resets: the same entries as one device stepping all the worlds."""
        jax, jnp = _jax()
        worlds = state.worlds
        size = jax.tree_util.tree_leaves(state.bank.initial)[0].shape[0]
        n_done = done.sum(dtype=jnp.int32)
        before, total = jnp.int32(0), n_done
        if _sharded():
            counts = jax.lax.all_gather(n_done, WORLD_AXIS)
            before = jnp.sum(jnp.where(jnp.arange(counts.shape[0]) < jax.lax.axis_index(WORLD_AXIS), counts, 0))
            total = counts.sum()
        idx = state.cursor + before + jnp.cumsum(done.astype(jnp.int32)) - 1
        over = done & (idx >= size)
        n_over = over.sum(dtype=jnp.int32)
        if _sharded():
            n_over = jax.lax.psum(n_over, WORLD_AXIS)
        keys = jax.vmap(lambda k: jax.random.split(k)[1])(worlds.key)
        fresh = jax.vmap(lambda i, w, k: self._bank_world(state.bank, i, w, k))(idx % size, worlds, keys)
        worlds = jax.vmap(self._select)(done, fresh, worlds)
        return state._replace(worlds=worlds, cursor=state.cursor + total, reused=state.reused + n_over)

    def _step(self, state: State, actions, auto_reset: bool = True, record: bool = False):
        jax, jnp = _jax()
        worlds, out = jax.vmap(lambda w, a: self._step_one(w, a, record))(state.worlds, actions)
        if auto_reset:
            state = self._auto_reset(state._replace(worlds=worlds), out.terminated | out.truncated)
            return state, out._replace(obs=state.worlds.obs)
        # Without resets a finished world stays as it ended and reports nothing.
        was_done = state.worlds.done
        worlds = jax.vmap(self._select)(was_done, state.worlds, worlds)
        zeroed = jax.tree_util.tree_map(
            lambda x: jnp.where(was_done.reshape(was_done.shape + (1,) * (x.ndim - 1)), jnp.zeros_like(x), x), out)
        return state._replace(worlds=worlds), zeroed._replace(termination=jnp.where(was_done, -1, out.termination))

    # -- evaluation starts ------------------------------------------------------------------------
    def _reset_to_impl(self, initial, keys, action_std, gain_range, gain):
        jax, _ = _jax()
        return jax.vmap(self._world)(initial["physics"], initial["ts"], keys, action_std, gain_range, gain)

    def reset_to(self, seeds, *, key=None, action_std=0.0, gain_range=0.0) -> State:
        """Worlds starting the episodes of ``seeds`` exactly as the CPU environment does.

        Initial states and muscle gains come from the seeds' CPU streams;
        ``action_std`` and ``gain_range`` are per world (scalars broadcast),
        so perturbation scales can share the batch with episodes. The bank
        holds the same starts: an auto-reset world starts its seed's episode again.
        """
        seeds = [int(s) for s in seeds]
        gain_range = np.broadcast_to(np.asarray(gain_range, np.float32), (len(seeds),))
        if np.any(gain_range > 0) and not self.vary_gain:
            raise ValueError("muscle-gain perturbation needs an environment made with vary_gain=True")
        return self._start_worlds(self.initial_states(seeds), self.muscle_gains(seeds, gain_range), key, action_std,
                                  gain_range)

    def reset_to_states(self, inits: Sequence[InitialState], *, key=None, action_std=0.0) -> State:
        """Worlds starting from given initial states (e.g. a task's ``start_at``), nominal muscle gains."""
        return self._start_worlds(self._prepare(list(inits)), np.ones((len(inits), self.action_size), np.float32),
                                  key, action_std, 0.0)

    def _start_worlds(self, initial: dict, gain, key, action_std, gain_range) -> State:
        jax, jnp = _jax()
        n = len(gain)
        action_std = np.broadcast_to(np.asarray(action_std, np.float32), (n,))
        gain_range = np.broadcast_to(np.asarray(gain_range, np.float32), (n,))
        initial = jax.tree_util.tree_map(jnp.asarray, initial)
        self.physics.prepare(n, gains=self.vary_gain)
        key = jax.random.PRNGKey(0) if key is None else key
        worlds = self._reset_to(initial, jax.random.split(key, n), jnp.asarray(action_std), jnp.asarray(gain_range),
                                jnp.asarray(gain))
        bank = Bank(initial["physics"], initial["ts"], None, None)
        return State(worlds, bank, jnp.int32(0), jnp.int32(0), key)

    # -- parity / diagnostics --------------------------------------------------------------------
    def signals(self, data, ts, steps):
        """Observation, reward terms, conditions and success of one world's physics state
        (no stepping; for parity checks against the CPU environment)."""
        _, jnp = _jax()
        view = self._view(data)
        sig = step_signals(self.task, view, ts, steps, jnp)
        return {"obs": self._observe(view, sig.ts), "ts": sig.ts, "reward_terms": sig.terms,
                "conditions": sig.conditions, "terminated": sig.terminated, "success": sig.success,
                "solved_native": sig.solved_native}


def make(task: str | Task = "Stand", num_envs: int = 1024, impl: str = "jax", **kwargs) -> TaskJaxEnv:
    """A batched JAX environment for ``task`` (see :class:`TaskJaxEnv`)."""
    return TaskJaxEnv(task, num_envs, impl=impl, **kwargs)

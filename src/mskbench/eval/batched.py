"""Batched evaluation: protocol units as worlds of one JAX environment.

:func:`run_units_batched` runs the same units as :func:`mskbench.eval.executors.run_units`
and writes the same records to the same results store, but steps many
episodes at once on a :class:`~mskbench.envs.jax_env.TaskJaxEnv` (a GPU with
``impl="warp"`` / ``"jax"``; MuJoCo C behind the same interface with
``impl="cpu"``). Episodes *and* perturbation scales share the batch axis: every
world carries its own seed, action-noise σ, muscle-gain range and
observation-noise σ.

Per task, one environment is built; units are taken ``batch_size`` at a time
(the last chunk is padded with copies of its last unit so the step is compiled
once), started with :meth:`TaskJaxEnv.reset_to` (the CPU environment's initial
state and muscle gains of each seed) and stepped with ``auto_reset=False`` in
jitted ``jax.lax.scan`` blocks of ``chunk_steps`` steps with the policy inside
until every world is done. The per-step traces then come to the host and
:func:`mskbench.eval.episodes.episode_record` — the function the CPU episode
loop uses — turns each world's trace, cut at its length, into its record (the
per-step success and native flags too: the step success first held and whether
the episode then fell come from the same code as on the CPU).

Over several devices (``devices``, default every device JAX sees) a batch's
worlds are split into equal contiguous shards, one per device of a one-axis
mesh (:class:`mskbench.agents.data_parallel.DataParallel`): the batch size is
rounded up to a multiple of the device count (the last chunk padded as
above), the batch is started on the first device and laid out on the mesh,
and each scan block is a ``shard_map`` program in which every device steps its
shard with those worlds' keys and noise scales. The traces come to the host
in world order, so a unit's record does not depend on the device its world
ran on.

Policies: the built-ins (``zero``, ``passive``, ``random``) and PPO
checkpoints (``.npz`` or a run directory; the deterministic network with the
checkpoint's observation normalisation, evaluated inside the jitted scan with
:func:`mskbench.agents.ppo.make_functions`). Observation noise (Eq. 5) is added
between the normalisation and the network, per world; the built-ins take the
observation itself as their normalised input and ignore it. Other policies
(``package.module:factory``) run on the CPU executors only.

What matches the CPU executor and what does not:

* with no noise stream involved (``zero``, ``passive``, a checkpoint; settings
  ``none`` and ``dynamics``) a unit starts from the same state with the same
  muscle gains and, with ``impl="cpu"``, runs the same physics: success,
  termination and length agree, return and metrics agree to float32
  round-off (the batched task code runs in float32);
* action noise, observation noise and the ``random`` policy draw from JAX
  keys derived from the unit's seed (``PRNGKey(seed)`` split into an
  environment key and a policy key), not from the CPU executor's NumPy
  streams: the records are equally valid samples of the protocol and
  reproducible (a unit's record depends on its key, not on its batch or the
  device count, up to float32 round-off: XLA may vectorise the task code
  differently for another batch shape), but not the CPU executor's numbers;
* ``impl="warp"`` (MuJoCo Warp) and ``"jax"`` (MJX) integrate in float32, so
  episodes diverge from MuJoCo C's over time as any two simulators do (on
  Walk, observations agree to 8e-4 relative after a few steps on
  ``"warp"``); ``"jax"`` also wraps 15 MyoFullBody muscles by MuJoCo 3.x's
  rule (:mod:`mskbench.sim.parity`);
* a unit of a task whose native solved signal counts ends at its first step that
  raises it, as on the CPU (:func:`mskbench.eval.episodes.native_end`: the world
  steps on with the others and its trace is cut there; termination
  ``native_solved``);
* a world whose physics goes unstable or whose contact buffer overflows ends
  with termination ``physics_unstable`` / ``contact_overflow`` (the CPU
  environment has no ``contact_overflow``); its last step is dropped from the
  metrics, as the CPU loop drops an unstable step.

The gait progress (steps taken, distance, forward speed) comes from the same
per-step traces as on the CPU: the four foot touch sensors, the pelvis's
horizontal position and its heading (the JAX env's ``record``).

``wall_time_s`` of a batched record is its chunk's wall time divided by the
number of units in the chunk. Host memory for the traces is about
``batch_size × horizon × 2.2 kB`` (float32 activations and joint velocities).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mskbench._jax import require_jax
from mskbench.eval.episodes import (NATIVE_SOLVED, ProgressTrace, body_weight_n, heel_index, native_end, native_ends,
                                    progress_indices)
from mskbench.eval.executors import JobSpec
from mskbench.eval.protocol import Unit, checkpoint_acting, checkpoint_path, perturbation_for
from mskbench.policies import BUILTIN_POLICIES, PRIVILEGED_POLICIES

if TYPE_CHECKING:
    from mskbench.agents.base import PolicyCheckpoint
    from mskbench.tasks import Task

log = logging.getLogger(__name__)

#: Worlds per batch by default (GPU; see the module docstring for the host memory it needs).
DEFAULT_BATCH_SIZE = 1024
#: Control steps per jitted scan block (the host checks for finished batches between blocks).
DEFAULT_CHUNK_STEPS = 50


def _jax():
    return require_jax("batched evaluation")


# -- policies -----------------------------------------------------------------------------
class _BuiltinPolicy:
    """zero / passive / random for a batch of worlds."""

    def __init__(self, name: str):
        self.name = name

    def params(self):
        return None

    def bind(self, env) -> "Callable":
        jax, jnp = _jax()
        n = env.action_size
        name = self.name

        def act(params, obs, keys, obs_std):
            batch = obs.shape[0]
            if name == "zero":
                return jnp.zeros((batch, n), jnp.float32), keys
            if name == "passive":
                return jnp.full((batch, n), -1.0, jnp.float32), keys
            pair = jax.vmap(jax.random.split)(keys)
            actions = jax.vmap(lambda k: jax.random.uniform(k, (n,), jnp.float32, -1.0, 1.0))(pair[:, 1])
            return actions, pair[:, 0]

        return act


class _CheckpointPolicy:
    """A checkpoint's deterministic policy (any trainer, :mod:`mskbench.agents.checkpoint`) for a batch."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._ckpt: PolicyCheckpoint | None = None

    def params(self):
        """The network parameters (after :meth:`bind`, which loads them for the task)."""
        return None if self._ckpt is None else self._ckpt.params

    def bind(self, env) -> "Callable":
        from mskbench.agents.checkpoint import load
        from mskbench.envs.perturbations import noisy_observation

        jax, jnp = _jax()
        ckpt = load(self.path, env.obs_layout, env.obs_size)
        self._ckpt = ckpt

        def act(params, obs, keys, obs_std):
            # The trainer's normalisation, then Eq. 5 noise in the normalised space, then the network.
            x = ckpt.normalize(obs, jnp)
            pair = jax.vmap(jax.random.split)(keys)
            eps = jax.vmap(lambda k: jax.random.normal(k, (x.shape[-1],), jnp.float32))(pair[:, 1])
            x = noisy_observation(x, obs_std[:, None], eps, xp=jnp)
            return ckpt.deterministic(params, x), pair[:, 0]

        return act


def check_batched_policy(spec: str) -> str:
    """``spec`` if batched evaluation can run it; else a ``ValueError`` that points to the CPU executor."""
    if spec in PRIVILEGED_POLICIES:
        raise ValueError(f"{spec!r} reads the MuJoCo C simulator of a CPU environment; evaluate it with the CPU "
                         "executor (--backend cpu)")
    ckpt = checkpoint_path(spec)
    acting = checkpoint_acting(ckpt) if ckpt is not None else None
    if acting is not None and not callable(getattr(acting, "batched_env", None)):
        raise ValueError(f"{spec} acts through {type(acting).__name__}, which has no batched form "
                         f"({getattr(acting, 'cpu_only', 'it names none')}); evaluate it with the CPU executor "
                         "(--backend cpu)")
    if spec in BUILTIN_POLICIES or ckpt is not None:
        return spec
    raise ValueError(f"batched evaluation supports the built-in policies "
                     f"({', '.join(p for p in BUILTIN_POLICIES if p not in PRIVILEGED_POLICIES)}) and "
                     f"PPO checkpoints (.npz or a run directory), not {spec!r}; the CPU executor "
                     "(--backend cpu) runs any policy")


def batched_policy(spec: str):
    """The batched form of policy ``spec`` (see :func:`check_batched_policy`)."""
    check_batched_policy(spec)
    if spec in BUILTIN_POLICIES:
        return _BuiltinPolicy(spec)
    path = checkpoint_path(spec)
    assert path is not None  # check_batched_policy
    return _CheckpointPolicy(path)


# -- keys -----------------------------------------------------------------------------------
def unit_keys(seeds) -> tuple[np.ndarray, np.ndarray]:
    """Per-world (environment, policy) JAX keys of episode ``seeds``: ``PRNGKey(seed)`` split in two.

    The environment key drives the action noise, the policy key the ``random``
    policy and the observation noise; both depend on the seed only.
    """
    jax, _ = _jax()
    env_keys, pol_keys = [], []
    for s in seeds:
        k_env, k_pol = jax.random.split(jax.random.PRNGKey(int(s)))
        env_keys.append(np.asarray(k_env))
        pol_keys.append(np.asarray(k_pol))
    return np.stack(env_keys), np.stack(pol_keys)


# -- the rollout ----------------------------------------------------------------------------
class _Runner:
    """Jitted blocks of ``steps`` control steps of every world with the policy inside, one ``shard_map``
    program over the devices of ``dp`` (:mod:`mskbench.agents.data_parallel`): each device steps its
    contiguous shard of the worlds with their policy keys and observation-noise scales; the parameters are
    replicated; the traces (steps, worlds, ...) stay sharded on their world axis until the host reads them."""

    def __init__(self, env, act: Callable, steps: int, dp):
        self.env, self.act, self.steps, self.dp = env, act, steps, dp
        self._run: Callable | None = None  # built for the first batch's state

    def _build(self, specs) -> Callable:
        jax, _ = _jax()
        from jax.sharding import PartitionSpec as P

        from mskbench.envs.protocols import WORLD_AXIS

        env, act, steps = self.env, self.act, self.steps
        heel = heel_index(env.handles)
        feet = progress_indices(env.handles)

        def run(state, pkeys, params, obs_std):
            def body(carry, _):
                state, pkeys = carry
                actions, pkeys = act(params, state.obs, pkeys, obs_std)
                state, out = env.step(state, actions, auto_reset=False, record=True)
                rec = out.record
                trace = {"reward": out.reward, "success": out.success, "termination": out.termination,
                         "solved_native": out.solved_native,
                         "activation": rec["activation"], "qvel": rec["qvel_joints"],
                         "heel": rec["touch"][:, heel] if heel is not None else jax.numpy.zeros_like(out.reward)}
                if feet is not None:  # the gait progress's traces
                    trace.update(feet=rec["touch"][:, feet], pelvis_xy=rec["pelvis_xy"], yaw=rec["yaw"])
                return (state, pkeys), trace

            (state, pkeys), traces = jax.lax.scan(body, (state, pkeys), None, length=steps)
            return state, pkeys, traces

        donate = (0,) if jax.default_backend() != "cpu" else ()  # the worlds' old state is not needed again
        worlds = P(WORLD_AXIS)
        return self.dp.shard_map(run, in_specs=(specs, worlds, P(), worlds),
                                 out_specs=(specs, worlds, P(None, WORLD_AXIS)), donate_argnums=donate)

    def start(self, state, pkeys, obs_std):
        """A batch's state, policy keys and observation-noise scales laid out on the mesh (worlds sharded)."""
        from jax.sharding import PartitionSpec as P

        from mskbench.agents.data_parallel import state_specs
        from mskbench.envs.protocols import WORLD_AXIS

        specs = state_specs(state, self.dp.devices)
        if self._run is None:
            self._run = self._build(specs)
        return self.dp.place(state, specs), self.dp.place(pkeys, P(WORLD_AXIS)), self.dp.place(obs_std, P(WORLD_AXIS))

    def __call__(self, state, pkeys, params, obs_std):
        assert self._run is not None, "start() lays out the batch first"
        return self._run(state, pkeys, params, obs_std)


def _with_world_keys(state, keys):
    """``state`` with its worlds' PRNG keys replaced (a wrapper's state holds the env's as ``inner``)."""
    if hasattr(state, "inner"):
        return state._replace(inner=_with_world_keys(state.inner, keys))
    return state._replace(worlds=state.worlds._replace(key=keys))


def _run_chunk(env, runner: _Runner, steps: int, params, units: list[Unit], width: int,
               emg_reference, weight_n: float) -> list[dict]:
    """Run ``units`` (padded to ``width`` worlds) to the end and return their records (``weight_n``: the
    body's weight, for the gait progress)."""
    jax, jnp = _jax()
    from mskbench.eval.episodes import episode_record

    t0 = time.perf_counter()
    padded = units + [units[-1]] * (width - len(units))
    perts = [perturbation_for(u.perturbation, u.scale) for u in padded]
    seeds = [u.seed for u in padded]
    state = env.reset_to(seeds, action_std=[p.action_noise_std for p in perts],
                         gain_range=[p.muscle_gain_range for p in perts])
    env_keys, pol_keys = unit_keys(seeds)
    state = _with_world_keys(state, jnp.asarray(env_keys))
    obs_std = np.asarray([p.observation_noise_std for p in perts], np.float32)
    state, pkeys, obs_std = runner.start(state, pol_keys, obs_std)

    # A world is finished when the env ended it or, for a task whose native signal counts, once that
    # signal was raised (the CPU loop stops there; the world steps on here and its trace is cut).
    ends_on_native = native_ends(env.task)
    solved = np.zeros(width, bool)
    blocks = []
    for _ in range(math.ceil(env.task.horizon / steps) + 1):
        state, pkeys, traces = runner(state, pkeys, params, obs_std)
        blocks.append(jax.device_get(traces))
        if ends_on_native:
            solved |= np.any(np.asarray(blocks[-1]["solved_native"], bool), axis=0)
        if bool(np.all(np.asarray(state.done) | solved)):
            break
    else:
        raise RuntimeError(f"{env.task.name}: worlds still running after the horizon ({env.task.horizon} steps)")
    tr = {k: np.concatenate([b[k] for b in blocks], axis=0) for k in blocks[0]}
    lengths = np.asarray(state.steps)
    wall = (time.perf_counter() - t0) / len(units)

    records = []
    for i, u in enumerate(units):
        n = int(lengths[i])
        cut = native_end(env.task, tr["solved_native"][:, i], n)
        code = int(tr["termination"][n - 1, i]) if cut is None or cut == n else -1
        if cut is not None and (cut < n or code < 0):  # ended by the evaluator, not by the env, at step `cut`
            n, termination = cut, NATIVE_SOLVED
        elif code < 0:
            raise RuntimeError(f"{u}: world {i} has length {n} but no termination at its last step")
        else:
            termination = env.termination_names[code]
        progress = None if "feet" not in tr else ProgressTrace(tr["feet"][:n, i], tr["pelvis_xy"][:n, i],
                                                               tr["yaw"][:n, i], weight_n)
        result = episode_record(env.task, u.seed, float(np.sum(tr["reward"][:n, i], dtype=np.float64)), n,
                                bool(tr["success"][n - 1, i]), termination,
                                tr["activation"][:n, i], tr["qvel"][:n, i], tr["heel"][:n, i],
                                env.control_dt_s, env.handles.muscle_names, emg_reference, wall,
                                bool(np.any(tr["solved_native"][:n, i])), tr["success"][:n, i],
                                tr["solved_native"][:n, i], progress)
        record = result.as_dict()
        record.update(method=u.method, task=u.task, perturbation=u.perturbation, scale=float(u.scale),
                      seed=int(u.seed), privileged=False)  # batched: no policy reads the simulator
        records.append(record)
    return records


def _load_emg(reference):
    if reference is None or not isinstance(reference, (str, Path)):
        return reference
    from mskbench.metrics.emg import load_emg_reference

    return load_emg_reference(reference)


def run_units_batched(units: Iterable[Unit], spec: JobSpec | str, store, *, impl: str = "warp",
                      batch_size: int = DEFAULT_BATCH_SIZE, emg_reference=None,
                      progress: Callable[[dict], None] | None = None, chunk_steps: int = DEFAULT_CHUNK_STEPS,
                      tasks: Mapping[str, Task] | None = None, devices: int | None = None) -> dict:
    """Run the units the store lacks as batches of worlds and write each record.

    Parameters
    ----------
    units, store:
        As for :func:`~mskbench.eval.executors.run_units`: units already in the
        store are skipped; each record is written in its own transaction as
        soon as its batch finishes.
    spec:
        A :class:`~mskbench.eval.executors.JobSpec` or a policy spec: a built-in
        or a PPO checkpoint (anything else is a ``ValueError``).
    impl:
        Physics of the :class:`~mskbench.envs.jax_env.TaskJaxEnv`: ``"warp"``,
        ``"jax"`` or ``"cpu"``.
    batch_size:
        Worlds per batch (at most the task's number of units to run), rounded up
        to a multiple of ``devices``.
    emg_reference:
        A loaded EMG reference or its CSV path (default: the ``JobSpec``'s).
    progress:
        Called with each record after it is written.
    chunk_steps:
        Control steps per jitted scan block.
    tasks:
        Optional task objects by task id (a custom configuration of a task,
        e.g. a shorter horizon), used instead of the registered task.
    devices:
        The worlds of a batch are split over this many devices, the first of
        ``jax.devices()`` (default: every device JAX sees); more than JAX sees
        is a ``ValueError`` naming the valid counts.

    Returns counts: ``{"planned", "skipped", "written"}``.
    """
    from mskbench.envs.jax_env import TaskJaxEnv
    from mskbench.sim.batched import check_impl

    check_impl(impl)
    if batch_size < 1:
        raise ValueError(f"batch_size must be >= 1, got {batch_size}")
    if chunk_steps < 1:
        raise ValueError(f"chunk_steps must be >= 1, got {chunk_steps}")
    policy_spec = spec.policy if isinstance(spec, JobSpec) else str(spec)
    policy = batched_policy(policy_spec)
    ckpt = checkpoint_path(policy_spec)
    acting = checkpoint_acting(ckpt) if ckpt is not None else None  # the env the checkpoint's network acts in
    options = dict(getattr(acting, "batched_options", {}))
    if emg_reference is None and isinstance(spec, JobSpec):
        emg_reference = spec.emg_reference
    emg_reference = _load_emg(emg_reference)
    _jax()
    from mskbench.agents.data_parallel import DataParallel, resolve_devices

    dp = DataParallel(resolve_devices(devices, None))

    units = sorted(set(units))
    todo = store.missing(units)
    log.info("%d units planned, %d already stored, %d to run (batched, impl=%s, %d device%s)",
             len(units), len(units) - len(todo), len(todo), impl, dp.devices, "s" if dp.devices > 1 else "")
    by_task: dict[str, list[Unit]] = {}
    for u in todo:
        by_task.setdefault(u.task, []).append(u)
    written = 0
    for task, group in by_task.items():
        width = dp.devices * -(-min(batch_size, len(group)) // dp.devices)  # equal shards, one per device
        vary_gain = any(u.perturbation == "dynamics" and u.scale > 0 for u in group)
        env: Any = TaskJaxEnv((tasks or {}).get(task, task), num_envs=width, impl=impl, vary_gain=vary_gain,
                              reset_bank=1, devices=dp.devices, **options)
        weight_n = body_weight_n(env.model, env.handles)
        if acting is not None:  # a checkpoint that acts through more than its network: inside the step
            env = acting.batched_env(env)
        steps = min(chunk_steps, env.task.horizon)
        runner = _Runner(env, policy.bind(env), steps, dp)
        params = dp.replicate(policy.params())
        for start in range(0, len(group), width):
            chunk = group[start:start + width]
            for record in _run_chunk(env, runner, steps, params, chunk, width, emg_reference, weight_n):
                written += store.write(record)
                if progress is not None:
                    progress(record)
            log.info("%s: %d of %d units done", task, min(start + width, len(group)), len(group))
    return {"planned": len(units), "skipped": len(units) - len(todo), "written": written}

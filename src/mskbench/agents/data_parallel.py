"""Data-parallel training of a batched env over several devices, on one host or several.

The worlds of a :class:`~mskbench.envs.protocols.BatchedEnv` are split into equal contiguous shards, one per
device of a one-axis ``jax.sharding.Mesh`` (axis :data:`~mskbench.envs.protocols.WORLD_AXIS`); the learner
(:mod:`mskbench.agents.ppo`) runs its rollout and its update as ``jax.shard_map`` programs over that mesh:
each device steps its shard of worlds and computes the gradient of its part of every minibatch, and the
gradients are averaged over the axis.

``shard_map`` (not ``pmap``, nor ``jit`` with sharded inputs left to the compiler): the program each device
runs is written out, so the physics' host callback (``impl="cpu"``) and MuJoCo Warp's FFI call each get
this device's worlds and run where they are, and the collectives are the few the algorithm needs. ``pmap``
would do the same but is being retired in JAX in favour of ``shard_map``; a ``jit`` over sharded arrays
would leave an FFI call or callback to run on whole, gathered arrays.

Across hosts, :func:`initialize` starts ``jax.distributed`` before anything touches a device; the mesh then
spans every process's devices, and :func:`place` builds the global arrays from values every process holds
whole (the env's reset and bank, the parameters).
"""

from __future__ import annotations

import os
from typing import Any

import numpy as np

from mskbench._jax import require_jax
from mskbench.envs.protocols import WORLD_AXIS, State

#: The environment variables :func:`initialize` reads when its arguments are not given.
ENV_COORDINATOR, ENV_NUM_PROCESSES, ENV_PROCESS_ID = "JAX_COORDINATOR_ADDRESS", "JAX_NUM_PROCESSES", "JAX_PROCESS_ID"


def _jax():
    return require_jax("data-parallel training")


def initialize(coordinator: str | None = None, num_processes: int | None = None,
               process_id: int | None = None) -> bool:
    """Start ``jax.distributed`` for a run over several processes (hosts); returns whether it did.

    Each argument not given is read from :data:`ENV_COORDINATOR`, :data:`ENV_NUM_PROCESSES`,
    :data:`ENV_PROCESS_ID`. Nothing is started when none of the three is set, or when the process count is
    1. A partial set is a ``ValueError`` naming what is missing. Call it before anything uses a device.
    """
    coordinator = coordinator or os.environ.get(ENV_COORDINATOR) or None
    if num_processes is None and os.environ.get(ENV_NUM_PROCESSES):
        num_processes = _int_env(ENV_NUM_PROCESSES)
    if process_id is None and os.environ.get(ENV_PROCESS_ID):
        process_id = _int_env(ENV_PROCESS_ID)
    given = {"coordinator": coordinator, "num_processes": num_processes, "process_id": process_id}
    if all(v is None for v in given.values()) or num_processes == 1:
        return False
    missing = [k for k, v in given.items() if v is None]
    if missing:
        raise ValueError(f"a run over several processes needs the coordinator address, the process count and this "
                         f"process's id; missing: {', '.join(missing)} (flags --coordinator, --num-processes, "
                         f"--process-id or {ENV_COORDINATOR}, {ENV_NUM_PROCESSES}, {ENV_PROCESS_ID})")
    assert num_processes is not None and process_id is not None
    if num_processes < 1 or not 0 <= process_id < num_processes:
        raise ValueError(f"process_id must be in 0..{num_processes - 1} and num_processes >= 1, got process_id="
                         f"{process_id}, num_processes={num_processes}")
    jax, _ = _jax()
    jax.distributed.initialize(coordinator_address=coordinator, num_processes=num_processes, process_id=process_id)
    return True


def _int_env(name: str) -> int:
    text = os.environ[name]
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"{name} must be an integer, got {text!r}") from None


def process_index() -> int:
    """This process's index among the run's processes (0 without ``jax.distributed``)."""
    jax, _ = _jax()
    return int(jax.process_index())


def resolve_devices(devices: int | None, num_envs: int | None, minibatch: int | None = None) -> int:
    """The device count a run shards ``num_envs`` worlds over: ``devices``, or every device JAX sees when
    None. It must divide ``num_envs`` (and ``minibatch``, the samples of one minibatch, which the devices
    share equally) and be at most the devices JAX sees (over several processes: all of them); otherwise a
    ``ValueError`` naming the valid counts. ``num_envs=None``: the caller pads its batch to a multiple of
    the count, so any count from 1 to the devices JAX sees fits."""
    jax, _ = _jax()
    seen = jax.device_count()
    sizes = ([num_envs] if num_envs is not None else []) + ([minibatch] if minibatch is not None else [])
    fits = lambda d: all(n % d == 0 for n in sizes)  # noqa: E731
    if jax.process_count() > 1:
        valid = [seen] if fits(seen) else []
        where = f"{jax.process_count()} processes (all {seen} devices take part)"
    else:
        valid = [d for d in range(1, seen + 1) if fits(d)]
        where = f"{seen} device{'s' if seen > 1 else ''} JAX sees"
    chosen = seen if devices is None else int(devices)
    if chosen not in valid:
        choices = ", ".join(map(str, valid)) if valid else f"none: make them multiples of {seen}"
        if not sizes:
            raise ValueError(f"devices={chosen} does not fit the {where}; valid: {choices}")
        what = f"num_envs={num_envs}" + (f" and the minibatch of {minibatch} samples" if minibatch is not None else "")
        raise ValueError(f"devices={chosen} does not fit {what} on the {where}; the count must divide "
                         f"{'both' if minibatch is not None else 'num_envs'}; valid: {choices}")
    return chosen


def state_specs(state: Any, devices: int):
    """``shard_map`` specs of a batched env's state: the ``worlds`` of every
    :class:`~mskbench.envs.protocols.State` in it sharded on their world axis, every other leaf replicated.
    Over more than one device the state must hold a ``State`` (a ``ValueError`` otherwise)."""
    jax, _ = _jax()
    from jax.sharding import PartitionSpec as P

    found = []

    def spec(node):
        if isinstance(node, State):
            found.append(True)
            return State(P(WORLD_AXIS), P(), P(), P(), P())
        return P()

    specs = jax.tree_util.tree_map(spec, state, is_leaf=lambda x: isinstance(x, State))
    if devices > 1 and not found:
        raise ValueError(f"sharding worlds over {devices} devices needs the env's state to hold a "
                         f"mskbench.envs.protocols.State (its worlds are what is split); got {type(state).__name__}")
    return specs


class DataParallel:
    """The first ``devices`` devices JAX sees as a one-axis mesh (:data:`~mskbench.envs.protocols.WORLD_AXIS`)."""

    def __init__(self, devices: int):
        jax, _ = _jax()
        from jax.sharding import Mesh

        if not 1 <= devices <= jax.device_count():
            raise ValueError(f"devices must be in 1..{jax.device_count()} (the devices JAX sees), got {devices}")
        self.devices = int(devices)
        self.mesh = Mesh(np.array(jax.devices()[:devices]), (WORLD_AXIS,))

    def sharding(self, spec):
        from jax.sharding import NamedSharding

        return NamedSharding(self.mesh, spec)

    def place(self, tree, specs):
        """``tree``'s arrays as global arrays on the mesh laid out as ``specs`` (a prefix of ``tree``). Every
        process must hold the whole value of an array not yet on the mesh; one already laid out so is kept."""
        jax, _ = _jax()

        def put(spec, sub):
            sharding = self.sharding(spec)

            def one(x):
                if isinstance(x, jax.Array) and x.sharding == sharding:
                    return x
                if jax.process_count() == 1:
                    return jax.device_put(x, sharding)
                value = np.asarray(x)
                return jax.make_array_from_callback(value.shape, sharding, lambda index: value[index])

            return jax.tree_util.tree_map(one, sub)

        return jax.tree_util.tree_map(put, specs, tree, is_leaf=_is_spec)

    def replicate(self, tree):
        """``tree`` replicated on every device of the mesh."""
        from jax.sharding import PartitionSpec as P

        return self.place(tree, P())

    def localize(self, tree, specs):
        """``tree`` with its replicated parts (spec ``P()``) on this process's first device (:func:`local`),
        its sharded parts as they are: what host-side code such as an env's ``refresh`` computes on."""
        jax, _ = _jax()
        return jax.tree_util.tree_map(lambda spec, sub: local(sub) if spec == () else sub, specs, tree,
                                      is_leaf=_is_spec)

    def shard_map(self, f, in_specs, out_specs, donate_argnums: tuple[int, ...] = ()):
        """``f`` jitted as a ``shard_map`` program over the mesh (the arguments at ``donate_argnums``
        donated to it). Replication of the outputs given a ``P()`` spec is not checked by JAX
        (``check_vma=False``): the callers compute those from replicated inputs and cross-device reductions
        only."""
        jax, _ = _jax()
        if hasattr(jax, "shard_map"):
            mapped = jax.shard_map(f, mesh=self.mesh, in_specs=in_specs, out_specs=out_specs, check_vma=False)
        else:  # JAX before 0.6
            from jax.experimental.shard_map import shard_map

            mapped = shard_map(f, mesh=self.mesh, in_specs=in_specs, out_specs=out_specs, check_rep=False)
        return jax.jit(mapped, donate_argnums=donate_argnums)


def _is_spec(x) -> bool:
    from jax.sharding import PartitionSpec

    return isinstance(x, PartitionSpec)


def local(tree):
    """Replicated global arrays as arrays on this process's first device (what an evaluation on one device
    takes); other values unchanged."""
    jax, _ = _jax()
    device = jax.local_devices()[0]

    def one(x):
        if isinstance(x, jax.Array) and len(x.sharding.device_set) > 1:
            return jax.device_put(x.addressable_shards[0].data, device)
        return x

    return jax.tree_util.tree_map(one, tree)

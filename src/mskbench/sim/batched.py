"""Batched physics for the JAX environments: one model, a batch of worlds.

Every backend has the same small interface, written for *one* world and
batched with ``jax.vmap`` by the environment (the ``cpu`` backend turns the
vmapped call into one host call for the whole batch):

* ``prepare_initial(qpos, qvel)`` — NumPy (batch of) initial configurations
  in the backend's own representation, to keep on the device;
* ``init_one(prepared, gain_scale=None)`` — a world at that configuration
  with the derived quantities computed (MuJoCo's ``mj_forward``; muscle
  forces with the world's gains);
* ``step_one(data, ctrl, gain_scale=None)`` — ``frame_skip`` physics steps
  with ``ctrl`` held, the muscles' peak forces (active and passive F0) scaled
  by ``gain_scale`` (Eq. 6); returns ``(data, health)`` where ``health`` has
  booleans ``unstable`` and ``overflow``;
* ``fields(data)`` — an object with MuJoCo's ``Data`` field names for
  :class:`~mskbench.sim.state.StateView`, so the task code reads every
  backend the same way;
* ``where(cond, a, b)`` — world data ``a`` where ``cond`` else ``b`` (resets);
* ``prepare(nworld, gains=False, device=None)`` — allocate what batches of
  ``nworld`` worlds need on a JAX ``device`` (default: the default device)
  before a compiled call sees them (MuJoCo Warp; a no-op elsewhere);
* ``bytes_per_world`` — the memory one world's data takes on the device.

With ``moments=True`` a world also has the field ``muscle_moments``
(:data:`mskbench.sim.muscles.MOMENT_FIELD`): the muscles' nonzeros of
``actuator_moment`` in the order of the backend's ``moment_pattern``
(:class:`~mskbench.sim.muscles.MomentPattern`, read from MuJoCo C), the same
numbers in the same places on every backend. Latent-action RL conditions its
decoder on them.

Backends (``impl``):

``"jax"``
    MJX in pure JAX (:mod:`mskbench.sim.mjx`): any JAX device. MJX 3.17
    wraps a few MyoFullBody muscles differently from MuJoCo 4.0
    (:mod:`mskbench.sim.parity`).
``"warp"``
    MuJoCo Warp through Warp's JAX FFI (:mod:`mskbench.sim.mjwarp`):
    NVIDIA GPUs, fastest; also runs on Warp's CPU device.
``"cpu"``
    MuJoCo C called from JAX (:mod:`mskbench.sim.host`): the physics of the
    CPU environment, bit for bit, behind the same functional interface. It
    lets the batched environment, trainer and evaluator run (and be tested)
    on a machine where compiling MJX for the full body is impractical.

Instability follows MuJoCo C's own checks: a world is *unstable* when any
of ``qpos``, ``qvel``, ``qacc`` or ``act`` is non-finite or larger in
magnitude than ``mjMAXVAL`` (1e10) — the conditions under which MuJoCo C
warns and resets the data. *Overflow* is a full contact or constraint buffer
(MuJoCo Warp drops contacts beyond its buffers and goes on); the pure-JAX MJX
backend has a fixed contact set and cannot overflow.
"""

from __future__ import annotations

import os

import mujoco

from mskbench.sim.worlds import NACONMAX_PER_WORLD, NJMAX

IMPLS = ("jax", "warp", "cpu")
#: Working memory of a step relative to the data it steps (our estimate for the memory check:
#: MJX keeps the inputs, outputs and the constraint solver's intermediates alive at once).
STEP_WORKSPACE_FACTOR = 4.0


def check_impl(impl: str) -> str:
    if impl not in IMPLS:
        raise ValueError(f"impl must be one of {', '.join(repr(i) for i in IMPLS)}, got {impl!r}")
    return impl


def make_physics(model: mujoco.MjModel, muscle_ids, frame_skip: int, impl: str = "jax", *,
                 handles=None, naconmax_per_world: int = NACONMAX_PER_WORLD, njmax: int | None = NJMAX,
                 moments: bool = False):
    """The batched physics backend ``impl`` for ``model`` (buffer sizes: MuJoCo Warp only; ``moments``:
    worlds carry the muscles' moment nonzeros)."""
    check_impl(impl)
    if frame_skip < 1:
        raise ValueError(f"frame_skip must be >= 1, got {frame_skip}")
    if impl == "cpu":
        from mskbench.sim.host import HostPhysics

        return HostPhysics(model, muscle_ids, frame_skip, handles=handles, moments=moments)
    if impl == "warp":
        from mskbench.sim.mjwarp import WarpPhysics

        return WarpPhysics(model, muscle_ids, frame_skip, naconmax_per_world=naconmax_per_world, njmax=njmax,
                           moments=moments)
    from mskbench.sim.mjx import MjxPhysics

    return MjxPhysics(model, muscle_ids, frame_skip, moments=moments)


def device_memory_bytes() -> tuple[int | None, str]:
    """Memory available to JAX's default device, and where the figure comes from."""
    import jax

    dev = jax.devices()[0]
    try:
        stats = dev.memory_stats()
    except Exception:  # noqa: BLE001 - backends without memory statistics
        stats = None
    if stats and stats.get("bytes_limit"):
        return int(stats["bytes_limit"]) - int(stats.get("bytes_in_use", 0)), f"{dev.device_kind} memory"
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE"), "available host memory"
    except (ValueError, OSError, AttributeError):
        return None, "unknown"


def check_fits(num_envs: int, bytes_per_world: int, *, what: str = "worlds",
               factor: float = STEP_WORKSPACE_FACTOR, available: int | None = None) -> None:
    """Raise a clear error when ``num_envs`` worlds will not fit the device memory."""
    if num_envs < 1:
        raise ValueError(f"num_envs must be >= 1, got {num_envs}")
    source = "given"
    if available is None:
        available, source = device_memory_bytes()
    if available is None:
        return
    need = num_envs * bytes_per_world * factor
    if need > available:
        fits = max(0, int(available // (bytes_per_world * factor)))
        raise MemoryError(
            f"num_envs={num_envs} {what} need an estimated {need / 2**30:.2f} GiB "
            f"({bytes_per_world / 2**20:.2f} MiB of data per world x {factor:g} for the step's working "
            f"memory), but only {available / 2**30:.2f} GiB ({source}) is free; "
            f"at most about {fits} fit")

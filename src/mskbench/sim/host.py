"""MuJoCo C behind the batched-physics interface (``impl="cpu"``).

Each world's full physics state (``mjSTATE_FULLPHYSICS``: time, ``qpos``,
``qvel``, ``act``, mocap; and ``mjSTATE_WARMSTART``, the solver's warm start) travels through JAX as the
bit pattern of its float64 values (two ``uint32`` per value), so it survives
JAX's default float32 mode exactly and a world continues exactly as the CPU
environment's ``MjData`` would. A step is one ``jax.pure_callback`` for the
whole batch (``vmap_method="broadcast_all"``) that loads each world into one
:class:`~mskbench.sim.cpu.CpuSimulator`, steps it and reads back the state and
the fields the task code needs (float32).

Use: the batched environment, the GPU trainer and the batched evaluator run
on any machine with this backend, and their results can be compared with the
CPU environment's (the physics is the same code). It is not fast.
"""

from __future__ import annotations

import copy
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace

import mujoco
import numpy as np

from mskbench.sim.cpu import CpuSimulator
from mskbench.sim.muscles import MOMENT_FIELD, MomentPattern
from mskbench.sim.worlds import VIEW_FIELDS, FieldView, tree_where

_OVERFLOW_WARNINGS = (mujoco.mjtWarning.mjWARN_CONTACTFULL, mujoco.mjtWarning.mjWARN_CNSTRFULL)


def encode_f64(x) -> np.ndarray:
    """float64 values -> their bit pattern as uint32 pairs (last axis doubles)."""
    x = np.ascontiguousarray(x, np.float64)
    return x.view(np.uint32).reshape(x.shape[:-1] + (2 * x.shape[-1],))


def decode_f64(bits) -> np.ndarray:
    """Inverse of :func:`encode_f64`."""
    b = np.ascontiguousarray(bits, np.uint32)
    return b.view(np.float64).reshape(b.shape[:-1] + (b.shape[-1] // 2,))


def _as_f64(x) -> np.ndarray:
    """An initial configuration as float64: decoded from :func:`encode_f64`'s bits (host draws,
    exact), or widened from float32 (starts drawn on the device)."""
    x = np.asarray(x)
    return decode_f64(x) if x.dtype == np.uint32 else x.astype(np.float64)


class HostPhysics:
    """MuJoCo C worlds behind the batched interface.

    ``threads`` simulators (each with its own ``MjModel`` copy, since muscle
    gains are set on the model) step contiguous slices of the batch in
    parallel; MuJoCo releases the GIL while it steps. Default: one per CPU
    core, at most 8.
    """

    impl = "cpu"

    def __init__(self, model: mujoco.MjModel, muscle_ids, frame_skip: int, *, handles=None,
                 threads: int | None = None, moments: bool = False):
        if handles is None:
            handles = SimpleNamespace(muscle_ids=np.asarray(muscle_ids))
        if threads is None:
            threads = min(os.cpu_count() or 1, 8)
        if threads < 1:
            raise ValueError(f"threads must be >= 1, got {threads}")
        self.model = model
        self.frame_skip = int(frame_skip)
        self.sim = CpuSimulator(model, handles, frame_skip)
        self._sims = [self.sim] + [CpuSimulator(copy.copy(model), handles, frame_skip) for _ in range(threads - 1)]
        self._pool = ThreadPoolExecutor(threads, thread_name_prefix="mskbench-host") if threads > 1 else None
        self._lock = threading.Lock()
        self._n_state = self.sim.state_size()
        d = self.sim.data
        self._shapes = {k: np.shape(getattr(d, k)) for k in VIEW_FIELDS}
        #: Where the muscles' moment nonzeros are (``moments=True``), else None.
        self.moment_pattern = MomentPattern.of_model(model, muscle_ids) if moments else None
        if self.moment_pattern is not None:
            self._shapes[MOMENT_FIELD] = (self.moment_pattern.nnz,)
        self.bytes_per_world = int(8 * self._n_state + 4 * sum(int(np.prod(s)) for s in self._shapes.values()) + 2)

    # -- host side ---------------------------------------------------------------------------
    def _empty(self, batch):
        out = {"state": np.empty(batch + (2 * self._n_state,), np.uint32),
               "unstable": np.zeros(batch, bool), "overflow": np.zeros(batch, bool)}
        out.update({k: np.empty(batch + s, np.float32) for k, s in self._shapes.items()})
        return out

    @staticmethod
    def _flat(out, batch):
        """Views of ``out`` with the batch axes flattened to one (fields may be empty)."""
        n = int(np.prod(batch, dtype=np.int64))
        return {k: v.reshape((n,) + v.shape[len(batch):]) for k, v in out.items()}

    def _read(self, sim, out, i):
        d = sim.data
        out["state"][i] = encode_f64(sim.get_state()[None])[0]
        for k in VIEW_FIELDS:
            out[k][i] = getattr(d, k)
        if self.moment_pattern is not None:
            out[MOMENT_FIELD][i] = self.moment_pattern.values(d)

    def _parallel(self, n: int, work) -> None:
        """``work(sim, start, stop)`` over contiguous slices of ``n`` worlds, one simulator each. Calls from
        several threads (the callbacks of the devices a sharded batch runs on) take turns: they share the
        simulators."""
        k = min(len(self._sims), n)
        bounds = np.linspace(0, n, k + 1).astype(int)
        with self._lock:
            if self._pool is None or k <= 1:
                work(self.sim, 0, n)
                return
            futures = [self._pool.submit(work, self._sims[j], bounds[j], bounds[j + 1]) for j in range(k)]
            for f in futures:
                f.result()

    def _host_init(self, qpos_bits, qvel_bits, gain_scale=None):
        qpos, qvel = _as_f64(qpos_bits), _as_f64(qvel_bits)
        batch = qpos.shape[:-1]
        out = self._empty(batch)
        flat = self._flat(out, batch)
        qp, qv = qpos.reshape(-1, qpos.shape[-1]), qvel.reshape(-1, qvel.shape[-1])
        gains = None if gain_scale is None else np.asarray(gain_scale, np.float64).reshape(-1, gain_scale.shape[-1])

        def work(sim, start, stop):
            try:
                for i in range(start, stop):
                    sim.set_muscle_gain_scale(None if gains is None else gains[i])
                    sim.reset(qp[i], qv[i])
                    self._read(sim, flat, i)
            finally:
                sim.set_muscle_gain_scale(None)

        self._parallel(qp.shape[0], work)
        return out

    def _host_step(self, state_bits, ctrl, gain_scale=None):
        batch = state_bits.shape[:-1]
        out = self._empty(batch)
        flat = self._flat(out, batch)
        states = decode_f64(state_bits).reshape(-1, self._n_state)
        ctrl = np.asarray(ctrl, np.float64).reshape(-1, ctrl.shape[-1])
        gains = None if gain_scale is None else np.asarray(gain_scale, np.float64).reshape(-1, gain_scale.shape[-1])

        def work(sim, start, stop):
            d = sim.data
            try:
                for i in range(start, stop):
                    sim.set_muscle_gain_scale(None if gains is None else gains[i])
                    sim.set_state(states[i])
                    flat["unstable"][i] = not sim.step(ctrl[i])
                    flat["overflow"][i] = any(d.warning[w].number for w in _OVERFLOW_WARNINGS)
                    self._read(sim, flat, i)
            finally:
                sim.set_muscle_gain_scale(None)

        self._parallel(states.shape[0], work)
        return out

    def _spec(self, batch=()):
        import jax
        import jax.numpy as jnp

        spec = {"state": jax.ShapeDtypeStruct(batch + (2 * self._n_state,), jnp.uint32),
                "unstable": jax.ShapeDtypeStruct(batch, jnp.bool_),
                "overflow": jax.ShapeDtypeStruct(batch, jnp.bool_)}
        spec.update({k: jax.ShapeDtypeStruct(batch + s, jnp.float32) for k, s in self._shapes.items()})
        return spec

    # -- interface ---------------------------------------------------------------------------
    def prepare_initial(self, qpos: np.ndarray, qvel: np.ndarray):
        """Host draws travel as float64 bit patterns (exact); :meth:`init_one` also takes float32
        configurations (starts drawn on the device)."""
        return {"qpos": encode_f64(qpos), "qvel": encode_f64(qvel)}

    def init_one(self, prepared, gain_scale=None):
        import jax
        import jax.numpy as jnp

        args = (prepared["qpos"], prepared["qvel"])
        if gain_scale is not None:
            args += (jnp.asarray(gain_scale, jnp.float32),)
        return jax.pure_callback(self._host_init, self._spec(), *args, vmap_method="broadcast_all")

    def step_one(self, d, ctrl, gain_scale=None):
        import jax
        import jax.numpy as jnp

        args = (d["state"], jnp.asarray(ctrl, jnp.float32))
        if gain_scale is not None:
            args += (jnp.asarray(gain_scale, jnp.float32),)
        new = jax.pure_callback(self._host_step, self._spec(), *args, vmap_method="broadcast_all")
        return new, {"unstable": new["unstable"], "overflow": new["overflow"]}

    def prepare(self, nworld: int, gains: bool = False, device=None) -> None:
        """Nothing to allocate ahead for this backend."""

    def fields(self, d):
        return FieldView(d)

    where = staticmethod(tree_where)

"""MuJoCo Warp behind the batched-physics interface (``impl="warp"``).

MuJoCo Warp (``mujoco-warp``, NVIDIA Warp kernels) is called from JAX
through Warp's FFI (``warp.jax_callable``): one call steps the whole batch
(``vmap_method="broadcast_all"``). It runs on NVIDIA GPUs and, slower, on
Warp's CPU device, which is how the test suite checks it.

Why not MJX's Warp implementation: ``mujoco-mjx`` 3.17 (the newest on PyPI)
ships its own MuJoCo Warp, which wraps spatial tendons around cylinders and
spheres with side sites by MuJoCo 3.x's rule. MuJoCo 4.0 changed that rule,
and ``mujoco-warp`` 4.0 follows it. With MuJoCo 4.0 C on the CPU, MJX's copy
gives MyoFullBody muscles (rectus femoris, teres major, latissimus, biceps
long head, supinator, ...) lengths up to 17 cm away from the CPU
environment's; this backend agrees with it to float32 rounding
(:mod:`mskbench.sim.parity`).

Each world's state is MuJoCo's ``mjSTATE_FULLPHYSICS | mjSTATE_WARMSTART``
vector (``mujoco_warp.get_state``/``set_state``, the same layout as
``mj_getState``), so a world continues exactly where it stopped, whatever
else shares the batch. A step loads the batch's states into one
``mujoco_warp.Data`` (kept per batch size and device), runs ``frame_skip``
steps and reads back the state and the fields the task code needs; a new
world is MuJoCo's reset state with its ``qpos`` and ``qvel``, and a forward
pass. A call only launches kernels and copies on the device, so Warp can
record it as a CUDA graph (:meth:`WarpPhysics.prepare` allocates first).
Per-world muscle gains use MuJoCo Warp's per-world model fields
(``actuator_gainprm``/``biasprm`` with a world axis).

A full contact or constraint buffer sets MuJoCo Warp's per-world
``overflow`` bits; they are reported as ``overflow`` (MuJoCo Warp itself
drops the extra contacts and goes on).
"""

# No ``from __future__ import annotations``: Warp reads the FFI function's argument types as objects.
import copy
import inspect
import os
import threading
from typing import Any

import mujoco
import numpy as np

from mskbench.sim.cpu import CpuSimulator
from mskbench.sim.muscles import MOMENT_FIELD, MomentPattern
from mskbench.sim.worlds import (NACONMAX_PER_WORLD, NJMAX, VIEW_FIELDS, FieldView, float32_initial, tree_where,
                                  unstable)

#: The per-world state: everything that determines the next step, laid out as the CPU simulator's
#: ``get_state`` (``mj_getState``), so a state moves between the two backends as it is.
STATE_SIG = CpuSimulator.STATE_SPEC
#: One Warp user at a time: JAX runs the FFI calls on its own threads, asynchronously, so a call
#: can still be running when the Python thread allocates (and warms up) buffers for a new batch.
_LOCK = threading.RLock()


def warp_imports():
    try:
        import warp as wp

        import mujoco_warp as mjw
    except ImportError as exc:
        raise RuntimeError(f'impl="warp" needs MuJoCo Warp ({exc}); pip install "mskbench[warp]"') from None
    return wp, mjw


def _buffer_overflows(mjw) -> int:
    """MuJoCo Warp's overflow bits that mean a full buffer (not a solver iteration limit)."""
    names = ("NEFC", "NJMAX_NNZ", "BROADPHASE", "NARROWPHASE", "CCD", "HFIELD", "NVMAX", "EPA_HORIZON")
    bits = 0
    for name in names:
        bits |= int(getattr(mjw.OverflowType, name, 0))
    return bits


def warp_model(model: mujoco.MjModel):
    """``model`` as a ``mujoco_warp.Model`` on Warp's current device, as the batched envs use it."""
    _, mjw = warp_imports()
    m = mjw.put_model(model)
    m.opt.warn_overflow = 0  # a full buffer is reported per world (``overflow``) instead of printed
    return m


def warp_data(model: mujoco.MjModel, nworld: int, *, naconmax_per_world: int = NACONMAX_PER_WORLD,
              njmax: int | None = NJMAX):
    """A ``mujoco_warp.Data`` of ``nworld`` worlds on Warp's current device, with the batched envs' buffers."""
    _, mjw = warp_imports()
    return mjw.make_data(model, nworld=nworld, naconmax=naconmax_per_world * nworld, njmax=njmax)


class WarpPhysics:
    """Worlds of one model on MuJoCo Warp.

    Parameters
    ----------
    naconmax_per_world, njmax:
        Buffer sizes: contacts per world (MuJoCo Warp pools them across the
        batch) and constraint rows per world. A full buffer is reported as
        ``overflow`` by :meth:`step_one`.
    moments:
        Worlds also carry the muscles' moment nonzeros (``muscle_moments``): MuJoCo Warp keeps
        ``actuator_moment`` in MuJoCo C's compressed rows, copied out and gathered by the pattern
        (checked against MuJoCo C's when the buffers are allocated).
    graph_mode:
        Warp's CUDA graph mode for the FFI call, a name of
        ``warp.JaxCallableGraphMode`` (on the CPU no graph is used). Default:
        the environment variable ``MSKBENCH_WARP_GRAPH_MODE``, else
        ``"WARP_STAGED"``: Warp captures the step once against stable staging
        buffers and replays it, whatever buffers JAX hands in.
    """

    impl = "warp"

    def __init__(self, model: mujoco.MjModel, muscle_ids, frame_skip: int, *,
                 naconmax_per_world: int = NACONMAX_PER_WORLD, njmax: int | None = NJMAX,
                 graph_mode: str | None = None, moments: bool = False):
        import jax

        wp, mjw = warp_imports()
        self._wp, self._mjw = wp, mjw
        self.model = model
        self.frame_skip = int(frame_skip)
        self.naconmax_per_world = int(naconmax_per_world)
        self.njmax = njmax
        self._mus = np.asarray(muscle_ids)
        self._n_state = int(mujoco.mj_stateSize(model, STATE_SIG))
        self._overflow_bits = _buffer_overflows(mjw)
        self._models: dict = {}   # device -> mujoco_warp.Model
        self._worlds: dict = {}   # (device, nworld, gains) -> (Model, Data)

        d = mujoco.MjData(model)
        self._shapes = {k: np.shape(getattr(d, k)) for k in VIEW_FIELDS}
        self._shapes["qacc"] = (model.nv,)
        #: Where the muscles' moment nonzeros are (``moments=True``), else None.
        self.moment_pattern = MomentPattern.of_model(model, muscle_ids) if moments else None
        if self.moment_pattern is not None:
            self._shapes["actuator_moment"] = (int(model.nJmom),)
        # Every output of a call, in the FFI function's order: Warp dtype and per-world Warp shape
        # (a vector-valued field has the vector as its dtype: one array axis fewer than MuJoCo's).
        vector = _output_types(wp)
        self._outputs = {"state": (float, (self._n_state,)), "overflow": (int, ())}
        self._outputs.update({k: (vector[k], s[:1]) if k in vector else (float, s) for k, s in self._shapes.items()})
        # A world at reset (as mj_resetData leaves it), and where qpos and qvel sit in its state vector.
        self._state0 = np.empty(self._n_state)
        mujoco.mj_getState(model, d, self._state0, STATE_SIG)
        self._state0 = self._state0.astype(np.float32)
        self._qpos_at = int(mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_TIME))
        self._qvel_at = int(mujoco.mj_stateSize(model, mujoco.mjtState.mjSTATE_TIME | mujoco.mjtState.mjSTATE_QPOS))

        modes = [m.name for m in wp.JaxCallableGraphMode]
        graph_mode = graph_mode or os.environ.get("MSKBENCH_WARP_GRAPH_MODE") or "WARP_STAGED"
        if graph_mode not in modes:
            raise ValueError(f"graph_mode must be one of {', '.join(modes)}, got {graph_mode!r}")
        self.graph_mode = graph_mode if jax.default_backend() == "gpu" else "NONE"
        mode = wp.JaxCallableGraphMode[self.graph_mode]
        jax_callable = wp.jax_callable
        # has_side_effect: JAX then waits for these calls at exit. A Python callback that starts while
        # the interpreter finalises never gets the GIL, and a script that left a step unawaited hung.
        self._calls = {(kind, g): jax_callable(self._make_fn(kind, g), num_outputs=len(self._outputs),
                                               graph_mode=mode, vmap_method="broadcast_all", has_side_effect=True)
                       for kind in ("forward", "step") for g in (False, True)}
        with wp.ScopedDevice("cpu"):  # one world's buffers, to size a batch (no kernels run)
            d1 = warp_data(model, 1, naconmax_per_world=self.naconmax_per_world, njmax=njmax)
        per_world = sum(a.capacity for a in vars(d1).values() if isinstance(a, wp.array))
        self.bytes_per_world = int(per_world + 4 * (self._n_state + sum(int(np.prod(s)) for s in self._shapes.values())))

    def free_bytes(self):
        """Free memory of the CUDA device MuJoCo Warp allocates on (outside JAX's pool), or None on the CPU."""
        import jax

        device = self._wp.device_from_jax(jax.devices()[0])
        return int(device.free_memory) if device.is_cuda else None

    def prepare(self, nworld: int, gains: bool = False, device=None) -> None:
        """Allocate MuJoCo Warp's buffers for batches of ``nworld`` worlds on the JAX ``device`` (default:
        JAX's default device).

        Call it before a compiled step or init sees that batch size: on a GPU
        the first call runs inside a CUDA graph capture, where uploading a
        model is not allowed.
        """
        import jax

        self._world_pair(self._wp.device_from_jax(device or jax.devices()[0]), int(nworld), bool(gains))

    # -- warp side ---------------------------------------------------------------------------
    def _world_pair(self, device, nworld: int, gains: bool):
        """(Model, Data, gain arrays) for ``nworld`` worlds on ``device`` (built once, then reused)."""
        key = (str(device), nworld, gains)
        with _LOCK:
            if key not in self._worlds:
                self._worlds[key] = self._new_world_pair(device, nworld, gains)
                self._warm_up(device, nworld, gains)
            return self._worlds[key]

    def _new_world_pair(self, device, nworld: int, gains: bool):
        wp = self._wp
        if getattr(device, "is_capturing", False):
            raise RuntimeError(f"MuJoCo Warp buffers for {nworld} worlds were not allocated before the "
                               f"compiled call; call physics.prepare({nworld}, gains={gains}) first")
        with wp.ScopedDevice(device):
            if str(device) not in self._models:
                self._models[str(device)] = warp_model(self.model)
            m, extra = self._models[str(device)], None
            if gains:  # per-world gain parameters: a world axis on the two fields
                m = copy.copy(m)
                for name in ("actuator_gainprm", "actuator_biasprm"):
                    field = getattr(m, name)
                    setattr(m, name, wp.array(np.repeat(field.numpy()[:1], nworld, axis=0), dtype=field.dtype))
                extra = (wp.array(self._mus.astype(np.int32), dtype=int),
                         wp.array(self.model.actuator_gainprm[self._mus, 2].astype(np.float32), dtype=float),
                         wp.array(self.model.actuator_biasprm[self._mus, 2].astype(np.float32), dtype=float))
            d = warp_data(self.model, nworld, naconmax_per_world=self.naconmax_per_world, njmax=self.njmax)
        return m, d, extra

    def _warm_up(self, device, nworld: int, gains: bool) -> None:
        """One forward and one step on scratch buffers, so every kernel is loaded on ``device``
        before a CUDA graph capture (which cannot load modules) records a call."""
        wp = self._wp
        with wp.ScopedDevice(device):
            out = {k: wp.zeros((nworld, *shape), dtype=dtype) for k, (dtype, shape) in self._outputs.items()}
            state = wp.array(np.tile(self._state0, (nworld, 1)), dtype=float)
            ctrl = wp.zeros((nworld, self.model.nu), dtype=float)
            gain = wp.ones((nworld, max(int(self._mus.size), 1)), dtype=float)
            for kind in ("forward", "step"):
                self._run(kind, gains, state, ctrl, gain, out)
            wp.synchronize_device(device)
            if self.moment_pattern is not None:
                d = self._worlds[(str(device), nworld, gains)][1]
                if not self.moment_pattern.same_pattern(d.moment_rownnz.numpy()[0], d.moment_colind.numpy()[0]):
                    raise RuntimeError("MuJoCo Warp's actuator_moment pattern differs from MuJoCo C's; "
                                       "the muscle-moment features cannot be read on impl='warp'")

    def _make_fn(self, kind: str, gains: bool):
        """The Python function behind one FFI call. Warp reads its arguments' names and types off its
        signature, which is built here from the inputs and :attr:`_outputs` (so the order of the
        FFI call's outputs is the order of ``_outputs``, whatever fields it holds)."""
        wp = self._wp
        run = self._run
        f2 = wp.array2d(dtype=float)
        inputs = {"state_in": f2, "ctrl_in": f2, "gain": f2}
        outputs = {k: (wp.array(dtype=dtype) if not shape else wp.array2d(dtype=dtype))
                   for k, (dtype, shape) in self._outputs.items()}

        def fn(*arrays):
            state_in, ctrl, gain = arrays[:len(inputs)]
            run(kind, gains, state_in, ctrl, gain, dict(zip(outputs, arrays[len(inputs):])))

        params = [inspect.Parameter(k, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=t)
                  for k, t in {**inputs, **outputs}.items()]
        fn.__signature__ = inspect.Signature(params, return_annotation=None)  # type: ignore[attr-defined]
        fn.__annotations__ = {**inputs, **outputs, "return": None}
        fn.__name__ = fn.__qualname__ = f"mskbench_warp_{kind}{'_gains' if gains else ''}"
        return fn

    def _run(self, kind, gains, state_in, ctrl, gain, out):
        """Load the worlds' states and controls, ``forward`` or ``step`` them, fill ``out``.

        Only kernel launches and device copies: this runs inside a CUDA graph capture on a GPU.
        """
        wp, mjw = self._wp, self._mjw
        m, d, extra = self._world_pair(state_in.device, state_in.shape[0], gains)
        set_gains, overflowed = _warp_kernels()
        with _LOCK, wp.ScopedDevice(state_in.device):
            if gains:
                wp.launch(set_gains, dim=(d.nworld, int(self._mus.size)), inputs=[*extra, gain],
                          outputs=[m.actuator_gainprm, m.actuator_biasprm])
            mjw.set_state(m, d, state_in, STATE_SIG)
            wp.copy(d.ctrl, ctrl)
            d.overflow.zero_()
            if kind == "forward":
                mjw.forward(m, d)
            else:
                for _ in range(self.frame_skip):
                    mjw.step(m, d)
            mjw.get_state(m, d, out["state"], STATE_SIG)
            wp.launch(overflowed, dim=d.nworld, inputs=[d.overflow, self._overflow_bits], outputs=[out["overflow"]])
            for name in self._shapes:
                if out[name].size:
                    wp.copy(out[name], getattr(d, name))

    # -- interface ---------------------------------------------------------------------------
    prepare_initial = staticmethod(float32_initial)

    def _call(self, kind, args, gain_scale):
        import jax.numpy as jnp

        gains = gain_scale is not None
        g = jnp.asarray(gain_scale if gains else jnp.ones((1,)), jnp.float32)[None]
        dims = {k: (1, *shape) for k, (_, shape) in self._outputs.items()}
        outs = self._calls[kind, gains](*[jnp.asarray(a, jnp.float32)[None] for a in args], g, output_dims=dims)
        new = {k: v[0] for k, v in zip(self._outputs, outs)}
        new["xmat"] = new["xmat"].reshape(self._shapes["xmat"])
        if self.moment_pattern is not None:
            new[MOMENT_FIELD] = self.moment_pattern.of_compressed(new.pop("actuator_moment"))
        return new

    def init_one(self, prepared, gain_scale=None):
        import jax.numpy as jnp

        nq, nv = self.model.nq, self.model.nv
        state = (jnp.asarray(self._state0)
                 .at[self._qpos_at: self._qpos_at + nq].set(jnp.asarray(prepared["qpos"], jnp.float32))
                 .at[self._qvel_at: self._qvel_at + nv].set(jnp.asarray(prepared["qvel"], jnp.float32)))
        new = self._call("forward", (state, jnp.zeros(self.model.nu, jnp.float32)), gain_scale)
        del new["overflow"]
        return new

    def step_one(self, d, ctrl, gain_scale=None):
        new = self._call("step", (d["state"], ctrl), gain_scale)
        health = {"unstable": unstable(new["qpos"], new["qvel"], new["qacc"], new["act"]),
                  "overflow": new.pop("overflow") != 0}
        return new, health

    def fields(self, d):
        return FieldView(d)

    where = staticmethod(tree_where)


def _output_types(wp) -> dict:
    """Warp dtypes of the vector-valued fields (one array axis fewer than MuJoCo's arrays)."""
    return {"xpos": wp.vec3, "xipos": wp.vec3, "subtree_com": wp.vec3, "xmat": wp.mat33, "xquat": wp.quat,
            "cvel": wp.spatial_vector}


_KERNELS = None


def _warp_kernels():
    """Two small kernels of our own: per-world muscle gains, and the buffer-overflow bits."""
    global _KERNELS
    if _KERNELS is None:
        import warp as wp

        @wp.kernel
        def set_gains(mus: wp.array(dtype=int), gain0: wp.array(dtype=float), bias0: wp.array(dtype=float),
                      scale: wp.array2d(dtype=float), gainprm: wp.array2d(dtype=Any), biasprm: wp.array2d(dtype=Any)):
            # Warp's stub gives tid() a union of its 1-4-D forms; the unpacking picks the 2-D one here.
            w, j = wp.tid()  # type: ignore[misc]
            a = mus[j]
            g = gainprm[w, a]
            g[2] = gain0[j] * scale[w, j]
            gainprm[w, a] = g
            p = biasprm[w, a]
            p[2] = bias0[j] * scale[w, j]
            biasprm[w, a] = p

        @wp.kernel
        def overflowed(bits: wp.array(dtype=int), mask: int, out: wp.array(dtype=int)):
            w = wp.tid()
            out[w] = bits[w] & mask

        _KERNELS = (set_gains, overflowed)
    return _KERNELS

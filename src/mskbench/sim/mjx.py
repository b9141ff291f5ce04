"""MJX physics (pure JAX) behind the batched-physics interface.

See :mod:`mskbench.sim.batched` for the interface. Requires ``mujoco-mjx``
(``pip install 'mskbench[gpu]'``).
"""

from __future__ import annotations

import mujoco
import numpy as np

from mskbench.sim.muscles import MOMENT_FIELD, MomentPattern
from mskbench.sim.parity import warn_if_skewed
from mskbench.sim.worlds import float32_initial, unstable


def mjx_imports():
    try:
        import jax
        import jax.numpy as jnp
        from mujoco import mjx
    except ImportError as exc:
        raise RuntimeError(f"the JAX backends need JAX and MJX ({exc}); pip install 'mskbench[gpu]'") from None
    return jax, jnp, mjx


def field(d, name: str):
    """A ``Data`` field, wherever this MJX version keeps it (3.17 moved some,
    e.g. ``actuator_length``, behind ``_impl``; reading them from ``Data`` warns)."""
    impl = getattr(d, "_impl", None)
    if impl is not None and hasattr(impl, name):
        return getattr(impl, name)
    return getattr(d, name)


class MjxFields:
    """``StateView``'s view of one MJX world (``muscle_moments`` gathered from MJX's dense
    ``actuator_moment`` when a moment pattern is given)."""

    __slots__ = ("_d", "_pattern")

    def __init__(self, d, pattern: MomentPattern | None = None):
        self._d = d
        self._pattern = pattern

    def __getattr__(self, name):
        if name == MOMENT_FIELD and self._pattern is not None:
            return self._pattern.of_dense(field(self._d, "actuator_moment"))
        return field(self._d, name)


class MjxPhysics:
    """Worlds of one model on MJX in pure JAX (``impl="jax"``).

    MuJoCo Warp has its own backend (:mod:`mskbench.sim.mjwarp`): MJX 3.17's
    copy of it follows MuJoCo 3.x's tendon-wrapping rule, as this pure-JAX
    MJX does (:mod:`mskbench.sim.parity`).
    """

    impl = "jax"

    def __init__(self, model: mujoco.MjModel, muscle_ids, frame_skip: int, *, moments: bool = False):
        jax, jnp, mjx = mjx_imports()
        warn_if_skewed(model)
        self.model = model
        self.frame_skip = int(frame_skip)
        try:
            self.mx = mjx.put_model(model, impl="jax")
        except NotImplementedError as exc:  # e.g. the body's ellipsoids against a task's boxes
            raise ValueError(f"MJX's pure-JAX backend (impl='jax') cannot simulate this scene: {exc} "
                             "Use impl='warp' (MuJoCo Warp) or the CPU backend.") from exc
        self.data0 = mjx.make_data(self.mx, impl="jax")
        muscle_ids = np.asarray(muscle_ids)
        self._mus = jnp.asarray(muscle_ids)
        self._gain0 = jnp.asarray(model.actuator_gainprm[muscle_ids, 2], jnp.float32)
        self._bias0 = jnp.asarray(model.actuator_biasprm[muscle_ids, 2], jnp.float32)
        self.bytes_per_world = int(sum(np.asarray(x).nbytes for x in jax.tree_util.tree_leaves(self.data0)))
        #: Where the muscles' moment nonzeros are (``moments=True``; MJX keeps the matrix dense), else None.
        self.moment_pattern = MomentPattern.of_model(model, muscle_ids) if moments else None

    # -- interface -------------------------------------------------------------------------
    prepare_initial = staticmethod(float32_initial)

    def init_one(self, prepared, gain_scale=None):
        _, _, mjx = mjx_imports()
        d = self.data0
        d = d.replace(qpos=prepared["qpos"].astype(d.qpos.dtype), qvel=prepared["qvel"].astype(d.qvel.dtype))
        return mjx.forward(self.mx if gain_scale is None else self.model_with_gain(gain_scale), d)

    def model_with_gain(self, gain_scale):
        """The model with the muscles' F0 scaled (one world; batched under ``vmap``)."""
        m = self.mx
        return m.replace(
            actuator_gainprm=m.actuator_gainprm.at[self._mus, 2].set(self._gain0 * gain_scale),
            actuator_biasprm=m.actuator_biasprm.at[self._mus, 2].set(self._bias0 * gain_scale))

    def step_one(self, d, ctrl, gain_scale=None):
        jax, _, mjx = mjx_imports()
        m = self.mx if gain_scale is None else self.model_with_gain(gain_scale)
        d = d.replace(ctrl=ctrl.astype(d.ctrl.dtype))
        d = jax.lax.fori_loop(0, self.frame_skip, lambda _, x: mjx.step(m, x), d)
        # A pure-JAX MJX world has a fixed contact set: nothing can overflow.
        return d, {"unstable": self.unstable(d), "overflow": jax.numpy.zeros((), bool)}

    def prepare(self, nworld: int, gains: bool = False, device=None) -> None:
        """Nothing to allocate ahead for this backend."""

    def fields(self, d):
        return MjxFields(d, self.moment_pattern)

    @staticmethod
    def where(cond, a, b):
        """World ``a`` where ``cond`` else ``b`` (one world, or per world under ``vmap``)."""
        return b.where(cond, a)

    # -- health ----------------------------------------------------------------------------
    @staticmethod
    def unstable(d):
        """MuJoCo C's reset conditions (:func:`mskbench.sim.batched.unstable`)."""
        return unstable(d.qpos, d.qvel, d.qacc, d.act)

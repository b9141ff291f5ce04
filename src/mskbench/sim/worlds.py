"""What every batched physics backend shares (:mod:`mskbench.sim.batched` describes the interface):
the fields a world exposes to the state view, MuJoCo C's instability test, world selection.

Backends import this module; :mod:`mskbench.sim.batched` imports the backends.
"""

from __future__ import annotations

import mujoco
import numpy as np

#: MuJoCo's bound on state magnitudes (``mjMAXVAL``); beyond it MuJoCo C resets the data.
MAXVAL = float(getattr(mujoco, "mjMAXVAL", 1e10))
#: Fields :class:`~mskbench.sim.state.StateView` and the environments read from a world.
VIEW_FIELDS = ("qpos", "qvel", "act", "ctrl", "xpos", "xmat", "xquat", "xipos", "cvel", "subtree_com",
               "actuator_length", "actuator_velocity", "actuator_force", "qfrc_actuator", "sensordata")
#: MuJoCo Warp's default buffers: contacts per world (pooled across a batch) and constraint rows per world.
NACONMAX_PER_WORLD = 64
NJMAX = 1024


def unstable(qpos, qvel, qacc, act):
    """MuJoCo C's reset conditions for one world: a non-finite or > ``MAXVAL`` entry (``jax.numpy``)."""
    import jax.numpy as jnp

    bad = jnp.zeros((), bool)
    for x in (qpos, qvel, qacc, act):
        if x.size:
            bad = bad | ~jnp.all(jnp.isfinite(x)) | jnp.any(jnp.abs(x) > MAXVAL)
    return bad


def float32_initial(qpos, qvel) -> dict:
    """Initial configurations as float32 arrays (what the MJX and MuJoCo Warp backends start from)."""
    return {"qpos": np.asarray(qpos, np.float32), "qvel": np.asarray(qvel, np.float32)}


def tree_where(cond, a, b):
    """World ``a`` where ``cond`` else ``b``, leaf by leaf (worlds held as plain arrays)."""
    import jax
    import jax.numpy as jnp

    return jax.tree_util.tree_map(lambda x, y: jnp.where(cond, x, y), a, b)


class FieldView:
    """Attribute access to a mapping of fields (what ``StateView`` reads)."""

    __slots__ = ("_fields",)

    def __init__(self, fields):
        self._fields = fields

    def __getattr__(self, name):
        try:
            return self._fields[name]
        except KeyError:
            raise AttributeError(name) from None

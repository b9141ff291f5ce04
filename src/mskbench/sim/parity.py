"""Does a batched backend compute the CPU environment's muscle geometry?

MuJoCo 4.0 changed how a spatial tendon wraps around a sphere or cylinder
that has a *side site*: the path now goes the way the polyline through the
side site winds around the geom (and takes the straight line when that
line winds the same way), where MuJoCo 3.x picked the tangent pair closer to
the side site. ``mujoco-warp`` 4.0 follows the new rule. ``mujoco-mjx``
3.17, the newest on PyPI, follows the old one in both its pure-JAX and its
Warp implementations.

Measured on MyoFullBody against MuJoCo 4.0 C (the default pose and 64 poses
with every limited hinge drawn uniformly in its range; muscle-tendon
lengths, float32 states):

* MJX 3.17 (``impl="jax"``, and MJX's own Warp copy): the 15 muscles in
  :data:`KNOWN_MJX_SKEW` differ at some pose (rectus femoris by up to
  0.17 m, long biceps 0.07 m, supinator 0.03 m); six of them already at the
  default pose (``TMAJ``, ``LAT2``, ``recfem`` on both sides). The other 401
  agree within 3.3e-7 m.
* ``mujoco-warp`` 4.0 (``impl="warp"``): all 416 within 3.3e-7 m.

So ``impl="jax"`` simulates a slightly different body from the CPU
environment and ``impl="warp"``; :func:`warn_if_skewed` says so once per
process, and :func:`actuator_length_skew` measures it for any model.
"""

from __future__ import annotations

import warnings

import mujoco
import numpy as np

#: MyoFullBody muscles whose length MJX 3.17 computes differently from MuJoCo 4.0 at some pose.
KNOWN_MJX_SKEW = ("recfem_r", "recfem_l", "BIClong", "BIClong_left", "SUP", "SUP_left", "TMAJ", "TMAJ_left",
                  "LAT1", "LAT1_left", "LAT2", "LAT2_left", "LAT3", "SUBSC", "DELT1_left")

_warned = False


def actuator_length_skew(model: mujoco.MjModel, qpos, lengths, *, tol: float = 1e-4) -> dict[str, float]:
    """Actuators whose ``lengths`` differ from MuJoCo C's at ``qpos`` by more than ``tol``.

    ``qpos`` (worlds, nq) and ``lengths`` (worlds, nu): configurations and
    the actuator lengths a backend computed for them. Returns actuator name
    -> largest absolute difference over the worlds (metres, for tendons).
    """
    qpos = np.atleast_2d(np.asarray(qpos, np.float64))
    lengths = np.atleast_2d(np.asarray(lengths, np.float64))
    if lengths.shape != (qpos.shape[0], model.nu):
        raise ValueError(f"lengths must be (worlds, nu) = ({qpos.shape[0]}, {model.nu}), got {lengths.shape}")
    d = mujoco.MjData(model)
    worst = np.zeros(model.nu)
    for q, length in zip(qpos, lengths):
        d.qpos[:] = q
        mujoco.mj_kinematics(model, d)
        mujoco.mj_comPos(model, d)
        mujoco.mj_tendon(model, d)
        mujoco.mj_transmission(model, d)
        worst = np.maximum(worst, np.abs(length - d.actuator_length))
    return {model.actuator(int(i)).name: float(worst[i]) for i in np.flatnonzero(worst > tol)}


def side_site_wraps(model: mujoco.MjModel) -> int:
    """How many tendons wrap around a sphere or cylinder with a side site (those the rule change can touch)."""
    geom = np.isin(model.wrap_type, (mujoco.mjtWrap.mjWRAP_SPHERE, mujoco.mjtWrap.mjWRAP_CYLINDER))
    sided = geom & (model.wrap_prm >= 0)
    tendons = {t for t in range(model.ntendon)
               if sided[model.tendon_adr[t]: model.tendon_adr[t] + model.tendon_num[t]].any()}
    return len(tendons)


def mjx_uses_old_wrapping() -> bool:
    """Whether the installed MJX predates MuJoCo 4.0's wrapping rule while MuJoCo C follows it."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        mjx_major = int(version("mujoco-mjx").split(".")[0])
    except (PackageNotFoundError, ValueError):
        return False
    return int(mujoco.__version__.split(".")[0]) >= 4 and mjx_major < 4


def warn_if_skewed(model: mujoco.MjModel) -> None:
    """Warn (once per process) when MJX will wrap some of ``model``'s tendons differently from MuJoCo C."""
    global _warned
    if _warned or not mjx_uses_old_wrapping():
        return
    n = side_site_wraps(model)
    if n:
        _warned = True
        warnings.warn(
            f"MJX follows MuJoCo 3.x's rule for tendons wrapping with a side site, MuJoCo {mujoco.__version__} "
            f"(the CPU environment) the new one; {n} tendons of this model wrap with a side site (on "
            f"MyoFullBody, 15 muscles then differ at some poses, by up to 0.17 m). impl='warp' (mujoco-warp) follows MuJoCo 4.0; "
            "see mskbench.sim.parity.", RuntimeWarning, stacklevel=3)

"""Per-episode start noise, written once with the array namespace for the host and the device.

The original code draws most of its starts as a fixed pose plus Gaussian noise: ``N(0, σ²)`` added
to the joint angles (``qpos[7:]``), sometimes to the root position and quaternion, and to every
velocity (e.g. ``msk_bench/envs/msk/benchmark/msk_bench_v0.py@a68b6ce::MSKBenchJumpEnvV0.reset``).
:class:`StartNoise` says which of those a task adds and how large; :func:`add_start_noise` adds it
to a start's ``qpos``/``qvel``, drawing from a :class:`~mskbench.tasks.base.Random` (NumPy's generator
in the CPU environment, a JAX key per world in the batched one), so the host and the device draw
the same distribution with the same code.

On MyoFullBody, whose 51 joint-equality couplings tie dependent joints (spine levels, shoulder
rhythm, knee kinematics) to drivers, the noise goes on the *independent* joints only; each is
clipped to its range if it is limited, and the dependent joints are then resolved from their
drivers (:meth:`~mskbench.body.base.JointCouplings.resolve`). Velocity noise likewise goes on the
free root's six velocities and the independent joints' velocities; a dependent joint's velocity is
set by the chain rule from its driver's (so the start satisfies the couplings at the velocity level
too). The root height is never noised: our starts are placed on their support once (the original
drops its body from a fixed root height instead), and what the noise does to that contact is
measured per task in docs/tasks.md. The original's settling steps (passive physics steps after its
reset) are not run: the first control step of the episode integrates the same dynamics.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from mskbench.body.base import BodyHandles, put


@dataclass(frozen=True)
class StartNoise:
    """Standard deviations of a task's start noise (0: none). Each is ``N(0, σ²)`` per coordinate.

    ``joint_rad`` on every independent joint of the body (rad; m on the knees' slide joints, none of
    them independent on MyoFullBody), ``root_xy_m`` on the root's world ``x, y``, ``root_quat`` on
    each of the four root-quaternion components (then normalised, as MuJoCo does), ``root_vel`` on
    the free root's six velocities (linear m/s, angular rad/s) and ``joint_vel`` on the independent
    joints' velocities (rad/s).
    """

    joint_rad: float = 0.0
    root_xy_m: float = 0.0
    root_quat: float = 0.0
    root_vel: float = 0.0
    joint_vel: float = 0.0

    def __post_init__(self):
        for name in ("joint_rad", "root_xy_m", "root_quat", "root_vel", "joint_vel"):
            value = getattr(self, name)
            if not (np.isfinite(value) and value >= 0):
                raise ValueError(f"StartNoise.{name} must be a finite standard deviation >= 0, got {value}")

    @classmethod
    def uniform(cls, sigma: float, *, root_xy: bool = False, root_quat: bool = False,
                velocities: bool = True) -> "StartNoise":
        """One ``σ`` on the joints, and on the root position / quaternion / every velocity where asked."""
        return cls(joint_rad=sigma, root_xy_m=sigma if root_xy else 0.0, root_quat=sigma if root_quat else 0.0,
                   root_vel=sigma if velocities else 0.0, joint_vel=sigma if velocities else 0.0)


@dataclass(frozen=True)
class StartTables:
    """Where start noise goes in a compiled model (computed once when a task is bound).

    ``joints`` are the qpos addresses of the body's independent hinge and slide joints (not
    dependents of a coupling), ``low``/``high`` their ranges (±inf where unlimited), ``dofs`` their
    velocity addresses.
    """

    joints: np.ndarray
    low: np.ndarray
    high: np.ndarray
    dofs: np.ndarray
    free_root: bool
    handles: BodyHandles

    @classmethod
    def from_model(cls, model: mujoco.MjModel, handles: BodyHandles) -> "StartTables":
        dependents = set(handles.couplings.dep.tolist())
        joints, low, high = [], [], []
        for adr in np.asarray(handles.joint_qpos).tolist():
            j = int(np.flatnonzero(model.jnt_qposadr == adr)[0])
            if int(model.jnt_type[j]) not in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)):
                continue
            if adr in dependents:
                continue
            limited = bool(model.jnt_limited[j])
            joints.append(adr)
            low.append(model.jnt_range[j, 0] if limited else -np.inf)
            high.append(model.jnt_range[j, 1] if limited else np.inf)
        joints_arr = np.asarray(joints, dtype=np.int64)
        return cls(joints=joints_arr, low=np.asarray(low, float), high=np.asarray(high, float),
                   dofs=handles.qvel_of_qpos[joints_arr].astype(np.int64), free_root=handles.free_root,
                   handles=handles)


def add_start_noise(tables: StartTables, noise: StartNoise, qpos, qvel, rng, xp):
    """``(qpos, qvel)`` with ``noise`` added (new arrays; ``rng`` a :class:`~mskbench.tasks.base.Random`).

    The draws are always made, in this order, whatever the standard deviations (a zero one draws
    zeros), so a task's stream does not depend on its options: joints (one per independent joint),
    root ``x, y`` (2), root quaternion (4), root velocities (6), joint velocities (one per
    independent joint). Noisy joints are clipped to their ranges; dependent joints and their
    velocities are then resolved from their drivers.
    """
    n = len(tables.joints)
    dq = rng.normal(0.0, noise.joint_rad, (n,))
    dxy = rng.normal(0.0, noise.root_xy_m, (2,))
    dquat = rng.normal(0.0, noise.root_quat, (4,))
    dv_root = rng.normal(0.0, noise.root_vel, (6,))
    dv = rng.normal(0.0, noise.joint_vel, (n,))

    joints = xp.clip(qpos[tables.joints] + dq, tables.low, tables.high)
    qpos = put(xp, qpos, tables.joints, joints)
    qvel = put(xp, qvel, tables.dofs, qvel[tables.dofs] + dv)
    if tables.free_root:
        qpos = put(xp, qpos, slice(0, 2), qpos[0:2] + dxy)
        quat = qpos[3:7] + dquat
        qpos = put(xp, qpos, slice(3, 7), quat / xp.sqrt(xp.sum(quat**2)))
        qvel = put(xp, qvel, slice(0, 6), qvel[0:6] + dv_root)
    h = tables.handles
    return h.couplings.resolve(qpos, xp, qvel, h.qvel_of_qpos)


def yaw_root(qpos, yaw_rad, xp):
    """``qpos`` with the root turned by ``yaw_rad`` about the world vertical through its origin
    (the heights of the body's points do not change); a new array."""
    half = 0.5 * yaw_rad
    w1, z1 = xp.cos(half), xp.sin(half)
    w2, x2, y2, z2 = qpos[3], qpos[4], qpos[5], qpos[6]
    # (w1, 0, 0, z1) ⊗ (w2, x2, y2, z2)
    quat = xp.stack([w1 * w2 - z1 * z2, w1 * x2 - z1 * y2, w1 * y2 + z1 * x2, w1 * z2 + z1 * w2])
    return put(xp, qpos, slice(3, 7), quat)


def place_noisy(ctx, tables: StartTables, noise: StartNoise, qpos, qvel, rng, ground_geom: str = "floor"):
    """Host starts: ``(qpos, qvel)`` with ``noise`` added (:func:`add_start_noise` with NumPy; ``rng`` a
    :class:`~mskbench.tasks.base.HostRandom`), then the root lowered onto ``ground_geom`` where it
    stands (``ctx`` an :class:`~mskbench.tasks.base.InitContext`)."""
    qpos, qvel = add_start_noise(tables, noise, qpos, qvel, rng, np)
    return ctx.pose(base=qpos, root_xy=(float(qpos[0]), float(qpos[1])), ground_geom=ground_geom), qvel

"""A simulator-independent view of the quantities the paper's task tables use.

:class:`StateView` wraps anything with MuJoCo's ``Data`` field names
(``mujoco.MjData`` on the CPU, ``mjx.Data`` on the GPU) and derives every
quantity with an array namespace ``xp`` (``numpy`` or ``jax.numpy``), so the
same task code runs on both backends. Each derived quantity is computed on
first use and cached for the lifetime of the view (one control step).

Frames and units: world frame, ``x`` forward, ``y`` left, ``z`` up; metres,
seconds, radians. Symbols follow App. A-A of the MSK-Bench paper.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mskbench.body.base import BodyHandles


class cached_property:  # noqa: N801 - a lock-free functools.cached_property (a view lives one step, one thread)
    """Computed on first access, then an ordinary attribute of the view (``functools.cached_property``
    takes a lock on every first access in Python 3.11; a state view is read by one thread only)."""

    def __init__(self, fn):
        self.fn, self.name, self.__doc__ = fn, fn.__name__, fn.__doc__

    def __get__(self, view, owner=None):
        if view is None:
            return self
        value = view.__dict__[self.name] = self.fn(view)
        return value


def _normalize(xp, v, eps: float = 1e-9):
    return v / (xp.linalg.norm(v, axis=-1, keepdims=True) + eps)


def cross(xp, a, b):
    """Cross product over the last axis (explicit: ``np.cross`` is slow for small arrays)."""
    a0, a1, a2 = a[..., 0], a[..., 1], a[..., 2]
    b0, b1, b2 = b[..., 0], b[..., 1], b[..., 2]
    return xp.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)


def quat_tilt(xp, quat):
    """Angle (rad) between a body's z axis and world z, from its quaternion (w, x, y, z).

    ``θ = arccos(clip(1 − 2(x² + y²), −1, 1))`` (paper Eq. 18).
    """
    return xp.arccos(xp.clip(1.0 - 2.0 * (quat[..., 1] ** 2 + quat[..., 2] ** 2), -1.0, 1.0))


class StateView:
    """Derived kinematic, dynamic and muscle quantities of one physics state, for any body.

    Parameters
    ----------
    data:
        Object with ``qpos, qvel, xpos, xmat, xquat, xipos, cvel, subtree_com,
        act, ctrl, actuator_length, actuator_velocity, actuator_force,
        qfrc_actuator, sensordata`` (:data:`mskbench.sim.batched.VIEW_FIELDS`).
    handles:
        Indices resolved from the compiled model of a body
        (:class:`~mskbench.body.base.BodyHandles`). Parts are addressed by the
        body's roles; the humanoid's conveniences (feet, torso, heading) need a
        body that has those parts.
    xp:
        Array namespace (``numpy`` or ``jax.numpy``).
    """

    def __init__(self, data: Any, handles: BodyHandles, xp=np):
        self.data = data
        self.h = handles
        self.xp = xp

    # -- raw ------------------------------------------------------------------
    @property
    def q(self):
        """Generalised positions (nq,)."""
        return self.data.qpos

    @property
    def qdot(self):
        """Generalised velocities (nv,)."""
        return self.data.qvel

    @cached_property
    def q_joints(self):
        """The body's joint positions other than a free root, in model order (MyoFullBody: 122)."""
        return self.data.qpos[self.h.joint_qpos]

    @cached_property
    def qdot_joints(self):
        """The body's joint velocities other than a free root (MyoFullBody: 122)."""
        return self.data.qvel[self.h.joint_dof]

    def joint(self, role: str):
        """Position of a named joint role (see ``JOINT_NAMES``), rad."""
        return self.data.qpos[self.h.joints_qpos[role]]

    @cached_property
    def root_quat(self):
        """Root orientation quaternion (w, x, y, z)."""
        return self.data.qpos[3:7]

    @cached_property
    def tilt(self):
        """Root tilt from vertical (rad), Eq. 18."""
        return quat_tilt(self.xp, self.root_quat)

    # -- bodies -----------------------------------------------------------------
    def _body(self, role: str) -> int:
        try:
            return self.h.bodies[role]
        except KeyError:
            raise KeyError(f"{self.h.body} has no part {role!r}; its parts: {', '.join(self.h.bodies)}") from None

    def pos(self, role: str):
        """World position of a named body's origin (3,), m."""
        return self.data.xpos[self._body(role)]

    def rot(self, role: str):
        """World rotation matrix of a named body (3, 3)."""
        return self.xp.reshape(self.data.xmat[self._body(role)], (3, 3))

    def quat(self, role: str):
        """World orientation quaternion of a named body (4,)."""
        return self.data.xquat[self._body(role)]

    def vel(self, role: str):
        """World linear velocity of a named body's origin (3,), m/s."""
        return self.body_vel(self._body(role), self.h.bodies["root"])

    # -- any body by model id (task props: ids resolved once in ``Task.bind``) ----------
    def body_pos(self, body_id: int):
        """World position of body ``body_id``'s origin (3,), m."""
        return self.data.xpos[body_id]

    def body_rot(self, body_id: int):
        """World rotation matrix of body ``body_id`` (3, 3)."""
        return self.xp.reshape(self.data.xmat[body_id], (3, 3))

    def body_quat(self, body_id: int):
        """World orientation quaternion (w, x, y, z) of body ``body_id``."""
        return self.data.xquat[body_id]

    def body_vel(self, body_id: int, root_id: int):
        """World linear velocity of body ``body_id``'s origin (3,), m/s.

        ``root_id`` is the root of the body's kinematic tree
        (``model.body_rootid[body_id]``): MuJoCo gives ``cvel`` about that
        tree's centre of mass.
        """
        cvel = self.data.cvel[body_id]
        ref = self.data.subtree_com[root_id]
        return cvel[3:] + cross(self.xp, cvel[:3], self.data.xpos[body_id] - ref)

    @cached_property
    def pelvis_pos(self):
        return self.pos("pelvis")

    @cached_property
    def head_pos(self):
        return self.pos("head")

    @cached_property
    def com_pos(self):
        """Whole-body centre of mass (3,), m."""
        return self.data.subtree_com[self.h.bodies["root"]]

    @cached_property
    def com_vel(self):
        """Whole-body centre-of-mass velocity ``v_CoM`` (3,), m/s.

        Mass-weighted mean of the bodies' CoM velocities, from ``cvel``
        (spatial velocities about the subtree CoM).
        """
        xp = self.xp
        tree = self.h.body_tree
        cvel = self.data.cvel[tree]
        ref = self.data.subtree_com[self.h.bodies["root"]]
        v = cvel[:, 3:] + cross(xp, cvel[:, :3], self.data.xipos[tree] - ref)
        return xp.asarray(self.h.body_mass) @ v / self.h.total_mass

    @cached_property
    def foot_pos(self):
        """Left and right foot (calcaneus) positions (2, 3), m."""
        return self.xp.stack([self.pos("foot_l"), self.pos("foot_r")])

    @cached_property
    def foot_heights(self):
        """``z_foot,L``, ``z_foot,R`` (2,), m."""
        return self.foot_pos[:, 2]

    @cached_property
    def d_feet(self):
        """``Δp_feet = p_foot,L − p_foot,R`` (3,), m."""
        return self.foot_pos[0] - self.foot_pos[1]

    @cached_property
    def d_xy_feet(self):
        """Horizontal distance between the feet, m."""
        return self.xp.linalg.norm(self.d_feet[:2])

    @cached_property
    def dz_leg(self):
        """``Δz_leg = z_pelvis − min(z_foot,L, z_foot,R)``, m."""
        return self.pelvis_pos[2] - self.xp.min(self.foot_heights)

    @cached_property
    def knee_heights(self):
        """Knee (tibia origin) heights, left and right (2,), m."""
        return self.xp.stack([self.pos("knee_l")[2], self.pos("knee_r")[2]])

    # -- orientation vectors --------------------------------------------------
    @cached_property
    def u_torso(self):
        """Unit vector from pelvis to head."""
        return _normalize(self.xp, self.head_pos - self.pelvis_pos)

    @cached_property
    def u_chest(self):
        """Unit vector pointing forward out of the chest (thorax)."""
        return self.rot("chest") @ self.xp.asarray(self.h.forward_local)

    @cached_property
    def chest_pitch(self):
        """Trunk pitch ``θ_pitch = arcsin(u_chest·ẑ)`` (rad): positive leaning back, negative forward.

        The sign of the paper's Balance row (a forward-leaning stance at −0.15 rad).
        """
        return self.xp.arcsin(self.xp.clip(self.u_chest[2], -1.0, 1.0))

    @cached_property
    def u_fwd(self):
        """Unit forward vector of the pelvis."""
        return self.rot("pelvis") @ self.xp.asarray(self.h.forward_local)

    @cached_property
    def yaw(self):
        """Heading of the pelvis about world z (rad), 0 when facing +x."""
        return self.xp.arctan2(self.u_fwd[1], self.u_fwd[0])

    # -- muscles ----------------------------------------------------------------
    @cached_property
    def muscle_length(self):
        """Muscle-tendon actuator lengths (one per muscle), m."""
        return self.data.actuator_length[self.h.muscle_ids]

    @cached_property
    def muscle_velocity(self):
        """Muscle-tendon actuator velocities (one per muscle), m/s."""
        return self.data.actuator_velocity[self.h.muscle_ids]

    @cached_property
    def muscle_force(self):
        """Muscle forces normalised by the nominal peak isometric force F0 (one per muscle).

        Negative when pulling; ``−1`` is the nominal isometric maximum.
        """
        return self.data.actuator_force[self.h.muscle_ids] / self.xp.asarray(self.h.muscle_force_nominal)

    @cached_property
    def activation(self):
        """Muscle activations ``a`` in [0, 1] (one per muscle)."""
        return self.data.act[self.h.muscle_act_adr]

    @cached_property
    def excitation(self):
        """Muscle excitations ``u`` in [0, 1] held during the step that reached this state (one per muscle)."""
        return self.data.ctrl[self.h.muscle_ids]

    @cached_property
    def joint_torque(self):
        """Generalised forces the muscles produce on the body's joints other than a free root (N m)."""
        return self.data.qfrc_actuator[self.h.joint_dof]

    @cached_property
    def touch(self):
        """Touch sensor readings (N), in the body's ``touch_sensors`` order (MyoFullBody: left heel,
        left toes, right heel, right toes)."""
        return self.data.sensordata[self.h.touch_adr]

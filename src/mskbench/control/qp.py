"""The whole-body muscle QP: one control step of static optimisation with the floating base done properly.

At the state the controller reads, MuJoCo's equations of motion are linear in the joint accelerations
``q̈``, the muscle activations ``a``, the constraint forces and the contact forces::

    M q̈ + c = Rᵀ(g ⊙ a + b) + Jₖᵀ fₖ + Σ_s Jₛᵀ fₛ + S r

* ``Rᵀ(g ⊙ a + b)``: the muscles — ``R`` is MuJoCo's ``actuator_moment``, ``g`` and ``b`` the
  force–length–velocity gain and passive force at the current lengths and velocities
  (:func:`mskbench.sim.muscles.muscle_gain_bias`), so a muscle's force is ``g·a + b``;
* ``Jₖᵀ fₖ``: MuJoCo's own constraint rows at this state — the joint couplings (equality), joint
  limits and contacts other than the supports — with MuJoCo's soft-constraint law
  ``Jₖ q̈ + Rₖ fₖ = a_ref,k`` (``efc_R``, ``efc_aref``): what MuJoCo's solver itself satisfies for an
  active row, so the QP's accelerations are the ones the simulator will produce (equality rows
  exactly, the others as a heavily weighted cost since a contact or a limit may also let go);
* ``Jₛᵀ fₛ``: the *supports* (feet on the floor or a board, the pelvis on a seat): contact forces at
  fixed points of the supporting body's collision geometry, in a linearised friction cone (pyramid
  edges, ``fₛ ≥ 0``), with the body held still on its surface (and, if asked, brought back level).
  Planning them at every candidate point of a sole, not only where MuJoCo's contacts happen to be,
  lets the QP load a heel that is 2 mm above the floor (the Stand start stands on its forefeet);
* ``S r``: reserve torques on the independent joints, weighted heavily and reported (OpenSim's
  reserves): where the muscles cannot produce what the targets ask, the reserve says by how much.

The activations are the means over the coming control step, bounded by what the activation dynamics reach
in one step from the current ones (extreme excitations held); the excitation that produces the chosen
means inverts those dynamics (:meth:`WholeBodyQP.excitation_for_mean`).

The body's *minor joints* (:attr:`mskbench.body.base.Body.minor_joints`, MyoFullBody's 40 finger
joints) stay out of the QP: their rows, accelerations and reserves are dropped (the fingers weigh
grams), and the muscles that act on nothing else get a constant low excitation (:attr:`minor_excitation`).

Cost (weights in :class:`Weights`): task accelerations (centre of mass, body orientations, points
such as a hand or a lifted foot, the supports), posture (joint accelerations towards a PD target),
``w_a‖a‖²`` (and, if asked, ``w_da‖a − a₀‖²`` from the current activations ``a₀``), small ``‖f‖²``,
``w_r‖r‖²``. Task rows enter through slack variables so the Hessian is diagonal; the QP is solved with
PIQP (a sparse interior-point solver).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass, field

import mujoco
import numpy as np
import scipy.sparse as sp

from mskbench.body.base import BodyHandles
from mskbench.control.support_geometry import candidate_points, sole_normals
from mskbench.sim.muscles import MuscleParams, muscle_gain_bias

_CONTACT_TYPES = (int(mujoco.mjtConstraint.mjCNSTR_CONTACT_PYRAMIDAL), int(mujoco.mjtConstraint.mjCNSTR_CONTACT_ELLIPTIC),
                  int(mujoco.mjtConstraint.mjCNSTR_CONTACT_FRICTIONLESS))
_EQUALITY = int(mujoco.mjtConstraint.mjCNSTR_EQUALITY)
#: PIQP's status of a solved QP, and of one stopped at its iteration limit.
SOLVED = "PIQP_SOLVED"
ITERATION_LIMIT = "PIQP_MAX_ITER_REACHED"
#: An iterate PIQP stopped at its iteration limit is acted on when its equality rows (the dynamics, the
#: constraints, the task rows) hold to this share of their largest right-hand side.
ITERATE_TOLERANCE = 1e-3


@dataclass
class Weights:
    """Relative weights of the QP's cost terms (per squared unit: m/s², rad/s², activation, N·m)."""

    com: float = 1e4
    orientation: float = 50.0
    posture: float = 0.1
    point: float = 1e3
    support: float = 1e3
    activation: float = 10.0
    #: Per squared change of a muscle's mean activation over the step from its current one. 0 (the default): each
    #: activation may go to either end of what one step reaches (excitations jump between their bounds); more:
    #: a smoother controller.
    activation_rate: float = 0.0
    reserve: float = 1e4
    soft_rows: float = 100.0
    force: float = 1e-6


@dataclass
class PointTask:
    """Drive a point of a body (``local`` in the body frame) towards ``target`` (world, m)."""

    body: int
    local: np.ndarray
    target: np.ndarray
    velocity: np.ndarray = field(default_factory=lambda: np.zeros(3))
    kp: float = 50.0
    weight: float | None = None
    #: The target's acceleration (world, m/s²), fed forward.
    acceleration: np.ndarray = field(default_factory=lambda: np.zeros(3))
    #: Which world axes are driven (e.g. only z for a pelvis height).
    axes: tuple[int, ...] = (0, 1, 2)


@dataclass
class Targets:
    """What a behaviour asks of the body at one control step.

    ``posture``: a full ``qpos`` whose joints are the posture target; ``com_acc``: the desired
    centre-of-mass acceleration (m/s², world) or None; ``orientations``: body id -> target quaternion
    (w, x, y, z); ``points``: point tasks; ``supports``: body id -> surface geom id of the bodies that
    may carry load this step (the floor, a board, a seat); ``level``: supporting bodies with a sole
    (:attr:`WholeBodyQP.sole_normals`: the feet) turned to lie flat on their surface (heel and toes down).
    """

    posture: np.ndarray
    com_acc: np.ndarray | None = None
    posture_vel: np.ndarray | None = None
    posture_kp: float = 100.0
    posture_weight: np.ndarray | None = None
    orientations: dict[int, np.ndarray] = field(default_factory=dict)
    orientation_kp: float = 100.0
    #: Per-body weights of orientation tasks (default: ``Weights.orientation``).
    orientation_weights: dict[int, float] = field(default_factory=dict)
    points: list[PointTask] = field(default_factory=list)
    supports: dict[int, int] = field(default_factory=dict)
    level: frozenset[int] = frozenset()
    support_kp: float = 100.0
    support_seat_kp: float = 0.0  # a hovering support driven down along the normal (1/s²; 0: only held still)


@dataclass
class Solution:
    """One control step's result."""

    excitation: np.ndarray  # per muscle, [0, 1]
    activation: np.ndarray  # the planned mean activation over the step, per muscle
    qacc: np.ndarray  # (nv,), zero on the minor joints
    reserve: np.ndarray  # N·m per joint dof (nj,), zero where there is none
    status: str
    support_force: np.ndarray  # (n_points, 3) world contact forces at the support points
    support_points: np.ndarray  # (n_points, 3) world positions
    #: The dynamics' force balance at the solution: M q̈ + c − (muscles + constraints + supports + reserves),
    #: per active dof (N·m or N); ~0 when the QP was solved.
    residual: np.ndarray = field(default_factory=lambda: np.zeros(0))
    #: Generalised forces (nv,) of the solution's parts: ``constraints`` (MuJoCo's rows, Jᵀf), ``supports``
    #: (Jₛᵀfₛ) and ``reserves`` (S r).
    forces: dict[str, np.ndarray] = field(default_factory=dict)
    #: The dofs the QP covers (all but the minor joints').
    dofs: np.ndarray = field(default_factory=lambda: np.zeros(0, int))


class _Triplets:
    """A sparse matrix built from (row, col, value) blocks, converted once."""

    def __init__(self):
        self.r: list[np.ndarray] = []
        self.c: list[np.ndarray] = []
        self.v: list[np.ndarray] = []

    def add(self, rows, cols, vals) -> None:
        self.r.append(np.asarray(rows, np.int64).ravel())
        self.c.append(np.asarray(cols, np.int64).ravel())
        self.v.append(np.asarray(vals, np.float64).ravel())

    def dense(self, row0: int, col0: int, block: np.ndarray) -> None:
        rr, cc = np.nonzero(block)
        self.add(rr + row0, cc + col0, block[rr, cc])

    def csc(self, shape: tuple[int, int]) -> sp.csc_matrix:
        return sp.csc_matrix((np.concatenate(self.v), (np.concatenate(self.r), np.concatenate(self.c))), shape=shape)


class WholeBodyQP:
    """The QP over one body in one scene; it keeps its own copy of the model at nominal muscle strength
    (a dynamics perturbation of the plant is not known to the controller)."""

    #: A candidate point of a supporting body within this distance of its surface may carry load (m).
    SUPPORT_RADIUS_M = 0.01
    #: Excitation of the muscles that act on minor joints only.
    minor_excitation = 0.05

    def __init__(self, model: mujoco.MjModel, handles: BodyHandles, frame_skip: int,
                 nominal_gain: np.ndarray | None = None, nominal_bias: np.ndarray | None = None,
                 friction: float = 0.8, weights: Weights | None = None,
                 excitation_range: tuple[float, float] = (0.0, 1.0), minor_joints: tuple[str, ...] = ()):
        self.m = m = copy.deepcopy(model)
        mid = np.asarray(handles.muscle_ids)
        if nominal_gain is not None:
            m.actuator_gainprm[mid, 2] = nominal_gain
        if nominal_bias is not None:
            m.actuator_biasprm[mid, 2] = nominal_bias
        self.d = mujoco.MjData(m)
        self.h = handles
        self.weights = weights or Weights()
        #: The excitations the environment's action map can produce.
        self.u_min, self.u_max = float(excitation_range[0]), float(excitation_range[1])
        self.mid, self.adr = mid, np.asarray(handles.muscle_act_adr)
        self.muscles = MuscleParams(m, mid)
        self._force0, self._p_force0 = self.muscles.force.copy(), self.muscles.p_force.copy()
        self.nv, self.nm = m.nv, int(mid.size)
        self.joint_dof = np.asarray(handles.joint_dof)
        self.nj = int(self.joint_dof.size)
        self.dt, self.nsub = float(m.opt.timestep), int(frame_skip)
        self.root_body = handles.bodies["root"]
        mu = float(friction)
        c = 1.0 / np.sqrt(1.0 + mu * mu)
        #: Friction-pyramid edges in the surface frame (tangent 1, tangent 2, normal).
        self.edges = np.array([[mu, 0, 1], [-mu, 0, 1], [0, mu, 1], [0, -mu, 1]]) * c
        self.candidates = {b: candidate_points(m, b) for b in range(m.nbody)}
        self.sole_normals = sole_normals(m)
        self._own_bodies = {int(b) for b in handles.body_tree}

        # the active dofs (all but the minor joints'), the reserves (independent active joint dofs)
        minor = np.zeros(self.nv, bool)
        for name in minor_joints:
            j = mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, name)
            if j < 0:
                raise ValueError(f"minor joint {name!r} is not in the model")
            minor[m.jnt_dofadr[j]] = True
        self.dofs = np.flatnonzero(~minor)
        self.na = int(self.dofs.size)
        self.active_of = np.full(self.nv, -1)
        self.active_of[self.dofs] = np.arange(self.na)
        dependent = np.zeros(self.nv, bool)
        for i in range(m.neq):
            if int(m.eq_type[i]) == int(mujoco.mjtEq.mjEQ_JOINT):
                dependent[m.jnt_dofadr[m.eq_obj1id[i]]] = True
        is_joint = np.zeros(self.nv, bool)
        is_joint[self.joint_dof] = True
        self.reserve_dofs = np.flatnonzero(is_joint & ~minor & ~dependent)
        self.nr = int(self.reserve_dofs.size)
        self._joint_index = {int(v): k for k, v in enumerate(self.joint_dof)}

        # which muscles act on an active dof (the moment pattern is fixed by the model)
        mujoco.mj_forward(m, self.d)
        d = self.d
        rows = np.repeat(np.arange(m.nu), d.moment_rownnz)
        cols = np.concatenate([d.moment_colind[d.moment_rowadr[i]:d.moment_rowadr[i] + d.moment_rownnz[i]]
                               for i in range(m.nu)]) if m.nu else np.zeros(0, int)
        self._moment_rownnz = d.moment_rownnz.copy()
        self._moment_colind = d.moment_colind.copy()
        muscle_of_actuator = np.full(m.nu, -1)
        muscle_of_actuator[mid] = np.arange(self.nm)
        on_active = np.zeros(self.nm, bool)
        keep = (muscle_of_actuator[rows] >= 0) & ~minor[cols]
        on_active[muscle_of_actuator[rows[keep]]] = True
        self.qp_muscles = np.flatnonzero(on_active)
        self.nq_m = int(self.qp_muscles.size)
        var_of_muscle = np.full(self.nm, -1)
        var_of_muscle[self.qp_muscles] = np.arange(self.nq_m)
        # the nonzeros of actuator_moment that enter the QP: (index into actuator_moment, row, column)
        self._mom_src = np.flatnonzero(keep)
        self._mom_row = self.active_of[cols[keep]]
        self._mom_var = var_of_muscle[muscle_of_actuator[rows[keep]]]
        self._mom_muscle = muscle_of_actuator[rows[keep]]
        self._Md = np.zeros((self.nv, self.nv))
        self._jp = np.zeros((3, self.nv))
        self._jr = np.zeros((3, self.nv))
        self._jcom = np.zeros((3, self.nv))

    # -- geometry ------------------------------------------------------------------------------------
    def surface(self, geom: int) -> tuple[np.ndarray, np.ndarray, int]:
        """``(point on the surface, unit normal, body id)`` of a support surface: the top face of a geom
        (a plane such as the floor, a box, a cylinder)."""
        d, m = self.d, self.m
        R = d.geom_xmat[geom].reshape(3, 3)
        n = R[:, 2] if R[2, 2] >= 0 else -R[:, 2]
        t = int(m.geom_type[geom])
        half = {int(mujoco.mjtGeom.mjGEOM_BOX): m.geom_size[geom, 2],
                int(mujoco.mjtGeom.mjGEOM_CYLINDER): m.geom_size[geom, 1]}.get(t, 0.0)
        return d.geom_xpos[geom] + n * half, n, int(m.geom_bodyid[geom])

    # -- activation dynamics -------------------------------------------------------------------------
    def mean_activation(self, act: np.ndarray, ctrl: np.ndarray, muscles: np.ndarray | None = None) -> np.ndarray:
        """The mean activation over one control step holding ``ctrl`` (MuJoCo's Euler steps), for all
        muscles or those indexed by ``muscles``."""
        p, dt = self.muscles, self.dt
        tau_act, tau_deact = (p.tau_act, p.tau_deact) if muscles is None else (p.tau_act[muscles], p.tau_deact[muscles])
        u = np.clip(ctrl, 0.0, 1.0)
        a = act.copy()
        total = np.zeros_like(a)
        rise_k, fall_k = dt / tau_act, dt * 0.5 / tau_deact  # written out: τ_act(0.5+1.5a), τ_deact/(0.5+1.5a)
        for _ in range(self.nsub):
            s = 0.5 + 1.5 * a
            a = a + (u - a) * np.where(u > a, rise_k / s, fall_k * 2.0 * s)
            total += a
        return total / self.nsub

    def excitation_for_mean(self, act: np.ndarray, target: np.ndarray, muscles: np.ndarray | None = None,
                            iterations: int = 3) -> np.ndarray:
        """The excitation whose step has mean activation ``target``: a closed-form first guess (the time
        constant frozen at the current activation) and ``iterations`` secant corrections on MuJoCo's
        own Euler steps (:meth:`mean_activation`), clipped to the excitation range."""
        p = self.muscles
        tau_act, tau_deact = (p.tau_act, p.tau_deact) if muscles is None else (p.tau_act[muscles], p.tau_deact[muscles])
        T = self.dt * self.nsub
        s = 0.5 + 1.5 * act
        tau = np.where(target > act, tau_act * s, tau_deact / s)
        kappa = (tau / T) * (1.0 - np.exp(-T / tau))  # mean of a(t) = u + (a0 - u) e^{-t/τ} over the step
        u = np.clip((target - kappa * act) / np.maximum(1.0 - kappa, 1e-6), self.u_min, self.u_max)
        slope = np.maximum(1.0 - kappa, 1e-3)
        for _ in range(iterations):
            err = target - self.mean_activation(act, u, muscles)
            u = np.clip(u + err / slope, self.u_min, self.u_max)
        return u

    def set_strength(self, factors: np.ndarray | None) -> None:
        """Plan with each muscle's peak force (active and passive) scaled by ``factors`` (None: nominal)."""
        s = 1.0 if factors is None else np.asarray(factors, float)
        self.muscles.force = self._force0 * s
        self.muscles.p_force = self._p_force0 * s

    # -- the state -----------------------------------------------------------------------------------
    def load(self, qpos: np.ndarray, qvel: np.ndarray, act: np.ndarray) -> mujoco.MjData:
        """Set the controller's data to a state and compute what the QP reads (positions, velocities,
        contacts, constraint rows, moments, passive and bias forces). Returns the data."""
        m, d = self.m, self.d
        d.qpos[:] = qpos
        d.qvel[:] = qvel
        d.act[:] = act
        mujoco.mj_fwdPosition(m, d)
        mujoco.mj_fwdVelocity(m, d)
        self._contacts: dict[int, int] | None = None
        return d

    def com(self) -> tuple[np.ndarray, np.ndarray]:
        """The body's centre of mass and its velocity at the loaded state."""
        mujoco.mj_jacSubtreeCom(self.m, self.d, self._jcom, self.root_body)
        return self.d.subtree_com[self.root_body].copy(), self._jcom @ self.d.qvel

    def contacts_with(self, bodies: set[int] | None = None) -> dict[int, int]:
        """Body id -> the geom it touches, for the body's MuJoCo contacts with anything that is not the
        body itself (the floor, a prop), at the loaded state; ``bodies`` restricts the bodies."""
        contacts = getattr(self, "_contacts", None)
        if contacts is None:
            m, d = self.m, self.d
            own = self._own_bodies
            out: dict[int, int] = {}
            for con in d.contact[: d.ncon]:
                g1, g2 = int(con.geom[0]), int(con.geom[1])
                b1, b2 = int(m.geom_bodyid[g1]), int(m.geom_bodyid[g2])
                if b1 in own and b2 not in own:
                    out.setdefault(b1, g2)
                elif b2 in own and b1 not in own:
                    out.setdefault(b2, g1)
            self._contacts = contacts = out
        return {b: g for b, g in contacts.items() if bodies is None or b in bodies}

    def support_points(self, supports: dict[int, int]) -> list[tuple[int, np.ndarray, int, np.ndarray]]:
        """``(body, world point, surface body, normal)`` of every candidate point of the supporting bodies
        within :attr:`SUPPORT_RADIUS_M` of its surface."""
        d = self.d
        out = []
        for body, geom in supports.items():
            origin, normal, sbody = self.surface(geom)
            R = d.xmat[body].reshape(3, 3)
            for local, radius in self.candidates[body]:
                centre = d.xpos[body] + R @ local
                if float(normal @ (centre - origin)) - radius <= self.SUPPORT_RADIUS_M:
                    out.append((body, centre - radius * normal, sbody, normal))
        return out

    # -- the step ------------------------------------------------------------------------------------
    def solve(self, targets: Targets) -> Solution:
        """The QP at the loaded state (:meth:`load`) for ``targets``."""
        m, d, w = self.m, self.d, self.weights
        nv, na, dofs = self.nv, self.na, self.dofs
        mujoco.mj_fullM(m, d, self._Md)
        Ma = self._Md[np.ix_(dofs, dofs)]
        muscle_len = d.actuator_length[self.mid]
        gain, bias = muscle_gain_bias(self.muscles, muscle_len, d.actuator_velocity[self.mid])
        moment = np.asarray(d.actuator_moment)[self._mom_src]

        # MuJoCo's rows, without the contacts of supporting bodies (the planned supports replace them)
        pts = self.support_points(targets.supports)
        sup_bodies = set(targets.supports)
        nefc = int(d.nefc)
        etype = np.asarray(d.efc_type[:nefc])
        keep = np.ones(nefc, bool)
        for i in np.flatnonzero(np.isin(etype, _CONTACT_TYPES)):
            con = d.contact[d.efc_id[i]]
            if int(m.geom_bodyid[con.geom[0]]) in sup_bodies or int(m.geom_bodyid[con.geom[1]]) in sup_bodies:
                keep[i] = False
        # efc_J rows in compressed form -> (row, active col, value), minor-only rows dropped
        rownnz, rowadr = np.asarray(d.efc_J_rownnz[:nefc]), np.asarray(d.efc_J_rowadr[:nefc])
        jrow = np.repeat(np.arange(nefc), rownnz)
        jidx = np.concatenate([np.arange(a, a + n) for a, n in zip(rowadr, rownnz)]) if nefc else np.zeros(0, int)
        jcol = self.active_of[np.asarray(d.efc_J_colind)[jidx]]
        jval = np.asarray(d.efc_J)[jidx]
        on_active = np.zeros(nefc, bool)
        on_active[jrow[jcol >= 0]] = True
        keep &= on_active
        kept = np.flatnonzero(keep)
        nk = int(kept.size)
        krow = np.full(nefc, -1)
        krow[kept] = np.arange(nk)
        sel = (krow[jrow] >= 0) & (jcol >= 0)
        J_r, J_c, J_v = krow[jrow[sel]], jcol[sel], jval[sel]
        aref, Rr = np.asarray(d.efc_aref)[kept], np.asarray(d.efc_R)[kept]
        is_eq = etype[kept] == _EQUALITY
        eq_rows, soft_rows = np.flatnonzero(is_eq), np.flatnonzero(~is_eq)
        ne, ns = int(eq_rows.size), int(soft_rows.size)

        # supports: force edges and the supporting bodies held still on their surfaces
        npt = len(pts)
        nfs = 4 * npt
        Jfs = np.zeros((nfs, nv))
        world_pts = np.zeros((npt, 3))
        frames = []
        rows_t, accs, tw = [], [], []
        held = set()
        for k, (body, p, sbody, normal) in enumerate(pts):
            mujoco.mj_jac(m, d, self._jp, None, p, body)
            Jrel = self._jp.copy()
            if sbody > 0:
                mujoco.mj_jac(m, d, self._jp, None, p, sbody)
                Jrel -= self._jp
            t1 = np.cross(normal, [0.0, 1.0, 0.0])
            if np.linalg.norm(t1) < 1e-6:
                t1 = np.cross(normal, [1.0, 0.0, 0.0])
            t1 /= np.linalg.norm(t1)
            F = np.stack([t1, np.cross(normal, t1), normal], axis=1)  # columns: the surface frame
            frames.append(F)
            Jfs[4 * k:4 * k + 4] = (self.edges @ F.T) @ Jrel
            world_pts[k] = p
            if (body, sbody) in held:
                continue
            held.add((body, sbody))
            mujoco.mj_jacBody(m, d, self._jp, self._jr, body)
            Jb = np.vstack([self._jp, self._jr])
            if sbody > 0:
                mujoco.mj_jacBody(m, d, self._jp, self._jr, sbody)
                Jb = Jb - np.vstack([self._jp, self._jr])
            acc = -20.0 * (Jb @ d.qvel)
            if targets.support_seat_kp > 0:  # hovering: its lowest candidate point brought down to the surface
                o = self.surface(targets.supports[body])[0]
                gap = min(float(n_ @ (q_ - o)) for b_, q_, _, n_ in pts if b_ == body)
                acc[:3] -= targets.support_seat_kp * max(gap, 0.0) * normal
            sole = self.sole_normals.get(body)
            if body in targets.level and sole is not None:
                # the small rotation that lays the sole flat on the surface (about the surface normal: free)
                err = np.cross(d.xmat[body].reshape(3, 3) @ sole, normal)
                kp = targets.support_kp
                acc[3:] = kp * err - 2.0 * np.sqrt(kp) * (Jb[3:] @ d.qvel)
            rows_t.append(Jb)
            accs.append(acc)
            tw.append(np.full(6, w.support))

        # task rows
        if targets.com_acc is not None:
            mujoco.mj_jacSubtreeCom(m, d, self._jcom, self.root_body)
            rows_t.append(self._jcom.copy())
            accs.append(np.asarray(targets.com_acc, float))
            tw.append(np.full(3, w.com))
        kp_o = targets.orientation_kp
        for body, quat in targets.orientations.items():
            mujoco.mj_jacBody(m, d, self._jp, self._jr, body)
            err = np.zeros(3)
            mujoco.mju_subQuat(err, quat, d.xquat[body])
            err = d.xmat[body].reshape(3, 3) @ err
            rows_t.append(self._jr.copy())
            accs.append(kp_o * err - 2.0 * np.sqrt(kp_o) * (self._jr @ d.qvel))
            tw.append(np.full(3, targets.orientation_weights.get(body, w.orientation)))
        for pt in targets.points:
            pw = d.xpos[pt.body] + d.xmat[pt.body].reshape(3, 3) @ pt.local
            mujoco.mj_jac(m, d, self._jp, None, pw, pt.body)
            acc = (pt.acceleration + pt.kp * (pt.target - pw)
                   + 2.0 * np.sqrt(pt.kp) * (pt.velocity - self._jp @ d.qvel))
            ax = list(pt.axes)
            rows_t.append(self._jp[ax].copy())
            accs.append(acc[ax])
            tw.append(np.full(len(ax), w.point if pt.weight is None else pt.weight))
        TJ = (np.vstack(rows_t) if rows_t else np.zeros((0, nv)))[:, dofs]
        tacc = np.concatenate(accs) if accs else np.zeros(0)
        tw_ = np.concatenate(tw) if tw else np.zeros(0)
        nt = TJ.shape[0]

        # posture
        q, qd = d.qpos, d.qvel
        kp = targets.posture_kp
        jq = np.asarray(self.h.joint_qpos)
        vref = np.zeros(nv) if targets.posture_vel is None else targets.posture_vel
        post_full = np.zeros(nv)
        post_full[self.joint_dof] = (kp * (targets.posture[jq] - q[jq])
                                     + 2.0 * np.sqrt(kp) * (vref[self.joint_dof] - qd[self.joint_dof]))
        w_full = np.zeros(nv)
        w_full[self.joint_dof] = w.posture if targets.posture_weight is None else targets.posture_weight
        qacc_post, w_post = post_full[dofs], w_full[dofs]

        # variables: qacc | a | f (MuJoCo rows) | fs (support edges) | r (reserves) | st (task slacks) | ss (soft slacks)
        nq_m, nr = self.nq_m, self.nr
        ia = na
        ifo = ia + nq_m
        ifs = ifo + nk
        ir = ifs + nfs
        it = ir + nr
        iss = it + nt
        nx = iss + ns
        Pd = np.concatenate([w_post, np.full(nq_m, w.activation), np.full(nk, 1e-8), np.full(nfs, w.force),
                             np.full(nr, w.reserve), tw_, np.full(ns, w.soft_rows)])
        qlin = np.zeros(nx)
        qlin[:na] = -w_post * qacc_post

        act_all = d.act[self.adr]
        fixed = np.ones(self.nm, bool)
        fixed[self.qp_muscles] = False
        # dynamics rows (na): M q̈ − A a − Jᵀ f − Jsᵀ fs − S r = Rᵀ b (+ fixed muscles) + passive − bias
        T = _Triplets()
        T.dense(0, 0, Ma)
        T.add(self._mom_row, ia + self._mom_var, -moment * gain[self._mom_muscle])
        T.add(J_c, ifo + J_r, -J_v)
        Jfs_a = Jfs[:, dofs]
        T.dense(0, ifs, -Jfs_a.T)
        T.add(self.active_of[self.reserve_dofs], ir + np.arange(nr), -np.ones(nr))
        force_fixed = bias.copy()
        fixed_idx = np.flatnonzero(fixed)
        fixed_act = self.mean_activation(act_all[fixed], np.full(fixed_idx.size, self.minor_excitation), fixed_idx)
        force_fixed[fixed] += gain[fixed] * fixed_act
        rhs = np.zeros(na)
        np.add.at(rhs, self._mom_row, moment * force_fixed[self._mom_muscle])
        rhs += (d.qfrc_passive - d.qfrc_bias)[dofs]
        # MuJoCo equality rows (ne): J q̈ + R f = aref
        row = na
        eq_map = np.full(nk, -1)
        eq_map[eq_rows] = np.arange(ne)
        mask = eq_map[J_r] >= 0
        T.add(row + eq_map[J_r[mask]], J_c[mask], J_v[mask])
        T.add(row + np.arange(ne), ifo + eq_rows, Rr[eq_rows])
        row += ne
        # task rows (nt): TJ q̈ − st = acc
        T.dense(row, 0, TJ)
        T.add(row + np.arange(nt), it + np.arange(nt), -np.ones(nt))
        row += nt
        # soft rows (ns): J q̈ + R f − ss = aref
        soft_map = np.full(nk, -1)
        soft_map[soft_rows] = np.arange(ns)
        mask = soft_map[J_r] >= 0
        T.add(row + soft_map[J_r[mask]], J_c[mask], J_v[mask])
        T.add(row + np.arange(ns), ifo + soft_rows, Rr[soft_rows])
        T.add(row + np.arange(ns), iss + np.arange(ns), -np.ones(ns))
        row += ns
        Aeq = T.csc((row, nx))
        beq = np.concatenate([rhs, aref[eq_rows], tacc, aref[soft_rows]])

        act = act_all[self.qp_muscles]
        lo_a = self.mean_activation(act, np.full(nq_m, self.u_min), self.qp_muscles)
        hi_a = self.mean_activation(act, np.full(nq_m, self.u_max), self.qp_muscles)
        lb = np.full(nx, -np.inf)
        ub = np.full(nx, np.inf)
        lb[ia:ifo], ub[ia:ifo] = lo_a, hi_a
        lb[ifo + soft_rows] = 0.0
        lb[ifs:ir] = 0.0
        if w.activation_rate > 0:
            Pd[ia:ifo] += w.activation_rate
            qlin[ia:ifo] -= w.activation_rate * act
        x, status = _solve(sp.diags(Pd, format="csc"), qlin, Aeq, beq, lb, ub)
        if not _acceptable(status, x, Aeq, beq):
            raise RuntimeError(f"the whole-body QP was not solved ({status}"
                               f"{'' if np.all(np.isfinite(x)) else ', non-finite iterate'})")

        a = np.clip(x[ia:ifo], lo_a, hi_a)
        excitation = np.full(self.nm, self.minor_excitation)
        excitation[self.qp_muscles] = self.excitation_for_mean(act, a, self.qp_muscles)
        planned = np.zeros(self.nm)
        planned[self.qp_muscles] = a
        planned[fixed] = fixed_act
        qacc = np.zeros(nv)
        qacc[dofs] = x[:na]
        reserve = np.zeros(self.nj)
        reserve[[self._joint_index[int(v)] for v in self.reserve_dofs]] = x[ir:it]
        edges = x[ifs:ir].reshape(-1, 4)
        forces = np.array([F @ (self.edges.T @ e) for F, e in zip(frames, edges)]) if npt else np.zeros((0, 3))
        residual = Aeq[:na] @ x - rhs
        gen_constraints = np.zeros(nv)
        np.add.at(gen_constraints, dofs[J_c], J_v * x[ifo + J_r])
        gen_reserves = np.zeros(nv)
        gen_reserves[self.reserve_dofs] = x[ir:it]
        return Solution(excitation=excitation, activation=planned, qacc=qacc, reserve=reserve, status=status,
                        support_force=forces, support_points=world_pts, residual=np.asarray(residual),
                        forces={"constraints": gen_constraints, "supports": Jfs.T @ x[ifs:ir], "reserves": gen_reserves},
                        dofs=dofs.copy())


def _acceptable(status: str, x: np.ndarray, A, b: np.ndarray) -> bool:
    """Whether to act on PIQP's answer: a solved QP, or an iterate at the iteration limit whose equality rows
    hold to :data:`ITERATE_TOLERANCE` of their scale (seen while Catch's behaviour was built, with both hands
    aimed at one point); never a non-finite one or any other status."""
    if not np.all(np.isfinite(x)):
        return False
    if status == SOLVED:
        return True
    return status == ITERATION_LIMIT and float(np.abs(A @ x - b).max()) <= ITERATE_TOLERANCE * max(
        1.0, float(np.abs(b).max()))


def _solve(P, q, A, b, lb, ub) -> tuple[np.ndarray, str]:
    """PIQP on the QP; the regularisation's lower limit is lowered (its default stalled on a Powerlift
    state whose 0.05 kg bar hangs from equality rows, to the iteration limit with a diverged iterate)."""
    import piqp

    solver = piqp.SparseSolver()
    solver.settings.verbose = False
    solver.settings.reg_lower_limit = 1e-8
    solver.setup(P, q, A, b, None, None, None, lb, ub)
    status = solver.solve()
    return np.asarray(solver.result.x), str(status).rsplit(".", 1)[-1]

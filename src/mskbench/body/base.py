"""What every embodiment provides: a :class:`Body` description and the :class:`BodyHandles` of a compiled model.

A body is a musculoskeletal model whose actuators are all muscles. The rest of
the stack (state view, simulators, observation layout, environments, trainers)
takes any :class:`Body`: MyoFullBody (:data:`mskbench.body.myofullbody.MYOFULLBODY`)
and the mouse forelimb (:data:`mskbench.body.mouse_forelimb.MOUSE_FORELIMB`)
are two values of it. A task names its body; the environment builds the body's
model with the task's props, resolves the handles once and steps it.

The body's own degrees of freedom come first in the model (``qpos[:nq_body]``,
``qvel[:nv_body]``); props with joints of their own (a door, a free cube) come
after them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import mujoco
import numpy as np

#: The base observation blocks a body can offer, in layout order (see :mod:`mskbench.envs.observation`).
OBSERVATION_BLOCKS = ("qpos", "qvel", "com_vel", "muscle_length", "muscle_velocity", "muscle_force",
                      "muscle_activation")


@dataclass(frozen=True)
class Body:
    """An embodiment: how its model is built and which of its parts tasks address by role.

    Parameters
    ----------
    name:
        Identifier (``"myofullbody"``, ``"mouse_forelimb"``).
    load_spec:
        The body alone, as an editable ``MjSpec`` in the world frame tasks use
        (props are added to it before compilation).
    timestep_s, frame_skip:
        Default physics step and physics steps per control step.
    n_muscles:
        Number of actuators; every one must be a muscle.
    root:
        The body's root body (its kinematic tree is the body).
    free_joint:
        Name of the root's free joint, or ``None`` for a body welded to the world.
    parts, joints:
        Role -> model name of the bodies and joints tasks and metrics read.
    touch_sensors:
        Touch sensors, in the order of ``StateView.touch``.
    observation:
        The base observation blocks (a selection of :data:`OBSERVATION_BLOCKS`, in that order).
    forward_local:
        The body-local axis that points forward (heading, chest pitch).
    memory_bytes:
        Arena reserved per ``MjData`` (``None``: as the model says).
    camera:
        The camera renders look through (``None``: MuJoCo's free camera).
    minor_joints:
        Joints a whole-body controller may leave to themselves because no task reads them (the
        fingers of MyoFullBody); :mod:`mskbench.control` keeps them out of its QP.
    """

    name: str
    load_spec: Callable[[], mujoco.MjSpec]
    timestep_s: float
    frame_skip: int
    n_muscles: int
    root: str
    free_joint: str | None = None
    parts: Mapping[str, str] = field(default_factory=dict)
    joints: Mapping[str, str] = field(default_factory=dict)
    touch_sensors: tuple[str, ...] = ()
    observation: tuple[str, ...] = OBSERVATION_BLOCKS
    forward_local: tuple[float, float, float] = (1.0, 0.0, 0.0)
    memory_bytes: int | None = None
    camera: str | None = None
    minor_joints: tuple[str, ...] = ()

    def __post_init__(self):
        unknown = [b for b in self.observation if b not in OBSERVATION_BLOCKS]
        if unknown:
            raise ValueError(f"unknown observation blocks {unknown}; valid: {', '.join(OBSERVATION_BLOCKS)}")
        if list(self.observation) != [b for b in OBSERVATION_BLOCKS if b in self.observation]:
            raise ValueError(f"observation blocks must follow the order {OBSERVATION_BLOCKS}")
        if self.timestep_s <= 0 or self.frame_skip < 1:
            raise ValueError("timestep_s must be > 0 and frame_skip >= 1")

    def build_model(self, add_props: Callable[[mujoco.MjSpec], None] | None = None, *,
                    timestep_s: float | None = None, memory_bytes: int | None = None) -> mujoco.MjModel:
        """Compile the body plus a task's props.

        ``add_props(spec)`` may add bodies, geoms, sites, joints (after the
        body's), equalities or mocap bodies; it must not rename or remove
        anything of the body. ``timestep_s`` defaults to the body's,
        ``memory_bytes`` to :attr:`memory_bytes`.
        """
        memory = self.memory_bytes if memory_bytes is None else memory_bytes
        if memory is not None and memory < 1024 * 1024:
            raise ValueError(f"memory_bytes={memory} is too small; use at least 1 MiB")
        dt = self.timestep_s if timestep_s is None else float(timestep_s)
        if not (np.isfinite(dt) and dt > 0):
            raise ValueError(f"timestep_s must be a positive number of seconds, got {timestep_s!r}")
        spec = self.load_spec()
        spec.option.timestep = dt
        if add_props is not None:
            add_props(spec)
        if memory is not None:
            spec.memory = int(memory)
        return spec.compile()

    def handles(self, model: mujoco.MjModel) -> "BodyHandles":
        """The indices tasks use, resolved in ``model`` (a model of this body, props included)."""
        return BodyHandles.from_model(model, self)


def _ids(model: mujoco.MjModel, kind: mujoco.mjtObj, names: Mapping[str, str]) -> dict[str, int]:
    out = {}
    for role, name in names.items():
        idx = mujoco.mj_name2id(model, kind, name)
        if idx < 0:
            raise ValueError(f"model has no {kind.name.removeprefix('mjOBJ_').lower()} named {name!r} (role {role!r})")
        out[role] = int(idx)
    return out


def put(xp, array, index, values):
    """``array`` with ``array[index] = values``: a copy on NumPy, ``.at[].set`` on JAX."""
    if xp is np:
        out = np.array(array, copy=True)
        out[index] = values
        return out
    return xp.asarray(array).at[index].set(values)


@dataclass(frozen=True)
class JointCouplings:
    """The model's joint-equality constraints ``y - y0 = Σ_k c_k (x - x0)^k``.

    ``dep`` are the qpos addresses of the dependent joints, ``drv`` of the driving
    joints (``-1``: the joint is held at ``y0 + c_0``). Rows are ordered so that
    a driver is always resolved before anything it drives; ``level`` is a row's
    depth in that order (0: its driver is no dependent), so the rows of one level
    are resolved together.
    """

    dep: np.ndarray
    drv: np.ndarray
    coef: np.ndarray  # (n, 5)
    dep0: np.ndarray
    drv0: np.ndarray
    level: np.ndarray

    @classmethod
    def from_model(cls, model: mujoco.MjModel) -> "JointCouplings":
        rows = []
        for i in range(model.neq):
            if int(model.eq_type[i]) != int(mujoco.mjtEq.mjEQ_JOINT) or not model.eq_active0[i]:
                continue
            j1, j2 = int(model.eq_obj1id[i]), int(model.eq_obj2id[i])
            dep_adr = int(model.jnt_qposadr[j1])
            drv_adr = int(model.jnt_qposadr[j2]) if j2 >= 0 else -1
            rows.append((dep_adr, drv_adr, model.eq_data[i, :5].copy()))
        deps = {r[0] for r in rows}
        ordered: list[tuple[int, int, np.ndarray]] = []
        depth: dict[int, int] = {}
        while rows:  # topological order: drivers first
            ready = [r for r in rows if r[1] < 0 or r[1] not in deps or r[1] in depth]
            if not ready:
                raise ValueError("joint couplings form a cycle")
            for r in ready:
                ordered.append(r)
                depth[r[0]] = depth[r[1]] + 1 if r[1] in depth else 0
                rows.remove(r)
        dep = np.array([r[0] for r in ordered], dtype=np.int64)
        drv = np.array([r[1] for r in ordered], dtype=np.int64)
        coef = np.array([r[2] for r in ordered]).reshape(-1, 5)
        return cls(
            dep=dep,
            drv=drv,
            coef=coef,
            dep0=model.qpos0[dep].copy(),
            drv0=np.where(drv >= 0, model.qpos0[np.maximum(drv, 0)], 0.0),
            level=np.array([depth[d] for d in dep.tolist()], dtype=np.int64),
        )

    def resolve(self, qpos, xp=np, qvel=None, qvel_map: np.ndarray | None = None):
        """``(qpos, qvel)`` with every dependent joint set from its driver: new arrays, written with the
        array namespace ``xp`` (NumPy on the host, ``jax.numpy`` inside a jitted start draw).

        With ``qvel`` (and ``qvel_map``: qpos address → dof address for hinge and slide joints) the
        dependent velocities are set by the chain rule, ``ẏ = (Σ_k k c_k (x − x0)^(k−1)) ẋ`` (0 for a
        joint held fixed); without, ``qvel`` is returned as given.
        """
        if qvel is not None and qvel_map is None:
            raise ValueError("qvel needs qvel_map (qpos address -> dof address)")
        powers = np.arange(5)
        for lvl in np.unique(self.level):
            rows = np.flatnonzero(self.level == lvl)
            dep, drv, coef = self.dep[rows], self.drv[rows], self.coef[rows]
            has_drv = drv >= 0
            x = xp.where(has_drv, qpos[np.maximum(drv, 0)] - self.drv0[rows], 0.0)
            qpos = put(xp, qpos, dep, self.dep0[rows] + xp.sum(coef * x[:, None] ** powers, axis=1))
            if qvel is not None and qvel_map is not None:
                slope = xp.sum(coef[:, 1:] * powers[1:] * x[:, None] ** (powers[1:] - 1), axis=1)
                vd = xp.where(has_drv, slope * qvel[qvel_map[np.maximum(drv, 0)]], 0.0)
                qvel = put(xp, qvel, qvel_map[dep], vd)
        return qpos, qvel

    def apply(self, qpos: np.ndarray, qvel_map: np.ndarray | None = None,
              qvel: np.ndarray | None = None) -> None:
        """Set every dependent joint from its driver, in place (NumPy; :meth:`resolve` does the work).

        With ``qvel`` (and ``qvel_map``: qpos address → dof address for hinge and
        slide joints) the dependent velocities are set from the chain rule too.
        """
        out_q, out_v = self.resolve(qpos, np, qvel if qvel_map is not None else None, qvel_map)
        qpos[:] = out_q
        if qvel is not None and qvel_map is not None:
            qvel[:] = out_v

    def residual(self, qpos: np.ndarray) -> np.ndarray:
        """Constraint violation of each coupling for ``qpos`` (rad or m)."""
        powers = np.arange(5)
        x = np.where(self.drv >= 0, qpos[np.maximum(self.drv, 0)] - self.drv0, 0.0)
        return qpos[self.dep] - self.dep0 - np.sum(self.coef * x[:, None] ** powers, axis=1)


@dataclass(frozen=True)
class BodyHandles:
    """Indices into a compiled model that tasks use; resolved once per model.

    Body ids index ``xpos``/``xmat``/``xipos``/``cvel``; ``joints_qpos`` are
    qpos addresses of the named joint roles; ``joint_qpos`` / ``joint_dof``
    are the body's joints other than its free root. Props with joints of their
    own come after the body: its state is ``qpos[:nq_body]``, ``qvel[:nv_body]``.
    """

    body: str
    nq: int
    nv: int
    nu: int
    nq_body: int
    nv_body: int
    free_root: bool
    bodies: dict[str, int]
    joints_qpos: dict[str, int]
    joint_qpos: np.ndarray
    joint_dof: np.ndarray
    qvel_of_qpos: np.ndarray  # qpos address -> dof address (hinge/slide); -1 otherwise
    body_tree: np.ndarray  # ids of the bodies that belong to the body
    body_mass: np.ndarray  # masses of body_tree (kg)
    total_mass: float
    touch_names: tuple[str, ...]
    touch_adr: np.ndarray
    muscle_ids: np.ndarray
    muscle_act_adr: np.ndarray  # index of each muscle's activation in ``act``
    muscle_force_nominal: np.ndarray  # peak isometric force F0 (N), as compiled
    muscle_names: tuple[str, ...]
    couplings: JointCouplings
    forward_local: np.ndarray

    @classmethod
    def from_model(cls, model: mujoco.MjModel, body: Body) -> "BodyHandles":
        bodies = _ids(model, mujoco.mjtObj.mjOBJ_BODY, {"root": body.root, **body.parts})
        jids = _ids(model, mujoco.mjtObj.mjOBJ_JOINT, body.joints)
        root_joint = -1
        if body.free_joint is not None:
            root_joint = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, body.free_joint)
            if root_joint < 0 or int(model.jnt_type[root_joint]) != int(mujoco.mjtJoint.mjJNT_FREE):
                raise ValueError(f"{body.name} must have a free joint named {body.free_joint!r}")
        root = bodies["root"]
        tree = np.array([b for b in range(model.nbody) if model.body_rootid[b] == model.body_rootid[root]
                         and b != 0], dtype=np.int64)
        in_tree = set(tree.tolist())
        qvel_of_qpos = np.full(model.nq, -1, dtype=np.int64)
        jq, jd = [], []
        body_joints = [j for j in range(model.njnt) if int(model.jnt_bodyid[j]) in in_tree]
        for j in range(model.njnt):
            if int(model.jnt_type[j]) in (int(mujoco.mjtJoint.mjJNT_HINGE), int(mujoco.mjtJoint.mjJNT_SLIDE)):
                qvel_of_qpos[model.jnt_qposadr[j]] = model.jnt_dofadr[j]
                if j in body_joints and j != root_joint:
                    jq.append(model.jnt_qposadr[j])
                    jd.append(model.jnt_dofadr[j])
        if body_joints != list(range(len(body_joints))):
            raise ValueError(f"the {body.name} joints must come first in the model (add props after it)")
        n_body = len(body_joints)  # the body's coordinates end where the first prop joint's begin
        nq_body = int(model.jnt_qposadr[n_body]) if n_body < model.njnt else model.nq
        nv_body = int(model.jnt_dofadr[n_body]) if n_body < model.njnt else model.nv
        touch = []
        for name in body.touch_sensors:
            sid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, name)
            if sid < 0:
                raise ValueError(f"model has no touch sensor {name!r}")
            touch.append(model.sensor_adr[sid])
        if model.nu != body.n_muscles:
            raise ValueError(f"expected {body.n_muscles} actuators (all muscles), model has {model.nu}")
        muscles = np.array(
            [i for i in range(model.nu) if int(model.actuator_gaintype[i]) == int(mujoco.mjtGain.mjGAIN_MUSCLE)],
            dtype=np.int64,
        )
        if muscles.size != body.n_muscles:
            raise ValueError(f"{body.name}: {body.n_muscles - muscles.size} actuators are not muscles")
        return cls(
            body=body.name,
            nq=model.nq,
            nv=model.nv,
            nu=model.nu,
            nq_body=nq_body,
            nv_body=nv_body,
            free_root=root_joint >= 0,
            bodies=bodies,
            joints_qpos={k: int(model.jnt_qposadr[v]) for k, v in jids.items()},
            joint_qpos=np.array(jq, dtype=np.int64),
            joint_dof=np.array(jd, dtype=np.int64),
            qvel_of_qpos=qvel_of_qpos,
            body_tree=tree,
            body_mass=model.body_mass[tree].copy(),
            total_mass=float(model.body_mass[tree].sum()),
            touch_names=tuple(body.touch_sensors),
            touch_adr=np.array(touch, dtype=np.int64),
            muscle_ids=muscles,
            muscle_act_adr=model.actuator_actadr[muscles].astype(np.int64),
            muscle_force_nominal=model.actuator_gainprm[muscles, 2].copy(),
            muscle_names=tuple(model.actuator(int(i)).name for i in muscles),
            couplings=JointCouplings.from_model(model),
            forward_local=np.asarray(body.forward_local, dtype=float),
        )

    def touch_index(self, name: str) -> int:
        """Index of touch sensor ``name`` in ``StateView.touch``."""
        if name not in self.touch_names:
            raise ValueError(f"{self.body} has no touch sensor {name!r}; it has {', '.join(self.touch_names) or 'none'}")
        return self.touch_names.index(name)


def default_qpos(model: mujoco.MjModel, handles: BodyHandles) -> np.ndarray:
    """The model's reference configuration with the joint couplings satisfied."""
    qpos = model.qpos0.copy()
    handles.couplings.apply(qpos)
    return qpos


def set_pose(model: mujoco.MjModel, handles: BodyHandles, qpos: np.ndarray,
             qvel: np.ndarray | None = None) -> None:
    """Make ``qpos`` (and ``qvel``) consistent with the joint couplings, in place."""
    handles.couplings.apply(qpos, handles.qvel_of_qpos, qvel)


def place_on_ground(model: mujoco.MjModel, data: mujoco.MjData, handles: BodyHandles,
                    floor_geom: str = "floor", clearance_m: float = 0.0) -> float:
    """Shift the root vertically so the lowest colliding geom of the body touches the floor.

    Uses ``data.qpos``; runs forward kinematics, measures signed distances
    between every colliding body geom and the floor, moves the root by the
    smallest one minus ``clearance_m``. Returns the shift applied (m). Needs a
    free root.
    """
    if not handles.free_root:
        raise ValueError(f"{handles.body} is welded to the world; it cannot be placed on the ground")
    floor = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, floor_geom)
    if floor < 0:
        raise ValueError(f"scene has no geom named {floor_geom!r}")
    mujoco.mj_kinematics(model, data)
    tree = set(handles.body_tree.tolist())
    fromto = np.zeros(6)
    dmin = np.inf
    for g in range(model.ngeom):
        if model.geom_bodyid[g] not in tree:
            continue
        if not (model.geom_contype[g] & model.geom_conaffinity[floor]
                or model.geom_conaffinity[g] & model.geom_contype[floor]):
            continue
        dmin = min(dmin, mujoco.mj_geomDistance(model, data, floor, g, 10.0, fromto))
    if not np.isfinite(dmin):
        raise ValueError("no body geom can collide with the floor")
    shift = -(dmin - clearance_m)
    data.qpos[2] += shift
    mujoco.mj_kinematics(model, data)
    return float(shift)


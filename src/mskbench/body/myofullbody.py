"""The 416-muscle MyoFullBody embodiment (PyPI package ``musclemimic-models``).

The model as shipped faces world ``-y`` (OpenSim convention: body-local ``x`` is
anterior, ``y`` superior, ``z`` to the right). mskbench turns the whole body by
+90 degrees about world ``z`` so that it faces world ``+x``, its left is ``+y`` and
up is ``+z``, which is the frame the paper's reward tables use
(``x̂`` forward, ``ŷ`` lateral, ``ẑ`` vertical).

Facts measured on musclemimic-models 1.0.6 with mujoco 4.0.0 (and asserted in
``tests/test_body.py``): 416 muscle actuators (all with first-order activation
dynamics), a free root joint, ``nq = 129``, ``nv = 128``, timestep 1 ms,
51 joint-equality couplings, 424 tendons of which 8 are not actuated
(ligaments), four touch sensors under the heels and toes. The shipped
configuration leaves the feet ~5 cm above the floor; :func:`place_on_ground`
lowers any pose until it touches.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import mujoco
import numpy as np

MODEL_NAME = "myofullbody"
N_MUSCLES = 416
#: Arena reserved per ``MjData``. The shipped model asks for ~1.39 GB; a
#: full-body rollout with the body lying on the floor used < 1 MB here, so
#: 64 MiB leaves a wide margin while letting dozens of envs share 24 GB.
DEFAULT_MEMORY_BYTES = 64 * 1024 * 1024
#: Root yaw (rad) that turns the shipped model (facing -y) to face +x.
ROOT_YAW_RAD = np.pi / 2
#: Height (m) of the root in the shipped model's default pose.
DEFAULT_ROOT_HEIGHT_M = 1.0
#: Body-local axis that points anteriorly (OpenSim convention).
FORWARD_LOCAL = np.array([1.0, 0.0, 0.0])

# Named parts used by tasks. One place maps roles to model names.
BODY_NAMES = {
    "root": "Full Body",
    "pelvis": "pelvis",
    "torso": "torso",
    "chest": "thorax",
    "head": "head",
    "foot_l": "calcn_l",
    "foot_r": "calcn_r",
    "toes_l": "toes_l",
    "toes_r": "toes_r",
    "knee_l": "tibia_l",
    "knee_r": "tibia_r",
    "hand_l": "thirdmc_l",
    "hand_r": "thirdmc_r",
}
JOINT_NAMES = {
    "hip_flexion_l": "hip_flexion_l",
    "hip_flexion_r": "hip_flexion_r",
    "knee_l": "knee_angle_l",
    "knee_r": "knee_angle_r",
    "ankle_l": "ankle_angle_l",
    "ankle_r": "ankle_angle_r",
    "lumbar": "flex_extension",
}
#: Touch sensors in the order they appear in ``StateView.touch``.
TOUCH_SENSORS = ("l_foot", "l_toes", "r_foot", "r_toes")
#: Index of the right-heel sensor in ``StateView.touch`` (heel strikes for the EMG gait cycles).
RIGHT_HEEL = TOUCH_SENSORS.index("r_foot")


def xml_path() -> str:
    """Path of the MyoFullBody MJCF inside the installed ``musclemimic_models``."""
    import musclemimic_models

    return str(musclemimic_models.get_xml_path(MODEL_NAME))


def yaw_quat(yaw_rad: float) -> np.ndarray:
    """Unit quaternion (w, x, y, z) of a rotation by ``yaw_rad`` about world z."""
    return np.array([np.cos(yaw_rad / 2), 0.0, 0.0, np.sin(yaw_rad / 2)])


def rotate_root(qpos: np.ndarray, angle_rad: float, axis=(0.0, 1.0, 0.0)) -> np.ndarray:
    """``qpos`` with the root turned by ``angle_rad`` about a world axis (default +y: positive
    pitches the head forward, towards +x); a copy."""
    axis = np.asarray(axis, float) / np.linalg.norm(axis)
    turn = np.concatenate([[np.cos(angle_rad / 2)], np.sin(angle_rad / 2) * axis])
    out = np.array(qpos, dtype=float, copy=True)
    quat = np.zeros(4)
    mujoco.mju_mulQuat(quat, turn, out[3:7].copy())
    out[3:7] = quat
    return out


def load_spec() -> mujoco.MjSpec:
    """MyoFullBody as an editable ``MjSpec``, turned to face +x, root at the origin.

    The shipped scene (floor plane named ``floor``, light) comes with it.
    """
    spec = mujoco.MjSpec.from_file(xml_path())
    root = spec.body(BODY_NAMES["root"])
    root.pos = [0.0, 0.0, DEFAULT_ROOT_HEIGHT_M]
    root.quat = yaw_quat(ROOT_YAW_RAD)
    # A camera that follows the centre of mass and looks at the body's right
    # side. Given in the root frame (turned by ROOT_YAW_RAD): world position
    # (0.4, -3.2, +0.3) from the root, image x along world +x.
    root.add_camera(
        name="track",
        mode=mujoco.mjtCamLight.mjCAMLIGHT_TRACKCOM,
        pos=[-3.2, -0.4, 0.3],
        xyaxes=[0, -1, 0, 0.15, 0, 1],
    )
    return spec


def build_model(
    add_props: Callable[[mujoco.MjSpec], None] | None = None,
    memory_bytes: int = DEFAULT_MEMORY_BYTES,
) -> mujoco.MjModel:
    """Compile MyoFullBody plus a task's props into an ``MjModel``.

    ``add_props(spec)`` may add bodies, geoms, sites or mocap bodies to the
    world; it must not rename or remove anything of the body.
    """
    if memory_bytes < 1024 * 1024:
        raise ValueError(f"memory_bytes={memory_bytes} is too small; use at least 1 MiB")
    spec = load_spec()
    if add_props is not None:
        add_props(spec)
    spec.memory = int(memory_bytes)
    return spec.compile()


def _ids(model: mujoco.MjModel, kind: mujoco.mjtObj, names: dict[str, str]) -> dict[str, int]:
    out = {}
    for role, name in names.items():
        idx = mujoco.mj_name2id(model, kind, name)
        if idx < 0:
            raise ValueError(f"model has no {kind.name} named {name!r} (role {role!r})")
        out[role] = idx
    return out


@dataclass(frozen=True)
class JointCouplings:
    """The model's joint-equality constraints ``y - y0 = Σ_k c_k (x - x0)^k``.

    ``dep`` are the qpos addresses of the dependent joints, ``drv`` of the driving
    joints (``-1``: the joint is held at ``y0 + c_0``). Rows are ordered so that
    a driver is always resolved before anything it drives.
    """

    dep: np.ndarray
    drv: np.ndarray
    coef: np.ndarray  # (n, 5)
    dep0: np.ndarray
    drv0: np.ndarray

    @classmethod
    def from_model(cls, model: mujoco.MjModel) -> "JointCouplings":
        rows = []
        for i in range(model.neq):
            if int(model.eq_type[i]) != int(mujoco.mjtEq.mjEQ_JOINT) or not model.eq_active0[i]:
                continue
            j1, j2 = int(model.eq_obj1id[i]), int(model.eq_obj2id[i])
            dep = int(model.jnt_qposadr[j1])
            drv = int(model.jnt_qposadr[j2]) if j2 >= 0 else -1
            rows.append((dep, drv, model.eq_data[i, :5].copy()))
        deps = {r[0] for r in rows}
        ordered, done = [], set()
        while rows:  # topological order: drivers first
            ready = [r for r in rows if r[1] < 0 or r[1] not in deps or r[1] in done]
            if not ready:
                raise ValueError("joint couplings form a cycle")
            for r in ready:
                ordered.append(r)
                done.add(r[0])
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
        )

    def apply(self, qpos: np.ndarray, qvel_map: np.ndarray | None = None,
              qvel: np.ndarray | None = None) -> None:
        """Set every dependent joint from its driver, in place.

        With ``qvel`` (and ``qvel_map``: qpos address → dof address for hinge and
        slide joints) the dependent velocities are set from the chain rule too.
        """
        powers = np.arange(5)
        for k in range(len(self.dep)):
            d, s, c = self.dep[k], self.drv[k], self.coef[k]
            x = qpos[s] - self.drv0[k] if s >= 0 else 0.0
            qpos[d] = self.dep0[k] + float(np.sum(c * x**powers))
            if qvel is not None and qvel_map is not None:
                if s >= 0:
                    slope = float(np.sum(c[1:] * powers[1:] * x ** (powers[1:] - 1)))
                    qvel[qvel_map[d]] = slope * qvel[qvel_map[s]]
                else:
                    qvel[qvel_map[d]] = 0.0

    def residual(self, qpos: np.ndarray) -> np.ndarray:
        """Constraint violation of each coupling for ``qpos`` (rad or m)."""
        powers = np.arange(5)
        x = np.where(self.drv >= 0, qpos[np.maximum(self.drv, 0)] - self.drv0, 0.0)
        return qpos[self.dep] - self.dep0 - np.sum(self.coef * x[:, None] ** powers, axis=1)


@dataclass(frozen=True)
class BodyHandles:
    """Indices into a compiled model that tasks use; resolved once per model.

    Body ids index ``xpos``/``xmat``/``xipos``/``cvel``; ``*_qpos`` are qpos
    addresses; ``joint_qpos`` / ``joint_dof`` are the humanoid's non-root
    joints. Task props with joints of their own (a door hinge, a free cube)
    come after the humanoid: its state is ``qpos[:nq_body]``, ``qvel[:nv_body]``.
    """

    nq: int
    nv: int
    nu: int
    nq_body: int
    nv_body: int
    bodies: dict[str, int]
    joints_qpos: dict[str, int]
    joint_qpos: np.ndarray
    joint_dof: np.ndarray
    qvel_of_qpos: np.ndarray  # qpos address -> dof address (hinge/slide); -1 otherwise
    body_tree: np.ndarray  # ids of the bodies that belong to the humanoid
    body_mass: np.ndarray  # masses of body_tree (kg)
    total_mass: float
    touch_adr: np.ndarray
    muscle_ids: np.ndarray
    muscle_act_adr: np.ndarray  # index of each muscle's activation in ``act``
    muscle_force_nominal: np.ndarray  # peak isometric force F0 (N), as compiled
    muscle_names: tuple[str, ...]
    couplings: JointCouplings
    forward_local: np.ndarray = field(default_factory=lambda: FORWARD_LOCAL.copy())

    @classmethod
    def from_model(cls, model: mujoco.MjModel) -> "BodyHandles":
        bodies = _ids(model, mujoco.mjtObj.mjOBJ_BODY, BODY_NAMES)
        jids = _ids(model, mujoco.mjtObj.mjOBJ_JOINT, JOINT_NAMES)
        root_joint = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_JOINT, "root")
        if root_joint < 0 or int(model.jnt_type[root_joint]) != int(mujoco.mjtJoint.mjJNT_FREE):
            raise ValueError("MyoFullBody must have a free joint named 'root'")
        root = bodies["root"]
        tree = np.array([b for b in range(model.nbody) if model.body_rootid[b] == root], dtype=np.int64)
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
            raise ValueError("the humanoid's joints must come first in the model (add props after it)")
        n_body = len(body_joints)  # the humanoid's coordinates end where the first prop joint's begin
        nq_body = int(model.jnt_qposadr[n_body]) if n_body < model.njnt else model.nq
        nv_body = int(model.jnt_dofadr[n_body]) if n_body < model.njnt else model.nv
        touch = []
        for name in TOUCH_SENSORS:
            sid = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_SENSOR, name)
            if sid < 0:
                raise ValueError(f"model has no touch sensor {name!r}")
            touch.append(model.sensor_adr[sid])
        if model.nu != N_MUSCLES:
            raise ValueError(f"expected {N_MUSCLES} actuators (all muscles), model has {model.nu}")
        muscles = np.array(
            [i for i in range(model.nu) if int(model.actuator_gaintype[i]) == int(mujoco.mjtGain.mjGAIN_MUSCLE)],
            dtype=np.int64,
        )
        return cls(
            nq=model.nq,
            nv=model.nv,
            nu=model.nu,
            nq_body=nq_body,
            nv_body=nv_body,
            bodies=bodies,
            joints_qpos={k: int(model.jnt_qposadr[v]) for k, v in jids.items()},
            joint_qpos=np.array(jq, dtype=np.int64),
            joint_dof=np.array(jd, dtype=np.int64),
            qvel_of_qpos=qvel_of_qpos,
            body_tree=tree,
            body_mass=model.body_mass[tree].copy(),
            total_mass=float(model.body_mass[tree].sum()),
            touch_adr=np.array(touch, dtype=np.int64),
            muscle_ids=muscles,
            muscle_act_adr=model.actuator_actadr[muscles].astype(np.int64),
            muscle_force_nominal=model.actuator_gainprm[muscles, 2].copy(),
            muscle_names=tuple(model.actuator(int(i)).name for i in muscles),
            couplings=JointCouplings.from_model(model),
        )


def default_qpos(model: mujoco.MjModel, handles: BodyHandles) -> np.ndarray:
    """The neutral standing configuration, facing +x, couplings satisfied.

    The shipped ``qpos0`` violates the knee couplings by up to 5 cm / 0.05 rad
    (their polynomials have non-zero constant terms); this resolves them.
    """
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
    smallest one minus ``clearance_m``. Returns the shift applied (m).
    """
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

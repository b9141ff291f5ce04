"""Mouse right-forelimb musculoskeletal model (4 hinge joints, 9 Hill muscles).

Our own model, built programmatically with :class:`mujoco.MjSpec` (no XML text,
no meshes). Its numbers are facts taken from the authors' published model
(Track-MJX ``mouse_arm.xml``, Leonardis et al. 2025, BSD-3-Clause): body
offsets and orientations, joint axes and ranges, joint defaults, inertials,
muscle-path site positions and muscle parameters. The bone meshes are replaced
by capsules and spheres that are visual only (``contype = conaffinity = 0``,
and they carry no mass: every inertial is explicit).

Kinematic tree (lengths in metres, the model is ~1 cm across)::

    world
    └── ground                     fixed; frame of the 3D keypoints
        └── clavicle               fixed
            └── scapula            fixed        keypoint "Shoulder"
                └── humerus        sh_elv (y), sh_extension (z), sh_rotation (x)
                    └── ulna       elbow_joint (x)  keypoint "Elbow"
                        ├── radius
                        └── wrist_body              keypoint "Wrist"

Differences from the reference model, on purpose:

- The elbow hinge is named ``elbow_joint`` (the name used by the registered
  clips) instead of ``elbow``.
- ``wrist_body`` sits at ``WRIST_POS_IN_ULNA`` = (-1.65, 6.7, 0.7) mm in the ulna
  frame, not at the reference's (-2.0, 6.5, 0.5) mm: the 46 registered clips
  were produced with a registration model whose wrist is there (measured as
  ``R_ulna^T (x_wrist - x_ulna)`` over all frames of all clips; constant to
  ~6e-9 m), and the clips' keypoints and marker offsets refer to it.
  ``radius`` (0.35, 0.2, 0.2) mm agrees between the two.
- The registration model also had an ``elbow`` body coincident with the ulna
  (same position and orientation); here the Elbow keypoint is attached to
  ``ulna`` directly, which is equivalent.
- Bodies without joints (clavicle, scapula) carry no mass (they are welded to
  the world, so their mass never enters the dynamics); ``radius`` carries the
  inertial the reference compiles from its bone mesh.

Simulation options (our choices, documented):

- ``timestep`` defaults to 1.25 ms, the physics step of the paper's mouse
  imitation environment (the reference XML itself says 1 ms).
- Integrator RK4, solver CG with 30 iterations and 30 line-search iterations,
  gravity -9.81 m/s^2 along world z: as in the reference model. RK4 is kept
  because the limb is tiny (moving masses ~2 mg to 0.7 g, inertias ~1e-8
  kg m^2) and stiff against the soft joint limits.
- Joint defaults as in the reference: soft limits ``solreflimit = (0.01, 1)``,
  ``solimplimit = (0.99, 0.9999, 0)``, armature 4e-8, damping 1e-5,
  stiffness 1e-12.
- No contacts: the limb has no collision geometry.
- Muscles: MuJoCo ``muscle`` actuators on spatial tendons, ``ctrlrange`` 0..1,
  activation time constants (10 ms, 40 ms), ``lmin`` 0.5, ``lmax`` 1.6,
  ``vmax`` 15 L0/s, ``fpmax`` 1.3, ``fvmax`` 1.2, and per-muscle peak force and
  operating range from the reference. Muscle ``lengthrange`` is not simulated
  at compile time; it is computed here as the exact minimum and maximum of
  each tendon's length over the box of joint ranges (grid search then bounded
  L-BFGS-B with the tendon Jacobian), which matches the reference's
  simulation-based values to ~1e-8 m.

Keypoints: three markers, each the origin of a keypoint body plus a per-clip
offset expressed in that body's frame (``marker = x_body + R_body @ offset``,
the convention of the registered clips' ``marker_sites``; verified to 1e-9 m).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypedDict

import mujoco
import numpy as np

from mskbench.body.base import Body

MODEL_NAME = "mouse_forelimb"

#: Hinge joints, in the order of the clips' ``qpos`` columns.
JOINT_NAMES: tuple[str, ...] = ("sh_elv", "sh_extension", "sh_rotation", "elbow_joint")
#: Muscle actuators (and their tendons, which share the names), actuator order.
MUSCLE_NAMES: tuple[str, ...] = (
    "Pec_C",
    "Lat",
    "PD",
    "AD",
    "MD",
    "Triceps_Lateral",
    "Triceps_Long",
    "Brachialis",
    "Biceps_Long",
)
#: Tracked keypoints, in the order of the clips' keypoint arrays.
KEYPOINT_NAMES: tuple[str, ...] = ("Shoulder", "Elbow", "Wrist")
#: Body each keypoint is attached to (offsets are expressed in its frame).
KEYPOINT_BODIES: dict[str, str] = {"Shoulder": "scapula", "Elbow": "ulna", "Wrist": "wrist_body"}
#: Bodies of the arm, parent before child.
BODY_NAMES: tuple[str, ...] = ("ground", "clavicle", "scapula", "humerus", "ulna", "radius", "wrist_body")

#: Physics step of the paper's mouse environment (s).
DEFAULT_TIMESTEP_S = 0.00125

#: Wrist position in the ulna frame (m), measured from the registered clips.
WRIST_POS_IN_ULNA = (-0.00165, 0.0067, 0.0007)


# ---------------------------------------------------------------------------
# Facts from the reference model (positions in m, angles in degrees).
# ---------------------------------------------------------------------------

# name: (parent, pos, euler xyz in degrees)
_BODIES: dict[str, tuple[str, tuple[float, float, float], tuple[float, float, float]]] = {
    "ground": ("world", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
    "clavicle": ("ground", (0.0, 0.0, 0.0), (0.0, 0.0, 0.0)),
    "scapula": ("clavicle", (-0.0001, -0.0001, 0.0005), (-30.0, -15.0, 0.0)),
    "humerus": ("scapula", (0.0, 0.0007, -0.0002), (-15.0, 0.0, 0.0)),
    "ulna": ("humerus", (-0.0005, 0.0003, -0.0068), (-15.0, 0.0, 0.0)),
    "radius": ("ulna", (0.00035, 0.0002, 0.0002), (0.0, 0.0, 0.0)),
    "wrist_body": ("ulna", WRIST_POS_IN_ULNA, (0.0, 0.0, 0.0)),
}

# body: (mass kg, ipos, iquat, diaginertia)
_INERTIALS: dict[str, tuple[float, tuple, tuple, tuple]] = {
    "humerus": (0.0001258, (-0.0005, 0.0003, -0.004), (1.0, 0.0, 0.0, 0.0), (3e-8, 3e-8, 3e-8)),
    "ulna": (0.0001258, (-0.0009, 0.004, 0.0005), (1.0, 0.0, 0.0, 0.0), (3e-8, 3e-8, 3e-8)),
    # The reference derives this one from its radius mesh (density 1000).
    "radius": (
        1.799319e-06,
        (-0.000908, 0.003903, 0.000462),
        (0.649972, 0.751394, 0.057913, 0.097926),
        (8.453285e-12, 8.397000e-12, 9.218016e-14),
    ),
    "wrist_body": (0.00071, (0.0, 0.0, 0.0), (1.0, 0.0, 0.0, 0.0), (7e-8, 7e-8, 7e-8)),
}

# joint: (body, axis, range in degrees)
_JOINTS: dict[str, tuple[str, tuple[float, float, float], tuple[float, float]]] = {
    "sh_elv": ("humerus", (0.0, 1.0, 0.0), (-70.0, 0.0)),
    "sh_extension": ("humerus", (0.0, 0.0, 1.0), (-70.0, 40.0)),
    "sh_rotation": ("humerus", (1.0, 0.0, 0.0), (-25.0, 89.0)),
    "elbow_joint": ("ulna", (1.0, 0.0, 0.0), (-80.0, 90.0)),
}


class _JointDefaults(TypedDict):
    solref_limit: tuple[float, float]
    solimp_limit: tuple[float, float, float, float, float]
    armature: float
    damping: float
    stiffness: float


_JOINT_DEFAULTS: _JointDefaults = {
    "solref_limit": (0.01, 1.0),
    "solimp_limit": (0.99, 0.9999, 0.0, 0.5, 2.0),
    "armature": 4e-8,
    "damping": 1e-5,
    "stiffness": 1e-12,
}

# Muscle-path sites: name -> (body, pos).
_SITES: dict[str, tuple[str, tuple[float, float, float]]] = {
    "Pec_C_Origin": ("clavicle", (-0.002, 0.0, 0.0005)),
    "AD_Origin": ("clavicle", (0.0, 0.0013, 0.0007)),
    "Lat_Origin": ("scapula", (-0.0005, -0.004, -0.0035)),
    "PD_Origin": ("scapula", (0.0004, -0.0007, 0.0006)),
    "MD_Origin": ("scapula", (0.0007, 0.0005, 0.0005)),
    "Triceps_Long_Origin": ("scapula", (0.0, -0.0003, -0.0005)),
    "Biceps_Long_Origin": ("scapula", (0.0001, 0.0003, 0.0007)),
    "Pec_C_P2": ("humerus", (-0.0005, 0.0009, -0.0003)),
    "Pec_C_Insertion": ("humerus", (0.0, 0.001, -0.0005)),
    "Lat_P2": ("humerus", (-0.001, 0.0, -0.0006)),
    "Lat_Insertion": ("humerus", (-0.0004, 0.0008, -0.0006)),
    "AD_P2": ("humerus", (0.0003, 0.0012, -0.0003)),
    "AD_Insertion": ("humerus", (0.0003, 0.0012, -0.0021)),
    "PD_P2": ("humerus", (0.0003, -0.0003, -0.0006)),
    "PD_Insertion": ("humerus", (0.0003, 0.001, -0.001)),
    "MD_P2": ("humerus", (0.0008, 0.0003, -0.0003)),
    "MD_Insertion": ("humerus", (0.0003, 0.001, -0.0016)),
    "Triceps_Lateral_Origin": ("humerus", (0.0, 0.0, -0.0018)),
    "Brachialis_Origin": ("humerus", (-0.0005, 0.0005, -0.0045)),
    "Biceps_Long_P2": ("humerus", (-0.0002, 0.0009, 0.0005)),
    "Biceps_Long_P3": ("humerus", (-0.0002, 0.0012, -0.0005)),
    "Triceps_Long_Insertion": ("ulna", (0.0002, -0.0008, 0.0002)),
    "Triceps_Lateral_Insertion": ("ulna", (0.0002, -0.0008, 0.0002)),
    "Brachialis_Insertion": ("ulna", (-0.0002, 0.001, 0.0001)),
    "Biceps_Long_Insertion": ("radius", (-0.0002, 0.0001, 0.0001)),
}

# Muscle: (site path from insertion to origin, peak force N, operating range in L0).
_MUSCLES: dict[str, tuple[tuple[str, ...], float, tuple[float, float]]] = {
    "Pec_C": (("Pec_C_Insertion", "Pec_C_P2", "Pec_C_Origin"), 0.8, (0.5, 1.2)),
    "Lat": (("Lat_Insertion", "Lat_P2", "Lat_Origin"), 0.8, (0.75, 1.05)),
    "PD": (("PD_Insertion", "PD_P2", "PD_Origin"), 0.87, (0.6, 1.1)),
    "AD": (("AD_Insertion", "AD_P2", "AD_Origin"), 1.2, (0.5, 1.0)),
    "MD": (("MD_Insertion", "MD_P2", "MD_Origin"), 0.9, (0.55, 1.2)),
    "Triceps_Lateral": (("Triceps_Lateral_Insertion", "Triceps_Lateral_Origin"), 0.6, (0.82, 1.05)),
    "Triceps_Long": (("Triceps_Long_Insertion", "Triceps_Long_Origin"), 0.9, (0.7, 1.1)),
    "Brachialis": (("Brachialis_Insertion", "Brachialis_Origin"), 0.6, (0.7, 1.2)),
    "Biceps_Long": (
        ("Biceps_Long_Insertion", "Biceps_Long_P3", "Biceps_Long_P2", "Biceps_Long_Origin"),
        0.52,
        (0.7, 1.05),
    ),
}


class _MuscleCommon(TypedDict):
    timeconst: tuple[float, float]
    lmin: float
    lmax: float
    vmax: float
    fpmax: float
    fvmax: float


_MUSCLE_COMMON: _MuscleCommon = {
    "timeconst": (0.01, 0.04),
    "lmin": 0.5,
    "lmax": 1.6,
    "vmax": 15.0,
    "fpmax": 1.3,
    "fvmax": 1.2,
}
_TENDON_WIDTH_M = 0.0001

# Visual geometry (ours): capsules between joint centres, in the body frame.
_BONE_RADIUS_M = 0.00025
_VISUALS: dict[str, list[tuple[str, tuple[float, ...]]]] = {
    "clavicle": [("capsule", (0.0, 0.0, 0.0005, -0.002, 0.0, 0.0005))],
    "scapula": [("capsule", (0.0, 0.0, 0.0, -0.0005, -0.004, -0.0035))],
    "humerus": [("capsule", (0.0, 0.0, 0.0, -0.0005, 0.0003, -0.0068))],
    "ulna": [("capsule", (0.0, 0.0, 0.0) + WRIST_POS_IN_ULNA)],
    # Towards the wrist: WRIST_POS_IN_ULNA minus the radius offset (0.35, 0.2, 0.2) mm.
    "radius": [("capsule", (0.0, 0.0, 0.0, -0.002, 0.0065, 0.0005))],
    "wrist_body": [("sphere", (0.0, 0.003, 0.0))],
}
_RGBA_BONE = (0.85, 0.82, 0.75, 1.0)
_RGBA_KEYPOINT = (0.2, 0.8, 0.2, 0.9)
_RGBA_MUSCLE = (0.8, 0.1, 0.1, 0.6)

#: Camera looking at the arm from the side (pose from the reference model).
_CAMERA = ("side", (0.04, 0.004, 0.037), (0.6532815, 0.2705981, 0.2705981, 0.6532815), 20.0)


def euler_xyz_deg_to_quat(euler_deg) -> np.ndarray:
    """Quaternion (w, x, y, z) of intrinsic x-y-z Euler angles in degrees (MJCF default)."""
    quat = np.array([1.0, 0.0, 0.0, 0.0])
    for axis, angle in zip(np.eye(3), np.radians(np.asarray(euler_deg, dtype=float))):
        q_axis = np.concatenate([[np.cos(angle / 2)], np.sin(angle / 2) * axis])
        out = np.zeros(4)
        mujoco.mju_mulQuat(out, quat, q_axis)
        quat = out
    return quat


def keypoint_site_name(keypoint: str) -> str:
    """Name of the rendering site of ``keypoint`` (at the keypoint body's origin)."""
    return f"kp_{keypoint}"


def _build_spec(timestep: float) -> mujoco.MjSpec:
    spec = mujoco.MjSpec()
    spec.modelname = MODEL_NAME
    spec.compiler.degree = False  # every angle below is in radians
    spec.compiler.autolimits = True
    spec.compiler.inertiafromgeom = mujoco.mjtInertiaFromGeom.mjINERTIAFROMGEOM_FALSE
    spec.compiler.LRopt.mode = mujoco.mjtLRMode.mjLRMODE_NONE  # set explicitly below

    spec.option.timestep = float(timestep)
    spec.option.integrator = mujoco.mjtIntegrator.mjINT_RK4
    spec.option.solver = mujoco.mjtSolver.mjSOL_CG
    spec.option.iterations = 30
    spec.option.ls_iterations = 30
    spec.option.gravity = [0.0, 0.0, -9.81]

    bodies: dict[str, mujoco.MjsBody] = {"world": spec.worldbody}
    for name, (parent, pos, euler) in _BODIES.items():
        body = bodies[parent].add_body(name=name, pos=list(pos), quat=list(euler_xyz_deg_to_quat(euler)))
        if name in _INERTIALS:
            mass, ipos, iquat, inertia = _INERTIALS[name]
            body.mass = mass
            body.ipos = list(ipos)
            body.iquat = list(iquat)
            body.inertia = list(inertia)
            body.explicitinertial = True
        bodies[name] = body

    for name, (body, axis, rng) in _JOINTS.items():
        joint = bodies[body].add_joint(
            name=name,
            type=mujoco.mjtJoint.mjJNT_HINGE,
            axis=list(axis),
            range=list(np.radians(rng)),
            limited=mujoco.mjtLimited.mjLIMITED_TRUE,
            solref_limit=list(_JOINT_DEFAULTS["solref_limit"]),
            solimp_limit=list(_JOINT_DEFAULTS["solimp_limit"]),
            armature=_JOINT_DEFAULTS["armature"],
        )
        # Scalars in MuJoCo 3.x, polynomial coefficient arrays in 4.x: set the linear term.
        for attr in ("damping", "stiffness"):
            current = np.atleast_1d(np.array(getattr(joint, attr), dtype=float))
            current[:] = 0.0
            current[0] = _JOINT_DEFAULTS[attr]
            setattr(joint, attr, current if np.ndim(getattr(joint, attr)) else float(current[0]))

    for body, shapes in _VISUALS.items():
        for kind, data in shapes:
            geom = bodies[body].add_geom(contype=0, conaffinity=0, rgba=list(_RGBA_BONE), group=1)
            if kind == "capsule":
                geom.type = mujoco.mjtGeom.mjGEOM_CAPSULE
                geom.fromto = list(data)
                geom.size = [_BONE_RADIUS_M, 0.0, 0.0]
            else:
                geom.type = mujoco.mjtGeom.mjGEOM_SPHERE
                geom.pos = list(data)
                geom.size = [0.0003, 0.0, 0.0]

    for keypoint, body in KEYPOINT_BODIES.items():
        bodies[body].add_site(
            name=keypoint_site_name(keypoint),
            pos=[0.0, 0.0, 0.0],
            size=[0.0003, 0.0, 0.0],
            rgba=list(_RGBA_KEYPOINT),
            group=2,
        )
    for name, (body, pos) in _SITES.items():
        bodies[body].add_site(name=name, pos=list(pos), size=[0.0001, 0.0, 0.0], rgba=[0.1, 0.2, 0.6, 0.5], group=3)

    cam_name, cam_pos, cam_quat, cam_fovy = _CAMERA
    bodies["ground"].add_camera(name=cam_name, pos=list(cam_pos), quat=list(cam_quat), fovy=cam_fovy)

    for name, (path, force, op_range) in _MUSCLES.items():
        tendon = spec.add_tendon(name=name, width=_TENDON_WIDTH_M, rgba=list(_RGBA_MUSCLE))
        for site in path:
            tendon.wrap_site(site)
        act = spec.add_actuator(name=name, target=name, trntype=mujoco.mjtTrn.mjTRN_TENDON)
        act.set_to_muscle(
            timeconst=list(_MUSCLE_COMMON["timeconst"]),
            tausmooth=0.0,
            range=list(op_range),
            force=force,
            scale=200.0,
            lmin=_MUSCLE_COMMON["lmin"],
            lmax=_MUSCLE_COMMON["lmax"],
            vmax=_MUSCLE_COMMON["vmax"],
            fpmax=_MUSCLE_COMMON["fpmax"],
            fvmax=_MUSCLE_COMMON["fvmax"],
        )
        act.ctrllimited = mujoco.mjtLimited.mjLIMITED_TRUE
        act.ctrlrange = [0.0, 1.0]
    return spec


def tendon_jacobian(model: mujoco.MjModel, data: mujoco.MjData) -> np.ndarray:
    """Dense tendon Jacobian d(length)/d(qvel), (ntendon, nv), after ``mj_fwdPosition``.

    MuJoCo >= 3.3 stores ``ten_J`` in compressed-row form (structure in
    ``model.ten_J_rownnz/rowadr/colind``); older versions store it dense.
    """
    dense = np.zeros((model.ntendon, model.nv))
    if hasattr(model, "ten_J_rownnz"):
        mujoco.mju_sparse2dense(
            dense, np.asarray(data.ten_J).reshape(-1), model.ten_J_rownnz, model.ten_J_rowadr, model.ten_J_colind
        )
    else:  # pragma: no cover - older MuJoCo
        dense[:] = np.asarray(data.ten_J).reshape(model.ntendon, model.nv)
    return dense


def tendon_length_ranges(model: mujoco.MjModel, grid_points: int = 9, n_refine: int = 3) -> np.ndarray:
    """Exact (min, max) length (m) of every tendon over the box of joint ranges, (ntendon, 2).

    A grid of ``grid_points`` per joint is searched, then the ``n_refine`` best
    grid points for each extreme are polished with bounded L-BFGS-B using the
    tendon Jacobian as gradient. Requires all joints to be limited hinges/slides.
    """
    from scipy.optimize import minimize

    if model.nq != model.nv or model.njnt != model.nq:
        raise ValueError("tendon_length_ranges needs a model made only of hinge/slide joints")
    if not np.all(model.jnt_limited):
        raise ValueError("tendon_length_ranges needs every joint limited")
    data = mujoco.MjData(model)
    lo, hi = model.jnt_range[:, 0].copy(), model.jnt_range[:, 1].copy()
    grid = np.array(list(itertools.product(*[np.linspace(a, b, grid_points) for a, b in zip(lo, hi)])))
    lengths = np.empty((len(grid), model.ntendon))
    for i, q in enumerate(grid):
        data.qpos[:] = q
        mujoco.mj_fwdPosition(model, data)
        lengths[i] = data.ten_length

    def objective(q: np.ndarray, k: int, sign: float) -> tuple[float, np.ndarray]:
        data.qpos[:] = q
        mujoco.mj_fwdPosition(model, data)
        # Scaled to mm so that L-BFGS-B's absolute tolerances are meaningful.
        return sign * 1e3 * data.ten_length[k], sign * 1e3 * tendon_jacobian(model, data)[k]

    out = np.empty((model.ntendon, 2))
    for k in range(model.ntendon):
        for col, sign in ((0, 1.0), (1, -1.0)):
            best = float(np.min(sign * lengths[:, k])) * 1e3
            for i in np.argsort(sign * lengths[:, k])[:n_refine]:
                res = minimize(objective, grid[i], args=(k, sign), jac=True, bounds=list(zip(lo, hi)),
                               method="L-BFGS-B", options={"ftol": 1e-14, "gtol": 1e-12})
                best = min(best, float(res.fun))
            out[k, col] = sign * best * 1e-3
    return out


@functools.lru_cache(maxsize=1)
def _length_ranges() -> np.ndarray:
    """The muscles' tendon length ranges (m), (n_tendons, 2): kinematics only, computed once per process."""
    return tendon_length_ranges(_build_spec(DEFAULT_TIMESTEP_S).compile())


def build_mouse_spec(timestep: float = DEFAULT_TIMESTEP_S) -> mujoco.MjSpec:
    """The forelimb as an :class:`mujoco.MjSpec`, muscle length ranges already set."""
    if not (np.isfinite(timestep) and timestep > 0):
        raise ValueError(f"timestep must be a positive number of seconds, got {timestep!r}")
    spec = _build_spec(timestep)
    ranges = _length_ranges()
    for tendon_id, name in enumerate(_MUSCLES):  # tendons in _MUSCLES order, each pulled by its namesake
        spec.actuator(name).lengthrange = list(ranges[tendon_id])
    return spec


#: The forelimb as a :class:`~mskbench.body.base.Body`: 1.25 ms physics steps, 2 per control step
#: (the paper's mouse environment), welded to the world at ``ground``.
MOUSE_FORELIMB = Body(
    name=MODEL_NAME,
    load_spec=build_mouse_spec,
    timestep_s=DEFAULT_TIMESTEP_S,
    frame_skip=2,
    n_muscles=len(MUSCLE_NAMES),
    root="ground",
    parts={k.lower(): v for k, v in KEYPOINT_BODIES.items()},
    observation=("qpos", "qvel", "muscle_length", "muscle_velocity", "muscle_activation"),
    camera="side",
)


def build_mouse_model(
    add_props: Callable[[mujoco.MjSpec], None] | None = None,
    timestep: float = DEFAULT_TIMESTEP_S,
) -> mujoco.MjModel:
    """Compile the mouse forelimb model.

    ``add_props(spec)`` may add bodies, geoms, sites, cameras or mocap bodies
    (e.g. a reach target on ``spec.body("ground")``) before compilation; it must
    not add joints to the arm. ``timestep`` is the physics step in seconds
    (default 1.25 ms, the paper's).
    """
    return MOUSE_FORELIMB.build_model(add_props, timestep_s=timestep)


def _id(model: mujoco.MjModel, kind: mujoco.mjtObj, name: str) -> int:
    idx = mujoco.mj_name2id(model, kind, name)
    if idx < 0:
        raise ValueError(f"model has no {kind.name.removeprefix('mjOBJ_').lower()} named {name!r}")
    return int(idx)


@dataclass(frozen=True)
class MouseHandles:
    """Index handles into a compiled mouse forelimb model.

    ``qpos_adr``/``dof_adr`` follow ``JOINT_NAMES``, ``muscle_ids`` and
    ``tendon_ids`` follow ``MUSCLE_NAMES``, ``keypoint_body_ids`` and
    ``keypoint_site_ids`` follow ``KEYPOINT_NAMES``.
    """

    joint_ids: np.ndarray
    qpos_adr: np.ndarray
    dof_adr: np.ndarray
    joint_range: np.ndarray  # (4, 2) rad
    muscle_ids: np.ndarray
    tendon_ids: np.ndarray
    keypoint_body_ids: np.ndarray
    keypoint_site_ids: np.ndarray

    @classmethod
    def from_model(cls, model: mujoco.MjModel) -> "MouseHandles":
        joint_ids = np.array([_id(model, mujoco.mjtObj.mjOBJ_JOINT, n) for n in JOINT_NAMES])
        for name, j in zip(JOINT_NAMES, joint_ids):
            if model.jnt_type[j] != mujoco.mjtJoint.mjJNT_HINGE:
                raise ValueError(f"joint {name!r} must be a hinge")
        return cls(
            joint_ids=joint_ids,
            qpos_adr=model.jnt_qposadr[joint_ids].copy(),
            dof_adr=model.jnt_dofadr[joint_ids].copy(),
            joint_range=model.jnt_range[joint_ids].copy(),
            muscle_ids=np.array([_id(model, mujoco.mjtObj.mjOBJ_ACTUATOR, n) for n in MUSCLE_NAMES]),
            tendon_ids=np.array([_id(model, mujoco.mjtObj.mjOBJ_TENDON, n) for n in MUSCLE_NAMES]),
            keypoint_body_ids=np.array(
                [_id(model, mujoco.mjtObj.mjOBJ_BODY, KEYPOINT_BODIES[k]) for k in KEYPOINT_NAMES]
            ),
            keypoint_site_ids=np.array(
                [_id(model, mujoco.mjtObj.mjOBJ_SITE, keypoint_site_name(k)) for k in KEYPOINT_NAMES]
            ),
        )


def _as_offsets(offsets) -> np.ndarray:
    if offsets is None:
        return np.zeros((len(KEYPOINT_NAMES), 3))
    offsets = np.asarray(offsets, dtype=float)
    if offsets.shape != (len(KEYPOINT_NAMES), 3):
        raise ValueError(f"offsets must have shape (3, 3) (keypoint x xyz, m), got {offsets.shape}")
    return offsets


def forward_keypoints(
    model: mujoco.MjModel,
    data: mujoco.MjData,
    qpos,
    offsets=None,
    handles: MouseHandles | None = None,
) -> np.ndarray:
    """World positions (m) of the three keypoints for joint angles ``qpos`` (4,), shape (3, 3).

    ``offsets`` (3, 3) are in each keypoint body's frame (``None`` = zeros):
    ``keypoint_k = x_body_k + R_body_k @ offsets[k]``. Runs ``mj_kinematics`` on
    ``data`` (its ``qpos`` is overwritten at the arm's joints).
    """
    handles = MouseHandles.from_model(model) if handles is None else handles
    qpos = np.asarray(qpos, dtype=float)
    if qpos.shape != (len(JOINT_NAMES),):
        raise ValueError(f"qpos must have shape (4,) ordered {JOINT_NAMES}, got {qpos.shape}")
    offsets = _as_offsets(offsets)
    data.qpos[handles.qpos_adr] = qpos
    mujoco.mj_kinematics(model, data)
    ids = handles.keypoint_body_ids
    rot = data.xmat[ids].reshape(-1, 3, 3)
    return data.xpos[ids] + np.einsum("kij,kj->ki", rot, offsets)


def keypoint_trajectory(
    model: mujoco.MjModel,
    qpos,
    offsets=None,
    data: mujoco.MjData | None = None,
    handles: MouseHandles | None = None,
) -> np.ndarray:
    """Keypoints (T, 3, 3) in m for a joint trajectory ``qpos`` (T, 4)."""
    qpos = np.asarray(qpos, dtype=float)
    if qpos.ndim != 2 or qpos.shape[1] != len(JOINT_NAMES):
        raise ValueError(f"qpos must have shape (T, 4) ordered {JOINT_NAMES}, got {qpos.shape}")
    data = mujoco.MjData(model) if data is None else data
    handles = MouseHandles.from_model(model) if handles is None else handles
    offsets = _as_offsets(offsets)
    if len(qpos) == 0:
        return np.zeros((0, len(KEYPOINT_NAMES), 3))
    return np.stack([forward_keypoints(model, data, q, offsets, handles) for q in qpos])


def set_keypoint_sites(model: mujoco.MjModel, offsets, handles: MouseHandles | None = None) -> None:
    """Move the keypoint rendering sites to ``offsets`` (3, 3) so they draw the markers."""
    handles = MouseHandles.from_model(model) if handles is None else handles
    ids = handles.keypoint_site_ids
    model.site_pos[ids] = _as_offsets(offsets)
    # The compiler flags sites at their body's origin as "same frame" and then skips
    # their transform; the sites no longer are.
    model.site_sameframe[ids] = mujoco.mjtSameFrame.mjSAMEFRAME_NONE

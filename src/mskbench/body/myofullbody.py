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

import mujoco
import numpy as np

from mskbench.body.base import Body

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
#: The fingers' joints (thumb: cmc, mp, ip; fingers 2-5: mcp flexion/abduction, pm, md), both hands.
FINGER_JOINTS = tuple(f"{j}_{side}" for side in ("r", "l") for j in (
    "cmc_flexion", "cmc_abduction", "mp_flexion", "ip_flexion",
    *(f"{kind}{k}_{part}" for k in range(2, 6) for kind, part in (("mcp", "flexion"), ("mcp", "abduction"),
                                                                   ("pm", "flexion"), ("md", "flexion")))))
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


#: MyoFullBody as a :class:`~mskbench.body.base.Body`: 1 ms physics steps, 10 per control step.
MYOFULLBODY = Body(
    name=MODEL_NAME,
    load_spec=load_spec,
    timestep_s=0.001,
    frame_skip=10,
    n_muscles=N_MUSCLES,
    root=BODY_NAMES["root"],
    free_joint="root",
    parts={k: v for k, v in BODY_NAMES.items() if k != "root"},
    joints=JOINT_NAMES,
    touch_sensors=TOUCH_SENSORS,
    forward_local=tuple(FORWARD_LOCAL),
    memory_bytes=DEFAULT_MEMORY_BYTES,
    camera="track",
    minor_joints=FINGER_JOINTS,
)


def build_model(add_props=None, memory_bytes: int = DEFAULT_MEMORY_BYTES) -> mujoco.MjModel:
    """Compile MyoFullBody plus a task's props (:meth:`Body.build_model <mskbench.body.base.Body.build_model>`)."""
    return MYOFULLBODY.build_model(add_props, memory_bytes=memory_bytes)

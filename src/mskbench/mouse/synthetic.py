"""Synthetic reaching clips with known muscle activations.

Each clip is produced by driving our forelimb model with a feedback
controller that reaches a random target posture, so the kinematics are
physically consistent with the recorded activations — which then serve as
ground-truth "EMG" for the EMG-fit and simplex metrics.

Controller (per control step of 2.5 ms, physics 1.25 ms):

1. Desired motion: a minimum-jerk joint trajectory from the start posture to
   the target over ``reach_s`` seconds, then hold.
2. Desired acceleration ``q̈* = q̈_mj + Kp (q_mj − q) + Kd (q̇_mj − q̇)``; the
   generalised force it needs, ``τ*``, from MuJoCo's inverse dynamics.
3. Muscle torques are affine in activation, ``τ(a) = B a + c`` (``c`` passive,
   ``B`` from unit activations at the current state); the activations solve
   ``min ‖B a + c − τ*‖² + λ ‖a‖²`` s.t. ``0 ≤ a ≤ 1`` (bounded least squares).
4. The excitation sent to the muscles is that ``a``; the model's activation
   dynamics filter it, and the *actual* activations are recorded.

Frames are recorded at ``fps`` (200 Hz): joint angles, their velocities,
keypoints (forward kinematics with the given marker offsets, plus Gaussian
noise of ``keypoint_noise_m``), the actual activations (``activations``) and
the same values as EMG channels named after the muscles.
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np
from scipy.optimize import lsq_linear

from mskbench.mouse.clips import Clip


@dataclass(frozen=True)
class SyntheticConfig:
    n_frames: int = 100
    fps: float = 200.0
    physics_dt_s: float = 0.00125
    reach_s: float = 0.25
    kp: float = 900.0
    kd: float = 60.0
    effort_weight: float = 1e-4
    target_fraction: float = 0.6  # targets within this central fraction of each joint range
    keypoint_noise_m: float = 1e-4


def _min_jerk(q0, q1, t, duration):
    s = np.clip(t / duration, 0.0, 1.0)
    pos = 10 * s**3 - 15 * s**4 + 6 * s**5
    vel = (30 * s**2 - 60 * s**3 + 30 * s**4) / duration
    acc = (60 * s - 180 * s**2 + 120 * s**3) / duration**2
    if t >= duration:
        vel, acc = 0.0, 0.0
    d = q1 - q0
    return q0 + d * pos, d * vel, d * acc


def _muscle_torque_map(model, data, h, act_adr):
    """``B`` (nv_arm, n_muscles) and ``c`` (nv_arm,) with joint torque = B a + c at this state."""
    saved = data.act.copy()
    data.act[act_adr] = 0.0
    mujoco.mj_forward(model, data)
    c = data.qfrc_actuator[h.dof_adr].copy()
    cols = []
    for k in range(len(act_adr)):
        data.act[act_adr] = 0.0
        data.act[act_adr[k]] = 1.0
        mujoco.mj_forward(model, data)
        cols.append(data.qfrc_actuator[h.dof_adr] - c)
    data.act[:] = saved
    mujoco.mj_forward(model, data)
    return np.array(cols).T, c


def make_synthetic_clip(seed: int, cfg: SyntheticConfig = SyntheticConfig(), offsets=None,
                        model: mujoco.MjModel | None = None, name: str | None = None) -> Clip:
    """One reaching clip from ``seed`` (deterministic)."""
    from mskbench.body.mouse_forelimb import MouseHandles, build_mouse_model, forward_keypoints

    model = model if model is not None else build_mouse_model(timestep=cfg.physics_dt_s)
    if abs(model.opt.timestep - cfg.physics_dt_s) > 1e-12:
        raise ValueError(f"model timestep {model.opt.timestep} differs from physics_dt_s {cfg.physics_dt_s}")
    h = MouseHandles.from_model(model)
    act_adr = model.actuator_actadr[h.muscle_ids]
    rng = np.random.default_rng(seed)
    lo, hi = h.joint_range[:, 0], h.joint_range[:, 1]
    mid, half = 0.5 * (lo + hi), 0.5 * (hi - lo) * cfg.target_fraction
    q_start = mid + rng.uniform(-0.5, 0.5, 4) * half
    q_goal = mid + rng.uniform(-1.0, 1.0, 4) * half
    offsets = np.zeros((3, 3)) if offsets is None else np.asarray(offsets, float)

    data = mujoco.MjData(model)
    kin = mujoco.MjData(model)
    data.qpos[h.qpos_adr] = q_start
    mujoco.mj_forward(model, data)
    steps_per_frame = int(round(1.0 / (cfg.fps * cfg.physics_dt_s)))
    if steps_per_frame < 1 or abs(steps_per_frame * cfg.physics_dt_s * cfg.fps - 1.0) > 1e-9:
        raise ValueError("1/fps must be a whole number of physics steps")
    control_every = 2  # physics steps per control update (2.5 ms)
    qpos, qvel, acts, kps = [], [], [], []
    step = 0
    for frame in range(cfg.n_frames):
        qpos.append(data.qpos[h.qpos_adr].copy())
        qvel.append(data.qvel[h.dof_adr].copy())
        acts.append(np.clip(data.act[act_adr], 0.0, 1.0))
        kps.append(forward_keypoints(model, kin, qpos[-1], offsets, h))
        for _ in range(steps_per_frame):
            if step % control_every == 0:
                t = step * cfg.physics_dt_s
                q_d, qd_d, qdd_d = _min_jerk(q_start, q_goal, t, cfg.reach_s)
                q, qd = data.qpos[h.qpos_adr], data.qvel[h.dof_adr]
                qdd = qdd_d + cfg.kp * (q_d - q) + cfg.kd * (qd_d - qd)
                B, c = _muscle_torque_map(model, data, h, act_adr)
                saved_qacc = data.qacc.copy()
                data.qacc[h.dof_adr] = qdd
                mujoco.mj_inverse(model, data)
                tau = data.qfrc_inverse[h.dof_adr] - data.qfrc_passive[h.dof_adr]
                data.qacc[:] = saved_qacc
                lam = np.sqrt(cfg.effort_weight) * np.linalg.norm(B) / np.sqrt(B.shape[1])
                A = np.vstack([B, lam * np.eye(B.shape[1])])
                b = np.concatenate([tau - c, np.zeros(B.shape[1])])
                data.ctrl[h.muscle_ids] = lsq_linear(A, b, bounds=(0.0, 1.0)).x
            mujoco.mj_step(model, data)
            step += 1
        if not (np.isfinite(data.qpos).all() and np.isfinite(data.qvel).all()):
            raise RuntimeError(f"synthetic clip {seed}: simulation became unstable")
    activations = np.array(acts)
    kp = np.array(kps) + rng.normal(0.0, cfg.keypoint_noise_m, (cfg.n_frames, 3, 3))
    from mskbench.body.mouse_forelimb import MUSCLE_NAMES

    return Clip(
        name=name or f"synthetic_{seed:04d}",
        fps=cfg.fps,
        qpos=np.array(qpos),
        keypoints=kp,
        offsets=offsets,
        qvel=np.array(qvel),
        emg={m: activations[:, i].copy() for i, m in enumerate(MUSCLE_NAMES)},
        activations=activations,
        metadata={"source": "mskbench.mouse.synthetic", "seed": int(seed), "q_start": q_start.tolist(),
                  "q_goal": q_goal.tolist(), "keypoint_noise_m": cfg.keypoint_noise_m},
    )


def make_synthetic_clips(n: int, seed: int = 0, cfg: SyntheticConfig = SyntheticConfig(), offsets=None) -> list[Clip]:
    from mskbench.body.mouse_forelimb import build_mouse_model

    model = build_mouse_model(timestep=cfg.physics_dt_s)
    return [make_synthetic_clip(seed + i, cfg, offsets, model) for i in range(n)]

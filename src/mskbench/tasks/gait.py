"""Helpers shared by the locomotion tasks Crawl, Run, Jump and Sidestep (SingleLegStand uses
:func:`joint_noise` too).

* :func:`torso_angle` — the torso's lean (pelvis→head vector ``u_torso``) in
  the body's heading frame: pitch (+ forward) and roll (+ to the left), rad.
* :func:`heading_frame` — the pelvis heading (forward axis projected on the
  floor) and its left normal, both horizontal unit vectors.
* :func:`flat_foot_heights` / :func:`foot_clearance` — how far each foot is
  off the floor: the smaller of its heel (calcaneus origin) and toes origin
  heights above where they sit when the neutral pose stands flat. Rising on
  the toes lifts the heel ~7 cm but the toes origin < 2 cm, so clearance
  means a lifted foot.
* :func:`joint_noise` — small uniform joint noise drawn from the reset ``rng``
  (host: the noisy pose is then placed on the ground).
* :func:`normal_joint_noise` / :func:`normal_velocity_noise` — the original code's
  start noise, ``N(0, σ²)`` on every joint (clipped to its range) and every velocity
  (host).
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np


def heading_frame(s, xp):
    """``(h_fwd, h_left)``: the pelvis forward axis projected on the floor (unit), and ``ẑ × h_fwd``."""
    f = s.u_fwd
    norm = xp.sqrt(f[0] ** 2 + f[1] ** 2) + 1e-9
    hx, hy = f[0] / norm, f[1] / norm
    zero = xp.zeros_like(hx)
    return xp.stack([hx, hy, zero]), xp.stack([-hy, hx, zero])


def torso_angle(s, xp):
    """Torso lean ``(pitch, roll)`` (2,), rad: the angle of ``u_torso`` from vertical
    in the heading's sagittal plane (+ leaning forward) and frontal plane (+ leaning left).

    In the neutral standing pose of MyoFullBody the head is 0.11 m behind the
    pelvis origin, so the neutral pitch is about −0.18 rad.
    """
    h_fwd, h_left = heading_frame(s, xp)
    u = s.u_torso
    return xp.stack([xp.arctan2(u @ h_fwd, u[2]), xp.arctan2(u @ h_left, u[2])])


def flat_foot_heights(ctx) -> np.ndarray:
    """Heights (m) of the heel (calcaneus) and toes origins, ``(heel, toes)`` averaged over
    both feet, in the neutral pose standing flat on the floor."""
    view = ctx.forward(ctx.pose())
    heel = np.mean(view.foot_heights)
    toes = 0.5 * (view.pos("toes_l")[2] + view.pos("toes_r")[2])
    return np.array([heel, toes], dtype=np.float64)


def foot_clearance(s, flat, xp):
    """Clearance of the left and right foot (2,), m: ``min(z_heel − z_heel,flat, z_toes − z_toes,flat)``.

    ``flat`` is :func:`flat_foot_heights`. Zero standing flat; on tiptoe the
    heel rises ~7 cm but the toes origin (the metatarsal heads) < 2 cm, so
    clearance means the whole foot is lifted.
    """
    heel = s.foot_heights - flat[0]
    toes = xp.stack([s.pos("toes_l")[2], s.pos("toes_r")[2]]) - flat[1]
    return xp.minimum(heel, toes)


def joint_noise(pose: Mapping[str, float], rng: np.random.Generator, scale_rad: float) -> dict[str, float]:
    """``pose`` with each joint perturbed by ``U(−scale, scale)`` (drawn in ``pose``'s order)."""
    noise = rng.uniform(-scale_rad, scale_rad, size=len(pose))
    return {name: float(value + dq) for (name, value), dq in zip(pose.items(), noise)}


def normal_joint_noise(ctx, qpos: np.ndarray, rng: np.random.Generator, sigma_rad: float) -> np.ndarray:
    """``qpos`` with every joint of the body (not the root) perturbed by ``N(0, sigma²)``, clipped
    to the joint ranges (host; the couplings are resolved when the pose is placed by ``ctx.pose``).
    The original's starts add this noise to ``qpos[7:]`` (e.g. ``msk_bench_v0.py@a68b6ce::
    MSKBenchJumpEnvV0.reset``)."""
    model = ctx.model
    out = qpos.copy()
    adr = np.asarray(ctx.handles.joint_qpos)
    out[adr] += rng.normal(0.0, sigma_rad, size=adr.shape)
    hinge_or_slide = (model.jnt_type == 2) | (model.jnt_type == 3)
    limited = hinge_or_slide & (model.jnt_limited.astype(bool))
    qadr = model.jnt_qposadr[limited]
    out[qadr] = np.clip(out[qadr], model.jnt_range[limited, 0], model.jnt_range[limited, 1])
    return out


def normal_velocity_noise(ctx, rng: np.random.Generator, sigma: float) -> np.ndarray:
    """A ``qvel`` of ``N(0, sigma²)`` on every degree of freedom of the body (the root's too), zero
    elsewhere (props); the original's starts add it (e.g. ``MSKBenchJumpEnvV0.reset``)."""
    qvel = np.zeros(ctx.model.nv)
    dofs = np.concatenate([np.arange(6) if ctx.handles.free_root else np.zeros(0, int),
                           np.asarray(ctx.handles.joint_dof)]).astype(int)
    qvel[dofs] = rng.normal(0.0, sigma, size=dofs.shape)
    return qvel

"""The imitation prior and residual adaptation, measured: rollouts with the tracking metrics.

:func:`tracking_rollout` runs one episode of a tracking or residual task
(:mod:`mskbench.tasks.tracking`, :mod:`mskbench.paradigms.residual.tasks`) on the CPU
environment and records, every control step, the 16 tracked sites, the root
(pelvis) and the joints next to the task's reference at the same reference
time. :func:`tracking_report` reduces a rollout to what the paper reports for
these paradigms: episode length and duration, the 16-site tracking RMSE
(Eq. 19, absolute sites), the relative-site, root and joint errors, and the
first sustained divergence (Eq. 20) from a reference rollout — for a residual
policy the paper's reference rollout, the frozen base with zero residual
(:func:`base_rollout_policy`); for a prior, any other policy (the direct
paradigm's default, ``zero``).

The episode is the task's: it ends at the task's first termination (a fall
or a large deviation) or at the horizon, so every recorded sample belongs to
the paper's "first-fall-truncated prefix".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np


@dataclass
class TrackingTrace:
    """One tracking rollout, per control step (T samples after the reset)."""

    task: str
    seed: int
    control_dt_s: float
    sites: np.ndarray  # (T, 16, 3) world
    sites_ref: np.ndarray
    root: np.ndarray  # (T, 3) pelvis
    root_ref: np.ndarray
    q: np.ndarray  # (T, J)
    q_ref: np.ndarray
    episode_return: float = 0.0
    success: bool = False
    termination: str | None = None
    extras: dict[str, Any] = field(default_factory=dict)

    @property
    def length(self) -> int:
        return int(self.sites.shape[0])

    @property
    def time_s(self) -> np.ndarray:
        return self.control_dt_s * np.arange(1, self.length + 1)


def reference_now(task, ts) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The reference's sites (16, 3), pelvis (3,) and joint angles at the task state ``ts``."""
    ref = task.reference
    t, ph0, root0 = ts["ref_t"], ts["phase0"], ts["root0"]
    return ref.sites(t, ph0, root0, np), ref.pelvis(t, ph0, root0, np), ref.q(t, ph0, np)


def tracking_rollout(env, policy, seed: int, max_steps: int | None = None) -> TrackingTrace:
    """One episode of ``policy`` on ``env`` (an :class:`~mskbench.envs.MSKEnv` of a tracking or
    residual task) from ``seed``, with the tracking samples of every step."""
    from mskbench.eval.episodes import Step, play_episode

    task = env.task
    rows: dict[str, list] = {k: [] for k in ("sites", "sites_ref", "root", "root_ref", "q", "q_ref")}
    limit = task.horizon if max_steps is None else min(max_steps, task.horizon)

    def record(env, step: Step | None) -> None:
        if step is None:
            return
        view = env.sim.view()
        sites_ref, root_ref, q_ref = reference_now(task, env.task_state)
        rows["sites"].append(env.data.xpos[task._site_ids].copy())
        rows["sites_ref"].append(sites_ref)
        rows["root"].append(np.array(view.pelvis_pos))
        rows["root_ref"].append(root_ref)
        rows["q"].append(np.array(view.q_joints))
        rows["q_ref"].append(q_ref)

    played = play_episode(env, policy, seed, record, max_steps=limit)
    total, info = played.total_reward, played.info
    arrays = {k: np.asarray(v, np.float64) for k, v in rows.items()}
    return TrackingTrace(task.name, seed, env.control_dt_s, episode_return=float(total),
                         success=bool(info.get("success", False)), termination=info.get("termination"),
                         extras={"max_pelvis_z": float(arrays["root"][:, 2].max()) if len(rows["root"]) else None},
                         **arrays)


def tracking_report(trace: TrackingTrace, reference: TrackingTrace | None = None) -> dict[str, Any]:
    """A rollout's tracking numbers: length (steps), duration (s), the 16-site tracking RMSE (Eq. 19,
    absolute, m), the RMS relative-site (m), root (m, planar too) and joint (rad) errors, and the
    divergence time (Eq. 20, s; ``None``: N/A) against ``reference`` (not computed without one)."""
    from mskbench.metrics import (divergence_time, joint_position_error, relative_site_error, root_position_error,
                                  site_tracking_error, tracking_rmse)

    out: dict[str, Any] = {"task": trace.task, "seed": trace.seed, "length": trace.length,
                           "duration_s": trace.length * trace.control_dt_s, "return": trace.episode_return,
                           "success": trace.success, "termination": trace.termination, **trace.extras}
    if trace.length == 0:
        return out
    e = site_tracking_error(trace.sites, trace.sites_ref)
    out["tracking_rmse_m"] = tracking_rmse(e)
    out["relative_site_rmse_m"] = tracking_rmse(relative_site_error(trace.sites, trace.sites_ref, trace.root,
                                                                    trace.root_ref))
    out["root_rmse_m"] = tracking_rmse(root_position_error(trace.root, trace.root_ref))
    out["root_planar_rmse_m"] = tracking_rmse(root_position_error(trace.root, trace.root_ref, planar=True))
    out["joint_rmse_rad"] = tracking_rmse(joint_position_error(trace.q, trace.q_ref))
    if reference is not None and reference.length > 0:
        re = site_tracking_error(reference.sites, reference.sites_ref)
        out["divergence_s"] = divergence_time(trace.time_s, e, reference.time_s, re)
        out["reference_length"] = reference.length
    return out


def base_rollout_policy(env):
    """The residual task's frozen base alone (zero residual): Eq. 20's reference rollout of the paper."""
    from mskbench.paradigms.residual.wrapper import ResidualMap, ResidualPolicy
    from mskbench.policies import make_policy

    return ResidualPolicy(make_policy("zero", env.action_space.shape[0]), ResidualMap(env.task, env.obs_layout))


def summarize(reports: list[dict[str, Any]]) -> dict[str, Any]:
    """Means over episodes of the numeric entries, the success rate, and the divergence times seen."""
    out: dict[str, Any] = {"episodes": len(reports)}
    for key in ("length", "duration_s", "return", "tracking_rmse_m", "relative_site_rmse_m", "root_rmse_m",
                "root_planar_rmse_m", "joint_rmse_rad", "max_pelvis_z"):
        values = [r[key] for r in reports if r.get(key) is not None]
        if values:
            out[key] = float(np.mean(values))
    out["success_rate"] = 100.0 * float(np.mean([bool(r["success"]) for r in reports])) if reports else 0.0
    div = [r.get("divergence_s") for r in reports if "divergence_s" in r]
    if div:
        out["divergence_s"] = div
    terms: dict[str, int] = {}
    for r in reports:
        terms[str(r["termination"])] = terms.get(str(r["termination"]), 0) + 1
    out["terminations"] = terms
    return out

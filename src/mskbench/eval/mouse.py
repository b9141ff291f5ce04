"""Evaluation of a mouse imitation policy: track replay error, EMG fit MAE, simplex ρ.

Each clip is imitated once from its first frame to its last with the policy
acting deterministically (no early termination; a rollout that strays is
still scored). Every clip frame instant (every second control step) is
recorded: joint angles ``q``, activations ``a`` and excitations.

Metrics per clip and overall (mean over clips):

* ``track_replay_error_mm`` — mean Euclidean distance (mm) between the three
  keypoints of the imitated pose and of the reference pose, both by forward
  kinematics of our model with the clip's marker offsets (keypoints;
  ``joint_mae_rad`` is the same comparison on the joint angles);
* ``keypoint_error_vs_data_mm`` — the imitated keypoints against the clip's
  measured keypoints;
* ``emg_fit_mae`` — per muscle with EMG in the clip, ``mean |clip(a, 0, 1) − EMG|``
  (absent, with the reason, when the clip has no EMG);
* ``simplex_rho`` — per muscle, simplex-projection ρ predicting the simulated
  activation from the joint-angle series (E, τ, Tp configurable; paper:
  E = 2, τ = −1, Tp = 1), see :func:`mskbench.metrics.simplex_rho`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from mskbench.envs.cpu_env import PHYSICS_UNSTABLE, MSKEnv
from mskbench.eval.episodes import Step, play_episode
from mskbench.mouse.clips import Clip
from mskbench.tasks.mouse_imitation import MouseImitation
from mskbench.policies import as_policy


@dataclass(frozen=True)
class SimplexParams:
    E: int = 2
    tau: int = -1
    Tp: int = 1


def evaluation_env(clips: Sequence[Clip], task: MouseImitation | None = None) -> MSKEnv:
    """The CPU env an evaluation imitates ``clips`` in: ``task``'s options (the reward's
    weights do not matter here) with early termination turned off."""
    config = (task or MouseImitation(clips=clips)).config.replace(clips=tuple(clips),
                                                                   termination_error_rad=float("inf"))
    return MSKEnv(MouseImitation(config))


class _BatchOfOne:
    """A policy that acts on a batch of one observation, shape (1, obs_size), as one that acts on one."""

    def __init__(self, policy):
        self.policy = as_policy(policy)

    def reset(self, seed: int | None = None) -> None:
        self.policy.reset(seed)

    def act(self, obs: np.ndarray) -> np.ndarray:
        return np.asarray(self.policy.act(obs[None, :]), dtype=np.float64).reshape(-1)


def rollout_clip(policy, env: MSKEnv, clip_index: int) -> dict:
    """Imitate clip ``clip_index`` of ``env``'s task from frame 0 to its end; arrays sampled at clip frames.

    ``policy.act`` receives a batch of one observation, shape (1, obs_size).
    """
    task = env.task
    h = env.handles
    steps_per_frame = int(round(1.0 / task.frames_per_step))
    q, acts, excs = [], [], []
    stable = True

    def sample() -> None:
        q.append(env.data.qpos[h.joint_qpos].copy())
        acts.append(np.clip(env.data.act[h.muscle_act_adr], 0.0, 1.0))

    def record(env: MSKEnv, step: Step | None) -> None:
        nonlocal stable
        if step is None:
            sample()
            excs.append(np.zeros(h.muscle_ids.size))
        elif step.info["termination"] == PHYSICS_UNSTABLE:
            stable = False
        elif step.index % steps_per_frame == 0:
            sample()
            excs.append(env.data.ctrl[h.muscle_ids].copy())

    play_episode(env, _BatchOfOne(policy), 0, record, options={"initial_state": task.start_at(clip_index, 0.0)},
                 max_steps=int(task.bank.lengths[clip_index] - 1) * steps_per_frame)
    return {"q": np.array(q), "activations": np.array(acts), "excitations": np.array(excs), "stable": stable}


def evaluate(policy, clips: Sequence[Clip], task: MouseImitation | None = None,
             simplex: SimplexParams = SimplexParams()) -> dict:
    """Per-clip and overall metrics (see the module docstring). ``task``: the imitation task whose
    options (physics step, observation) the policy was trained with (default: the defaults)."""
    from mskbench.body.mouse_forelimb import MUSCLE_NAMES, keypoint_trajectory
    from mskbench.metrics import simplex_rho

    env = evaluation_env(clips, task)
    per_clip = {}
    for i, clip in enumerate(clips):
        out = rollout_clip(policy, env, i)
        n = len(out["q"])
        q_ref = clip.qpos[:n]
        kp_sim = keypoint_trajectory(env.model, out["q"], clip.offsets)
        kp_ref = keypoint_trajectory(env.model, q_ref, clip.offsets)
        rec = {
            "frames": n,
            "stable": out["stable"],
            "track_replay_error_mm": float(1e3 * np.mean(np.linalg.norm(kp_sim - kp_ref, axis=-1))),
            "keypoint_error_vs_data_mm": float(1e3 * np.mean(np.linalg.norm(kp_sim - clip.keypoints[:n], axis=-1))),
            "joint_mae_rad": float(np.mean(np.abs(out["q"] - q_ref))),
            "mean_activation": float(out["activations"].mean()),
        }
        if clip.emg:
            rec["emg_fit_mae"] = {m: float(np.mean(np.abs(out["activations"][:, MUSCLE_NAMES.index(m)] - e[:n])))
                                  for m, e in clip.emg.items()}
        else:
            rec["emg_fit_mae"] = {"absent": "clip has no EMG"}
        rho: dict[str, float | None] = {}
        for j, m in enumerate(MUSCLE_NAMES):
            target = out["activations"][:, j]
            if np.ptp(target) < 1e-9:
                rho[m] = None  # a flat series has no defined correlation
                continue
            rho[m] = float(simplex_rho(out["q"], target, E=simplex.E, tau=simplex.tau, Tp=simplex.Tp))
        rec["simplex_rho"] = rho
        per_clip[clip.name] = rec

    def mean_of(key):
        return float(np.mean([r[key] for r in per_clip.values()]))

    emg_muscles = sorted({m for r in per_clip.values() for m in r["emg_fit_mae"] if m != "absent"})
    overall = {
        "clips": len(per_clip),
        "track_replay_error_mm": mean_of("track_replay_error_mm"),
        "keypoint_error_vs_data_mm": mean_of("keypoint_error_vs_data_mm"),
        "joint_mae_rad": mean_of("joint_mae_rad"),
        "stable_clips": int(sum(r["stable"] for r in per_clip.values())),
    }
    if emg_muscles:
        per_m = {m: float(np.mean([r["emg_fit_mae"][m] for r in per_clip.values() if m in r["emg_fit_mae"]]))
                 for m in emg_muscles}
        overall["emg_fit_mae"] = {"per_muscle": per_m, "mean": float(np.mean(list(per_m.values())))}
    else:
        overall["emg_fit_mae"] = {"absent": "no clip has EMG"}
    rho_m = {}
    for m in MUSCLE_NAMES:
        vals = [r["simplex_rho"][m] for r in per_clip.values() if r["simplex_rho"][m] is not None]
        rho_m[m] = float(np.mean(vals)) if vals else None
    overall["simplex_rho"] = {"per_muscle": rho_m, "E": simplex.E, "tau": simplex.tau, "Tp": simplex.Tp}
    return {"overall": overall, "per_clip": per_clip}

"""Mouse forelimb imitation: task functions and the CPU vector environment.

The policy drives the 9 muscles (action in [-1, 1] -> excitation (a + 1) / 2,
the same muscle interface as the full body) so that the 4 joint angles follow
a reference clip. Physics step 1.25 ms, 2 physics steps per control step
(2.5 ms); clips are 200 Hz, so the reference advances half a frame per
control step and is read by linear interpolation between frames.

Reward (Leonardis et al. 2025):
``λ_joint · exp(−α Σ_j (q_j − q̂_j)²) − λ_ctrl Σ_m u_m² − λ_energy Σ_j |q̇_j| |τ_act,j|``
with excitations ``u``, and ``τ_act`` the joint torques the muscles produce
(``qfrc_actuator``). Defaults: λ_joint = 5, α = 0.2 (their config's joint
weight and scale), λ_ctrl = λ_energy = 0 (configurable).

Observation blocks (``obs_layout``):

* ``reference/future_delta`` (K × 4): ``q̂(t + k·Δ) − q(t)`` for the next K
  frames (Δ = one clip frame, K = ``n_future`` = 5);
* ``proprio/qpos`` (4), ``proprio/qvel`` (4), ``proprio/activation`` (9),
  ``proprio/muscle_length`` (9), ``proprio/muscle_velocity`` (9).

Episodes start at a random clip and start frame (at least ``min_frames``
frames before the clip's end) in the reference pose with the reference's
finite-difference velocity and zero activation; they are truncated at the
clip's end and terminated when any joint is more than
``termination_error_rad`` from the reference (our choice, 0.8 rad).

The task functions take arrays and an array namespace ``xp`` and are shared
by the CPU environment here and the batched JAX environment
(:mod:`mskbench.mouse.jax_env`).
"""

from __future__ import annotations

from dataclasses import dataclass

import mujoco
import numpy as np

from mskbench.envs.vector import checked_actions, step_each
from mskbench.mouse.clips import Clip

N_JOINTS = 4


@dataclass(frozen=True)
class ImitationConfig:
    joint_weight: float = 5.0
    joint_scale: float = 0.2
    ctrl_cost: float = 0.0
    energy_cost: float = 0.0
    physics_dt_s: float = 0.00125
    substeps: int = 2
    n_future: int = 5
    min_frames: int = 20
    termination_error_rad: float = 0.8

    def __post_init__(self):
        for name in ("joint_weight", "joint_scale", "ctrl_cost", "energy_cost"):
            v = getattr(self, name)
            if not np.isfinite(v) or v < 0:
                raise ValueError(f"{name} must be finite and >= 0, got {v}")
        if self.substeps < 1 or self.n_future < 1 or self.min_frames < 2:
            raise ValueError("substeps and n_future must be >= 1 and min_frames >= 2")
        if self.physics_dt_s <= 0 or self.termination_error_rad <= 0:
            raise ValueError("physics_dt_s and termination_error_rad must be > 0")

    @property
    def control_dt_s(self) -> float:
        return self.physics_dt_s * self.substeps


@dataclass(frozen=True)
class ReferenceBank:
    """Clips stacked for indexed access: ``qpos`` (n_clips, T_max, 4), padded with
    each clip's last frame; ``qvel`` its finite-difference velocity (rad/s);
    ``lengths`` frames per clip; one frame rate for all."""

    qpos: np.ndarray
    qvel: np.ndarray
    lengths: np.ndarray
    fps: float
    names: tuple[str, ...]

    @classmethod
    def from_clips(cls, clips: list[Clip]) -> "ReferenceBank":
        if not clips:
            raise ValueError("need at least one clip")
        fps = {float(c.fps) for c in clips}
        if len(fps) != 1:
            raise ValueError(f"all clips must share one frame rate, got {sorted(fps)}")
        fps = fps.pop()
        t_max = max(len(c.qpos) for c in clips)
        q = np.zeros((len(clips), t_max, N_JOINTS))
        qd = np.zeros_like(q)
        for i, c in enumerate(clips):
            n = len(c.qpos)
            q[i, :n] = c.qpos
            q[i, n:] = c.qpos[-1]
            qd[i, :n] = np.gradient(c.qpos, 1.0 / fps, axis=0)
        return cls(q, qd, np.array([len(c.qpos) for c in clips]), fps, tuple(c.name for c in clips))


# -- pure task functions (xp: numpy or jax.numpy) --------------------------------------
def reference_at(table, clip, frame, xp=np):
    """Linear interpolation of ``table[clip]`` (T, ...) at fractional ``frame``."""
    t_max = table.shape[1]
    f = xp.clip(frame, 0.0, t_max - 1.0)
    i0 = xp.floor(f)
    w = f - i0
    i0 = i0.astype(int) if hasattr(i0, "astype") else int(i0)
    i1 = xp.minimum(i0 + 1, t_max - 1)
    return table[clip, i0] * (1.0 - w) + table[clip, i1] * w


def future_reference(bank_q, clip, frame, n_future, xp=np):
    """(n_future, 4) reference poses 1..n_future frames ahead."""
    return xp.stack([reference_at(bank_q, clip, frame + k, xp) for k in range(1, n_future + 1)])


def observation_blocks(q, qd, act, length, velocity, bank_q, clip, frame, cfg: ImitationConfig, xp=np):
    return {
        "reference/future_delta": xp.ravel(future_reference(bank_q, clip, frame, cfg.n_future, xp) - q),
        "proprio/qpos": q,
        "proprio/qvel": qd,
        "proprio/activation": act,
        "proprio/muscle_length": length,
        "proprio/muscle_velocity": velocity,
    }


def reward_terms(q, q_ref, qd, excitation, joint_torque, cfg: ImitationConfig, xp=np):
    """Unweighted terms and the reward."""
    joint = xp.exp(-cfg.joint_scale * xp.sum((q - q_ref) ** 2))
    ctrl = xp.sum(excitation**2)
    energy = xp.sum(xp.abs(qd) * xp.abs(joint_torque))
    reward = cfg.joint_weight * joint - cfg.ctrl_cost * ctrl - cfg.energy_cost * energy
    return reward, {"joint": joint, "ctrl": ctrl, "energy": energy}


def too_far(q, q_ref, cfg: ImitationConfig, xp=np):
    return xp.max(xp.abs(q - q_ref)) > cfg.termination_error_rad


def clip_over(frame, length):
    """The reference has no frame left after ``frame``."""
    return frame >= length - 1


# -- CPU vector environment -----------------------------------------------------------
class MouseImitationVectorEnv:
    """``num_envs`` forelimbs on MuJoCo C, stepped in a loop, auto-resetting.

    The vector-env protocol of :mod:`mskbench.agents.ppo`.
    """

    def __init__(self, clips: list[Clip], cfg: ImitationConfig | None = None, num_envs: int = 16,
                 seed: int = 0, model: mujoco.MjModel | None = None):
        from mskbench.body.mouse_forelimb import MouseHandles, build_mouse_model

        self.cfg = cfg or ImitationConfig()
        self.bank = ReferenceBank.from_clips(clips)
        if np.any(self.bank.lengths < self.cfg.min_frames + 1):
            raise ValueError(f"every clip needs more than min_frames={self.cfg.min_frames} frames")
        self.model = model if model is not None else build_mouse_model(timestep=self.cfg.physics_dt_s)
        self.handles = MouseHandles.from_model(self.model)
        self._act_adr = self.model.actuator_actadr[self.handles.muscle_ids]
        self.num_envs = int(num_envs)
        self.datas = [mujoco.MjData(self.model) for _ in range(self.num_envs)]
        self.frames_per_step = self.cfg.control_dt_s * self.bank.fps
        self._rng = np.random.default_rng(seed)
        self.clip = np.zeros(self.num_envs, int)
        self.frame = np.zeros(self.num_envs)
        self._returns = np.zeros(self.num_envs)
        obs = self._observe(0)
        self.obs_layout = {}
        start = 0
        for k, v in obs.items():
            self.obs_layout[k] = slice(start, start + np.size(v))
            start += np.size(v)
        self.obs_size = start
        self.action_size = self.model.nu

    def _observe(self, i: int) -> dict:
        d, h = self.datas[i], self.handles
        return observation_blocks(d.qpos[h.qpos_adr], d.qvel[h.dof_adr], d.act[self._act_adr],
                                  d.actuator_length[h.muscle_ids], d.actuator_velocity[h.muscle_ids],
                                  self.bank.qpos, self.clip[i], self.frame[i], self.cfg)

    def _flat(self, i: int) -> np.ndarray:
        return np.concatenate([np.ravel(v) for v in self._observe(i).values()]).astype(np.float32)

    def set_start(self, i: int, clip: int, frame: float) -> None:
        """Put env ``i`` at ``frame`` of ``clip`` in the reference state."""
        d, h = self.datas[i], self.handles
        mujoco.mj_resetData(self.model, d)
        self.clip[i], self.frame[i] = clip, frame
        d.qpos[h.qpos_adr] = reference_at(self.bank.qpos, clip, frame)
        d.qvel[h.dof_adr] = reference_at(self.bank.qvel, clip, frame)
        mujoco.mj_forward(self.model, d)
        self._returns[i] = 0.0

    def _reset_one(self, i: int) -> None:
        clip = int(self._rng.integers(len(self.bank.lengths)))
        last_start = self.bank.lengths[clip] - 1 - self.cfg.min_frames
        self.set_start(i, clip, float(self._rng.integers(0, last_start + 1)))

    def reset(self, seed: int | None = None) -> np.ndarray:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        for i in range(self.num_envs):
            self._reset_one(i)
        return np.stack([self._flat(i) for i in range(self.num_envs)])

    def step(self, actions: np.ndarray):
        a = checked_actions(actions, self.num_envs, self.action_size, np.float64)
        if not np.isfinite(a).all():
            raise ValueError("actions contain non-finite values")
        exc = 0.5 * (np.clip(a, -1.0, 1.0) + 1.0)
        h, cfg = self.handles, self.cfg

        def step_one(i):
            d = self.datas[i]
            d.ctrl[h.muscle_ids] = exc[i]
            mujoco.mj_step(self.model, d, nstep=cfg.substeps)
            self.frame[i] += self.frames_per_step
            if not (np.isfinite(d.qpos).all() and np.isfinite(d.qvel).all()):
                return 0.0, 0.0, True, False  # unstable: zero observation and reward, episode over
            q = d.qpos[h.qpos_adr]
            q_ref = reference_at(self.bank.qpos, self.clip[i], self.frame[i])
            reward, _ = reward_terms(q, q_ref, d.qvel[h.dof_adr], exc[i], d.qfrc_actuator[h.dof_adr], cfg)
            terminated = bool(too_far(q, q_ref, cfg))
            truncated = not terminated and bool(clip_over(self.frame[i], self.bank.lengths[self.clip[i]]))
            return self._flat(i), reward, terminated, truncated

        def reset_one(i):
            self._reset_one(i)
            return self._flat(i)

        return step_each(self._returns, self.obs_size, step_one, reset_one)

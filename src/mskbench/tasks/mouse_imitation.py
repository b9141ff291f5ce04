"""Mouse forelimb imitation as a task on the shared stack (``MouseImitation``).

The policy drives the 9 muscles (action in [-1, 1] -> excitation (a + 1) / 2,
the muscle interface of every body) so that the 4 joint angles follow a
reference clip. Physics step 1.25 ms, 2 physics steps per control step
(2.5 ms); clips are 200 Hz, so the reference advances half a frame per
control step and is read by linear interpolation between frames. It runs
wherever any task runs: ``MSKEnv("MouseImitation")`` on MuJoCo C, the batched
JAX env on MuJoCo Warp, MJX or MuJoCo C, and the same trainers.

Reward (Leonardis et al. 2025), terms ``joint``, ``ctrl``, ``energy``:
``λ_joint · exp(−α Σ_j (q_j − q̂_j)²) − λ_ctrl Σ_m u_m² − λ_energy Σ_j |q̇_j| |τ_act,j|``
with excitations ``u``, and ``τ_act`` the joint torques the muscles produce
(``qfrc_actuator``). Defaults: λ_joint = 5, α = 0.2 (their config's joint
weight and scale), λ_ctrl = λ_energy = 0 (options ``ctrl_cost``, ``energy_cost``).

Observation: the body's blocks (``qpos`` (4), ``qvel`` (4), ``muscle_length``,
``muscle_velocity``, ``muscle_activation`` (9 each)), then
``task/reference`` (K × 4): ``q̂(t + k·Δ) − q(t)`` for the next K frames
(Δ = one clip frame, K = ``n_future`` = 5). The encoder–decoder policy's
encoder reads ``task/reference``.

Episodes start at a random clip and start frame (at least ``min_frames``
frames before the clip's end) in the reference pose with the reference's
finite-difference velocity and zero activation — drawn on the device in the
batched env (:meth:`MouseImitation.randomize`); they are truncated at the
clip's end (:meth:`MouseImitation.time_up`) and terminated when any joint is
more than ``termination_error_rad`` from the reference (our choice, 0.8 rad;
``inf`` turns it off, as the evaluation does). Success: the clip imitated to
its end without termination.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mskbench.body.mouse_forelimb import MOUSE_FORELIMB
from mskbench.mouse.clips import Clip
from mskbench.tasks.base import InitContext, InitialState, Task, TaskConfig, check_positive, option, put

N_JOINTS = 4


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
    def from_clips(cls, clips: Sequence[Clip]) -> "ReferenceBank":
        if not clips:
            raise ValueError("need at least one clip")
        rates = {float(c.fps) for c in clips}
        if len(rates) != 1:
            raise ValueError(f"all clips must share one frame rate, got {sorted(rates)}")
        fps = rates.pop()
        t_max = max(len(c.qpos) for c in clips)
        q = np.zeros((len(clips), t_max, N_JOINTS))
        qd = np.zeros_like(q)
        for i, c in enumerate(clips):
            n = len(c.qpos)
            q[i, :n] = c.qpos
            q[i, n:] = c.qpos[-1]
            qd[i, :n] = np.gradient(c.qpos, 1.0 / fps, axis=0)
        return cls(q, qd, np.array([len(c.qpos) for c in clips]), fps, tuple(c.name for c in clips))


# -- pure functions (xp: numpy or jax.numpy) ---------------------------------------------
def reference_at(table, clip, frame, xp=np):
    """Linear interpolation of ``table[clip]`` (T, ...) at fractional ``frame``, clamped to the clip."""
    table = xp.asarray(table)
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


def tracking_reward(q, q_ref, scale, xp=np):
    """``exp(−α Σ_j (q_j − q̂_j)²)``."""
    return xp.exp(-scale * xp.sum((q - q_ref) ** 2))


def control_cost(excitation, xp=np):
    """``Σ_m u_m²``."""
    return xp.sum(excitation**2)


def energy_cost(qdot, joint_torque, xp=np):
    """``Σ_j |q̇_j| |τ_act,j|``."""
    return xp.sum(xp.abs(qdot) * xp.abs(joint_torque))


@functools.lru_cache(maxsize=4)
def _synthetic(n: int, seed: int) -> tuple[Clip, ...]:
    """Synthetic clips (deterministic in ``n`` and ``seed``; simulated once per process)."""
    from mskbench.mouse.synthetic import make_synthetic_clips

    return tuple(make_synthetic_clips(n, seed=seed))


def _load(clips, synthetic_clips: int, synthetic_seed: int) -> list[Clip]:
    if clips is None:
        return list(_synthetic(synthetic_clips, synthetic_seed))
    if isinstance(clips, (str, bytes)) or hasattr(clips, "__fspath__"):
        from mskbench.mouse.clips import load_clips

        return load_clips(clips)
    clips = list(clips)
    if not all(isinstance(c, Clip) for c in clips):
        raise TypeError("clips must be a directory, a clip file or a sequence of mskbench.mouse.Clip")
    return clips


class MouseImitation(Task):
    name = "MouseImitation"
    family = "imitation"
    summary = "Imitate mouse forelimb reaching clips with 9 muscles (Leonardis et al. 2025)"
    body = MOUSE_FORELIMB
    reward_weights = {"joint": 5.0, "ctrl": -0.0, "energy": -0.0}
    #: Options of this task's Config, so always set (the base's ``None`` means "the body's").
    timestep_s: float
    frame_skip: int

    @dataclass(frozen=True)
    class Config(TaskConfig):
        clips: Any = option(None, "clips: a directory (*.h5 / *.npz), a file, or Clip objects; None: synthetic")
        synthetic_clips: int = option(8, "synthetic clips generated when clips is None")
        synthetic_seed: int = option(0, "seed of the synthetic clips")
        joint_weight: float = option(5.0, "λ_joint")
        joint_scale: float = option(0.2, "α of the joint tracking term")
        ctrl_cost: float = option(0.0, "λ_ctrl")
        energy_cost: float = option(0.0, "λ_energy")
        timestep_s: float = option(0.00125, "physics step (s)")
        frame_skip: int = option(2, "physics steps per control step")
        n_future: int = option(5, "future reference frames observed")
        min_frames: int = option(20, "episodes start at least this many frames before a clip's end")
        termination_error_rad: float = option(0.8, "joint error that ends an episode (inf: never)")

        def __post_init__(self):
            check_positive(self, "joint_weight", "joint_scale", "ctrl_cost", "energy_cost", allow_zero=True)
            check_positive(self, "timestep_s")
            if self.frame_skip < 1 or self.n_future < 1 or self.min_frames < 2 or self.synthetic_clips < 1:
                raise ValueError("frame_skip, n_future and synthetic_clips must be >= 1 and min_frames >= 2")
            if not self.termination_error_rad > 0:
                raise ValueError(f"termination_error_rad must be > 0, got {self.termination_error_rad}")

    def __init__(self, config: TaskConfig | None = None, **overrides: Any):
        super().__init__(config, **overrides)
        self.clip_list = _load(self.clips, self.synthetic_clips, self.synthetic_seed)
        self.bank = ReferenceBank.from_clips(self.clip_list)
        if np.any(self.bank.lengths < self.min_frames + 1):
            raise ValueError(f"every clip needs more than min_frames={self.min_frames} frames")
        self.reward_weights = {"joint": self.joint_weight, "ctrl": -self.ctrl_cost, "energy": -self.energy_cost}
        self._set_rate(self.timestep_s * self.frame_skip)
        self.qpos0, self.nv = np.zeros(N_JOINTS), N_JOINTS
        self.joint_qpos = self.joint_dof = np.arange(N_JOINTS)

    def _set_rate(self, control_dt_s: float) -> None:
        #: Clip frames per control step (0.5 at the defaults).
        self.frames_per_step = control_dt_s * self.bank.fps
        self.horizon = int(math.ceil((int(self.bank.lengths.max()) - 1) / self.frames_per_step))

    def bind(self, ctx: InitContext) -> None:
        super().bind(ctx)
        self._set_rate(ctx.control_dt_s)
        self.qpos0, self.nv = ctx.default_qpos.copy(), ctx.model.nv
        self.joint_qpos, self.joint_dof = ctx.handles.joint_qpos, ctx.handles.joint_dof

    # -- starts -------------------------------------------------------------------------
    def at(self, init: InitialState, clip, frame, xp=np) -> InitialState:
        """``init`` moved to ``frame`` of ``clip``: the reference pose and velocity there."""
        qpos = put(xp, init.qpos, self.joint_qpos, reference_at(self.bank.qpos, clip, frame, xp))
        qvel = put(xp, init.qvel, self.joint_dof, reference_at(self.bank.qvel, clip, frame, xp))
        return InitialState(qpos, qvel, {"clip": clip, "frame": frame})

    def start(self, ctx: InitContext) -> InitialState:
        return InitialState(ctx.default_qpos.copy(), np.zeros(ctx.model.nv),
                            {"clip": np.int64(0), "frame": np.float64(0.0)})

    def randomize(self, init: InitialState, rng, xp) -> InitialState:
        clip = rng.integers(0, len(self.bank.lengths))
        last = xp.asarray(self.bank.lengths)[clip] - 1 - self.min_frames
        frame = rng.integers(0, last + 1) * 1.0
        return self.at(init, clip, frame, xp)

    def start_at(self, clip: int, frame: float = 0.0) -> InitialState:
        """The initial state at ``frame`` of clip ``clip`` (CPU; for evaluation), after ``bind``."""
        base = InitialState(self.qpos0.copy(), np.zeros(self.nv), {})
        return self.at(base, np.int64(clip), np.float64(frame))

    # -- step ---------------------------------------------------------------------------
    def _reference(self, ts, xp):
        return reference_at(self.bank.qpos, ts["clip"], ts["frame"], xp)

    def advance(self, s, ts, xp):
        return {"clip": ts["clip"], "frame": ts["frame"] + self.frames_per_step}

    def observation(self, s, ts, xp):
        future = future_reference(self.bank.qpos, ts["clip"], ts["frame"], self.n_future, xp)
        return {"reference": xp.ravel(future - s.q_joints)}

    def reward_terms(self, s, ts, xp):
        return {
            "joint": tracking_reward(s.q_joints, self._reference(ts, xp), self.joint_scale, xp),
            "ctrl": control_cost(s.excitation, xp),
            "energy": energy_cost(s.qdot_joints, s.joint_torque, xp),
        }

    def termination(self, s, ts, xp):
        return {"joint_error": xp.max(xp.abs(s.q_joints - self._reference(ts, xp))) > self.termination_error_rad}

    def time_up(self, ts, steps, xp):
        """The reference has no frame left after the current one."""
        return ts["frame"] >= xp.asarray(self.bank.lengths)[ts["clip"]] - 1

    def success(self, ts, steps, terminated, xp):
        return xp.logical_and(self.time_up(ts, steps, xp), xp.logical_not(terminated))

    def success_trace(self, ts):
        return {"clip": int(ts["clip"]), "frame": float(ts["frame"])}

"""The CPU environment: any task, on its body, as a ``gymnasium.Env``.

Action: ``Box(−1, 1, (n_muscles,), float32)`` (MyoFullBody: 416), one entry
per muscle in actuator order, mapped to excitation ``(a + 1) / 2`` ∈ [0, 1]
(the paper's map; ``action_map="myosuite"`` selects the original code's
logistic instead, :mod:`mskbench.envs.action_map`).
Finite values outside [−1, 1] are clipped. Non-finite values raise
``ValueError`` unless the env was made with ``nonfinite_action="clip"`` (then
NaN → −1, i.e. no excitation, ±inf → ±1).

Control step: ``frame_skip`` physics steps (MyoFullBody: 10 of 1 ms; the
mouse forelimb: 2 of 1.25 ms), the task's or else the body's.

Observation: flat float32 vector; ``env.unwrapped.obs_layout`` maps block
names to slices (see :mod:`mskbench.envs.observation`).

``info`` on every step: ``reward_terms`` (unweighted, by name; the reward is
``Σ reward_weights[k] · reward_terms[k]``), ``success`` / ``is_success``
(Table XII so far), ``solved_native`` (the task's native solved flag at this
step, :meth:`~mskbench.tasks.Task.solved_native`) and ``solved_native_seen``
(at any step so far), ``success_trace``, ``activation`` (float32, one per
muscle), ``termination`` (``None`` while running; else the condition's name,
``"time_limit"`` when the task's time is up or ``"physics_unstable"``) and
``step``.

``reset(seed=..., options={"initial_state": init})`` starts from a given
:class:`~mskbench.tasks.InitialState` instead of a sampled one (replaying a
particular start).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import gymnasium as gym
import mujoco
import numpy as np

from mskbench.body.base import default_qpos
from mskbench.envs.action_map import check_action_map, excitation
from mskbench.envs.observation import flatten, layout_of, observation_blocks
from mskbench.envs.perturbations import (Perturbation, draw_muscle_gain, noisy_action, noisy_observation,
                                         seed_streams)
from mskbench.sim.cpu import CpuSimulator
from mskbench.tasks import InitContext, InitialState, Task, make_task
from mskbench.tasks.base import TaskState, step_signals

NONFINITE_POLICIES = ("raise", "clip")
PHYSICS_UNSTABLE = "physics_unstable"
TIME_LIMIT = "time_limit"
#: Only the batched env ends a world this way (a full MuJoCo Warp contact buffer).
CONTACT_OVERFLOW = "contact_overflow"


def control_timing(task: Task, frame_skip: int | None) -> tuple[float, int]:
    """``(physics timestep s, physics steps per control step)`` of ``task``: an explicit
    ``frame_skip`` wins, then the task's own, then its body's."""
    dt = task.timestep_s if task.timestep_s is not None else task.body.timestep_s
    if frame_skip is None:
        frame_skip = task.frame_skip if task.frame_skip is not None else task.body.frame_skip
    return float(dt), int(frame_skip)


class MSKEnv(gym.Env):
    """A task as a Gymnasium environment (MuJoCo C backend).

    Parameters
    ----------
    task:
        Task id (``"Stand"``, case-insensitive) or a :class:`~mskbench.tasks.Task`.
    frame_skip:
        Physics steps per control step (default: the task's, else its body's).
    perturbation:
        Robustness-protocol noise (:class:`~mskbench.envs.perturbations.Perturbation`).
    reward_weights:
        Overrides of some reward weights by term name.
    nonfinite_action:
        ``"raise"`` (default) or ``"clip"``.
    memory_bytes:
        Arena reserved for the ``MjData`` (default: the body's).
    render_mode:
        ``None`` or ``"rgb_array"`` (offscreen; on CPU set ``MUJOCO_GL=osmesa``).
    action_map:
        ``"linear"`` (default, the paper's ``(a+1)/2``) or ``"myosuite"`` (the original code's
        logistic; :mod:`mskbench.envs.action_map`).
    """

    metadata: dict[str, Any] = {"render_modes": ["rgb_array"], "render_fps": 100}

    def __init__(
        self,
        task: str | Task = "Stand",
        *,
        frame_skip: int | None = None,
        perturbation: Perturbation | None = None,
        reward_weights: Mapping[str, float] | None = None,
        nonfinite_action: str = "raise",
        memory_bytes: int | None = None,
        render_mode: str | None = None,
        width: int = 640,
        height: int = 480,
        task_kwargs: Mapping[str, Any] | None = None,
        action_map: str = "linear",
    ):
        self.action_map = check_action_map(action_map)
        self.task = task if isinstance(task, Task) else make_task(task, **(task_kwargs or {}))
        if nonfinite_action not in NONFINITE_POLICIES:
            raise ValueError(f"nonfinite_action must be one of {NONFINITE_POLICIES}, got {nonfinite_action!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, "
                             f"got {render_mode!r}")
        self.perturbation = perturbation or Perturbation()
        self.nonfinite_action = nonfinite_action
        self.render_mode = render_mode
        self._size = (int(height), int(width))
        self._renderer = None
        #: The camera :meth:`render` looks through: ``None`` for the body's camera, or a camera name,
        #: id or ``mujoco.MjvCamera`` (a free camera; ``mskbench render --all`` frames each scene so).
        self.render_camera: str | int | mujoco.MjvCamera | None = None

        weights = self.task.resolved_weights(reward_weights)
        self.reward_weights = weights
        self._weight_vec = np.array(list(weights.values()))

        body = self.task.body
        timestep_s, frame_skip = control_timing(self.task, frame_skip)
        model = body.build_model(self.task.add_props, timestep_s=timestep_s, memory_bytes=memory_bytes)
        self.handles = body.handles(model)
        self.sim = CpuSimulator(model, self.handles, frame_skip)
        self.model, self.data = self.sim.model, self.sim.data
        self._ctx = InitContext(model, mujoco.MjData(model), self.handles,
                                default_qpos(model, self.handles), self.sim.control_dt_s)
        self.task.bind(self._ctx)
        self.metadata = dict(self.metadata, render_fps=int(round(1.0 / self.sim.control_dt_s)))

        self.n_muscles = body.n_muscles
        self.action_space = gym.spaces.Box(-1.0, 1.0, (self.n_muscles,), np.float32)
        self._rngs: dict[str, np.random.Generator] | None = None
        # Lay out the observation from one deterministic initial state.
        init = self.task.initial_state(self._ctx, np.random.default_rng(0))
        self.sim.reset(init.qpos, init.qvel)
        view = self.sim.view()
        self.obs_layout = layout_of(self._blocks(view, init.task_state))
        n_obs = next(reversed(self.obs_layout.values())).stop
        self.observation_space = gym.spaces.Box(-np.inf, np.inf, (n_obs,), np.float32)
        self.muscle_gain = np.ones(self.n_muscles)
        self._ts: TaskState = {}
        self._steps = 0
        self._done = True

    # -- helpers -----------------------------------------------------------------
    @property
    def control_dt_s(self) -> float:
        return self.sim.control_dt_s

    @property
    def steps(self) -> int:
        """Control steps taken in the current episode."""
        return self._steps

    @property
    def task_state(self) -> TaskState:
        """The task state of the current episode (read-only use)."""
        return self._ts

    def _seed_streams(self, seed: int | None) -> dict[str, np.random.Generator]:
        if seed is None:
            seed = int(self.np_random.integers(0, 2**63 - 1))
        self._rngs = rngs = seed_streams(seed)
        return rngs

    def _blocks(self, view, ts) -> dict:
        return observation_blocks(view, self.task.body.observation, self.task.observation(view, ts, np))

    def _observe(self, view, ts) -> np.ndarray:
        return flatten(self._blocks(view, ts))

    def _validate_action(self, action) -> np.ndarray:
        a = np.asarray(action, dtype=np.float64)
        if a.shape != (self.n_muscles,):
            raise ValueError(f"action must have shape ({self.n_muscles},), got {a.shape}")
        if not np.isfinite(a).all():
            if self.nonfinite_action == "raise":
                bad = np.flatnonzero(~np.isfinite(a))
                raise ValueError(f"action has {bad.size} non-finite entries (first at index {bad[0]}); "
                                 "pass nonfinite_action='clip' to map NaN to -1 and ±inf to ±1")
            a = np.nan_to_num(a, nan=-1.0, posinf=1.0, neginf=-1.0)
        return np.clip(a, -1.0, 1.0)

    def perturb_normalized_observation(self, normalized_obs: np.ndarray) -> np.ndarray:
        """Eq. 5 hook: add the configured observation noise to a policy-normalised observation.

        Returns ``normalized_obs`` unchanged when ``observation_noise_std`` is 0.
        """
        std = self.perturbation.observation_noise_std
        x = np.asarray(normalized_obs)
        if std == 0.0:
            return x
        rngs = self._seed_streams(None) if self._rngs is None else self._rngs
        return noisy_observation(x, std, rngs["observation"].standard_normal(x.shape)).astype(x.dtype)

    # -- gymnasium API -------------------------------------------------------------
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        unknown = sorted(set(options or {}) - {"initial_state"})
        if unknown:
            raise ValueError(f"unknown reset options {unknown}; valid: 'initial_state' (a mskbench.tasks.InitialState)")
        start = (options or {}).get("initial_state")
        if start is not None and not isinstance(start, InitialState):
            raise TypeError(f"options['initial_state'] must be an InitialState, got {type(start).__name__}")
        super().reset(seed=seed)
        rngs = self._seed_streams(seed) if seed is not None or self._rngs is None else self._rngs
        sigma = self.perturbation.muscle_gain_range
        self.muscle_gain = draw_muscle_gain(rngs["gain"], sigma, self.n_muscles)
        self.sim.set_muscle_gain_scale(self.muscle_gain if sigma > 0.0 else None)
        init = start if start is not None else self.task.initial_state(self._ctx, rngs["init"])
        self.sim.reset(init.qpos, init.qvel)
        self._ts = init.task_state
        self._steps = 0
        self._done = False
        self._native_seen = False
        view = self.sim.view()
        info = {"success_trace": self.task.success_trace(self._ts), "muscle_gain": self.muscle_gain.copy()}
        return self._observe(view, self._ts), info

    def step(self, action):
        if self._done:
            raise RuntimeError("episode has ended (or reset() was never called); call reset() first")
        a = self._validate_action(action)
        std = self.perturbation.action_noise_std
        if std > 0.0:
            a = noisy_action(a, std, self._rngs["action"].standard_normal(self.n_muscles))
        stable = self.sim.step(excitation(a, self.action_map, np))
        self._steps += 1
        if not stable:
            return self._unstable_step()
        view = self.sim.view()
        task = self.task
        sig = step_signals(task, view, self._ts, self._steps, np)
        self._ts = sig.ts
        terms = {k: float(v) for k, v in sig.terms.items()}
        reward = float(np.dot(self._weight_vec, [terms[k] for k in self.reward_weights]))
        reason = next((k for k, v in sig.conditions.items() if v), None)
        terminated = bool(sig.terminated)
        truncated = bool(sig.truncated)
        success = sig.success
        if truncated:
            reason = TIME_LIMIT
        self._done = terminated or truncated
        success = bool(success)
        native = bool(sig.solved_native)
        self._native_seen = self._native_seen or native
        info = {
            "reward_terms": terms,
            "success": success,
            "is_success": success,
            "solved_native": native,
            "solved_native_seen": self._native_seen,
            "success_trace": {**task.success_trace(self._ts), "steps": self._steps},
            "activation": view.activation.astype(np.float32),
            "termination": reason,
            "step": self._steps,
        }
        return self._observe(view, self._ts), reward, terminated, truncated, info

    def _unstable_step(self):
        self._done = True
        zero_terms = {k: 0.0 for k in self.reward_weights}
        info = {
            "reward_terms": zero_terms,
            "success": False,
            "is_success": False,
            "solved_native": False,
            "solved_native_seen": self._native_seen,
            "success_trace": {**self.task.success_trace(self._ts), "steps": self._steps},
            "activation": np.zeros(self.n_muscles, np.float32),
            "termination": PHYSICS_UNSTABLE,
            "step": self._steps,
        }
        obs = np.zeros(self.observation_space.shape, np.float32)
        return obs, 0.0, True, False, info

    def render(self):
        if self.render_mode != "rgb_array":
            return None
        if self._renderer is None:
            h, w = self._size
            self.model.vis.global_.offwidth = max(self.model.vis.global_.offwidth, w)
            self.model.vis.global_.offheight = max(self.model.vis.global_.offheight, h)
            self._renderer = mujoco.Renderer(self.model, height=h, width=w)
        if self._ts:
            self.task.sync_props(self.model, self.data, self._ts)
            mujoco.mj_kinematics(self.model, self.data)  # positions only; dynamics untouched
        camera = self.render_camera if self.render_camera is not None else self.task.body.camera or -1
        self._renderer.update_scene(self.data, camera=camera)
        return self._renderer.render()

    def close(self):
        if self._renderer is not None:
            self._renderer.close()
            self._renderer = None

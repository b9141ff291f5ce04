"""The task contract.

A task is everything about one benchmark task and nothing else: its scene
props, initial-state sampler, task observations, named reward terms with their
weights (Tables VI–VIII), named termination conditions (Tables IX–XI), the
success criterion (Table XII) and the horizon.

Everything evaluated at step time is a pure function of a
:class:`~mskbench.sim.state.StateView` and a *task state* ``ts`` (a flat
``dict`` of arrays: phase clocks, targets, counters, success traces), written
with the array namespace ``xp`` so the CPU and JAX backends share it. Per
control step the environment calls, in this order::

    ts    = task.advance(view, ts, xp)            # clocks, counters, traces
    terms = task.reward_terms(view, ts, xp)       # state reached + updated ts
    done  = task.termination(view, ts, xp)
    obs   = task.observation(view, ts, xp)
    ok    = task.success(ts, steps, terminated, xp)

``advance`` sees the state the step reached, so a phase clock in ``ts`` always
names the phase of the current physics state, and an event (a touch) is
recorded in ``ts`` for the reward of the step in which it happened.

Only :meth:`Task.initial_state` runs outside that loop; it may use the
simulator on the CPU (forward kinematics, ground placement) and a NumPy
``Generator``.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

import mujoco
import numpy as np

from mskbench.body.myofullbody import BodyHandles
from mskbench.sim.state import StateView

FAMILIES = ("stabilization", "locomotion", "interaction")

TaskState = dict[str, Any]


@dataclass
class InitialState:
    """What :meth:`Task.initial_state` returns: a physics state and a task state."""

    qpos: np.ndarray
    qvel: np.ndarray
    task_state: TaskState


class InitContext:
    """CPU helpers a task may use while sampling an initial state."""

    def __init__(self, model: mujoco.MjModel, data: mujoco.MjData, handles: BodyHandles,
                 default_qpos: np.ndarray, control_dt_s: float):
        self.control_dt_s = control_dt_s
        self.model = model
        self.data = data
        self.handles = handles
        self.default_qpos = default_qpos

    def pose(self, joints: Mapping[str, float] | None = None, *, base: np.ndarray | None = None,
             root_xy: tuple[float, float] = (0.0, 0.0), on_ground: bool = True,
             ground_geom: str = "floor") -> np.ndarray:
        """A consistent standing-frame ``qpos`` with joints set by model name.

        Starts from ``base`` (default: the neutral pose), sets the given
        joints (model joint names, rad), resolves the joint couplings, puts
        the root at ``root_xy`` and (``on_ground``) lowers it onto the geom
        ``ground_geom`` (default the floor; a platform for elevated starts).
        Props' coordinates are left as in ``base``.
        """
        from mskbench.body.myofullbody import place_on_ground

        qpos = (self.default_qpos if base is None else base).copy()
        for name, value in (joints or {}).items():
            qpos[self.joint_qpos_adr(name)] = value
        self.handles.couplings.apply(qpos)
        qpos[0:2] = root_xy
        if on_ground:
            self.data.qpos[:] = qpos
            place_on_ground(self.model, self.data, self.handles, floor_geom=ground_geom)
            qpos = self.data.qpos.copy()
        return qpos

    # -- model ids for props (resolve once in ``Task.bind``) --------------------------
    def _id(self, kind: mujoco.mjtObj, name: str) -> int:
        idx = mujoco.mj_name2id(self.model, kind, name)
        if idx < 0:
            raise ValueError(f"model has no {kind.name.removeprefix('mjOBJ_').lower()} named {name!r}")
        return int(idx)

    def body_id(self, name: str) -> int:
        """Model id of a body (e.g. a prop added in ``add_props``)."""
        return self._id(mujoco.mjtObj.mjOBJ_BODY, name)

    def body_root(self, name: str) -> int:
        """Id of the root of a body's kinematic tree (for :meth:`StateView.body_vel`)."""
        return int(self.model.body_rootid[self.body_id(name)])

    def geom_id(self, name: str) -> int:
        return self._id(mujoco.mjtObj.mjOBJ_GEOM, name)

    def joint_qpos_adr(self, name: str) -> int:
        """``qpos`` address of a joint (its first coordinate)."""
        return int(self.model.jnt_qposadr[self._id(mujoco.mjtObj.mjOBJ_JOINT, name)])

    def joint_dof_adr(self, name: str) -> int:
        """``qvel`` address of a joint (its first degree of freedom)."""
        return int(self.model.jnt_dofadr[self._id(mujoco.mjtObj.mjOBJ_JOINT, name)])

    def forward(self, qpos: np.ndarray, qvel: np.ndarray | None = None) -> StateView:
        """Run forward kinematics at ``qpos`` and return a NumPy state view."""
        self.data.qpos[:] = qpos
        self.data.qvel[:] = 0.0 if qvel is None else qvel
        mujoco.mj_forward(self.model, self.data)
        return StateView(self.data, self.handles, np)


class Task(ABC):
    """Base class of all tasks. Subclasses set the class attributes and methods.

    ``reward_weights`` maps each reward term's name to its weight; the
    per-step reward is ``Σ weight · term``. Weights can be overridden per
    environment (``reward_weights=`` of the env), never the formulas.
    """

    name: ClassVar[str]
    family: ClassVar[str]
    horizon: ClassVar[int]
    reward_weights: ClassVar[Mapping[str, float]]
    #: One-line summary for ``mskbench tasks``.
    summary: ClassVar[str] = ""

    # -- scene -------------------------------------------------------------------
    def add_props(self, spec: mujoco.MjSpec) -> None:
        """Add the task's props to the scene (default: none)."""

    def sync_props(self, model: mujoco.MjModel, data: mujoco.MjData, ts: TaskState) -> None:
        """Move visual-only props (mocap markers) to match ``ts`` (CPU, for rendering)."""

    def bind(self, ctx: InitContext) -> None:
        """Precompute constants from the compiled model (once per environment)."""

    # -- episode -----------------------------------------------------------------
    @abstractmethod
    def initial_state(self, ctx: InitContext, rng: np.random.Generator) -> InitialState:
        """Sample the initial physics state and task state."""

    @abstractmethod
    def observation(self, s: StateView, ts: TaskState, xp) -> dict[str, Any]:
        """Task-specific observation blocks, by name, each a 1-D array of fixed size."""

    @abstractmethod
    def reward_terms(self, s: StateView, ts: TaskState, xp) -> dict[str, Any]:
        """Unweighted reward terms, by the names in ``reward_weights``."""

    @abstractmethod
    def termination(self, s: StateView, ts: TaskState, xp) -> dict[str, Any]:
        """Named termination conditions (booleans); any true ends the episode."""

    def advance(self, s: StateView, ts: TaskState, xp) -> TaskState:
        """Task state after this control step (clocks, counters, traces). Default: unchanged."""
        return ts

    @abstractmethod
    def success(self, ts: TaskState, steps, terminated, xp):
        """Table XII success of the episode so far (boolean)."""

    def success_trace(self, ts: TaskState) -> dict[str, Any]:
        """The task-state entries the success criterion reads (for ``info``)."""
        return {}

    def resolved_weights(self, overrides: Mapping[str, float] | None = None) -> dict[str, float]:
        """``reward_weights`` with some weights overridden; unknown term names are an error."""
        weights = dict(self.reward_weights)
        for key, value in (overrides or {}).items():
            if key not in weights:
                raise ValueError(f"unknown reward term {key!r} for {self.name}; valid terms: {', '.join(weights)}")
            weights[key] = float(value)
        return weights


def step_signals(task: Task, s: StateView, ts: TaskState, steps, xp):
    """One control step's task signals, in the contract's order (every backend calls this).

    Returns ``(ts, terms, conditions, terminated, success)``: the advanced task
    state, the unweighted reward terms, the named termination conditions,
    whether any of them holds, and the success so far.
    """
    ts = task.advance(s, ts, xp)
    terms = task.reward_terms(s, ts, xp)
    conditions = task.termination(s, ts, xp)
    terminated = xp.any(xp.stack([xp.asarray(v) for v in conditions.values()])) if conditions else xp.zeros((), bool)
    return ts, terms, conditions, terminated, task.success(ts, steps, terminated, xp)


def advance_phase(phase, control_dt_s: float, period_s: float):
    """A phase clock ``φ ∈ [0, 1)`` one control step later."""
    return (phase + control_dt_s / period_s) % 1.0


def phase_clock(phase, xp):
    """The phase observation ``(sin 2πφ, cos 2πφ)`` (2,)."""
    angle = 2.0 * np.pi * phase
    return xp.stack([xp.sin(angle), xp.cos(angle)])


def efficiency(s: StateView, xp):
    """``R_efficiency = mean(a²)``: the action regularisation applied across tasks."""
    return xp.mean(s.activation**2)


def fell(s: StateView, com_height_min_m: float, tilt_max_rad: float, xp) -> dict[str, Any]:
    """The common fall conditions: CoM below a height, or root tilt (Eq. 18) above an angle."""
    return {"com_too_low": s.com_pos[2] < com_height_min_m, "tilted": s.tilt > tilt_max_rad}


def survived(steps, terminated, horizon: int, xp):
    """Survival success: ``horizon`` steps reached without earlier termination."""
    return xp.logical_and(steps >= horizon, xp.logical_not(terminated))

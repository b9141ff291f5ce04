"""The task contract.

A task is everything about one benchmark task and nothing else: its body, its
scene props, initial-state sampler, task observations, named reward terms with
their weights (Tables VI–VIII), named termination conditions (Tables IX–XI),
the success criterion (Table XII), the horizon and its options (a
:class:`TaskConfig` dataclass with the paper's defaults, as MuJoCo
Playground's ``default_config()``).

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
    over  = task.time_up(ts, steps, xp)           # truncation (default: the horizon)
    nat   = task.solved_native(view, ts, steps, xp)  # the original code's own "solved" flag

Success (App. A-B1): an episode succeeds when the Table XII criterion holds
at its end, or when the task's *native* solved signal (the flag the authors'
original environment raises, :meth:`Task.solved_native`) was seen at any step
— unless that signal is degenerate on this body (a zero, passive or random
policy meets it; :attr:`Task.native_degenerate` says why), in which case only
Table XII counts (:func:`paper_success`).

``advance`` sees the state the step reached, so a phase clock in ``ts`` always
names the phase of the current physics state, and an event (a touch) is
recorded in ``ts`` for the reward of the step in which it happened.

Initial states come one of two ways:

* a task that implements :meth:`Task.start` (the fixed part, computed on the
  host: a pose placed on the ground, constants) and, if its start is random,
  :meth:`Task.randomize` (written with ``xp`` and a random source, like the
  reward terms) draws its starts *on the device* in the batched environment,
  per world; the CPU environment runs the same code with NumPy;
* a task whose sampler needs the simulator for every draw (joint noise then
  ground placement) implements :meth:`Task.initial_state` on the host; the
  batched environment then refills a bank of host-drawn starts between
  rollouts (:mod:`mskbench.envs.jax_env`).

Either way the original code's start noise (Gaussian noise on the joints, the
root and the velocities, the couplings kept) is added by
:func:`mskbench.tasks.starts.add_start_noise`, one function for NumPy and JAX;
:meth:`Task.bind` stores where it goes (``start_tables``).
"""

from __future__ import annotations

import dataclasses
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar, NamedTuple, Protocol

import mujoco
import numpy as np

from mskbench.body.base import Body, BodyHandles, place_on_ground, put  # noqa: F401  (put: re-exported)
from mskbench.body.myofullbody import MYOFULLBODY
from mskbench.catalog import FAMILIES
from mskbench.sim.state import StateView
from mskbench.tasks.starts import StartTables

TaskState = Mapping[str, Any]


class InitialState(NamedTuple):
    """What :meth:`Task.initial_state` returns: a physics state and a task state (a JAX pytree)."""

    qpos: Any
    qvel: Any
    task_state: TaskState


# -- options ------------------------------------------------------------------------------------
def option(default: Any, doc: str = "") -> Any:
    """A task option with its default and a one-line description (for ``mskbench tasks --options``)."""
    return dataclasses.field(default=default, metadata={"doc": doc})


@dataclass(frozen=True)
class TaskConfig:
    """Options of a task. Each task subclasses it as ``Task.Config``; its fields are the task's
    options, their defaults the paper's values (or our documented choices), and the task reads
    them as attributes (``self.target_speed_mps``). Validation goes in ``__post_init__``."""

    def replace(self, **overrides: Any) -> "TaskConfig":
        return dataclasses.replace(self, **overrides)

    def as_dict(self) -> dict[str, Any]:
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}


def check_range(config: TaskConfig, *names: str) -> None:
    """A ``ValueError`` naming the first of ``names`` (``(low, high)`` options) that is not finite with low <= high."""
    for name in names:
        low, high = getattr(config, name)
        if not (np.isfinite(low) and np.isfinite(high) and low <= high):
            raise ValueError(f"{name} must be a finite (low, high) range with low <= high, got {(low, high)}")


def check_positive(config: TaskConfig, *names: str, allow_zero: bool = False) -> None:
    """A ``ValueError`` naming the first of ``names`` that is not positive (or negative, with ``allow_zero``)."""
    for name in names:
        value = getattr(config, name)
        if not np.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
            raise ValueError(f"{name} must be {'non-negative' if allow_zero else 'positive'}, got {value}")


# -- random sources for samplers written once for NumPy and JAX -------------------------------------
class Random(Protocol):
    """What :meth:`Task.randomize` draws from: NumPy's generator on the host, JAX keys on the device."""

    def uniform(self, low: Any = 0.0, high: Any = 1.0, shape: tuple[int, ...] = ()) -> Any: ...

    def integers(self, low: Any, high: Any) -> Any: ...

    def normal(self, loc: Any = 0.0, scale: Any = 1.0, shape: tuple[int, ...] = ()) -> Any: ...


class HostRandom:
    """:class:`Random` over a NumPy ``Generator`` (the CPU environment's per-episode stream)."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng

    def uniform(self, low=0.0, high=1.0, shape=()):
        return self.rng.uniform(low, high, size=shape or None)

    def integers(self, low, high):
        return self.rng.integers(low, high)

    def normal(self, loc=0.0, scale=1.0, shape=()):
        return self.rng.normal(loc, scale, size=shape or None)


class KeyRandom:
    """:class:`Random` over a JAX key (one world's draw on the device); each call splits the key."""

    def __init__(self, key):
        self.key = key

    def _next(self):
        import jax

        self.key, k = jax.random.split(self.key)
        return k

    def uniform(self, low=0.0, high=1.0, shape=()):
        import jax
        import jax.numpy as jnp

        low, high = jnp.asarray(low, jnp.float32), jnp.asarray(high, jnp.float32)
        shape = tuple(shape) or jnp.broadcast_shapes(low.shape, high.shape)
        return jax.random.uniform(self._next(), shape, jnp.float32, low, high)

    def integers(self, low, high):
        import jax
        import jax.numpy as jnp

        return jax.random.randint(self._next(), (), jnp.asarray(low, jnp.int32), jnp.asarray(high, jnp.int32))

    def normal(self, loc=0.0, scale=1.0, shape=()):
        import jax
        import jax.numpy as jnp

        loc, scale = jnp.asarray(loc, jnp.float32), jnp.asarray(scale, jnp.float32)
        shape = tuple(shape) or jnp.broadcast_shapes(loc.shape, scale.shape)
        return loc + scale * jax.random.normal(self._next(), shape, jnp.float32)


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
        Props' coordinates are left as in ``base``. A body welded to the world
        keeps its root where it is.
        """
        qpos = (self.default_qpos if base is None else base).copy()
        for name, value in (joints or {}).items():
            qpos[self.joint_qpos_adr(name)] = value
        self.handles.couplings.apply(qpos)
        if not self.handles.free_root:
            return qpos
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

    Options: ``Task.Config`` (a :class:`TaskConfig`); ``Task(**overrides)`` or
    ``Task(config)`` makes a task, and every option is an attribute of it.
    An unknown option is a ``ValueError`` that lists the task's options.
    """

    name: ClassVar[str]
    family: ClassVar[str]
    horizon: int
    reward_weights: Mapping[str, float]
    #: One-line summary for ``mskbench tasks``.
    summary: ClassVar[str] = ""
    #: The embodiment the task runs on.
    body: ClassVar[Body] = MYOFULLBODY
    #: Physics step (s) and physics steps per control step; ``None``: the body's.
    timestep_s: float | None = None
    frame_skip: int | None = None
    #: The control step (s) of the environment the task is bound to (set by :meth:`bind`).
    control_dt_s: float = 0.01
    #: The original code's native "solved" condition in words, with its ``file@commit`` (None: it has none).
    native_solved: ClassVar[str | None] = None
    #: Why the native signal does not count towards success, or None when it counts: it is degenerate on
    #: this body (a zero, passive or random policy, ``hold`` where the goal is more than the start, or a
    #: cheat probe meets it: ``mskbench calibrate``, ``benchmarks/native_degeneracy.py``), or it is an
    #: instantaneous flag that skips Table XII's own clauses (WalkAndSit, Catch). The numbers are in
    #: docs/tasks.md and docs/calibration.md.
    native_degenerate: ClassVar[str | None] = None
    #: Whether ``native_degenerate`` is declared because the signal skips Table XII's own clauses (then it does
    #: not count whether or not a probe meets it; the calibration's verdict accepts it unmet).
    native_skips_clauses: ClassVar[bool] = False
    #: Whether the task's goal is to keep its start (stand, hold the bar, stay on one leg, on the board):
    #: only there may the ``hold`` probe — the start posture held — succeed; anywhere else a success of
    #: ``hold`` is free (:func:`mskbench.eval.calibration.free_successes`).
    goal_is_start: ClassVar[bool] = False

    @dataclass(frozen=True)
    class Config(TaskConfig):
        """This task has no options."""

    def __init__(self, config: TaskConfig | None = None, **overrides: Any):
        cls = type(self)
        if config is None:
            config = cls.Config()
        elif not isinstance(config, cls.Config):
            raise TypeError(f"{cls.__name__} takes a {cls.__name__}.Config, got {type(config).__name__}")
        unknown = sorted(set(overrides) - {f.name for f in dataclasses.fields(config)})
        if unknown:
            options = ", ".join(f"{k}={v!r}" for k, v in config.as_dict().items()) or "none"
            raise ValueError(f"{cls.__name__} has no option {', '.join(map(repr, unknown))}; "
                             f"its options (defaults): {options}")
        self.config = config.replace(**overrides) if overrides else config
        for key, value in self.config.as_dict().items():
            setattr(self, key, value)

    if TYPE_CHECKING:  # options are attributes, set from ``self.config`` in ``__init__``
        def __getattr__(self, name: str) -> Any: ...

    @classmethod
    def default_config(cls) -> TaskConfig:
        """The task's options at their defaults."""
        return cls.Config()

    @classmethod
    def options(cls) -> dict[str, tuple[Any, str]]:
        """Option name -> (default, description)."""
        return {f.name: (getattr(cls.Config(), f.name), f.metadata.get("doc", ""))
                for f in dataclasses.fields(cls.Config)}

    # -- scene -------------------------------------------------------------------
    def add_props(self, spec: mujoco.MjSpec) -> None:
        """Add the task's props to the scene (default: none)."""

    def sync_props(self, model: mujoco.MjModel, data: mujoco.MjData, ts: TaskState) -> None:
        """Move visual-only props (mocap markers) to match ``ts`` (CPU, for rendering)."""

    def bind(self, ctx: InitContext) -> None:
        """Precompute constants from the compiled model (once per environment). The base stores the
        control step and where start noise goes (:class:`~mskbench.tasks.starts.StartTables`); a task
        that overrides this calls ``super().bind(ctx)`` first."""
        self.control_dt_s = ctx.control_dt_s
        self.start_tables = StartTables.from_model(ctx.model, ctx.handles)

    # -- episode -----------------------------------------------------------------
    def start(self, ctx: InitContext) -> InitialState:
        """The fixed part of every initial state (host; computed once per environment by the batched
        env). Implement it, with :meth:`randomize` if the start is random, for starts drawn on the device."""
        raise NotImplementedError(f"{self.name} samples its initial states on the host (initial_state)")

    def randomize(self, init: InitialState, rng: Random, xp) -> InitialState:
        """An episode's initial state from :meth:`start`'s, drawn with ``rng`` in the array namespace
        ``xp`` (the same code on the host and the device). It returns the task-state keys of ``start``
        (the batched env keeps their dtypes), makes the same draws in the same order whatever it
        draws (no branching on values), and uses :func:`put` for ``qpos``/``qvel``. Default: the start
        itself."""
        return init

    def initial_state(self, ctx: InitContext, rng: np.random.Generator) -> InitialState:
        """Sample the initial physics state and task state (host). Default: :meth:`start` (computed
        once per context: it is fixed), then :meth:`randomize` with NumPy; a task whose every draw
        needs the simulator overrides this."""
        init = self.once_per_context(ctx, self.start)
        fresh = InitialState(init.qpos.copy(), init.qvel.copy(),
                             {k: v.copy() if isinstance(v, np.ndarray) else v for k, v in init.task_state.items()})
        return self.randomize(fresh, HostRandom(rng), np)

    def once_per_context(self, ctx: InitContext, build) -> InitialState:
        """``build(ctx)``, computed once per context and kept (a fixed start that every draw begins from)."""
        cached = self.__dict__.get("_start_cache")
        if cached is None or cached[0] is not ctx:
            cached = self._start_cache = (ctx, build(ctx))
        return cached[1]

    @property
    def device_resets(self) -> bool:
        """Whether initial states can be drawn on the device (:meth:`start` + :meth:`randomize`)."""
        return type(self).initial_state is Task.initial_state

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

    def solved_native(self, s: StateView, ts: TaskState, steps, xp):
        """The original code's own ``solved`` flag at this step (boolean; :attr:`native_solved` says
        which condition), from the state the step reached and the advanced task state. Default:
        never (the original has no such flag for the task)."""
        return xp.zeros((), bool)

    @classmethod
    def native_counts(cls) -> bool:
        """Whether a seen native solved signal counts as success (it exists and is not degenerate)."""
        return cls.native_solved is not None and cls.native_degenerate is None

    def time_up(self, ts: TaskState, steps, xp):
        """Whether the episode is truncated after ``steps`` control steps. Default: at the horizon."""
        return steps >= self.horizon

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


class Signals(NamedTuple):
    """One control step's task signals (:func:`step_signals`)."""

    ts: TaskState
    terms: dict[str, Any]
    conditions: dict[str, Any]
    terminated: Any
    truncated: Any
    success: Any
    solved_native: Any


def step_signals(task: Task, s: StateView, ts: TaskState, steps, xp) -> Signals:
    """One control step's task signals, in the contract's order (every backend calls this): the
    advanced task state, the unweighted reward terms, the named termination conditions, whether
    any of them holds, whether the episode is truncated instead (:meth:`Task.time_up`, only when not
    terminated), the Table XII success so far and the native solved flag of this step."""
    ts = task.advance(s, ts, xp)
    terms = task.reward_terms(s, ts, xp)
    conditions = task.termination(s, ts, xp)
    terminated = xp.any(xp.stack([xp.asarray(v) for v in conditions.values()])) if conditions else xp.zeros((), bool)
    truncated = xp.logical_and(xp.logical_not(terminated), task.time_up(ts, steps, xp))
    return Signals(ts, terms, conditions, terminated, truncated, task.success(ts, steps, terminated, xp),
                   xp.asarray(task.solved_native(s, ts, steps, xp), bool))


def paper_success(task: type[Task] | Task, table_xii: bool, native_seen: bool) -> bool:
    """An episode's success by the paper's rule (App. A-B1, Table XII caption): the Table XII
    criterion, or a native solved signal seen at any step when the task's native signal counts
    (:meth:`Task.native_counts`)."""
    cls = type(task) if isinstance(task, Task) else task
    return bool(table_xii) or (bool(native_seen) and cls.native_counts())


def advance_phase(phase, control_dt_s: float, period_s: float):
    """A phase clock ``φ ∈ [0, 1)`` one control step later."""
    return (phase + control_dt_s / period_s) % 1.0


def phase_clock(phase, xp):
    """The phase observation ``(sin 2πφ, cos 2πφ)`` (2,)."""
    angle = 2.0 * np.pi * phase
    return xp.stack([xp.sin(angle), xp.cos(angle)])


def efficiency(s: StateView, xp):
    """``R_efficiency = mean(a²)`` over the muscle activations ``a`` after the step (in [0, 1]), not the action:
    the paper defines ``a ∈ ℝ^M`` as "the muscle activations at the current control step" (App. A), and
    Table VI's note calls this term, applied across tasks, "action regularization"."""
    return xp.mean(s.activation**2)


def fell(s: StateView, com_height_min_m: float, tilt_max_rad: float, xp) -> dict[str, Any]:
    """The common fall conditions: CoM below a height, or root tilt (Eq. 18) above an angle."""
    return {"com_too_low": s.com_pos[2] < com_height_min_m, "tilted": s.tilt > tilt_max_rad}


def survived(steps, terminated, horizon: int, xp):
    """Survival success: ``horizon`` steps reached without earlier termination."""
    return xp.logical_and(steps >= horizon, xp.logical_not(terminated))

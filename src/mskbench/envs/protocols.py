"""The interfaces between environments, trainers, evaluators and policies.

Three ``typing.Protocol`` classes say what a trainer or an evaluator may call
(checked statically with mypy on ``src/``, and at run time where a choice
depends on it):

* :class:`VectorEnv` — NumPy in and out, several worlds stepped from Python
  (the CPU stack: :class:`~mskbench.envs.vector.MSKVectorEnv`);
* :class:`BatchedEnv` — functional and jittable, thousands of worlds on a
  device (:class:`~mskbench.envs.jax_env.TaskJaxEnv`); its state is a
  :class:`State`, each step returns a :class:`StepOut`;
* :class:`Policy` — ``act(obs)``, with the optional parts declared as their own
  protocols (:class:`EpisodicPolicy`, :class:`NormalizingPolicy`) and filled in
  by :func:`mskbench.policies.as_policy` so callers never probe for methods.

:class:`State`, :class:`World`, :class:`Bank` and :class:`StepOut` are
``NamedTuple`` s: typed, immutable, and JAX pytrees without registration.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np

Array = Any  # a NumPy or JAX array

#: The mesh axis a data-parallel trainer shards a batched env's worlds over
#: (:mod:`mskbench.agents.data_parallel`). Inside its ``shard_map`` a :class:`BatchedEnv`'s ``step`` sees a
#: :class:`State` whose ``worlds`` are this device's contiguous slice (in world order) and whose other
#: fields (bank, cursor, key) are whole, the same on every device; a step that couples worlds (the bank's
#: cursor) reduces over this axis, so every device's state matches the one-device step's.
WORLD_AXIS = "worlds"


# -- the batched env's state -------------------------------------------------------------------
class World(NamedTuple):
    """Everything one world carries between steps (batched: a leading world axis on every leaf)."""

    data: Any  # physics, in the backend's representation
    task: Mapping[str, Array]  # task state (clocks, targets, counters, success traces)
    obs: Array  # observation of the current state
    steps: Array  # control steps in the current episode (int32)
    success: Array  # success so far (bool)
    done: Array  # the episode ended at the last step (bool)
    key: Array  # the world's PRNG key (action noise, resets)
    action_std: Array  # σ_act of Eq. 4 (float32)
    gain_range: Array  # σ_dyn of Eq. 6 (float32)
    gain: Array | None  # per-muscle gain factors (None: the compiled gains, no per-world copy)
    unstable_resets: Array  # episodes ended by unstable physics (int32, over the world's life)
    overflows: Array  # episodes ended by a full contact/constraint buffer (int32)


class Bank(NamedTuple):
    """Initial states ready for resets, a leading axis of ``size`` entries on every leaf."""

    initial: Any  # the physics configurations, prepared for the backend
    task: Mapping[str, Array]  # their task states
    data: Any | None  # their physics after a forward pass (None with per-world gains: computed per reset)
    obs: Array | None  # their first observations (None with per-world gains)


class State(NamedTuple):
    """The batched env's state: the worlds, and the bank their resets draw from."""

    worlds: World
    bank: Bank
    cursor: Array  # the bank entry the next reset takes (int32); entries before it are used
    reused: Array  # resets since the last refresh that found the bank used up and took an old entry
    key: Array  # drives the next refill on the device

    @property
    def obs(self) -> Array:
        return self.worlds.obs

    @property
    def done(self) -> Array:
        return self.worlds.done

    @property
    def steps(self) -> Array:
        return self.worlds.steps


class StepOut(NamedTuple):
    """What one batched step returns besides the new state (leading world axis)."""

    obs: Array  # observation after the step (after the reset, for a world that was reset)
    reward: Array
    terminated: Array
    truncated: Array
    final_obs: Array  # the observation the step reached, before any reset
    success: Array
    reward_terms: Mapping[str, Array]  # unweighted, by name
    termination: Array  # index into the env's ``termination_names``; −1 while running
    record: Mapping[str, Array] | None  # with ``record=True``: activation, qvel_joints, touch[, pelvis_xy, yaw]
    #: The task's native solved flag at this step (False for a world that was not stepped); ``None`` from a
    #: functional env that has no native signal.
    solved_native: Array | None = None


# -- environments ------------------------------------------------------------------------------
@runtime_checkable
class VectorEnv(Protocol):
    """Worlds of one task stepped from Python, NumPy in and out, auto-resetting.

    ``step`` returns ``(obs, reward, terminated, truncated, info)``, arrays over
    worlds; a finished world is restarted in the same step (``obs`` is then its
    new first observation, ``info["final_obs"]`` the last one of the finished
    episode, ``info["episode_returns"]`` the returns of the episodes that ended).
    """

    num_envs: int
    obs_size: int
    action_size: int
    obs_layout: Mapping[str, slice]

    def reset(self, seed: int | None = None) -> np.ndarray: ...

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]: ...

    def close(self) -> None: ...


@runtime_checkable
class BatchedEnv(Protocol):
    """A functional JAX environment: ``reset(key) -> State``, ``step(state, actions) -> (State, StepOut)``.

    ``step`` is jitted and may run inside ``jax.lax.scan``; with ``auto_reset``
    a finished world takes the next entry of the state's bank. ``refresh``
    (host side, between rollouts) refills the bank with fresh initial states.
    """

    num_envs: int
    obs_size: int
    action_size: int
    obs_layout: Mapping[str, slice]
    termination_names: tuple[str, ...]

    def reset(self, key: Array) -> State: ...

    def step(self, state: State, actions: Array, auto_reset: bool = True,
             record: bool = False) -> tuple[State, StepOut]: ...

    def refresh(self, state: State) -> State: ...


# -- policies ----------------------------------------------------------------------------------
@runtime_checkable
class Policy(Protocol):
    """``act(obs) -> action`` (actions in [−1, 1], one per muscle)."""

    def act(self, obs: np.ndarray) -> np.ndarray: ...


@runtime_checkable
class EpisodicPolicy(Policy, Protocol):
    """A policy told when an episode starts, and its seed (episode ``i`` of a run uses ``seed + i``)."""

    def reset(self, seed: int | None = None) -> None: ...


@runtime_checkable
class NormalizingPolicy(Policy, Protocol):
    """A policy that normalises observations itself; the protocol adds observation noise (Eq. 5)
    between the two halves: ``act(obs) == act_normalized(normalize_observation(obs))``."""

    def normalize_observation(self, obs: np.ndarray) -> np.ndarray: ...

    def act_normalized(self, x: np.ndarray) -> np.ndarray: ...

"""DynSyn's action map: the weight bound's schedule, the map from a learner's action to muscle actions, the
groups it acts through (:class:`SynergyGroups`, the groups file) and the map put between a learner and the env.

The map (:func:`dynsyn_muscle_actions`)
---------------------------------------
The learner's action is ``[a_G (n_groups), w (n_muscles − n_groups)]``, all in
[−1, 1]: one action per group and one weight per muscle that is not its
group's representative (ascending muscle index). Muscle ``i`` of group ``G(i)``
gets [LAYER]::

    u_i = clip(a_G(i) · (1 + clip(0.1 · w_i, −b, b)), −1, 1)     (w_i = 0 for a representative)

with ``b`` the weight bound (:class:`WeightBoundSchedule`). With ``b = 0`` every
muscle takes its group's action exactly; the bound can never let a weight
scale an action by more than ±10 % (the 0.1 scale), and since ``w`` ∈ [−1, 1],
bounds above 0.1 change nothing. The total learner action size is
``n_muscles`` (416 on MyoFullBody), as in the original, where the actor emits
``n_groups`` group actions and ``n_muscles − n_groups`` weights.

Where the weights live, and how the bound enters
------------------------------------------------
In the original the weights are produced *inside the actor* [LAYER]: a second
linear head on the actor's last hidden layer gives their mean, a fixed log
standard deviation of 0.5 [CFG] their noise, tanh squashes them, and the map
above turns (group actions, weights) into the 416 muscle actions that the
env, the replay buffer and the critic see. The weights are state-dependent
because their mean is a function of the observation; they are left out of
the log-probability (entropy target −n_groups [MSK]); the bound is pushed
into the layer before every update [MSK].

:class:`DynSynActionWrapper` and :class:`DynSynActionMap` realise the same
map *outside* the network, for any learner: the policy outputs the weights as
part of its action (state-dependent because the policy is), the wrapper
applies the map with the bound its schedule gives at the current step
(``set_step(n)``, ``n`` counting transitions over all worlds, as
Stable-Baselines3's ``num_timesteps``). The learner then treats the weights
as ordinary action dimensions (its own noise and entropy on them) and its
critic sees (group actions, weights) rather than muscle actions. A learner
that wants the original exactly calls :func:`dynsyn_muscle_actions` in its
actor (jax.numpy) instead.

Sources: the [MSK], [CFG], [LAYER], [GEN] and [PAPER] references of :mod:`mskbench.agents.dynsyn`.
"""

from __future__ import annotations

import json
import math
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mskbench.body.sides import muscle_sides
from mskbench.envs.wrappers import VectorWrapper

if TYPE_CHECKING:
    from mskbench.envs.protocols import VectorEnv


FORMAT = "mskbench-dynsyn-groups"
FORMAT_VERSION = 1


#: Scale of the squashed weights before the bound's clip [LAYER].
WEIGHT_SCALE = 0.1
#: The original's fixed log standard deviation of the weights' Gaussian [CFG] (for a learner that
#: puts the weights in its actor as the original does).
WEIGHT_LOG_STD = 0.5


# -- the weight bound's schedule ---------------------------------------------------------------------
@dataclass(frozen=True)
class WeightBoundSchedule:
    """The weights' bound ``b`` as a function of the transitions ``t`` collected so far (all worlds).

    ``b(t) = start + (end − start) · clip((t − delay) / steps, 0, 1)``: ``start``
    until ``delay``, then linear to ``end`` over ``steps``, then ``end``. The
    original [MSK] is ``min(max(0, k·(t − a)), 0.1)``, i.e. ``start = 0``,
    ``end = 0.1``, ``steps = 0.1 / k``, ``delay = a``
    (:meth:`from_slope`; MSK-Bench's numbers: :data:`MSK_BENCH_SCHEDULE`).
    """

    start: float = 0.0
    end: float = 0.1
    steps: int = 20_000_000
    delay: int = 0

    def __post_init__(self) -> None:
        for name in ("start", "end"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise ValueError(f"weight bound {name} must be a finite number >= 0, got {value!r}")
        if not self.steps >= 1:
            raise ValueError(f"weight bound schedule steps must be >= 1, got {self.steps!r}")
        if not self.delay >= 0:
            raise ValueError(f"weight bound schedule delay must be >= 0, got {self.delay!r}")

    @classmethod
    def from_slope(cls, k: float, a: float, cap: float = 0.1) -> "WeightBoundSchedule":
        """The original's parameterisation [MSK]: ``min(max(0, k·(t − a)), cap)``."""
        if not k > 0:
            raise ValueError(f"the slope k must be > 0, got {k!r}")
        return cls(0.0, float(cap), max(1, round(cap / k)), int(a))

    def __call__(self, step: int | float) -> float:
        """The bound after ``step`` transitions."""
        frac = min(max((float(step) - self.delay) / self.steps, 0.0), 1.0)
        return float(self.start + (self.end - self.start) * frac)

    def as_dict(self) -> dict[str, Any]:
        return {"start": self.start, "end": self.end, "steps": self.steps, "delay": self.delay}


#: MSK-Bench's DynSyn-SAC schedule [CFG]: 0 until 3e7 transitions, then linear to 0.1 at 5e7.
MSK_BENCH_SCHEDULE = WeightBoundSchedule.from_slope(5e-9, 3e7)


# -- the map (NumPy or jax.numpy) --------------------------------------------------------------------
def dynsyn_muscle_actions(group_actions: Any, weights: Any, group_of: Any, weight_index: Any,
                          weight_bound: Any, xp: Any, *, weight_scale: float = WEIGHT_SCALE) -> Any:
    """Muscle actions in [−1, 1] from group actions and per-muscle weights (batched over leading dims).

    ``group_actions``: ``(..., n_groups)``; ``weights``: ``(..., n_weights)``
    (both in [−1, 1], a policy's tanh outputs); ``group_of``: the group of each
    muscle, ``(n_muscles,)``; ``weight_index``: each muscle's column in
    ``weights``, ``n_weights`` for a group's representative (no weight)
    (:attr:`SynergyGroups.weight_index`); ``weight_bound``: ``b`` (a scalar,
    traced or not). Returns ``clip(a_G · (1 + clip(s·w, −b, b)), −1, 1)``,
    shape ``(..., n_muscles)``.
    """
    g = xp.take(group_actions, group_of, axis=-1)
    pad = xp.zeros((*weights.shape[:-1], 1), dtype=weights.dtype)
    w = xp.take(xp.concatenate([weights, pad], axis=-1), weight_index, axis=-1)
    factor = 1.0 + xp.clip(weight_scale * w, -weight_bound, weight_bound)
    return xp.clip(g * factor, -1.0, 1.0)


# -- the groups --------------------------------------------------------------------------------------
@dataclass(frozen=True)
class SynergyGroups:
    """A partition of a body's muscles into synergy groups.

    ``muscle_names``: the body's muscles in actuator order; ``group_of[i]``: the
    group of muscle ``i`` (groups numbered 0..n_groups−1 by their lowest
    muscle index); ``representative[g]``: the muscle of group ``g`` that takes
    the group's action unweighted; ``method`` and ``params``: how the groups
    were made (for :func:`compute_groups`: every setting, the task, the body
    and the sources).
    """

    muscle_names: tuple[str, ...]
    group_of: tuple[int, ...]
    representative: tuple[int, ...]
    method: str = "given"
    params: Mapping[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        n = len(self.muscle_names)
        if n == 0:
            raise ValueError("a grouping needs at least one muscle")
        if len(set(self.muscle_names)) != n:
            raise ValueError("muscle names must be unique")
        if len(self.group_of) != n:
            raise ValueError(f"group_of has {len(self.group_of)} entries for {n} muscles")
        k = len(self.representative)
        if sorted(set(self.group_of)) != list(range(k)):
            raise ValueError(f"group_of must use every group id 0..{k - 1} (one representative per group)")
        for g, r in enumerate(self.representative):
            if not 0 <= r < n or self.group_of[r] != g:
                raise ValueError(f"representative {r} of group {g} is not a muscle of that group")
        firsts = [self.group_of.index(g) for g in range(k)]
        if firsts != sorted(firsts):
            raise ValueError("groups must be numbered in the order of their lowest muscle index")

    # -- construction ---------------------------------------------------------------------------
    @classmethod
    def from_lists(cls, muscle_names: Sequence[str], groups: Sequence[Sequence[int]], *,
                   representative: Sequence[int] | None = None, method: str = "given",
                   params: Mapping[str, Any] | None = None) -> "SynergyGroups":
        """Groups given as lists of muscle indices (as the original's ``dynsyn`` config entry).

        Every muscle must appear exactly once. Groups are renumbered by their
        lowest index; without ``representative`` (one muscle per given group)
        each group's lowest-index muscle is its representative, the
        original's rule [LAYER].
        """
        n = len(muscle_names)
        lists = [sorted(int(i) for i in grp) for grp in groups]
        seen = sorted(i for grp in lists for i in grp)
        if any(not grp for grp in lists):
            raise ValueError("a group is empty")
        if seen != list(range(n)):
            missing = sorted(set(range(n)) - set(seen))
            twice = sorted({i for i in seen if seen.count(i) > 1})
            raise ValueError(f"groups must cover the {n} muscles exactly once (missing: {missing[:5]}, "
                             f"repeated: {twice[:5]}, out of range: {[i for i in seen if not 0 <= i < n][:5]})")
        reps = [grp[0] for grp in lists] if representative is None else [int(r) for r in representative]
        if len(reps) != len(lists):
            raise ValueError(f"{len(reps)} representatives for {len(lists)} groups")
        order = sorted(range(len(lists)), key=lambda g: lists[g][0])
        group_of = [0] * n
        for new, old in enumerate(order):
            for i in lists[old]:
                group_of[i] = new
        return cls(tuple(muscle_names), tuple(group_of), tuple(reps[old] for old in order), method,
                   dict(params or {}))

    # -- derived --------------------------------------------------------------------------------
    @property
    def n_muscles(self) -> int:
        return len(self.muscle_names)

    @property
    def n_groups(self) -> int:
        return len(self.representative)

    @property
    def n_weights(self) -> int:
        """Weights in the learner's action: one per muscle that is not a representative."""
        return self.n_muscles - self.n_groups

    @property
    def action_size(self) -> int:
        """The learner's action size: ``n_groups + n_weights`` (= ``n_muscles``)."""
        return self.n_groups + self.n_weights

    @property
    def groups(self) -> list[list[int]]:
        """Each group's muscle indices, ascending."""
        out: list[list[int]] = [[] for _ in range(self.n_groups)]
        for i, g in enumerate(self.group_of):
            out[g].append(i)
        return out

    @property
    def sizes(self) -> list[int]:
        return [len(g) for g in self.groups]

    @property
    def group_index(self) -> np.ndarray:
        """``group_of`` as an int array (the map's gather index)."""
        return np.asarray(self.group_of, dtype=np.int32)

    @property
    def weight_index(self) -> np.ndarray:
        """Each muscle's column in the weights; ``n_weights`` (the padding column) for a representative."""
        out = np.full(self.n_muscles, self.n_weights, dtype=np.int32)
        reps = set(self.representative)
        weighted = [i for i in range(self.n_muscles) if i not in reps]
        out[weighted] = np.arange(len(weighted), dtype=np.int32)
        return out

    def split_action(self, action: Any) -> tuple[Any, Any]:
        """``(group_actions, weights)`` of learner actions ``(..., action_size)``."""
        return action[..., :self.n_groups], action[..., self.n_groups:]

    def muscle_actions(self, action: Any, weight_bound: Any, xp: Any = np) -> Any:
        """:func:`dynsyn_muscle_actions` of learner actions ``(..., action_size)``."""
        if action.shape[-1] != self.action_size:
            raise ValueError(f"a DynSyn action has {self.action_size} entries ({self.n_groups} groups + "
                             f"{self.n_weights} weights), got {action.shape[-1]}")
        g, w = self.split_action(action)
        return dynsyn_muscle_actions(g, w, self.group_index, self.weight_index, weight_bound, xp)

    # -- checks and files -----------------------------------------------------------------------
    def check_muscles(self, muscle_names: Sequence[str]) -> None:
        """Raise a one-line ``ValueError`` unless ``muscle_names`` are this grouping's muscles, in order."""
        names = tuple(muscle_names)
        if names == self.muscle_names:
            return
        body = self.params.get("body", "another body")
        if len(names) != self.n_muscles:
            raise ValueError(f"these groups are for {body} ({self.n_muscles} muscles); this model has "
                             f"{len(names)} muscles")
        i = next(j for j, (a, b) in enumerate(zip(names, self.muscle_names)) if a != b)
        raise ValueError(f"these groups are for {body}, whose muscle {i} is {self.muscle_names[i]!r}; "
                         f"this model's muscle {i} is {names[i]!r}")

    def as_dict(self) -> dict[str, Any]:
        """The JSON document :meth:`to_json` writes."""
        sides = muscle_sides(self.muscle_names)
        return {
            "format": FORMAT, "version": FORMAT_VERSION, "method": self.method, "params": dict(self.params),
            "n_muscles": self.n_muscles, "n_groups": self.n_groups, "muscle_names": list(self.muscle_names),
            "groups": [{"representative": self.muscle_names[r], "side": sides[r],
                        "muscles": [self.muscle_names[i] for i in grp]}
                       for r, grp in zip(self.representative, self.groups)],
        }

    def to_json(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
        """Write the groups to ``path``; an existing file is a ``FileExistsError`` unless ``overwrite``."""
        out = Path(path)
        if out.exists() and not overwrite:
            raise FileExistsError(f"{out} exists; pass overwrite=True (mskbench synergies: --force) to replace it")
        tmp = out.with_name(out.name + ".partial")
        tmp.write_text(json.dumps(self.as_dict(), indent=1) + "\n")
        tmp.replace(out)
        return out

    @classmethod
    def from_dict(cls, doc: Mapping[str, Any], muscle_names: Sequence[str] | None = None) -> "SynergyGroups":
        """Groups from :meth:`as_dict`'s document, checked against ``muscle_names`` when given."""
        if not isinstance(doc, Mapping) or doc.get("format") != FORMAT:
            raise ValueError(f"not a DynSyn groups document (format {FORMAT!r})")
        if doc.get("version") != FORMAT_VERSION:
            raise ValueError(f"DynSyn groups version {doc.get('version')!r} is not supported "
                             f"(this mskbench reads version {FORMAT_VERSION})")
        try:
            names = [str(n) for n in doc["muscle_names"]]
            index = {n: i for i, n in enumerate(names)}
            lists = [[index[m] for m in grp["muscles"]] for grp in doc["groups"]]
            reps = [index[grp["representative"]] for grp in doc["groups"]]
            method, params = str(doc["method"]), dict(doc["params"])
        except (KeyError, TypeError) as exc:
            raise ValueError(f"malformed DynSyn groups document: missing or unknown {exc}") from None
        groups = cls.from_lists(names, lists, representative=reps, method=method, params=params)
        if muscle_names is not None:
            groups.check_muscles(muscle_names)
        return groups

    @classmethod
    def from_json(cls, path: str | os.PathLike[str],
                  muscle_names: Sequence[str] | None = None) -> "SynergyGroups":
        """Read :meth:`to_json`'s file; with ``muscle_names`` (a model's, in actuator order) a file made
        for another body is a ``ValueError``."""
        p = Path(path)
        try:
            doc = json.loads(p.read_text())
        except json.JSONDecodeError as exc:
            raise ValueError(f"{p} is not JSON ({exc.msg} at line {exc.lineno})") from None
        try:
            return cls.from_dict(doc, muscle_names)
        except ValueError as exc:
            raise ValueError(f"{p}: {exc}") from None


# -- putting the map between a learner and the env ---------------------------------------------------
class DynSynActionMap:
    """Learner actions ``(num_envs, action_size)`` → muscle actions on the host, bound from a schedule.

    ``schedule``: a :class:`WeightBoundSchedule`, or a number for a fixed
    bound. With ``count_steps`` each call advances :attr:`steps` by the
    number of worlds (one vectorised training step) after mapping with the
    bound of the steps before it; :meth:`set_step` sets it (a resumed run).
    :attr:`record` is a JSON-ready dict (groups, schedule, current bound and
    steps) kept up to date in place, so a checkpoint written at any time
    holds the bound then in force (:func:`stored_map`).
    """

    def __init__(self, groups: SynergyGroups, schedule: WeightBoundSchedule | float = MSK_BENCH_SCHEDULE,
                 *, count_steps: bool = True):
        self.groups = groups
        if isinstance(schedule, WeightBoundSchedule):
            self.schedule = schedule
        else:
            bound = float(schedule)
            self.schedule = WeightBoundSchedule(bound, bound, 1, 0)
        self.count_steps = count_steps
        self._group_index = groups.group_index
        self._weight_index = groups.weight_index
        self.record: dict[str, Any] = {
            "format": "mskbench-dynsyn-map", "groups": groups.as_dict(), "schedule": self.schedule.as_dict(),
            "weight_scale": WEIGHT_SCALE, "weight_bound": 0.0, "steps": 0,
        }
        self.set_step(0)

    @property
    def action_size(self) -> int:
        return self.groups.action_size

    @property
    def steps(self) -> int:
        return int(self.record["steps"])

    @property
    def weight_bound(self) -> float:
        return float(self.record["weight_bound"])

    def set_step(self, step: int) -> None:
        """Transitions collected so far (all worlds); the bound follows."""
        if step < 0:
            raise ValueError(f"step must be >= 0, got {step}")
        self.record["steps"] = int(step)
        self.record["weight_bound"] = self.schedule(step)

    def __call__(self, actions: Any) -> np.ndarray:
        a = np.asarray(actions, dtype=np.float64)
        if a.ndim != 2 or a.shape[1] != self.action_size:
            raise ValueError(f"DynSyn actions must have shape (num_envs, {self.action_size}) "
                             f"({self.groups.n_groups} groups + {self.groups.n_weights} weights), got {a.shape}")
        if not np.isfinite(a).all():
            raise ValueError(f"DynSyn actions have {int((~np.isfinite(a)).sum())} non-finite entries")
        a = np.clip(a, -1.0, 1.0)
        g, w = self.groups.split_action(a)
        out = dynsyn_muscle_actions(g, w, self._group_index, self._weight_index, self.weight_bound, np)
        if self.count_steps:
            self.set_step(self.steps + a.shape[0])
        return out


def stored_map(record: Mapping[str, Any]) -> Callable[[Any, Any], Any]:
    """``f(actions, xp) -> muscle actions`` from a :attr:`DynSynActionMap.record` (a checkpoint's): the
    deterministic policy's map, at the bound the record was written with."""
    try:
        groups = SynergyGroups.from_dict(record["groups"])
        bound = float(record["weight_bound"])
        scale = float(record.get("weight_scale", WEIGHT_SCALE))
    except (KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"not a DynSyn map record: {exc}") from None
    gi, wi = groups.group_index, groups.weight_index

    def muscle(actions: Any, xp: Any) -> Any:
        g, w = groups.split_action(actions)
        return dynsyn_muscle_actions(g, w, gi, wi, bound, xp, weight_scale=scale)

    return muscle


def _env_muscles(env: Any) -> tuple[str, ...] | None:
    """The muscle names of a vector env's worlds (MSKVectorEnv), or None when it does not tell."""
    from mskbench.envs.vector import worlds

    envs = worlds(env)
    if envs:
        handles = getattr(envs[0], "handles", None)
        if handles is not None:
            return tuple(handles.muscle_names)
    names = getattr(env, "muscle_names", None)
    return tuple(names) if names is not None else None


class DynSynActionWrapper(VectorWrapper):
    """A vector env that acts through DynSyn groups: ``[group actions, weights]`` in, muscle actions to
    the wrapped env.

    It is a :class:`~mskbench.envs.protocols.VectorEnv` like the
    :class:`~mskbench.envs.vector.MSKVectorEnv` it wraps (``num_envs``,
    ``obs_size``, ``obs_layout``, ``reset``, ``step``, ``close``), with
    ``action_size = groups.action_size`` and Gymnasium's
    ``single_action_space`` (``Box(−1, 1, (action_size,))``) and
    ``action_space`` (batched). It follows ``gymnasium.vector.VectorActionWrapper``'s
    shape (:meth:`actions` transforms, :meth:`step` steps) but is not one:
    Gymnasium's wrappers accept only ``gymnasium.vector.VectorEnv`` s, which
    MSKVectorEnv is not. Each :meth:`step` counts ``num_envs`` transitions
    towards the weight bound's schedule; :meth:`set_step` sets the count.
    """

    def __init__(self, env: "VectorEnv", groups: SynergyGroups,
                 schedule: WeightBoundSchedule | float = MSK_BENCH_SCHEDULE):
        from gymnasium import spaces

        names = _env_muscles(env)
        if names is not None:
            groups.check_muscles(names)
        if groups.n_muscles != env.action_size:
            raise ValueError(f"the groups cover {groups.n_muscles} muscles; the env acts on {env.action_size}")
        super().__init__(env)
        self.groups = groups
        self.map = DynSynActionMap(groups, schedule, count_steps=False)
        self.action_size = groups.action_size
        self.single_action_space = spaces.Box(-1.0, 1.0, (self.action_size,), np.float32)
        self.action_space = spaces.Box(-1.0, 1.0, (self.num_envs, self.action_size), np.float32)

    @property
    def weight_bound(self) -> float:
        """The bound in force for the next step."""
        return self.map.weight_bound

    @property
    def steps(self) -> int:
        """Transitions counted so far."""
        return self.map.steps

    def set_step(self, step: int) -> None:
        """Set the transitions counted so far (the bound follows the schedule)."""
        self.map.set_step(step)

    def actions(self, actions: Any) -> np.ndarray:
        """Muscle actions ``(num_envs, n_muscles)`` of learner actions ``(num_envs, action_size)``."""
        return self.map(actions)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        out = self.env.step(self.actions(actions))
        self.map.set_step(self.map.steps + self.num_envs)
        return out

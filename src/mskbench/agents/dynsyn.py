"""DynSyn: muscle groups from the body's own dynamics, and the action map that acts through them.

DynSyn (He, Zuo, Ma & Sui, "DynSyn: Dynamical Synergistic Representation for
Efficient Learning and Control in Overactuated Embodied Systems", ICML 2024)
replaces the 416 muscle actions by one action per *group* of muscles whose
lengths move together, plus a small, state-dependent correction weight per
muscle. This module is the learner-independent part of the MSK-Bench
DynSyn-SAC baseline: the groups (:func:`compute_groups`, saved as JSON by
``mskbench synergies``), the map from a learner's action to muscle actions
(:func:`dynsyn_muscle_actions`, written once with an array namespace ``xp`` so
a JAX actor runs the same code), the bound's schedule
(:class:`WeightBoundSchedule`) and two ways to put the map between a learner
and the env (:class:`DynSynActionMap`, :class:`DynSynActionWrapper`).

Sources (facts and numbers only; the code here is our own)
----------------------------------------------------------
* [MSK] MSK-Bench, ``rl_paradigms/msgym/DynSyn/SAC_DynSyn.py``
  @ d7a289173d4b9301b23c74d00a59cf39233aa06a: the bound of the weights at
  ``t`` transitions is ``min(max(0, k·(t − a)), 0.1)``; SAC's target entropy is
  ``−(number of groups)``.
* [CFG] MSK-Bench, ``rl_paradigms/msgym/configs/msk_bench_walk.json``
  @ 4ffd2d661cad201cd1fb8bb55a177e9260e91df1 (``msk_bench_reach.json``
  @ d7a2891 is the same): 76 groups over the 416 MyoFullBody muscles,
  ``dynsyn_k`` 5e-9, ``dynsyn_a`` 3e7 (so the bound is 0 until 3e7 transitions
  and reaches 0.1 at 5e7 = ``total_timesteps``), ``dynsyn_log_std`` 0.5, 64 envs.
  None of its groups mixes left and right muscles.
* [LAYER] ``SAC_DynSyn.py`` imports ``DynSyn.DynSynLayer``, which MSK-Bench does
  not ship; the upstream layer it names (Beanpow/DynSyn, per the msgym README's
  attribution) is published in zchJo/MyoChallenge24-DynSyn
  ``DynSyn/DynSyn/DynSynLayer.py`` @ 59625d8560109b26f2a4ee4395451a410b733ef9
  and cherylwang20/DynSyn ``dynsyn/algorithms/common/dynsynLayer.py``
  @ 2e4a7392e7935a2eeb37ce57e403b200999d4811: the formula below, the 0.1
  scale, the first muscle of each group left unweighted, the final clip.
* [GEN] cherylwang20/DynSyn ``dynsyn/dynsyn.py`` and
  ``configs/DynSynGen/dynsyn.yaml`` @ 221d847cc0173737705aaaeb6f122326140b093c
  (the upstream's group generator): zero muscle action; every 10 control
  steps all joint velocities set to U(−1, 1)·10 rad/s (MyoFullBody entry:
  ``control_amp`` 10, ``control_freq`` 10) with the root's velocity zeroed;
  a reset every 500 control steps; each muscle's length recorded after every
  control step (500,000 of them); lengths min–max normalised per muscle;
  cosine similarity of the normalised signals in windows of 100 samples,
  averaged over windows; distance ``max(1 − similarity, 0)``; k-medoids by
  FasterPAM (``kmedoids.KMedoids(method="fasterpam", max_iter=10000)``) from 20
  random starts (``random_state`` = seed + i), keeping the result whose loss
  occurs most often (ties: the smallest loss).
* [PAPER] He et al. 2024 (arXiv 2407.11472): groups by K-Medoids on
  correlations of muscle-length trajectories under random perturbations; a
  unified action per group and state-dependent per-muscle correction weights,
  both tanh-squashed Gaussians from the actor's MLPs. The authors' rebuttal
  (sites.google.com/view/dynsyn/rebuttal, Fig. R.1) reports the grouping
  converged by 25,600 samples (compared with 500,000).

Groups (:func:`compute_groups`)
-------------------------------
The body is simulated with zero excitation and random joint-velocity kicks
[GEN] (not random excitations: the original perturbs the joints), the muscle
lengths recorded, their similarity computed and the muscles clustered by
k-medoids [GEN]. Our choices where the original is silent or does not fit:

* **Sides.** No group mixes left and right muscles: the muscles are split
  into right, left and midline sets (:func:`mskbench.body.sides.muscle_sides`: names ending in
  ``_r``/``_right`` are right, ``_l``/``_left`` left; an unsuffixed name whose
  ``_left``/``_l`` twin exists is right, as MyoFullBody's right arm, whose
  twins end in ``_left``; one whose ``_right``/``_r`` twin exists is left;
  anything else is midline — MyoFullBody has none), each set clustered on its
  own, midline muscles only with midline muscles. Sides follow the names,
  which is what a controller reads; in MyoFullBody's geometry two names
  disagree with the paths: ``rect_abd_r``/``rect_abd_l`` lie on the sides
  opposite their names (every other ``_r``/``_l`` pair does not), and
  ``LTpT_T12_l`` runs along the right-side sites of ``LTpT_T12_r``. The groups are shared among
  the sets in proportion to their sizes (each non-empty set at least one),
  so 76 = 38 right + 38 left on MyoFullBody (208 + 208 muscles).
* **Root and contacts.** Instead of the original's root velocity hack
  (``qvel[:6] = 0; qvel[2] = 0.1`` before each step) the root's pose is held
  fixed (reset before every control step) and contacts are disabled on a
  private copy of the model, so the muscle lengths follow the body's own
  multibody dynamics (gravity, joint limits and couplings, passive muscle
  forces), not the floor or a prop. The groups therefore depend on the body
  only; the task chooses the body and the starting pose.
* **Samples.** 25,600 by default (the rebuttal's convergence point), not
  500,000: ~3 minutes at ~160 control steps/s on one core. ``steps`` must be a
  multiple of the 100-sample window, as in the original.
* **Constant lengths.** A muscle whose length does not change (range below
  1e-9 m; MyoFullBody's ``LTpT_T1_r/l``) would be pure noise after min–max
  normalisation; its normalised signal is taken as zero, so its distance to
  every other muscle is 1.
* **k-medoids.** FasterPAM (Schubert & Rousseeuw) is implemented here (no
  ``kmedoids`` dependency), from random initial medoids and a random visiting
  order per start, seeded by ``(seed, set, start)``; same selection rule.
* **Representative.** The original leaves the *first* (lowest-index) muscle
  of each group unweighted, an artefact of groups being index lists; ours is
  the group's *medoid* (the muscle whose length best represents it). Groups
  given as lists (:meth:`SynergyGroups.from_lists`) keep the original's rule.
  Groups are numbered by their lowest muscle index (the original's order).
* **Unstable physics.** A kick that makes the physics unstable restarts the
  episode; that step is not recorded (``params["unstable_resets"]`` counts them).

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

from mskbench.body.sides import SIDES, muscle_sides

if TYPE_CHECKING:
    from mskbench.envs.cpu_env import MSKEnv
    from mskbench.envs.protocols import VectorEnv

FORMAT = "mskbench-dynsyn-groups"
FORMAT_VERSION = 1

#: Groups over the 416 MyoFullBody muscles in MSK-Bench's DynSyn-SAC configs [CFG].
DEFAULT_N_GROUPS = 76
#: Recorded control steps: the grouping's convergence point in the authors' rebuttal (Fig. R.1).
DEFAULT_STEPS = 25_600
#: Samples per correlation window [GEN] (``steps`` must be a multiple of it).
CORRELATION_WINDOW = 100
#: Control steps between joint-velocity kicks, and the kicks' amplitude (rad/s or m/s per dof) [GEN].
KICK_EVERY = 10
KICK_AMPLITUDE = 10.0
#: Control steps between resets [GEN].
EPISODE_STEPS = 500
#: k-medoids starts and the iteration cap of each [GEN].
RESTARTS = 20
MAX_ITER = 10_000
#: A muscle whose length range is below this (m) is taken as constant.
CONSTANT_LENGTH_M = 1e-9
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


def allocate_groups(n_groups: int, sizes: Sequence[int]) -> list[int]:
    """Share ``n_groups`` among sets of ``sizes`` muscles in proportion to their sizes.

    Each non-empty set gets at least one group and at most one per muscle; the
    rest go one by one to the set furthest below its proportional share (ties:
    the earlier set). Raises ``ValueError`` naming the valid range.
    """
    nonempty = [i for i, s in enumerate(sizes) if s > 0]
    total = sum(sizes)
    if not len(nonempty) <= n_groups <= total:
        raise ValueError(f"the number of groups must be between {len(nonempty)} (one per body side with "
                         f"muscles) and {total} (one per muscle), got {n_groups}")
    alloc = [1 if s > 0 else 0 for s in sizes]
    for _ in range(n_groups - len(nonempty)):
        open_sets = [i for i in nonempty if alloc[i] < sizes[i]]
        best = max(open_sets, key=lambda i: (n_groups * sizes[i] / total - alloc[i], -i))
        alloc[best] += 1
    return alloc


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


# -- muscle-length data ------------------------------------------------------------------------------
def record_muscle_lengths(env: "MSKEnv", *, steps: int, seed: int, kick_every: int = KICK_EVERY,
                          kick_amplitude: float = KICK_AMPLITUDE, episode_steps: int = EPISODE_STEPS,
                          progress: Callable[[int, int], None] | None = None) -> tuple[np.ndarray, int]:
    """Muscle lengths (m) of ``env``'s body under zero excitation and random joint-velocity kicks.

    Returns ``(lengths (steps, n_muscles), unstable_resets)``. Episode ``r``
    starts from ``env.reset(seed=seed + r)``'s state; every ``kick_every``
    control steps the body's joint velocities are drawn from
    U(−1, 1)·``kick_amplitude`` (``np.random.default_rng(seed)``); the root's
    pose is held and contacts are off (a private copy of the model; ``env``'s
    model is untouched). ``progress(done, steps)`` is called every 100 steps.
    Memory: ``steps × n_muscles × 8`` bytes.
    """
    import copy

    import mujoco

    if steps < 1 or kick_every < 1 or episode_steps < 1:
        raise ValueError("steps, kick_every and episode_steps must be >= 1")
    h = env.handles
    model = copy.deepcopy(env.model)
    model.opt.disableflags |= int(mujoco.mjtDisableBit.mjDSBL_CONTACT)
    data = mujoco.MjData(model)
    frame_skip = env.sim.frame_skip
    muscles = h.muscle_ids
    root_q: slice | None = None
    root_v: slice | None = None
    if h.free_root:
        j = next(j for j in range(model.njnt) if int(model.jnt_type[j]) == int(mujoco.mjtJoint.mjJNT_FREE)
                 and int(model.jnt_bodyid[j]) == h.bodies["root"])
        qa, va = int(model.jnt_qposadr[j]), int(model.jnt_dofadr[j])
        root_q, root_v = slice(qa, qa + 7), slice(va, va + 6)
    rng = np.random.default_rng(seed)
    bad = (mujoco.mjtWarning.mjWARN_BADQACC, mujoco.mjtWarning.mjWARN_BADQPOS, mujoco.mjtWarning.mjWARN_BADQVEL)
    out = np.empty((steps, len(muscles)))
    episodes = 0
    unstable = 0
    root_pose = np.zeros(7)

    def start() -> np.ndarray:
        nonlocal episodes
        env.reset(seed=seed + episodes)
        episodes += 1
        mujoco.mj_resetData(model, data)
        data.qpos[:] = env.data.qpos
        data.qvel[:] = env.data.qvel
        mujoco.mj_forward(model, data)
        return data.qpos[root_q].copy() if root_q is not None else root_pose

    root_pose = start()
    in_episode = 0
    done = 0
    while done < steps:
        if in_episode == episode_steps:
            root_pose, in_episode = start(), 0
        if in_episode % kick_every == 0:
            data.qvel[:h.nv_body] = rng.uniform(-1.0, 1.0, h.nv_body) * kick_amplitude
        if root_q is not None and root_v is not None:
            data.qpos[root_q] = root_pose
            data.qvel[root_v] = 0.0
        data.ctrl[:] = 0.0
        mujoco.mj_step(model, data, nstep=frame_skip)
        in_episode += 1
        if any(data.warning[w].number for w in bad) or not np.isfinite(data.qpos).all():
            unstable += 1
            data.warning.number[:] = 0
            root_pose, in_episode = start(), 0
            continue
        out[done] = data.actuator_length[muscles]
        done += 1
        if progress is not None and (done % 100 == 0 or done == steps):
            progress(done, steps)
    return out, unstable


def length_similarity(lengths: np.ndarray, window: int = CORRELATION_WINDOW) -> np.ndarray:
    """The muscles' similarity matrix [GEN]: per-muscle min–max normalised lengths, cosine similarity in
    consecutive windows of ``window`` samples, averaged over the windows. ``lengths``: (T, n), T a
    multiple of ``window``. A constant muscle (range < 1e-9 m) has similarity 0 with every other."""
    x = np.asarray(lengths, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < window or x.shape[0] % window:
        raise ValueError(f"need (T, n_muscles) lengths with T a positive multiple of {window}, got shape {x.shape}")
    lo, span = x.min(axis=0), np.ptp(x, axis=0)
    moving = span > CONSTANT_LENGTH_M
    z = np.where(moving, (x - lo) / np.where(moving, span, 1.0), 0.0)
    n = x.shape[1]
    total = np.zeros((n, n))
    eps = np.finfo(np.float64).eps
    for w in z.reshape(-1, window, n):
        norm = np.linalg.norm(w, axis=0)
        total += (w.T @ w) / (np.outer(norm, norm) + eps)
    return total / (x.shape[0] // window)


# -- k-medoids (FasterPAM) ---------------------------------------------------------------------------
def _nearest_two(dist: np.ndarray, medoids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per point: index (into ``medoids``) of its nearest medoid, that distance, the second-nearest distance."""
    d = dist[:, medoids]
    two = np.argpartition(d, 1, axis=1)[:, :2]
    rows = np.arange(d.shape[0])
    a, b = d[rows, two[:, 0]], d[rows, two[:, 1]]
    first = np.where(a <= b, two[:, 0], two[:, 1])
    return first, np.minimum(a, b), np.maximum(a, b)


def fasterpam(dist: np.ndarray, medoids: Sequence[int] | np.ndarray, order: Sequence[int] | np.ndarray,
              max_iter: int = MAX_ITER) -> tuple[np.ndarray, float]:
    """FasterPAM's eager swaps from ``medoids`` (≥ 2), visiting candidates in ``order``.

    Each non-medoid ``x`` in turn: the loss change of swapping it with every
    medoid at once (FastPAM1's shared and per-medoid terms, O(n)); the best
    swap is taken at once if it lowers the loss. Stops after a full pass with
    no swap (or ``max_iter`` passes). Returns ``(medoids, loss)``.
    """
    med = np.array(medoids, dtype=np.int64)
    k = len(med)
    is_med = np.zeros(dist.shape[0], bool)
    is_med[med] = True
    near, d1, d2 = _nearest_two(dist, med)
    removal = np.bincount(near, weights=d2 - d1, minlength=k)
    last = -1
    for _ in range(max_iter):
        swapped = False
        for x in order:
            if x == last:
                return med, float(d1.sum())
            if is_med[x]:
                continue
            dx = dist[:, x]
            closer = dx < d1
            change = np.where(closer, d1 - d2, np.where(dx < d2, dx - d2, 0.0))
            delta = removal + np.bincount(near, weights=change, minlength=k) + np.minimum(dx - d1, 0.0).sum()
            i = int(np.argmin(delta))
            if delta[i] < -1e-12:
                is_med[med[i]] = False
                med[i] = x
                is_med[x] = True
                near, d1, d2 = _nearest_two(dist, med)
                removal = np.bincount(near, weights=d2 - d1, minlength=k)
                last = int(x)
                swapped = True
        if not swapped:
            break
    return med, float(d1.sum())


def kmedoids(dist: np.ndarray, k: int, *, seed: int, restarts: int = RESTARTS,
             max_iter: int = MAX_ITER, stream: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """k-medoids of a distance matrix: ``(labels (n,), medoids (k,))``, ``labels[i]`` indexing ``medoids``.

    ``restarts`` FasterPAM runs from random medoids and visiting orders
    (``np.random.default_rng((seed, stream, r))``); the result kept is the
    first whose loss occurs most often among the runs (ties: the smallest
    loss), the original's rule [GEN].
    """
    n = dist.shape[0]
    if not 1 <= k <= n:
        raise ValueError(f"k must be between 1 and {n}, got {k}")
    if k == n:
        med = np.arange(n)
    elif k == 1:
        med = np.array([int(np.argmin(dist.sum(axis=0)))])
    else:
        runs = []
        for r in range(restarts):
            rng = np.random.default_rng((seed, stream, r))
            runs.append(fasterpam(dist, rng.choice(n, k, replace=False), rng.permutation(n), max_iter))
        losses = [round(loss, 9) for _, loss in runs]
        counts = {loss: losses.count(loss) for loss in losses}
        best = min(counts, key=lambda loss: (-counts[loss], loss))
        med = runs[losses.index(best)][0]
    labels = np.argmin(dist[:, med], axis=1)
    labels[med] = np.arange(len(med))  # a medoid belongs to its own group (ties among duplicates)
    return labels, med


# -- computing groups --------------------------------------------------------------------------------
def compute_groups(task: str | None = "Walk", *, steps: int = DEFAULT_STEPS, seed: int = 0,
                   n_groups: int = DEFAULT_N_GROUPS, env: "MSKEnv | None" = None, restarts: int = RESTARTS,
                   kick_every: int = KICK_EVERY, kick_amplitude: float = KICK_AMPLITUDE,
                   episode_steps: int = EPISODE_STEPS, window: int = CORRELATION_WINDOW,
                   progress: Callable[[str, int, int], None] | None = None) -> SynergyGroups:
    """DynSyn groups of ``task``'s body (or ``env``'s, when given): simulate, correlate, cluster per side.

    Deterministic given ``seed``. ``progress(stage, done, total)`` reports
    ``"simulating"`` (control steps) and ``"clustering"`` (k-medoids starts).
    Bad settings are ``ValueError`` s naming the valid values.
    """
    for name, value in (("steps", steps), ("restarts", restarts), ("kick_every", kick_every),
                        ("episode_steps", episode_steps), ("window", window), ("n_groups", n_groups)):
        if not (isinstance(value, (int, np.integer)) and value >= 1):
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if steps % window:
        raise ValueError(f"steps must be a multiple of the {window}-sample correlation window, got {steps}")
    if not (math.isfinite(kick_amplitude) and kick_amplitude > 0):
        raise ValueError(f"kick_amplitude must be > 0, got {kick_amplitude!r}")
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    own = env is None
    if env is None:
        from mskbench.envs.cpu_env import MSKEnv
        from mskbench.tasks import resolve_name

        env = MSKEnv(resolve_name(task or "Walk"))
    try:
        names = env.handles.muscle_names
        sides = muscle_sides(names)
        members = [[i for i, s in enumerate(sides) if s == side] for side in SIDES]
        alloc = allocate_groups(int(n_groups), [len(m) for m in members])
        lengths, unstable = record_muscle_lengths(
            env, steps=steps, seed=seed, kick_every=kick_every, kick_amplitude=kick_amplitude,
            episode_steps=episode_steps,
            progress=None if progress is None else (lambda done, total: progress("simulating", done, total)))
        task_name = type(env.task).__name__
        body = env.task.body.name
    finally:
        if own:
            env.close()
    dist = np.maximum(1.0 - length_similarity(lengths, window), 0.0)
    np.fill_diagonal(dist, 0.0)
    lists: list[list[int]] = []
    reps: list[int] = []
    jobs = sum(restarts for k, m in zip(alloc, members) if 1 < k < len(m))
    done = 0
    for stream, (k, idx) in enumerate(zip(alloc, members)):
        if not idx:
            continue
        sub = dist[np.ix_(idx, idx)]
        labels, med = kmedoids(sub, k, seed=seed, restarts=restarts, stream=stream)
        for c in range(k):
            lists.append([idx[i] for i in np.flatnonzero(labels == c)])
            reps.append(idx[int(med[c])])
        if 1 < k < len(idx):
            done += restarts
            if progress is not None:
                progress("clustering", done, jobs)
    params = {
        "task": task_name, "body": body, "steps": int(steps), "seed": int(seed), "n_groups": int(n_groups),
        "groups_per_side": {side: a for side, a in zip(SIDES, alloc) if a}, "restarts": int(restarts),
        "max_iter": MAX_ITER, "kick_every": int(kick_every), "kick_amplitude": float(kick_amplitude),
        "episode_steps": int(episode_steps), "window": int(window), "root": "held", "contacts": "disabled",
        "excitation": 0.0, "unstable_resets": int(unstable),
        "source": "He et al. ICML 2024 (DynSyn); MSK-Bench rl_paradigms/msgym @ d7a2891/4ffd2d6",
    }
    return SynergyGroups.from_lists(names, lists, representative=reps, method="dynsyn-kmedoids-fasterpam",
                                    params=params)


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


#: Keys of ``SACConfig.dynsyn`` (:func:`learner_action_map`).
LEARNER_SETTINGS = ("groups", "n_groups", "steps", "seed", "weight_bound_start", "weight_bound_end",
                    "weight_bound_steps", "weight_bound_delay")


def _env_muscles(env: Any) -> tuple[str, ...] | None:
    """The muscle names of a vector env's worlds (MSKVectorEnv), or None when it does not tell."""
    envs = getattr(env, "envs", None)
    if envs:
        handles = getattr(envs[0], "handles", None)
        if handles is not None:
            return tuple(handles.muscle_names)
    names = getattr(env, "muscle_names", None)
    return tuple(names) if names is not None else None


def learner_action_map(settings: Mapping[str, Any], env: "VectorEnv") -> tuple[int, DynSynActionMap, dict]:
    """``(action_size, map, record)`` for a learner on ``env`` (an MSKVectorEnv).

    ``settings``: ``groups`` (a groups JSON path; absent/None: computed for
    the env's task with ``n_groups``, ``steps``, ``seed``, defaults 76,
    25,600, 0), ``weight_bound_start``/``_end``/``_steps``/``_delay`` (default:
    :data:`MSK_BENCH_SCHEDULE`). The map counts one transition per world and
    call; ``record`` is the map's live record (see :class:`DynSynActionMap`).
    """
    unknown = sorted(set(settings) - set(LEARNER_SETTINGS))
    if unknown:
        raise ValueError(f"unknown DynSyn settings {unknown}; valid: {', '.join(LEARNER_SETTINGS)}")
    names = _env_muscles(env)
    path = settings.get("groups")
    if path is not None:
        try:
            groups = SynergyGroups.from_json(path, names)
        except FileNotFoundError:
            raise ValueError(f"DynSyn groups file {path} does not exist (make one with 'mskbench synergies')") \
                from None
    else:
        envs = getattr(env, "envs", None)
        if not envs:
            raise ValueError("computing DynSyn groups needs an MSKVectorEnv; pass settings['groups'] (a JSON file)")
        groups = compute_groups(None, env=envs[0], n_groups=int(settings.get("n_groups", DEFAULT_N_GROUPS)),
                                steps=int(settings.get("steps", DEFAULT_STEPS)), seed=int(settings.get("seed", 0)))
    if groups.n_muscles != env.action_size:
        raise ValueError(f"the groups cover {groups.n_muscles} muscles; the env acts on {env.action_size}")
    d = MSK_BENCH_SCHEDULE
    schedule = WeightBoundSchedule(float(settings.get("weight_bound_start", d.start)),
                                   float(settings.get("weight_bound_end", d.end)),
                                   int(settings.get("weight_bound_steps", d.steps)),
                                   int(settings.get("weight_bound_delay", d.delay)))
    amap = DynSynActionMap(groups, schedule)
    return groups.action_size, amap, amap.record


class DynSynActionWrapper:
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
        self.env = env
        self.groups = groups
        self.map = DynSynActionMap(groups, schedule, count_steps=False)
        self.num_envs = env.num_envs
        self.obs_size = env.obs_size
        self.obs_layout = env.obs_layout
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

    def reset(self, seed: int | None = None) -> np.ndarray:
        return self.env.reset(seed=seed)

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
        out = self.env.step(self.actions(actions))
        self.map.set_step(self.map.steps + self.num_envs)
        return out

    def close(self) -> None:
        self.env.close()

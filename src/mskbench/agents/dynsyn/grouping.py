"""DynSyn's grouping: muscle groups from the body's own dynamics (:func:`compute_groups`).

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

Sources: the [MSK], [CFG], [LAYER], [GEN] and [PAPER] references of :mod:`mskbench.agents.dynsyn`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

import numpy as np

from mskbench.agents.dynsyn.action_map import SynergyGroups
from mskbench.body.sides import SIDES, muscle_sides

if TYPE_CHECKING:
    from mskbench.envs.cpu_env import MSKEnv


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

"""Run one evaluation episode and turn it into a protocol record.

Per episode: success (the paper's rule: Table XII or a counted native solved
signal; both labels are kept), the first step at which it held and whether the
episode then fell (:func:`success_onset`, :func:`fell_after`), return, length,
termination reason,
activation cost (Eq. 7), joint smoothness (Eq. 10), muscle-family
recruitment mass (Eq. 35), the gait progress (steps taken, distance covered,
forward speed) and, for gait tasks given a reference, the
EMG-envelope similarity (Eq. 14). :func:`episode_record` computes them from
an episode's per-step traces, for :func:`run_episode` (CPU) and the batched
evaluator (:mod:`mskbench.eval.batched`) alike.

:func:`play_episode` is the package's one episode loop: :func:`run_episode` records its traces through
it, and every other rollout on a CPU env (the report's heatmaps, contact sheets and videos, the paradigms'
own measurements, the mouse clip rollouts) passes it a recorder that collects what it needs.

An episode ends at the first step where the task's native solved signal is
raised when that signal counts (:meth:`~mskbench.tasks.Task.native_counts`), as
the original's evaluator stops an episode at its first ``solved``
(``rl_paradigms/depRL/eval_deprl_robustness.py@d7a2891::run_episode``, which
breaks once ``EpisodeTracker.solved_seen``); the record's termination is then
:data:`NATIVE_SOLVED` and its return, length, activation cost, smoothness,
recruitment and EMG are those of the episode up to and including that step.
A degenerate signal (not counted) never ends an episode: it would end most of
them at step 1. When the step that raised the signal also ends the episode by
itself (a termination condition, the time limit), that reason is kept.
:func:`native_ends` says whether a task's signal ends episodes, for the CPU loop
and the batched evaluator (:func:`native_end` on its traces) alike.

Joint smoothness is computed from the non-root joint velocities sampled at
every control step (Δt = 10 ms by default) — the finest resolution the
environment exposes to a policy. Activation statistics use the activations
at the same instants.

Gait progress (not in the paper; :mod:`mskbench.metrics.progress`): the steps taken (touchdowns of
either foot, a foot's load being its heel and toe touch sensors, with a load hysteresis of 1-5 % of the
body weight and at least 0.1 s in the air between steps), the pelvis's horizontal displacement from the
first physical step to the last (``distance_m``), its component along the pelvis's heading at the first
step (``forward_distance_m``; negative: backwards) and that component over the time between the two
steps (``forward_speed_mps``). They are computed for every task whose body has the four foot sensors
(:data:`~mskbench.metrics.progress.FOOT_SENSORS`) and a pelvis — every MyoFullBody task, not only the
walking ones (:data:`mskbench.catalog.WALKING`, whose tables show them) — from the same traces on the CPU
and batched paths; they are None for a body without feet, for a record made without those traces and
for an episode with fewer than two physical steps. A fall moves the pelvis too (up to about a leg's
length), so a distance with no steps is not walking.

EMG (App. A-H): right-heel strikes cut the episode into gait cycles — the
right foot's touchdowns (:func:`right_foot_strikes`: its heel and toes loads
above 5 % of the body weight after 0.1 s below 1 %, the steps of the gait
progress), or, for a record made without the foot traces, the rising edges of
the right heel touch sensor above 0.5 N (which split a stride wherever the heel
briefly lifts and touches again); each mapped muscle's activation is
averaged over cycles at 101 points and compared with the reference envelope
after the best cyclic shift (``mskbench.metrics.emg``). A simulated channel
that stays flat scores r = 0. Without a reference, or with fewer than one
complete cycle, the record says ``{"absent": reason}`` — never a number.

Observation noise (Eq. 5) lives in the policy's normalised space: when the
policy has ``normalize_observation(obs)`` and ``act_normalized(x)`` the noise
goes in between; otherwise the observation itself is taken as the normalised
input (identity normalisation, as for the built-in policies;
:func:`mskbench.policies.as_policy`). Every episode starts with
``policy.reset(seed)``, so episode ``i`` of a run depends on its seed only.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import NamedTuple

import numpy as np

from mskbench.catalog import task_ids
from mskbench.envs.cpu_env import CONTACT_OVERFLOW, PHYSICS_UNSTABLE, TIME_LIMIT, MSKEnv
from mskbench.metrics import activation_cost, foot_loads, gait_progress, joint_smoothness, recruitment
from mskbench.metrics.progress import FOOT_SENSORS, foot_touchdowns
from mskbench.policies import FullPolicy, Policy, as_policy
from mskbench.sim.state import StateView
from mskbench.tasks.base import Task, paper_success

#: The touch sensor whose rising edges are heel strikes (gait cycles for the EMG metric).
HEEL_SENSOR = "r_foot"


def heel_index(handles) -> int | None:
    """Index of the right-heel sensor in ``StateView.touch``, or None for a body without one."""
    return handles.touch_index(HEEL_SENSOR) if HEEL_SENSOR in handles.touch_names else None


#: The foot sensors a :class:`ProgressTrace` holds, in its columns' order (left heel, left toes, right heel,
#: right toes).
PROGRESS_SENSORS: tuple[str, ...] = tuple(name for foot in FOOT_SENSORS for name in foot)


def progress_indices(handles) -> list[int] | None:
    """Indices of :data:`PROGRESS_SENSORS` in ``StateView.touch``, or None for a body without them or
    without a pelvis (no gait progress)."""
    if "pelvis" not in handles.bodies or not set(PROGRESS_SENSORS) <= set(handles.touch_names):
        return None
    return [handles.touch_index(name) for name in PROGRESS_SENSORS]


def body_weight_n(model, handles) -> float:
    """The body's weight (N): its mass times the model's gravity."""
    return float(handles.total_mass * np.linalg.norm(model.opt.gravity))


class ProgressTrace(NamedTuple):
    """An episode's traces for the gait progress figures, one row per control step taken."""

    #: (T, 4) the :data:`PROGRESS_SENSORS` readings, N.
    touch: np.ndarray
    #: (T, 2) the pelvis's horizontal position, m.
    pelvis_xy: np.ndarray
    #: (T,) the pelvis's heading about world z (``StateView.yaw``), rad.
    yaw: np.ndarray
    #: The body's weight, N (:func:`body_weight_n`).
    body_weight_n: float


#: The record's gait progress fields (:func:`progress_figures`).
PROGRESS_FIELDS = ("steps_taken", "distance_m", "forward_distance_m", "forward_speed_mps")


def progress_figures(trace: ProgressTrace | None, control_dt_s: float, drop_last: bool = False) -> dict:
    """The record's :data:`PROGRESS_FIELDS` from an episode's :class:`ProgressTrace`, its last row dropped
    with ``drop_last`` (a step without physical state); all None without a trace or with fewer than two
    rows."""
    if trace is None:
        return dict.fromkeys(PROGRESS_FIELDS)
    rows = len(trace.touch) - int(drop_last)
    if rows < 2:
        return dict.fromkeys(PROGRESS_FIELDS)
    yaw = np.asarray(trace.yaw, dtype=np.float64)
    g = gait_progress(foot_loads(np.asarray(trace.touch)[:rows], PROGRESS_SENSORS),
                      np.asarray(trace.pelvis_xy)[:rows], yaw[0], control_dt_s, trace.body_weight_n)
    return {"steps_taken": g.steps, "distance_m": g.distance_m, "forward_distance_m": g.forward_distance_m,
            "forward_speed_mps": g.forward_speed_mps}


def right_foot_strikes(trace: ProgressTrace | None, control_dt_s: float, rows: int) -> np.ndarray | None:
    """The right foot's touchdowns (heel and toes loads, :func:`mskbench.metrics.progress.foot_touchdowns`)
    in the first ``rows`` rows of ``trace``: the gait cycles' starts for the EMG metric; None without a
    trace."""
    if trace is None or rows < 1:
        return None
    right = foot_loads(np.asarray(trace.touch)[:rows], PROGRESS_SENSORS)[:, FOOT_SENSORS.index(("r_foot", "r_toes"))]
    return foot_touchdowns(right, control_dt_s, trace.body_weight_n)


@dataclass
class EpisodeResult:
    """One episode's protocol record (see :mod:`mskbench.eval.store` for units)."""

    task: str
    seed: int
    episode_return: float
    length: int
    #: The paper's rule (App. A-B1): ``success_table_xii``, or a counted native solved signal seen.
    success: bool
    termination: str
    activation_cost: float | None
    smoothness: float | None
    recruitment: dict = field(default_factory=dict)
    emg: dict | None = None
    wall_time_s: float = 0.0
    #: The Table XII criterion at the episode's end.
    success_table_xii: bool = False
    #: Whether the task's native solved flag was raised at any step (counted or not).
    solved_native_seen: bool = False
    #: The first control step (1-based) at which the paper's success held (:func:`success_onset`); None when
    #: never, or unknown (a record made without the per-step traces).
    success_step: int | None = None
    #: The episode succeeded, success first held before its last step, and one of the task's termination
    #: conditions then ended it (:func:`fell_after`); None when unknown.
    fell_after_success: bool | None = None
    #: Gait progress (:func:`progress_figures`): touchdowns of either foot; None when not computed.
    steps_taken: int | None = None
    #: The pelvis's horizontal displacement from the first physical step to the last (m).
    distance_m: float | None = None
    #: Its component along the pelvis's heading at the first step (m; negative: backwards).
    forward_distance_m: float | None = None
    #: ``forward_distance_m`` over the time between those steps (m/s).
    forward_speed_mps: float | None = None

    def as_dict(self) -> dict:
        return asdict(self)


def _act(policy: FullPolicy, obs, env: MSKEnv):
    if env.perturbation.observation_noise_std == 0.0:
        return policy.act(obs)
    return policy.act_normalized(env.perturb_normalized_observation(policy.normalize_observation(obs)))


#: Terminations whose step carries no physical state (its activations and velocities are zeros).
NONPHYSICAL_TERMINATIONS = (PHYSICS_UNSTABLE, CONTACT_OVERFLOW)
#: The termination of an episode the evaluator ended at the first step of a counted native solved signal.
NATIVE_SOLVED = "native_solved"


def native_ends(task: Task | type[Task]) -> bool:
    """Whether ``task``'s native solved signal ends an evaluation episode: it exists and counts (not degenerate)."""
    cls = task if isinstance(task, type) else type(task)
    return cls.native_counts()


def native_end(task: Task | type[Task], solved_native, length: int) -> int | None:
    """The length at which the evaluator ends an episode on the native signal, or None.

    ``solved_native`` holds the task's native flag per control step taken (at least ``length``
    entries); ``length`` is where the environment itself ended the episode (or the steps taken so
    far). The answer is the first step (1-based) <= ``length`` whose flag is raised, when the
    task's signal counts (:func:`native_ends`); None when it does not count or was not raised.
    """
    if not native_ends(task):
        return None
    raised = np.flatnonzero(np.asarray(solved_native[:length], dtype=bool))
    return int(raised[0]) + 1 if raised.size else None


#: Endings that are not one of a task's termination conditions: the time limit, the evaluator's stop at a
#: counted native signal, and the non-physical ends (:data:`NONPHYSICAL_TERMINATIONS`).
NOT_A_TASK_TERMINATION = (TIME_LIMIT, NATIVE_SOLVED, *NONPHYSICAL_TERMINATIONS)


def success_onset(task: Task | type[Task] | None, success, solved_native, length: int) -> int | None:
    """The first control step (1-based, <= ``length``) at which the paper's success held, or None.

    ``success`` holds the Table XII criterion so far per control step (``info["success"]``, the batched
    env's ``out.success``) and ``solved_native`` the task's native flag per step, each with at least
    ``length`` entries; a raised native flag counts only when the task's signal counts
    (:func:`native_ends`; ``task`` None: it does not). The step is the first where either holds. The
    criterion may stop holding later on some tasks, so an episode that failed by its end can have one.
    """
    held = np.asarray(success[:length], dtype=bool)
    if task is not None and native_ends(task):
        held = held | np.asarray(solved_native[:length], dtype=bool)
    steps = np.flatnonzero(held)
    return int(steps[0]) + 1 if steps.size else None


def fell_after(success: bool, success_step: int | None, length: int, termination: str) -> bool:
    """Whether an episode succeeded and then fell: it succeeded (the paper's rule), success first held
    before its last step (``success_step < length``) and it ended by one of the task's termination
    conditions (not the time limit, ``native_solved``, ``physics_unstable`` or ``contact_overflow``)."""
    return (bool(success) and success_step is not None and success_step < length
            and termination not in NOT_A_TASK_TERMINATION)


def emg_metric(reference, activations: np.ndarray, heel: np.ndarray, task_name: str, muscle_names,
               strikes: np.ndarray | None = None) -> dict:
    """The EMG part of a record (Eq. 14) from an episode's activations (T, M) and its right heel strikes:
    ``strikes`` (sample indices) where given, else the rising edges of the right-heel touch ``heel`` (T,)."""
    from mskbench.metrics.emg import emg_similarity, heel_strikes

    gait = task_ids(gait=True)
    if task_name not in gait:
        return {"absent": f"not a gait task: EMG references apply to {', '.join(gait)} only"}
    if strikes is None:
        strikes = heel_strikes(heel)
    if len(strikes) < 2:
        return {"absent": f"fewer than one complete gait cycle ({len(strikes)} right heel strikes)"}
    # A muscle that stays flat over the cycle has no defined correlation; it scores r = 0.
    result = emg_similarity(activations, muscle_names, strikes, reference, on_constant="zero")
    return {"mean_r": float(result.mean_r), "cycles": int(result.n_cycles),
            "per_muscle": {k: float(v) for k, v in result.r.items()}}


def episode_record(task: Task | str, seed: int, rewards_sum: float, length: int, success: bool, termination: str,
                   activations, qvels, heel, control_dt_s: float, muscle_names, emg_reference=None,
                   wall_time_s: float = 0.0, solved_native_seen: bool = False, success_trace=None,
                   native_trace=None, progress: ProgressTrace | None = None) -> EpisodeResult:
    """An episode's protocol record from its per-step traces — the one place the metrics are computed,
    for the CPU episode loop and the batched evaluator alike.

    ``task`` is the task object (or a registered task's id); its class decides whether a seen native
    signal counts. ``activations`` (T, 416), ``qvels`` (T, 122 non-root joint velocities) and ``heel`` (T,
    right-heel touch) hold one entry per control step taken (T = ``length``). ``success`` is the
    Table XII criterion at the episode's last step (the native solve's step when that ended it); the record's ``success`` is the paper's rule
    (:func:`mskbench.tasks.base.paper_success`) from it and ``solved_native_seen``. When the episode
    ended with a step that carries no physical state (``physics_unstable``, ``contact_overflow``)
    that last entry is dropped here.

    ``success_trace`` and ``native_trace`` (T,) are the Table XII criterion so far and the native
    solved flag at each step; from them come ``success_step`` (:func:`success_onset`) and
    ``fell_after_success`` (:func:`fell_after`). Without ``success_trace`` both are None (unknown);
    without ``native_trace`` the native flag is taken as never raised.

    ``progress`` (a :class:`ProgressTrace`, T rows) gives the gait progress fields
    (:func:`progress_figures`); without it they are None.
    """
    if isinstance(task, str):
        from mskbench.tasks import REGISTRY

        task_cls: type[Task] | None = REGISTRY.get(task)
        task_name = task
    else:
        task_cls, task_name = type(task), task.name
    activations = np.asarray(activations, dtype=np.float64)
    qvels = np.asarray(qvels, dtype=np.float64)
    heel = np.asarray(heel, dtype=np.float64)
    if termination in NONPHYSICAL_TERMINATIONS:  # the last step carries no physical state
        activations, qvels, heel = activations[:-1], qvels[:-1], heel[:-1]
    if activations.shape[0] == 0:
        cost, smooth, rec = None, None, {}
    else:
        cost = activation_cost(np.clip(activations, 0.0, 1.0))
        smooth = joint_smoothness(qvels, control_dt_s) if len(qvels) >= 3 else None
        r = recruitment(np.clip(activations.mean(axis=0), 0.0, 1.0), muscle_names)
        rec = {**{k: float(v) for k, v in r.mass.items()}, "Unclassified": float(r.unclassified_mass)}
    if emg_reference is None:
        emg = {"absent": "no EMG reference given"}
    elif activations.shape[0] == 0:
        emg = {"absent": "no physical steps recorded"}
    else:
        emg = emg_metric(emg_reference, activations, heel, task_name, muscle_names,
                         strikes=right_foot_strikes(progress, control_dt_s, activations.shape[0]))
    paper = bool(success) if task_cls is None else paper_success(task_cls, success, solved_native_seen)
    onset, fell = None, None
    if success_trace is not None:
        natives = np.zeros(int(length), bool) if native_trace is None else native_trace
        onset = success_onset(task_cls, success_trace, natives, int(length))
        fell = fell_after(paper, onset, int(length), str(termination))
    gait = progress_figures(progress, control_dt_s, drop_last=termination in NONPHYSICAL_TERMINATIONS)
    return EpisodeResult(
        task=task_name,
        seed=int(seed),
        episode_return=float(rewards_sum),
        length=int(length),
        success=paper,
        termination=str(termination),
        activation_cost=None if cost is None else float(cost),
        smoothness=None if smooth is None else float(smooth),
        recruitment=rec,
        emg=emg,
        wall_time_s=float(wall_time_s),
        success_table_xii=bool(success),
        solved_native_seen=bool(solved_native_seen),
        success_step=onset,
        fell_after_success=fell,
        **gait,
    )


@dataclass
class Step:
    """What a recorder sees after each control step of :func:`play_episode` (1-based ``index``)."""

    index: int
    obs: np.ndarray
    reward: float
    terminated: bool
    truncated: bool
    info: dict


@dataclass
class Played:
    """How an episode of :func:`play_episode` went: its summed reward, the control steps taken, the
    last step's ``info`` (empty when no step was taken) and why it ended (the environment's
    ``info["termination"]``, :data:`NATIVE_SOLVED`, or None when ``max_steps`` stopped it first)."""

    total_reward: float
    steps: int
    info: dict
    termination: str | None


#: A recorder: called with the environment and ``None`` after the reset, then with each :class:`Step`.
Recorder = Callable[[MSKEnv, "Step | None"], None]


def play_episode(env: MSKEnv, policy: Policy, seed: int, recorder: Recorder | None = None, *,
                 max_steps: int | None = None, ends_on_native: bool = False,
                 options: dict | None = None) -> Played:
    """The episode loop, the one every rollout in the package runs: reset ``env`` with ``seed``
    (and ``options``), reset ``policy`` with ``seed``, then step ``policy``'s actions until the
    environment ends the episode, ``max_steps`` steps were taken, or — with ``ends_on_native`` — a
    step raises the task's native solved signal.

    ``recorder(env, None)`` is called after the reset and ``recorder(env, step)`` after every step
    (:class:`Step`); it collects whatever traces its caller needs. Observation noise (Eq. 5) goes
    into the policy's normalised space when the environment's perturbation asks for it.
    """
    full = as_policy(policy)
    obs, _ = env.reset(seed=seed, options=options) if options is not None else env.reset(seed=seed)
    full.reset(seed)
    if recorder is not None:
        recorder(env, None)
    total, steps, info = 0.0, 0, {}
    termination = None
    while max_steps is None or steps < max_steps:
        obs, reward, terminated, truncated, info = env.step(_act(full, obs, env))
        steps += 1
        total += reward
        if recorder is not None:
            recorder(env, Step(steps, obs, reward, terminated, truncated, info))
        if terminated or truncated:
            termination = info["termination"]
            break
        if ends_on_native and info["solved_native"]:
            termination = NATIVE_SOLVED
            break
    return Played(total, steps, info, termination)


def run_episode(env: MSKEnv, policy: Policy, seed: int,
                on_step: Callable[[MSKEnv], None] | None = None,
                emg_reference=None) -> EpisodeResult:
    """Reset ``env`` with ``seed`` and roll ``policy`` out until the episode ends (:func:`play_episode`).

    The episode ends when the environment ends it or, for a task whose native solved signal
    counts, at the first step that raises it (:func:`native_end`; termination :data:`NATIVE_SOLVED`).
    ``on_step(env)`` is called after the reset and after every step (rendering,
    progress bars). ``emg_reference`` (from :func:`mskbench.metrics.emg.load_emg_reference`)
    enables the EMG metric for gait tasks.
    """
    t0 = time.perf_counter()
    h = env.handles
    heel_sensor = heel_index(h)
    heel_adr = None if heel_sensor is None else h.touch_adr[heel_sensor]
    feet = progress_indices(h)
    feet_adr = None if feet is None else h.touch_adr[feet]
    acts, qvels, heel, success, native = [], [], [], [], []
    touch, pelvis_xy, yaw = [], [], []

    def record(env: MSKEnv, step: Step | None) -> None:
        if step is not None:
            acts.append(step.info["activation"])
            success.append(bool(step.info["success"]))
            native.append(bool(step.info["solved_native"]))
            qvels.append(env.data.qvel[h.joint_dof].copy())
            heel.append(0.0 if heel_adr is None else env.data.sensordata[heel_adr])
            if feet_adr is not None:
                view = StateView(env.data, h)
                touch.append(env.data.sensordata[feet_adr].copy())
                pelvis_xy.append(view.pelvis_pos[:2].copy())
                yaw.append(float(view.yaw))
        if on_step is not None:
            on_step(env)

    played = play_episode(env, policy, seed, record, ends_on_native=native_ends(env.task))
    info = played.info
    assert played.termination is not None  # no step limit: the episode ran to its end
    progress = None if feet is None else ProgressTrace(np.array(touch).reshape(-1, len(PROGRESS_SENSORS)),
                                                       np.array(pelvis_xy).reshape(-1, 2), np.array(yaw),
                                                       body_weight_n(env.model, h))
    return episode_record(env.task, seed, played.total_reward, int(info["step"]), info["success"],
                          played.termination, acts, qvels, heel, env.control_dt_s, h.muscle_names,
                          emg_reference, time.perf_counter() - t0, info["solved_native_seen"], success, native,
                          progress)

"""Demonstrations: any policy's episodes recorded step by step to an ``.npz`` (``mskbench record``).

:func:`record_demos` rolls a policy out on a task with the protocol's episode loop
(:func:`~mskbench.eval.episodes.run_episode`; episode ``i`` is reset with seed ``seed + i``, and
ends as an evaluation episode ends) and writes what happened at every control step. The built-in
``expert`` (:mod:`mskbench.control`) is the policy this is for; any policy spec of
:func:`~mskbench.eval.protocol.load_policy` works.

The demonstrations file
-----------------------
One ``.npz`` (``np.load(path)``; no pickles). ``N`` is the number of control steps recorded over
all ``E`` episodes, ``M`` the muscles (416), ``O`` the observation size, ``K`` the reward terms,
``nq``/``nv`` the model's position/velocity sizes (MyoFullBody: 129/128). Steps of episode ``e``
are rows ``episode_offsets[e]:episode_offsets[e + 1]``. Instants: *before* step ``t`` is the state
the policy acted in; *after* is the state the step left.

Metadata:

=========================  =========  =======  ==============================================================
key                        shape      dtype    meaning
=========================  =========  =======  ==============================================================
format                     ()         str      ``"mskbench-demos"``
format_version             ()         int64    1
task, policy               ()         str      canonical task id; the policy spec as given
seed                       ()         int64    episode ``e`` was reset with ``seed + e``
control_dt_s               ()         float64  seconds per control step (0.01, or 0.02 for the 2 ms scenes)
max_steps                  ()         int64    the step limit per episode, or -1 for none
action_map                 ()         str      ``"linear"``: excitation = (action + 1) / 2
obs_layout                 ()         str      JSON: observation block name -> [start, stop) column range
muscle_names               (M,)       str      actuator order (columns of action/excitation/activation)
joint_names                (J,)       str      every joint of the model, the free root first
joint_qpos_adr             (J,)       int64    each joint's first column in ``qpos`` (root: 7 columns)
touch_names                (4,)       str      the touch sensors, columns of ``touch``
reward_term_names          (K,)       str      columns of ``reward_terms``
reward_weights             (K,)       float64  ``reward = reward_terms @ reward_weights``
=========================  =========  =======  ==============================================================

Per step (``N`` rows):

=========================  =========  =======  ==============================================================
key                        shape      dtype    meaning
=========================  =========  =======  ==============================================================
observation                (N, O)     float32  the observation the policy acted on (before the step)
action                     (N, M)     float32  the action executed, in [-1, 1] (the policy's, clipped)
excitation                 (N, M)     float32  what reached the muscles (``MjData.ctrl``) during the step, [0, 1]
activation                 (N, M)     float32  muscle activations after the step, [0, 1]
qpos                       (N, nq)    float64  joint positions after the step (root: m and quaternion w, x, y, z;
                                               hinges rad; slides m)
qvel                       (N, nv)    float64  joint velocities after the step (rad/s, m/s; root: linear then
                                               angular)
touch                      (N, 4)     float64  touch sensor values after the step (N)
reward                     (N,)       float64  the step's reward
reward_terms               (N, K)     float64  the step's unweighted reward terms
episode                    (N,)       int64    the row's episode index
=========================  =========  =======  ==============================================================

Per episode (``E`` rows):

=========================  =========  =======  ==============================================================
key                        shape      dtype    meaning
=========================  =========  =======  ==============================================================
episode_seed               (E,)       int64    the reset seed
episode_length             (E,)       int64    control steps
episode_offsets            (E + 1,)   int64    first row of each episode in the step arrays, then ``N``
episode_return             (E,)       float64  sum of the rewards
episode_termination        (E,)       str      the protocol's: a termination condition, ``time_limit``,
                                               ``native_solved``, ``physics_unstable`` or ``step_limit``
                                               (``max_steps`` reached)
episode_success            (E,)       bool     the paper's rule (the protocol record's ``success``)
episode_success_table_xii  (E,)       bool     the Table XII criterion at the episode's last step
start_qpos, start_qvel     (E, nq/nv) float64  the state after the reset, before step 0
start_activation           (E, M)     float32
start_touch                (E, 4)     float64
final_observation          (E, O)     float32  the observation after the last step
=========================  =========  =======  ==============================================================

A step that ended the episode with ``physics_unstable`` carries no physical state: its
``activation``, ``qpos``, ``qvel``, ``touch`` and ``final_observation`` rows are NaN (its reward
and terms are 0, as the environment reports them).

The mm-evalkit rollout file (gait tasks)
----------------------------------------
For Walk and Run, ``evalkit_path`` also writes the rollout archive that mm-evalkit (the MuscleMimic
evaluation kit, PyPI ``mm-evalkit`` 0.1.0) reads, so the gait's kinematics and muscle activations
can be scored against human data (its Wang dataset: joint angles, muscle activation and EMG;
its Gait120 workflows decode ``traj_id`` as a Gait120 trial, which these episodes are not). Its
MyoFullBody is ours without the fingers: the joints are ours less
:attr:`~mskbench.body.Body.minor_joints` (83 with the root), the muscles ours less the 62 whose
path crosses a finger joint (354). Stairs steps every 0.02 s and mm-evalkit reads 0.01 s
rollouts, so Stairs has no such file. ``F`` is an episode's frames: its start state and the state
after each step (``length + 1``, less a final ``physics_unstable`` step's).

================================  ==========  =======  =====================================================
key                               shape       dtype    meaning
================================  ==========  =======  =====================================================
n_episodes                        ()          int64    ``E``
dt                                ()          float64  0.01 (s between frames)
joint_names                       (83,)       str      the kept joints in model order, ``root`` first
activation_sample_phase           ()          str      ``"pre_step"``: activation row ``f`` is the state of
                                                       joint row ``f``
muscle_names                      (354,)      str      columns of ``muscle_activations``
touch_names                       (4,)        str      ``r_foot, r_toes, l_foot, l_toes`` (mm-evalkit's
                                                       contact columns: right foot first)
task, policy                      ()          str      provenance
episode_{e}_traj_id               ()          int64    the episode's seed
episode_{e}_joint_positions       (F, 89)     float64  ``qpos`` of the kept joints (root 7 columns: m,
                                                       quaternion w, x, y, z; hinges rad; slides m)
episode_{e}_muscle_activations    (F, 354)    float64  activations of the kept muscles, [0, 1]
episode_{e}_touch_observations    (F, 4)      float64  touch sensor values (N) in ``touch_names`` order
episode_{e}_traj_length           ()          int64    horizon + 1: the frames of an episode that runs to
                                                       its time limit
episode_{e}_traj_qpos             (H + 1, 89) float64  the episode's start pose at every frame (see below)
episode_{e}_termination           ()          str      as ``episode_termination`` above
================================  ==========  =======  =====================================================

These tasks follow no reference motion, while mm-evalkit's archive carries one per episode
(``traj_qpos``, compared between policies and read as the episode's nominal length). It holds
the episode's start pose (a function of the seed only, so episodes of different policies from
the same seeds share it, as mm-evalkit's comparison of policies requires) for ``horizon + 1``
frames; so an episode that ended before its time limit (a fall, or ``max_steps``) is an early
termination to mm-evalkit, as it is unsuccessful to mskbench. No kinetics keys are written.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

from mskbench.catalog import task_ids
from mskbench.eval.episodes import NONPHYSICAL_TERMINATIONS, EpisodeResult, run_episode

if TYPE_CHECKING:
    from mskbench.envs import MSKEnv

FORMAT = "mskbench-demos"
FORMAT_VERSION = 1
#: The termination of an episode cut at ``max_steps``.
STEP_LIMIT = "step_limit"
#: The frame interval mm-evalkit's rollout archives use (s).
EVALKIT_DT_S = 0.01
#: mm-evalkit's four foot-contact columns: right foot (heel, toes), then left.
EVALKIT_TOUCH = ("r_foot", "r_toes", "l_foot", "l_toes")


@dataclass
class DemoSummary:
    """What :func:`record_demos` wrote."""

    path: Path
    evalkit_path: Path | None
    task: str
    policy: str
    n_steps: int
    episodes: list[EpisodeResult] = field(default_factory=list)


def _checked_out(path, overwrite: bool, what: str) -> Path:
    path = Path(path)
    if path.is_dir():
        raise ValueError(f"the {what} {path} is a directory; give a file name ending in .npz")
    if path.suffix != ".npz":
        raise ValueError(f"the {what} {path} must end in .npz")
    if not path.parent.is_dir():
        raise ValueError(f"the {what} {path}: directory {path.parent} does not exist")
    if path.exists() and not overwrite:
        raise FileExistsError(f"{path} exists; pass --force to replace it (overwrite=True in Python)")
    return path


def _check_task(task: str) -> str:
    from mskbench.catalog import TASKS, task_id

    name = task_id(task)  # unknown: a ValueError naming the valid tasks
    if TASKS[name].protocol_refusal:
        raise ValueError(f"{name}: {TASKS[name].protocol_refusal}")
    return name


def evalkit_tasks() -> tuple[str, ...]:
    """The gait tasks whose rollouts mm-evalkit can read (a control step of 0.01 s): Walk, Run."""
    from mskbench.envs.cpu_env import control_timing
    from mskbench.tasks import make_task

    out = []
    for name in task_ids(gait=True):
        dt, skip = control_timing(make_task(name), None)
        if np.isclose(dt * skip, EVALKIT_DT_S):
            out.append(name)
    return tuple(out)


class _Recorder:
    """The environment as :func:`run_episode` drives it, recording every step (and cutting at ``max_steps``)."""

    def __init__(self, env, max_steps: int | None):
        self._env = env
        self._max_steps = max_steps
        self.episodes: list[dict] = []

    def __getattr__(self, name):
        return getattr(self._env, name)

    def _state(self):
        env = self._env
        return (env.data.qpos.copy(), env.data.qvel.copy(), env.data.sensordata[env.handles.touch_adr].copy())

    def reset(self, **kwargs):
        obs, info = self._env.reset(**kwargs)
        qpos, qvel, touch = self._state()
        self._obs = obs
        self.episodes.append({"start": (qpos, qvel, self._env.sim.view().activation.astype(np.float32), touch),
                              "rows": []})
        return obs, info

    def step(self, action):
        env = self._env
        before = self._obs
        obs, reward, terminated, truncated, info = env.step(action)
        executed = np.clip(np.asarray(action, dtype=np.float64), -1.0, 1.0)
        qpos, qvel, touch = self._state()
        activation, after = np.asarray(info["activation"], np.float32), obs
        if info["termination"] in NONPHYSICAL_TERMINATIONS:  # no physical state after this step
            qpos, qvel, touch = (np.full_like(x, np.nan) for x in (qpos, qvel, touch))
            activation, after = np.full_like(activation, np.nan), np.full_like(obs, np.nan)
        if not (terminated or truncated) and self._max_steps is not None and env.steps >= self._max_steps:
            truncated = True
            info = {**info, "termination": STEP_LIMIT}
        self.episodes[-1]["rows"].append((before, executed.astype(np.float32), env.data.ctrl.astype(np.float32),
                                          activation, qpos, qvel, touch, float(reward),
                                          np.array([info["reward_terms"][k] for k in env.reward_weights])))
        self.episodes[-1]["final_observation"] = after
        self._obs = obs
        return obs, reward, terminated, truncated, info


def _write_npz(path: Path, arrays: dict, overwrite: bool) -> None:
    """Write ``arrays`` to a temporary file beside ``path``, then move it there: a kill never leaves a torn
    file, and without ``overwrite`` an existing ``path`` (even one made meanwhile) is never replaced."""
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp.npz", dir=path.parent)
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as f:
            np.savez(f, **arrays)
        if overwrite:
            tmp.replace(path)
            return
        try:
            os.link(tmp, path)  # atomic, and fails if path exists
        except FileExistsError:
            raise FileExistsError(f"{path} exists; pass --force to replace it (overwrite=True in Python)") from None
        except OSError:  # a file system without hard links
            if path.exists():
                raise FileExistsError(f"{path} exists; pass --force to replace it (overwrite=True in Python)") from None
            tmp.replace(path)
    finally:
        tmp.unlink(missing_ok=True)


def _demo_arrays(env, recorder: _Recorder, results: list[EpisodeResult], task: str, policy: str, seed: int,
                 max_steps: int | None) -> dict:
    import mujoco

    from mskbench.agents.base import layout_json

    m, h = env.model, env.handles
    rows = [r for ep in recorder.episodes for r in ep["rows"]]
    cols = list(zip(*rows))
    lengths = np.array([len(ep["rows"]) for ep in recorder.episodes], np.int64)
    starts = [ep["start"] for ep in recorder.episodes]
    return {
        "format": np.array(FORMAT), "format_version": np.array(FORMAT_VERSION, np.int64),
        "task": np.array(task), "policy": np.array(policy), "seed": np.array(seed, np.int64),
        "control_dt_s": np.array(env.control_dt_s, np.float64),
        "max_steps": np.array(-1 if max_steps is None else max_steps, np.int64),
        "action_map": np.array(env.action_map), "obs_layout": np.array(layout_json(env.obs_layout)),
        "muscle_names": np.array(list(h.muscle_names)),
        "joint_names": np.array([mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in range(m.njnt)]),
        "joint_qpos_adr": m.jnt_qposadr.astype(np.int64),
        "touch_names": np.array(list(h.touch_names)),
        "reward_term_names": np.array(list(env.reward_weights)),
        "reward_weights": np.array(list(env.reward_weights.values()), np.float64),
        "observation": np.stack(cols[0]).astype(np.float32), "action": np.stack(cols[1]),
        "excitation": np.stack(cols[2]), "activation": np.stack(cols[3]),
        "qpos": np.stack(cols[4]), "qvel": np.stack(cols[5]), "touch": np.stack(cols[6]),
        "reward": np.array(cols[7], np.float64), "reward_terms": np.stack(cols[8]).astype(np.float64),
        "episode": np.repeat(np.arange(len(lengths), dtype=np.int64), lengths),
        "episode_seed": np.array([r.seed for r in results], np.int64),
        "episode_length": lengths,
        "episode_offsets": np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64),
        "episode_return": np.array([r.episode_return for r in results], np.float64),
        "episode_termination": np.array([r.termination for r in results]),
        "episode_success": np.array([r.success for r in results], bool),
        "episode_success_table_xii": np.array([r.success_table_xii for r in results], bool),
        "start_qpos": np.stack([s[0] for s in starts]), "start_qvel": np.stack([s[1] for s in starts]),
        "start_activation": np.stack([s[2] for s in starts]), "start_touch": np.stack([s[3] for s in starts]),
        "final_observation": np.stack([ep["final_observation"] for ep in recorder.episodes]).astype(np.float32),
    }


def evalkit_channels(model, handles, body) -> tuple[list[int], list[int], list[int]]:
    """mm-evalkit's MyoFullBody within ours: ``(joint ids, qpos columns, muscle indices)``.

    Its joints are ours less the fingers (``body.minor_joints``), in model order; its muscles
    ours less those with a path site on a finger segment (a body moved by a finger joint).
    """
    import mujoco

    minor = {model.joint(name).id for name in body.minor_joints}
    joints = [j for j in range(model.njnt) if j not in minor]
    width = {int(mujoco.mjtJoint.mjJNT_FREE): 7, int(mujoco.mjtJoint.mjJNT_BALL): 4}
    columns = [int(model.jnt_qposadr[j]) + k for j in joints for k in range(width.get(int(model.jnt_type[j]), 1))]
    finger_bodies = {int(model.jnt_bodyid[j]) for j in minor}

    def on_finger(b: int) -> bool:
        while b > 0:
            if b in finger_bodies:
                return True
            b = int(model.body_parentid[b])
        return False

    muscles = []
    for i, actuator in enumerate(handles.muscle_ids):
        tendon = int(model.actuator_trnid[actuator, 0])
        adr, num = int(model.tendon_adr[tendon]), int(model.tendon_num[tendon])
        crosses = any(model.wrap_type[w] == mujoco.mjtWrap.mjWRAP_SITE
                      and on_finger(int(model.site_bodyid[model.wrap_objid[w]])) for w in range(adr, adr + num))
        if not crosses:
            muscles.append(i)
    return joints, columns, muscles


def _evalkit_arrays(env, demos: dict) -> dict:
    import mujoco

    m, h = env.model, env.handles
    joints, columns, muscles = evalkit_channels(m, h, env.task.body)
    touch_cols = [h.touch_names.index(name) for name in EVALKIT_TOUCH]
    frames = env.task.horizon + 1
    out = {
        "n_episodes": np.array(len(demos["episode_seed"]), np.int64),
        "dt": np.array(env.control_dt_s, np.float64),
        "joint_names": np.array([mujoco.mj_id2name(m, mujoco.mjtObj.mjOBJ_JOINT, j) for j in joints]),
        "activation_sample_phase": np.array("pre_step"),
        "muscle_names": np.array([h.muscle_names[i] for i in muscles]),
        "touch_names": np.array(EVALKIT_TOUCH),
        "task": demos["task"], "policy": demos["policy"],
    }
    offsets = demos["episode_offsets"]
    for e, seed in enumerate(demos["episode_seed"]):
        rows = slice(offsets[e], offsets[e + 1])
        qpos = np.concatenate([demos["start_qpos"][e][None], demos["qpos"][rows]])
        act = np.concatenate([demos["start_activation"][e][None], demos["activation"][rows]]).astype(np.float64)
        touch = np.concatenate([demos["start_touch"][e][None], demos["touch"][rows]])
        if demos["episode_termination"][e] in NONPHYSICAL_TERMINATIONS:  # its last frame has no state
            qpos, act, touch = qpos[:-1], act[:-1], touch[:-1]
        p = f"episode_{e}_"
        out.update({
            p + "traj_id": np.array(seed, np.int64),
            p + "joint_positions": qpos[:, columns],
            p + "muscle_activations": act[:, muscles],
            p + "touch_observations": touch[:, touch_cols],
            p + "traj_length": np.array(frames, np.int64),
            p + "traj_qpos": np.repeat(demos["start_qpos"][e][columns][None], frames, axis=0),
            p + "termination": np.array(demos["episode_termination"][e]),
        })
    return out


def record_demos(task: str, policy: str, episodes: int, seed: int, out_path, *, evalkit_path=None,
                 max_steps: int | None = None, overwrite: bool = False,
                 progress: Callable[[int, int], None] | None = None) -> DemoSummary:
    """Record ``episodes`` episodes of ``policy`` on ``task`` to ``out_path`` (the layout of the module docstring).

    ``policy`` is any spec of :func:`~mskbench.eval.protocol.load_policy` (``expert``, ``hold``, ``zero``,
    ``random``, a checkpoint, ``package.module:factory``). Episode ``i`` is reset with seed ``seed + i``.
    ``evalkit_path`` also writes the mm-evalkit rollout archive (Walk, Run). ``max_steps`` cuts each
    episode after that many control steps (termination ``step_limit``). An existing output file is
    an error unless ``overwrite``; every argument is checked before the first episode runs.
    ``progress(episode, step)`` is called after each reset (step 0) and each step.
    """
    from mskbench.envs import MSKEnv
    from mskbench.eval.protocol import check_policy_spec, episode_seeds, load_policy

    name = _check_task(task)
    check_policy_spec(policy, [name])  # unknown, or a controller with no behaviour for the task: a ValueError
    seeds = episode_seeds(seed, episodes)
    if max_steps is not None and (isinstance(max_steps, bool) or max_steps < 1):
        raise ValueError(f"max_steps must be a positive integer, got {max_steps!r}")
    out_path = _checked_out(out_path, overwrite, "demonstrations file")
    if evalkit_path is not None:
        evalkit_path = _checked_out(evalkit_path, overwrite, "mm-evalkit file")
        if evalkit_path.resolve() == out_path.resolve():
            raise ValueError("the evalkit file and the demonstrations file must differ")
        allowed = evalkit_tasks()
        if name not in allowed:
            why = (f"{name} steps every 0.02 s and mm-evalkit reads rollouts at dt = {EVALKIT_DT_S} s"
                   if name in task_ids(gait=True) else f"mm-evalkit scores gait cycles, and {name} is not a gait task")
            raise ValueError(f"no mm-evalkit rollout for {name}: {why}; it applies to {', '.join(allowed)}")
    env = MSKEnv(name)
    try:
        pol = load_policy(policy, env, seed)
        recorder = _Recorder(env, max_steps)
        results = []
        for i, s in enumerate(seeds):
            hook = None if progress is None else (lambda e, i=i: progress(i, e.steps))
            # _Recorder stands in for the MSKEnv it wraps (every attribute it does not record passes through).
            results.append(run_episode(cast("MSKEnv", recorder), pol, s, on_step=hook))
        demos = _demo_arrays(env, recorder, results, name, policy, seed, max_steps)
        _write_npz(out_path, demos, overwrite)
        if evalkit_path is not None:
            _write_npz(evalkit_path, _evalkit_arrays(env, demos), overwrite)
    finally:
        env.close()
    return DemoSummary(out_path, evalkit_path, name, policy, int(demos["episode_offsets"][-1]), results)


def load_demos(path) -> dict[str, np.ndarray]:
    """The arrays of a demonstrations file; a ``ValueError`` when ``path`` is not one."""
    try:
        with np.load(path, allow_pickle=False) as z:
            if "format" not in z.files or str(z["format"]) != FORMAT:
                raise ValueError(f"{path} is not a demonstrations file (make one with 'mskbench record')")
            return {k: z[k] for k in z.files}
    except OSError as exc:
        raise ValueError(f"cannot read {path}: {exc}") from None

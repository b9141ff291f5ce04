"""Direct external control (App. A-F, Table IV): a paused, replayable, file-mediated session.

A controller — a person, a script, a language model — drives the body one
held muscle command at a time, with the simulator paused in between:

1. :meth:`DirectSession.start` (``mskbench direct start TASK --dir D``) resets
   the task's env with the seed and writes ``D/env_info.json`` (the metadata:
   actuator names in action order, bounds, the observation layout after
   Table XVII, timesteps, the hold, the budget), observation 0
   (``D/observations/decision_000.json``) and ``D/session.json``.
2. The controller reads only ``env_info.json`` and the pending observation and
   writes a bare JSON array of one number per muscle.
3. :meth:`DirectSession.act` (``mskbench direct act D action.json``) validates it
   (:func:`validate_action`: exactly ``n_muscles`` entries, numbers, no
   booleans, finite, within [−1, 1]; a rejected action changes nothing and
   says why), rebuilds the seeded env, replays the committed actions (and
   checks that the replay reproduces the pending observation bit for bit),
   applies the new one with zero-order hold for ``hold_steps`` native control
   steps, checks the fall gate after every native step (non-finite state, root
   height < 0.6 m, root tilt > 70°, Eq. 18; the task's own termination ends the
   session too) and writes the next observation — or the outcome.
4. :meth:`DirectSession.report` (``mskbench direct report D``): duration,
   tracking RMSE (Eq. 19) and the first sustained divergence (Eq. 20) against a
   reference rollout.

Files in ``D`` (written atomically; ``session.json`` last, as the commit):
``session.json`` (settings, status, the committed actions, the outcome),
``env_info.json``, ``observations/decision_NNN.json`` (controller-visible) and
``trajectory.npz`` (logging only — every native sample's time, root height,
tilt, fall flag and tracking error; a controller must not read it).

Choices where the paper and the original
(``experiments/gpt6_direct_control/*.py@4ffd2d6`` and
``paused_env_controller.py@d7a2891``) are silent or do not apply to
mskbench — see docs/paradigms.md:

* the observation is mskbench's own policy observation (Walk: 2,046 values,
  416 muscles with length, velocity, force and activation; no touch sensors),
  restructured losslessly after Table XVII's rows;
* the tracked sites of Eq. 19 are the origins of 16 bodies
  (:data:`TRACKED_BODIES`), the reference is the task's own reference motion
  (Walk: the synthetic gait at the episode's phase, placed on the floor, its
  root advancing at the target speed); tasks without one report no tracking;
* Eq. 20's reference rollout (the paper: a MuscleMimic checkpoint) is any
  policy or another session — by default the built-in ``zero`` policy, acting
  at every native step, under the same fall gate.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mskbench.tasks.motion_reference import TRACKED_BODIES  # Eq. 19's 16 tracked sites

if TYPE_CHECKING:
    from mskbench.envs.cpu_env import MSKEnv

FORMAT = "mskbench-direct-session"
FORMAT_VERSION = 1
#: Native control steps an action is held (App. A-F: 20 × 10 ms = 0.2 s, decisions at 5 Hz).
HOLD_STEPS = 20
#: Simulated horizon of a session (App. A-F: 3 s).
MAX_DURATION_S = 3.0
#: The fall gate (App. A-F): root height below this (m) ...
FALL_HEIGHT_M = 0.6
#: ... or root tilt (Eq. 18) above this (degrees).
FALL_TILT_DEG = 70.0
#: Reference policy of Eq. 20 unless another is given.
DEFAULT_REFERENCE = "zero"
SESSION_FILE = "session.json"
INFO_FILE = "env_info.json"
TRAJECTORY_FILE = "trajectory.npz"
OBSERVATIONS_DIR = "observations"
#: Table XVII's rows (and mskbench's extra CoM velocity) as the observation file names them.
TABLE_XVII = {
    "root_pose_without_xy": "Root pose without global x-y",
    "joint_positions": "Joint positions",
    "root_velocity": "Root velocity",
    "joint_velocities": "Joint velocities",
    "com_velocity": "(mskbench) whole-body CoM velocity",
    "muscles": "Muscle state",
    "goal": "Goal and reference features",
}
MUSCLE_FIELDS = {"muscle_length": "length", "muscle_velocity": "velocity", "muscle_force": "force",
                 "muscle_excitation": "excitation", "muscle_activation": "activation"}


class ActionRejected(ValueError):
    """An action file that breaks the action contract; the session is unchanged."""


class SessionComplete(RuntimeError):
    """The session has ended; it takes no more actions."""


def _utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _atomic_write(path: Path, text: str | bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(text.encode() if isinstance(text, str) else text)
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o644)
        os.replace(tmp, path)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def _write_json(path: Path, payload: Any, indent: int | None = 2) -> None:
    _atomic_write(path, json.dumps(payload, indent=indent, allow_nan=False) + "\n")


# -- the action contract -----------------------------------------------------------------------------
def validate_action(values: Any, size: int) -> np.ndarray:
    """``values`` as the float32 command it will be applied as, or :class:`ActionRejected`.

    The contract (App. A-F): a list of exactly ``size`` entries, each a number
    (``True``/``False`` are not numbers here), finite, within [−1, 1]. The
    first offending entry is named. Accepted values are cast to float32 and
    applied without clipping or any other change.
    """
    if isinstance(values, Mapping):
        raise ActionRejected(f"the action must be a bare JSON array of {size} numbers, got an object")
    if not isinstance(values, (list, tuple)):
        raise ActionRejected(f"the action must be a bare JSON array of {size} numbers, got {type(values).__name__}")
    if len(values) != size:
        raise ActionRejected(f"the action needs exactly {size} values (one per muscle), got {len(values)}")
    for i, v in enumerate(values):
        if isinstance(v, (bool, np.bool_)):
            raise ActionRejected(f"action[{i}] is a boolean ({json.dumps(bool(v))}); give a number in [-1, 1]")
        if not isinstance(v, (int, float, np.integer, np.floating)):
            raise ActionRejected(f"action[{i}] is not a number ({json.dumps(v, default=repr)[:40]})")
        if not math.isfinite(float(v)):
            raise ActionRejected(f"action[{i}] is not finite ({float(v)})")
        if not -1.0 <= float(v) <= 1.0:
            raise ActionRejected(f"action[{i}] = {float(v):.9g} is outside [-1, 1]")
    return np.asarray(values, dtype=np.float64).astype(np.float32)


def load_action(path: str | Path, size: int) -> np.ndarray:
    """Read and validate an action file (a bare JSON array; ``NaN``/``Infinity`` parse and are rejected)."""
    try:
        text = Path(path).read_text()
    except OSError as exc:
        raise ActionRejected(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        payload = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ActionRejected(f"{path} is not valid JSON ({exc.msg} at line {exc.lineno} column {exc.colno})") from None
    return validate_action(payload, size)


# -- the fall gate and the tracking error ----------------------------------------------------------------
def fall_reason(env: "MSKEnv", info: Mapping[str, Any] | None = None) -> str | None:
    """Why the current state is fallen (App. A-F), or None: a non-finite state (or unstable physics),
    root height below :data:`FALL_HEIGHT_M`, root tilt (Eq. 18) above :data:`FALL_TILT_DEG`."""
    from mskbench.envs.cpu_env import PHYSICS_UNSTABLE

    if info is not None and info.get("termination") == PHYSICS_UNSTABLE:
        return "non-finite state (unstable physics)"
    qpos, qvel = env.data.qpos, env.data.qvel
    if not (np.isfinite(qpos).all() and np.isfinite(qvel).all()):
        return "non-finite state"
    if not env.handles.free_root:
        return None
    height = float(qpos[2])
    if height < FALL_HEIGHT_M:
        return f"root height {height:.3f} m < {FALL_HEIGHT_M:g} m"
    tilt = _tilt_deg(qpos)
    if tilt > FALL_TILT_DEG:
        return f"root tilt {tilt:.1f} deg > {FALL_TILT_DEG:g} deg"
    return None


def _tilt_deg(qpos: np.ndarray) -> float:
    from mskbench.sim.state import quat_tilt

    quat = np.asarray(qpos[3:7], dtype=np.float64)
    norm = float(np.linalg.norm(quat))
    if not (norm > 0.0 and math.isfinite(norm)):
        return 180.0
    return float(np.degrees(quat_tilt(np, quat / norm)))


class SiteTracker:
    """Eq. 19's error against the task's reference motion, for tasks that have one on flat ground (Walk).

    The reference at a sample: the reference joint angles at the episode's
    current phase, the body placed on the floor, its root at the start's
    ``(x, y)`` plus ``target_speed · t`` along +x; the sites are the origins of
    :data:`TRACKED_BODIES`. :meth:`error` is ``e_t`` (m).
    """

    #: Tasks whose reference is a flat-ground gait at a target speed.
    TASKS = ("Walk",)

    def __init__(self, env: "MSKEnv"):
        import mujoco

        from mskbench.body.base import default_qpos
        from mskbench.tasks import InitContext

        model = env.model
        self.ids = np.array([mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, b) for b in TRACKED_BODIES])
        if (self.ids < 0).any():
            missing = [b for b, i in zip(TRACKED_BODIES, self.ids) if i < 0]
            raise ValueError(f"the model has no bodies {', '.join(missing)}")
        self.scratch = mujoco.MjData(model)
        self.ctx = InitContext(model, self.scratch, env.handles, default_qpos(model, env.handles), env.control_dt_s)
        self.reference = env.task.reference
        self.speed = float(env.task.target_speed_mps)
        self.xy0 = np.zeros(2)

    @classmethod
    def for_env(cls, env: "MSKEnv") -> "SiteTracker | None":
        """A tracker for ``env``'s task, or None when the task has no usable reference."""
        return cls(env) if env.task.name in cls.TASKS else None

    def start(self, env: "MSKEnv") -> None:
        self.xy0 = np.array(env.data.qpos[:2], dtype=np.float64)

    def reference_positions(self, phase: float, time_s: float) -> np.ndarray:
        import mujoco

        base = self.ctx.default_qpos.copy()
        base[self.ctx.handles.joint_qpos] = self.reference.q_ref(phase)
        qpos = self.ctx.pose(base=base, root_xy=(float(self.xy0[0] + self.speed * time_s), float(self.xy0[1])))
        self.scratch.qpos[:] = qpos
        mujoco.mj_kinematics(self.ctx.model, self.scratch)
        return self.scratch.xpos[self.ids].copy()

    def error(self, env: "MSKEnv", time_s: float) -> float:
        from mskbench.metrics import site_tracking_error

        if not np.isfinite(env.data.xpos[self.ids]).all():
            return float("nan")
        ref = self.reference_positions(float(env.task_state["phase"]), time_s)
        return float(site_tracking_error(env.data.xpos[self.ids], ref))


# -- the observation file ---------------------------------------------------------------------------
def observation_layout(env: "MSKEnv") -> list[dict[str, Any]]:
    """Where each part of the controller-visible observation sits in the flat policy observation.

    Entries ``{"key", "row", "start", "stop"}`` in observation order; muscle
    blocks also carry ``column`` and ``field`` (the file holds one row per
    muscle, in action order). ``key`` is the observation file's path
    (``goal/<block>`` for the task's blocks).
    """
    entries: list[dict[str, Any]] = []
    free = env.handles.free_root
    muscle_blocks = [n for n in env.obs_layout if n in MUSCLE_FIELDS]
    for name, sl in env.obs_layout.items():
        start, stop = int(sl.start), int(sl.stop)
        if name == "qpos" and free:
            entries += [{"key": "root_pose_without_xy", "start": start, "stop": start + 5},
                        {"key": "joint_positions", "start": start + 5, "stop": stop}]
        elif name == "qpos":
            entries.append({"key": "joint_positions", "start": start, "stop": stop})
        elif name == "qvel" and free:
            entries += [{"key": "root_velocity", "start": start, "stop": start + 6},
                        {"key": "joint_velocities", "start": start + 6, "stop": stop}]
        elif name == "qvel":
            entries.append({"key": "joint_velocities", "start": start, "stop": stop})
        elif name == "com_vel":
            entries.append({"key": "com_velocity", "start": start, "stop": stop})
        elif name in MUSCLE_FIELDS:
            entries.append({"key": "muscles", "start": start, "stop": stop, "column": muscle_blocks.index(name),
                            "field": MUSCLE_FIELDS[name]})
        elif name.startswith("task/"):
            entries.append({"key": "goal/" + name.removeprefix("task/"), "start": start, "stop": stop})
        else:
            entries.append({"key": "other/" + name, "start": start, "stop": stop})
    for e in entries:
        e["row"] = TABLE_XVII.get(e["key"].split("/")[0], "(mskbench) other")
    return entries


def serialize_observation(obs: np.ndarray, layout: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The observation as the structured, lossless dict of the observation file (float32 values as JSON
    numbers that parse back to the same float32)."""
    x = np.asarray(obs, dtype=np.float32).reshape(-1)
    out: dict[str, Any] = {}
    muscles: list[np.ndarray] = []
    for e in layout:
        part = x[e["start"]:e["stop"]]
        if e["key"] == "muscles":
            muscles.append(part)
            continue
        head, _, tail = e["key"].partition("/")
        target = out.setdefault(head, {}) if tail else out
        target[tail or head] = [float(v) for v in part]
    if muscles:
        out["muscles"] = np.stack(muscles, axis=1).astype(np.float64).tolist()
    return out


def flatten_observation(observation: Mapping[str, Any], layout: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """The flat float32 policy observation back from :func:`serialize_observation`'s dict (exact)."""
    size = max(int(e["stop"]) for e in layout)
    x = np.zeros(size, dtype=np.float32)
    for e in layout:
        if e["key"] == "muscles":
            value = np.asarray(observation["muscles"], dtype=np.float32)[:, e["column"]]
        else:
            head, _, tail = e["key"].partition("/")
            value = np.asarray(observation[head][tail] if tail else observation[head], dtype=np.float32)
        if value.size != e["stop"] - e["start"]:
            raise ValueError(f"observation part {e['key']!r} has {value.size} values, the layout says "
                             f"{e['stop'] - e['start']}")
        x[e["start"]:e["stop"]] = value
    return x


# -- playing a session -------------------------------------------------------------------------------------
@dataclass
class Outcome:
    """How a rollout ended: ``reason`` ``fall``, ``terminated`` (the task's own condition), ``time_limit``
    (the task's horizon) or ``horizon`` (the session's duration), with a one-line ``detail``."""

    reason: str
    detail: str

    def as_dict(self) -> dict[str, str]:
        return {"reason": self.reason, "detail": self.detail}


class _Player:
    """The seeded env played sample by sample with the fall gate, recording the logging-only trajectory."""

    def __init__(self, env: "MSKEnv", seed: int, hold_steps: int, max_steps: int):
        self.env, self.seed, self.hold_steps, self.max_steps = env, seed, hold_steps, max_steps
        self.tracker = SiteTracker.for_env(env)
        self.dt = env.control_dt_s
        self.obs = np.zeros(0, np.float32)
        self.native = 0
        self.outcome: Outcome | None = None
        self.rows: dict[str, list] = {}

    def _record(self, decision: int, info: Mapping[str, Any] | None, fallen: str | None) -> None:
        q = self.env.data.qpos
        t = self.native * self.dt
        finite = bool(np.isfinite(q).all())
        row = {"time_s": t, "native_step": self.native, "decision": decision,
               "root_height_m": float(q[2]) if finite and self.env.handles.free_root else float("nan"),
               "root_tilt_deg": _tilt_deg(q) if finite and self.env.handles.free_root else float("nan"),
               "fallen": fallen is not None,
               "tracking_error_m": self.tracker.error(self.env, t) if self.tracker and finite else float("nan"),
               "termination": "" if info is None or info.get("termination") is None else str(info["termination"])}
        for k, v in row.items():
            self.rows.setdefault(k, []).append(v)

    def reset(self) -> np.ndarray:
        self.obs, _ = self.env.reset(seed=self.seed)
        if self.tracker is not None:
            self.tracker.start(self.env)
        self.native, self.outcome, self.rows = 0, None, {}
        self._record(-1, None, fall_reason(self.env))
        return self.obs

    def _advance(self, action: np.ndarray, decision: int) -> bool:
        """One native control step with ``action``; True when the rollout ended there."""
        obs, _, terminated, truncated, info = self.env.step(action)
        self.native += 1
        fallen = fall_reason(self.env, info)
        self._record(decision, info, fallen)
        self.obs = obs
        if fallen is not None:
            self.outcome = Outcome("fall", fallen)
        elif terminated:
            self.outcome = Outcome("terminated", f"the task's termination: {info['termination']}")
        elif truncated:
            self.outcome = Outcome("time_limit", "the task's horizon was reached")
        elif self.native >= self.max_steps:
            self.outcome = Outcome("horizon", f"the session's {self.max_steps * self.dt:g} s were reached")
        return self.outcome is not None

    def hold(self, action: np.ndarray, decision: int) -> None:
        """Apply ``action`` until native step ``(decision + 1) · hold_steps`` (or the horizon), stopping at
        the first fallen sample or the task's termination."""
        if self.outcome is not None:
            raise RuntimeError("the rollout has ended")
        end = min((decision + 1) * self.hold_steps, self.max_steps)
        while self.native < end:
            if self._advance(action, decision):
                return

    def step(self, action: np.ndarray) -> None:
        """One native step (a policy that acts at every step, for Eq. 20's reference rollout)."""
        if self.outcome is not None:
            raise RuntimeError("the rollout has ended")
        self._advance(action, self.native // self.hold_steps)

    def trajectory(self) -> dict[str, np.ndarray]:
        return {k: np.asarray(v) for k, v in self.rows.items()}


# -- the session ---------------------------------------------------------------------------------------------
class DirectSession:
    """A direct-control session in a directory (see the module docstring for the protocol and files)."""

    def __init__(self, directory: str | Path):
        self.dir = Path(directory)
        path = self.dir / SESSION_FILE
        if not path.is_file():
            raise FileNotFoundError(f"{self.dir} holds no direct-control session ({SESSION_FILE} is missing); "
                                    "start one with 'mskbench direct start TASK --dir DIR'")
        try:
            self.manifest = json.loads(path.read_text())
            self.info = json.loads((self.dir / INFO_FILE).read_text())
        except (OSError, json.JSONDecodeError) as exc:
            raise ValueError(f"{self.dir} holds a damaged session: {exc}") from None
        if self.manifest.get("format") != FORMAT:
            raise ValueError(f"{path} is not a {FORMAT} file")
        self._env: MSKEnv | None = None

    # -- starting -------------------------------------------------------------------------------------------
    @classmethod
    def start(cls, directory: str | Path, task: str, *, seed: int = 0, hold_steps: int = HOLD_STEPS,
              max_duration_s: float = MAX_DURATION_S, task_options: Mapping[str, Any] | None = None) -> "DirectSession":
        """Reset ``task`` with ``seed``, write the metadata and observation 0, and pause."""
        import mujoco

        from mskbench._version import __version__
        from mskbench.envs.cpu_env import MSKEnv
        from mskbench.tasks import make_task

        directory = Path(directory)
        if (directory / SESSION_FILE).exists():
            raise FileExistsError(f"{directory} already holds a session; continue it with 'mskbench direct act' "
                                  "or choose another directory")
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
        if isinstance(hold_steps, bool) or not isinstance(hold_steps, int) or hold_steps < 1:
            raise ValueError(f"hold_steps must be a positive integer, got {hold_steps!r}")
        if not (max_duration_s > 0 and math.isfinite(max_duration_s)):
            raise ValueError(f"max_duration_s must be positive and finite, got {max_duration_s!r}")
        env = MSKEnv(make_task(task, **dict(task_options or {})))
        dt = env.control_dt_s
        max_steps = min(max(1, int(round(max_duration_s / dt))), int(env.task.horizon))
        player = _Player(env, seed, hold_steps, max_steps)
        obs = player.reset()
        layout = observation_layout(env)
        m = env.model
        tracker = player.tracker
        info = {
            "format": FORMAT, "format_version": FORMAT_VERSION, "mskbench_version": __version__,
            "mujoco_version": mujoco.__version__,
            "task": env.task.name, "task_options": {k: _jsonable(v) for k, v in env.task.config.as_dict().items()},
            "seed": seed, "body": env.task.body.name,
            "action_dim": int(env.action_space.shape[0]),
            "action_low": -1.0, "action_high": 1.0,
            "action_semantics": "entry i drives muscle i (actuator_names[i]) with excitation (a + 1) / 2, held "
                                "for hold_steps native control steps; exactly action_dim finite numbers in "
                                "[-1, 1], no booleans, applied as float32 without clipping",
            "actuator_names": list(env.handles.muscle_names),
            "joint_names": [m.joint(int(j)).name for j in _joint_ids(m, env.handles.joint_qpos)],
            "observation_dim": int(obs.size),
            "observation_layout": layout,
            "muscle_fields": [e["field"] for e in layout if e["key"] == "muscles"],
            "physics_timestep_s": float(m.opt.timestep),
            "physics_steps_per_control_step": int(env.sim.frame_skip),
            "control_timestep_s": dt,
            "hold_steps": hold_steps, "hold_s": hold_steps * dt, "decision_frequency_hz": 1.0 / (hold_steps * dt),
            "max_duration_s": max_steps * dt, "max_native_steps": max_steps,
            "max_decisions": -(-max_steps // hold_steps),
            "fall_gate": {"root_height_below_m": FALL_HEIGHT_M, "root_tilt_above_deg": FALL_TILT_DEG,
                          "non_finite_state": True, "checked": "after every native control step"},
            "tracking": ({"sites": "origins of these bodies", "bodies": list(TRACKED_BODIES),
                          "reference": "the task's reference gait at the current phase, on the floor, root advancing "
                                       "at the target speed"} if tracker is not None
                         else {"absent": f"{env.task.name} has no flat-ground reference motion"}),
            "controller_may_read": [INFO_FILE, f"{OBSERVATIONS_DIR}/decision_NNN.json (the pending one)"],
            "controller_must_not_read": [TRAJECTORY_FILE, SESSION_FILE],
        }
        now = _utc_now()
        directory.mkdir(parents=True, exist_ok=True)
        _write_json(directory / INFO_FILE, info)
        obs_path = _write_observation(directory, info, obs, 0, 0.0, 0)
        _atomic_write(directory / TRAJECTORY_FILE, _npz_bytes(player.trajectory()))
        manifest = {"format": FORMAT, "format_version": FORMAT_VERSION, "task": env.task.name, "seed": seed,
                    "hold_steps": hold_steps, "max_native_steps": max_steps, "status": "awaiting_action",
                    "decisions": [], "pending_observation": obs_path, "pending_exported_at_utc": now,
                    "outcome": None, "created_at_utc": now, "updated_at_utc": now}
        _write_json(directory / SESSION_FILE, manifest)
        session = cls(directory)
        session._env = env
        return session

    # -- state -------------------------------------------------------------------------------------------------
    @property
    def status(self) -> str:
        """``awaiting_action`` or ``complete``."""
        return str(self.manifest["status"])

    @property
    def decisions(self) -> int:
        """Committed actions so far."""
        return len(self.manifest["decisions"])

    @property
    def actions(self) -> list[np.ndarray]:
        """The committed actions (float32), in order."""
        return [np.asarray(d["action"], dtype=np.float32) for d in self.manifest["decisions"]]

    @property
    def action_dim(self) -> int:
        return int(self.info["action_dim"])

    def observation(self, index: int | None = None) -> dict[str, Any]:
        """The observation file of decision ``index`` (default: the pending one)."""
        if index is None:
            if self.manifest["pending_observation"] is None:
                raise SessionComplete(f"the session is complete ({self._outcome_text()}); no observation is pending")
            path = self.dir / self.manifest["pending_observation"]
        else:
            path = self.dir / OBSERVATIONS_DIR / f"decision_{index:03d}.json"
        return json.loads(path.read_text())

    def observation_vector(self, index: int | None = None) -> np.ndarray:
        """The flat float32 policy observation of decision ``index`` (default: the pending one)."""
        return flatten_observation(self.observation(index)["observation"], self.info["observation_layout"])

    def env(self) -> "MSKEnv":
        """The session's env, built from its task and options (once per session object)."""
        if self._env is None:
            from mskbench.envs.cpu_env import MSKEnv
            from mskbench.tasks import make_task

            self._env = MSKEnv(make_task(self.info["task"], **self.info["task_options"]))
        return self._env

    def _player(self) -> _Player:
        return _Player(self.env(), int(self.manifest["seed"]), int(self.manifest["hold_steps"]),
                       int(self.manifest["max_native_steps"]))

    def replay(self, actions: Sequence[np.ndarray] | None = None) -> _Player:
        """A fresh rollout from the seed through ``actions`` (default: the committed ones)."""
        player = self._player()
        player.reset()
        for k, a in enumerate(self.actions if actions is None else actions):
            if player.outcome is not None:
                break
            player.hold(np.asarray(a, dtype=np.float32), k)
        return player

    def _outcome_text(self) -> str:
        out = self.manifest.get("outcome") or {}
        return f"{out.get('reason', '?')} at {out.get('time_s', 0.0):.2f} s: {out.get('detail', '')}"

    # -- acting --------------------------------------------------------------------------------------------
    def act_file(self, path: str | Path) -> dict[str, Any]:
        """:meth:`act` with the action read from a JSON file."""
        self._check_open()
        return self.act(load_action(path, self.action_dim))

    def _check_open(self) -> None:
        if self.status != "awaiting_action":
            raise SessionComplete(f"the session is complete ({self._outcome_text()}); it takes no more actions, "
                                  "start a new one")

    def act(self, action: Any) -> dict[str, Any]:
        """Validate ``action``, replay the session, hold the action, write the next observation or the outcome.

        Raises :class:`ActionRejected` (nothing changes) or :class:`SessionComplete`. Returns the updated
        manifest.
        """
        self._check_open()
        received = _utc_now()
        a = validate_action(action.tolist() if isinstance(action, np.ndarray) else action, self.action_dim)
        k = self.decisions
        player = self.replay()
        if player.outcome is not None or player.native != k * player.hold_steps:
            raise RuntimeError(f"replaying the {k} committed actions ended early ({player.outcome}); "
                               "the session files are inconsistent")
        if not np.array_equal(player.obs, self.observation_vector()):
            raise RuntimeError(f"replaying the {k} committed actions did not reproduce observation {k} bit for bit "
                               f"(made with mskbench {self.info.get('mskbench_version')}, MuJoCo "
                               f"{self.info.get('mujoco_version')}); the session cannot continue here")
        player.hold(a, k)
        t = player.native * player.dt
        entry = {"index": k, "action": [float(v) for v in a], "observation_exported_at_utc":
                 self.manifest["pending_exported_at_utc"], "action_received_at_utc": received,
                 "native_steps_after": player.native, "time_after_s": t}
        manifest = dict(self.manifest)
        manifest["decisions"] = [*self.manifest["decisions"], entry]
        _atomic_write(self.dir / TRAJECTORY_FILE, _npz_bytes(player.trajectory()))
        if player.outcome is None:
            now = _utc_now()
            manifest["pending_observation"] = _write_observation(self.dir, self.info, player.obs, k + 1, t,
                                                                 player.native)
            manifest["pending_exported_at_utc"] = now
        else:
            manifest.update(status="complete", pending_observation=None, pending_exported_at_utc=None,
                            outcome={**player.outcome.as_dict(), "time_s": t, "native_steps": player.native,
                                     "decisions": k + 1})
        manifest["updated_at_utc"] = _utc_now()
        _write_json(self.dir / SESSION_FILE, manifest)
        self.manifest = manifest
        return manifest

    # -- the report ---------------------------------------------------------------------------------------
    def trajectory(self) -> dict[str, np.ndarray]:
        """The logging-only trajectory (one entry per native sample, the reset's first)."""
        with np.load(self.dir / TRAJECTORY_FILE) as data:
            return {k: data[k] for k in data.files}

    def reference_trajectory(self, reference: str | Path = DEFAULT_REFERENCE) -> tuple[dict[str, np.ndarray], str]:
        """Eq. 20's reference: another session's trajectory (a directory) or a rollout of a policy (a
        built-in name, a checkpoint or ``package.module:factory``) from the same seed, acting at every
        native step, under the same fall gate and horizon. Returns it and a description."""
        path = Path(reference)
        if path.is_dir() and (path / SESSION_FILE).is_file():
            other = DirectSession(path)
            if (other.info["task"], other.info["seed"]) != (self.info["task"], self.info["seed"]):
                raise ValueError(f"the reference session {path} is {other.info['task']} seed {other.info['seed']}, "
                                 f"not {self.info['task']} seed {self.info['seed']}")
            return other.trajectory(), f"session {path}"
        from mskbench.eval.protocol import load_policy
        from mskbench.policies import as_policy

        env = self.env()
        seed = int(self.manifest["seed"])
        policy = as_policy(load_policy(str(reference), env, seed))
        player = self._player()
        obs = player.reset()
        policy.reset(seed)
        while player.outcome is None:
            player.step(np.clip(np.asarray(policy.act(obs), dtype=np.float32), -1.0, 1.0))
            obs = player.obs
        return player.trajectory(), f"policy {reference!r}"

    def report(self, reference: str | Path | None = DEFAULT_REFERENCE) -> dict[str, Any]:
        """Duration, tracking RMSE (Eq. 19) and divergence time (Eq. 20; against ``reference``, see
        :meth:`reference_trajectory`; ``None``: not computed) of the session so far."""
        from mskbench.metrics import divergence_time, tracking_rmse

        traj = self.trajectory()
        times = traj["time_s"]
        errors = traj["tracking_error_m"]
        fallen = bool(traj["fallen"].any())
        analysed = slice(1, None)  # the native samples after the reset (t = 1..T)
        e = errors[analysed]
        tracked = e.size > 0 and bool(np.isfinite(e).any())
        ok = np.isfinite(e)
        out: dict[str, Any] = {
            "task": self.info["task"], "seed": self.info["seed"], "status": self.status,
            "decisions": self.decisions, "native_steps": int(traj["native_step"][-1]),
            "duration_s": float(times[-1]),
            "outcome": self.manifest.get("outcome") or {"reason": "in_progress", "detail": "awaiting an action"},
            "fallen": fallen,
            "tracking_rmse_m": tracking_rmse(e[ok]) if tracked else None,
            "divergence_s": None,
        }
        if not tracked:
            out["divergence"] = {"absent": self.info["tracking"].get("absent", "no tracked samples yet")}
            return out
        if reference is None:
            out["divergence"] = {"absent": "no reference given"}
            return out
        ref, source = self.reference_trajectory(reference)
        rt, re = ref["time_s"][analysed], ref["tracking_error_m"][analysed]
        rok = np.isfinite(re)
        if not rok.any():
            out["divergence"] = {"absent": f"the reference ({source}) has no tracked samples"}
            return out
        out["divergence_s"] = divergence_time(times[analysed][ok], e[ok], rt[rok], re[rok])
        out["divergence"] = {"reference": source, "reference_duration_s": float(ref["time_s"][-1]),
                             "reference_q95_m": float(np.quantile(re[rok], 0.95)),
                             "rule": "first of 5 consecutive samples above both the reference error at the same "
                                     "time and the reference's 95th percentile (Eq. 20)"}
        return out


def _joint_ids(model, joint_qpos: np.ndarray) -> list[int]:
    by_adr = {int(model.jnt_qposadr[j]): j for j in range(model.njnt)}
    return [by_adr[int(a)] for a in joint_qpos]


def _jsonable(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    raise ValueError(f"a direct session records its task options as JSON; {value!r} is not")


def _npz_bytes(arrays: Mapping[str, np.ndarray]) -> bytes:
    import io

    buffer = io.BytesIO()
    payload: dict[str, Any] = dict(arrays)
    np.savez(buffer, **payload)
    return buffer.getvalue()


def _write_observation(directory: Path, info: Mapping[str, Any], obs: np.ndarray, index: int, time_s: float,
                       native_step: int) -> str:
    """Write ``observations/decision_NNN.json``; returns its path relative to the session directory."""
    rel = f"{OBSERVATIONS_DIR}/decision_{index:03d}.json"
    if not np.isfinite(obs).all():
        raise RuntimeError(f"observation {index} is not finite; the session cannot continue")
    payload = {"visibility": "controller-visible", "task": info["task"], "decision_index": index,
               "simulation_time_s": time_s, "native_step": native_step, "observation_dim": int(obs.size),
               "observation": serialize_observation(obs, info["observation_layout"])}
    _write_json(directory / rel, payload, indent=None)
    return rel

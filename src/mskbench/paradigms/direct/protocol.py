"""The protocol of direct external control (App. A-F): what a controller sees and what its actions do.

The action contract (:func:`validate_action`, :func:`load_action`), the fall gate (:func:`fall_reason`) and
Eq. 19's tracking error (:class:`SiteTracker`), the observation file's layout after Table XVII
(:func:`observation_layout`, :func:`serialize_observation`, :func:`flatten_observation`) and the player that
holds each action for ``hold_steps`` native control steps under the gate. No files: the session store
(:mod:`mskbench.paradigms.direct.session`) keeps them.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mskbench.tasks.motion_reference import TRACKED_BODIES

if TYPE_CHECKING:
    from mskbench.envs.cpu_env import MSKEnv


#: Native control steps an action is held (App. A-F: 20 × 10 ms = 0.2 s, decisions at 5 Hz).
HOLD_STEPS = 20
#: Simulated horizon of a session (App. A-F: 3 s).
MAX_DURATION_S = 3.0
#: The fall gate (App. A-F): root height below this (m) ...
FALL_HEIGHT_M = 0.6
#: ... or root tilt (Eq. 18) above this (degrees).
FALL_TILT_DEG = 70.0


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

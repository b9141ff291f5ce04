"""The session store of direct external control (App. A-F): :class:`DirectSession`, a directory whose files
(``session.json`` last, as the commit; ``env_info.json``; the controller-visible observations; the logging-only
trajectory) are written atomically, replayed from the committed actions on every act, and reported on
(Eqs. 19-20) against a reference rollout.
"""

from __future__ import annotations

import json
import math
import os
import tempfile
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mskbench.paradigms.direct.protocol import (FALL_HEIGHT_M, FALL_TILT_DEG, HOLD_STEPS, MAX_DURATION_S, _Player,
                                                flatten_observation, load_action, observation_layout,
                                                serialize_observation, validate_action)
from mskbench.tasks.motion_reference import TRACKED_BODIES

if TYPE_CHECKING:
    from mskbench.envs.cpu_env import MSKEnv


FORMAT = "mskbench-direct-session"
FORMAT_VERSION = 1


#: Reference policy of Eq. 20 unless another is given.
DEFAULT_REFERENCE = "zero"
SESSION_FILE = "session.json"
INFO_FILE = "env_info.json"
TRAJECTORY_FILE = "trajectory.npz"
OBSERVATIONS_DIR = "observations"


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

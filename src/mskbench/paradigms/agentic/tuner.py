"""The loop of agentic reward tuning: the statistics window (Eq. 16), the training worlds that read the
shared weights, :class:`AgenticTuner` (every K environment steps: statistics → reasoner → bounds → the
weights file, each update logged), Table III and :func:`train_agentic`.
"""

from __future__ import annotations

import copy
import json
import math
import os
import tempfile
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import gymnasium as gym
import numpy as np

from mskbench.envs.wrappers import VectorWrapper
from mskbench.paradigms.agentic.reasoners import (REASONERS, HTTPReasoner, Proposal, Reasoner, call_with_timeout,
                                                  make_reasoner)
from mskbench.paradigms.agentic.weights import (L1_NORM, RELATIVE_LIMIT, WEIGHTS_FILE, WeightStore, _finite_weights,
                                                _utc_now, bound_weights, normalize_l1)

if TYPE_CHECKING:
    from mskbench.envs.cpu_env import MSKEnv
    from mskbench.envs.vector import MSKVectorEnv
    from mskbench.tasks import Task
    from mskbench.training import Run


#: Environment steps between updates (App. A-E: 20,000 in the original Agentic-DepRL setting).
DEFAULT_EVERY_STEPS = 20_000
#: Seconds a reasoner may take before its update is abandoned.
DEFAULT_TIMEOUT_S = 60.0
LOG_FILE = "agentic_updates.jsonl"
SUMMARY_FILE = "agentic_summary.json"


# -- the statistics (Eq. 16) ------------------------------------------------------------------------------
@dataclass
class _Moments:
    n: int = 0
    total: float = 0.0
    squares: float = 0.0

    def add(self, value: float) -> None:
        if math.isfinite(value):
            self.n += 1
            self.total += value
            self.squares += value * value

    @property
    def mean(self) -> float | None:
        return self.total / self.n if self.n else None

    @property
    def std(self) -> float | None:
        if not self.n:
            return None
        m = self.total / self.n
        return math.sqrt(max(self.squares / self.n - m * m, 0.0))


@dataclass
class StatsWindow:
    """Eq. 16: what the training worlds did since the last update.

    :meth:`summary` gives ``env_steps``; ``forward_speed_mps`` (mean CoM
    velocity along +x) and ``target_speed_mps`` (the task's, if it has one);
    ``torso_pitch_rad`` (mean chest pitch: positive leaning back, negative
    forward, i.e. hunched) and its standard deviation; posture stability as
    ``root_tilt_rad`` (mean root tilt from vertical, Eq. 18) and its standard
    deviation; tracking quality as ``joint_tracking_rmse_rad`` (RMS of the
    task's ``delta_q`` block, when it has one); ``mean_activation``;
    ``episodes_ended``, ``mean_episode_steps`` and ``terminations`` (episodes
    ended per cause); ``reward_terms`` (each unweighted term's mean).
    """

    target_speed_mps: float | None = None
    steps: int = 0
    speed: _Moments = field(default_factory=_Moments)
    pitch: _Moments = field(default_factory=_Moments)
    tilt: _Moments = field(default_factory=_Moments)
    tracking_ms: _Moments = field(default_factory=_Moments)
    activation: _Moments = field(default_factory=_Moments)
    lengths: _Moments = field(default_factory=_Moments)
    terminations: dict[str, int] = field(default_factory=dict)
    terms: dict[str, _Moments] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, env: "MSKEnv", obs: np.ndarray, info: Mapping[str, Any]) -> None:
        """Add one step of ``env`` (its observation and ``info`` after the step)."""
        from mskbench.envs.cpu_env import PHYSICS_UNSTABLE

        reason = info.get("termination")
        with self.lock:
            self.steps += 1
            if reason is not None:
                self.terminations[reason] = self.terminations.get(reason, 0) + 1
                self.lengths.add(float(info.get("step", 0)))
            if reason == PHYSICS_UNSTABLE:  # the step carries no physical state
                return
            layout = env.obs_layout
            if "com_vel" in layout:
                self.speed.add(float(obs[layout["com_vel"]][0]))
            if "task/delta_q" in layout:
                dq = np.asarray(obs[layout["task/delta_q"]], np.float64)
                self.tracking_ms.add(float(np.mean(dq * dq)))
            view = env.sim.view()
            if "chest" in env.handles.bodies:
                self.pitch.add(float(view.chest_pitch))
            if env.handles.free_root:
                self.tilt.add(float(view.tilt))
            self.activation.add(float(np.mean(info["activation"])))
            for key, value in info.get("reward_terms", {}).items():
                self.terms.setdefault(key, _Moments()).add(float(value))

    def clear(self) -> None:
        with self.lock:
            target = self.target_speed_mps
            fresh = StatsWindow(target)
            for name in ("steps", "speed", "pitch", "tilt", "tracking_ms", "activation", "lengths",
                         "terminations", "terms"):
                setattr(self, name, getattr(fresh, name))

    def summary(self) -> dict[str, Any]:
        """The aggregate as JSON-ready numbers (``None`` where nothing was seen)."""
        with self.lock:
            ms = self.tracking_ms.mean
            return {
                "env_steps": self.steps,
                "forward_speed_mps": self.speed.mean,
                "target_speed_mps": self.target_speed_mps,
                "torso_pitch_rad": self.pitch.mean,
                "torso_pitch_std_rad": self.pitch.std,
                "root_tilt_rad": self.tilt.mean,
                "root_tilt_std_rad": self.tilt.std,
                "joint_tracking_rmse_rad": None if ms is None else math.sqrt(ms),
                "mean_activation": self.activation.mean,
                "episodes_ended": int(sum(self.terminations.values())),
                "mean_episode_steps": self.lengths.mean,
                "terminations": dict(sorted(self.terminations.items())),
                "reward_terms": {k: m.mean for k, m in self.terms.items()},
            }


# -- the environment side ---------------------------------------------------------------------------------
class RewardWeightWrapper(gym.Wrapper):
    """One training world whose reward uses the shared weights: ``Σ w_k · info["reward_terms"][k]``
    with the latest weights of ``store`` (reloaded before every step and reset when the file changed);
    each step is also recorded in ``window``. ``info["reward_weights_version"]`` says which weights.

    A :class:`gymnasium.Wrapper`: it overrides :meth:`reset` and :meth:`step`; ``env``, ``unwrapped``,
    the spaces and :meth:`close` are the base's. Gymnasium (1.x) wrappers forward no other attribute:
    the world's own (``obs_layout``, ``sim``, ...) are read from ``unwrapped`` or with
    ``get_wrapper_attr``; ``handles`` stays readable on the wrapper, as before."""

    def __init__(self, env: "MSKEnv", store: WeightStore, window: StatsWindow | None = None):
        super().__init__(env)
        self.store = WeightStore(store.path)  # its own change detection
        self.window = window
        self.keys = list(env.reward_weights)
        self.version = -1
        self.weights: dict[str, float] = dict(env.reward_weights)
        self._vec = np.array([self.weights[k] for k in self.keys])
        self.sync()

    @property
    def handles(self):
        """The wrapped world's body handles."""
        return self.env.handles

    def sync(self) -> None:
        """Reload the weights if the shared file changed."""
        latest = self.store.poll()
        if latest is None or latest[0] == self.version:
            return
        version, weights = latest
        missing = [k for k in self.keys if k not in weights]
        if missing:
            raise ValueError(f"{self.store.path} lacks the reward weight(s) {', '.join(missing)}")
        self.version, self.weights = version, {k: weights[k] for k in self.keys}
        self._vec = np.array([self.weights[k] for k in self.keys])

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        self.sync()
        return self.env.reset(seed=seed, options=options)

    def step(self, action):
        self.sync()
        obs, _, terminated, truncated, info = self.env.step(action)
        terms = info["reward_terms"]
        reward = float(np.dot(self._vec, [terms[k] for k in self.keys]))
        info["reward_weights_version"] = self.version
        if self.window is not None:
            self.window.record(self.env, obs, info)
        return obs, reward, terminated, truncated, info


class AgenticVectorEnv(VectorWrapper):
    """The CPU vector env with every world behind a :class:`RewardWeightWrapper`; each step counts
    ``num_envs`` environment steps towards the tuner's next update (a
    :class:`~mskbench.envs.protocols.VectorEnv`, like the env it wraps).

    A :class:`~mskbench.envs.wrappers.VectorWrapper` around the :class:`~mskbench.envs.vector.MSKVectorEnv`
    (``env``; the protocol's attributes are the base's copies, :meth:`close` closes it): it keeps the
    wrapped worlds (``envs``) and the ``tuner``, and overrides :meth:`reset` and :meth:`step`."""

    def __init__(self, env: "MSKVectorEnv", tuner: "AgenticTuner"):
        if tuner.store is None:
            raise RuntimeError("the tuner has no weights file yet")
        super().__init__(env)
        self.tuner = tuner
        from mskbench.envs.vector import worlds

        self.envs = [RewardWeightWrapper(e, tuner.store, tuner.window) for e in worlds(env, "agentic reward tuning")]
        self._returns = np.zeros(self.num_envs)

    def reset(self, seed: int | None = None) -> np.ndarray:
        self._returns[:] = 0.0
        return np.stack([w.reset(seed=None if seed is None else seed + i)[0] for i, w in enumerate(self.envs)])

    def step(self, actions: np.ndarray):
        from mskbench.envs.vector import checked_actions, step_each

        actions = checked_actions(actions, self.num_envs, self.action_size)

        def step_one(i):
            o, r, term, trunc, _ = self.envs[i].step(actions[i])
            return o, r, term, trunc

        out = step_each(self._returns, self.obs_size, step_one, lambda i: self.envs[i].reset()[0])
        self.tuner.advance(self.num_envs)
        return out


# -- the tuner --------------------------------------------------------------------------------------------
def _check_proposal(proposal: Any, current: Mapping[str, float]) -> Proposal:
    """A reasoner's answer as a :class:`Proposal` naming exactly the current keys, or ``ValueError``."""
    if not isinstance(proposal, Proposal):
        raise ValueError(f"the reasoner returned {type(proposal).__name__}, not a Proposal")
    if not isinstance(proposal.weights, Mapping):
        raise ValueError(f"the proposal's weights are a {type(proposal.weights).__name__}, not a mapping")
    missing = sorted(set(current) - set(proposal.weights))
    extra = sorted(set(proposal.weights) - set(current))
    if missing or extra:
        raise ValueError(f"the proposal must name exactly {', '.join(current)} "
                         f"(missing: {', '.join(missing) or '-'}; unknown: {', '.join(map(str, extra)) or '-'})")
    return Proposal(_finite_weights(proposal.weights, "proposed"), str(proposal.reason))


class AgenticTuner:
    """Agentic reward tuning for one training run (an ``env_wrapper`` of :func:`mskbench.training.train`).

    Parameters
    ----------
    reasoner:
        ``"rule"``, ``"http"`` or any :class:`Reasoner`.
    every_steps:
        Environment steps (all worlds together) between updates (default 20,000).
    l1_norm:
        ‖w‖₁ of the weights (default 40; ``None``: the original unnormalised updates).
    relative_limit:
        Largest relative change of a nonzero weight per update (default 0.2).
    timeout_s:
        Seconds the reasoner may take (default 60); past it the update is abandoned.

    Calling the tuner with ``(env, out_dir, resume)`` — :func:`~mskbench.training.train`
    does — writes ``reward_weights.json`` (the task's weights scaled to
    ``l1_norm``, version 0; kept on resume) and starts ``agentic_updates.jsonl``
    in ``out_dir`` (a temporary directory when it is None) and returns the
    wrapped env. Every update appends one JSON line: ``update``,
    ``env_steps``, ``status`` (``initial``, ``applied``, ``unchanged``,
    ``error``, ``timeout``, ``invalid`` or ``skipped`` — the lock was held by
    another updater), ``reason`` (the reasoner's, or the failure),
    ``stats``, ``previous``, ``proposed`` and ``weights`` (in force after
    it), ``version`` and ``elapsed_s``.
    """

    def __init__(self, reasoner: "Reasoner | str" = "rule", *, every_steps: int = DEFAULT_EVERY_STEPS,
                 l1_norm: float | None = L1_NORM, relative_limit: float = RELATIVE_LIMIT,
                 timeout_s: float = DEFAULT_TIMEOUT_S):
        if isinstance(every_steps, bool) or not isinstance(every_steps, int) or every_steps < 1:
            raise ValueError(f"every_steps must be a positive integer, got {every_steps!r}")
        if not (timeout_s > 0 and math.isfinite(timeout_s)):
            raise ValueError(f"timeout_s must be positive and finite, got {timeout_s!r}")
        if not 0.0 <= relative_limit < 1.0:
            raise ValueError(f"relative_limit must lie in [0, 1), got {relative_limit!r}")
        if l1_norm is not None and not (l1_norm > 0 and math.isfinite(l1_norm)):
            raise ValueError(f"l1_norm must be positive and finite (or None), got {l1_norm!r}")
        self._reasoner_spec = reasoner
        self.reasoner: Reasoner | None = None if isinstance(reasoner, str) else reasoner
        if isinstance(reasoner, str) and reasoner not in REASONERS:
            raise ValueError(f"unknown reasoner {reasoner!r}; valid: {', '.join(map(repr, REASONERS))}")
        if reasoner == "http":  # fail before training starts when the endpoint is not configured
            self.reasoner = make_reasoner("http", timeout_s=timeout_s, l1_norm=l1_norm, relative_limit=relative_limit)
        self.every_steps = every_steps
        self.l1_norm = l1_norm
        self.relative_limit = relative_limit
        self.timeout_s = float(timeout_s)
        self.store: WeightStore | None = None
        self.window = StatsWindow()
        self.run_dir: Path | None = None
        self.env_steps = 0
        self.updates = 0
        self._next = every_steps
        self.initial_weights: dict[str, float] = {}

    #: It changes the reward only: the run's evaluation is the protocol's, on the plain CPU env.
    eval_wrapper = None
    batched_env_options: dict[str, Any] = {}

    @property
    def reasoner_name(self) -> str:
        return self._reasoner_spec if isinstance(self._reasoner_spec, str) \
            else getattr(self._reasoner_spec, "name", type(self._reasoner_spec).__name__)

    @property
    def settings(self) -> dict[str, Any]:
        """What ``run.json`` records (a resumed run must have the same)."""
        return {"paradigm": "agentic", "reasoner": self.reasoner_name, "every_steps": self.every_steps,
                "l1_norm": self.l1_norm, "relative_limit": self.relative_limit}

    @property
    def log_path(self) -> Path | None:
        return None if self.run_dir is None else self.run_dir / LOG_FILE

    def __call__(self, env: Any, out_dir: Path | None, resume: bool = False) -> AgenticVectorEnv:
        from mskbench.envs.vector import MSKVectorEnv, worlds

        if not isinstance(env, MSKVectorEnv):
            raise ValueError(f"agentic reward tuning runs on the CPU training env (backend='cpu'), "
                             f"not on a {type(env).__name__}")
        first = worlds(env)[0]
        if self.reasoner is None:
            self.reasoner = make_reasoner(self.reasoner_name)
        if isinstance(self.reasoner, HTTPReasoner) and not self.reasoner.task:
            self.reasoner.task = first.task.name
        self.run_dir = Path(out_dir) if out_dir is not None else Path(tempfile.mkdtemp(prefix="mskbench-agentic-"))
        self.run_dir.mkdir(parents=True, exist_ok=True)
        self.store = WeightStore(self.run_dir / WEIGHTS_FILE)
        self.window = StatsWindow(getattr(first.task, "target_speed_mps", None))
        self.initial_weights = normalize_l1(first.reward_weights, self.l1_norm)
        log = self.run_dir / LOG_FILE
        if resume and self.store.exists():
            _, stored = self.store.read()
            if set(stored) != set(first.reward_weights):
                raise ValueError(f"{self.store.path} holds the weights {', '.join(stored)}, not "
                                 f"{', '.join(first.reward_weights)}; resume the run it belongs to")
            rows = _read_jsonl(log)
            self.updates = max((r.get("update", 0) for r in rows), default=0)
            self.env_steps = _resumed_steps(self.run_dir, rows)
        else:
            self.store.reset(self.initial_weights)
            log.write_text("")
            self.updates, self.env_steps = 0, 0
            note = (f"the task's weights scaled to ‖w‖₁ = {self.l1_norm:g}" if self.l1_norm is not None
                    else "the task's weights")
            self._log({"update": 0, "env_steps": 0, "time_utc": _utc_now(), "reasoner": self.reasoner_name,
                       "status": "initial", "reason": note, "weights": self.initial_weights, "version": 0,
                       "l1_norm": self.l1_norm, "relative_limit": self.relative_limit})
        self._next = (self.env_steps // self.every_steps + 1) * self.every_steps
        return AgenticVectorEnv(env, self)

    def _log(self, row: Mapping[str, Any]) -> None:
        assert self.run_dir is not None
        with open(self.run_dir / LOG_FILE, "a") as handle:
            handle.write(json.dumps(row, allow_nan=False, default=float) + "\n")

    def advance(self, steps: int) -> None:
        """Count ``steps`` environment steps; update when a multiple of ``every_steps`` is passed."""
        self.env_steps += int(steps)
        if self.env_steps >= self._next:
            self._next = (self.env_steps // self.every_steps + 1) * self.every_steps
            self.update()

    def update(self) -> dict[str, Any]:
        """One update now (Eqs. 16-17 and the bounds); returns its log row. Never raises for a reasoner's
        failure: the weights stay as they are and the row says why."""
        if self.store is None or self.reasoner is None:
            raise RuntimeError("the tuner is not attached to a training env yet (call it with the env first)")
        reasoner = self.reasoner
        stats = self.window.summary()
        self.window.clear()
        self.updates += 1
        row: dict[str, Any] = {"update": self.updates, "env_steps": self.env_steps, "time_utc": _utc_now(),
                               "reasoner": self.reasoner_name, "stats": stats}
        started = time.perf_counter()

        def change(version: int, current: dict[str, float]) -> dict[str, float] | None:
            row["previous"] = current
            try:
                raw = call_with_timeout(reasoner.propose, (dict(current), stats), self.timeout_s)
            except TimeoutError as exc:
                row.update(status="timeout", reason=f"reasoner timed out: {exc}; weights kept")
                return None
            except Exception as exc:  # noqa: BLE001 - any failure of a reasoner leaves training as it is
                row.update(status="error", reason=f"reasoner failed ({type(exc).__name__}: {exc}); weights kept")
                return None
            try:
                proposal = _check_proposal(raw, current)
                applied = bound_weights(current, proposal.weights, relative_limit=self.relative_limit,
                                        l1_norm=self.l1_norm)
            except ValueError as exc:
                row.update(status="invalid", reason=f"unusable proposal ({exc}); weights kept")
                return None
            row["proposed"] = proposal.weights
            row["reason"] = proposal.reason
            if all(applied[k] == current[k] for k in current):
                row["status"] = "unchanged"
                return None
            row["status"] = "applied"
            return applied

        self.store.update(change, blocking=False)
        if "status" not in row:
            row.update(status="skipped", reason="another updater holds the weights lock; weights kept")
        version, weights = self.store.read()
        row.update(weights=weights, version=version, elapsed_s=round(time.perf_counter() - started, 4))
        self._log(row)
        return row

    def log(self) -> list[dict[str, Any]]:
        """The rows of ``agentic_updates.jsonl`` so far."""
        return _read_jsonl(self.log_path) if self.log_path is not None else []

    def summary(self) -> dict[str, Any]:
        """Counts of the updates by status, the initial and current weights, the files."""
        rows = self.log()
        counts: dict[str, int] = {}
        for r in rows:
            if r.get("status") != "initial":
                counts[r["status"]] = counts.get(r["status"], 0) + 1
        version, weights = self.store.read() if self.store is not None and self.store.exists() else (0, {})
        return {**self.settings, "updates": counts, "version": version, "initial_weights": self.initial_weights,
                "final_weights": weights, "env_steps": self.env_steps,
                "log": None if self.log_path is None else str(self.log_path),
                "weights_file": None if self.store is None else str(self.store.path)}


def _read_jsonl(path: Path | None) -> list[dict[str, Any]]:
    if path is None or not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _resumed_steps(run_dir: Path, rows: list[dict[str, Any]]) -> int:
    """Environment steps a resumed run starts from: the training log's last row (the checkpoint's), else
    the last update's."""
    from mskbench.agents.run_dir import RunDir

    train_rows = RunDir(run_dir).history()
    if train_rows and "steps" in train_rows[-1]:
        return int(train_rows[-1]["steps"])
    return max((int(r.get("env_steps", 0)) for r in rows), default=0)


# -- Table III ------------------------------------------------------------------------------------------
def table_iii(task: "str | Task", policy: Any, *, episodes: int = 10, seed: int = 10_000) -> dict[str, Any]:
    """Table III's metrics of ``policy`` on ``task``: ``episodes`` deterministic episodes from the seeds
    ``seed, seed + 1, ...`` (the training evaluation's), each until it ends.

    * ``survival_steps``: mean episode length in control steps (capped by the horizon, 1,000 for Walk);
    * ``tracking_rmse``: mean over episodes of the joint-angle tracking RMSE against the task's
      reference (rad): ``sqrt(mean_t e_t²)`` with ``e_t`` the RMS of the ``delta_q`` observation block
      (``None`` for a task without a reference);
    * ``mean_activation``: mean muscle activation over steps and muscles, averaged over episodes.
    """
    from mskbench.envs.cpu_env import MSKEnv
    from mskbench.tasks import Task as TaskClass

    env = MSKEnv(copy.deepcopy(task) if isinstance(task, TaskClass) else task)
    try:
        return _table_iii(env, policy, episodes, seed)
    finally:
        env.close()


def _table_iii(env: "MSKEnv", policy: Any, episodes: int, seed: int) -> dict[str, Any]:
    from mskbench.envs.cpu_env import PHYSICS_UNSTABLE
    from mskbench.eval.episodes import Step, play_episode
    from mskbench.metrics import tracking_rmse

    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    dq_block = env.obs_layout.get("task/delta_q")
    rows = []
    for i in range(episodes):
        errors, acts = [], []

        def record(env: "MSKEnv", step: Step | None) -> None:
            if step is not None and step.info["termination"] != PHYSICS_UNSTABLE:
                acts.append(float(np.mean(step.info["activation"])))
                if dq_block is not None:
                    errors.append(float(np.sqrt(np.mean(np.square(step.obs[dq_block], dtype=np.float64)))))

        info = play_episode(env, policy, seed + i, record).info
        rows.append({"seed": seed + i, "steps": int(info["step"]), "termination": info["termination"],
                     "tracking_rmse": tracking_rmse(errors) if errors else None,
                     "mean_activation": float(np.mean(acts)) if acts else None})
    tracked = [r["tracking_rmse"] for r in rows if r["tracking_rmse"] is not None]
    activations = [r["mean_activation"] for r in rows if r["mean_activation"] is not None]
    return {"task": env.task.name, "episodes": episodes, "seeds": [seed, seed + episodes - 1],
            "survival_steps": float(np.mean([r["steps"] for r in rows])),
            "tracking_rmse": float(np.mean(tracked)) if tracked else None,
            "mean_activation": float(np.mean(activations)) if activations else None,
            "per_episode": rows}


def evaluate_run(run: "Run", tuner: AgenticTuner | None = None, *, episodes: int = 10,
                 task: "str | Task | None" = None) -> dict[str, Any]:
    """Table III of a finished run's checkpoint (``run.best_path``; on ``task``, default the run's task
    with its recorded options) and, with ``tuner``, its update summary; written to
    ``agentic_summary.json`` in the run directory."""
    from mskbench.envs.cpu_env import MSKEnv
    from mskbench.eval.protocol import load_policy
    from mskbench.tasks import Task as TaskClass
    from mskbench.tasks import make_task
    from mskbench.training import EVAL_SEED

    summary: dict[str, Any] = dict(tuner.summary()) if tuner is not None else {}
    if run.best_path is None:
        summary["table_iii"] = {"absent": "the run wrote no checkpoint (no run directory)"}
    else:
        if task is None:
            task = make_task(run.task, **run.settings.get("task_options", {}))
        env = MSKEnv(copy.deepcopy(task) if isinstance(task, TaskClass) else task)
        try:
            policy = load_policy(str(run.best_path), env, 0)
            summary["table_iii"] = {"checkpoint": str(run.best_path), **_table_iii(env, policy, episodes, EVAL_SEED)}
        finally:
            env.close()
    if run.out_dir is not None:
        tmp = run.out_dir / (SUMMARY_FILE + ".tmp")
        tmp.write_text(json.dumps(summary, indent=2, allow_nan=False, default=float))
        os.replace(tmp, run.out_dir / SUMMARY_FILE)
    return summary


@dataclass
class AgenticRun:
    """A training run with agentic reward tuning: the :class:`~mskbench.training.Run` and the summary
    (update counts, weights, Table III)."""

    run: "Run"
    summary: dict[str, Any]


def train_agentic(task: "str | Task", reasoner: "Reasoner | str" = "rule", *,
                  every_steps: int = DEFAULT_EVERY_STEPS, l1_norm: float | None = L1_NORM,
                  relative_limit: float = RELATIVE_LIMIT, timeout_s: float = DEFAULT_TIMEOUT_S,
                  table_iii_episodes: int | None = None, **train_kwargs: Any) -> AgenticRun:
    """:func:`mskbench.training.train` with agentic reward tuning, then Table III of its checkpoint.

    ``train_kwargs`` go to ``train`` (``algo`` — the paper uses ``"deprl"`` —,
    ``out``, ``steps``, ``seed``, hyper-parameters, ...); the backend must be
    ``cpu``. ``table_iii_episodes`` defaults to the run's ``eval_episodes``.
    """
    from mskbench.training import train

    tuner = AgenticTuner(reasoner, every_steps=every_steps, l1_norm=l1_norm, relative_limit=relative_limit,
                         timeout_s=timeout_s)
    run = train(task, env_wrapper=tuner, **train_kwargs)
    episodes = table_iii_episodes or int(run.settings.get("eval_episodes", 10))
    return AgenticRun(run, evaluate_run(run, tuner, episodes=episodes, task=task))

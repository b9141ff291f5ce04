"""DAgger's worlds for :mod:`mskbench.agents.bc`: CPU worlds, each with a teacher that labels every state
it is in, stepped by the student or the teacher; :class:`WorldPool` splits them over worker processes."""

from __future__ import annotations

import copy
import os
from typing import TYPE_CHECKING, Any

import numpy as np

from mskbench.agents.bc.student import student_action

if TYPE_CHECKING:
    from mskbench.sim.processes import Workers


class DaggerWorlds:
    """Worlds, each with a teacher that labels every state it is in.

    ``envs``: Gymnasium-style environments (``reset(seed=)``, ``step``; the step's ``info`` holds
    ``step``, ``success`` and ``termination`` as :class:`~mskbench.envs.MSKEnv`'s does); ``teachers``:
    one policy per world (``reset()``, ``act(obs)``; it may read its world's simulator). World ``i`` is
    first reset with ``seeds[i]``; later resets continue its stream; ``horizon``: a world also restarts
    after this many steps of its episode (not counted among the finished episodes). :meth:`from_task`
    builds CPU worlds of a task with built-in teachers.
    """

    def __init__(self, envs: list[Any], teachers: list[Any], seeds: list[int], rng_seed: int,
                 horizon: int | None = None):
        if not len(envs) == len(teachers) == len(seeds):
            raise ValueError("one teacher and one seed per world")
        self.envs, self.teachers, self.horizon = envs, teachers, horizon
        self.obs = [env.reset(seed=int(s))[0] for env, s in zip(self.envs, seeds)]
        for t in self.teachers:
            t.reset()
        self.returns = np.zeros(len(seeds))
        self.rng = np.random.default_rng(rng_seed)

    @classmethod
    def from_task(cls, task: Any, seeds: list[int], teacher: str, rng_seed: int,
                  horizon: int | None = None) -> "DaggerWorlds":
        """CPU worlds of ``task`` (each its own copy), each with the built-in controller ``teacher``."""
        from mskbench.control.registry import make_controller
        from mskbench.envs.cpu_env import MSKEnv

        envs = [MSKEnv(copy.deepcopy(task)) for _ in seeds]
        return cls(envs, [make_controller(teacher, env) for env in envs], seeds, rng_seed, horizon)

    def collect(self, student: dict | None, beta: float, steps: int, gate: float | None = None) -> dict[str, Any]:
        """``steps`` steps of every world; ``student``: ``{"params", "mean", "std", "clip"}`` (and ``space``,
        an :class:`ActivationSpace`, or None) or None (the teacher acts). ``gate``: the teacher also acts
        where the student's action differs from its label by more than this (mean squared difference over
        the action's entries, or over the activations they reach where ``space`` is given). Returns the
        observations, labels, rewards, who acted and the finished episodes."""
        n = len(self.envs)
        obs_out = np.zeros((steps, n, self.obs[0].size), np.float32)
        labels: np.ndarray | None = None
        rewards = np.zeros((steps, n))
        teacher_acted = np.zeros((steps, n), bool)
        gated = np.zeros((steps, n), bool)
        finished: list[dict[str, Any]] = []
        # Not eval.episodes.play_episode: the worlds step in lockstep, their episodes running on across calls
        # (iterations), and each step's actor (teacher or student) is chosen per world and step.
        for t in range(steps):
            for i, env in enumerate(self.envs):
                obs = self.obs[i]
                label = np.asarray(self.teachers[i].act(obs), np.float32)
                if labels is None:
                    labels = np.zeros((steps, n, label.size), np.float32)
                use_teacher = student is None or self.rng.random() < beta
                if use_teacher or student is None:
                    action = label
                else:
                    x = (np.asarray(obs, np.float64) - student["mean"]) / student["std"]
                    x = np.clip(x, -student["clip"], student["clip"]).astype(np.float32)
                    action = student_action(student["params"], x)
                    space = student.get("space")
                    dist = space.distance(obs, action, label) if space is not None else \
                        float(np.mean((action - label) ** 2))
                    if gate is not None and dist > gate:
                        action, use_teacher = label, True
                        gated[t, i] = True
                obs_out[t, i], labels[t, i], teacher_acted[t, i] = obs, label, use_teacher
                nxt, r, term, trunc, info = env.step(action)
                rewards[t, i] = r
                self.returns[i] += r
                cut = self.horizon is not None and int(info["step"]) >= self.horizon
                if term or trunc or cut:
                    if term or trunc:
                        finished.append({"return": float(self.returns[i]), "length": int(info["step"]),
                                         "success": bool(info["success"]), "termination": info["termination"]})
                    self.returns[i] = 0.0
                    nxt = env.reset()[0]
                    self.teachers[i].reset()
                self.obs[i] = nxt
        assert labels is not None
        return {"obs": obs_out.reshape(steps * n, -1), "labels": labels.reshape(steps * n, -1),
                "rewards": rewards, "teacher_acted": teacher_acted, "gated": gated,
                "finished": finished}

    def close(self) -> None:
        for env in self.envs:
            env.close()


class WorldPool:
    """The worlds split over ``workers`` processes of :class:`~mskbench.sim.processes.Workers` (0: one per
    CPU core; with one, they run in this process). ``collect`` gathers every group's steps, world order
    kept."""

    def __init__(self, task: Any, num_envs: int, seed: int, teacher: str, workers: int,
                 horizon: int | None = None):
        workers = max(1, min(num_envs, workers or os.cpu_count() or 1))
        groups = [[seed + int(i) for i in g] for g in np.array_split(np.arange(num_envs), workers)]
        self.workers = workers
        self.local: DaggerWorlds | None = None
        self.group: Workers | None = None
        if workers == 1:
            self.local = DaggerWorlds.from_task(task, groups[0], teacher, seed, horizon)
        else:
            from mskbench.sim.processes import Workers  # here: importing mskbench.sim loads MuJoCo

            self.group = Workers(DaggerWorlds.from_task,
                                 [(task, g, teacher, seed + 7919 * w, horizon) for w, g in enumerate(groups)])

    def collect(self, student: dict | None, beta: float, steps: int, gate: float | None = None) -> dict[str, Any]:
        if self.local is not None:
            return self.local.collect(student, beta, steps, gate)
        assert self.group is not None
        parts = self.group.call_all("collect", student, beta, steps, gate)
        return {"obs": np.concatenate([p["obs"].reshape(steps, -1, p["obs"].shape[-1]) for p in parts], 1)
                .reshape(-1, parts[0]["obs"].shape[-1]),
                "labels": np.concatenate([p["labels"].reshape(steps, -1, p["labels"].shape[-1]) for p in parts], 1)
                .reshape(-1, parts[0]["labels"].shape[-1]),
                "rewards": np.concatenate([p["rewards"] for p in parts], 1),
                "teacher_acted": np.concatenate([p["teacher_acted"] for p in parts], 1),
                "gated": np.concatenate([p["gated"] for p in parts], 1),
                "finished": [f for p in parts for f in p["finished"]]}

    def close(self) -> None:
        if self.local is not None:
            self.local.close()
        if self.group is not None:
            self.group.close()

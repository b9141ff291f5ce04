"""A run's periodic evaluation, which picks its ``best.npz``: the protocol's episodes, once for every paradigm.

:func:`protocol_evaluation` runs deterministic episodes from the protocol's starts of seeds 10000,
10001, ... — on the CPU protocol env (``eval_env="cpu"``, exact) or batched on the training env's
physics, one world per episode (``eval_env="jax"``) — best by the highest mean return (Table XVI).
A paradigm whose policy acts through something between it and the muscles (the residual map,
the latent filter) gives its :class:`EvalWrapper`, so the evaluation judges what the body executes.
A study may evaluate its runs otherwise (:data:`STUDY_EVALUATIONS`: the mouse imitation's replay error).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, NamedTuple

from mskbench.catalog import TASKS
from mskbench.tasks import Task

#: Seeds of the periodic evaluation's episodes: 10000, 10001, ...
EVAL_SEED = 10_000


class Evaluation(NamedTuple):
    """A run's periodic evaluation: ``evaluate(policy) -> dict`` and the entry that picks ``best.npz``."""

    evaluate: Callable[[Any], dict]
    metric: str
    lower_is_better: bool


@dataclass(frozen=True)
class EvalWrapper:
    """How a paradigm's policy acts in :func:`protocol_evaluation` (each part optional).

    ``cpu_env(env)`` wraps the protocol's CPU env, ``cpu_policy(policy, env)`` the policy it runs,
    ``batched_env(env)`` the batched evaluation env (made with ``batched_options``); ``mean_length``:
    the CPU evaluation also reports the mean episode length.
    """

    cpu_env: Callable[[Any], Any] | None = None
    cpu_policy: Callable[[Any, Any], Any] | None = None
    batched_env: Callable[[Any], Any] | None = None
    batched_options: Mapping[str, Any] = field(default_factory=dict)
    mean_length: bool = False


def protocol_evaluation(task: Task, episodes: int, eval_env: str, impl: str,
                        wrapper: EvalWrapper | None = None) -> Evaluation:
    """Deterministic episodes from the protocol's starts of seeds 10000, 10001, ... (through ``wrapper``);
    best by the mean return."""
    seeds = [EVAL_SEED + i for i in range(episodes)]
    wrapper = wrapper or EvalWrapper()
    if eval_env == "jax":  # its own worlds (one per episode; MuJoCo Warp sizes its buffers by the batch)
        from mskbench.agents.jax_eval import BatchedEvaluator
        from mskbench.envs.jax_env import TaskJaxEnv

        batched = TaskJaxEnv(type(task)(task.config), episodes, impl=impl, reset_bank=1, **wrapper.batched_options)
        if wrapper.batched_env is not None:
            batched = wrapper.batched_env(batched)
        return Evaluation(BatchedEvaluator(batched, seeds), "mean_return", False)
    from mskbench.envs.cpu_env import MSKEnv
    from mskbench.eval.episodes import run_episode

    env = MSKEnv(type(task)(task.config))
    if wrapper.cpu_env is not None:
        env = wrapper.cpu_env(env)

    def evaluate(policy) -> dict:
        acting = policy if wrapper.cpu_policy is None else wrapper.cpu_policy(policy, env)
        results = [run_episode(env, acting, s) for s in seeds]
        out = {"mean_return": sum(r.episode_return for r in results) / len(results),
               "success_rate": 100.0 * sum(r.success for r in results) / len(results)}
        if wrapper.mean_length:
            out["mean_length"] = sum(r.length for r in results) / len(results)
        return out

    return Evaluation(evaluate, "mean_return", False)


def imitation_evaluation(task: Task, episodes: int, eval_env: str, impl: str) -> Evaluation:
    """The mouse imitation's replay error on its first four clips; best by the lowest."""
    from mskbench.eval.mouse import evaluate as evaluate_clips
    from mskbench.tasks.mouse_imitation import MouseImitation

    if not isinstance(task, MouseImitation):
        raise TypeError(f"the imitation evaluation needs a MouseImitation task, got {type(task).__name__}")
    clips = task.clip_list[: min(4, len(task.clip_list))]

    def evaluate(policy) -> dict:
        result = evaluate_clips(policy, clips, task)["overall"]
        return {"track_replay_error_mm": result["track_replay_error_mm"], "joint_mae_rad": result["joint_mae_rad"]}

    return Evaluation(evaluate, "track_replay_error_mm", True)


class StudyEvaluation(NamedTuple):
    """A study's own evaluation of its runs, and the iterations between evaluations by default."""

    make: Callable[[Task, int, str, str], Evaluation]
    every_iterations: int


#: Study -> how its runs are evaluated (the others: :func:`protocol_evaluation`).
STUDY_EVALUATIONS: dict[str, StudyEvaluation] = {"mouse": StudyEvaluation(imitation_evaluation, 20)}


def study_evaluation(task: Task) -> StudyEvaluation | None:
    """The evaluation of ``task``'s study, when it has its own."""
    entry = TASKS.get(task.name)
    return STUDY_EVALUATIONS.get(entry.study) if entry is not None else None


def run_evaluation(task: Task, episodes: int, eval_env: str, impl: str,
                   wrapper: EvalWrapper | None = None) -> Evaluation:
    """A run's evaluation: through a paradigm's ``wrapper`` when it has one, else the study's own, else the
    protocol's."""
    study = study_evaluation(task)
    if wrapper is None and study is not None:
        return study.make(task, episodes, eval_env, impl)
    return protocol_evaluation(task, episodes, eval_env, impl, wrapper)

"""Run one episode of a policy in an environment and summarise it."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass

import numpy as np

from mskbench.envs.cpu_env import MSKEnv
from mskbench.policies import Policy


@dataclass
class EpisodeResult:
    """Summary of one episode.

    ``episode_return`` is the undiscounted sum of rewards; ``length`` counts
    control steps; ``success`` is the Table XII criterion at the end;
    ``termination`` names what ended it (a termination condition,
    ``time_limit`` or ``physics_unstable``).
    """

    task: str
    seed: int
    episode_return: float
    length: int
    success: bool
    termination: str
    mean_activation_sq: float

    def as_dict(self) -> dict:
        return asdict(self)


def run_episode(env: MSKEnv, policy: Policy, seed: int,
                on_step: Callable[[MSKEnv], None] | None = None) -> EpisodeResult:
    """Reset ``env`` with ``seed`` and roll ``policy`` out until the episode ends.

    ``on_step(env)`` is called after the reset and after every step (rendering,
    progress bars).
    """
    obs, _ = env.reset(seed=seed)
    if hasattr(policy, "reset"):
        policy.reset()
    if on_step is not None:
        on_step(env)
    total, steps, act_sq = 0.0, 0, 0.0
    while True:
        obs, reward, terminated, truncated, info = env.step(policy.act(obs))
        total += reward
        steps += 1
        act_sq += float(np.mean(np.square(info["activation"], dtype=np.float64)))
        if on_step is not None:
            on_step(env)
        if terminated or truncated:
            break
    return EpisodeResult(
        task=env.task.name,
        seed=seed,
        episode_return=total,
        length=steps,
        success=bool(info["success"]),
        termination=str(info["termination"]),
        mean_activation_sq=act_sq / steps,
    )

"""Shared fixtures.

Building an environment compiles the 416-muscle model (~1.5 s), so one env per
task is built lazily and shared by the whole session. Tests that use a shared
env must ``reset`` it first and must not change its configuration
(perturbation, weights, model parameters); tests that need a different
configuration build their own env with the ``make_env`` factory.
"""

from __future__ import annotations

import numpy as np
import pytest

from mskbench.envs import MSKEnv

TASKS = ("Stand", "Walk", "Reach")


@pytest.fixture(scope="session")
def shared_envs():
    """Lazily built, session-wide envs keyed by task id (default configuration)."""
    cache: dict[str, MSKEnv] = {}

    def get(task: str) -> MSKEnv:
        if task not in cache:
            cache[task] = MSKEnv(task)
        return cache[task]

    yield get
    for env in cache.values():
        env.close()


@pytest.fixture
def stand_env(shared_envs) -> MSKEnv:
    return shared_envs("Stand")


@pytest.fixture
def walk_env(shared_envs) -> MSKEnv:
    return shared_envs("Walk")


@pytest.fixture
def reach_env(shared_envs) -> MSKEnv:
    return shared_envs("Reach")


@pytest.fixture(params=TASKS)
def task_env(request, shared_envs) -> MSKEnv:
    """The shared env of each task in turn."""
    return shared_envs(request.param)


@pytest.fixture
def make_env():
    """Factory for private envs (closed at teardown): ``make_env(task, **kwargs)``."""
    made: list[MSKEnv] = []

    def make(task: str = "Stand", **kwargs) -> MSKEnv:
        env = MSKEnv(task, **kwargs)
        made.append(env)
        return env

    yield make
    for env in made:
        env.close()


def _random_actions(seed: int, n: int, size: int = 416) -> np.ndarray:
    """``n`` actions uniform in [-1, 1] from a seeded NumPy generator, float32."""
    return np.random.default_rng(seed).uniform(-1.0, 1.0, size=(n, size)).astype(np.float32)


@pytest.fixture(scope="session")
def random_actions():
    """``random_actions(seed, n)``: ``n`` seeded uniform actions in [-1, 1], float32 (n, 416)."""
    return _random_actions

"""Shared fixtures.

Building an environment compiles the 416-muscle model (~1.5 s), so one env per
task is built lazily and shared by the whole session. Tests that use a shared
env must ``reset`` it first and must not change its configuration
(perturbation, weights, model parameters); tests that need a different
configuration build their own env with the ``make_env`` factory.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np
import pytest

import mskbench
from mskbench.envs import MSKEnv

#: The 22 suite tasks (MyoFullBody); ``mskbench.tasks.REGISTRY`` also holds the mouse imitation.
TASKS = mskbench.TASK_IDS


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
    """The shared env of each suite task in turn."""
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


@pytest.fixture(scope="session")
def short_task():
    """``short_task(task, horizon)``: a fresh task instance with a shorter episode horizon."""
    from mskbench.tasks import make_task

    def make(task: str, horizon: int):
        t = make_task(task)
        t.horizon = horizon
        return t

    return make


@pytest.fixture(scope="session")
def forelimb_worlds():
    """Three forelimb worlds for backend parity: two moving ones (world 1 with 0.6× muscle gains)
    and one whose velocity is beyond mjMAXVAL (MuJoCo C would reset it). ``roll(physics, gains)``
    initialises them, takes 5 steps at excitation 0.7 and returns the data and the first step's
    ``unstable`` flags."""
    from types import SimpleNamespace

    jax = pytest.importorskip("jax")
    jnp = jax.numpy
    from mskbench.body.mouse_forelimb import MouseHandles, build_mouse_model

    model = build_mouse_model()
    mus = MouseHandles.from_model(model).muscle_ids
    n = 3
    qpos = np.tile(model.qpos0, (n, 1)) + np.array([0.0, 0.1, -0.1])[:, None]
    qvel = np.zeros((n, model.nv))
    qvel[2] = 1e12
    gain = jnp.asarray(np.array([[1.0], [0.6], [1.0]]) * np.ones((n, mus.size)), jnp.float32)
    ctrl = jnp.full((n, model.nu), 0.7, jnp.float32)

    def roll(p, g):
        init, step = jax.jit(jax.vmap(p.init_one)), jax.jit(jax.vmap(p.step_one))
        d = init(jax.tree_util.tree_map(jnp.asarray, p.prepare_initial(qpos, qvel)), g)
        flags = []
        for _ in range(5):
            d, health = step(d, ctrl, g)
            flags.append(np.asarray(health["unstable"]))
        return d, flags[0]

    return SimpleNamespace(model=model, muscle_ids=mus, gain=gain, roll=roll)


@pytest.fixture(scope="session")
def benchmark_script():
    """``benchmark_script(name)``: the script ``benchmarks/NAME.py``, or the study ``benchmarks/studies/NAME.py``,
    loaded as a module (the benchmarks are not a package), so a test calls the functions its command runs."""

    def load(name: str):
        root = Path(__file__).resolve().parents[1] / "benchmarks"
        path = root / f"{name}.py" if (root / f"{name}.py").is_file() else root / "studies" / f"{name}.py"
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        return module

    return load

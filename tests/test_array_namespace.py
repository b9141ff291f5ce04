"""Task logic is written once: the same StateView and task functions evaluated
with ``jax.numpy`` on the same physics state give the NumPy results, and trace
under ``jax.jit``. This is the contract the batched JAX backend relies on.
"""

from __future__ import annotations

import pytest
from contract import check_numpy_jax_parity, check_traces_under_jit, moving_state

from mskbench.tasks import REGISTRY

jax = pytest.importorskip("jax", reason="JAX not installed (pip install -e '.[test]')")


@pytest.fixture(autouse=True, scope="module")
def _float64():
    """Compare at double precision, without leaking the setting into other test modules.

    JAX keeps the float32 conversions of NumPy constants it made earlier in the
    process (a task's constant arrays) and reuses them under x64; clearing its
    caches on the way in and out keeps either precision from leaking into the other.
    """
    jax.clear_caches()
    with jax.enable_x64(True):
        yield
    jax.clear_caches()


@pytest.mark.parametrize("task", list(REGISTRY))
def test_task_functions_match_between_numpy_and_jax(shared_envs, task):
    env = shared_envs(task)
    moving_state(env)
    check_numpy_jax_parity(env)


@pytest.mark.parametrize("task", list(REGISTRY))
def test_task_functions_trace_under_jit(shared_envs, task):
    env = shared_envs(task)
    moving_state(env, seed=1, steps=1)
    check_traces_under_jit(env)

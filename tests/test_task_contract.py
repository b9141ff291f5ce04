"""Every registered task keeps the task contract (see ``tests/contract.py``)."""

from __future__ import annotations

import pytest
from contract import check_contract, check_device_resets, check_placement_ignores_root_xy, check_zero_action_rollout

from mskbench.tasks import REGISTRY

#: Tasks whose every draw needs MuJoCo C (joint noise or a drawn phase, then ground placement) or that
#: draw a data-dependent number of values (WalkTurn's waypoint redraws): their starts come from the host.
HOST_STARTS = {"Powerlift", "SingleLegStand", "Sit", "Walk", "Crawl", "Run", "Jump", "WalkTurn", "Sidestep", "Stairs"}
#: Device starts that move the root of a start placed on the flat floor once.
ROOT_SHIFT_STARTS = ("Hurdle", "WalkAndSit")


@pytest.mark.parametrize("task", list(REGISTRY))
def test_task_contract(shared_envs, task):
    check_contract(shared_envs(task))


@pytest.mark.parametrize("task", list(REGISTRY))
def test_zero_action_rollout_stays_finite(shared_envs, task):
    check_zero_action_rollout(shared_envs(task))


@pytest.mark.parametrize("task", list(REGISTRY))
def test_device_resets(shared_envs, task):
    pytest.importorskip("jax", reason="JAX not installed (pip install -e '.[test]')")
    env = shared_envs(task)
    assert env.task.device_resets == (task not in HOST_STARTS)
    if task in HOST_STARTS:
        with pytest.raises(NotImplementedError):
            env.task.start(env._ctx)
        return
    check_device_resets(env)


@pytest.mark.parametrize("task", ROOT_SHIFT_STARTS)
def test_root_shift_is_ground_placement(shared_envs, task):
    check_placement_ignores_root_xy(shared_envs(task))

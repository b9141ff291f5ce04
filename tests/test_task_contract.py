"""Every registered task keeps the task contract (see ``tests/contract.py``)."""

from __future__ import annotations

import pytest
from contract import check_contract, check_zero_action_rollout

import mskbench


@pytest.mark.parametrize("task", mskbench.TASK_IDS)
def test_task_contract(shared_envs, task):
    check_contract(shared_envs(task))


@pytest.mark.parametrize("task", mskbench.TASK_IDS)
def test_zero_action_rollout_stays_finite(shared_envs, task):
    check_zero_action_rollout(shared_envs(task))

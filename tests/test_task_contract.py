"""Every registered task keeps the task contract (see ``tests/contract.py``)."""

from __future__ import annotations

import pytest
from contract import check_contract

import mskbench


@pytest.mark.parametrize("task", mskbench.TASK_IDS)
def test_task_contract(shared_envs, task):
    check_contract(shared_envs(task))

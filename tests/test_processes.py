"""The package's one pool of worker processes (mskbench.sim.processes): what evaluation's local workers and
DAgger's worlds rely on."""

from __future__ import annotations

import os

import numpy as np
import pytest

from mskbench.sim.processes import ONE_THREAD, Workers


class Counter:
    """A worker's object: state kept between calls, its process's facts, an error on request."""

    def __init__(self, start: int):
        if start < 0:
            raise ValueError(f"start must be >= 0, got {start}")
        self.n = start

    def add(self, k: int) -> int:
        self.n += k
        return self.n

    def facts(self) -> dict:
        return {"pid": os.getpid(), "ppid": os.getppid(), "env": {k: os.environ.get(k) for k in ONE_THREAD}}

    def fail(self) -> None:
        raise KeyError("asked to fail")


def test_each_worker_keeps_its_own_object_and_answers_in_worker_order():
    before = {k: os.environ.get(k) for k in ONE_THREAD}
    with Workers(Counter, [(0,), (100,), (1000,)]) as pool:
        assert len(pool) == 3
        assert pool.call_all("add", 1) == [1, 101, 1001]
        assert pool.call_all("add", 2) == [3, 103, 1003]  # the state stayed in each worker
        pool.send(1, "add", 5)
        pool.send(1, "add", 5)  # calls queue up per worker, answered in order
        assert pool.answered([0, 1, 2], timeout=30) == [1]
        assert [pool.recv(1), pool.recv(1)] == [108, 113]
        facts = pool.call_all("facts")
    assert len({f["pid"] for f in facts} | {os.getpid()}) == 4
    assert all(f["ppid"] == os.getpid() for f in facts)
    assert all(f["env"] == ONE_THREAD for f in facts)  # one BLAS thread a worker
    assert {k: os.environ.get(k) for k in ONE_THREAD} == before  # this process's own settings kept


def test_an_error_in_a_worker_reaches_the_caller_as_itself():
    with Workers(Counter, [(0,)]) as pool:
        with pytest.raises(KeyError, match="asked to fail"):
            pool.call_all("fail")
        assert pool.call_all("add", 1) == [1]  # the worker went on
    with pytest.raises(ValueError, match="start must be >= 0, got -1"):
        Workers(Counter, [(0,), (-1,)])


def test_closed_workers_are_gone():
    pool = Workers(Counter, [(0,), (0,)])
    procs = list(pool.procs)
    pool.close()
    assert not any(p.is_alive() for p in procs)
    assert len(pool) == 0


@pytest.mark.slow
def test_dagger_worlds_on_two_workers_collect_what_one_process_does():
    from mskbench.agents.bc.worlds import WorldPool
    from mskbench.tasks import make_task

    parts = []
    for workers in (1, 2):
        pool = WorldPool(make_task("Stand"), num_envs=2, seed=3, teacher="hold", workers=workers)
        try:
            parts.append(pool.collect(None, 1.0, 4))
        finally:
            pool.close()
    one, two = parts
    for key in ("obs", "labels", "rewards", "teacher_acted", "gated"):
        np.testing.assert_array_equal(one[key], two[key], err_msg=key)

"""The training loop: any registered algorithm's learner, iterated, with what every run does around it.

Per iteration the learner (:class:`~mskbench.agents.base.Learner`) collects and updates and returns its
log row; the loop then marks the row stopped when the time limit has passed, evaluates the policy every
``eval_every`` iterations and after the last one, writes the checkpoint and appends the row to the run
directory's log (:class:`~mskbench.agents.run_dir.RunDir`), and reports it. The algorithm's files hold
only the algorithm.
"""

from __future__ import annotations

import dataclasses
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mskbench.agents import Algorithm, algorithm
from mskbench.agents.base import Learner
from mskbench.agents.run_dir import RunDir


@dataclass
class Trained:
    """What :func:`train_loop` returns: the learner (at its last iteration) and the iterations' log rows."""

    learner: Learner
    history: list[dict] = field(default_factory=list)

    @property
    def steps(self) -> int:
        return self.learner.steps

    @property
    def iteration(self) -> int:
        return self.learner.iteration


def train_loop(algo: str | Algorithm, env: Any, cfg: Any, *, out_dir: str | Path | None = None, resume: bool = False,
               eval_fn: Callable[[Any], dict] | None = None, eval_every: int = 10,
               on_iteration: Callable[[dict], None] | None = None, time_limit_s: float | None = None,
               write: bool = True) -> Trained:
    """Train ``algo`` (a name of :data:`mskbench.agents.ALGORITHMS` or an :class:`~mskbench.agents.Algorithm`)
    on ``env`` with the hyper-parameters ``cfg`` until ``cfg.total_steps``; a checkpoint in ``out_dir``
    after every iteration.

    ``resume=True`` continues from ``out_dir/checkpoint.npz`` (same config, same observation layout).
    ``eval_fn(policy)`` (the deterministic policy, ``obs -> action``) is called every ``eval_every``
    iterations and after the last one; its dict goes into the row (``"eval"``) and
    ``out_dir/eval_log.jsonl``. ``time_limit_s``: also stop after the first iteration that ends that many
    seconds after this call began (compilation included); that row has ``"stopped": "time_limit"``, and
    ``resume`` continues from it.

    ``write=False``: nothing is written to ``out_dir`` (``resume`` still reads its checkpoint) — the processes
    of a run over several hosts other than process 0. Over several processes the time limit is process 0's
    clock, so every process stops after the same iteration.
    """
    if time_limit_s is not None and not time_limit_s > 0:
        raise ValueError(f"time_limit_s must be > 0 seconds, got {time_limit_s}")
    started = time.perf_counter()
    alg = algo if isinstance(algo, Algorithm) else algorithm(algo)
    run = RunDir(out_dir) if out_dir is not None else None
    ckpt = run.checkpoint if run is not None else None
    if resume and (ckpt is None or not ckpt.exists()):
        raise FileNotFoundError(f"nothing to resume: {ckpt} does not exist")
    learner = alg.learner(env, cfg, ckpt if resume else None)
    if not write:
        run = None
    if run is not None:
        run.write_config(dataclasses.asdict(cfg))
    deadline = None if time_limit_s is None else started + time_limit_s
    trained = Trained(learner)
    try:
        while learner.steps < cfg.total_steps:
            row = learner.iterate(deadline)
            out_of_time = deadline is not None and _agreed(time.perf_counter() >= deadline)
            if out_of_time and learner.steps < cfg.total_steps:
                row["stopped"] = "time_limit"
            last = learner.steps >= cfg.total_steps or out_of_time
            if eval_fn is not None and (learner.iteration % eval_every == 0 or last):
                row["eval"] = eval_fn(learner.policy())
            trained.history.append(row)
            if run is not None:
                learner.save(run.checkpoint)
                run.append_log(row)
            if on_iteration is not None:
                on_iteration(row)
            if out_of_time:
                break
    finally:
        close = getattr(learner, "close", None)  # a learner that holds processes (BC's worlds)
        if close is not None:
            close()
    return trained


def _agreed(flag: bool) -> bool:
    """``flag`` as process 0 has it, when the run spans several JAX processes (else ``flag``)."""
    jax = sys.modules.get("jax")
    if jax is None or jax.process_count() == 1:
        return flag
    from jax.experimental import multihost_utils

    return bool(multihost_utils.broadcast_one_to_all(np.asarray(flag)))

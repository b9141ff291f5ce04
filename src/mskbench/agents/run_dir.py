"""A training run's directory: its one format, read and written here (:class:`RunDir`).

==========================  ============================================================================
``run.json``                the run's resolved settings (:func:`mskbench.training.train`)
``config.json``             the algorithm's hyper-parameters
``checkpoint.npz``          the latest checkpoint, written atomically after every iteration (the SAC
                            family keeps its replay rows beside it, in ``replay/``)
``eval_log.jsonl``          one row per iteration, with the evaluation when there was one
``best.npz``, ``best.json`` the checkpoint with the best evaluation and its score (under the last-checkpoint
                            rule the best is kept as ``best_return.npz``)
==========================  ============================================================================

An evaluation of a run uses its ``best.npz``, else its ``checkpoint.npz`` (:func:`checkpoint_path`,
:meth:`RunDir.evaluated_checkpoint`). The format sits with the checkpoints, below the evaluation
protocol, because ``mskbench eval --policy RUN`` reads runs; training writes them through it.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

RUN_FILE = "run.json"
CONFIG_FILE = "config.json"
LOG_FILE = "eval_log.jsonl"
BEST_FILE = "best.json"
CHECKPOINT = "checkpoint.npz"
BEST_CHECKPOINT = "best.npz"
#: Where the best checkpoint is kept under the last-checkpoint rule (DepRL).
BEST_RETURN_CHECKPOINT = "best_return.npz"


class RunDir:
    """The files of the run in ``path`` (which need not exist yet)."""

    def __init__(self, path: str | Path):
        self.path = Path(path)

    @property
    def checkpoint(self) -> Path:
        """The latest checkpoint (``checkpoint.npz``)."""
        return self.path / CHECKPOINT

    def is_run(self) -> bool:
        """Whether ``path`` holds a run (its ``run.json``)."""
        return (self.path / RUN_FILE).is_file()

    # -- reading -----------------------------------------------------------------------------------------
    def settings(self) -> dict[str, Any]:
        """``run.json``."""
        return json.loads((self.path / RUN_FILE).read_text())

    def history(self) -> list[dict[str, Any]]:
        """The rows of ``eval_log.jsonl`` (none when it does not exist)."""
        log = self.path / LOG_FILE
        return [json.loads(line) for line in log.read_text().splitlines() if line.strip()] if log.is_file() else []

    def best(self) -> dict[str, Any]:
        """``best.json`` (empty when no evaluation was kept yet)."""
        path = self.path / BEST_FILE
        return json.loads(path.read_text()) if path.exists() else {}

    def resumed_steps(self) -> int:
        """Environment steps the run has made: the last log row's ``steps`` (the checkpoint's); 0 without one."""
        rows = self.history()
        return int(rows[-1].get("steps", 0)) if rows else 0

    def evaluated_checkpoint(self) -> Path | None:
        """The checkpoint an evaluation of this run uses: ``best.npz``, else ``checkpoint.npz``, else None."""
        for name in (BEST_CHECKPOINT, CHECKPOINT):
            if (self.path / name).is_file():
                return self.path / name
        return None

    # -- writing -----------------------------------------------------------------------------------------
    def write_settings(self, settings: Mapping[str, Any]) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        (self.path / RUN_FILE).write_text(json.dumps(settings, indent=2))

    def write_config(self, config: Mapping[str, Any]) -> None:
        self.path.mkdir(parents=True, exist_ok=True)
        (self.path / CONFIG_FILE).write_text(json.dumps(config, indent=2))

    def append_log(self, row: Mapping[str, Any]) -> None:
        with open(self.path / LOG_FILE, "a") as f:
            f.write(json.dumps(row) + "\n")


def checkpoint_path(spec: str) -> Path | None:
    """The checkpoint file ``spec`` names (a run directory means its ``best.npz``, else its
    ``checkpoint.npz``), or None when it names none. A spec that looks like a path (holds a
    path separator or ends in ``.npz``) must exist."""
    path = Path(spec)
    if path.is_file() and path.suffix == ".npz":
        return path
    if path.is_dir():
        found = RunDir(path).evaluated_checkpoint()
        if found is None:
            raise ValueError(f"policy directory {spec!r} holds no {BEST_CHECKPOINT} or {CHECKPOINT}")
        return found
    if path.suffix == ".npz" or any(sep and sep in spec for sep in (os.sep, os.altsep)):
        problem = "is neither a .npz file nor a run directory" if path.exists() else "does not exist"
        raise ValueError(f"policy checkpoint {spec!r} {problem}")
    return None


class BestCheckpoint:
    """A run's ``best.npz``: a copy of its ``checkpoint.npz`` whenever an evaluation beats the best
    so far, with the score in ``best.json`` (read back on resume).

    Call :meth:`offer` right after the trainer has written the checkpoint it evaluated.
    """

    def __init__(self, run_dir: str | Path, metric: str, *, lower_is_better: bool = False, resume: bool = False,
                 copy_to: str = BEST_CHECKPOINT):
        self.run_dir, self.metric, self.lower, self.copy_to = Path(run_dir), metric, lower_is_better, copy_to
        self.record = self.run_dir / BEST_FILE
        self.best = json.loads(self.record.read_text())[metric] if resume and self.record.exists() else None

    def offer(self, value: float, **info) -> bool:
        """Keep the current checkpoint as best if ``value`` beats the best so far."""
        if self.best is not None and not (value < self.best if self.lower else value > self.best):
            return False
        self.best = value
        shutil.copyfile(self.run_dir / CHECKPOINT, self.run_dir / self.copy_to)
        self.record.write_text(json.dumps({self.metric: value, **info}))
        return True


__all__ = ["BEST_CHECKPOINT", "BEST_FILE", "BEST_RETURN_CHECKPOINT", "CHECKPOINT", "CONFIG_FILE", "LOG_FILE",
           "RUN_FILE", "BestCheckpoint", "RunDir", "checkpoint_path"]

"""Policy checkpoints, whatever trained them: finding, reading, exporting, keeping the best.

A checkpoint is a ``.npz`` file. Its ``format`` entry names the trainer
(absent: ``"mskbench-ppo"``, our PPO in :mod:`mskbench.agents.ppo`;
``"mskbench-sac"``: the SAC family of :mod:`mskbench.agents.sac`). Every format reduces to a
:class:`~mskbench.agents.base.PolicyCheckpoint` (normalisation, parameters,
a deterministic network), which is all the evaluation protocol needs.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Mapping
from pathlib import Path

import numpy as np

from mskbench.agents.base import PolicyCheckpoint

FORMATS = ("mskbench-ppo", "mskbench-sac")


def checkpoint_path(spec: str):
    """The checkpoint file ``spec`` names (a run directory means its ``best.npz``, else its
    ``checkpoint.npz``), or None when it names none. A spec that looks like a path (holds a
    path separator or ends in ``.npz``) must exist."""
    path = Path(spec)
    if path.is_file() and path.suffix == ".npz":
        return path
    if path.is_dir():
        for name in ("best.npz", "checkpoint.npz"):
            if (path / name).is_file():
                return path / name
        raise ValueError(f"policy directory {spec!r} holds no best.npz or checkpoint.npz")
    if path.suffix == ".npz" or any(sep and sep in spec for sep in (os.sep, os.altsep)):
        problem = "is neither a .npz file nor a run directory" if path.exists() else "does not exist"
        raise ValueError(f"policy checkpoint {spec!r} {problem}")
    return None


class BestCheckpoint:
    """A run's ``best.npz``: a copy of its ``checkpoint.npz`` whenever an evaluation beats the best
    so far, with the score in ``record`` (JSON, read back on resume).

    Call :meth:`offer` right after the trainer has written the checkpoint it evaluated.
    """

    def __init__(self, run_dir: Path, record: str, metric: str, *, lower_is_better: bool = False,
                 resume: bool = False, copy_to: str = "best.npz"):
        self.run_dir, self.metric, self.lower, self.copy_to = Path(run_dir), metric, lower_is_better, copy_to
        self.record = self.run_dir / record
        self.best = json.loads(self.record.read_text())[metric] if resume and self.record.exists() else None

    def offer(self, value: float, **info) -> bool:
        """Keep the current checkpoint as best if ``value`` beats the best so far."""
        if self.best is not None and not (value < self.best if self.lower else value > self.best):
            return False
        self.best = value
        shutil.copyfile(self.run_dir / "checkpoint.npz", self.run_dir / self.copy_to)
        self.record.write_text(json.dumps({self.metric: value, **info}))
        return True


def checkpoint_format(path: str | Path) -> str:
    with np.load(path, allow_pickle=False) as z:
        fmt = str(z["format"]) if "format" in z.files else "mskbench-ppo"
    if fmt not in FORMATS:
        raise ValueError(f"{path}: unknown checkpoint format {fmt!r}; this mskbench reads {', '.join(FORMATS)}")
    return fmt


def load(path: str | Path, obs_layout: Mapping[str, slice], obs_size: int) -> PolicyCheckpoint:
    """The deterministic policy of the checkpoint at ``path`` for a task with this observation layout."""
    path = Path(path)
    if checkpoint_format(path) == "mskbench-sac":  # a format this version cannot read is an error that says so
        from mskbench.agents.sac import sac_policy_checkpoint

        return sac_policy_checkpoint(path, obs_layout, obs_size)
    from mskbench.agents.ppo import ppo_policy_checkpoint

    return ppo_policy_checkpoint(path, obs_layout, obs_size)


def export_policy(src: str | Path, dst: str | Path) -> Path:
    """Write the policy of checkpoint ``src`` to ``dst`` without what only training needs (for our
    PPO: the critic, the optimiser's moments, the RNG key): a smaller file that evaluates with the
    same actions and cannot be resumed."""
    if checkpoint_format(src) == "mskbench-sac":
        from mskbench.agents.sac import export_policy as export_sac_policy

        return export_sac_policy(src, dst)
    from mskbench.agents.ppo import export_policy as export_ppo_policy

    return export_ppo_policy(src, dst)


def load_policy(path: str | Path, obs_layout: Mapping[str, slice], obs_size: int):
    """A deterministic host policy from a checkpoint of any trainer (for evaluation on any machine)."""
    return load(path, obs_layout, obs_size).host_policy()

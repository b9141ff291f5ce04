"""Policy checkpoints, whatever trained them: finding, reading, exporting.

A checkpoint is a ``.npz`` file. Its ``format`` entry names the trainer's
format (absent: ``"mskbench-ppo"``, our PPO in :mod:`mskbench.agents.ppo`;
``"mskbench-sac"``: the SAC family of :mod:`mskbench.agents.sac`); the
registered :class:`~mskbench.agents.Algorithm` of that format reads it. Every
format reduces to a :class:`~mskbench.agents.base.PolicyCheckpoint`
(normalisation, parameters, a deterministic network), which is all the
evaluation protocol needs. Which file of a run directory is evaluated:
:func:`mskbench.agents.run_dir.checkpoint_path`.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import numpy as np

from mskbench.agents import algorithm_for_format, ppo
from mskbench.agents.base import PolicyCheckpoint
from mskbench.agents.run_dir import checkpoint_path  # noqa: F401 - where the evaluation protocol finds it

__all__ = ["checkpoint_format", "checkpoint_path", "export_policy", "load", "load_policy", "stored_layout"]


def checkpoint_format(path: str | Path) -> str:
    """The format of the checkpoint at ``path``; one no registered algorithm reads is a ``ValueError``."""
    with np.load(path, allow_pickle=False) as z:
        fmt = str(z["format"]) if "format" in z.files else ppo.FORMAT
    try:
        algorithm_for_format(fmt)
    except ValueError as exc:
        raise ValueError(f"{path}: {exc}") from None
    return fmt


def stored_layout(path: str | Path) -> dict[str, slice] | None:
    """The observation layout a checkpoint recorded (every trainer's ``obs_layout`` entry), or None when it
    records none."""
    import json

    with np.load(path, allow_pickle=False) as z:
        if "obs_layout" not in z.files:
            return None
        return {k: slice(a, b) for k, (a, b) in json.loads(str(z["obs_layout"])).items()}


def load(path: str | Path, obs_layout: Mapping[str, slice], obs_size: int) -> PolicyCheckpoint:
    """The deterministic policy of the checkpoint at ``path`` for a task with this observation layout."""
    path = Path(path)
    return algorithm_for_format(checkpoint_format(path)).read_policy(path, obs_layout, obs_size)


def export_policy(src: str | Path, dst: str | Path) -> Path:
    """Write the policy of checkpoint ``src`` to ``dst`` without what only training needs (for our
    PPO: the critic, the optimiser's moments, the RNG key): a smaller file that evaluates with the
    same actions and cannot be resumed."""
    return algorithm_for_format(checkpoint_format(src)).export_policy(Path(src), Path(dst))


def load_policy(path: str | Path, obs_layout: Mapping[str, slice], obs_size: int):
    """A deterministic host policy from a checkpoint of any trainer (for evaluation on any machine)."""
    return load(path, obs_layout, obs_size).host_policy()

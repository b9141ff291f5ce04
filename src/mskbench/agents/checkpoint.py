"""Policy checkpoints, whatever trained them, as one deterministic policy.

A checkpoint is a ``.npz`` file. Its ``format`` entry names the trainer
(absent: ``"mskbench-ppo"``, our PPO in :mod:`mskbench.agents.ppo`, the only
one so far). Every format reduces to the same three parts, which is all the
evaluation protocol needs — on the host (:meth:`PolicyCheckpoint.host_policy`) or batched on a
device (:mod:`mskbench.eval.batched`):

* the observation normalisation ``x = (obs − mean) / std`` (clipped to
  ``±clip`` when the trainer clips), in whose space the protocol adds
  observation noise (Eq. 5);
* the network parameters;
* ``deterministic(params, x) -> action`` in ``jax.numpy`` (traceable, batched).
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

FORMATS = ("mskbench-ppo",)


def checkpoint_path(spec: str):
    """The checkpoint file ``spec`` names (a run directory means its ``best.npz``, else its
    ``checkpoint.npz``), or None when it names none."""
    path = Path(spec)
    if path.is_file() and path.suffix == ".npz":
        return path
    if path.is_dir():
        for name in ("best.npz", "checkpoint.npz"):
            if (path / name).is_file():
                return path / name
        raise ValueError(f"policy directory {spec!r} holds no best.npz or checkpoint.npz")
    if path.suffix == ".npz":
        raise ValueError(f"policy checkpoint {spec!r} does not exist")
    return None


class BestCheckpoint:
    """A run's ``best.npz``: a copy of its ``checkpoint.npz`` whenever an evaluation beats the best
    so far, with the score in ``record`` (JSON, read back on resume).

    Call :meth:`offer` right after the trainer has written the checkpoint it evaluated.
    """

    def __init__(self, run_dir: Path, record: str, metric: str, *, lower_is_better: bool = False,
                 resume: bool = False):
        self.run_dir, self.metric, self.lower = Path(run_dir), metric, lower_is_better
        self.record = self.run_dir / record
        self.best = json.loads(self.record.read_text())[metric] if resume and self.record.exists() else None

    def offer(self, value: float, **info) -> bool:
        """Keep the current checkpoint as best if ``value`` beats the best so far."""
        if self.best is not None and not (value < self.best if self.lower else value > self.best):
            return False
        self.best = value
        shutil.copyfile(self.run_dir / "checkpoint.npz", self.run_dir / "best.npz")
        self.record.write_text(json.dumps({self.metric: value, **info}))
        return True


@dataclass
class PolicyCheckpoint:
    path: Path
    format: str
    params: Any
    mean: np.ndarray
    std: np.ndarray
    clip: float | None
    deterministic: Callable

    @property
    def obs_size(self) -> int:
        return int(self.mean.size)

    def normalize(self, obs, xp=np):
        """The trainer's normalisation (NumPy: in float64, as the trainers do; JAX: float32)."""
        from mskbench.agents.ppo import normalize

        if xp is np:
            return normalize(np.asarray(obs, np.float64), self.mean, self.std, self.clip)
        return normalize(obs, xp.asarray(self.mean, xp.float32), xp.asarray(self.std, xp.float32), self.clip, xp)

    def host_policy(self):
        """``act(obs)`` / ``normalize_observation`` / ``act_normalized`` for the CPU protocol."""
        import jax

        fn = jax.jit(self.deterministic)
        ckpt = self

        class CheckpointPolicy:
            def normalize_observation(self, obs):
                return ckpt.normalize(np.asarray(obs, np.float32))

            def act_normalized(self, x):
                return np.asarray(fn(ckpt.params, x))

            def act(self, obs):
                return self.act_normalized(self.normalize_observation(obs))

            def reset(self):
                pass

        return CheckpointPolicy()


def checkpoint_format(path: str | Path) -> str:
    with np.load(path, allow_pickle=False) as z:
        fmt = str(z["format"]) if "format" in z.files else "mskbench-ppo"
    if fmt not in FORMATS:
        raise ValueError(f"{path}: unknown checkpoint format {fmt!r}; this mskbench reads {', '.join(FORMATS)}")
    return fmt


def load(path: str | Path, obs_layout: dict[str, slice], obs_size: int) -> PolicyCheckpoint:
    """The deterministic policy of the checkpoint at ``path`` for a task with this observation layout."""
    path = Path(path)
    checkpoint_format(path)  # a checkpoint this version cannot read is an error that says so
    from mskbench.agents.ppo import ppo_policy_checkpoint

    ckpt = ppo_policy_checkpoint(path, obs_layout, obs_size)
    if ckpt.obs_size != obs_size:
        raise ValueError(f"checkpoint {path} expects observations of size {ckpt.obs_size}, the task has {obs_size}")
    return ckpt


def export_policy(src: str | Path, dst: str | Path) -> Path:
    """Write the policy of checkpoint ``src`` to ``dst`` without what only training needs (for our
    PPO: the critic, the optimiser's moments, the RNG key): a smaller file that evaluates with the
    same actions and cannot be resumed."""
    checkpoint_format(src)
    from mskbench.agents.ppo import export_policy as export_ppo_policy

    return export_ppo_policy(src, dst)

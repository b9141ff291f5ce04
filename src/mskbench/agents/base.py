"""What every trainer's policy reduces to: observation normalisation and a deterministic network.

:class:`PolicyCheckpoint` is a loaded checkpoint of any trainer, as the
evaluation protocol needs it — on the host (:meth:`PolicyCheckpoint.host_policy`)
or batched on a device (:mod:`mskbench.eval.batched`):

* the observation normalisation ``x = (obs − mean) / std`` (clipped to
  ``±clip`` when the trainer clips), in whose space the protocol adds
  observation noise (Eq. 5);
* the network parameters;
* ``deterministic(params, x) -> action`` in ``jax.numpy`` (traceable, batched).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np


def normalize(obs, mean, std, clip: float | None, xp=np):
    """``(obs − mean) / std``, clipped to ``±clip`` (unless None), as float32: every normalisation of
    observations for a policy (training rollouts, evaluations, checkpoints) is this one."""
    x = (obs - mean) / std
    if clip is not None:
        x = xp.clip(x, -clip, clip)
    return x.astype(xp.float32)


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

            def reset(self, seed=None):
                pass

        return CheckpointPolicy()

"""What every trainer provides: a :class:`Learner` to iterate, and a policy that reduces to observation
normalisation and a deterministic network.

:class:`Learner` is what :func:`mskbench.training.loop.train_loop` iterates: one
iteration (a rollout or a stretch of steps, and the updates) per call, the
current deterministic policy, the checkpoint writer.

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

import json
from collections.abc import Callable, Mapping
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np


class Learner(Protocol):
    """An algorithm's training state on one environment (made by :attr:`mskbench.agents.Algorithm.learner`)."""

    @property
    def steps(self) -> int:
        """Environment steps done (a resumed learner starts at its checkpoint's)."""
        ...

    @property
    def iteration(self) -> int:
        """Iterations done."""
        ...

    def iterate(self, deadline: float | None = None) -> dict:
        """One iteration; returns its log row. ``deadline`` (a ``time.perf_counter()`` value) lets a learner
        whose iteration is long stop it early."""
        ...

    def policy(self) -> Any:
        """The current deterministic policy (``act(obs)``, ``normalize_observation``, ``act_normalized``)."""
        ...

    def save(self, path: Path) -> None:
        """Write the learner's checkpoint (atomically) to ``path``."""
        ...


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


# -- checkpoint files, whatever trained them -----------------------------------------------------------
#: Config keys a resumed run may change: how long it goes, on how many devices or worker processes. Any other
#: difference from the run's settings refuses the resume.
RESUME_FREE = ("total_steps", "devices", "workers")


def config_defaults(cfg: Any) -> dict[str, Any]:
    """The defaults of a config dataclass's fields (``cfg``: the class or an instance; None where a field
    has none): what a resume compares a key with when the run's stored config predates it."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(cfg):
        if f.default is not dataclasses.MISSING:
            out[f.name] = f.default
        elif f.default_factory is not dataclasses.MISSING:
            out[f.name] = f.default_factory()
        else:
            out[f.name] = None
    return out


def flatten_tree(tree, prefix: str = "") -> dict[str, np.ndarray]:
    """A tree of dicts, lists and arrays as ``{"a/0/b": array}`` (what an ``.npz`` file holds)."""
    out = {}
    if isinstance(tree, dict):
        for k, v in tree.items():
            out.update(flatten_tree(v, f"{prefix}{k}/"))
    elif isinstance(tree, (list, tuple)):
        for i, v in enumerate(tree):
            out.update(flatten_tree(v, f"{prefix}{i}/"))
    else:
        out[prefix.rstrip("/")] = np.asarray(tree)
    return out


def unflatten_tree(flat: Mapping[str, Any]):
    """The tree of :func:`flatten_tree` back (keys that are all digits become lists)."""
    root: dict = {}
    for path, value in flat.items():
        node = root
        parts = path.split("/")
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value

    def fix(node):
        if isinstance(node, dict):
            if node and all(k.isdigit() for k in node):
                return [fix(node[str(i)]) for i in range(len(node))]
            return {k: fix(v) for k, v in node.items()}
        return node

    return fix(root)


def savez_atomic(path: Path, arrays: dict) -> None:
    """``np.savez`` to a temporary file, then a rename: a kill never leaves a torn file at ``path``."""
    tmp = path.with_name(path.name + ".tmp.npz")
    np.savez(tmp, **arrays)
    tmp.replace(path)


def layout_json(layout: Mapping[str, slice]) -> str:
    """An observation layout as JSON: block name -> [start, stop]."""
    return json.dumps({k: [s.start, s.stop] for k, s in layout.items()})


def check_obs_layout(path, stored: str | None, layout: Mapping[str, slice] | None, obs_size: int | None,
                     trained_size: int) -> None:
    """A clear error when a checkpoint's observations (its recorded ``stored`` layout, ``trained_size``)
    do not match the env's (``layout``, ``obs_size``); a ``None`` is not checked."""
    if stored is not None and layout is not None and json.loads(stored) != json.loads(layout_json(layout)):
        have = {k: b - a for k, (a, b) in json.loads(stored).items()}
        want = {k: s.stop - s.start for k, s in layout.items()}
        raise ValueError(f"{path} was trained on observation blocks (sizes) {have}; this task's are {want}")
    if obs_size is not None and trained_size != obs_size:
        raise ValueError(f"checkpoint {path} expects observations of size {trained_size}, the task has {obs_size}")

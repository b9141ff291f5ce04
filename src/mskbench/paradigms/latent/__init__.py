"""Latent-action RL, hard mode (App. A-G, Eqs. 21-28), in one folder: an expert-trained encoder–decoder
filters the learner's muscle actions into a tube around a state-conditioned prior.

The pieces, each usable on its own:

* :mod:`~mskbench.paradigms.latent.core` — the formulas (Eqs. 22-28), once, for
  NumPy and ``jax.numpy``: :func:`unit_action` (Eq. 23), :func:`tube_clip`
  (Eq. 25), :func:`env_action` (Eq. 26), :func:`hard_mode`, :func:`deviation`
  (Eq. 27), :class:`PenaltySchedule` and :func:`penalized_reward` (Eq. 28),
  :func:`bc_loss` (Eq. 22), :func:`reconstruction_stats` (reconstruction
  error and explained variance).
* :mod:`~mskbench.paradigms.latent.data` — the decoder's conditioning (muscle
  priors P, muscle states S, the moment matrix M) read from MuJoCo, and
  :func:`collect` of (state, action) data from any policy
  (``mskbench latent collect``).
* :mod:`~mskbench.paradigms.latent.model` — the flax encoder–decoder (Eq. 21),
  :func:`fit` by behaviour cloning with held-out statistics
  (``mskbench latent fit``), :class:`LatentModel` (its file, the prior
  ``â`` of Eq. 24, the jittable :meth:`LatentModel.hard_filter`).
* :mod:`~mskbench.paradigms.latent.wrapper` — the map between a learner and the
  env (:class:`LatentActionMap`, :class:`LatentActionWrapper`,
  :class:`LatentFilteredEnv`); :mod:`~mskbench.paradigms.latent.batched` — the same map inside the
  batched JAX env's jitted step.
* :mod:`~mskbench.paradigms.latent.run` — the pieces tied to policy specs, training runs and the
  evaluation protocol: :class:`LatentPrior` (the ``env_wrapper`` of
  ``mskbench train TASK --latent MODEL --tube R``), :class:`LatentActing` (how its checkpoints act
  elsewhere), :func:`collect_expert`, :func:`evaluate_through`.

Command line in :mod:`mskbench.cli.latent` (``mskbench latent collect|fit|eval``).

Importing this package loads no JAX (nor MuJoCo); the model, the wrappers and the run's pieces load
what they need when used.
"""

from __future__ import annotations

from typing import Any

from mskbench.paradigms.latent.core import (DECAY_STEPS, DEFAULT_TUBE, LATENT_SIZES, PENALTY_FLOOR, PENALTY_SCALE,
                                            PenaltySchedule, bc_loss, deviation, env_action, hard_mode,
                                            pca_reconstruction, penalized_reward, reconstruction_stats, tube_clip,
                                            unit_action)

_LAZY = {
    "LatentData": "data", "MuscleFeatures": "data", "collect": "data", "dense_moments": "data",
    "LatentModel": "model", "ModelConfig": "model", "fit": "model",
    "LatentActionMap": "wrapper", "LatentActionWrapper": "wrapper", "LatentFilteredEnv": "wrapper",
    "LatentActing": "run", "LatentPrior": "run", "collect_expert": "run", "evaluate_through": "run",
    "resumed_steps": "run",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"mskbench.paradigms.latent.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'mskbench.paradigms.latent' has no attribute {name!r}")


__all__ = ["DECAY_STEPS", "DEFAULT_TUBE", "LATENT_SIZES", "PENALTY_FLOOR", "PENALTY_SCALE", "PenaltySchedule",
           "bc_loss", "deviation", "env_action", "hard_mode", "pca_reconstruction", "penalized_reward",
           "reconstruction_stats", "tube_clip", "unit_action", *_LAZY]

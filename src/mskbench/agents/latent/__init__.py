"""Latent-action RL, hard mode (App. A-G, Eqs. 21-28): an expert-trained encoder–decoder filters the
learner's muscle actions into a tube around a state-conditioned prior.

The pieces, each usable on its own:

* :mod:`~mskbench.agents.latent.core` — the formulas (Eqs. 22-28), once, for
  NumPy and ``jax.numpy``: :func:`unit_action` (Eq. 23), :func:`tube_clip`
  (Eq. 25), :func:`env_action` (Eq. 26), :func:`hard_mode`, :func:`deviation`
  (Eq. 27), :class:`PenaltySchedule` and :func:`penalized_reward` (Eq. 28),
  :func:`bc_loss` (Eq. 22), :func:`reconstruction_stats` (reconstruction
  error and explained variance).
* :mod:`~mskbench.agents.latent.data` — the decoder's conditioning (muscle
  priors P, muscle states S, the moment matrix M) read from MuJoCo, and
  :func:`collect` of (state, action) data from any policy
  (``mskbench latent collect``).
* :mod:`~mskbench.agents.latent.model` — the flax encoder–decoder (Eq. 21),
  :func:`fit` by behaviour cloning with held-out statistics
  (``mskbench latent fit``), :class:`LatentModel` (its file, the prior
  ``â`` of Eq. 24, the jittable :meth:`LatentModel.hard_filter`).
* :mod:`~mskbench.agents.latent.wrapper` — the map between a learner and the
  env (:class:`LatentActionMap`, :class:`LatentActionWrapper`,
  :class:`LatentFilteredEnv`).

Tied to policy specs, training runs and the evaluation protocol in
:mod:`mskbench.paradigms.latent` (``LatentPrior``, the ``env_wrapper`` of
``mskbench train TASK --latent MODEL --tube R``; ``collect_expert``;
``evaluate_through``); command line in :mod:`mskbench.cli.latent`
(``mskbench latent collect|fit|eval``).

Importing this package loads no JAX; the model and the wrappers load it when used.
"""

from __future__ import annotations

from typing import Any

from mskbench.agents.latent.core import (DECAY_STEPS, DEFAULT_TUBE, LATENT_SIZES, PENALTY_FLOOR, PENALTY_SCALE,
                                         PenaltySchedule, bc_loss, deviation, env_action, hard_mode,
                                         pca_reconstruction, penalized_reward, reconstruction_stats, tube_clip,
                                         unit_action)

_LAZY = {
    "LatentData": "data", "MuscleFeatures": "data", "collect": "data", "dense_moments": "data",
    "LatentModel": "model", "ModelConfig": "model", "fit": "model",
    "LatentActionMap": "wrapper", "LatentActionWrapper": "wrapper", "LatentFilteredEnv": "wrapper",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        import importlib

        return getattr(importlib.import_module(f"mskbench.agents.latent.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'mskbench.agents.latent' has no attribute {name!r}")


__all__ = ["DECAY_STEPS", "DEFAULT_TUBE", "LATENT_SIZES", "PENALTY_FLOOR", "PENALTY_SCALE", "PenaltySchedule",
           "bc_loss", "deviation", "env_action", "hard_mode", "pca_reconstruction", "penalized_reward",
           "reconstruction_stats", "tube_clip", "unit_action", *_LAZY]

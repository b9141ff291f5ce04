"""Where a run's settings start from: the algorithm's defaults, then a preset of the task's study, then the
caller's overrides (as MuJoCo Playground keeps per-family configs).

:data:`PRESETS` is keyed by ``(algorithm, study)`` (the catalog's ``study`` tag: ``suite``, ``residual``,
``mouse``); each preset holds settings for ``all`` backends and per backend.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from mskbench.agents import algorithm
from mskbench.catalog import TASKS

#: Total environment steps (Table XVI: 2e8) unless the algorithm's defaults or a preset say otherwise.
TOTAL_STEPS = 200_000_000
#: Environment steps between evaluations, per backend (the algorithm's own on ``cpu`` where it has one).
EVAL_EVERY_STEPS = {"cpu": 500_000, "jax": 5_000_000}

#: (algorithm, study) -> settings a run of it starts from: ``all`` backends, then per backend.
PRESETS: dict[tuple[str, str], dict[str, dict[str, Any]]] = {
    # Leonardis et al. (2025): an encoder–decoder policy (3 x 512 each side). Measured on the CPU backend
    # (46 real clips, 32 worlds): minibatch 512 and initial log-std −1 lowered the replay error steadily
    # (4.3 -> 2.2 mm in 0.6M steps) where minibatch 2048 / log-std −0.5 did not improve and a learning
    # rate of 1e-3 diverged.
    ("ppo", "mouse"): {
        "all": {"policy": "encoder_decoder", "encoder_hidden": (512,) * 3, "decoder_hidden": (512,) * 3,
                "value_hidden": (512, 512), "minibatch_size": 512, "epochs": 4, "init_log_std": -1.0,
                "total_steps": 2_000_000},
        "cpu": {"num_envs": 32, "num_steps": 64},
        "jax": {"num_envs": 4096, "num_steps": 64},
    },
    # The tracking priors and the residual policies (the paper and the original code give no PPO settings
    # for them; our choice, docs/residual.md). Measured on TrackWalk's first PPO iteration (4 worlds x 256
    # steps): Table XVI's lr 3e-4 with 10 epochs moved the mean action by 0.2 per muscle (a third of the
    # initial std) in the first epoch and log π by up to 590 nats after ten: the ratio overflowed and the
    # update was NaN. At lr 3e-5, 4 epochs and initial log-std −1: 0.02 per muscle, at most 14 nats.
    ("ppo", "residual"): {"all": {"learning_rate": 3e-5, "epochs": 4, "init_log_std": -1.0}},
}


def preset(algo: str, task: str) -> dict[str, dict[str, Any]]:
    """The preset of ``algo`` for ``task``'s study (empty for a task outside the catalog or without one)."""
    entry = TASKS.get(task)
    return PRESETS.get((algo, entry.study), {}) if entry is not None else {}


def resolve_config(algo: str, task: str, backend: str, overrides: Mapping[str, Any]):
    """The algorithm's hyper-parameters for ``task`` on ``backend``: defaults, the task's preset, ``overrides``."""
    alg = algorithm(algo)
    found = preset(algo, task)
    merged = {**found.get("all", {}), **found.get(backend, {}), **overrides}
    return alg.config(backend, **merged)


def default_total_steps(algo: str, task: str, backend: str) -> int | None:
    """:data:`TOTAL_STEPS`, unless the algorithm's defaults on ``backend`` or the preset set the total (None)."""
    if "total_steps" in preset(algo, task).get("all", {}) or "total_steps" in algorithm(algo).defaults.get(backend, {}):
        return None
    return TOTAL_STEPS

"""Trainers, registered by name in :data:`ALGORITHMS` (as Brax registers its trainers).

An algorithm is an :class:`Algorithm`: its hyper-parameter dataclass (defaults:
Table XVI), the per-backend defaults a run starts from, the training loop
(any :class:`~mskbench.envs.protocols.VectorEnv` or
:class:`~mskbench.envs.protocols.BatchedEnv`) and its checkpoint reader.
:func:`mskbench.training.train` runs any of them; the upcoming SAC, DepRL and
DynSyn-SAC plug in here. Importing this module loads no JAX.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from mskbench.agents import ppo


@dataclass(frozen=True)
class Algorithm:
    """One trainer.

    ``config_class``: its hyper-parameters (a dataclass; ``num_envs``,
    ``total_steps``, ``num_steps`` (steps per world per iteration) and ``seed``
    are fields of every one). ``defaults[backend]``: overrides of the
    dataclass defaults per backend (``cpu``, ``jax``); ``derive(config)``
    fills in fields that depend on others. ``train(env, config, ...)``: the
    loop, as :func:`mskbench.agents.ppo.train`.
    """

    name: str
    summary: str
    config_class: type
    defaults: Mapping[str, Mapping[str, Any]]
    train: Callable[..., Any]
    derive: Callable[[Any, Mapping[str, Any], str], Any] = lambda config, given, backend: config

    def config(self, backend: str, **overrides: Any) -> Any:
        """The resolved hyper-parameters for ``backend`` with ``overrides``; an unknown name is a
        ``ValueError`` that lists the valid ones."""
        fields = {f.name for f in dataclasses.fields(self.config_class)}
        unknown = sorted(set(overrides) - fields)
        if unknown:
            raise ValueError(f"{self.name} has no setting {', '.join(map(repr, unknown))}; "
                             f"its settings: {', '.join(sorted(fields))}")
        base = {**self.defaults.get(backend, {}), **overrides}
        return self.derive(self.config_class(**base), overrides, backend)


def _ppo_minibatch(config: ppo.PPOConfig, given: Mapping[str, Any], backend: str) -> ppo.PPOConfig:
    """On the batched backend, as many gradient steps per epoch as Table XVI's 2048 x 8 / 256
    (unless the minibatch was given)."""
    if "minibatch_size" in given or backend != "jax":
        return config
    return dataclasses.replace(config, minibatch_size=max(256, config.num_steps * config.num_envs // 64))


#: Algorithm name -> :class:`Algorithm`.
ALGORITHMS: dict[str, Algorithm] = {
    "ppo": Algorithm(
        name="ppo",
        summary="Proximal Policy Optimisation (JAX; Table XVI: 2x1024 MLPs, lr 3e-4, 2048 steps x 8 envs)",
        config_class=ppo.PPOConfig,
        defaults={"cpu": {"num_envs": 8, "num_steps": 2048, "minibatch_size": 256},
                  "jax": {"num_envs": 4096, "num_steps": 64}},
        train=ppo.train,
        derive=_ppo_minibatch,
    ),
}


def algorithm(name: str) -> Algorithm:
    """The registered algorithm ``name``; a ``ValueError`` lists the valid ones."""
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise ValueError(f"unknown algorithm {name!r}; valid algorithms: {', '.join(ALGORITHMS)}") from None


__all__ = ["ALGORITHMS", "Algorithm", "algorithm"]

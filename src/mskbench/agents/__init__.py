"""Trainers, registered by name in :data:`ALGORITHMS` (as Brax registers its trainers).

An algorithm is an :class:`Algorithm`: its hyper-parameter dataclass (defaults:
Table XVI), the per-backend defaults a run starts from, its learner (one
iteration at a time on any :class:`~mskbench.envs.protocols.VectorEnv` or
:class:`~mskbench.envs.protocols.BatchedEnv`; :class:`~mskbench.agents.base.Learner`)
and its checkpoints' format, reader and policy export.
:func:`mskbench.training.train` runs any of them (the loop around the learner is
:mod:`mskbench.training.loop`): PPO (:mod:`mskbench.agents.ppo`) and the SAC
family (:mod:`mskbench.agents.sac`: SAC, DepRL, DynSyn-SAC). Importing this
module loads no JAX.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mskbench.agents import bc, ppo, sac
from mskbench.agents.base import Learner, PolicyCheckpoint


@dataclass(frozen=True)
class Algorithm:
    """One trainer.

    ``config_class``: its hyper-parameters (a dataclass; ``num_envs``,
    ``total_steps``, ``num_steps`` (steps per world per iteration) and ``seed``
    are fields of every one). ``defaults[backend]``: overrides of the
    dataclass defaults per backend (``cpu``, ``jax``); ``derive(config)``
    fills in fields that depend on others. ``learner(env, config, checkpoint)``:
    a :class:`~mskbench.agents.base.Learner` (``checkpoint``: the file a resumed
    run continues from, else None). Its checkpoints carry ``format``; ``read_policy(path,
    obs_layout, obs_size)`` reads one as a :class:`~mskbench.agents.base.PolicyCheckpoint`
    and ``export_policy(src, dst)`` writes its policy alone (the learner's ``save``
    writes them).
    """

    name: str
    summary: str
    config_class: type
    defaults: Mapping[str, Mapping[str, Any]]
    learner: Callable[[Any, Any, Path | None], Learner]
    format: str
    read_policy: Callable[[Path, Mapping[str, slice], int], PolicyCheckpoint]
    export_policy: Callable[[Path, Path], Path]
    derive: Callable[[Any, Mapping[str, Any], str], Any] = lambda config, given, backend: config
    #: Backends it trains on.
    backends: tuple[str, ...] = ("cpu", "jax")
    #: Its evaluation protocol during training (Table XVI): environment steps between evaluations
    #: (None: the backend's default) and deterministic episodes per evaluation.
    eval_every_steps: int | None = None
    eval_episodes: int = 10
    #: Which checkpoint a run's evaluation uses: ``"best"`` (highest mean evaluation return, kept as
    #: ``best.npz``) or ``"last"`` (the latest ``checkpoint.npz``; the best is still kept, as
    #: ``best_return.npz``).
    checkpoint_rule: str = "best"
    #: Its learner builds and steps worlds of its own (BC: each beside its teacher, in its own worker
    #: processes), so :func:`mskbench.train` hands it one world of the task (its task, observation layout and
    #: sizes) instead of ``num_envs`` worlds it would never step.
    brings_own_worlds: bool = False

    def config(self, backend: str, **overrides: Any) -> Any:
        """The resolved hyper-parameters for ``backend`` with ``overrides``; an unknown name is a
        ``ValueError`` that lists the valid ones."""
        fields = {f.name for f in dataclasses.fields(self.config_class)}
        unknown = sorted(set(overrides) - fields)
        if unknown:
            raise ValueError(f"{self.name} has no setting {', '.join(map(repr, unknown))}; "
                             f"its settings: {', '.join(sorted(fields))}")
        tuples = {f.name for f in dataclasses.fields(self.config_class) if isinstance(f.default, tuple)}
        overrides = {k: (v,) if k in tuples and not isinstance(v, (tuple, list)) else v  # --set hidden=512: one layer
                     for k, v in overrides.items()}
        base = {**self.defaults.get(backend, {}), **overrides}
        return self.derive(self.config_class(**base), overrides, backend)


def _ppo_minibatch(config: ppo.PPOConfig, given: Mapping[str, Any], backend: str) -> ppo.PPOConfig:
    """On the batched backend, as many gradient steps per epoch as Table XVI's 2048 x 8 / 256
    (unless the minibatch was given)."""
    if "minibatch_size" in given or backend != "jax":
        return config
    return dataclasses.replace(config, minibatch_size=max(256, config.num_steps * config.num_envs // 64))


def _ppo_derive(config: ppo.PPOConfig, given: Mapping[str, Any], backend: str) -> ppo.PPOConfig:
    """The batched backend's minibatch (:func:`_ppo_minibatch`); a run started from an actor (``init``)
    warms its critic up for :data:`INIT_CRITIC_WARMUP` iterations and keeps the actor's observation
    normalisation (``update_norm`` False) unless those were given. Measured on Stand from a BC actor
    that stood in 5/5 episodes: with the normalisation updated from the first (noisy) rollouts the
    same, still frozen, actor fell in every evaluation episode after two iterations (return 3,674)."""
    config = _ppo_minibatch(config, given, backend)
    if config.init is not None:
        if "critic_warmup" not in given:
            config = dataclasses.replace(config, critic_warmup=INIT_CRITIC_WARMUP)
        if "update_norm" not in given:
            config = dataclasses.replace(config, update_norm=False)
    return config


#: Iterations a PPO run started from an actor (``--init``) trains its critic alone, by default.
INIT_CRITIC_WARMUP = 2


#: Algorithm name -> :class:`Algorithm`.
ALGORITHMS: dict[str, Algorithm] = {
    "ppo": Algorithm(
        name="ppo",
        summary="Proximal Policy Optimisation (JAX; Table XVI: 2x1024 MLPs, lr 3e-4, 2048 steps x 8 envs)",
        config_class=ppo.PPOConfig,
        defaults={"cpu": {"num_envs": 8, "num_steps": 2048, "minibatch_size": 256},
                  "jax": {"num_envs": 4096, "num_steps": 64}},
        learner=ppo.PPOLearner,
        format=ppo.FORMAT,
        read_policy=ppo.ppo_policy_checkpoint,
        export_policy=ppo.export_policy,
        derive=_ppo_derive,
        eval_every_steps=500_000,
    ),
    "sac": Algorithm(
        name="sac",
        summary="Soft Actor-Critic (SBX, JAX; Table XVI: 2x1024 actor, twin 2x1024 critics, lr 1e-4, 8 envs, "
                "one gradient step per vectorised step)",
        config_class=sac.SACConfig,
        defaults={"cpu": {}},
        learner=sac.SACLearner,
        format=sac.FORMAT,
        read_policy=sac.sac_policy_checkpoint,
        export_policy=sac.export_policy,
        derive=sac.derive,
        backends=("cpu",),
        eval_every_steps=200_000,
    ),
    "deprl": Algorithm(
        name="deprl",
        summary="DepRL: DEP exploration on SAC (SBX) with 3-step returns (Table XVI: 16 envs, actor lr 5e-5, "
                "critic 8e-5, 1e5 warm-up, 30 updates per 1,000 transitions; the last checkpoint is reported)",
        config_class=sac.SACConfig,
        defaults={"cpu": {"num_envs": 16, "num_steps": 625, "learning_rate": 5e-5, "critic_learning_rate": 8e-5,
                          "n_steps": 3, "learning_starts": 100_000, "gradient_steps": 30, "exploration": "dep",
                          "total_steps": 100_000_000}},
        learner=sac.SACLearner,
        format=sac.FORMAT,
        read_policy=sac.sac_policy_checkpoint,
        export_policy=sac.export_policy,
        derive=sac.derive,
        backends=("cpu",),
        checkpoint_rule="last",
    ),
    "dynsyn": Algorithm(
        name="dynsyn",
        summary="DynSyn-SAC: SAC (SBX) acting through muscle-synergy groups (Table XVI: 64 envs, 3x1024 "
                "networks, lr 5e-4 -> 1.25e-4 linear, one gradient step per vectorised step)",
        config_class=sac.SACConfig,
        defaults={"cpu": {"num_envs": 64, "num_steps": 160, "hidden": (1024,) * 3, "critic_hidden": (1024,) * 3,
                          "learning_rate": 5e-4, "learning_rate_final": 1.25e-4, "action_map": "dynsyn",
                          "learning_starts": 10_000,
                          "total_steps": 50_000_000}},
        learner=sac.SACLearner,
        format=sac.FORMAT,
        read_policy=sac.sac_policy_checkpoint,
        export_policy=sac.export_policy,
        derive=sac.derive,
        backends=("cpu",),
        eval_every_steps=5_000_000,
        eval_episodes=3,
    ),
    "bc": Algorithm(
        name="bc",
        summary="Behaviour cloning of the privileged expert with DAgger relabelling (PPO's 2x1024 actor, "
                "observations only; 8 CPU worlds x 250 steps, 1000 Adam steps per iteration; beta 0.7^i, "
                "the teacher also acting where the student strays, gate 0.03)",
        config_class=bc.BCConfig,
        defaults={"cpu": {"total_steps": 200_000}},
        learner=bc.BCLearner,
        format=bc.FORMAT,
        read_policy=bc.bc_policy_checkpoint,
        export_policy=bc.export_policy,
        backends=("cpu",),
        eval_every_steps=20_000,
        eval_episodes=5,
        brings_own_worlds=True,
    ),
}


def algorithm(name: str) -> Algorithm:
    """The registered algorithm ``name``; a ``ValueError`` lists the valid ones."""
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise ValueError(f"unknown algorithm {name!r}; valid algorithms: {', '.join(ALGORITHMS)}") from None


def algorithm_for_format(fmt: str) -> Algorithm:
    """The (first) registered algorithm whose checkpoints carry ``fmt``; a ``ValueError`` lists the formats."""
    for alg in ALGORITHMS.values():
        if alg.format == fmt:
            return alg
    formats = ", ".join(dict.fromkeys(a.format for a in ALGORITHMS.values()))
    raise ValueError(f"unknown checkpoint format {fmt!r}; this mskbench reads {formats}")


__all__ = ["ALGORITHMS", "Algorithm", "algorithm", "algorithm_for_format"]

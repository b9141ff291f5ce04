"""The shared evaluation protocol: settings, units of work, policy specs.

A *unit* is one evaluation episode, identified by
``(method, task, perturbation, scale, seed)``. The train-environment success
rate uses ``perturbation="none", scale=0``; the robustness sweeps use the
paper's scales (App. A-B2):

* action and dynamics: 0, 0.05, 0.10, 0.15, 0.20
* observation: 0, 0.02, 0.05, 0.08, 0.10

Each unit's episode is fully determined by its key (the seed drives the
initial state, the noise streams and, for the ``random`` policy, its
actions), so a unit gives the same record on any worker or executor.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from mskbench.agents.checkpoint import checkpoint_path  # noqa: F401 - re-exported for the executors
from mskbench.envs.perturbations import Perturbation
from mskbench.policies import BUILTIN_POLICIES, PRIVILEGED_POLICIES, make_policy

PERTURBATION_TYPES = ("action", "observation", "dynamics")
#: All perturbation names a unit can carry (``none`` = train environment).
PERTURBATIONS = ("none",) + PERTURBATION_TYPES
SCALES: dict[str, tuple[float, ...]] = {
    "action": (0.0, 0.05, 0.10, 0.15, 0.20),
    "observation": (0.0, 0.02, 0.05, 0.08, 0.10),
    "dynamics": (0.0, 0.05, 0.10, 0.15, 0.20),
}
DEFAULT_EPISODES = 50


@dataclass(frozen=True, order=True)
class Unit:
    """One evaluation episode."""

    method: str
    task: str
    perturbation: str
    scale: float
    seed: int

    @property
    def key(self) -> tuple:
        return (self.method, self.task, self.perturbation, float(self.scale), int(self.seed))


def check_perturbation_type(name: str) -> str:
    if name not in PERTURBATIONS:
        raise ValueError(f"unknown perturbation type {name!r}; valid types: {', '.join(PERTURBATIONS)}")
    return name


def check_sweep_types(types: Iterable[str]) -> list[str]:
    """The perturbation types of a sweep, duplicates dropped; at least one, each a valid one."""
    types = list(dict.fromkeys(types))
    valid = f"valid types: {', '.join(PERTURBATION_TYPES)}"
    if not types:
        raise ValueError(f"no perturbation type given; {valid}")
    for kind in types:
        if kind not in PERTURBATION_TYPES:
            raise ValueError(f"unknown perturbation type {kind!r}; {valid}")
    return types


def perturbation_for(kind: str, scale: float) -> Perturbation:
    """The env perturbation of a protocol setting."""
    check_perturbation_type(kind)
    if kind == "none":
        return Perturbation()
    if kind == "action":
        return Perturbation(action_noise_std=scale)
    if kind == "observation":
        return Perturbation(observation_noise_std=scale)
    return Perturbation(muscle_gain_range=scale)


def episode_seeds(seed: int, episodes: int) -> list[int]:
    """Seeds of ``episodes`` evaluation episodes starting at ``seed``."""
    if seed < 0:
        raise ValueError(f"seed must be >= 0 (gymnasium's rule), got {seed}")
    if episodes < 1:
        raise ValueError(f"episodes must be >= 1, got {episodes}")
    return [seed + i for i in range(episodes)]


def check_protocol_tasks(names: Iterable[str]) -> list[str]:
    """``names`` as a list if the protocol can evaluate each task alone (made with its default options); else a
    ValueError naming those it cannot, with the reason their catalog entries give (``protocol_refusal``)."""
    from mskbench.catalog import TASKS

    names = list(names)
    refused = [n for n in names if n in TASKS and TASKS[n].protocol_refusal]
    if refused:
        raise ValueError(f"{', '.join(refused)}: {TASKS[refused[0]].protocol_refusal}")
    return names


def eval_units(method: str, tasks: Iterable[str], seed: int, episodes: int) -> list[Unit]:
    """Units of the train-environment evaluation."""
    return [Unit(method, t, "none", 0.0, s) for t in tasks for s in episode_seeds(seed, episodes)]


def sweep_units(method: str, tasks: Iterable[str], seed: int, episodes: int,
                types: Iterable[str] = PERTURBATION_TYPES) -> list[Unit]:
    """Units of the robustness sweeps: every task × type × scale × episode."""
    types = check_sweep_types(types)
    return [Unit(method, t, kind, scale, s)
            for t in tasks for kind in types for scale in SCALES[kind] for s in episode_seeds(seed, episodes)]


# -- policies -------------------------------------------------------------------------
FACTORY_KWARGS = ("task", "observation_space", "action_space", "obs_layout", "seed")


def load_policy(spec: str, env, seed: int):
    """Build the policy named by ``spec`` for ``env``.

    ``spec`` is a built-in name (``zero``, ``passive``, ``random``; the privileged ``hold`` and
    ``expert`` of :mod:`mskbench.control`, which read ``env``'s simulator), a
    checkpoint of any trainer (a ``.npz`` file, or a run directory holding ``best.npz`` or
    ``checkpoint.npz``; the deterministic policy, on any machine, acting as the checkpoint records:
    :func:`checkpoint_acting`), or
    ``package.module:factory``. A factory is called with those of the keyword
    arguments ``task, observation_space, action_space, obs_layout, seed`` that
    its signature accepts, and must return an object with ``act(obs)`` (and
    optionally ``reset()``; ``normalize_observation(obs)`` and
    ``act_normalized(x)`` when the policy normalises observations itself, so
    the protocol can add observation noise in normalised space).
    """
    if spec in PRIVILEGED_POLICIES:
        from mskbench.control import make_controller

        return make_controller(spec, env)
    if spec in BUILTIN_POLICIES:
        return make_policy(spec, env.action_space.shape[0], seed=seed)
    ckpt = checkpoint_path(spec)
    if ckpt is not None:
        acting = checkpoint_acting(ckpt)
        if acting is not None:
            return acting.policy(ckpt, env)
        from mskbench.agents.checkpoint import load_policy as network

        return network(ckpt, env.obs_layout, env.observation_space.shape[0])
    factory = resolve_factory(spec)
    available = {"task": env.task.name, "observation_space": env.observation_space,
                 "action_space": env.action_space, "obs_layout": env.obs_layout, "seed": seed}
    params = inspect.signature(factory).parameters
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        kwargs = available
    else:
        kwargs = {k: v for k, v in available.items() if k in params}
    policy = factory(**kwargs)
    if not callable(getattr(policy, "act", None)):
        raise TypeError(f"policy factory {spec!r} returned {type(policy).__name__}, which has no act(obs) method")
    return policy


def checkpoint_acting(ckpt: str | Path):
    """How checkpoint ``ckpt`` acts: what its ``acts_through`` names
    (:func:`mskbench.agents.checkpoint.acts_through`), made with its settings; None when its network acts alone.

    That object has ``policy(checkpoint, env)``, the checkpoint's policy on a CPU env; for batched evaluation
    ``batched_env(env)``, the env the checkpoint's network acts in (made with ``batched_options``, if it has
    them), or else ``cpu_only``, why it has none."""
    from mskbench.agents.checkpoint import acts_through

    found = acts_through(ckpt)
    if found is None:
        return None
    factory, settings = found
    try:
        return resolve_factory(factory)(**settings)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"{ckpt} acts through {factory!r}, which fails: {exc}") from None


def resolve_factory(spec: str):
    """Import ``package.module:factory``; errors say what was expected."""
    if ":" not in spec:
        raise ValueError(f"unknown policy {spec!r}; use a built-in ({', '.join(BUILTIN_POLICIES)}), "
                         "a checkpoint (.npz or run directory) or 'package.module:factory'")
    module_name, _, attr = spec.partition(":")
    if not module_name or not attr:
        raise ValueError(f"policy path {spec!r} must look like 'package.module:factory'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ValueError(f"policy path {spec!r}: cannot import module {module_name!r} ({exc})") from exc
    factory = module
    for part in attr.split("."):
        if not hasattr(factory, part):
            raise ValueError(f"policy path {spec!r}: module {module_name!r} has no attribute {attr!r}")
        factory = getattr(factory, part)
    if not callable(factory):
        raise ValueError(f"policy path {spec!r}: {attr!r} is not callable")
    return factory


def check_policy_spec(spec: str, tasks: Iterable[str] = ()) -> str:
    """Validate a policy spec up front (before any worker starts): a built-in controller (the expert, a probe)
    must also have a behaviour for each of ``tasks`` (the error names the tasks it serves)."""
    if spec in PRIVILEGED_POLICIES:
        from mskbench.control.registry import behaviour_for

        for task in tasks:
            behaviour_for(spec, task)
    elif spec not in BUILTIN_POLICIES and checkpoint_path(spec) is None:
        resolve_factory(spec)
    return spec

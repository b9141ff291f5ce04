"""Policy checkpoints, whatever trained them: finding, reading, exporting.

A checkpoint is a ``.npz`` file. Its ``format`` entry names the trainer's
format (absent: ``"mskbench-ppo"``, our PPO in :mod:`mskbench.agents.ppo`;
``"mskbench-sac"``: the SAC family of :mod:`mskbench.agents.sac`); the
registered :class:`~mskbench.agents.Algorithm` of that format reads it. Every
format reduces to a :class:`~mskbench.agents.base.PolicyCheckpoint`
(normalisation, parameters, a deterministic network), which is all the
evaluation protocol needs. Which file of a run directory is evaluated:
:func:`mskbench.agents.run_dir.checkpoint_path`.

How a checkpoint acts (:func:`acts_through`): by its network alone, or through what its run trained with (a
paradigm's action map, a base policy), named ``module:factory`` with the factory's keyword settings. An export
records them in its file (entries ``acts_through`` and ``acts_settings``); a run's checkpoint, in the
``run.json`` beside it; a checkpoint from before either recorded it has them inferred here, in one place, and a
``module:factory`` naming a module that has since moved is read as its module today (:data:`MOVED_MODULES`).
:func:`mskbench.eval.protocol.load_policy` resolves them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from mskbench.agents import algorithm_for_format, ppo
from mskbench.agents.base import PolicyCheckpoint, savez_atomic
from mskbench.agents.run_dir import RunDir, checkpoint_path  # noqa: F401 - where the evaluation protocol finds it

__all__ = ["MOVED_MODULES", "acts_through", "checkpoint_format", "checkpoint_path", "current_factory",
           "export_policy", "load", "load_policy", "stored_layout"]


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
    acting = acts_through(src)
    dst = algorithm_for_format(checkpoint_format(src)).export_policy(Path(src), Path(dst))
    if acting is not None:  # the export acts as its run did, wherever it is copied
        with np.load(dst, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
        arrays.update(acts_through=np.array(acting[0]), acts_settings=np.array(json.dumps(acting[1])))
        savez_atomic(dst, arrays)
    return dst


def acts_through(path: str | Path) -> tuple[str, dict[str, Any]] | None:
    """How the checkpoint at ``path`` acts: ``("module:factory", settings)``, or None when its network acts
    alone. The file's own record first (an export's), then its run's ``run.json`` (``acts_through`` and
    ``acts_settings``, written by :func:`mskbench.train` from the run's ``env_wrapper``), then what a
    checkpoint from before those records is inferred to be (:func:`_inferred`)."""
    with np.load(path, allow_pickle=False) as z:
        if "acts_through" in z.files:
            settings = json.loads(str(z["acts_settings"])) if "acts_settings" in z.files else {}
            return current_factory(str(z["acts_through"])), settings
    run = RunDir(Path(path).parent)
    settings = {}
    if run.is_run():
        try:
            settings = run.settings()
        except (OSError, json.JSONDecodeError):
            settings = {}
    if settings.get("acts_through"):
        return current_factory(str(settings["acts_through"])), dict(settings.get("acts_settings") or {})
    return _inferred(settings.get("env_wrapper") or {}, stored_layout(path))


#: Modules that checkpoints and runs from before a paradigm moved into its home (``mskbench.paradigms``) may
#: name in their ``acts_through``, and where each lives now (a module under one moves with it).
MOVED_MODULES = {
    "mskbench.envs.residual_action": "mskbench.paradigms.residual.action",
    "mskbench.control.residual": "mskbench.paradigms.residual.expert",
    "mskbench.agents.latent": "mskbench.paradigms.latent",
}


def current_factory(spec: str) -> str:
    """``spec`` (``module:factory``) with its module as named today: a module of :data:`MOVED_MODULES` (or one
    under it) by where it moved; any other ``spec`` as it is."""
    module, sep, attr = spec.partition(":")
    for old, new in MOVED_MODULES.items():
        if module == old or module.startswith(old + "."):
            return new + module[len(old):] + sep + attr
    return spec


#: What older runs' ``env_wrapper`` paradigms act through (runs and exports from before ``acts_through``).
_LATENT = "mskbench.paradigms.latent:LatentActing"
_RESIDUAL = "mskbench.paradigms.residual.wrapper:ResidualActing"
_EXPERT_RESIDUAL = "mskbench.paradigms.residual.expert:ExpertResidualActing"
#: The observation block a policy trained over the expert reads the expert's action in
#: (:data:`mskbench.paradigms.residual.expert.BASE_BLOCK`).
_EXPERT_BLOCK = "expert/base_action"


def _inferred(wrapper: Mapping[str, Any], layout: Mapping[str, slice] | None) -> tuple[str, dict[str, Any]] | None:
    """How a checkpoint from before ``acts_through`` acts, from its run's ``env_wrapper`` settings and its own
    observation layout: a latent run through its model (the file and SHA-256 its run recorded), a residual
    run over its task's base, a policy over the expert (its run's ``base``, or an export's observation with
    the expert's action block) with the expert in the loop; anything else by its network alone."""
    if wrapper.get("paradigm") == "latent":
        return _LATENT, {k: wrapper[k] for k in ("model", "model_sha256", "tube", "mode") if k in wrapper}
    if wrapper.get("paradigm") == "residual" and wrapper.get("base") != "expert":
        return _RESIDUAL, {}
    if wrapper.get("base") == "expert" or (layout is not None and _EXPERT_BLOCK in layout):
        return _EXPERT_RESIDUAL, {k: wrapper[k] for k in ("alpha",) if k in wrapper}
    return None


def load_policy(path: str | Path, obs_layout: Mapping[str, slice], obs_size: int):
    """A deterministic host policy from a checkpoint of any trainer (for evaluation on any machine)."""
    return load(path, obs_layout, obs_size).host_policy()

"""How paradigms combine in one training run: the rules, in one place, that turn a run's paradigm options
(``mskbench train``'s ``--agentic``, ``--base``, ``--latent`` and their companions) into what
:func:`mskbench.training.train` takes: the ``env_wrapper`` and the task's options.

At most one paradigm shapes a run's env: agentic reward tuning (:mod:`mskbench.paradigms.agentic`, CPU only),
a residual over a frozen base (:mod:`mskbench.paradigms.residual`: a run or checkpoint on the residual tasks,
or ``expert`` on a task the expert serves) or the latent-action filter (:mod:`mskbench.paradigms.latent`).
A refused option is an :class:`OptionError`: a one-line ``ValueError`` naming the bad value and the valid
choices, with the option it is about (``option``), which the command line prints as that option's error.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Composition", "OptionError", "compose"]


class OptionError(ValueError):
    """A paradigm option refused: a one-line message; ``option`` is the option it is about (``"--base"``)."""

    def __init__(self, option: str, message: str):
        super().__init__(message)
        self.option = option


@dataclass(frozen=True)
class Composition:
    """What :func:`mskbench.training.train` takes from a run's paradigm options: ``env_wrapper`` (None: the task's
    env as it is) and ``task_options`` (None: the task's defaults); ``tuner``, the agentic reward tuner when
    there is one (it is the ``env_wrapper`` too), for its report after the run."""

    env_wrapper: Any = None
    task_options: dict[str, Any] | None = None
    tuner: Any = None


def compose(task: str, *, algo: str = "ppo", backend: str = "cpu", agentic: str | None = None,
            agentic_every: int | None = None, agentic_timeout: float | None = None, base: str | None = None,
            latent: str | Path | None = None, tube: float | None = None) -> Composition:
    """The paradigm of a run of ``algo`` on ``task`` (a task id) with ``backend``: ``agentic`` (``"rule"`` or
    ``"http"``; every ``agentic_every`` steps, ``agentic_timeout`` seconds per update), ``base`` (a run, a
    checkpoint, a built-in base or ``"expert"``), ``latent`` (a model file, tube radius ``tube``); at most one of
    the three. A refused option is an :class:`OptionError`."""
    tuner = _agentic_tuner(agentic, agentic_every, agentic_timeout, backend)
    residual, task_options = _residual_base(task, base, tuner, backend, algo)
    prior = _latent_prior(latent, tube, tuner or residual)
    return Composition(env_wrapper=tuner or residual or prior, task_options=task_options, tuner=tuner)


def _residual_base(task, base, tuner, backend="cpu", algo="ppo"):
    """``base``: the residual wrapper and the task option ``base`` (None, None without it); ``expert`` on a task
    the expert serves: the wrapper of residual RL over the expert (no option)."""
    from mskbench.catalog import task_ids
    from mskbench.paradigms.residual.expert import EXPERT_BASE

    residual_task = task in task_ids(family="residual")
    if base is None:
        if residual_task:
            raise OptionError("--base", f"{task} trains a residual over a frozen base policy: give --base RUN")
        return None, None
    if tuner is not None:
        raise OptionError("--base", "--base and --agentic cannot be combined")
    if not residual_task:
        if base != EXPERT_BASE:
            from mskbench.control import EXPERT_BEHAVIOURS

            names = ", ".join(task_ids(family="residual"))
            raise OptionError("--base", f"--base is for the residual tasks ({names}), not {task}; or --base expert "
                                        f"on a task the expert serves ({', '.join(EXPERT_BEHAVIOURS)})")
        from mskbench.paradigms.residual.expert import ExpertResidualWrapper, check_expert_residual

        try:
            check_expert_residual(task, backend, algo)
        except ValueError as exc:
            raise OptionError("--base", str(exc)) from None
        return ExpertResidualWrapper(), None
    from mskbench.paradigms.residual import ResidualWrapper, resolve_base

    try:
        return ResidualWrapper(), {"base": resolve_base(base)}
    except ValueError as exc:
        raise OptionError("--base", str(exc)) from None


def _latent_prior(model, tube, other):
    """The latent-action filter of ``latent`` (None without it)."""
    if model is None:
        if tube is not None:
            raise OptionError("--tube", "--tube needs --latent MODEL")
        return None
    if other is not None:
        raise OptionError("--latent", "--latent cannot be combined with --agentic or --base")
    from mskbench.paradigms.latent.core import DEFAULT_TUBE
    from mskbench.paradigms.latent.run import LatentPrior

    try:
        return LatentPrior(model, DEFAULT_TUBE if tube is None else tube)
    except ValueError as exc:
        raise OptionError("--latent", str(exc)) from None


def _agentic_tuner(agentic, every, timeout, backend):
    """The agentic reward tuner of ``agentic`` (None without it)."""
    if agentic is None:
        for name, value in (("--agentic-every", every), ("--agentic-timeout", timeout)):
            if value is not None:
                raise OptionError(name, f"{name} needs --agentic rule|http")
        return None
    if backend != "cpu":
        raise OptionError("--agentic", "agentic reward tuning trains on --backend cpu")
    from mskbench.paradigms.agentic import DEFAULT_EVERY_STEPS, DEFAULT_TIMEOUT_S, AgenticTuner

    try:
        return AgenticTuner(agentic, every_steps=every or DEFAULT_EVERY_STEPS, timeout_s=timeout or DEFAULT_TIMEOUT_S)
    except ValueError as exc:
        raise OptionError("--agentic", str(exc)) from None

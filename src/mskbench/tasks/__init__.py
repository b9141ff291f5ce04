"""Benchmark tasks, one module each, and the registry that names them."""

from __future__ import annotations

import inspect

from mskbench.tasks.base import FAMILIES, InitContext, InitialState, Task
from mskbench.tasks.balance import Balance
from mskbench.tasks.catch import Catch
from mskbench.tasks.chin_up import ChinUp
from mskbench.tasks.crawl import Crawl
from mskbench.tasks.hurdle import Hurdle
from mskbench.tasks.jump import Jump
from mskbench.tasks.open_door import OpenDoor
from mskbench.tasks.pole_walk import PoleWalk
from mskbench.tasks.powerlift import Powerlift
from mskbench.tasks.reach import Reach
from mskbench.tasks.run import Run
from mskbench.tasks.sidestep import Sidestep
from mskbench.tasks.single_leg_stand import SingleLegStand
from mskbench.tasks.sit import Sit
from mskbench.tasks.slide import Slide
from mskbench.tasks.squat import Squat
from mskbench.tasks.stairs import Stairs
from mskbench.tasks.stand import Stand
from mskbench.tasks.step_stones import StepStones
from mskbench.tasks.walk import Walk
from mskbench.tasks.walk_and_sit import WalkAndSit
from mskbench.tasks.walk_turn import WalkTurn
from mskbench.tasks.catalog import PAPER_TASKS

#: Task id -> class, in the paper's order (Tables VI–VIII). Ids are the paper's task names in CamelCase.
REGISTRY: dict[str, type[Task]] = {cls.name: cls for cls in (
    Stand, Powerlift, SingleLegStand, Sit, Balance, Squat,  # stabilization
    Walk, Crawl, Run, Jump, WalkTurn, Sidestep,  # locomotion
    Stairs, Hurdle, StepStones, Slide, OpenDoor, Reach, WalkAndSit, ChinUp, Catch, PoleWalk,  # interaction
)}
if list(REGISTRY) != list(PAPER_TASKS) or any(REGISTRY[k].family != f for k, f in PAPER_TASKS.items()):
    raise ImportError("the task registry disagrees with the paper's catalog (mskbench.tasks.catalog)")


def task_names(family: str | None = None) -> list[str]:
    """Registered task ids, optionally only those of one family."""
    if family is not None and family not in FAMILIES:
        raise ValueError(f"unknown family {family!r}; valid families: {', '.join(FAMILIES)}")
    return [n for n, c in REGISTRY.items() if family is None or c.family == family]


def resolve_name(name: str) -> str:
    """The registered id for ``name`` (case-insensitive); raises listing the valid ids."""
    if isinstance(name, str):
        for key in REGISTRY:
            if key.lower() == name.lower():
                return key
    raise ValueError(f"unknown task {name!r}; valid tasks: {', '.join(REGISTRY)}")


def task_options(name: str) -> dict[str, object]:
    """A task's configuration options (keyword arguments of its class) and their defaults."""
    cls = REGISTRY[resolve_name(name)]
    params = list(inspect.signature(cls.__init__).parameters.values())[1:]
    return {p.name: p.default for p in params if p.kind in (p.KEYWORD_ONLY, p.POSITIONAL_OR_KEYWORD)}


def make_task(name: str, **kwargs) -> Task:
    """Instantiate a task by id (case-insensitive) with optional config kwargs.

    An unknown option is a ``ValueError`` that lists the task's options.
    """
    key = resolve_name(name)
    options = task_options(key)
    unknown = sorted(set(kwargs) - set(options))
    if unknown:
        valid = ", ".join(f"{k}={v!r}" for k, v in options.items()) or "none"
        raise ValueError(f"{key} has no option {', '.join(map(repr, unknown))}; its options (defaults): {valid}")
    return REGISTRY[key](**kwargs)


__all__ = ["FAMILIES", "REGISTRY", "InitContext", "InitialState", "Task", "make_task", "resolve_name",
           "task_names", "task_options", *REGISTRY]

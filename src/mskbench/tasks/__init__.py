"""Benchmark tasks, one module each, and the registry that names them."""

from __future__ import annotations

from mskbench.tasks.base import FAMILIES, InitContext, InitialState, Task
from mskbench.tasks.reach import Reach
from mskbench.tasks.stand import Stand
from mskbench.tasks.walk import Walk

#: Task id -> class. Ids are the paper's task names in CamelCase.
REGISTRY: dict[str, type[Task]] = {cls.name: cls for cls in (Stand, Walk, Reach)}


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


def make_task(name: str, **kwargs) -> Task:
    """Instantiate a task by id (case-insensitive) with optional config kwargs."""
    return REGISTRY[resolve_name(name)](**kwargs)


__all__ = ["FAMILIES", "REGISTRY", "InitContext", "InitialState", "Task", "make_task",
           "resolve_name", "task_names"]

"""Benchmark tasks, one module each, made by id from the catalog (:mod:`mskbench.catalog`).

``REGISTRY`` maps every task id to its class; a class is imported on first
access, so listing ids (or validating results against them) loads no task.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator, Mapping
from typing import Any

from mskbench.catalog import FAMILIES, SUITE, TASKS, suite_ids, task_id
from mskbench.tasks.base import InitContext, InitialState, Task, TaskConfig


class _Registry(Mapping[str, type[Task]]):
    """Task id -> class, in catalog order; classes imported on first access."""

    def __init__(self) -> None:
        self._classes: dict[str, type[Task]] = {}

    def __getitem__(self, name: str) -> type[Task]:
        if name not in TASKS:
            raise KeyError(name)
        if name not in self._classes:
            entry = TASKS[name]
            module, _, attr = entry.path.partition(":")
            cls = getattr(importlib.import_module(module), attr)
            if cls.name != name or cls.family != entry.family or cls.body.name != entry.body:
                raise ImportError(f"{entry.path} declares {cls.name!r} ({cls.family}, body {cls.body.name}); the "
                                  f"catalog says {name!r} ({entry.family}, body {entry.body})")
            self._classes[name] = cls
        return self._classes[name]

    def __iter__(self) -> Iterator[str]:
        return iter(TASKS)

    def __len__(self) -> int:
        return len(TASKS)


#: Task id -> class, in catalog order (the suite in the paper's order first).
REGISTRY: Mapping[str, type[Task]] = _Registry()


def task_names(family: str | None = None) -> list[str]:
    """The suite's task ids (Table II), optionally only those of one family."""
    return suite_ids(family)


def resolve_name(name: str) -> str:
    """The registered id for ``name`` (case-insensitive); raises listing the valid ids."""
    return task_id(name)


def task_options(name: str) -> dict[str, Any]:
    """A task's options and their defaults."""
    return {k: default for k, (default, _) in REGISTRY[resolve_name(name)].options().items()}


def make_task(name: str, **options: Any) -> Task:
    """Instantiate a task by id (case-insensitive) with option overrides.

    An unknown option is a ``ValueError`` that lists the task's options.
    """
    return REGISTRY[resolve_name(name)](**options)


def __getattr__(name: str) -> type[Task]:
    """Task classes by id (``from mskbench.tasks import Walk``), imported on first use."""
    if name in TASKS:
        return REGISTRY[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["FAMILIES", "REGISTRY", "SUITE", "InitContext", "InitialState", "Task", "TaskConfig", "make_task",
           "resolve_name", "task_names", "task_options"]

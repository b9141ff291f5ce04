"""mskbench: a full-body musculoskeletal motor-control benchmark.

Importing the package registers one Gymnasium id per task of the catalog,
``mskbench/<Task>-v0`` (e.g. ``gymnasium.make("mskbench/Stand-v0")``), and
the authors' original ids as aliases (``MSKBench<Task>-v0``,
``mskbench/DoorOpen-v0``; the env is the canonical task's). The
import is light: MuJoCo and the model load only when an env is made, JAX only
when something trains.

``mskbench.train(task, algo="ppo", backend="cpu", ...)`` trains a policy and
returns a :class:`~mskbench.training.Run` (:mod:`mskbench.training`).
"""

from __future__ import annotations

from typing import Any

from gymnasium.envs.registration import register, registry

from mskbench._version import __version__  # noqa: F401  (mskbench.__version__)
from mskbench.catalog import ORIGINAL_NAMES, SUITE, TASKS

#: The 22 suite task ids, in the paper's order (:data:`mskbench.catalog.SUITE`).
TASK_IDS = tuple(SUITE)


def _register() -> None:
    for name in TASKS:
        ids = [f"mskbench/{name}-v0"]
        if name in SUITE:
            theirs = ORIGINAL_NAMES.get(name, name)
            ids += [f"MSKBench{theirs}-v0"] + ([f"mskbench/{theirs}-v0"] if theirs != name else [])
        for env_id in ids:
            if env_id not in registry:
                register(id=env_id, entry_point="mskbench.envs.cpu_env:MSKEnv", kwargs={"task": name})


_register()


def __getattr__(name: str) -> Any:
    if name in ("train", "Run"):  # the training API, loaded on first use (it pulls in the simulator)
        from mskbench import training

        return getattr(training, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["TASK_IDS", "Run", "train"]

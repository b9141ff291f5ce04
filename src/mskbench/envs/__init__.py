"""Environments: the CPU ``gymnasium.Env`` (:class:`MSKEnv`), the vector and batched JAX envs,
observations, perturbations and the protocols they implement (:mod:`mskbench.envs.protocols`).

``MSKEnv`` and ``Perturbation`` load on first use, so importing the protocols loads no simulator.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    if name == "MSKEnv":
        from mskbench.envs.cpu_env import MSKEnv

        return MSKEnv
    if name == "Perturbation":
        from mskbench.envs.perturbations import Perturbation

        return Perturbation
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["MSKEnv", "Perturbation"]

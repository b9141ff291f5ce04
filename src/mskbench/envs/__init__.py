"""Environments: the CPU ``gymnasium.Env``, observations and perturbations."""

from mskbench.envs.cpu_env import MSKEnv
from mskbench.envs.perturbations import Perturbation

__all__ = ["MSKEnv", "Perturbation"]

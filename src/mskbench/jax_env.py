"""``mskbench.jax_env.make(task, num_envs=..., impl=...)``: the batched JAX environments.

See :mod:`mskbench.envs.jax_env` (tasks on MyoFullBody) and
:mod:`mskbench.sim.batched` (the physics backends).
"""

from mskbench.envs.jax_env import CONTACT_OVERFLOW, PHYSICS_UNSTABLE, TIME_LIMIT, TaskJaxEnv, make
from mskbench.sim.batched import IMPLS

__all__ = ["CONTACT_OVERFLOW", "IMPLS", "PHYSICS_UNSTABLE", "TIME_LIMIT", "TaskJaxEnv", "make"]

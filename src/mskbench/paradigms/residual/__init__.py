"""The residual study (Sec. III, App. A-J): residual adaptation over a frozen imitation prior, in one folder.

* :mod:`~mskbench.paradigms.residual.tasks` — the residual tasks ``ResidualWalk``, ``ResidualRun`` and
  ``ResidualStairs`` (catalog family ``residual``): the tracking tasks with the base policy's action and
  foot contact in the observation, and the study's reward terms; their priors are the tracking tasks
  (:mod:`mskbench.tasks.tracking`, ``TrackWalk`` ...);
* :mod:`~mskbench.paradigms.residual.wrapper` — the residual action map (Eq. 38) between any trainer and
  the env, CPU and batched, the ``env_wrapper`` of :func:`mskbench.train` (:class:`ResidualWrapper`),
  the policy of a trained residual (:class:`ResidualPolicy`) and :func:`train_residual`;
* :mod:`~mskbench.paradigms.residual.measure` — rollouts of a prior or a residual policy with the
  tracking metrics (Eqs. 19-20);
* :mod:`~mskbench.paradigms.residual.expert` — residual RL over the privileged expert on the tasks it
  serves: the training env with one expert per world, the policy with the expert in the loop,
  :class:`ExpertResidualWrapper`, :func:`train_expert_residual`;
* :mod:`~mskbench.paradigms.residual.action` — the combination of Eq. 38 (:func:`combine`,
  :func:`residual_penalty`, α and ``c_res``), which both execute.

``mskbench train TrackWalk ...`` trains a prior, ``mskbench train ResidualWalk --base RUN`` a residual;
``mskbench train Stand --base expert`` a residual over the expert (privileged).
"""

from mskbench.paradigms.residual.expert import (EXPERT_BASE, ExpertResidualWrapper, check_expert_residual,
                                                train_expert_residual)
from mskbench.paradigms.residual.tasks import (BUILTIN_BASES, ResidualRun, ResidualStairs, ResidualWalk, load_base,
                                               resolve_base)
from mskbench.paradigms.residual.wrapper import (FORMULA, ResidualBatchedEnv, ResidualMap, ResidualPolicy,
                                                 ResidualVectorEnv, ResidualWrapper, combine, residual_penalty,
                                                 residual_policy, train_residual)

__all__ = ["BUILTIN_BASES", "EXPERT_BASE", "ExpertResidualWrapper", "FORMULA", "ResidualBatchedEnv", "ResidualMap",
           "ResidualPolicy", "ResidualRun", "ResidualStairs", "ResidualVectorEnv", "ResidualWalk", "ResidualWrapper",
           "check_expert_residual", "combine", "load_base", "residual_penalty", "residual_policy", "resolve_base",
           "train_expert_residual", "train_residual"]

"""Training: ``mskbench.train(task, algo=..., backend=..., out=...) -> Run`` and what a run is made of.

* :mod:`~mskbench.training.run` — :func:`train` and :class:`Run` (the run directory's format is
  :mod:`mskbench.agents.run_dir`);
* :mod:`~mskbench.training.loop` — the iteration loop around any algorithm's learner;
* :mod:`~mskbench.training.evaluation` — the periodic evaluation (the protocol's episodes, through a
  paradigm's :class:`EvalWrapper`) that picks ``best.npz``;
* :mod:`~mskbench.training.presets` — the settings a run starts from, per algorithm and study.
"""

from mskbench.training.evaluation import EVAL_SEED, EvalWrapper, Evaluation, protocol_evaluation
from mskbench.training.loop import Trained, train_loop
from mskbench.training.presets import PRESETS, TOTAL_STEPS, resolve_config
from mskbench.training.run import BACKENDS, EnvWrapper, Run, make_env, task_settings, train

__all__ = ["BACKENDS", "EVAL_SEED", "PRESETS", "TOTAL_STEPS", "EnvWrapper", "EvalWrapper", "Evaluation", "Run",
           "Trained", "make_env", "protocol_evaluation", "resolve_config", "task_settings", "train", "train_loop"]

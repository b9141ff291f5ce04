"""Behaviour cloning with DAgger relabelling: the privileged expert distilled into PPO's actor.

The teacher is a built-in privileged controller (:mod:`mskbench.control`, ``expert`` by default): it
reads the simulator of the world it labels. The student is the network PPO trains
(:mod:`mskbench.agents.ppo_networks`: an MLP of ``hidden`` widths with tanh, its mean clipped to
[-1, 1]) and sees the policy observation only, normalised as PPO normalises it. Each iteration:

1. **collect** ``num_steps`` control steps in each of the ``num_envs`` CPU worlds. In every step the
   teacher labels the state the world is in (its action for that state); the action executed is the
   teacher's with probability ``beta`` and the student's otherwise (DAgger's mixture,
   ``beta = beta0 · beta_decay^i`` at iteration ``i``; the first iteration is the teacher's alone). Where
   the student acts but its action differs from the label by more than ``gate`` (mean squared
   difference), the teacher acts instead (a gate on the student, as HG-DAgger's expert takes over): the
   worlds stay near the states the teacher keeps them in, and the student's own states are labelled
   as far as it strays before the gate. Episodes run on across iterations and restart as the training
   env restarts them, or after ``horizon`` control steps (a restart for the data's sake, not an end the
   task declares: the episode is not counted among the finished); the teacher is reset with its world.
2. **aggregate**: the observations and labels join the data set of every earlier iteration
   (DAgger's aggregation; ``demos``, a file of ``mskbench record``, can seed it).
3. **fit**: ``updates`` Adam steps on minibatches drawn uniformly from the whole data set, the loss
   the mean squared error between the student's mean action and the label (``loss="activation"``:
   between the activations the two reach); observations normalised by the running statistics of every
   observation collected, their standard deviation at least ``std_floor``. The log-std of the checkpoint's
   Gaussian is then the maximum-likelihood one of the residuals (per muscle, over the last
   minibatches), so PPO started from it (``mskbench train --algo ppo --init RUN``) explores about as
   far as the student errs.

``ensemble`` fits several students side by side and deploys the mean of their actions, as one MLP of wider
layers. Settings tried in docs/distillation.md and not kept have left (:data:`~mskbench.agents.bc.config.REMOVED`).

The worlds run in ``workers`` processes (0: one per CPU core, at most one per world), each holding its
worlds and their teachers; the student's weights go to them once per iteration. Checkpoints hold the
student in PPO's layout (``params/policy``, ``params/log_std``, the normalisation), so a BC run loads
wherever a PPO checkpoint loads, plus ``format = "mskbench-bc"``, the optimiser and the BC settings;
the data set is kept beside the checkpoint, one file per iteration in ``dagger/`` (resuming reads it
back).

The package: :mod:`~mskbench.agents.bc.config` (the settings), :mod:`~mskbench.agents.bc.learner` (the
iteration and the fit), :mod:`~mskbench.agents.bc.worlds` (the worlds and their teachers, in worker
processes), :mod:`~mskbench.agents.bc.student` (the student's action in NumPy, the activation space, the
demonstrations, an ensemble's layout) and :mod:`~mskbench.agents.bc.checkpoint` (its checkpoints).
"""

from __future__ import annotations

from mskbench.agents.bc.checkpoint import CHECKPOINT_VERSION, FORMAT, BCState, bc_policy_checkpoint, export_policy
from mskbench.agents.bc.checkpoint import load_checkpoint, read_state, save_checkpoint
from mskbench.agents.bc.config import LOSSES, REMOVED, REMOVED_AT, BCConfig, removed_settings, stored_config
from mskbench.agents.bc.learner import DATA_DIR, LOG_STD_RANGE, BCLearner, Fit, draw_rows, fitted_log_std
from mskbench.agents.bc.learner import keep_newest, make_fit, read_dataset
from mskbench.agents.bc.student import ActivationSpace, read_demos, stack_members, student_action, widen_members
from mskbench.agents.bc.worlds import DaggerWorlds, WorldPool
from mskbench.agents.ppo_networks import adam_init

__all__ = ["CHECKPOINT_VERSION", "DATA_DIR", "FORMAT", "LOG_STD_RANGE", "LOSSES", "REMOVED", "REMOVED_AT",
           "ActivationSpace", "BCConfig", "BCLearner", "BCState", "DaggerWorlds", "Fit", "WorldPool", "adam_init",
           "bc_policy_checkpoint", "draw_rows", "export_policy", "fitted_log_std", "keep_newest", "load_checkpoint",
           "make_fit", "read_dataset", "read_demos", "read_state", "removed_settings", "save_checkpoint", "stack_members",
           "stored_config", "student_action", "widen_members"]

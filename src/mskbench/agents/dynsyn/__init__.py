"""DynSyn: muscle groups from the body's own dynamics, and the action map that acts through them.

DynSyn (He, Zuo, Ma & Sui, "DynSyn: Dynamical Synergistic Representation for
Efficient Learning and Control in Overactuated Embodied Systems", ICML 2024)
replaces the 416 muscle actions by one action per *group* of muscles whose
lengths move together, plus a small, state-dependent correction weight per
muscle. This module is the learner-independent part of the MSK-Bench
DynSyn-SAC baseline: the groups (:func:`compute_groups`, saved as JSON by
``mskbench synergies``), the map from a learner's action to muscle actions
(:func:`dynsyn_muscle_actions`, written once with an array namespace ``xp`` so
a JAX actor runs the same code), the bound's schedule
(:class:`WeightBoundSchedule`) and two ways to put the map between a learner
and the env (:class:`DynSynActionMap`, :class:`DynSynActionWrapper`).

Sources (facts and numbers only; the code here is our own)
----------------------------------------------------------
* [MSK] MSK-Bench, ``rl_paradigms/msgym/DynSyn/SAC_DynSyn.py``
  @ d7a289173d4b9301b23c74d00a59cf39233aa06a: the bound of the weights at
  ``t`` transitions is ``min(max(0, k·(t − a)), 0.1)``; SAC's target entropy is
  ``−(number of groups)``.
* [CFG] MSK-Bench, ``rl_paradigms/msgym/configs/msk_bench_walk.json``
  @ 4ffd2d661cad201cd1fb8bb55a177e9260e91df1 (``msk_bench_reach.json``
  @ d7a2891 is the same): 76 groups over the 416 MyoFullBody muscles,
  ``dynsyn_k`` 5e-9, ``dynsyn_a`` 3e7 (so the bound is 0 until 3e7 transitions
  and reaches 0.1 at 5e7 = ``total_timesteps``), ``dynsyn_log_std`` 0.5, 64 envs.
  None of its groups mixes left and right muscles.
* [LAYER] ``SAC_DynSyn.py`` imports ``DynSyn.DynSynLayer``, which MSK-Bench does
  not ship; the upstream layer it names (Beanpow/DynSyn, per the msgym README's
  attribution) is published in zchJo/MyoChallenge24-DynSyn
  ``DynSyn/DynSyn/DynSynLayer.py`` @ 59625d8560109b26f2a4ee4395451a410b733ef9
  and cherylwang20/DynSyn ``dynsyn/algorithms/common/dynsynLayer.py``
  @ 2e4a7392e7935a2eeb37ce57e403b200999d4811: the formula below, the 0.1
  scale, the first muscle of each group left unweighted, the final clip.
* [GEN] cherylwang20/DynSyn ``dynsyn/dynsyn.py`` and
  ``configs/DynSynGen/dynsyn.yaml`` @ 221d847cc0173737705aaaeb6f122326140b093c
  (the upstream's group generator): zero muscle action; every 10 control
  steps all joint velocities set to U(−1, 1)·10 rad/s (MyoFullBody entry:
  ``control_amp`` 10, ``control_freq`` 10) with the root's velocity zeroed;
  a reset every 500 control steps; each muscle's length recorded after every
  control step (500,000 of them); lengths min–max normalised per muscle;
  cosine similarity of the normalised signals in windows of 100 samples,
  averaged over windows; distance ``max(1 − similarity, 0)``; k-medoids by
  FasterPAM (``kmedoids.KMedoids(method="fasterpam", max_iter=10000)``) from 20
  random starts (``random_state`` = seed + i), keeping the result whose loss
  occurs most often (ties: the smallest loss).
* [PAPER] He et al. 2024 (arXiv 2407.11472): groups by K-Medoids on
  correlations of muscle-length trajectories under random perturbations; a
  unified action per group and state-dependent per-muscle correction weights,
  both tanh-squashed Gaussians from the actor's MLPs. The authors' rebuttal
  (sites.google.com/view/dynsyn/rebuttal, Fig. R.1) reports the grouping
  converged by 25,600 samples (compared with 500,000).

In three modules: :mod:`~mskbench.agents.dynsyn.grouping` (the groups, computed from the body's own dynamics:
its choices are listed there), :mod:`~mskbench.agents.dynsyn.action_map` (the weight bound's schedule, the map,
the groups file and the map between a learner and the env: where the weights live is told there) and
:mod:`~mskbench.agents.dynsyn.learner` (a learner's DynSyn settings to its action map); every name is importable
from here.
"""

from mskbench.agents.dynsyn.action_map import (FORMAT, FORMAT_VERSION, MSK_BENCH_SCHEDULE, WEIGHT_LOG_STD, WEIGHT_SCALE,
                                               DynSynActionMap, DynSynActionWrapper, SynergyGroups, WeightBoundSchedule,
                                               dynsyn_muscle_actions, stored_map)
from mskbench.agents.dynsyn.grouping import (CONSTANT_LENGTH_M, CORRELATION_WINDOW, DEFAULT_N_GROUPS, DEFAULT_STEPS,
                                             EPISODE_STEPS, KICK_AMPLITUDE, KICK_EVERY, MAX_ITER, RESTARTS,
                                             allocate_groups, compute_groups, fasterpam, kmedoids, length_similarity,
                                             record_muscle_lengths)
from mskbench.agents.dynsyn.learner import LEARNER_SETTINGS, learner_action_map
from mskbench.body.sides import SIDES, muscle_sides

__all__ = ["CONSTANT_LENGTH_M", "CORRELATION_WINDOW", "DEFAULT_N_GROUPS", "DEFAULT_STEPS", "EPISODE_STEPS", "FORMAT",
           "FORMAT_VERSION", "KICK_AMPLITUDE", "KICK_EVERY", "LEARNER_SETTINGS", "MAX_ITER", "MSK_BENCH_SCHEDULE",
           "RESTARTS", "SIDES", "WEIGHT_LOG_STD", "WEIGHT_SCALE", "DynSynActionMap", "DynSynActionWrapper",
           "SynergyGroups", "WeightBoundSchedule", "allocate_groups", "compute_groups", "dynsyn_muscle_actions",
           "fasterpam", "kmedoids", "learner_action_map", "length_similarity", "muscle_sides", "record_muscle_lengths",
           "stored_map"]

"""Agentic reward tuning (App. A-E, Eqs. 15-17; Table III).

During an ordinary training run the task's reward ``R_t = Σ_i w_i r_i,t``
(Eq. 15) keeps its terms, but its weights ``w`` are rewritten every ``K``
environment steps: the training worlds' recent statistics are aggregated
(Eq. 16: forward speed, torso pitch, posture stability, tracking quality,
termination causes, the mean of every reward term), a *reasoner* proposes new
weights from them and the current ones (Eq. 17), the proposal is bounded and
the result is written to a shared weights file that every training world
reloads.

Pieces, each usable on its own:

* :func:`bound_weights` — the bounds: every nonzero weight moves by at most
  ``relative_limit`` (20 %) of its magnitude per update and keeps its sign,
  zero weights stay zero, and ``‖w‖₁ = l1_norm`` (40) holds exactly. Both
  constraints hold together: the proposal is projected (Euclidean, on the
  magnitudes) onto the set where both hold — clipping to ±20 % and then
  rescaling to ‖w‖₁ = 40 could break the 20 % bound. The initial weights are
  scaled to ‖w‖₁ = 40 once (:func:`normalize_l1`). ``l1_norm=None`` is the
  original, unnormalised setting (Fig. 3a): nonzero weights clipped to ±20 %,
  a zero weight may take any proposed value. Facts from the authors' code:
  ``rl_paradigms/agentic_walk/constraints.py@d7a2891``.
* :class:`WeightStore` — the shared weights file: JSON ``{"version", "weights",
  ...}`` replaced atomically (temporary file + ``os.replace``); read-modify-write
  under an exclusive ``fcntl.flock`` on a lock file, so concurrent updaters
  (threads or processes) lose no update; readers need no lock and reload when
  the file changes.
* :class:`StatsWindow` — Eq. 16's aggregate over the steps since the last update.
* :class:`RuleReasoner` (deterministic, offline) and :class:`HTTPReasoner` (an
  OpenAI-compatible chat-completions API; endpoint, model and key from
  ``MSKBENCH_LLM_URL``, ``MSKBENCH_LLM_MODEL``, ``MSKBENCH_LLM_KEY``; the
  prompt is :data:`SYSTEM_PROMPT` + :data:`USER_PROMPT`, the reply is parsed
  by :func:`parse_reply`). Any object with ``name`` and
  ``propose(weights, stats) -> Proposal`` is a reasoner.
* :class:`AgenticTuner` — ties them to a training run: it wraps the CPU
  training env (:class:`AgenticVectorEnv`: every world's reward is recomputed
  from its unweighted terms with the weights in force), counts environment
  steps, runs the reasoner every ``every_steps`` under a timeout and the
  store's lock, and logs every update — applied or not, with the reasoner's
  reason or the failure — to ``agentic_updates.jsonl`` in the run directory.
  A reasoner that raises, hangs past ``timeout_s`` or returns garbage leaves
  the weights as they are and training goes on.
* :func:`train_agentic` — :func:`mskbench.training.train` with a tuner, then
  :func:`table_iii` (survival steps, tracking RMSE, mean activation) of the
  run's checkpoint, written to ``agentic_summary.json``.

In three modules: :mod:`~mskbench.paradigms.agentic.weights` (the bounds, the weights file),
:mod:`~mskbench.paradigms.agentic.reasoners` (the reasoners) and :mod:`~mskbench.paradigms.agentic.tuner`
(the statistics, the wrapped training worlds, the tuner, Table III, :func:`train_agentic`); every name is
importable from here.
"""

from mskbench.paradigms.agentic.reasoners import (ENV_KEY, ENV_MODEL, ENV_URL, NOT_FALLS, REASONERS, SYSTEM_PROMPT,
                                                  USER_PROMPT, HTTPReasoner, Proposal, Reasoner, RuleReasoner,
                                                  call_with_timeout, make_reasoner, parse_reply)
from mskbench.paradigms.agentic.tuner import (DEFAULT_EVERY_STEPS, DEFAULT_TIMEOUT_S, LOG_FILE, SUMMARY_FILE,
                                              AgenticRun, AgenticTuner, AgenticVectorEnv, RewardWeightWrapper,
                                              StatsWindow, evaluate_run, table_iii, train_agentic)
from mskbench.paradigms.agentic.weights import (L1_NORM, RELATIVE_LIMIT, WEIGHTS_FILE, WeightStore, bound_weights,
                                                normalize_l1)

__all__ = ["DEFAULT_EVERY_STEPS", "DEFAULT_TIMEOUT_S", "ENV_KEY", "ENV_MODEL", "ENV_URL", "L1_NORM", "LOG_FILE",
           "NOT_FALLS", "REASONERS", "RELATIVE_LIMIT", "SUMMARY_FILE", "SYSTEM_PROMPT", "USER_PROMPT", "WEIGHTS_FILE",
           "AgenticRun", "AgenticTuner", "AgenticVectorEnv", "HTTPReasoner", "Proposal", "Reasoner",
           "RewardWeightWrapper", "RuleReasoner", "StatsWindow", "WeightStore", "bound_weights", "call_with_timeout",
           "evaluate_run", "make_reasoner", "normalize_l1", "parse_reply", "table_iii", "train_agentic"]

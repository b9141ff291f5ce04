"""Control paradigms composed from the benchmark's parts (DESIGN.md: "a paradigm is a composition, not a fork").

* :mod:`mskbench.paradigms.agentic` — agentic reward tuning (App. A-E, Table III): a reasoner
  rewrites the task's reward weights every K environment steps of an ordinary training run,
  under bounds, through a shared weights file every training world reads.
* :mod:`mskbench.paradigms.direct` — direct external control (App. A-F, Table IV): a paused,
  replayable, file-mediated session that any controller (a person, a script, a language model)
  drives one held muscle command at a time.
* :mod:`mskbench.paradigms.latent` — latent-action RL, hard mode (App. A-G): an expert-trained
  encoder–decoder filters the learner's muscle actions (docs/latent.md).
* :mod:`mskbench.paradigms.residual` — residual adaptation over a frozen base (Sec. III, App. A-J): the
  residual tasks over a tracking prior, and residual RL over the privileged expert (docs/residual.md).

How they combine in one training run (at most one shapes its env), from ``mskbench train``'s options:
:func:`mskbench.paradigms.compose.compose`.

``mskbench train TASK --agentic rule|http`` and ``mskbench direct start|act|report`` are the first two's
command lines; docs/paradigms.md describes both.
"""

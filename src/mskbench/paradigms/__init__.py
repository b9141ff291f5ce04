"""Control paradigms composed from the benchmark's parts (DESIGN.md: "a paradigm is a composition, not a fork").

* :mod:`mskbench.paradigms.agentic` — agentic reward tuning (App. A-E, Table III): a reasoner
  rewrites the task's reward weights every K environment steps of an ordinary training run,
  under bounds, through a shared weights file every training world reads.
* :mod:`mskbench.paradigms.direct` — direct external control (App. A-F, Table IV): a paused,
  replayable, file-mediated session that any controller (a person, a script, a language model)
  drives one held muscle command at a time.

``mskbench train TASK --agentic rule|http`` and ``mskbench direct start|act|report`` are their
command lines; docs/paradigms.md describes both.
"""

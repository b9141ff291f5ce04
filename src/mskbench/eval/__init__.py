"""Evaluation: the shared protocol (units, runner, executors), results store, leaderboard.

Submodules are imported explicitly (``mskbench.eval.episodes``,
``mskbench.eval.store``, ...) so that reading results or a leaderboard does
not load the simulator.
"""

"""Evaluation: episode runner (the full protocol builds on it)."""

from mskbench.eval.episodes import EpisodeResult, run_episode

__all__ = ["EpisodeResult", "run_episode"]

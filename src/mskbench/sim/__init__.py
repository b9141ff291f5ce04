"""Simulator backends and the state view they share."""

from mskbench.sim.state import StateView, quat_tilt

__all__ = ["StateView", "quat_tilt"]

"""Training-free experts: a whole-body muscle QP driven by task behaviours.

They are *privileged*: they read the simulator (model, contacts, props, the task's state). See
:mod:`mskbench.control.qp` (the QP; where a body can bear load: :mod:`mskbench.control.support_geometry`),
:mod:`mskbench.control.balance` (the capture-point law),
:mod:`mskbench.control.behaviours` (per-task targets), :mod:`mskbench.control.expert` (the policy)
and :mod:`mskbench.control.registry` (the built-in ``expert`` and ``hold``).
"""

from mskbench.control.expert import Behaviour, Context, ExpertPolicy
from mskbench.control.qp import PointTask, Solution, Targets, Weights, WholeBodyQP
from mskbench.control.registry import CONTROLLERS, EXPERT_BEHAVIOURS, behaviour_for, make_controller, serves

__all__ = ["Behaviour", "CONTROLLERS", "Context", "EXPERT_BEHAVIOURS", "ExpertPolicy", "PointTask", "Solution",
           "Targets", "Weights", "WholeBodyQP", "behaviour_for", "make_controller", "serves"]

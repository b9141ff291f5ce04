"""The residual action map (Eq. 2 / 38): a frozen base action plus a bounded residual, one formula for
NumPy and JAX (``xp``).

The residual tasks over a tracking prior (:mod:`~mskbench.paradigms.residual.wrapper`,
:mod:`~mskbench.paradigms.residual.tasks`) and residual RL over the privileged expert
(:mod:`~mskbench.paradigms.residual.expert`) both execute :func:`combine` and pay :func:`residual_penalty`,
with the same α and ``c_res``; they are defined here once, so that neither copies them.
"""

from __future__ import annotations

FORMULA = "clip(a_base + alpha * clip(a_res, -1, 1), -1, 1)"
#: α of Eq. 38 where it is constant (ResidualRun, ResidualStairs, the swing side of ResidualWalk, the expert's base).
ALPHA = 0.6
#: ``c_res``: the weight of the residual penalty ``mean(a_res²)`` (the paper's −0.02).
C_RES = -0.02


def combine(a_base, a_res, alpha, xp):
    """Eq. 38: ``clip(a_base + α · clip(a_res, −1, 1), −1, 1)`` (any broadcastable shapes)."""
    return xp.clip(a_base + alpha * xp.clip(a_res, -1.0, 1.0), -1.0, 1.0)


def residual_penalty(a_res, xp):
    """``mean(a_res²)`` over the last axis (the L2 residual penalty before its weight ``c_res``)."""
    return xp.mean(a_res**2, axis=-1)

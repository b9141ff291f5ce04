"""How a policy's action ``a ∈ [−1, 1]`` becomes a muscle excitation ``u ∈ [0, 1]``.

``"linear"`` (default) is the paper's map, ``u = (a + 1) / 2`` (App. A-G).
``"myosuite"`` is the map of the authors' original code (MyoSuite's
``BaseV0.step``, ``msk_bench/envs/msk/base_v0.py@740316b``): the logistic
``u = 1 / (1 + exp(−5 (a − 0.5)))`` applied to ``a ∈ [−1, 1]`` as is, so
``a = 0`` gives ``u ≈ 0.076`` and the range is ``[0.0006, 0.924]``. It is
offered only to compare with numbers produced by that code. One formula for
NumPy and JAX (``xp``).
"""

from __future__ import annotations

#: The action maps, the paper's first.
ACTION_MAPS = ("linear", "myosuite")


def check_action_map(name: str) -> str:
    """``name`` if it is an action map, else a ``ValueError`` naming the valid ones."""
    if name not in ACTION_MAPS:
        raise ValueError(f"unknown action_map {name!r}; valid: {', '.join(ACTION_MAPS)}")
    return name


def excitation(action, name: str, xp):
    """Muscle excitations for ``action`` (already clipped to [−1, 1]) under the map ``name``."""
    if name == "linear":
        return 0.5 * (action + 1.0)
    if name == "myosuite":
        return 1.0 / (1.0 + xp.exp(-5.0 * (action - 0.5)))
    raise ValueError(f"unknown action_map {name!r}; valid: {', '.join(ACTION_MAPS)}")


def excitation_range(name: str) -> tuple[float, float]:
    """The excitations the map ``name`` can produce from actions in [−1, 1]."""
    import numpy as np

    lo, hi = excitation(np.array([-1.0, 1.0]), name, np)
    return float(lo), float(hi)


def action_for(u, name: str, xp):
    """The action in [−1, 1] whose excitation under the map ``name`` is ``u`` (the map's inverse;
    excitations outside :func:`excitation_range` give the nearest end)."""
    if name == "linear":
        return xp.clip(2.0 * u - 1.0, -1.0, 1.0)
    if name == "myosuite":
        v = xp.clip(u, 1e-9, 1.0 - 1e-9)
        return xp.clip(0.5 + xp.log(v / (1.0 - v)) / 5.0, -1.0, 1.0)
    raise ValueError(f"unknown action_map {name!r}; valid: {', '.join(ACTION_MAPS)}")

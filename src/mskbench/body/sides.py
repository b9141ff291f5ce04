"""Which side of the body each muscle is on, from the muscle names alone (no model, no simulator)."""

from __future__ import annotations

from collections.abc import Sequence

#: The body sides a muscle can be on (:func:`muscle_sides`).
SIDES = ("right", "left", "midline")
_LEFT_SUFFIXES = ("_left", "_l")
_RIGHT_SUFFIXES = ("_right", "_r")


def muscle_sides(names: Sequence[str]) -> tuple[str, ...]:
    """``'right'``, ``'left'`` or ``'midline'`` for each muscle name, from the names alone.

    Names ending in ``_r``/``_right`` are right, ``_l``/``_left`` left; an unsuffixed name whose
    ``_left``/``_l`` twin exists is right (MyoFullBody's right arm, whose twins end in ``_left``), one
    whose ``_right``/``_r`` twin exists is left; anything else is midline (MyoFullBody has none).
    Sides follow the names, which is what a controller reads (DynSyn's groups, the residual study's
    per-limb α).
    """
    present = {n.lower() for n in names}
    out = []
    for name in names:
        low = name.lower()
        if low.endswith(_LEFT_SUFFIXES):
            out.append("left")
        elif low.endswith(_RIGHT_SUFFIXES):
            out.append("right")
        elif any(low + s in present for s in _LEFT_SUFFIXES):
            out.append("right")
        elif any(low + s in present for s in _RIGHT_SUFFIXES):
            out.append("left")
        else:
            out.append("midline")
    return tuple(out)

"""Whole-body muscle recruitment by anatomical family (App. A-I, Eqs. 33-37, Table XVIII).

Each actuator is put in a muscle family by case-sensitive substring keywords on
its name (Table XVIII, reproduced in :data:`MUSCLE_FAMILIES`). The family
activation mass is the sum of the muscles' time-averaged activations (Eq. 35),
and each family's share is its mass over the total family mass (Eqs. 36-37).

Assignment rule (overlapping keywords)
--------------------------------------
The keywords of Table XVIII overlap: ``"PL"`` (palmaris longus, a wrist
flexor) is a substring of ``"EPL"`` and ``"APL"`` (wrist/finger extensors),
``"SUP"`` (supinator) of ``"SUPSP"`` (supraspinatus), ``"TP"`` (Other
Leg/Foot) of ``"Ps_L1_TP_r"``, ``"RF"`` or ``"TA"`` could sit inside other
names. Eq. 34 alone would put such a muscle in several families, which would
count its activation twice. We therefore assign every actuator to exactly one
family:

    **the longest keyword contained in the name wins; ties in length go to the
    family listed first in Table XVIII.**

A name with no keyword is ``"Unclassified"``.

Why not "first family in table order that matches"? On the 416 MyoFullBody
actuators the two rules agree everywhere except ``EPL``, ``APL``,
``EPL_left`` and ``APL_left``: first-match files extensor pollicis longus and
abductor pollicis longus under Wrist/Finger Flexors (via ``"PL"``, since the
flexor row precedes the extensor row), which is anatomically wrong and
contradicts the table, which lists ``EPL`` and ``APL`` explicitly as
extensors. Longest-match honours the more specific keyword and gives
``SUPSP -> Rotator Cuff`` (not ``SUP``) and ``Ps_L1_TP_r -> Paraspinals (Deep)``
(not ``TP``). With this rule all 416 MyoFullBody actuators are classified
(none Unclassified).

Note: the ``Ps_*`` actuators are fascicles of psoas major in the model; they
are kept under "Paraspinals (Deep)" because that is where Table XVIII puts them.

Percentages
-----------
``A_total`` (Eq. 36) is the sum over the 20 Table XVIII families only, so the
Unclassified mass is NOT in the denominator of ``P_k``; it is reported
separately (``unclassified_mass``, ``unclassified_names``), together with its
share of all activation mass (``unclassified_fraction``), so one can check that
it is negligible.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from mskbench.metrics._validate import as_float_array, as_names, check_unit_interval

UNCLASSIFIED = "Unclassified"

#: Table XVIII: (body region, muscle family, case-sensitive name keywords), in table order.
MUSCLE_FAMILIES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("Core and Back", "Paraspinals (Deep)", ("Ps_",)),
    ("Core and Back", "Iliocostalis", ("IL_",)),
    ("Core and Back", "Longissimus (Erector Spinae)", ("LTpT", "LTpL")),
    ("Core and Back", "Abdominals", ("rect_abd", "EO", "IO")),
    ("Core and Back", "Other Trunk/Back", ("LAT", "LD", "QL", "MF_m", "TRAP", "RHOM")),
    ("Core and Back", "Pectorals", ("PEC",)),
    ("Upper Extremity", "Deltoids", ("DELT",)),
    ("Upper Extremity", "Rotator Cuff", ("SUPSP", "INFSP", "SUBSC", "TMIN", "TMAJ", "CORB")),
    ("Upper Extremity", "Elbow Flexors", ("BIC", "BRA", "BRD")),
    ("Upper Extremity", "Elbow Extensors", ("TRI", "ANC")),
    ("Upper Extremity", "Forearm Pronators/Supinators", ("SUP", "PT", "PQ")),
    ("Upper Extremity", "Wrist/Finger Flexors", ("FCR", "FCU", "PL", "FDS", "FDP", "FPL")),
    ("Upper Extremity", "Wrist/Finger Extensors", ("ECR", "ECU", "EDC", "EDM", "EIP", "EPL", "EPB", "APL")),
    ("Upper Extremity", "Hand Intrinsics", ("OP", "RI2", "RI3", "RI4", "RI5", "LU_", "UI_")),
    (
        "Lower Extremity",
        "Glutes (Hip Extensors)",
        ("GMAX", "GMED", "GMIN", "PIR", "GEM", "OINT", "QFM", "glmax", "glmed", "glmin", "piri"),
    ),
    (
        "Lower Extremity",
        "Quadriceps (Knee Extensors)",
        ("VAS", "RF", "VI", "VL", "VM", "vasint", "vaslat", "vasmed", "recfem"),
    ),
    (
        "Lower Extremity",
        "Hip Flexors/Adductors",
        ("ILIACUS", "PSOAS", "ADD", "PECT", "GRAC", "TFL", "iliacus", "psoas", "add", "grac", "tfl", "sart"),
    ),
    (
        "Lower Extremity",
        "Hamstrings (Knee Flexors)",
        ("BFLH", "BFSH", "SEMIM", "SEMIT", "bflh", "bfsh", "semiten", "semimem"),
    ),
    ("Lower Extremity", "Calves (Plantar Flexors)", ("GAS", "SOL", "soleus", "gaslat", "gasmed")),
    (
        "Lower Extremity",
        "Other Leg/Foot",
        (
            "TA", "EDL", "EHL", "FDL", "FHL", "TP", "PER",
            "edl", "ehl", "fdl", "fhl", "perbrev", "tibant", "tibpost", "perlong",
        ),
    ),
)

#: The 20 family names in Table XVIII order (without "Unclassified").
FAMILY_NAMES: tuple[str, ...] = tuple(f for _, f, _ in MUSCLE_FAMILIES)

#: Family name -> body region ("Core and Back", "Upper Extremity", "Lower Extremity").
FAMILY_REGION: Mapping[str, str] = MappingProxyType({f: r for r, f, _ in MUSCLE_FAMILIES})


def family_of(name: str) -> str:
    """The Table XVIII muscle family of one actuator name.

    Rule (see the module docstring): among all keywords that are substrings of
    ``name`` (case-sensitive), the longest wins; equal lengths go to the family
    listed first in Table XVIII. No match gives ``"Unclassified"``.

    Parameters
    ----------
    name:
        Actuator name, e.g. ``"glmed1_r"`` or ``"EPL_left"``.

    Returns
    -------
    str
        One of :data:`FAMILY_NAMES`, or ``"Unclassified"``.

    Raises
    ------
    ValueError
        If ``name`` is not a string.
    """
    if not isinstance(name, str):
        raise ValueError(f"name must be a string, got {type(name).__name__}")
    best_family, best_len = UNCLASSIFIED, 0
    for _, family, keywords in MUSCLE_FAMILIES:
        for kw in keywords:
            if len(kw) > best_len and kw in name:  # strict '>' keeps the earlier family on ties
                best_family, best_len = family, len(kw)
    return best_family


@dataclass(frozen=True)
class Recruitment:
    """Result of :func:`recruitment`. Masses are sums of mean activations (dimensionless)."""

    mass: Mapping[str, float]
    """``A_k`` per family (Eq. 35), all 20 families in table order (0.0 if empty)."""
    percent: Mapping[str, float]
    """``P_k = 100 A_k / A_total`` per family (Eq. 37); all 0.0 if ``A_total`` is 0."""
    total: float
    """``A_total``: sum of ``A_k`` over the 20 families (Eq. 36), Unclassified excluded."""
    unclassified_mass: float
    """Summed mean activation of muscles matching no keyword (not in ``total``)."""
    unclassified_fraction: float
    """``unclassified_mass / (total + unclassified_mass)``, 0.0 if both are 0."""
    unclassified_names: tuple[str, ...]
    """Names that matched no keyword, in input order."""
    families: Mapping[str, str]
    """Actuator name -> assigned family (``"Unclassified"`` included)."""


def recruitment(mean_activations, actuator_names) -> Recruitment:
    """Activation mass and percentage per Table XVIII muscle family (Eqs. 35-37).

    Parameters
    ----------
    mean_activations:
        Time-averaged activation of each muscle over one rollout (Eq. 33),
        shape (M,), dimensionless in [0, 1] (1e-6 tolerance, then clipped).
        For a (T, M) activation record pass ``activations.mean(axis=0)``.
    actuator_names:
        The M actuator names, in the same order.

    Returns
    -------
    Recruitment
        Per-family mass ``A_k`` and percentage ``P_k`` (denominator: the 20
        families only), the Unclassified mass, its share and names, and the
        name -> family assignment. Families are assigned by :func:`family_of`.

    Raises
    ------
    ValueError
        If ``mean_activations`` is not 1-D, non-numeric, non-finite or outside
        [0, 1], or if ``actuator_names`` is not M strings.
    """
    a = as_float_array(mean_activations, "mean_activations", ndim=1)
    a = check_unit_interval(a, "mean_activations")
    names = as_names(actuator_names, "actuator_names", length=a.size)

    mass = dict.fromkeys(FAMILY_NAMES, 0.0)
    assigned: dict[str, str] = {}
    unclassified: list[str] = []
    unclassified_mass = 0.0
    for value, name in zip(a, names):
        fam = family_of(name)
        assigned[name] = fam
        if fam == UNCLASSIFIED:
            unclassified.append(name)
            unclassified_mass += float(value)
        else:
            mass[fam] += float(value)

    total = float(sum(mass.values()))
    percent = {f: (100.0 * m / total if total > 0.0 else 0.0) for f, m in mass.items()}
    everything = total + unclassified_mass
    return Recruitment(
        mass=MappingProxyType(mass),
        percent=MappingProxyType(percent),
        total=total,
        unclassified_mass=unclassified_mass,
        unclassified_fraction=(unclassified_mass / everything if everything > 0.0 else 0.0),
        unclassified_names=tuple(unclassified),
        families=MappingProxyType(assigned),
    )


__all__ = [
    "FAMILY_NAMES",
    "FAMILY_REGION",
    "MUSCLE_FAMILIES",
    "UNCLASSIFIED",
    "Recruitment",
    "family_of",
    "recruitment",
]

"""Public metrics: pure NumPy/SciPy functions, usable on anyone's rollouts.

No simulator imports here; shapes and units are documented per function.
All functions raise ``ValueError`` on wrong shapes, lengths or non-finite input.

========================================  ===============================================
metric                                    paper
========================================  ===============================================
:func:`activation_cost`                   App. A-B3, Eq. 7
:func:`mean_squared_jerk`,                App. A-B4, Eqs. 8-10
:func:`joint_smoothness`
:func:`peak_efficiency`                   App. A-B5, Eqs. 11-12
:func:`robustness_auc`                    App. A-B2
:func:`emg_envelope_similarity`,          App. A-B6 and A-H, Eqs. 13-14, 29-32
:func:`emg_similarity` and helpers
:func:`recruitment`, :func:`family_of`    App. A-I, Eqs. 33-37, Table XVIII
:func:`site_tracking_error`,              App. A-F, Eqs. 19-20; the imitation prior and
:func:`tracking_rmse`,                    residual study (Sec. II T2, Fig. 5f, Table V)
:func:`divergence_time` and the
joint / root / relative / absolute
site errors
:func:`gait_progress`,                    not in the paper: steps taken, distance covered
:func:`touchdowns`, :func:`foot_loads`    and forward speed of gait episodes
========================================  ===============================================
"""

from mskbench.metrics.activation import activation_cost
from mskbench.metrics.edm import SimplexResult, embed, simplex_predict, simplex_rho
from mskbench.metrics.efficiency import PeakEfficiency, peak_efficiency
from mskbench.metrics.emg import (
    N_POINTS,
    SANTUZ_TO_MYOFULLBODY,
    EMGReference,
    EMGSimilarity,
    EnvelopeMatch,
    MeanEnvelope,
    cycle_envelopes,
    emg_envelope_similarity,
    emg_similarity,
    heel_strikes,
    load_emg_reference,
    mean_envelope,
)
from mskbench.metrics.recruitment import (
    FAMILY_NAMES,
    FAMILY_REGION,
    MUSCLE_FAMILIES,
    UNCLASSIFIED,
    Recruitment,
    family_of,
    recruitment,
)
from mskbench.metrics.progress import GaitProgress, foot_loads, gait_progress, touchdowns
from mskbench.metrics.robustness import robustness_auc
from mskbench.metrics.smoothness import joint_smoothness, mean_squared_jerk
from mskbench.metrics.tracking import (  # App. A-F, Eqs. 19-20; the imitation prior's components
    absolute_site_error,
    divergence_time,
    joint_position_error,
    relative_site_error,
    root_position_error,
    site_tracking_error,
    site_tracking_rmse,
    tracking_rmse,
)

__all__ = [
    "FAMILY_NAMES",
    "FAMILY_REGION",
    "MUSCLE_FAMILIES",
    "N_POINTS",
    "SANTUZ_TO_MYOFULLBODY",
    "UNCLASSIFIED",
    "EMGReference",
    "EMGSimilarity",
    "EnvelopeMatch",
    "GaitProgress",
    "MeanEnvelope",
    "PeakEfficiency",
    "Recruitment",
    "SimplexResult",
    "activation_cost",
    "cycle_envelopes",
    "embed",
    "emg_envelope_similarity",
    "emg_similarity",
    "family_of",
    "foot_loads",
    "gait_progress",
    "heel_strikes",
    "joint_smoothness",
    "load_emg_reference",
    "mean_envelope",
    "mean_squared_jerk",
    "peak_efficiency",
    "recruitment",
    "robustness_auc",
    "simplex_predict",
    "simplex_rho",
    "site_tracking_error",
    "touchdowns",
    "tracking_rmse",
    "divergence_time",
    "absolute_site_error",
    "joint_position_error",
    "relative_site_error",
    "root_position_error",
    "site_tracking_rmse",
]

"""Scalar metrics against hand-computed values: activation cost, jerk/smoothness,
peak efficiency, robustness AUC and Table XVIII muscle recruitment."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from mskbench.metrics import (
    FAMILY_NAMES,
    UNCLASSIFIED,
    activation_cost,
    family_of,
    joint_smoothness,
    mean_squared_jerk,
    peak_efficiency,
    recruitment,
    robustness_auc,
)


# -- package -----------------------------------------------------------------------------------
def test_metrics_import_does_not_load_simulator():
    code = "import sys, mskbench.metrics; print(any(m.split('.')[0] in ('mujoco', 'jax') for m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_public_functions_have_docstrings_with_shapes():
    import mskbench.metrics as M

    for name in M.__all__:
        obj = getattr(M, name)
        if callable(obj) and not isinstance(obj, type):
            assert obj.__doc__ and "Raises" in obj.__doc__, name
            assert "shape" in obj.__doc__ or "name" in obj.__doc__, name


# -- activation cost (Eq. 7) -----------------------------------------------------------------
def test_activation_cost_constant_half():
    assert activation_cost(np.full((7, 416), 0.5)) == pytest.approx(0.25, abs=1e-15)


def test_activation_cost_hand_computed():
    # (0 + 1 + .25 + .04) / 4 at t0 ; (1 + 1 + 0 + 0) / 4 at t1 -> mean of .3225 and .5
    a = [[0.0, 1.0, 0.5, 0.2], [1.0, 1.0, 0.0, 0.0]]
    assert activation_cost(a) == pytest.approx((1.29 / 4 + 2.0 / 4) / 2, abs=1e-15)


def test_activation_cost_tolerates_roundoff_only():
    assert activation_cost([[1.0 + 5e-7, -5e-7]]) == pytest.approx(0.5, abs=1e-12)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        activation_cost([[1.01, 0.0]])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        activation_cost([[-0.1, 0.0]])


@pytest.mark.parametrize(
    "bad, msg",
    [
        (np.full(5, 0.5), "2-D"),
        (np.full((2, 2, 2), 0.5), "2-D"),
        (np.zeros((0, 3)), "at least 1"),
        ([[0.5, np.nan]], "finite"),
        ([[0.5, np.inf]], "finite"),
        ([["a", "b"]], "numeric"),
    ],
)
def test_activation_cost_errors(bad, msg):
    with pytest.raises(ValueError, match=msg):
        activation_cost(bad)


# -- jerk and smoothness (Eqs. 8-10) -----------------------------------------------------------
def test_jerk_tiny_hand_example():
    # dt = 0.5 -> dt^2 = 0.25. t=2: joint0 (0-2+0)/.25=-8, joint1 (0-0+1)/.25=4;
    # t=3: joint0 (2-0+1)/.25=12, joint1 0.  Mean of 64, 16, 144, 0 = 56.
    qvel = [[0.0, 1.0], [1.0, 0.0], [0.0, 0.0], [2.0, 0.0]]
    assert mean_squared_jerk(qvel, 0.5) == pytest.approx(56.0, abs=1e-12)
    assert joint_smoothness(qvel, 0.5) == pytest.approx(math.log10(56.0 + 1e-12), abs=1e-14)


def test_jerk_exact_sinusoid_second_difference():
    # v = A sin(w t dt + p): the second difference is exactly
    # -4 sin^2(w dt / 2) * A sin(w (t-1) dt + p), so D2 v = that / dt^2.
    dt, w, n = 0.01, 2 * np.pi * 1.3, 257
    amps, phases = np.array([1.0, 0.3, 2.5]), np.array([0.0, 0.7, -1.1])
    t = np.arange(n)
    qvel = amps * np.sin(w * dt * t[:, None] + phases)
    k = 4.0 * np.sin(w * dt / 2.0) ** 2 / dt**2
    d2 = -k * amps * np.sin(w * dt * (t[2:, None] - 1) + phases)  # steps t = 2..n-1
    expected = float(np.sum(d2**2) / ((n - 2) * 3))
    assert mean_squared_jerk(qvel, dt) == pytest.approx(expected, rel=1e-12)


def test_jerk_sinusoid_matches_continuous_limit():
    # Many full periods, fine dt: J_sq -> A^2 w^4 / 2 (relative FD error ~ (w dt)^2 / 6).
    dt, f, amp = 0.001, 2.0, 0.8
    w = 2 * np.pi * f
    t = np.arange(int(10 / dt) + 2) * dt  # 20 periods
    qvel = (amp * np.sin(w * t))[:, None]
    assert mean_squared_jerk(qvel, dt) == pytest.approx(amp**2 * w**4 / 2, rel=2e-3)


def test_smoothness_of_jerk_free_motion_is_log_eps():
    t = np.arange(50)[:, None] * 0.02
    qvel = np.hstack([3.0 * t - 1.0, np.full_like(t, 2.0)])  # linear and constant velocities
    assert mean_squared_jerk(qvel, 0.02) == pytest.approx(0.0, abs=1e-18)
    assert joint_smoothness(qvel, 0.02) == pytest.approx(-12.0, abs=1e-6)
    assert joint_smoothness(qvel, 0.02, eps=1e-6) == pytest.approx(-6.0, abs=1e-6)
    with pytest.raises(ValueError, match="eps"):
        joint_smoothness(np.zeros((5, 2)), 0.02, eps=0.0)


def test_jerk_scales_with_dt_to_the_minus_four():
    rng = np.random.default_rng(0)
    qvel = rng.normal(size=(40, 5))
    assert mean_squared_jerk(qvel, 0.01) == pytest.approx(mean_squared_jerk(qvel, 0.02) * 16, rel=1e-12)


@pytest.mark.parametrize(
    "qvel, dt, msg",
    [
        (np.zeros((2, 3)), 0.01, "at least 3"),
        (np.zeros(10), 0.01, "2-D"),
        (np.zeros((10, 2, 1)), 0.01, "2-D"),
        (np.array([[0.0], [np.nan], [1.0]]), 0.01, "finite"),
        (np.zeros((5, 2)), 0.0, "dt"),
        (np.zeros((5, 2)), -0.01, "dt"),
        (np.zeros((5, 2)), float("nan"), "dt"),
        (np.zeros((5, 2)), "fast", "dt"),
    ],
)
def test_jerk_errors(qvel, dt, msg):
    with pytest.raises(ValueError, match=msg):
        mean_squared_jerk(qvel, dt)
    with pytest.raises(ValueError, match=msg):
        joint_smoothness(qvel, dt)


# -- peak efficiency (Eqs. 11-12) ------------------------------------------------------------
def test_peak_efficiency_basic_and_ties_go_to_earliest():
    assert peak_efficiency([1e6, 2e6, 3e6], [10.0, 30.0, 20.0]) == (2e6, 30.0)
    res = peak_efficiency([100, 200, 300, 400, 500], [1.0, 5.0, 3.0, 5.0, 4.0])
    assert res.t_max == 200 and res.r_max == 5.0
    assert peak_efficiency([7], [-3.5]) == (7.0, -3.5)
    assert peak_efficiency([0, 1, 2], [-5.0, -1.0, -2.0]).t_max == 1


@pytest.mark.parametrize(
    "steps, rets, msg",
    [
        ([1, 2, 3], [1.0, 2.0], "equal length"),
        ([1, 3, 2], [1.0, 2.0, 3.0], "strictly increasing"),
        ([1, 1, 2], [1.0, 2.0, 3.0], "strictly increasing"),
        ([1, 2], [1.0, np.nan], "finite"),
        ([], [], "at least 1"),
        ([[1, 2]], [[1.0, 2.0]], "1-D"),
    ],
)
def test_peak_efficiency_errors(steps, rets, msg):
    with pytest.raises(ValueError, match=msg):
        peak_efficiency(steps, rets)


# -- robustness AUC (App. A-B2) ----------------------------------------------------------------
def test_robustness_auc_known_curves():
    scales = [0.0, 0.05, 0.10, 0.15, 0.20]
    # trapezoids: .05 * (100 + 75 + 25 + 0) = 10; / 0.2 = 50
    assert robustness_auc(scales, [100, 100, 50, 0, 0]) == pytest.approx(50.0, abs=1e-12)
    assert robustness_auc(scales, [80] * 5) == pytest.approx(80.0, abs=1e-12)
    # observation scales are uneven: (0, .02, .05, .08, .10)
    obs = [0.0, 0.02, 0.05, 0.08, 0.10]
    hand = (0.02 * 90 + 0.03 * 65 + 0.03 * 35 + 0.02 * 10) / 0.10  # = 50.0
    assert robustness_auc(obs, [100, 80, 50, 20, 0]) == pytest.approx(hand, abs=1e-12)
    assert robustness_auc([0.0, 1.0], [0.0, 1.0]) == pytest.approx(0.5)


@pytest.mark.parametrize(
    "scales, rates, msg",
    [
        ([0.0], [100.0], "at least 2"),
        ([0.0, 0.1], [100.0], "equal length"),
        ([0.0, 0.1, 0.1], [1.0, 1.0, 1.0], "strictly increasing"),
        ([0.1, 0.0], [1.0, 1.0], "strictly increasing"),
        ([0.0, np.nan], [1.0, 1.0], "finite"),
        ([0.0, 0.1], [1.0, np.inf], "finite"),
    ],
)
def test_robustness_auc_errors(scales, rates, msg):
    with pytest.raises(ValueError, match=msg):
        robustness_auc(scales, rates)


# -- recruitment (App. A-I, Table XVIII) ------------------------------------------------------
# Real MyoFullBody actuator names and the family they must land in.
PINNED = {
    "Ps_L1_TP_r": "Paraspinals (Deep)",  # contains "TP" (Other Leg/Foot) too
    "IL_R5_l": "Iliocostalis",
    "LTpL_L3_r": "Longissimus (Erector Spinae)",
    "rect_abd_r": "Abdominals",
    "EO3_l": "Abdominals",
    "QL_post_I.2-L4_r": "Other Trunk/Back",
    "MF_m1s_r": "Other Trunk/Back",
    "PECM2_left": "Pectorals",
    "DELT3": "Deltoids",
    "SUPSP": "Rotator Cuff",  # contains "SUP" (supinator) too
    "SUPSP_left": "Rotator Cuff",
    "SUP": "Forearm Pronators/Supinators",
    "BRD_left": "Elbow Flexors",
    "TRIlong": "Elbow Extensors",
    "PL": "Wrist/Finger Flexors",
    "FPL_left": "Wrist/Finger Flexors",
    "EPL": "Wrist/Finger Extensors",  # contains "PL" (flexor row comes first in the table)
    "APL_left": "Wrist/Finger Extensors",  # idem
    "LU_RB3": "Hand Intrinsics",
    "glmed2_r": "Glutes (Hip Extensors)",
    "piri_l": "Glutes (Hip Extensors)",
    "recfem_r": "Quadriceps (Knee Extensors)",
    "vasint_l": "Quadriceps (Knee Extensors)",
    "addmagIsch_r": "Hip Flexors/Adductors",
    "sart_l": "Hip Flexors/Adductors",
    "semiten_r": "Hamstrings (Knee Flexors)",
    "bfsh_l": "Hamstrings (Knee Flexors)",
    "soleus_r": "Calves (Plantar Flexors)",
    "gaslat_l": "Calves (Plantar Flexors)",
    "tibant_r": "Other Leg/Foot",
    "perbrev_l": "Other Leg/Foot",
}


@pytest.mark.parametrize("name, family", sorted(PINNED.items()))
def test_family_of_real_names(name, family):
    assert family_of(name) == family


def test_family_rule_longest_keyword_then_table_order():
    assert family_of("somethingelse") == UNCLASSIFIED
    assert family_of("ps_l1") == UNCLASSIFIED  # case-sensitive
    # "TAVM": "TA" (Other Leg/Foot) and "VM" (Quadriceps) both length 2 -> earlier row wins.
    assert family_of("TAVM") == "Quadriceps (Knee Extensors)"
    # "xEPLx": "EPL" (3) beats "PL" (2).
    assert family_of("xEPLx") == "Wrist/Finger Extensors"
    with pytest.raises(ValueError, match="string"):
        family_of(3)


def test_recruitment_hand_computed():
    names = ["glmed1_r", "EPL", "SUPSP", "tibant_r", "foo", "glmax2_l"]
    means = [0.2, 0.3, 0.1, 0.4, 0.5, 0.25]
    res = recruitment(means, names)
    # families: Glutes .2+.25=.45, WF Ext .3, Rotator Cuff .1, Other Leg .4; total 1.25
    assert res.total == pytest.approx(1.25)
    assert res.mass["Glutes (Hip Extensors)"] == pytest.approx(0.45)
    assert res.mass["Wrist/Finger Extensors"] == pytest.approx(0.3)
    assert res.mass["Wrist/Finger Flexors"] == 0.0
    assert res.percent["Glutes (Hip Extensors)"] == pytest.approx(36.0)
    assert res.percent["Wrist/Finger Extensors"] == pytest.approx(24.0)
    assert res.percent["Rotator Cuff"] == pytest.approx(8.0)
    assert res.percent["Other Leg/Foot"] == pytest.approx(32.0)
    assert sum(res.percent.values()) == pytest.approx(100.0)
    assert tuple(res.mass) == FAMILY_NAMES and len(FAMILY_NAMES) == 20
    # Unclassified: reported separately, not in the denominator.
    assert res.unclassified_mass == pytest.approx(0.5)
    assert res.unclassified_names == ("foo",)
    assert res.unclassified_fraction == pytest.approx(0.5 / 1.75)
    assert res.families["EPL"] == "Wrist/Finger Extensors" and res.families["foo"] == UNCLASSIFIED


def test_recruitment_zero_activation_gives_zero_percent():
    res = recruitment([0.0, 0.0], ["soleus_r", "DELT1"])
    assert res.total == 0.0 and all(p == 0.0 for p in res.percent.values())


@pytest.mark.parametrize(
    "means, names, msg",
    [
        ([0.1, 0.2], ["soleus_r"], "2 were expected"),
        ([[0.1, 0.2]], ["a", "b"], "1-D"),
        ([0.1, np.nan], ["a", "b"], "finite"),
        ([0.1, 1.5], ["a", "b"], r"\[0, 1\]"),
        ([0.1, 0.2], ["a", 3], "strings"),
        ([0.1], "soleus_r", "single string"),
    ],
)
def test_recruitment_errors(means, names, msg):
    with pytest.raises(ValueError, match=msg):
        recruitment(means, names)


def test_recruitment_covers_all_myofullbody_actuators():
    mujoco = pytest.importorskip("mujoco")
    models = pytest.importorskip("musclemimic_models")
    m = mujoco.MjModel.from_xml_path(str(models.get_xml_path("myofullbody")))
    names = [m.actuator(i).name for i in range(m.nu)]
    assert len(names) == 416
    for name, fam in PINNED.items():
        assert name in names and family_of(name) == fam
    res = recruitment(np.full(len(names), 0.5), names)
    assert res.unclassified_names == ()
    assert res.total == pytest.approx(208.0)
    counts = {f: sum(1 for n in names if res.families[n] == f) for f in FAMILY_NAMES}
    assert all(c > 0 for c in counts.values())
    assert counts["Wrist/Finger Extensors"] == 24 and counts["Wrist/Finger Flexors"] == 24
    assert counts["Calves (Plantar Flexors)"] == 6 and counts["Rotator Cuff"] == 12

"""Simplex projection (mskbench.metrics.edm): hand-computed cases, exact periodic
prediction, agreement with reference EDM implementations, and input errors.

References:
* kEDM (``pip install kedm``, MIT) is run live when installed: predictions row by
  row and rho on the logistic map for several (E, tau, Tp).
* pyEDM 2.5.7 (the implementation the paper used) is not a test dependency (its
  licence is non-commercial); its outputs for a few configurations, including
  leave-one-out (lib and pred overlapping), an exclusion radius, cross-mapping
  and a two-column embedding, were recorded once and are pinned below.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from mskbench.metrics import SimplexResult, embed, simplex_predict, simplex_rho
from mskbench.metrics.edm import MIN_WEIGHT_DISTANCE

E1, E15 = math.exp(-1.0), math.exp(-1.5)


def logistic(n: int = 500, r: float = 3.8, x0: float = 0.4) -> np.ndarray:
    """Logistic map; the same float64 recursion that produced the pinned pyEDM values."""
    x = np.empty(n)
    x[0] = x0
    for i in range(n - 1):
        x[i + 1] = r * x[i] * (1 - x[i])
    return x


def coupled_logistic(n: int = 500) -> tuple[np.ndarray, np.ndarray]:
    """Two coupled logistic maps (u drives v strongly, v drives u weakly)."""
    u, v = np.empty(n), np.empty(n)
    u[0], v[0] = 0.4, 0.2
    for i in range(n - 1):
        u[i + 1] = u[i] * (3.8 - 3.8 * u[i] - 0.02 * v[i])
        v[i + 1] = v[i] * (3.5 - 3.5 * v[i] - 0.1 * u[i])
    return u, v


# --------------------------------------------------------------------------- embedding


def test_embed_past_lags_and_invalid_rows():
    x = np.arange(6.0)
    nan = np.nan
    np.testing.assert_array_equal(
        embed(x, E=3, tau=-2),
        [[0, nan, nan], [1, nan, nan], [2, 0, nan], [3, 1, nan], [4, 2, 0], [5, 3, 1]],
    )
    np.testing.assert_array_equal(embed(x, E=1, tau=-1), x[:, None])


def test_embed_future_lags_and_column_order():
    x = np.arange(4.0)
    np.testing.assert_array_equal(embed(x, E=2, tau=1), [[0, 1], [1, 2], [2, 3], [3, np.nan]])
    xy = np.c_[np.arange(4.0), 10 + np.arange(4.0)]
    # columns grouped per source column: x(t), x(t-1), y(t), y(t-1)
    np.testing.assert_array_equal(
        embed(xy, E=2, tau=-1),
        [[0, np.nan, 10, np.nan], [1, 0, 11, 10], [2, 1, 12, 11], [3, 2, 13, 12]],
    )
    # a lag longer than the series leaves every row invalid
    assert np.isnan(embed(x, E=3, tau=-2)).any(axis=1).all()


# --------------------------------------------------------------------------- hand-computed


def test_hand_computed_E1_disjoint_library():
    x = np.array([0.0, 2.0, 1.0, 4.0, 3.0, 7.0, 2.6, 6.0, 5.0])
    res = simplex_predict(x, E=1, tau=-1, Tp=1, lib=(0, 6), pred=(6, 8))
    assert isinstance(res, SimplexResult)
    # Library rows 0..4: row 5 (x=7) is dropped because its target x[6] lies outside lib.
    # Row 6 (x=2.6): distances to rows 0..4 are 2.6, 0.6, 1.6, 1.4, 0.4 -> neighbours 4, 1.
    #   weights exp(-0.4/0.4), exp(-0.6/0.4); targets x[5] = 7, x[2] = 1.
    # Row 7 (x=6.0): distances 6, 4, 5, 2, 3 (row 5 would be 1) -> neighbours 3, 4.
    #   weights exp(-2/2), exp(-3/2); targets x[4] = 3, x[5] = 7.
    np.testing.assert_array_equal(res.rows, [6, 7])
    np.testing.assert_array_equal(res.times, [7, 8])
    np.testing.assert_array_equal(res.neighbors, [[4, 1], [3, 4]])
    np.testing.assert_allclose(res.distances, [[0.4, 0.6], [2.0, 3.0]], rtol=1e-12)
    np.testing.assert_array_equal(res.observed, [6.0, 5.0])
    expected = [(7 * E1 + 1 * E15) / (E1 + E15), (3 * E1 + 7 * E15) / (E1 + E15)]
    np.testing.assert_allclose(res.predicted, expected, rtol=1e-12)


def test_hand_computed_E2_leave_one_out_and_exclusion_radius():
    x = np.array([1.0, 3.0, 2.0, 5.0, 4.0, 0.5, 2.0, 6.0])
    res = simplex_predict(x, E=2, tau=-1, Tp=1)  # lib = pred = whole series
    # Prediction rows 1..7 (row 0 lacks its lag); row 7 forecasts past the end.
    np.testing.assert_array_equal(res.rows, np.arange(1, 8))
    np.testing.assert_array_equal(res.times, np.arange(2, 9))
    np.testing.assert_array_equal(res.observed[:-1], x[2:])
    assert np.isnan(res.observed[-1])

    # Row 4, state (x4, x3) = (4, 5). Library rows 1..6 (lag and target inside), minus row 4:
    #   n=1 (3, 1): 1 + 16 = 17   n=2 (2, 3): 4 + 4 = 8      n=3 (5, 2): 1 + 9 = 10
    #   n=5 (0.5, 4): 12.25 + 1 = 13.25                     n=6 (2, 0.5): 4 + 20.25 = 24.25
    # Nearest three: 2, 3, 5 with targets x3 = 5, x4 = 4, x6 = 2.
    i = 3
    assert res.rows[i] == 4
    np.testing.assert_array_equal(res.neighbors[i], [2, 3, 5])
    d = np.sqrt([8.0, 10.0, 13.25])
    np.testing.assert_allclose(res.distances[i], d, rtol=1e-12)
    w = np.exp(-d / d[0])
    assert res.predicted[i] == pytest.approx((5 * w[0] + 4 * w[1] + 2 * w[2]) / w.sum(), rel=1e-12)
    assert res.observed[i] == 0.5
    assert 4 not in res.neighbors[i]  # leave-one-out

    # exclusion_radius=1 also drops rows 3 and 5: neighbours 2, 1, 6 (targets 5, 2, 6).
    ex = simplex_predict(x, E=2, tau=-1, Tp=1, pred=(4, 5), exclusion_radius=1)
    np.testing.assert_array_equal(ex.neighbors, [[2, 1, 6]])
    d = np.sqrt([8.0, 17.0, 24.25])
    w = np.exp(-d / d[0])
    assert ex.predicted[0] == pytest.approx((5 * w[0] + 2 * w[1] + 6 * w[2]) / w.sum(), rel=1e-12)


def test_hand_computed_negative_Tp_future_lags_and_ties():
    x = np.array([0.0, 2.0, 1.0, 4.0, 3.0, 7.0, 0.3, 6.0, 5.0])
    # Tp = -1 (hindcast): library rows 1..5; row 0 is dropped (no x[-1]) although it is nearest.
    # Row 6 (x=0.3): distances 1.7, 0.7, 3.7, 2.7, 6.7 -> rows 2, 1 with targets x1 = 2, x0 = 0.
    res = simplex_predict(x, E=1, Tp=-1, lib=(0, 6), pred=(6, 7))
    np.testing.assert_array_equal(res.neighbors, [[2, 1]])
    np.testing.assert_array_equal(res.times, [5])
    assert res.observed[0] == 7.0
    w = np.exp(-np.array([0.7, 1.7]) / 0.7)
    assert res.predicted[0] == pytest.approx((2 * w[0] + 0 * w[1]) / w.sum(), rel=1e-12)

    # tau = +1 (future lag), E = 2, Tp = 1, lib (0, 6): pyEDM trims the lag (1 row) and then
    # Tp (1 row) off the end, leaving rows 0..3. Row 6, state (x6, x7) = (0.3, 6):
    #   n=0 (0, 2): 0.09 + 16 = 16.09   n=1 (2, 1): 2.89 + 25 = 27.89
    #   n=2 (1, 4): 0.49 + 4 = 4.49     n=3 (4, 3): 13.69 + 9 = 22.69
    # Nearest three: 2, 0, 3 with targets x3 = 4, x1 = 2, x4 = 3.
    res = simplex_predict(x, E=2, tau=1, Tp=1, lib=(0, 6), pred=(6, 7))
    np.testing.assert_array_equal(res.neighbors, [[2, 0, 3]])
    d = np.sqrt([4.49, 16.09, 22.69])
    w = np.exp(-d / d[0])
    assert res.predicted[0] == pytest.approx((4 * w[0] + 2 * w[1] + 3 * w[2]) / w.sum(), rel=1e-12)

    # Equal distances: the lower library row wins. Row 6 (x=2) is 1 away from rows 0, 2 and 4.
    x = np.array([1.0, 5.0, 3.0, 6.0, 1.0, 8.0, 2.0, 0.0])
    res = simplex_predict(x, E=1, lib=(0, 6), pred=(6, 7))
    np.testing.assert_array_equal(res.neighbors, [[0, 2]])
    assert res.predicted[0] == pytest.approx(5.5, rel=1e-12)


def test_zero_and_tiny_nearest_distance_use_the_pyedm_floor():
    # E=1, lib rows 0..4 (targets x[1..5]); predict from row 6.
    x = np.array([0.0, 5.0, 3.0, 7.0, 0.5, 9.0, 0.0, 1.0])
    res = simplex_predict(x, E=1, lib=(0, 6), pred=(6, 7))
    # d = (0, 0.5): weights 1 and exp(-0.5 / 1e-6) = 0 -> exactly the target of row 0.
    np.testing.assert_array_equal(res.neighbors, [[0, 4]])
    assert res.predicted[0] == 5.0

    # d1 below the floor: d = (1e-7, 3e-7) scaled by 1e-6, not by d1.
    x = np.array([0.0, 5.0, 3.0, 7.0, 2e-7, 9.0, -1e-7, 1.0])
    res = simplex_predict(x, E=1, lib=(0, 6), pred=(6, 7))
    np.testing.assert_array_equal(res.neighbors, [[0, 4]])
    assert MIN_WEIGHT_DISTANCE == 1e-6
    w0, w1 = math.exp(-0.1), math.exp(-0.3)
    assert res.predicted[0] == pytest.approx((5 * w0 + 9 * w1) / (w0 + w1), rel=1e-9)


def test_periodic_series_is_predicted_exactly():
    pattern = np.array([0.0, 1.0, 3.0, 2.0, 5.0, 4.0])
    x = np.tile(pattern, 10)
    for E in (1, 2, 3):
        res = simplex_predict(x, E=E, tau=-1, Tp=1)
        ok = ~np.isnan(res.observed)
        np.testing.assert_array_equal(res.predicted[ok], res.observed[ok])
        assert res.predicted[-1] == x[0]  # the forecast past the end continues the cycle
        assert simplex_rho(x, E=E, tau=-1, Tp=1) == 1.0
    s = np.sin(2 * np.pi * np.arange(120) / 12)
    assert simplex_rho(s, E=2, tau=-1, Tp=3) == pytest.approx(1.0, abs=1e-12)
    np.testing.assert_allclose(simplex_predict(s, E=2, Tp=3).predicted[:-3], s[4:], atol=1e-12)


def test_defaults_and_target():
    x = logistic(100)
    y = np.cos(np.arange(100.0))
    a = simplex_predict(x)
    b = simplex_predict(x, x, E=2, tau=-1, Tp=1, lib=(0, 100), pred=(0, 100))
    c = simplex_predict(np.c_[x, y], x, E=2)  # two-column source differs, target the same
    for f in ("times", "observed", "predicted", "neighbors"):
        np.testing.assert_array_equal(getattr(a, f), getattr(b, f))
    np.testing.assert_array_equal(simplex_predict(np.c_[x, y], E=2).observed, c.observed)
    # the target only supplies the values, not the neighbours
    t = simplex_predict(x, y, E=2, Tp=0)
    np.testing.assert_array_equal(t.neighbors, simplex_predict(x, E=2, Tp=0).neighbors)
    np.testing.assert_array_equal(t.observed, y[t.times])


# --------------------------------------------------------------------------- pyEDM (pinned)

# Recorded with pyEDM 2.5.7: pyEDM.Simplex(dataFrame with time = 1..500 and the
# columns below, columns, target, lib, pred, E, Tp, tau, exclusionRadius); rho from
# the rows with an observation; "at" maps 0-based times (pyEDM Time - 1) to predictions.
PYEDM_CASES = [
    dict(columns="x", target="x", lib=(0, 500), pred=(0, 500), E=2, tau=-1, Tp=1, ex=0,
         n=499, rho=0.9999616751936589, total=319.2578786349259,
         at={2: 0.30584993455039555, 3: 0.8052843666408943, 251: 0.5097414352516865,
             499: 0.3478571677844434, 500: 0.8609918007684465}),
    dict(columns="x", target="x", lib=(0, 500), pred=(0, 500), E=3, tau=-2, Tp=2, ex=5,
         n=496, rho=0.9983151579413133, total=317.4135782263329,
         at={6: 0.2874798220680169, 7: 0.7901019046287111, 254: 0.5680634226415089,
             500: 0.8620837247773939, 501: 0.45179898026470716}),
    dict(columns="x", target="x", lib=(0, 250), pred=(250, 500), E=2, tau=-1, Tp=1, ex=0,
         n=250, rho=0.9999149580458359, total=160.37464740812712,
         at={251: 0.5053435489671182, 252: 0.949707597258924, 376: 0.7475391675605465,
             499: 0.3439287716529436, 500: 0.8596994739407605}),
    dict(columns="u", target="v", lib=(0, 500), pred=(0, 500), E=3, tau=-1, Tp=0, ex=0,
         n=498, rho=0.4808212443477196, total=319.21438682338845,
         at={2: 0.6753729149927972, 3: 0.47251511573181276, 251: 0.5542270027650026,
             498: 0.6672707855747487, 499: 0.44001219552334186}),
    dict(columns="u v", target="u", lib=(100, 400), pred=(0, 500), E=2, tau=-1, Tp=1, ex=0,
         n=499, rho=0.9969551768158994, total=319.82091338007194,
         at={2: 0.2555979018955236, 3: 0.7655092004992651, 251: 0.7548650403134858,
             499: 0.18620363513068677, 500: 0.6029644018486809}),
]


def _case_id(c: dict) -> str:
    return f"{c['columns']}->{c['target']}-E{c['E']}tau{c['tau']}Tp{c['Tp']}"


@pytest.mark.parametrize("case", PYEDM_CASES, ids=_case_id)
def test_matches_pinned_pyedm(case):
    u, v = coupled_logistic(500)
    data = {"x": logistic(500), "u": u, "v": v}
    source = np.column_stack([data[c] for c in case["columns"].split()])
    kw = dict(E=case["E"], tau=case["tau"], Tp=case["Tp"], lib=case["lib"], pred=case["pred"],
              exclusion_radius=case["ex"])
    res = simplex_predict(source, data[case["target"]], **kw)
    assert res.times.size == case["n"]
    assert res.predicted.sum() == pytest.approx(case["total"], abs=1e-9)
    got = dict(zip(res.times.tolist(), res.predicted.tolist()))
    for t, p in case["at"].items():
        assert got[t] == pytest.approx(p, abs=1e-12), t
    assert simplex_rho(source, data[case["target"]], **kw) == pytest.approx(case["rho"], abs=1e-12)


# --------------------------------------------------------------------------- kEDM (live)

KEDM_CONFIGS = [
    (1, -1, 1), (2, -1, 1), (3, -1, 1), (2, -2, 1), (3, -1, 2), (4, -2, 3), (2, -1, 0), (5, -3, 1)
]


@pytest.mark.parametrize(("E", "tau", "Tp"), KEDM_CONFIGS)
@pytest.mark.parametrize(("lib", "pred"), [((0, 250), (250, 500)), ((200, 500), (0, 200))])
def test_matches_kedm(E, tau, Tp, lib, pred):
    kedm = pytest.importorskip("kedm")
    x = logistic(500)
    shift = (E - 1) * abs(tau)
    p0 = max(pred[0], shift)  # kEDM embeds the pred segment on its own: start where lags exist
    seg_lib = x[lib[0] : lib[1]]
    seg_pred = x[p0 - shift : pred[1]]
    # kEDM writes the past-lag delay as a positive tau; it works in float32.
    ref = kedm.simplex(seg_lib, seg_pred, E=E, tau=-tau, Tp=Tp)
    res = simplex_predict(x, E=E, tau=tau, Tp=Tp, lib=lib, pred=(p0, pred[1]))
    np.testing.assert_array_equal(res.rows, np.arange(p0, pred[1]))
    assert ref.shape == res.predicted.shape
    np.testing.assert_allclose(res.predicted, ref, rtol=0, atol=5e-5)
    # kEDM correlates only predictions whose observation lies inside the pred segment.
    rho_ref = kedm.eval_simplex(seg_lib, seg_pred, E=E, tau=-tau, Tp=Tp)
    rho = simplex_rho(x, E=E, tau=tau, Tp=Tp, lib=lib, pred=(p0, pred[1] - Tp))
    assert rho == pytest.approx(rho_ref, abs=1e-3)


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        (dict(E=0), "E must be >= 1"),
        (dict(E=-2), "E must be >= 1"),
        (dict(E=1.5), "E must be an integer"),
        (dict(E=True), "E must be an integer"),
        (dict(tau=0), "tau must be a non-zero"),
        (dict(tau=-1.0), "tau must be an integer"),
        (dict(Tp=0.5), "Tp must be an integer"),
        (dict(Tp=None), "Tp must be an integer"),
        (dict(exclusion_radius=-1), "exclusion_radius must be >= 0"),
        (dict(lib=(10, 5)), r"lib=\(10, 5\) must satisfy"),
        (dict(lib=(0, 51)), r"lib=\(0, 51\) must satisfy"),
        (dict(lib=(-1, 20)), "must satisfy"),
        (dict(pred=(30, 30)), r"pred=\(30, 30\) must satisfy"),
        (dict(pred=(0, 10, 20)), "pair"),
        (dict(pred=5), "pair"),
        (dict(lib="1 50"), r"\(a - 1, b\)"),
        (dict(lib=(0.0, 20)), "lib start must be an integer"),
        (dict(lib=(0, 3)), "library too short"),  # rows 1, 2 only (lag, Tp) < E + 1
        (dict(lib=(20, 24), pred=(20, 24)), "library too short"),  # leave-one-out leaves 2
        (dict(exclusion_radius=25, pred=(20, 30)), "library too short"),
        (dict(E=3, tau=-4, pred=(0, 8)), "no prediction row"),
    ],
)
def test_bad_arguments(kwargs, match):
    x = logistic(50)
    with pytest.raises(ValueError, match=match):
        simplex_predict(x, **kwargs)


def test_bad_series():
    x = logistic(50)
    bad = x.copy()
    bad[7] = np.nan
    with pytest.raises(ValueError, match="source must be finite"):
        simplex_predict(bad)
    with pytest.raises(ValueError, match="target must be finite"):
        simplex_predict(x, bad)
    with pytest.raises(ValueError, match="x must be finite"):
        embed(bad, E=2, tau=-1)
    with pytest.raises(ValueError, match="target has 49 rows but source has 50"):
        simplex_predict(x, x[:-1])
    with pytest.raises(ValueError, match="target must be 1-D"):
        simplex_predict(x, np.c_[x, x])
    with pytest.raises(ValueError, match=r"\(T,\) or \(T, k\)"):
        simplex_predict(np.ones((50, 2, 2)))
    with pytest.raises(ValueError, match="numeric"):
        simplex_predict(["a"] * 50)
    with pytest.raises(ValueError, match="tau must be a non-zero"):
        embed(x, E=2, tau=0)
    with pytest.raises(ValueError, match="E must be >= 1"):
        embed(x, E=0, tau=-1)


def test_rho_needs_two_observed_rows():
    x = logistic(50)
    # pred row 49 forecasts row 50, past the end: no observation at all.
    with pytest.raises(ValueError, match="at least 2"):
        simplex_rho(x, pred=(49, 50))
    assert math.isnan(simplex_rho(np.tile([0.0, 1.0, 2.0], 10), np.ones(30)))

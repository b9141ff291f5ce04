"""mskbench.metrics.gait_physiology on closed-form traces (no simulator)."""

import numpy as np
import pytest

from mskbench.metrics.gait_physiology import cadence_steps_per_min, stance_grf, stance_phases, strides
from mskbench.metrics.progress import touchdowns


def test_double_hump_of_a_piecewise_linear_stance():
    # Peaks 1.15 BW at 25 % and 1.10 BW at 75 %, a 0.75 BW minimum at 50 %: the classic walking shape.
    t = np.linspace(0.0, 1.0, 101)
    f = np.interp(t, [0.0, 0.25, 0.5, 0.75, 1.0], [0.0, 1.15, 0.75, 1.10, 0.0])
    g = stance_grf(f)
    assert g.first_peak == pytest.approx(1.15) and g.first_peak_pct == pytest.approx(25.0)
    assert g.second_peak == pytest.approx(1.10) and g.second_peak_pct == pytest.approx(75.0)
    assert g.valley == pytest.approx(0.75) and g.valley_pct == pytest.approx(50.0)
    assert g.double_hump


def test_single_hump_has_no_dip():
    g = stance_grf(np.sin(np.pi * np.linspace(0.0, 1.0, 101)))  # one peak, at 50 %
    assert g.first_peak == pytest.approx(1.0) and g.first_peak_pct == pytest.approx(50.0)
    assert g.valley == pytest.approx(min(g.first_peak, g.second_peak))
    assert not g.double_hump


def test_stance_phases_with_hysteresis_and_air_time():
    # loaded 0-4 (starts down: no complete stance), air 5-9, stance 10-19, a one-sample dip at 14
    # (chatter, shorter than the air time), air 20-24, stance 25-29 still down at the end (incomplete).
    load = np.zeros(30)
    load[0:5] = 1.0
    load[10:20] = 1.0
    load[14] = 0.0
    load[25:30] = 1.0
    s = stance_phases(load, down_n=0.5, up_n=0.1, min_air_samples=3)
    assert s.tolist() == [[10, 20]]
    assert s[:, 0].tolist() == touchdowns(load, 0.5, 0.1, 3)[:1].tolist()  # the same touchdowns as progress


def test_strides_and_cadence():
    xy = np.stack([np.arange(11) * 0.1, np.zeros(11)], axis=1)  # 0.1 m per sample
    s = strides(np.array([0, 5, 10]), xy, dt=0.1)
    assert np.allclose(s.length_m, [0.5, 0.5]) and np.allclose(s.duration_s, [0.5, 0.5])
    assert cadence_steps_per_min(s.duration_s) == pytest.approx(240.0)  # 2 steps per 0.5 s stride
    assert strides(np.array([3]), xy, 0.1).length_m.size == 0
    with pytest.raises(ValueError):
        strides(np.array([5, 3]), xy, 0.1)

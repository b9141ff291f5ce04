"""The gait layer's pieces (:mod:`mskbench.control.gait`) against their closed forms."""

from __future__ import annotations

import numpy as np
import pytest

from mskbench.control import gait


def test_dcm_at_step_end_is_the_pendulums_closed_form():
    """ξ̇ = ω(ξ − p) with p fixed: ξ(T) = p + (ξ0 − p) e^{ωT}; checked against a fine Euler integration."""
    w, p, xi0, T = gait.omega(0.9), np.array([0.1, -0.05]), np.array([0.18, 0.02]), 0.4
    xi, dt = xi0.copy(), 1e-6
    for _ in range(int(T / dt)):
        xi += dt * w * (xi - p)
    np.testing.assert_allclose(gait.dcm_at_step_end(xi0, p, w, T), xi, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(gait.dcm_at_step_end(xi0, p, w, 0.0), xi0)


@pytest.mark.parametrize("speed, width", [(1.2, 0.18), (0.6, 0.1), (0.0, 0.2)])
def test_the_foothold_rule_walks_the_steady_gait(speed, width):
    """Footholds from the rule, the pressure at each stance foot for one step: from a perturbed start the
    steps converge to length v T and width W, and the DCM to the steady offsets."""
    w, T = gait.omega(0.95), 0.5
    stance, left = np.array([0.0, -width / 2]), False  # right foot down
    xi = stance + gait.steady_offset(speed, T, width, w, left) + np.array([0.05, 0.03])  # perturbed
    feet = [stance]
    for _ in range(12):
        nxt = gait.next_foothold(xi, stance, w, T, gait.steady_offset(speed, T, width, w, not left))
        xi = gait.dcm_at_step_end(xi, stance, w, T)  # the step ends as the foot lands
        stance, left = nxt, not left
        feet.append(stance)
    steps = np.diff(np.array(feet), axis=0)
    np.testing.assert_allclose(steps[-4:, 0], speed * T, atol=1e-9)
    np.testing.assert_allclose(np.abs(steps[-4:, 1]), width, atol=1e-9)
    np.testing.assert_allclose(xi - stance, gait.steady_offset(speed, T, width, w, left), atol=1e-9)


def test_the_foothold_turns_with_the_heading():
    w = gait.omega(0.95)
    b = gait.steady_offset(1.0, 0.5, 0.2, w, True)
    straight = gait.next_foothold(np.zeros(2), np.zeros(2), w, 0.0, b)
    turned = gait.next_foothold(np.zeros(2), np.zeros(2), w, 0.0, b, heading_rad=np.pi / 2)
    np.testing.assert_allclose(turned, [-straight[1], straight[0]], atol=1e-12)


def test_a_swing_meets_its_foothold_with_the_apex_at_mid_swing():
    start, goal, T = np.array([0.0, 0.1, 0.02]), np.array([0.5, 0.12, 0.02]), 0.45
    p0, v0, a0 = gait.swing_point(start, goal, 0.0, T, 0.08)
    p1, v1, _ = gait.swing_point(start, goal, 1.0, T, 0.08)
    mid, _, _ = gait.swing_point(start, goal, 0.5, T, 0.08)
    np.testing.assert_allclose(p0, start) and np.testing.assert_allclose(p1, goal, atol=1e-12)
    np.testing.assert_allclose(v0, 0.0, atol=1e-12) and np.testing.assert_allclose(v1, 0.0, atol=1e-9)
    assert mid[2] == pytest.approx(0.02 + 0.08) and mid[0] == pytest.approx(0.25)
    # the velocity and the acceleration are the path's derivatives
    s, ds = 0.3, 1e-6
    (pa, va, aa), (pb, vb, _) = gait.swing_point(start, goal, s, T, 0.08), gait.swing_point(start, goal, s + ds, T, 0.08)
    np.testing.assert_allclose((pb - pa) / (ds * T), va, rtol=1e-4, atol=1e-6)
    np.testing.assert_allclose((vb - va) / (ds * T), aa, rtol=1e-4, atol=1e-4)


def test_the_contact_schedule_switches_on_time_and_on_the_landing_load():
    sch = gait.ContactSchedule(single_s=0.4, double_s=0.1, stance="r")
    changes = [sch.advance(0.01, swing_load=0.0) for _ in range(40)]
    assert changes.index(True) == 39 and (sch.phase, sch.stance) == ("double", "l")  # on time
    for _ in range(9):
        assert not sch.advance(0.01, 0.0)
    assert sch.advance(0.01, 0.0) and (sch.phase, sch.stance, sch.swing) == ("single", "l", "r")
    for _ in range(10):  # an early load (at a quarter of the swing) is not a landing
        assert not sch.advance(0.01, 0.5)
    for _ in range(13):
        sch.advance(0.01, 0.0)
    assert sch.phase == "single" and sch.swing_phase == pytest.approx(0.575)
    assert sch.advance(0.01, 0.5) and (sch.phase, sch.stance) == ("double", "r")  # landed early on load

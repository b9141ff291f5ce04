"""The walking behaviour (:mod:`mskbench.control.walking`): its pieces, and one Walk episode."""

from __future__ import annotations

import numpy as np
import pytest

from mskbench.control import walking


def test_the_swing_knee_flexes_and_straightens_for_touchdown():
    """The swing knee's profile: from the stance flexion at lift-off up to ``swing_knee_rad`` at
    ``swing_knee_peak``, back to the stance flexion at touchdown; its rate is the profile's derivative."""
    beh = walking.Walking()
    q0, _ = beh._swing_knee(0.0)
    qp, _ = beh._swing_knee(beh.swing_knee_peak)
    q1, dq1 = beh._swing_knee(1.0)
    assert q0 == pytest.approx(beh.stance_knee_rad) and q1 == pytest.approx(beh.stance_knee_rad)
    assert qp == pytest.approx(beh.swing_knee_rad)
    assert dq1 == 0.0
    for s in (0.1, 0.5, 0.8):
        h = 1e-6
        fd = (beh._swing_knee(s + h)[0] - beh._swing_knee(s - h)[0]) / (2 * h)
        assert beh._swing_knee(s)[1] == pytest.approx(fd, rel=1e-4, abs=1e-6)


def test_the_dcm_prediction_under_the_pressure_law_meets_the_closed_form():
    """Where the walker predicts the DCM at touchdown: the pendulum integrated under its own pressure law.
    With the support shrunk to a point the law can only put the pressure there, and the prediction is the
    closed form ``p + (ξ − p) e^{ωT}`` (:func:`mskbench.control.gait.dcm_at_step_end`); with a foot large
    enough for the law's point, a body at the target speed keeps it (the DCM moves at that speed)."""
    from mskbench.control import gait

    beh = walking.Walking()
    beh.v_goal = np.array([1.2, 0.0])  # the velocity walked at (the course's; world x/y)
    w = gait.omega(0.93)
    p = np.array([0.3, -0.1])
    point = np.array([p + [-1e-4, -1e-4], p + [1e-4, -1e-4], p + [1e-4, 1e-4], p + [-1e-4, 1e-4]])
    com, vel, T = np.array([0.1, 0.0]), np.array([1.0, 0.2]), 0.35
    got = beh._dcm_under_law(com, vel, w, point, T, substeps_s=1e-5)
    want = gait.dcm_at_step_end(gait.dcm(com, vel, w), p, w, T)
    np.testing.assert_allclose(got, want, atol=2e-3)
    big = np.array([[-5.0, -5.0], [5.0, -5.0], [5.0, 5.0], [-5.0, 5.0]])
    steady = beh._dcm_under_law(np.zeros(2), np.array([1.2, 0.0]), w, big, T)
    np.testing.assert_allclose(steady, gait.dcm(np.array([1.2 * T, 0.0]), np.array([1.2, 0.0]), w), atol=1e-9)


def test_double_support_waits_for_the_new_stance_foot_to_take_load():
    """Double support ends at ``double_s`` only once the new stance foot carries ``accept_load`` of the
    body weight, and at ``max_double_s`` at the latest."""
    sch = walking._Schedule(single_s=0.4, double_s=0.08, phase="double", stance="r")
    sch.accept_load, sch.stance_load = 0.5, 0.1
    for _ in range(20):
        assert not sch.advance(0.01, 0.0)
    assert sch.phase == "double"
    sch.stance_load = 0.6
    assert sch.advance(0.01, 0.0) and sch.phase == "single" and sch.stance == "r"
    late = walking._Schedule(single_s=0.4, double_s=0.08, max_double_s=0.3, phase="double", stance="l")
    late.accept_load, late.stance_load = 0.5, 0.0
    changed = [late.advance(0.01, 0.0) for _ in range(30)]
    assert changed.index(True) == 29 and late.phase == "single"


def test_the_walk_starts_on_the_loaded_foot_and_swings_to_the_floor():
    """At a Walk start the schedule stands on the foot that carries the weight, and the swing foot's
    goal is on the floor (the heel's standing height) at touchdown, ahead of the stance foot."""
    from mskbench.control.expert import ExpertPolicy
    from mskbench.envs import MSKEnv

    env = MSKEnv("Walk")
    beh = walking.Walk()
    pol = ExpertPolicy(env, beh)
    for seed in (0, 1):
        env.reset(seed=seed)
        pol.reset(seed)
        sch = beh.schedule
        loads = {s: beh._load(pol.ctx, s) for s in walking.SIDES}
        if sch.phase == "single":
            assert loads[sch.stance] >= loads[sch.swing]
        beh.targets(pol.ctx)
        if beh.schedule.phase == "single":
            stance_heel = pol.ctx.d.xpos[beh.foot[beh.schedule.stance][0]]
            assert beh.goal[2] == pytest.approx(beh.heel_z)
            assert beh.goal[0] > stance_heel[0]


@pytest.mark.slow
def test_the_walker_walks_one_episode():
    """Seed 0 of Walk (measured: the whole 1,000 control steps, 23 steps taken, 6.0 m of pelvis travel): it
    takes at least 10 steps and covers at least 5 m without falling (the episode runs to its time limit)."""
    from mskbench.control.expert import ExpertPolicy
    from mskbench.envs import MSKEnv
    from mskbench.envs.cpu_env import TIME_LIMIT
    from mskbench.eval.episodes import play_episode

    env = MSKEnv("Walk")
    beh = walking.Walk()
    pol = ExpertPolicy(env, beh)
    xs: list[float] = []

    def rec(e, st):
        xs.append(float(e.sim.view().pelvis_pos[0]))

    played = play_episode(env, pol, 0, rec)
    assert played.termination == TIME_LIMIT
    assert beh.steps >= 10
    assert xs[-1] - xs[0] >= 5.0

"""The walker on a route (PoleWalk, WalkTurn), gait initiation from rest and the door-pushing expert."""

from __future__ import annotations

import numpy as np
import pytest

from mskbench.control import courses


def test_a_leg_through_an_obstacle_bends_round_it_at_the_clearance():
    """The leg (0,0) -> (4,0) passes 0.2 m from a centre at (2, 0.2): one via point, 0.8 m from that centre,
    on the leg's side of it (below: the leg passes under the centre); a clear leg gets none."""
    centres = np.array([[2.0, 0.2], [10.0, 10.0]])
    via = courses.detour(np.zeros(2), np.array([4.0, 0.0]), centres, 0.8)
    assert len(via) == 1
    assert np.linalg.norm(via[0] - centres[0]) == pytest.approx(0.8)
    assert via[0][0] == pytest.approx(2.0) and via[0][1] < 0.0
    assert courses.detour(np.zeros(2), np.array([4.0, 0.0]), np.array([[2.0, 1.5]]), 0.8) == []
    # an obstacle beyond the leg's end is the next leg's business
    assert courses.detour(np.zeros(2), np.array([1.0, 0.0]), np.array([[1.5, 0.0]]), 0.8) == []


class _Ctx:
    control_dt_s = 0.02


def _routed(points, heading=0.0, elapsed_s=10.0):
    walker = courses.Routed()
    walker.points = [np.asarray(p, float) for p in points]
    walker.waypoint, walker.heading, walker.elapsed_s = 0, heading, elapsed_s
    return walker


def test_the_route_turns_at_the_turn_rate_and_walks_where_the_body_faces():
    """A waypoint 90 degrees to the left: the heading asked for is its direction, but the velocity points where
    the body will face after one control step's turn (turn_rate * dt), at the turning share of the speed."""
    walker = _routed([[0.0, 3.0]])
    heading, v = walker.course(_Ctx(), np.zeros(3))
    assert heading == pytest.approx(np.pi / 2)
    facing = walker.turn_rate * _Ctx.control_dt_s
    assert np.arctan2(v[1], v[0]) == pytest.approx(facing)
    assert np.linalg.norm(v) == pytest.approx(walker.walk_speed * walker.turning_share)
    # straight ahead: full speed along the heading; the speed ramps up from rest over ramp_s
    walker = _routed([[3.0, 0.0]])
    _, v = walker.course(_Ctx(), np.zeros(3))
    assert v == pytest.approx([walker.walk_speed, 0.0])
    walker = _routed([[3.0, 0.0]], elapsed_s=0.0)
    _, v = walker.course(_Ctx(), np.zeros(3))
    assert v[0] == pytest.approx(walker.walk_speed * _Ctx.control_dt_s / walker.ramp_s)


def test_waypoints_are_passed_in_turn_and_the_walk_slows_to_the_last():
    walker = _routed([[1.0, 0.0], [3.0, 0.0]])
    walker.course(_Ctx(), np.array([0.8, 0.0, 0.9]))  # within waypoint_radius_m of the first
    assert walker.waypoint == 1
    _, v = walker.course(_Ctx(), np.array([2.75, 0.0, 0.9]))  # 0.25 m before the last: half of slow_m
    assert v[0] == pytest.approx(walker.walk_speed * 0.25 / walker.slow_m)


def test_a_start_at_rest_begins_with_gait_initiation_in_double_support():
    """PoleWalk starts at rest, dropped onto the feet: the walker holds double support (the DCM moving over the
    first stance foot, the left) for at least start_s, then lifts the right foot."""
    from mskbench.control.expert import ExpertPolicy
    from mskbench.envs import MSKEnv

    env = MSKEnv("PoleWalk")
    beh = courses.PoleWalk()
    pol = ExpertPolicy(env, beh)
    obs, _ = env.reset(seed=0)
    pol.reset(0)
    assert beh.schedule.phase == "double" and beh.schedule.stance == "l" and beh.starting_s > 0
    phases = []
    for _ in range(int(beh.start_max_s / env.task.control_dt_s) + 5):
        obs, *_ = env.step(pol.act(obs))
        phases.append(beh.schedule.phase)
    first_single = phases.index("single")
    assert first_single * env.task.control_dt_s >= beh.start_s - 1e-9
    assert beh.schedule.swing == "r" or beh.steps > 0
    env.close()


@pytest.mark.slow
def test_the_expert_pushes_the_door_open():
    """OpenDoor seed 0 (measured: the hand lets go at control step 100, the door passes 1 rad at step 203 and
    reaches its stop at 267): the right hand reaches the handle and pushes; within 300 control steps the door
    is open by Table XII's 1 rad."""
    from mskbench.control import make_controller
    from mskbench.envs import MSKEnv

    env = MSKEnv("OpenDoor")
    pol = make_controller("expert", env)
    obs, _ = env.reset(seed=0)
    pol.reset(0)
    angles = []
    for _ in range(300):
        obs, _, terminated, truncated, _ = env.step(pol.act(obs))
        angles.append(float(env.data.qpos[env.task.hinge_qpos]))
        if terminated or truncated:
            break
    assert max(angles) > 1.0
    assert pol.behaviour.released
    env.close()

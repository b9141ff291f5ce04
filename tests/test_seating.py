"""Sitting down: the expert's Sit (a balanced squat onto the seat) and WalkAndSit (a walk backwards to it)."""

from __future__ import annotations

import numpy as np
import pytest

from mskbench.control import seating
from mskbench.tasks import chair


class _Ctx:
    control_dt_s = 0.01


def test_no_foot_lands_closer_to_the_seat_than_its_front_edge():
    walker = seating.WalkAndSit()
    edge = chair.FRONT_EDGE_X_M + walker.heel_clear_m
    behind = walker.foothold(_Ctx(), "l", np.array([edge - 0.3, 0.12, 0.05]))
    assert behind == pytest.approx([edge, 0.12, 0.05])  # only x moves
    ahead = np.array([edge + 0.4, -0.1, 0.05])
    assert walker.foothold(_Ctx(), "r", ahead) == pytest.approx(ahead)


def test_the_walk_goes_backwards_to_the_chair_facing_away_from_it():
    """Facing +x (heading 0), the velocity points behind the body towards the aim point ``sit_at_m`` ahead of the
    seat target, at ``walk_speed`` once ramped up and further than ``slow_m``; sideways it steers back onto the
    chair's centre line."""
    walker = seating.WalkAndSit()
    walker.elapsed_s = 10.0
    aim = chair.SEAT_TARGET[0] + walker.sit_at_m
    heading, v = walker.course(_Ctx(), np.array([aim + 1.0, 0.1, 0.9]))
    assert heading == 0.0
    assert v[0] == pytest.approx(-walker.walk_speed * 1.0 / np.hypot(1.0, 0.1))
    assert v[1] == pytest.approx(-walker.side_gain * 0.1)
    # near the aim point it slows in proportion
    _, v = walker.course(_Ctx(), np.array([aim + 0.3, 0.0, 0.9]))
    assert v[0] == pytest.approx(-walker.walk_speed * 0.3 / walker.slow_m)


@pytest.mark.slow
def test_the_expert_squats_down_onto_the_seat_and_sits():
    """Sit seed 0 (measured: the pelvis touches the seat at control step 77 and the sit flag rises at step 151):
    the flag within 200 control steps, the knees bent past Table XII's 1.2 rad, the trunk back upright."""
    from mskbench.control import make_controller
    from mskbench.envs import MSKEnv

    env = MSKEnv("Sit")
    pol = make_controller("expert", env)
    obs, _ = env.reset(seed=0)
    pol.reset(0)
    for step in range(200):
        obs, _, terminated, truncated, _ = env.step(pol.act(obs))
        assert not terminated
        if env.task_state["has_sat_down"]:
            break
    assert env.task_state["has_sat_down"]
    assert pol.behaviour.landed
    view = env.sim.view()
    assert float(chair.mean_hip_knee(view, np)[1]) >= 1.2
    assert float(view.u_torso[2]) > 0.8  # sitting up, not leaning back
    env.close()


@pytest.mark.slow
def test_the_expert_walks_backwards_and_sits():
    """WalkAndSit seed 1 (measured: 6 steps back, the sit from control step 213): Table XII's success, the
    sit flag raised and the 500 steps reached."""
    from mskbench.control import make_controller
    from mskbench.envs import MSKEnv
    from mskbench.eval.episodes import play_episode

    env = MSKEnv("WalkAndSit")
    pol = make_controller("expert", env)
    played = play_episode(env, pol, 1)
    assert played.steps == 500 and played.info["success"]
    assert pol.behaviour.steps >= 3 and pol.behaviour.sit is not None
    env.close()

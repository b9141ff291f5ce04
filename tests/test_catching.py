"""The expert's Catch: hands side by side under where the thrown cube comes down, then a give and a hold."""

from __future__ import annotations

import numpy as np
import pytest

from mskbench.control.balance import GRAVITY
from mskbench.control.behaviours import coming_down_through


def test_the_cube_is_met_where_its_ballistic_path_comes_down_through_the_tray():
    p, v = np.array([0.9, 0.05, 1.2]), np.array([-1.5, 0.1, 1.5])
    aim = coming_down_through(p, v, 1.17)
    # on the way down: the later of the two times the path is at 1.17 m
    t = (aim[0] - p[0]) / v[0]
    assert t > v[2] / GRAVITY  # past the apex
    assert p[2] + v[2] * t - 0.5 * GRAVITY * t * t == pytest.approx(1.17)
    assert aim[1] == pytest.approx(p[1] + v[1] * t) and aim[2] == 1.17
    assert coming_down_through(np.array([0.0, 0.0, 1.0]), v, 1.17) is None  # still below it: no prediction


@pytest.mark.slow
def test_the_expert_catches_the_cube_and_holds_it():
    """Catch seed 0 (measured: the cube within the catch radius of the hands from control step 20, held to the 200th step):
    Table XII's success, the catch flag raised, the cube never dropped."""
    from mskbench.control import make_controller
    from mskbench.envs import MSKEnv
    from mskbench.eval.episodes import play_episode

    env = MSKEnv("Catch")
    pol = make_controller("expert", env)
    played = play_episode(env, pol, 0)
    assert played.steps == 200 and played.termination == "time_limit" and played.info["success"]
    assert pol.behaviour.caught_at is not None and bool(env.task_state["caught"])
    env.close()

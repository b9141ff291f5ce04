"""Sitting down: the expert's Sit (a balanced squat onto the seat)."""

from __future__ import annotations

import numpy as np
import pytest

from mskbench.tasks import chair


@pytest.mark.slow
def test_the_expert_squats_down_onto_the_seat_and_sits():
    """Sit seed 0 (measured: the pelvis touches the seat at control step 80 and the sit flag rises at step 151):
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

"""The expert controller (mskbench.control) and the muscle model it reads (mskbench.sim.muscles)."""

from __future__ import annotations

import mujoco
import numpy as np
import pytest

from mskbench.envs import MSKEnv
from mskbench.sim.muscles import MuscleParams, activation_after, activation_rate, excitation_for, muscle_gain_bias


@pytest.fixture(scope="module")
def stand_env():
    env = MSKEnv("Stand")
    yield env
    env.close()


def test_muscle_curves_match_mujoco_on_random_states(stand_env):
    m = stand_env.model
    ids = stand_env.handles.muscle_ids
    p = MuscleParams(m, ids)
    rng = np.random.default_rng(0)
    for _ in range(3):
        length = rng.uniform(m.actuator_lengthrange[ids, 0] - 0.03, m.actuator_lengthrange[ids, 1] + 0.03)
        velocity = rng.normal(0.0, 0.6, ids.size)
        gain, bias = muscle_gain_bias(p, length, velocity)
        ref_gain = [mujoco.mju_muscleGain(length[i], velocity[i], m.actuator_lengthrange[j], m.actuator_acc0[j],
                                          m.actuator_gainprm[j, :9]) for i, j in enumerate(ids)]
        ref_bias = [mujoco.mju_muscleBias(length[i], m.actuator_lengthrange[j], m.actuator_acc0[j],
                                          m.actuator_biasprm[j, :9]) for i, j in enumerate(ids)]
        np.testing.assert_allclose(gain, ref_gain, rtol=1e-12, atol=1e-9)
        np.testing.assert_allclose(bias, ref_bias, rtol=1e-12, atol=1e-9)
        act, ctrl = rng.uniform(0, 1, ids.size), rng.uniform(0, 1, ids.size)
        ref_rate = [mujoco.mju_muscleDynamics(ctrl[i], act[i], m.actuator_dynprm[j, :3]) for i, j in enumerate(ids)]
        np.testing.assert_allclose(activation_rate(p, act, ctrl), ref_rate, rtol=1e-12, atol=1e-12)


def test_activation_over_a_control_step_is_mujocos_and_inverts(stand_env):
    env = stand_env
    h = env.handles
    p = MuscleParams(env.model, h.muscle_ids)
    env.reset(seed=0)
    rng = np.random.default_rng(1)
    act0 = env.data.act[h.muscle_act_adr].copy()
    ctrl = rng.uniform(0.0, 1.0, env.n_muscles)
    predicted = activation_after(p, act0, ctrl, env.model.opt.timestep, env.sim.frame_skip)
    env.step(2.0 * ctrl - 1.0)
    np.testing.assert_allclose(predicted, env.data.act[h.muscle_act_adr], atol=1e-12)
    # the excitation that reaches those activations is the one applied
    back = excitation_for(p, act0, predicted, env.model.opt.timestep, env.sim.frame_skip)
    np.testing.assert_allclose(back, ctrl, atol=1e-6)
    # an unreachable target gives the bound
    out = excitation_for(p, np.zeros(3 * 0 + act0.size), np.full(act0.size, 2.0), env.model.opt.timestep, 10)
    assert np.all(out > 1.0 - 1e-6)

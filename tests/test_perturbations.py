"""Robustness perturbations: each hook changes what it should and nothing else."""

from __future__ import annotations

import numpy as np
import pytest

from mskbench.envs import Perturbation
from mskbench.envs.perturbations import OBS_CLIP, muscle_gain_scale, noisy_action, noisy_observation


# -- pure functions ----------------------------------------------------------------------
def test_noisy_action_formula():
    u = np.array([0.0, 0.5, -0.9, 1.0, -1.0])
    eps = np.array([1.0, -2.0, -1.0, 0.3, 5.0])
    np.testing.assert_allclose(noisy_action(u, 0.1, eps), [0.1, 0.3, -1.0, 1.0, -0.5])
    np.testing.assert_array_equal(noisy_action(u, 0.0, eps), u)


def test_noisy_observation_formula():
    x = np.array([0.0, 19.99, -19.99, 100.0, -100.0, 3.0])
    eps = np.array([1.0, 1.0, -1.0, 0.0, 0.0, -2.0])
    out = noisy_observation(x, 0.5, eps)
    np.testing.assert_allclose(out, [0.5, 20.0, -20.0, 20.0, -20.0, 2.0])
    assert OBS_CLIP == 20.0


def test_muscle_gain_scale_formula():
    u = np.array([0.0, 0.25, 0.5, 1.0])
    np.testing.assert_allclose(muscle_gain_scale(u, 0.2), [0.8, 0.9, 1.0, 1.2])
    np.testing.assert_array_equal(muscle_gain_scale(u, 0.0), np.ones(4))


# -- validation ---------------------------------------------------------------------------
@pytest.mark.parametrize("field", ["action_noise_std", "observation_noise_std", "muscle_gain_range"])
@pytest.mark.parametrize("value", [-0.1, float("nan"), float("inf"), "0.1", None])
def test_perturbation_rejects_bad_values(field, value):
    with pytest.raises(ValueError, match=field):
        Perturbation(**{field: value})


@pytest.mark.parametrize("value", [1.0, 1.5])
def test_perturbation_rejects_gain_range_at_or_above_one(value):
    with pytest.raises(ValueError, match="muscle_gain_range"):
        Perturbation(muscle_gain_range=value)


def test_perturbation_valid_and_active():
    assert not Perturbation().active
    assert Perturbation(action_noise_std=0.1).active
    assert Perturbation(observation_noise_std=1).active
    assert Perturbation(muscle_gain_range=0.999).active
    with pytest.raises(AttributeError):
        Perturbation().action_noise_std = 0.5  # frozen


def test_perturbation_accepts_numpy_scalars_and_rejects_bools():
    p = Perturbation(action_noise_std=np.float32(0.1), muscle_gain_range=np.float32(0.2),
                     observation_noise_std=np.int64(1))
    assert p.action_noise_std == pytest.approx(0.1)
    assert type(p.observation_noise_std) is float and p.observation_noise_std == 1.0
    for bad in (True, np.bool_(True)):
        with pytest.raises(ValueError, match="finite number"):
            Perturbation(action_noise_std=bad)


# -- action noise -------------------------------------------------------------------------
def test_action_noise(make_env, walk_env, random_actions):
    env = make_env("Walk", perturbation=Perturbation(action_noise_std=0.1))
    obs_p, _ = env.reset(seed=3)
    obs_n, _ = walk_env.reset(seed=3)
    np.testing.assert_array_equal(obs_p, obs_n)  # init stream untouched by the action stream

    a = random_actions(0, 1)[0] * 0.5
    env.step(a)
    clean = (a.astype(np.float64) + 1.0) / 2.0
    ctrl = env.data.ctrl.copy()
    assert not np.allclose(ctrl, clean)
    assert ctrl.min() >= 0.0 and ctrl.max() <= 1.0
    dev = ctrl - clean
    # Noise on the action is σ=0.1, i.e. 0.05 on the excitation; none clipped for |a| <= 0.5.
    assert 0.03 < dev.std() < 0.07
    assert abs(dev.mean()) < 0.02

    # The action stream is reseeded by reset(seed=...).
    env.reset(seed=3)
    env.step(a)
    np.testing.assert_array_equal(env.data.ctrl, ctrl)

    # The noise draws do not disturb the next episode's initial state either.
    walk_env.reset(seed=3)
    walk_env.step(a)
    walk_env.step(a)
    env.step(a)
    np.testing.assert_array_equal(env.reset()[0], walk_env.reset()[0])
    env.reset(seed=3)

    # Saturated actions stay in [0, 1].
    env.step(np.ones(416, np.float32))
    assert env.data.ctrl.max() == 1.0 and env.data.ctrl.min() >= 0.0
    assert np.any(env.data.ctrl < 1.0)


def test_zero_action_noise_is_exact(walk_env, random_actions):
    assert walk_env.perturbation == Perturbation()
    walk_env.reset(seed=3)
    a = random_actions(0, 1)[0]
    walk_env.step(a)
    np.testing.assert_array_equal(walk_env.data.ctrl, (a.astype(np.float64) + 1.0) / 2.0)


# -- observation noise --------------------------------------------------------------------
def test_observation_noise_zero_std_is_identity(stand_env):
    x = np.linspace(-30, 30, 1928).astype(np.float32)
    out = stand_env.perturb_normalized_observation(x)
    np.testing.assert_array_equal(out, x)


def test_observation_noise_hook(make_env, reach_env, random_actions):
    env = make_env("Reach", perturbation=Perturbation(observation_noise_std=0.5))
    obs_p, _ = env.reset(seed=4)
    obs_n, _ = reach_env.reset(seed=4)
    np.testing.assert_array_equal(obs_p, obs_n)

    x = np.zeros(1927, np.float32)
    x[:4] = (19.99, -19.99, 1e6, -1e6)
    y = env.perturb_normalized_observation(x)
    assert y.shape == x.shape and y.dtype == x.dtype
    assert np.all(np.abs(y) <= OBS_CLIP)
    assert y[2] == OBS_CLIP and y[3] == -OBS_CLIP
    assert not np.array_equal(y, x)
    noise = y[4:]
    assert 0.4 < noise.std() < 0.6 and abs(noise.mean()) < 0.05
    assert np.all(x[4:] == 0.0)  # input not modified in place

    # The env's own observations, excitations and rewards are unaffected by the hook.
    for a in random_actions(8, 4):
        env.perturb_normalized_observation(x)
        o1, r1, *_ = env.step(a)
        o2, r2, *_ = reach_env.step(a)
        np.testing.assert_array_equal(o1, o2)
        np.testing.assert_array_equal(env.data.ctrl, reach_env.data.ctrl)
        assert r1 == r2
    # Nor does the hook's randomness reach the next episode's initial state.
    env.perturb_normalized_observation(x)
    np.testing.assert_array_equal(env.reset()[0], reach_env.reset()[0])


# -- muscle gain --------------------------------------------------------------------------
def test_muscle_gain(make_env):
    env = make_env("Stand", perturbation=Perturbation(muscle_gain_range=0.2))
    m = env.model
    # Before the first reset the model holds the compiled (nominal) values.
    gain0 = m.actuator_gainprm[:, 2].copy()
    bias0 = m.actuator_biasprm[:, 2].copy()
    np.testing.assert_array_equal(env.handles.muscle_force_nominal, gain0)
    assert np.all(gain0 > 0)
    others_gain = np.delete(m.actuator_gainprm, 2, axis=1).copy()
    others_bias = np.delete(m.actuator_biasprm, 2, axis=1).copy()

    _, info = env.reset(seed=0)
    factor = info["muscle_gain"]
    assert factor.shape == (416,)
    ratio = m.actuator_gainprm[:, 2] / gain0
    np.testing.assert_allclose(ratio, factor, rtol=1e-12)
    assert ratio.min() >= 0.8 and ratio.max() <= 1.2
    assert ratio.min() < 0.85 and ratio.max() > 1.15  # spread over the range
    assert np.unique(ratio).size > 400
    np.testing.assert_allclose(m.actuator_biasprm[:, 2], bias0 * factor, rtol=1e-12)
    np.testing.assert_array_equal(env.muscle_gain, factor)
    # Nothing else in the muscle parameters changes.
    np.testing.assert_array_equal(np.delete(m.actuator_gainprm, 2, axis=1), others_gain)
    np.testing.assert_array_equal(np.delete(m.actuator_biasprm, 2, axis=1), others_bias)

    # A new factor each episode, and the scaling does not compound.
    _, info2 = env.reset()
    assert not np.array_equal(info2["muscle_gain"], factor)
    np.testing.assert_allclose(m.actuator_gainprm[:, 2] / gain0, info2["muscle_gain"], rtol=1e-12)
    # Reproducible from the seed.
    _, info3 = env.reset(seed=0)
    np.testing.assert_array_equal(info3["muscle_gain"], factor)

    # Switching the perturbation off restores the nominal values exactly.
    env.perturbation = Perturbation()
    _, info4 = env.reset(seed=0)
    np.testing.assert_array_equal(info4["muscle_gain"], np.ones(416))
    assert np.array_equal(m.actuator_gainprm[:, 2], gain0)
    assert np.array_equal(m.actuator_biasprm[:, 2], bias0)


def test_muscle_gain_changes_dynamics_not_init(make_env, stand_env):
    env = make_env("Stand", perturbation=Perturbation(muscle_gain_range=0.5))
    o_p, _ = env.reset(seed=1)
    o_n, _ = stand_env.reset(seed=1)
    lay = env.obs_layout
    # Same initial configuration (gain draws come from their own stream) ...
    np.testing.assert_array_equal(o_p[lay["qpos"]], o_n[lay["qpos"]])
    np.testing.assert_array_equal(o_p[lay["qvel"]], o_n[lay["qvel"]])
    # ... but the forces the muscles make differ.
    a = np.full(416, 0.5, np.float32)
    o_p, *_ = env.step(a)
    o_n, *_ = stand_env.step(a)
    assert not np.allclose(o_p[lay["muscle_force"]], o_n[lay["muscle_force"]])

"""Residual adaptation (Eq. 2 / 38, App. A-J): the clip arithmetic, the α schedule from foot contact,
elastic pacing, the GRF threshold, the wrapper's reward, and the paradigm end to end through the CLI.

(The task contract and NumPy/JAX parity of ResidualWalk/Run/Stairs are checked by
test_task_contract.py and test_array_namespace.py.)
"""

from __future__ import annotations

import json
from types import SimpleNamespace

import mujoco
import numpy as np
import pytest
from click.testing import CliRunner

from mskbench.paradigms.residual import (ResidualMap, ResidualPolicy, ResidualVectorEnv, combine, residual_penalty)
from mskbench.cli import main


# -- Eq. 38 -----------------------------------------------------------------------------------
def test_residual_clip_arithmetic():
    a_base = np.array([0.0, 0.5, 0.9, -0.9, -1.0, 0.2])
    a_res = np.array([0.5, 0.5, 0.5, -0.5, 3.0, -7.0])  # the last two are clipped to ±1 first
    alpha = 0.6
    expected = [0.3, 0.8, 1.0, -1.0, -0.4, -0.4]  # 0.9 + 0.3 and −0.9 − 0.3 hit the outer clip
    np.testing.assert_allclose(combine(a_base, a_res, alpha, np), expected, atol=1e-12)
    np.testing.assert_allclose(combine(a_base, np.zeros(6), alpha, np), a_base)  # zero residual = the base
    per_muscle = np.array([0.2, 0.6, 0.2, 0.6, 0.6, 0.2])
    np.testing.assert_allclose(combine(a_base, a_res, per_muscle, np),
                               np.clip(a_base + per_muscle * np.clip(a_res, -1, 1), -1, 1))
    assert residual_penalty(np.array([[1.0, -1.0, 0.0, 2.0]]), np)[0] == pytest.approx(1.5)
    jnp = pytest.importorskip("jax.numpy")
    np.testing.assert_allclose(np.asarray(combine(jnp.asarray(a_base), jnp.asarray(a_res), alpha, jnp)), expected,
                               atol=1e-6)


class _FakeTask:
    name = "Fake"
    residual_l2_weight = -0.02

    def residual_alpha(self, contact, xp):
        return 0.2 + 0.4 * (1.0 - contact[..., :1]) + 0.0 * contact[..., 1:]


class _FakeVector:
    """Two worlds whose observation is [contact L, contact R, a_base (3)]; it records what it executes."""

    num_envs, obs_size, action_size = 2, 5, 3
    obs_layout = {"task/foot_contact": slice(0, 2), "task/base_action": slice(2, 5)}

    def __init__(self):
        self.envs = [SimpleNamespace(task=_FakeTask())]
        self.obs = np.array([[1.0, 1.0, 0.0, 0.5, -0.5], [0.0, 1.0, 0.9, 0.0, 0.0]])
        self.executed = None

    def reset(self, seed=None):
        return self.obs.copy()

    def step(self, actions):
        self.executed = actions
        return (self.obs.copy(), np.array([1.0, 2.0]), np.array([False, True]), np.array([False, False]),
                {"final_obs": self.obs.copy(), "episode_returns": [2.0]})

    def close(self):
        pass


def test_vector_wrapper_executes_eq38_and_adds_the_residual_penalty():
    env = ResidualVectorEnv(_FakeVector())
    env.reset(seed=0)
    a_res = np.array([[1.0, 1.0, 1.0], [0.5, -2.0, 0.0]])
    obs, reward, terminated, truncated, info = env.step(a_res)
    # world 0: both feet down -> α 0.2; world 1: left foot in the air -> α 0.6
    np.testing.assert_allclose(env.env.executed, [[0.2, 0.7, -0.3], [1.0, -0.6, 0.0]])
    np.testing.assert_allclose(reward, [1.0 - 0.02 * 1.0, 2.0 - 0.02 * (0.25 + 4.0) / 3])
    assert info["episode_returns"] == [pytest.approx(reward[1])]  # the finished world's return, penalty included
    policy = ResidualPolicy(SimpleNamespace(act=lambda o: np.array([1.0, 1.0, 1.0])),
                            ResidualMap(_FakeTask(), _FakeVector.obs_layout))
    np.testing.assert_allclose(policy.act(_FakeVector().obs[0]), [0.2, 0.7, -0.3], atol=1e-7)


# -- Eq. 41: α from foot contact ----------------------------------------------------------------------
def test_alpha_schedule_from_foot_contact(shared_envs):
    env = shared_envs("ResidualWalk")
    task = env.task
    names = env.handles.muscle_names
    left, right = task._left, task._right
    assert left.sum() == right.sum() == 208 and not np.any(left & right)  # MyoFullBody: every muscle has a side
    contact = np.array([[1.0, 1.0], [0.0, 1.0], [1.0, 0.0], [0.0, 0.0]])
    alpha = task.residual_alpha(contact, np)
    assert alpha.shape == (4, len(names))
    np.testing.assert_allclose(alpha[0], 0.2)  # double support: stance everywhere
    np.testing.assert_allclose(alpha[1][left], 0.6) and np.testing.assert_allclose(alpha[1][right], 0.2)
    np.testing.assert_allclose(alpha[2][left], 0.2) and np.testing.assert_allclose(alpha[2][right], 0.6)
    np.testing.assert_allclose(alpha[3], 0.6)  # flight: swing on both sides
    assert any(n.endswith("_l") for n in np.asarray(names)[left])
    jnp = pytest.importorskip("jax.numpy")
    np.testing.assert_allclose(np.asarray(task.residual_alpha(jnp.asarray(contact), jnp)), alpha, atol=1e-7)

    # from the touch sensors: lifted 0.3 m off the floor no foot touches -> swing on both sides
    env.reset(seed=0)
    env.data.qpos[2] += 0.3
    mujoco.mj_forward(env.model, env.data)
    view = env.sim.view()
    np.testing.assert_array_equal(task.foot_contact(view, np), [0.0, 0.0])
    np.testing.assert_allclose(task.residual_alpha(task.foot_contact(view, np), np), 0.6)
    env.reset(seed=0)
    # the other residual tasks: constant α = 0.6
    run = shared_envs("ResidualRun").task
    np.testing.assert_allclose(run.residual_alpha(contact, np), 0.6)


# -- App. A-J2: elastic pacing ----------------------------------------------------------------------
def test_pacing_slows_exactly_when_the_planar_deviation_passes_04_m(shared_envs):
    env = shared_envs("ResidualStairs")
    task = env.task
    dt = env.control_dt_s
    for seed, offset_m, rate in ((0, 0.399, 1.0), (0, 0.401, 0.5), (1, 0.0, 1.0)):
        env.reset(seed=seed)
        ts = dict(env.task_state)
        ref = task.reference.pelvis(ts["ref_t"], ts["phase0"], ts["root0"])
        env.data.qpos[0] += ref[0] - env.sim.view().pelvis_pos[0]  # the pelvis exactly on the reference in x ...
        env.data.qpos[1] += ref[1] - env.sim.view().pelvis_pos[1] + offset_m  # ... and off it in y
        env.data.qpos[2] += 0.5  # vertical deviation does not count (planar, Eq. 39)
        mujoco.mj_forward(env.model, env.data)
        view = env.sim.view()
        assert float(task.planar_deviation(view, ts, np)) == pytest.approx(offset_m, abs=1e-9)
        assert float(task.pacing_rate(view, ts, np)) == rate
        assert float(task.advance(view, ts, np)["ref_t"]) == pytest.approx(float(ts["ref_t"]) + rate * dt)
        # the planar root term ignores the 0.5 m lift: only the y offset enters it
        assert float(task.tracking_terms(view, task.advance(view, ts, np), np)["root_pos"]) == pytest.approx(
            np.exp(-10.0 * offset_m**2 / 2), rel=0.2)
    env.reset(seed=0)


# -- App. A-J4: the GRF penalty threshold and flight ------------------------------------------------------
def test_grf_penalty_threshold_and_flight_phase(shared_envs):
    env = shared_envs("ResidualRun")
    task = env.task
    bw = task._body_weight_n
    assert bw == pytest.approx(env.handles.total_mass * 9.81)

    def terms(touch):
        s = SimpleNamespace(touch=np.asarray(touch, float), com_vel=np.array([4.0, 0.0, 0.0]))
        return float(task.grf_penalty(s, np)), float(task.in_flight(s, np)), float(task.propel(s, np))

    assert terms([0.0, 1.25 * bw, 0.0, 1.25 * bw])[0] == 0.0  # exactly 2.5 body weights: no penalty
    assert terms([0.0, 0.0, 2.5 * bw + 10.0, 0.0])[0] == pytest.approx(10.0 / bw)  # just above: linear
    assert terms([bw, bw, bw, 0.0])[0] == pytest.approx(0.5)
    assert terms([0.0, 0.0, 0.0, 0.0])[1:] == (1.0, pytest.approx(1.0))  # flight: propel max(0, 4 − 3)
    assert terms([0.0, 0.0, 5.0, 0.0])[1:] == (0.0, 0.0)  # one foot on the ground: no flight, no propel


# -- the paradigm end to end through the CLI ---------------------------------------------------------------
TINY = ["--num-envs", "1", "--rollout", "8", "--steps", "8", "--hidden", "8", "--minibatch", "8", "--epochs", "1",
        "--eval-episodes", "1"]


@pytest.mark.slow  # two (tiny) training runs, as the other training runs of the suite
def test_cli_tracking_prior_then_residual(tmp_path):
    runner = CliRunner()
    prior = tmp_path / "prior"
    result = runner.invoke(main, ["train", "TrackWalk", "--out", str(prior), *TINY])
    assert result.exit_code == 0, result.output
    assert (prior / "best.npz").is_file()

    res = tmp_path / "res"
    result = runner.invoke(main, ["train", "ResidualWalk", "--base", str(prior), "--out", str(res), *TINY])
    assert result.exit_code == 0, result.output
    settings = json.loads((res / "run.json").read_text())
    assert settings["task_options"]["base"] == str((prior / "best.npz").resolve())
    assert settings["env_wrapper"]["paradigm"] == "residual"
    log = [json.loads(line) for line in (res / "eval_log.jsonl").read_text().splitlines()]
    assert log[-1]["steps"] == 8 and "mean_length" in log[-1]["eval"]  # evaluated through the residual map

    for args, message in ((["train", "ResidualWalk", "--out", str(tmp_path / "x"), *TINY], "give --base"),
                          (["train", "Walk", "--base", str(prior), "--out", str(tmp_path / "y"), *TINY],
                           "--base is for the residual tasks"),
                          (["train", "ResidualRun", "--base", str(tmp_path / "nothing"), "--out",
                            str(tmp_path / "z"), *TINY], "does not exist")):
        result = runner.invoke(main, args)
        assert result.exit_code == 2 and message in result.output, result.output

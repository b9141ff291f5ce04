"""Residual RL over the privileged expert (mskbench.paradigms.residual.expert):
the executed action is Eq. 38 over the expert bound to each world, the observation carries a_base, the reward
the residual penalty; a run trained with --base expert evaluates with the expert in the loop, and the store,
the leaderboard and the report keep it apart as privileged."""

from __future__ import annotations

import json

import numpy as np
import pytest
from click.testing import CliRunner

from mskbench.cli import main
from mskbench.control import make_controller
from mskbench.eval.store import ResultsStore
from mskbench.paradigms.residual.action import combine
from mskbench.paradigms.residual.expert import (ALPHA, BASE_BLOCK, C_RES, ExpertBaseVectorEnv, ExpertResidualPolicy,
                                                with_base_block)


class _Spy:
    """Records what a world executes and the task's reward it pays."""

    def __init__(self, world):
        self.world, self.step_fn = world, world.step
        self.actions: list[np.ndarray] = []
        self.rewards: list[float] = []

    def __call__(self, action):
        out = self.step_fn(action)
        self.actions.append(np.asarray(action, np.float64).copy())
        self.rewards.append(float(out[1]))
        return out


def test_expert_base_env_executes_eq38_over_the_expert_of_its_world():
    from mskbench.envs.vector import MSKVectorEnv

    env = ExpertBaseVectorEnv(MSKVectorEnv("Stand", num_envs=1))
    world = env.worlds[0]
    n, size = env.action_size, world.observation_space.shape[0]
    assert env.obs_layout[BASE_BLOCK] == slice(size, size + n) and env.obs_size == size + n
    spy = _Spy(world)
    world.step = spy
    twin = make_controller("expert", world)  # a second expert bound to the same world, in lockstep
    obs = env.reset(seed=3)
    twin.reset()
    rng = np.random.default_rng(0)
    for a_res in (np.zeros((1, n)), rng.uniform(-2, 2, (1, n))):
        a_base = twin.act(obs[0, :size])
        np.testing.assert_array_equal(obs[0, size:], a_base)  # the observation carries the expert's action
        obs, reward, terminated, truncated, info = env.step(a_res)
        expected = combine(a_base.astype(np.float64), a_res[0], ALPHA, np)
        np.testing.assert_allclose(spy.actions[-1], expected, atol=1e-7)  # what the world executed
        if not a_res.any():
            np.testing.assert_allclose(spy.actions[-1], a_base, atol=1e-7)  # a_res = 0: the expert's action
        penalty = C_RES * np.mean(a_res[0] ** 2)
        assert reward[0] == pytest.approx(spy.rewards[-1] + penalty, abs=1e-9)
        assert info["residual_penalty"][0] == pytest.approx(penalty)
    env.close()


def test_expert_residual_policy_acts_over_the_bound_expert(stand_env):
    size, n = stand_env.observation_space.shape[0], stand_env.action_space.shape[0]
    seen = []

    class Residual:
        def act(self, x):
            seen.append(np.asarray(x).copy())
            return np.full(n, 0.5, np.float32)

    policy = ExpertResidualPolicy.bound(Residual(), stand_env)
    twin = make_controller("expert", stand_env)
    assert policy.privileged and twin.privileged
    obs, _ = stand_env.reset(seed=1)
    policy.reset(1)
    twin.reset(1)
    a_base = twin.act(obs)
    action = policy.act(obs)
    assert seen[0].shape == (size + n,)
    np.testing.assert_array_equal(seen[0][size:], a_base)
    np.testing.assert_allclose(action, np.clip(a_base + ALPHA * 0.5, -1, 1), atol=1e-6)
    assert with_base_block(stand_env.obs_layout, size, n)[1] == size + n


def _record(method, seed=0, success=True, **extra):
    return {"method": method, "task": "Stand", "perturbation": "none", "scale": 0.0, "seed": seed,
            "success": success, "episode_return": 1.0, "length": 3, "termination": "time_limit", **extra}


def test_store_records_privileged_per_method_and_old_stores_fall_back_to_names(tmp_path):
    from mskbench.eval.leaderboard import ResultRow, format_leaderboard

    with ResultsStore(tmp_path / "s.db") as s:
        s.write(_record("expert"))  # an older mskbench wrote no flag: by name
        s.write(_record("ppo residual (expert base)", privileged=True))
        s.write(_record("ppo residual (expert base)", seed=1, privileged=False))  # once privileged, it stays
        s.write(_record("hold", privileged=False))  # a method named like a built-in but recorded otherwise
        s.write(_record("PPO", privileged=False))
        assert s.privileged_methods() == ["expert", "ppo residual (expert base)"]
    rows = [ResultRow("Stand", m, "none", 0, 50) for m in ("expert", "ppo residual (expert base)", "hold", "PPO")]
    from mskbench.eval.leaderboard import compute_leaderboard

    table = format_leaderboard(compute_leaderboard(rows), privileged=["expert", "ppo residual (expert base)"])
    assert [c.header for c in table.columns[2:]] == ["hold", "PPO", "expert †", "ppo residual (expert base) †"]
    assert "privileged" in str(table.caption)
    from mskbench.report.build import leaderboard_table

    html = leaderboard_table(compute_leaderboard(rows), {}, ["ppo residual (expert base)"])
    assert html.index("<th class=\"\">PPO</th>") < html.index("ppo residual (expert base) †") and "privileged" in html


@pytest.mark.parametrize("args, message", [
    (["Stand", "--backend", "jax"], "--backend cpu, not jax"),
    (["Run"], "which serves Stand, Powerlift"),
    (["Stand", "--algo", "bc"], "--algo ppo or sac, not bc"),
    (["Run", "--base", "somewhere"], "or --base expert on a task the expert serves"),
])
def test_base_expert_errors_are_one_line(tmp_path, args, message):
    base = [] if "--base" in args else ["--base", "expert"]
    result = CliRunner().invoke(main, ["train", *args, *base, "--out", str(tmp_path / "r")])
    assert result.exit_code == 2, result.output
    error = [line for line in result.output.splitlines() if line.startswith("Error")]
    assert len(error) == 1 and message in error[0], result.output


TINY = ["--num-envs", "1", "--rollout", "4", "--steps", "4", "--hidden", "8", "--minibatch", "4", "--epochs", "1",
        "--eval-episodes", "1"]


@pytest.mark.slow  # a (tiny) training run and an evaluation, three 416-muscle envs
def test_cli_train_over_the_expert_then_eval_is_privileged(tmp_path, monkeypatch):
    from mskbench.tasks.stand import Stand

    monkeypatch.setattr(Stand, "horizon", 3)  # three-step episodes: the evaluations stay short
    runner = CliRunner()
    run = tmp_path / "run"
    result = runner.invoke(main, ["train", "Stand", "--base", "expert", "--out", str(run), *TINY])
    assert result.exit_code == 0, result.output
    settings = json.loads((run / "run.json").read_text())
    assert settings["env_wrapper"]["base"] == "expert" and settings["env_wrapper"]["privileged"] is True
    log = [json.loads(line) for line in (run / "eval_log.jsonl").read_text().splitlines()]
    assert log[-1]["eval"]["mean_length"] == 3  # the evaluation acted with the expert in the loop

    store = tmp_path / "s.db"
    for policy, method in ((str(run), "ppo residual (expert base)"), ("zero", "zero")):
        result = runner.invoke(main, ["eval", "--task", "Stand", "--policy", policy, "--method", method,
                                      "--episodes", "1", "--store", str(store)])
        assert result.exit_code == 0, result.output
    with ResultsStore(store) as s:
        assert s.privileged_methods() == ["ppo residual (expert base)"]
        assert s.records(method="ppo residual (expert base)")[0]["length"] == 3
    board = runner.invoke(main, ["leaderboard", "--store", str(store), "--json"])
    assert board.exit_code == 0, board.output
    flags = {m: e["privileged"] for m, e in json.loads(board.output).items()}
    assert flags == {"ppo residual (expert base)": True, "zero": False}
    table = runner.invoke(main, ["leaderboard", "--store", str(store)])
    assert table.output.index("zero") < table.output.index("(expert base) †"), table.output
    batched = runner.invoke(main, ["eval", "--task", "Stand", "--policy", str(run), "--backend", "jax",
                                   "--store", str(store)])
    assert batched.exit_code == 2 and "trained over the expert" in batched.output, batched.output

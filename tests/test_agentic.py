"""Agentic reward tuning (App. A-E): the bounds, the shared weights file, the reasoners (rules, an HTTP
chat API against a local fake server, failing ones) and ``mskbench train Walk --agentic rule``."""

from __future__ import annotations

import http.server
import json
import multiprocessing
import threading
import time
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mskbench.paradigms.agentic import (ENV_KEY, ENV_MODEL, ENV_URL, HTTPReasoner, Proposal, RuleReasoner,
                                        WeightStore, bound_weights, normalize_l1, parse_reply)


# -- the bounds ------------------------------------------------------------------------------------------
def test_relative_bound_without_normalisation_on_hand_made_weights():
    current = {"a": 10.0, "b": -2.0, "z": 0.0}
    # a: +50 % -> +20 %; b: towards zero by 50 % -> -20 % of its magnitude; a zero weight may be switched on.
    assert bound_weights(current, {"a": 15.0, "b": -1.0, "z": 3.0}, l1_norm=None) == \
        pytest.approx({"a": 12.0, "b": -1.6, "z": 3.0})
    # inside the bound: taken as proposed; a key left out keeps its value
    assert bound_weights(current, {"a": 11.0}, l1_norm=None) == pytest.approx({"a": 11.0, "b": -2.0, "z": 0.0})
    # a sign flip is clipped to the bound on the old side
    assert bound_weights(current, {"b": 5.0}, l1_norm=None)["b"] == pytest.approx(-1.6)


def test_l1_normalisation_and_the_joint_projection_on_hand_made_weights():
    walk = {"velocity_tracking": 10.0, "kinematic_imitation": 3.0, "upright": 6.0, "no_hunch": 8.0,
            "forward_face": 8.0, "efficiency": -1.0}
    w = normalize_l1(walk)  # ‖w‖₁ = 36 -> 40
    assert sum(abs(v) for v in w.values()) == pytest.approx(40.0, abs=1e-12)
    assert w["velocity_tracking"] == pytest.approx(400 / 36) and w["efficiency"] == pytest.approx(-40 / 36)
    # Proposed (8, 12, 24) around (10, 10, 20): clipping alone leaves ‖w‖₁ = 44 and rescaling to 40 would
    # take a to 7.27 (-27 %); the projection (shift every magnitude by τ = 2, a held at its bound) gives
    # (8, 10, 22): a -20 %, b 0 %, c +10 %, ‖w‖₁ = 40.
    current = {"a": 10.0, "b": 10.0, "c": 20.0}
    assert bound_weights(current, {"a": 8.0, "b": 12.0, "c": 24.0}) == pytest.approx({"a": 8.0, "b": 10.0, "c": 22.0})
    # (30, 10) asked to go to (36, 10): b hits its lower bound, a takes the rest: (32, 8).
    assert bound_weights({"a": 30.0, "b": 10.0}, {"a": 36.0, "b": 10.0}) == pytest.approx({"a": 32.0, "b": 8.0})
    # signs are kept, zero weights stay zero, penalties count in the norm
    out = bound_weights({"a": 30.0, "p": -10.0, "z": 0.0}, {"a": 30.0, "p": 4.0, "z": 9.0})
    assert out["p"] < 0 and out["z"] == 0.0 and sum(map(abs, out.values())) == pytest.approx(40.0)
    with pytest.raises(ValueError, match="normalise them first"):
        bound_weights({"a": 1.0}, {"a": 1.0})
    with pytest.raises(ValueError, match="unknown reward weight.*'q'.*valid: 'a', 'b'"):
        bound_weights({"a": 20.0, "b": 20.0}, {"q": 1.0})
    with pytest.raises(ValueError, match="finite"):
        bound_weights({"a": 20.0, "b": 20.0}, {"a": float("nan")})


def test_the_bounds_hold_on_random_proposals():
    rng = np.random.default_rng(0)
    for _ in range(300):
        n = int(rng.integers(2, 8))
        raw = rng.normal(0, 5, n) * (rng.random(n) > 0.2)
        if not raw.any():
            raw[0] = 1.0
        current = normalize_l1({f"w{i}": float(v) for i, v in enumerate(raw)})
        proposed = {k: float(v * rng.uniform(-1, 3)) for k, v in current.items()}
        out = bound_weights(current, proposed)
        old, new = np.array(list(current.values())), np.array(list(out.values()))
        assert np.abs(new).sum() == pytest.approx(40.0, abs=1e-9)
        assert (np.abs(new - old) <= 0.2 * np.abs(old) + 1e-9).all()
        assert (np.sign(new) == np.sign(old)).all()


# -- the shared weights file -------------------------------------------------------------------------------
def _increment_many(path: str, n: int, who: str, barrier) -> None:
    store = WeightStore(path)
    barrier.wait(60)  # both processes are ready: their updates overlap

    def change(version, weights):
        time.sleep(0.002)  # widen the read-modify-write window
        return {**weights, "count": weights["count"] + 1, who: weights[who] + 1}

    for _ in range(n):
        assert store.update(change) is not None


def test_two_processes_updating_the_shared_weights_lose_no_update(tmp_path):
    path = tmp_path / "reward_weights.json"
    store = WeightStore(path)
    store.reset({"count": 0.0, "p1": 0.0, "p2": 0.0})
    ctx = multiprocessing.get_context("spawn")
    barrier = ctx.Barrier(2)
    procs = [ctx.Process(target=_increment_many, args=(str(path), 40, who, barrier)) for who in ("p1", "p2")]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    version, weights = store.read()
    assert version == 80 and weights == {"count": 80.0, "p1": 40.0, "p2": 40.0}
    assert not list(tmp_path.glob("*.tmp"))  # every write was a rename of a complete file


def test_store_poll_sees_each_new_version_once_and_a_held_lock_skips(tmp_path):
    store = WeightStore(tmp_path / "w.json")
    store.reset({"a": 1.0})
    reader = WeightStore(store.path)
    assert reader.poll() == (0, {"a": 1.0}) and reader.poll() is None
    store.update(lambda v, w: {"a": 2.0})
    assert reader.poll() == (1, {"a": 2.0}) and reader.poll() is None
    assert store.update(lambda v, w: None) is None and store.read()[0] == 1  # no change, no new version
    with store.locked():
        assert WeightStore(store.path).update(lambda v, w: {"a": 3.0}, blocking=False) is None
    assert store.read() == (1, {"a": 2.0})


# -- the reasoners ---------------------------------------------------------------------------------------
WALK = normalize_l1({"velocity_tracking": 10.0, "kinematic_imitation": 3.0, "upright": 6.0, "no_hunch": 8.0,
                     "forward_face": 8.0, "efficiency": -1.0})
CALM = {"env_steps": 100, "forward_speed_mps": 1.15, "target_speed_mps": 1.2, "torso_pitch_rad": 0.02,
        "root_tilt_rad": 0.05, "joint_tracking_rmse_rad": 0.1, "episodes_ended": 0, "terminations": {}}


def test_rule_reasoner_follows_the_papers_examples():
    rule = RuleReasoner()
    calm = rule.propose(WALK, CALM)
    assert calm.weights == WALK and calm.reason.startswith("no deficiency")
    slow = rule.propose(WALK, {**CALM, "forward_speed_mps": 0.5})
    assert slow.weights["velocity_tracking"] == pytest.approx(1.2 * WALK["velocity_tracking"])
    assert "forward speed 0.50 m/s" in slow.reason and "raise velocity_tracking" in slow.reason
    hunched = rule.propose(WALK, {**CALM, "torso_pitch_rad": -0.3})
    assert [k for k in WALK if hunched.weights[k] != WALK[k]] == ["upright", "no_hunch"]
    falling = rule.propose(WALK, {**CALM, "episodes_ended": 4, "terminations": {"tilted": 3, "time_limit": 1}})
    assert "3 of 4 episodes ended by a fall" in falling.reason and falling.weights["upright"] > WALK["upright"]
    # a task without the named terms: the rule is skipped
    assert rule.propose({"alive": 40.0}, {**CALM, "forward_speed_mps": 0.1}).weights == {"alive": 40.0}


def test_parse_reply_accepts_the_documented_forms_and_rejects_garbage():
    keys = ["a", "b"]
    fenced = 'Sure.\n```json\n{"weights": {"a": 1, "b": 2.5}, "reason": "speed low"}\n```'
    assert parse_reply(fenced, keys) == Proposal({"a": 1.0, "b": 2.5}, "speed low")
    assert parse_reply('{"a": 3, "b": -1} trailing words', keys) == Proposal({"a": 3.0, "b": -1.0}, "")
    for bad, message in [("no json here", "no JSON object"), ('{"a": 1', "does not parse"),
                         ('{"a": 1}', "missing: b"), ('{"a": 1, "b": 2, "c": 3}', "unknown: c"),
                         ('{"a": true, "b": 2}', "must be a number"), ('{"a": NaN, "b": 2}', "finite"),
                         ('{"a": "1", "b": 2}', "must be a number")]:
        with pytest.raises(ValueError, match=message):
            parse_reply(bad, keys)


class _FakeChat(http.server.BaseHTTPRequestHandler):
    """An OpenAI-compatible /v1/chat/completions that answers what the test queued."""

    replies: list = []
    requests: list = []

    def do_POST(self):  # noqa: N802 - http.server's API
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "auth": self.headers.get("Authorization"), "body": body})
        status, content, delay = type(self).replies.pop(0)
        time.sleep(delay)
        payload = json.dumps({"choices": [{"message": {"role": "assistant", "content": content}}]}).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, *args):
        pass


@pytest.fixture()
def fake_chat():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _FakeChat)
    _FakeChat.replies, _FakeChat.requests = [], []
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/v1"
    server.shutdown()
    server.server_close()


def test_http_reasoner_against_a_local_fake_server(fake_chat, monkeypatch):
    for name in ("NO_PROXY", "no_proxy"):  # the fake server is local even behind a proxy
        monkeypatch.setenv(name, "127.0.0.1,localhost")
    monkeypatch.setenv(ENV_URL, fake_chat)
    monkeypatch.setenv(ENV_MODEL, "fake-model")
    monkeypatch.setenv(ENV_KEY, "sk-test")
    reasoner = HTTPReasoner(task="Walk", timeout_s=5)
    assert reasoner.url == fake_chat + "/chat/completions"
    proposed = {**WALK, "velocity_tracking": 12.0}
    _FakeChat.replies.append((200, "```json\n" + json.dumps({"weights": proposed, "reason": "too slow"}) + "\n```", 0))
    out = reasoner.propose(WALK, CALM)
    assert out == Proposal(proposed, "too slow")
    request = _FakeChat.requests[-1]
    assert request["path"] == "/v1/chat/completions" and request["auth"] == "Bearer sk-test"
    assert request["body"]["model"] == "fake-model"
    system, user = request["body"]["messages"]
    assert system["role"] == "system" and "20%" in system["content"] and "40" in system["content"]
    assert "Task: Walk" in user["content"] and json.dumps(WALK) in user["content"] and '"forward_speed_mps": 1.15' \
        in user["content"]
    _FakeChat.replies.append((200, "I would rather not say.", 0))
    with pytest.raises(ValueError, match="no JSON object"):
        reasoner.propose(WALK, CALM)
    _FakeChat.replies.append((500, "boom", 0))
    with pytest.raises(RuntimeError, match="HTTP 500"):
        reasoner.propose(WALK, CALM)
    monkeypatch.delenv(ENV_URL)
    with pytest.raises(ValueError, match=f"set {ENV_URL}.*{ENV_MODEL}"):
        HTTPReasoner()


# -- the tuner on a real training env -------------------------------------------------------------------------
@pytest.fixture(scope="module")
def walk_vec():
    from mskbench.envs.vector import MSKVectorEnv

    env = MSKVectorEnv("Walk", num_envs=1)
    yield env
    env.close()


class _Raises:
    name = "raises"

    def propose(self, weights, stats):
        raise ConnectionError("the service is down")


class _Hangs:
    name = "hangs"

    def propose(self, weights, stats):
        time.sleep(3.0)
        return Proposal(dict(weights), "too late")


class _Returns:
    def __init__(self, value):
        self.name, self.value = "returns", value

    def propose(self, weights, stats):
        return self.value(weights) if callable(self.value) else self.value


def test_failing_reasoners_leave_training_running_with_the_old_weights(walk_vec, tmp_path):
    from mskbench.paradigms.agentic import AgenticTuner

    garbage = [None, Proposal({"velocity_tracking": 1.0}, "keys missing"), "{not a proposal}",
               Proposal({**WALK, "upright": float("inf")}), Proposal({**WALK, "upright": "high"}),
               Proposal({**WALK, "extra": 1.0})]
    cases = [(_Raises(), "error", "ConnectionError: the service is down"), (_Hangs(), "timeout", "timed out")]
    cases += [(_Returns(g), "invalid", "unusable proposal") for g in garbage]
    for reasoner, status, reason in cases:
        tuner = AgenticTuner(reasoner, every_steps=10**9, timeout_s=0.3)
        env = tuner(walk_vec, tmp_path / type(reasoner).__name__ / status, False)
        env.reset(seed=0)
        for _ in range(2):
            obs, reward, term, trunc, info = env.step(np.zeros((1, 416)))
        started = time.perf_counter()
        row = tuner.update()
        assert time.perf_counter() - started < 2.0  # a hung reasoner is abandoned at the timeout
        assert row["status"] == status and reason in row["reason"], row
        assert row["version"] == 0 and row["weights"] == pytest.approx(WALK)
        env.step(np.zeros((1, 416)))  # training goes on, with the old weights
        assert env.envs[0].version == 0 and env.envs[0].weights == pytest.approx(WALK)
    log = [json.loads(line) for line in (tmp_path / "_Raises" / "error" / "agentic_updates.jsonl").read_text()
           .splitlines()]
    assert [r["status"] for r in log] == ["initial", "error"]


def test_an_update_reaches_the_worlds_rewards_and_every_k_steps_is_counted(walk_vec, tmp_path):
    import gymnasium as gym

    from mskbench.envs.wrappers import VectorWrapper
    from mskbench.paradigms.agentic import AgenticTuner

    faster = _Returns(lambda w: Proposal({**w, "velocity_tracking": 100.0}, "go faster"))
    tuner = AgenticTuner(faster, every_steps=3)
    env = tuner(walk_vec, tmp_path, False)
    env.reset(seed=0)
    versions = []
    for _ in range(7):
        env.step(np.zeros((1, 416)))
        versions.append(env.envs[0].version)
    assert versions == [0, 0, 0, 1, 1, 1, 2]  # updates after steps 3 and 6, read by the next step
    rows = tuner.log()
    assert [(r["update"], r["env_steps"], r["status"]) for r in rows] == [(0, 0, "initial"), (1, 3, "applied"),
                                                                           (2, 6, "applied")]
    first = rows[1]
    assert first["reason"] == "go faster" and first["proposed"]["velocity_tracking"] == 100.0
    assert first["weights"]["velocity_tracking"] == pytest.approx(1.2 * WALK["velocity_tracking"])
    assert sum(map(abs, first["weights"].values())) == pytest.approx(40.0)
    assert first["stats"]["env_steps"] == 3 and first["stats"]["target_speed_mps"] == 1.2
    assert {"forward_speed_mps", "torso_pitch_rad", "root_tilt_rad", "joint_tracking_rmse_rad", "terminations",
            "reward_terms"} <= set(first["stats"])
    # the world's reward is Σ w·terms with the weights in force, not the task's own weights
    wrapper = env.envs[0]
    # the wrappers are on their bases: VectorWrapper around the vector env, gymnasium.Wrapper around each world
    assert isinstance(env, VectorWrapper) and env.env is walk_vec and env.num_envs == walk_vec.num_envs
    assert (env.obs_layout, env.obs_size, env.action_size) == (walk_vec.obs_layout, walk_vec.obs_size,
                                                               walk_vec.action_size)
    assert isinstance(wrapper, gym.Wrapper) and wrapper.env is walk_vec.envs[0]
    assert wrapper.unwrapped is walk_vec.envs[0] and wrapper.handles is walk_vec.envs[0].handles
    _, reward, _, _, info = wrapper.step(np.zeros(416))
    assert info["reward_weights_version"] == 2 and wrapper.weights == pytest.approx(rows[2]["weights"])
    terms = info["reward_terms"]
    assert reward == pytest.approx(sum(rows[2]["weights"][k] * terms[k] for k in terms), rel=1e-12)
    assert reward != pytest.approx(sum(wrapper.env.reward_weights[k] * terms[k] for k in terms), rel=1e-3)


# -- the command line --------------------------------------------------------------------------------------
@pytest.mark.slow  # a (tiny) training run, as the other training runs of the suite
def test_train_walk_agentic_rule_writes_its_weight_update_log(tmp_path):
    pytest.importorskip("jax", reason="JAX not installed")
    from mskbench.cli import main

    run = tmp_path / "run"
    args = ["train", "Walk", "--out", str(run), "--algo", "ppo", "--steps", "32", "--num-envs", "2", "--rollout", "16",
            "--hidden", "16", "--minibatch", "32", "--epochs", "1", "--eval-every-steps", "32",
            "--eval-episodes", "1", "--agentic", "rule", "--agentic-every", "8"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    assert "agentic (rule): weight updates" in result.output and "Table III over 1 episodes" in result.output
    rows = [json.loads(line) for line in (run / "agentic_updates.jsonl").read_text().splitlines()]
    assert [r["env_steps"] for r in rows] == [0, 8, 16, 24, 32]
    assert rows[0]["status"] == "initial" and all(r["status"] in ("applied", "unchanged") for r in rows[1:])
    assert all(r["reason"] and "stats" in r for r in rows[1:])
    for r in rows:
        assert sum(map(abs, r["weights"].values())) == pytest.approx(40.0)
    for before, after in zip(rows, rows[1:]):
        for k, v in before["weights"].items():
            assert abs(after["weights"][k] - v) <= 0.2 * abs(v) + 1e-9
    stored = json.loads((run / "reward_weights.json").read_text())
    assert stored["weights"] == pytest.approx(rows[-1]["weights"])
    assert stored["version"] == sum(r["status"] == "applied" for r in rows)
    settings = json.loads((run / "run.json").read_text())
    assert settings["env_wrapper"] == {"paradigm": "agentic", "reasoner": "rule", "every_steps": 8, "l1_norm": 40.0,
                                       "relative_limit": 0.2}
    summary = json.loads((run / "agentic_summary.json").read_text())
    t3 = summary["table_iii"]
    assert t3["episodes"] == 1 and 1 <= t3["survival_steps"] <= 1000
    assert t3["tracking_rmse"] > 0 and 0 < t3["mean_activation"] < 1


def test_agentic_option_errors_are_one_line(monkeypatch, tmp_path):
    from mskbench.cli import main

    monkeypatch.delenv(ENV_URL, raising=False)
    monkeypatch.delenv(ENV_MODEL, raising=False)
    runner = CliRunner()
    for extra, message in [(["--agentic-every", "5"], "--agentic-every needs --agentic rule|http"),
                           (["--agentic", "http"], f"set {ENV_URL}"),
                           (["--agentic", "rule", "--backend", "jax"], "trains on --backend cpu"),
                           (["--agentic", "llm"], "'llm' is not one of 'rule', 'http'")]:
        result = runner.invoke(main, ["train", "Walk", "--out", str(tmp_path / "r"), *extra])
        assert result.exit_code == 2 and message in result.output, result.output
        assert "Traceback" not in result.output

"""Direct external control (App. A-F): Eqs. 19-20 on constructed trajectories, the action contract of
``mskbench direct act`` (every rejection, state unchanged), the fall gate, a session restarted from its
directory replaying bit for bit, the report, and the example controller end to end."""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mskbench.metrics import divergence_time, site_tracking_error, tracking_rmse

ROOT = Path(__file__).resolve().parents[1]


# -- Eqs. 19-20 --------------------------------------------------------------------------------------------
def test_site_tracking_error_and_rmse_on_constructed_positions():
    ref = np.zeros((2, 2, 3))
    pos = ref.copy()
    pos[0, 0] = [3.0, 0.0, 0.0]  # t0: one site 3 m off -> e = sqrt(9 / (3 * 2))
    pos[1, :, 2] = 2.0  # t1: both sites 2 m up -> e = sqrt(8 / 6)
    e = site_tracking_error(pos, ref)
    assert e == pytest.approx([math.sqrt(1.5), math.sqrt(8 / 6)])
    assert site_tracking_error(pos[0], ref[0]) == pytest.approx(math.sqrt(1.5))
    assert tracking_rmse([3.0, 4.0]) == pytest.approx(math.sqrt(12.5))
    assert tracking_rmse(e) == pytest.approx(math.sqrt((1.5 + 8 / 6) / 2))
    for bad, match in [((pos, ref[:1]), "same shape"), ((pos[..., :2], ref[..., :2]), r"\(T, N, 3\)")]:
        with pytest.raises(ValueError, match=match):
            site_tracking_error(*bad)
    with pytest.raises(ValueError, match="finite"):
        tracking_rmse([1.0, float("nan")])
    with pytest.raises(ValueError, match=">= 0"):
        tracking_rmse([-1.0])


def test_divergence_time_needs_five_consecutive_samples_above_both_thresholds():
    t = np.arange(30) * 0.01
    ref = np.full(30, 0.10)
    ref[-1] = 0.20  # 29 of 30 reference errors at 0.1: Q95 = 0.1
    e = np.full(30, 0.05)
    e[3:7] = 0.5  # four samples above: not sustained
    e[12:20] = 0.5  # eight samples above from t = 0.12 s
    assert divergence_time(t, e, t, ref) == pytest.approx(0.12)
    assert divergence_time(t, e, t, ref, run_length=4) == pytest.approx(0.03)
    # a reference spike at t = 0.12 s (one sample: Q95 stays 0.1) breaks the run: 4 + 4 samples, no divergence
    spiky = np.full(30, 0.1)
    spiky[12] = 1.0
    e3 = np.full(30, 0.05)
    e3[8:17] = 0.5
    assert divergence_time(t, e3, t, spiky) is None
    assert divergence_time(t, e3, t, spiky, run_length=4) == pytest.approx(0.08)
    # the reference is interpolated in time and held at its last value past its end
    short_t, short_e = np.array([0.0, 0.1]), np.array([0.0, 0.2])
    e2 = np.concatenate([np.full(15, 0.05), np.full(15, 0.25)])
    assert divergence_time(t, e2, short_t, short_e) == pytest.approx(0.15)
    assert divergence_time(t[:4], e[:4], t, ref) is None  # fewer samples than a run: N/A
    with pytest.raises(ValueError, match="strictly increasing"):
        divergence_time(t, e, t[::-1], ref)
    with pytest.raises(ValueError, match="same length"):
        divergence_time(t, e[:-1], t, ref)


# -- sessions ----------------------------------------------------------------------------------------------
def _snapshot(directory: Path) -> dict[str, tuple[bytes, int]]:
    return {str(p.relative_to(directory)): (p.read_bytes(), p.stat().st_mtime_ns)
            for p in sorted(directory.rglob("*")) if p.is_file()}


def _invoke(*args: str):
    from mskbench.cli import main

    return CliRunner().invoke(main, list(args))


@pytest.fixture(scope="module")
def walk_env():
    from mskbench.envs import MSKEnv

    env = MSKEnv("Walk")
    yield env
    env.close()


@pytest.fixture(scope="module")
def session_dir(tmp_path_factory):
    """A Walk session, seed 0, actions held 3 native steps, 0.12 s long (at most 4 decisions)."""
    d = tmp_path_factory.mktemp("direct") / "walk"
    result = _invoke("direct", "start", "Walk", "--dir", str(d), "--seed", "0", "--hold-steps", "3",
                     "--max-duration", "0.12")
    assert result.exit_code == 0, result.output
    return d


def test_start_writes_the_metadata_and_observation_zero(session_dir, walk_env):
    from mskbench.paradigms.direct import DirectSession, flatten_observation

    info = json.loads((session_dir / "env_info.json").read_text())
    assert info["task"] == "Walk" and info["seed"] == 0 and info["action_dim"] == 416
    assert len(info["actuator_names"]) == 416 and info["actuator_names"][0] == "Ps_L1_VB_r"
    assert (info["action_low"], info["action_high"]) == (-1.0, 1.0)
    assert (info["physics_timestep_s"], info["physics_steps_per_control_step"]) == (0.001, 10)
    assert info["control_timestep_s"] == pytest.approx(0.01) and info["hold_s"] == pytest.approx(0.03)
    assert (info["max_native_steps"], info["max_decisions"]) == (12, 4)
    rows = {e["key"].split("/")[0]: e["row"] for e in info["observation_layout"]}
    assert rows["root_pose_without_xy"] == "Root pose without global x-y" and rows["muscles"] == "Muscle state"
    assert rows["goal"] == "Goal and reference features"
    sizes = {e["key"]: e["stop"] - e["start"] for e in info["observation_layout"]}
    assert (sizes["root_pose_without_xy"], sizes["joint_positions"], sizes["root_velocity"],
            sizes["joint_velocities"], sizes["goal/delta_q"]) == (5, 122, 6, 122, 122)
    assert info["muscle_fields"] == ["length", "velocity", "force", "activation"]
    obs0 = json.loads((session_dir / "observations" / "decision_000.json").read_text())
    assert obs0["decision_index"] == 0 and obs0["simulation_time_s"] == 0.0 and obs0["observation_dim"] == 2046
    assert len(obs0["observation"]["muscles"]) == 416 and len(obs0["observation"]["muscles"][0]) == 4
    # lossless: the file flattens back to the env's own first observation
    first, _ = walk_env.reset(seed=0)
    assert np.array_equal(flatten_observation(obs0["observation"], info["observation_layout"]), first)
    assert DirectSession(session_dir).status == "awaiting_action"
    result = _invoke("direct", "start", "Walk", "--dir", str(session_dir))
    assert result.exit_code == 1 and "already holds a session" in result.output


REJECTIONS = [
    ('{"action": [0.0]}', "the action must be a bare JSON array of 416 numbers, got an object"),
    ('"0.0"', "the action must be a bare JSON array of 416 numbers, got str"),
    (json.dumps([0.0] * 415), "the action needs exactly 416 values (one per muscle), got 415"),
    (json.dumps([0.0] * 417), "the action needs exactly 416 values (one per muscle), got 417"),
    (json.dumps([0.0] * 3 + [True] + [0.0] * 412), "action[3] is a boolean (true); give a number in [-1, 1]"),
    (json.dumps([0.0] * 5 + ["0.5"] + [0.0] * 410), 'action[5] is not a number ("0.5")'),
    (json.dumps([0.0] * 6 + [None] + [0.0] * 409), "action[6] is not a number (null)"),
    (json.dumps([0.0] * 8 + [[0.1]] + [0.0] * 407), "action[8] is not a number ([0.1])"),
    ("[" + ", ".join(["0.0"] * 7 + ["NaN"] + ["0.0"] * 408) + "]", "action[7] is not finite (nan)"),
    ("[" + ", ".join(["0.0"] * 2 + ["-Infinity"] + ["0.0"] * 413) + "]", "action[2] is not finite (-inf)"),
    (json.dumps([0.0] * 9 + [1.5] + [0.0] * 406), "action[9] = 1.5 is outside [-1, 1]"),
    (json.dumps([-1.0000001] + [0.0] * 415), "action[0] = -1.0000001 is outside [-1, 1]"),
    ("[0.0, 0.0", "is not valid JSON (Expecting"),
]


@pytest.mark.parametrize("content, message", REJECTIONS, ids=[m.split(" (")[0][:40] for _, m in REJECTIONS])
def test_every_rejected_action_says_why_and_changes_nothing(session_dir, tmp_path, content, message):
    path = tmp_path / "action.json"
    path.write_text(content)
    before = _snapshot(session_dir)
    result = _invoke("direct", "act", str(session_dir), str(path))
    assert result.exit_code == 1
    assert result.output.startswith("Error: action rejected, session unchanged: ") and message in result.output
    assert result.output.count("\n") == 1, result.output
    assert "Traceback" not in result.output
    assert _snapshot(session_dir) == before


def test_a_missing_action_file_or_session_is_a_one_line_error(session_dir, tmp_path):
    before = _snapshot(session_dir)
    result = _invoke("direct", "act", str(session_dir), str(tmp_path / "nowhere.json"))
    assert result.exit_code == 1 and "cannot read" in result.output and result.output.count("\n") == 1
    assert _snapshot(session_dir) == before
    result = _invoke("direct", "act", str(tmp_path), str(tmp_path / "a.json"))
    assert result.exit_code == 1 and "holds no direct-control session" in result.output
    result = _invoke("direct", "report", str(tmp_path))
    assert result.exit_code == 1 and "holds no direct-control session" in result.output


def test_a_session_restarted_from_its_directory_replays_bit_for_bit(session_dir, tmp_path):
    from mskbench.paradigms.direct import DirectSession

    rng = np.random.default_rng(1)
    actions = [rng.uniform(-1.0, 1.0, 416), np.r_[np.full(208, -1.0), np.full(208, 1.0)]]
    for k, a in enumerate(actions):  # each act is a fresh process's work: new env, replay, hold
        path = tmp_path / f"a{k}.json"
        path.write_text(json.dumps(a.tolist()))
        result = _invoke("direct", "act", str(session_dir), str(path))
        assert result.exit_code == 0, result.output
        assert f"decision {k} applied; t = {0.03 * (k + 1):.2f} s" in result.output
    restarted = DirectSession(session_dir)  # builds its own env
    assert restarted.decisions == 2
    assert [np.array_equal(a, b) for a, b in zip(restarted.actions, [a.astype(np.float32) for a in actions])] == \
        [True, True]
    for k in range(3):
        player = restarted.replay(restarted.actions[:k])
        assert player.native == 3 * k
        assert player.obs.tobytes() == restarted.observation_vector(k).tobytes()
    full = restarted.replay()
    stored = restarted.trajectory()
    for key, value in full.trajectory().items():
        assert np.array_equal(value, stored[key], equal_nan=value.dtype.kind == "f"), key
    assert stored["native_step"].tolist() == list(range(7)) and stored["decision"].tolist() == [-1] + [0] * 3 + [1] * 3


def test_the_fall_gate(walk_env):
    from mskbench.body.myofullbody import rotate_root
    from mskbench.paradigms.direct import fall_reason

    env = walk_env
    env.reset(seed=0)
    assert fall_reason(env) is None
    env.data.qpos[2] = 0.55
    assert fall_reason(env) == "root height 0.550 m < 0.6 m"
    env.reset(seed=0)
    env.data.qpos[:] = rotate_root(env.data.qpos, math.radians(75.0))
    assert fall_reason(env) == "root tilt 75.0 deg > 70 deg"
    env.reset(seed=0)
    env.data.qvel[4] = np.nan
    assert fall_reason(env) == "non-finite state"
    assert fall_reason(env, {"termination": "physics_unstable"}) == "non-finite state (unstable physics)"


def test_a_session_to_its_end_then_the_report(tmp_path):
    from mskbench.paradigms.direct import DirectSession, SessionComplete

    d = tmp_path / "passive"
    session = DirectSession.start(d, "Walk", seed=0, hold_steps=20, max_duration_s=1.0)
    passive = [-1.0] * 416  # no excitation: the body collapses
    for _ in range(5):
        manifest = session.act(passive)
        if manifest["status"] == "complete":
            break
    out = manifest["outcome"]
    assert out["reason"] in ("fall", "terminated") and out["time_s"] < 1.0
    assert out["native_steps"] == round(out["time_s"] / 0.01) and manifest["pending_observation"] is None
    traj = session.trajectory()
    assert traj["time_s"][-1] == pytest.approx(out["time_s"]) and not traj["fallen"][:-1].any()
    before = _snapshot(d)
    with pytest.raises(SessionComplete, match="it takes no more actions"):
        session.act(passive)
    result = _invoke("direct", "act", str(d), str(d / "env_info.json"))
    assert result.exit_code == 1 and "session is complete" in result.output and _snapshot(d) == before
    report = session.report()  # against the zero policy from the same seed
    assert report["duration_s"] == pytest.approx(out["time_s"]) and report["outcome"]["reason"] == out["reason"]
    errors = traj["tracking_error_m"][1:]
    assert report["tracking_rmse_m"] == pytest.approx(tracking_rmse(errors)) and report["tracking_rmse_m"] > 0
    assert report["divergence"]["reference"] == "policy 'zero'"
    assert report["divergence_s"] is None or 0.0 < report["divergence_s"] <= out["time_s"]
    same = session.report(d)  # against itself: never above its own errors
    assert same["divergence_s"] is None and same["divergence"]["reference"] == f"session {d}"
    result = _invoke("direct", "report", str(d), "--json")
    assert result.exit_code == 0 and json.loads(result.output)["duration_s"] == pytest.approx(out["time_s"])
    result = _invoke("direct", "report", str(d))
    assert "duration" in result.output and "tracking RMSE" in result.output and "divergence" in result.output


def test_the_example_pd_controller_plays_a_session_end_to_end(tmp_path, monkeypatch, capsys):
    spec = importlib.util.spec_from_file_location("direct_pd_controller", ROOT / "examples" / "direct_pd_controller.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)

    def in_process(*args):  # the same commands, without a new interpreter per call
        result = _invoke(*args)
        assert result.exit_code == 0, result.output
        return result.output

    monkeypatch.setattr(example, "mskbench", in_process)
    example.main(["--dir", str(tmp_path / "pd"), "--hold-steps", "10", "--max-duration", "0.2"])
    out = capsys.readouterr().out
    assert "decision 0 applied" in out and "decision 1 applied; session complete at 0.20 s: horizon" in out
    assert "duration        0.20 s" in out and "tracking RMSE" in out
    assert len(list((tmp_path / "pd" / "controller").glob("action_*.json"))) == 2

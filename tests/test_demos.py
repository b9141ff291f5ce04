"""Demonstrations (mskbench record): the documented layouts, the mm-evalkit rollout, refusals, bad input."""

from __future__ import annotations

import json
import re
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner

from mskbench.cli import main
from mskbench.eval import demos
from mskbench.eval.demos import load_demos, record_demos

DOC = Path(__file__).resolve().parents[1] / "docs" / "controllers.md"


def _documented_keys(text: str) -> set[str]:
    """The keys in the first column of the markdown tables of ``text`` (``a``, ``b`` rows give both)."""
    keys = set()
    for line in text.splitlines():
        cells = line.split("|")
        if len(cells) > 2 and cells[1].strip().startswith("`"):
            keys.update(re.findall(r"`([^`]+)`", cells[1]))
    return keys


def _doc_section(title: str) -> str:
    text = DOC.read_text()
    start = text.index(title)
    end = text.find("\n### ", start + len(title))
    return text[start:] if end < 0 else text[start:end]


@pytest.fixture(scope="module")
def stand_zero(tmp_path_factory):
    """Two whole Stand episodes of the zero policy (each falls within half a second)."""
    path = tmp_path_factory.mktemp("demos") / "stand.npz"
    summary = record_demos("stand", "zero", 2, 3, path)
    return summary, load_demos(path)


def test_the_file_holds_the_documented_keys_shapes_and_dtypes(stand_zero):
    summary, d = stand_zero
    assert set(d) == _documented_keys(_doc_section("### The demonstrations file"))
    n, e = summary.n_steps, 2
    obs = 1928  # Stand (README)
    assert str(d["format"]) == "mskbench-demos" and int(d["format_version"]) == 1
    assert (str(d["task"]), str(d["policy"]), int(d["seed"]), int(d["max_steps"])) == ("Stand", "zero", 3, -1)
    assert float(d["control_dt_s"]) == pytest.approx(0.01) and str(d["action_map"]) == "linear"
    shapes = {"observation": (n, obs), "action": (n, 416), "excitation": (n, 416), "activation": (n, 416),
              "qpos": (n, 129), "qvel": (n, 128), "touch": (n, 4), "reward": (n,), "episode": (n,),
              "reward_terms": (n, len(d["reward_term_names"])), "episode_seed": (e,), "episode_length": (e,),
              "episode_offsets": (e + 1,), "episode_return": (e,), "episode_termination": (e,),
              "episode_success": (e,), "episode_success_table_xii": (e,), "start_qpos": (e, 129),
              "start_qvel": (e, 128), "start_activation": (e, 416), "start_touch": (e, 4),
              "final_observation": (e, obs), "muscle_names": (416,), "joint_names": (123,),
              "joint_qpos_adr": (123,), "touch_names": (4,), "reward_weights": (len(d["reward_term_names"]),)}
    assert {k: d[k].shape for k in shapes} == shapes
    for k in ("observation", "action", "excitation", "activation", "start_activation", "final_observation"):
        assert d[k].dtype == np.float32, k
    for k in ("qpos", "qvel", "touch", "reward", "reward_terms", "episode_return", "start_qpos", "reward_weights"):
        assert d[k].dtype == np.float64, k
    assert d["episode_success"].dtype == bool and d["episode_termination"].dtype.kind == "U"
    assert list(d["episode_seed"]) == [3, 4] and int(d["episode_offsets"][-1]) == n
    assert list(np.diff(d["episode_offsets"])) == list(d["episode_length"])
    assert list(d["episode"]) == [0] * int(d["episode_length"][0]) + [1] * int(d["episode_length"][1])
    assert set(json.loads(str(d["obs_layout"]))) >= {"qpos", "muscle_activation"}


def test_the_steps_line_up_as_documented(stand_zero):
    summary, d = stand_zero
    layout = {k: slice(*v) for k, v in json.loads(str(d["obs_layout"])).items()}
    q, act = layout["qpos"], layout["muscle_activation"]
    for ep in range(2):
        rows = slice(d["episode_offsets"][ep], d["episode_offsets"][ep + 1])
        obs, qpos, a = d["observation"][rows], d["qpos"][rows], d["activation"][rows]
        # The observation of step t+1 is the state step t left (the observation omits the root's x, y).
        np.testing.assert_allclose(obs[1:, q], qpos[:-1, 2:], atol=1e-6)
        np.testing.assert_allclose(obs[1:, act], a[:-1], atol=1e-7)
        np.testing.assert_allclose(obs[0, q], d["start_qpos"][ep, 2:], atol=1e-6)
        np.testing.assert_allclose(d["final_observation"][ep, q], qpos[-1, 2:], atol=1e-6)
    np.testing.assert_allclose(d["excitation"], (d["action"] + 1.0) / 2.0, atol=1e-7)  # the linear map
    np.testing.assert_allclose(d["reward"], d["reward_terms"] @ d["reward_weights"], rtol=1e-9, atol=1e-9)
    returns = [d["reward"][d["episode"] == ep].sum() for ep in range(2)]
    np.testing.assert_allclose(d["episode_return"], returns, rtol=1e-9)


def test_the_episodes_are_the_protocols(stand_zero):
    from mskbench.envs import MSKEnv
    from mskbench.eval.episodes import run_episode
    from mskbench.eval.protocol import load_policy

    summary, d = stand_zero
    env = MSKEnv("Stand")
    policy = load_policy("zero", env, 3)
    for i, seed in enumerate((3, 4)):
        r = run_episode(env, policy, seed)
        assert (r.length, r.termination, r.success) == (int(d["episode_length"][i]),
                                                         str(d["episode_termination"][i]),
                                                         bool(d["episode_success"][i]))
        assert r.episode_return == pytest.approx(float(d["episode_return"][i]), rel=1e-12)
        assert r.as_dict() | {"wall_time_s": 0} == summary.episodes[i].as_dict() | {"wall_time_s": 0}
    env.close()


def test_the_evalkit_rollout_for_walk(tmp_path):
    out, kit = tmp_path / "walk.npz", tmp_path / "walk-evalkit.npz"
    record_demos("walk", "random", 2, 0, out, evalkit_path=kit, max_steps=12)
    d = load_demos(out)
    with np.load(kit, allow_pickle=False) as z:
        k = {name: z[name] for name in z.files}
    per_episode = {f"episode_{e}_{f}" for e in range(2) for f in ("traj_id", "joint_positions", "muscle_activations",
                                                                  "touch_observations", "traj_length", "traj_qpos",
                                                                  "termination")}
    documented = {key for key in _documented_keys(_doc_section("### The mm-evalkit rollout file"))
                  if not key.startswith("episode_{e}_")}
    assert set(k) == documented | per_episode
    # The facts mm-evalkit 0.1.0 checks (docs/controllers.md names where they come from).
    assert int(k["n_episodes"]) == 2 and float(k["dt"]) == pytest.approx(0.01)
    assert str(k["activation_sample_phase"]) == "pre_step"
    names = list(k["joint_names"])
    assert len(names) == 83 and names[0] == "root" and len(set(names)) == 83
    assert not any(n.startswith(("mcp", "cmc", "pm", "md", "mp_", "ip_")) for n in names)
    assert {"hip_flexion_r", "knee_angle_r", "ankle_angle_l", "flexion_r"} <= set(names)
    muscles = list(k["muscle_names"])
    assert len(muscles) == 354 and "soleus_r" in muscles and "FDS5" not in muscles and "FDP2_left" not in muscles
    assert [m for m in d["muscle_names"] if m in set(muscles)] == muscles  # our actuator order
    assert list(k["touch_names"]) == ["r_foot", "r_toes", "l_foot", "l_toes"]
    joint_cols = np.concatenate([np.arange(7)] + [[int(d["joint_qpos_adr"][list(d["joint_names"]).index(n)])]
                                                  for n in names[1:]])
    touch_cols = [list(d["touch_names"]).index(n) for n in k["touch_names"]]
    muscle_cols = [list(d["muscle_names"]).index(m) for m in muscles]
    for e in range(2):
        p = f"episode_{e}_"
        rows = slice(d["episode_offsets"][e], d["episode_offsets"][e + 1])
        frames = int(d["episode_length"][e]) + 1
        jp, ma, touch = k[p + "joint_positions"], k[p + "muscle_activations"], k[p + "touch_observations"]
        assert jp.shape == (frames, 89) and ma.shape == (frames, 354) and touch.shape == (frames, 4)
        assert jp.dtype == ma.dtype == touch.dtype == np.float64
        np.testing.assert_array_equal(jp[0], d["start_qpos"][e][joint_cols])
        np.testing.assert_array_equal(jp[1:], d["qpos"][rows][:, joint_cols])
        np.testing.assert_array_equal(ma[1:], d["activation"][rows][:, muscle_cols].astype(np.float64))
        np.testing.assert_array_equal(touch[1:], d["touch"][rows][:, touch_cols])
        assert int(k[p + "traj_id"]) == int(d["episode_seed"][e])
        assert int(k[p + "traj_length"]) == 1001 and k[p + "traj_qpos"].shape == (1001, 89)
        assert (k[p + "traj_qpos"] == jp[0]).all()  # the start pose, held: the seed's, whatever the policy
        assert str(k[p + "termination"]) == str(d["episode_termination"][e])
        assert all(np.isfinite(v).all() for v in (jp, ma, touch))


def test_a_step_without_physical_state_is_nan_and_left_out_of_the_evalkit_frames(tmp_path, monkeypatch):
    from mskbench.sim.cpu import CpuSimulator

    real, calls = CpuSimulator.step, []

    def unstable_at_the_fourth(self, ctrl):  # the physics "goes unstable" in the 4th control step
        calls.append(1)
        return real(self, ctrl) and len(calls) < 4

    monkeypatch.setattr(CpuSimulator, "step", unstable_at_the_fourth)
    out, kit = tmp_path / "d.npz", tmp_path / "k.npz"
    record_demos("walk", "zero", 1, 0, out, evalkit_path=kit)
    d = load_demos(out)
    assert list(d["episode_termination"]) == ["physics_unstable"] and list(d["episode_length"]) == [4]
    for key in ("activation", "qpos", "qvel", "touch"):
        assert np.isfinite(d[key][:3]).all() and np.isnan(d[key][3]).all(), key
    assert np.isnan(d["final_observation"]).all() and d["reward"][3] == 0.0
    with np.load(kit) as z:
        assert z["episode_0_joint_positions"].shape == (4, 89)  # the start and 3 physical steps
        assert np.isfinite(z["episode_0_muscle_activations"]).all()


def test_existing_files_are_never_replaced_without_force(tmp_path):
    out = tmp_path / "mine.npz"
    out.write_bytes(b"a user's file")
    with pytest.raises(FileExistsError, match="exists"):
        record_demos("stand", "zero", 1, 0, out)
    assert out.read_bytes() == b"a user's file"
    result = CliRunner().invoke(main, ["record", "stand", "--policy", "zero", "--out", str(out)])
    assert result.exit_code == 2 and "mine.npz exists; pass --force" in result.output
    assert out.read_bytes() == b"a user's file"
    # An existing --evalkit file stops the run before anything is written.
    kit, fresh = tmp_path / "kit.npz", tmp_path / "fresh.npz"
    kit.write_bytes(b"keep")
    result = CliRunner().invoke(main, ["record", "walk", "--policy", "zero", "--out", str(fresh),
                                       "--evalkit", str(kit)])
    assert result.exit_code == 2 and "kit.npz exists" in result.output
    assert not fresh.exists() and kit.read_bytes() == b"keep"
    result = CliRunner().invoke(main, ["record", "stand", "--policy", "zero", "--max-steps", "3", "--out", str(out),
                                       "--force"])
    assert result.exit_code == 0, result.output
    assert int(load_demos(out)["episode_length"][0]) == 3
    assert sorted(p.name for p in tmp_path.iterdir()) == ["kit.npz", "mine.npz"]  # no temporary file left


@pytest.mark.parametrize("args, says", [
    (["record", "Wlak", "--policy", "zero"], "valid tasks: Stand, Powerlift"),
    (["record", "run", "--policy", "expert"],
     "the expert has no behaviour for Run; it serves Stand, Powerlift, SingleLegStand, Sit, Balance, Squat, Reach, Walk, PoleWalk, WalkTurn, OpenDoor"),
    (["record", "stand", "--policy", "nope"], "use a built-in (zero, passive, random, hold, expert, calf-raise, fall-back, basket, lean)"),
    (["record", "stand", "--policy", "zero", "--evalkit", "{tmp}/k.npz"],
     "Stand is not a gait task; it applies to Walk, Run"),
    (["record", "stairs", "--policy", "zero", "--evalkit", "{tmp}/k.npz"],
     "Stairs steps every 0.02 s and mm-evalkit reads rollouts at dt = 0.01 s; it applies to Walk, Run"),
    (["record", "residualwalk", "--policy", "zero"], "a residual task acts through its base policy"),
    (["record", "all", "--policy", "zero"], "record takes one task"),
])
def test_bad_input_is_a_one_line_error_naming_the_choices(tmp_path, args, says):
    out = tmp_path / "out.npz"
    args = [a.replace("{tmp}", str(tmp_path)) for a in args] + ["--out", str(out)]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2, result.output
    error = [line for line in result.output.splitlines() if line.startswith("Error:")]
    assert len(error) == 1 and says in error[0], result.output
    assert not out.exists()


def test_bad_input_from_python(tmp_path):
    with pytest.raises(ValueError, match="must end in .npz"):
        record_demos("stand", "zero", 1, 0, tmp_path / "out.txt")
    with pytest.raises(ValueError, match="must differ"):
        record_demos("walk", "zero", 1, 0, tmp_path / "a.npz", evalkit_path=tmp_path / "a.npz")
    with pytest.raises(ValueError, match="max_steps must be a positive integer"):
        record_demos("stand", "zero", 1, 0, tmp_path / "a.npz", max_steps=0)
    with pytest.raises(ValueError, match="episodes must be >= 1"):
        record_demos("stand", "zero", 0, 0, tmp_path / "a.npz")
    bogus = tmp_path / "other.npz"
    np.savez(bogus, x=np.zeros(2))
    with pytest.raises(ValueError, match="not a demonstrations file"):
        load_demos(bogus)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["other.npz"]


def test_an_expert_recording(tmp_path):
    """The privileged expert on Stand, capped at 15 control steps (a whole episode takes ~30 s)."""
    out = tmp_path / "expert.npz"
    result = CliRunner().invoke(main, ["record", "stand", "--policy", "expert", "--episodes", "1", "--seed", "7",
                                       "--max-steps", "15", "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "wrote 15 steps of 1 episodes" in result.output
    d = load_demos(out)
    assert str(d["policy"]) == "expert" and int(d["max_steps"]) == 15
    assert list(d["episode_termination"]) == ["step_limit"] and list(d["episode_length"]) == [15]
    assert d["action"].shape == (15, 416) and np.isfinite(d["activation"]).all()
    # The expert drives the muscles: excitation is neither the zero policy's 0.5 everywhere nor constant.
    assert d["excitation"].std(axis=0).max() > 0.01 and np.ptp(d["excitation"]) > 0.1


def test_evalkit_tasks_are_the_gait_tasks_at_a_hundred_hertz():
    assert demos.evalkit_tasks() == ("Walk", "Run")

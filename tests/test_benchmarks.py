"""The physics profile (``benchmarks/physics_profile.py``), which the GPU check runs once on a GPU.

Its MuJoCo C side is what a CPU user runs; its MuJoCo Warp side is the GPU
check's ``warp_profile`` stage, exercised here on Warp's CPU device so that a
rare GPU session does not find it broken. And the takeover and bound-bias probes
(``benchmarks/studies/takeover.py``, ``benchmarks/studies/bound_bias.py``) and the results table
(``benchmarks/expert_results.py``) that docs/distillation.md cites.
"""

from __future__ import annotations

import json

import numpy as np
import pytest


def test_cpu_profile_accounts_for_the_whole_physics_step(benchmark_script):
    row = benchmark_script("physics_profile").profile_cpu("Stand", steps=3, repeats=5)
    assert row["physics_steps"] == 30  # 3 control steps of 10 physics steps
    stages = row["stage_us"]
    assert set(stages) == {"tendon", "kinematics", "inertia", "collision", "constraint_make", "constraint_project",
                           "velocity", "actuation", "solver", "integration", "other"}
    assert all(v >= 0 for v in stages.values())
    assert sum(stages.values()) == pytest.approx(row["step_us"], rel=1e-6)  # "other" takes the remainder
    assert stages["tendon"] > 0 and stages["solver"] > 0
    assert 1 <= row["solver_iterations_mean"] <= row["solver_iterations_max"]
    assert row["ntendon"] > 400 and row["nv"] == 128


def test_warp_profile_traces_each_physics_step_once(benchmark_script):
    pytest.importorskip("mujoco_warp", reason="MuJoCo Warp not installed (pip install -e '.[test]')")
    row = benchmark_script("physics_profile").profile_warp("Stand", nworld=2, steps=3)
    trace = {r["path"]: r for r in row["trace"]}
    assert trace["step"]["calls_per_step"] == 1 and trace["step"]["share"] == pytest.approx(1.0)
    # MuJoCo Warp's nesting: the tendons under the kinematics under the position stage of forward.
    assert trace["step/forward/fwd_position/fwd_kinematics/tendon"]["ms_per_step"] > 0
    for path, r in trace.items():  # a function's callees fit in its own time
        children = [c["ms_per_step"] for p, c in trace.items() if p.rsplit("/", 1)[0] == path and p != path]
        assert sum(children) <= r["ms_per_step"] * (1 + 1e-6) + 1e-6, path
    assert row["physics_steps_per_s"] > 0 and row["nworld"] == 2
    assert 1 <= row["solver_iterations_mean"] <= row["solver_iterations_limit"]


def test_takeover_hands_the_episode_to_the_teacher_after_k_steps_and_asks_it_every_step(benchmark_script):
    # benchmarks/studies/takeover.py: the expert labels from the first step, as a DAgger world's teacher does, so its own
    # state is the one it would have; it acts only from step K + 1
    class Recorder:
        def __init__(self, value):
            self.value, self.calls, self.resets = value, 0, []

        def reset(self, seed=None):
            self.resets.append(seed)
            self.calls = 0

        def act(self, obs):
            self.calls += 1
            return np.full(2, self.value)

    student, teacher = Recorder(-1.0), Recorder(1.0)
    policy = benchmark_script("takeover").Takeover(student, teacher, at=3)
    for episode in (7, 8):
        policy.reset(episode)
        actions = [float(policy.act(np.zeros(4))[0]) for _ in range(5)]
        assert actions == [-1.0, -1.0, -1.0, 1.0, 1.0]
        assert teacher.calls == 5 and student.calls == 3
    assert student.resets == teacher.resets == [7, 8]


def test_bound_bias_reads_the_student_as_its_checkpoint_acts(benchmark_script, tmp_path):
    # benchmarks/studies/bound_bias.py, which docs/distillation.md cites: the student it compares is the run's checkpoint
    # as every reader loads it (its normalisation, its clip), on the rows of the run's own DAgger data
    pytest.importorskip("jax")
    import mskbench
    from mskbench.agents.checkpoint import load_policy
    from mskbench.envs import MSKEnv

    out = tmp_path / "bc"
    mskbench.train("Stand", algo="bc", out=out, steps=8, num_envs=2, num_steps=4, updates=3, hidden=(16,), workers=1,
                   minibatch_size=8, eval_episodes=1, eval_every_steps=10**6)
    (row,) = benchmark_script("bound_bias").bound_bias(str(out))
    with np.load(out / "dagger" / "00001.npz") as d:
        obs, labels = d["obs"], d["labels"]
    env = MSKEnv("Stand")
    policy = load_policy(out / "checkpoint.npz", env.obs_layout, obs.shape[1])
    acts = np.stack([policy.act(o) for o in obs])
    lo = labels <= -1.0
    assert row["at_minus1"] == pytest.approx(lo.mean(), abs=1e-3)
    assert row["student_where_minus1"] == pytest.approx(acts[lo].mean(), abs=2e-3)
    with pytest.raises(ValueError, match="not a BC run directory"):
        benchmark_script("bound_bias").bound_bias(str(tmp_path))


def test_expert_results_reads_a_method_whose_name_holds_commas(benchmark_script, tmp_path, monkeypatch, capsys):
    # benchmarks/expert_results.py, whose rows docs/distillation.md cites: --policy takes one name as it is stored.
    from mskbench.eval.store import ResultsStore

    name = "bc (ensemble 4, gate 0.1, run 19, best)"
    with ResultsStore(tmp_path / "r.db") as store:
        for seed, (ok, end) in enumerate([(True, "time_limit"), (True, "time_limit"), (False, "tilted")]):
            store.write({"method": name, "task": "Stand", "perturbation": "none", "scale": 0.0, "seed": seed,
                         "success": ok, "episode_return": 1.0, "length": 1000 if ok else 400, "termination": end,
                         "activation_cost": 0.05, "smoothness": 4.0})
    out = tmp_path / "rows.json"
    monkeypatch.setattr("sys.argv", ["expert_results.py", "--store", str(tmp_path / "r.db"), "--tasks", "Stand",
                                     "--policy", name, "--policy", "absent", "--json", str(out)])
    benchmark_script("expert_results").main()
    rows = json.loads(out.read_text())["rows"]
    assert [(r["policy"], r["episodes"], round(r["sr_pct"], 1)) for r in rows] == [(name, 3, 66.7)]
    assert rows[0]["terminations"] == {"time_limit": 2, "tilted": 1}
    assert "no episodes of 'absent'" in capsys.readouterr().err


@pytest.mark.parametrize("argv, message", [(["--steps", "0"], "--steps must be at least 1, got 0"),
                                           (["--tasks", "Run"], "the expert has no behaviour for Run; it serves Stand"),
                                           (["--tasks", "Runn"], "unknown task 'Runn'")])
def test_expert_cost_refuses_what_it_cannot_time_in_one_line(benchmark_script, monkeypatch, capsys, argv, message):
    # benchmarks/expert_cost.py, the cost table's command: no step to time, or a task the expert does not serve
    monkeypatch.setattr("sys.argv", ["expert_cost.py", *argv])
    with pytest.raises(SystemExit) as exit_:
        benchmark_script("expert_cost").main()
    assert exit_.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert message in err[-1] and "Traceback" not in "\n".join(err)


def test_episode_trace_follows_any_body_and_names_the_roles_for_a_wrong_one(benchmark_script):
    # benchmarks/episode_trace.py --body: docs/controllers.md's ChinUp figures are the head's highest point
    script = benchmark_script("episode_trace")
    row = script.trace("ChinUp", "zero", 0, every=100, body="head")
    heights = row["head_m"]
    assert row["length"] == 500 and len(heights) == 5
    assert row["head_min_m"] <= min(heights) <= max(heights) <= row["head_max_m"] < 2.3  # it hangs below the bar
    assert 1 <= row["head_max_step"] <= 500 and "pelvis_m" not in row
    with pytest.raises(ValueError, match="neither a role .*pelvis.* nor a body of the ChinUp model"):
        script.trace("ChinUp", "zero", 0, every=100, body="tail")


def test_expert_arms_counts_a_hand_above_its_shoulder(benchmark_script):
    # benchmarks/expert_arms.py: Balance's episode is short (the expert falls off the board within ~100 steps)
    row = benchmark_script("expert_arms").episode(("Balance", 0, {}))
    assert row["control_steps"] < 200 and not row["success"]
    assert 0.0 <= row["hand_above_shoulder"] <= 1.0 and row["peak_arm_angular_momentum"] > 0.0
    script = benchmark_script("expert_arms")
    with pytest.raises(SystemExit, match="NAME=NUMBER"):
        script.parse_sets(["arm_posture_scale"])
    script.check_sets(["Stand", "SingleLegStand"], {"arm_posture_scale": 1.0})
    with pytest.raises(SystemExit, match="the Stand behaviour .Stand. has no attribute arm_scale"):
        script.check_sets(["Stand"], {"arm_scale": 1.0})


def test_an_arms_angular_momentum_leaves_out_the_shoulders_phantom_bodies(benchmark_script):
    import mujoco

    from mskbench.control.behaviours import arm_roots
    from mskbench.envs import MSKEnv

    script = benchmark_script("expert_arms")
    env = MSKEnv("Stand")
    m = env.model
    right = script.arm_bodies(m, arm_roots(m, env.handles.bodies["hand_l"], env.handles.bodies["hand_r"])[1])
    names = {m.body(int(b)).name for b in right}
    assert {"humerus_r", "ulna_r", "radius_r"} <= names and not names & {"humphant_r", "humphant1_r", "scapphant_r"}
    env.reset(seed=0)
    assert script.angular_momentum(m, env.data, right) < 1e-9  # a start at rest
    env.data.qvel[m.jnt_dofadr[mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_JOINT, "elbow_flex_r")]] = 2.0
    mujoco.mj_forward(m, env.data)
    assert script.angular_momentum(m, env.data, right) > 1e-3


def test_achievable_lists_every_suite_task_with_the_last_run_of_its_controller(benchmark_script, tmp_path):
    # benchmarks/achievable.py, docs/calibration.md's "achievable" table: a later results file replaces an earlier
    # one's row for a task, a probe's row (hold, stored beside the expert) never does; a task no file covers has
    # no controller; the paper's best method sits beside each
    mod = benchmark_script("achievable")
    old, new = tmp_path / "old.json", tmp_path / "new.json"
    row = {"policy": "expert", "episodes": 50}
    old.write_text(json.dumps({"rows": [{**row, "task": "Stand", "sr_pct": 90.0}, {**row, "task": "Sit", "sr_pct": 82.0}]}))
    new.write_text(json.dumps({"rows": [{**row, "task": "Sit", "sr_pct": 100.0},
                                        {**row, "task": "Stand", "policy": "hold", "sr_pct": 8.0}]}))
    rows = {r["task"]: r for r in mod.achievable([str(old), str(new)])}
    assert len(rows) == 22
    assert (rows["Stand"]["sr_pct"], rows["Stand"]["source"]) == (90.0, str(old))
    assert (rows["Sit"]["sr_pct"], rows["Sit"]["source"]) == (100.0, str(new))
    assert rows["Run"]["controller"] is None and rows["Run"]["paper_best"]["method"] == "DynSyn-SAC"
    table = mod.markdown(list(rows.values()))
    assert "| Run | none | — | — | — | DynSyn-SAC, 96 |" in table
    with pytest.raises(SystemExit, match="is not a results file of benchmarks/expert_results.py"):
        mod.achievable([str(tmp_path / "missing.json")])


def test_qp_tracking_measures_the_plan_against_the_ask_and_the_body(benchmark_script, monkeypatch, capsys):
    # benchmarks/qp_tracking.py, docs/controllers.md's Walk figures: on Stand the QP plans what it is asked and
    # the body does what was planned, to a few cm/s², with a minority of muscles at a one-step bound
    script = benchmark_script("qp_tracking")
    row = script.track("Stand", 0, 20)
    assert row["control_steps"] == 20 and 0.0 < row["median_share_at_bound"] < 0.75  # Walk: 0.82-0.87
    for axis in "xy":
        a = row["axes"][axis]
        assert a["rms_asked_minus_planned"] < 0.05 and a["rms_made_minus_planned"] < 0.4  # Walk: ~1 and ~0.6
    monkeypatch.setattr("sys.argv", ["qp_tracking.py", "--task", "Run"])
    with pytest.raises(SystemExit) as exit_:
        script.main()
    assert "the expert does not serve 'Run'; it serves Balance" in str(exit_.value)

"""Batched evaluation (mskbench.eval.batched) against the CPU executor.

The JAX env runs with ``impl="cpu"`` (MuJoCo C behind the JAX interface; MJX
on the full body compiles far too slowly on a CPU), and once with
``impl="warp"`` (MuJoCo Warp on Warp's CPU device), on tasks with a 30-step
horizon, so the batched records can be compared with the CPU executor's
records of the same units.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("jax")
pytest.importorskip("mujoco.mjx", reason="MJX not installed (pip install 'mskbench[gpu]')")

from click.testing import CliRunner  # noqa: E402

from mskbench.cli import main  # noqa: E402
from mskbench.envs import MSKEnv  # noqa: E402
from mskbench.eval import executors  # noqa: E402
from mskbench.eval.batched import run_units_batched  # noqa: E402
from mskbench.eval.executors import JobSpec, run_units  # noqa: E402
from mskbench.eval.protocol import Unit  # noqa: E402
from mskbench.eval.store import ResultsStore  # noqa: E402
from mskbench.tasks.stand import Stand  # noqa: E402

HORIZON = 30
EXACT = ("method", "task", "perturbation", "scale", "seed", "success", "termination", "length", "emg",
         "mskbench_version", "success_step", "fell_after_success", "steps_taken")
#: The gait progress's distances and speed: from float32 positions on the batched path.
PROGRESS_FLOATS = ("distance_m", "forward_distance_m", "forward_speed_mps")


class _ShortStand(Stand):
    horizon = HORIZON


@pytest.fixture
def short_cpu_executor(monkeypatch):
    """The CPU executor (in this process) on the 30-step Stand."""
    monkeypatch.setattr(executors, "_ENVS", {"Stand": MSKEnv(_ShortStand())})
    monkeypatch.setattr(executors, "_CHECKPOINT_POLICIES", {})


def _short_tasks():
    return {"Stand": _ShortStand()}


def _units(method: str) -> list[Unit]:
    return [Unit(method, "Stand", "none", 0.0, 0), Unit(method, "Stand", "none", 0.0, 1),
            Unit(method, "Stand", "dynamics", 0.0, 2), Unit(method, "Stand", "dynamics", 0.2, 3),
            Unit(method, "Stand", "dynamics", 0.1, 4)]


def _assert_records_match(cpu: list[dict], batched: list[dict], rtol: float = 1e-4):
    assert len(cpu) == len(batched) > 0
    for c, b in zip(cpu, batched):
        assert set(c) == set(b)
        for k in EXACT:
            assert b[k] == c[k], (k, c, b)
        assert b["episode_return"] == pytest.approx(c["episode_return"], rel=rtol)
        assert b["activation_cost"] == pytest.approx(c["activation_cost"], rel=rtol)
        assert b["smoothness"] == pytest.approx(c["smoothness"], rel=rtol)
        assert set(b["recruitment"]) == set(c["recruitment"])
        for fam, mass in c["recruitment"].items():
            assert b["recruitment"][fam] == pytest.approx(mass, rel=rtol, abs=1e-9)
        for k in PROGRESS_FLOATS:
            assert c[k] is not None and b[k] == pytest.approx(c[k], rel=rtol, abs=1e-4), (k, c, b)  # 0.1 mm


@pytest.mark.slow
@pytest.mark.parametrize("policy", ["zero", "passive"])
def test_batched_records_equal_cpu_executor_and_resume(policy, tmp_path, short_cpu_executor):
    units = _units(policy)
    with ResultsStore(tmp_path / "cpu.db") as cpu, ResultsStore(tmp_path / "jax.db") as jx:
        assert run_units(cpu, units, JobSpec(policy))["written"] == len(units)
        cpu_records = cpu.records()
        # One unit is already stored (as the CPU executor wrote it): the batched run skips it.
        assert jx.write(cpu_records[0])
        seen = []
        counts = run_units_batched(units, JobSpec(policy), jx, impl="cpu", batch_size=3, tasks=_short_tasks(),
                                   progress=seen.append)
        assert counts == {"planned": 5, "skipped": 1, "written": 4}
        assert len(seen) == 4  # 4 units in chunks of 3: the second chunk is padded
        batched_records = jx.records()
        _assert_records_match(cpu_records, batched_records)
        # A rerun finds every unit stored and runs nothing.
        assert run_units_batched(units, policy, jx, impl="cpu", batch_size=3, tasks=_short_tasks()) == {
            "planned": 5, "skipped": 5, "written": 0}
        assert jx.records() == batched_records
    terminations = {r["termination"] for r in cpu_records}
    assert terminations == ({"time_limit"} if policy == "zero" else {"tilted"})
    assert all(r["success"] == (policy == "zero") for r in cpu_records)


class _NativeStand(_ShortStand):
    """The 30-step Stand with a native signal raised from step 5 on, that counts."""

    native_solved = "test: raised from step 5 on"
    native_degenerate = None

    def solved_native(self, s, ts, steps, xp):
        return xp.asarray(steps) >= 5


class _DegenerateNativeStand(_NativeStand):
    native_degenerate = "test: raised for any policy"


@pytest.mark.slow
@pytest.mark.parametrize("task_cls", [_NativeStand, _DegenerateNativeStand], ids=["counted", "degenerate"])
def test_episodes_end_at_the_first_counted_native_solve_in_both_evaluators(task_cls, tmp_path, monkeypatch):
    """A counted native signal ends the episode at its first step (termination ``native_solved``; return,
    length and metrics over that episode), on the CPU executor and in the batched evaluator alike, with the
    same records; a degenerate one is recorded as seen but ends nothing (it would end every episode at
    step 5 here, at step 1 on Walk)."""
    monkeypatch.setattr(executors, "_ENVS", {"Stand": MSKEnv(task_cls())})
    monkeypatch.setattr(executors, "_CHECKPOINT_POLICIES", {})
    # zero stands the 30 steps, passive falls (tilted) at ~20: both after the signal is raised.
    units = [Unit("zero", "Stand", "none", 0.0, 0), Unit("zero", "Stand", "dynamics", 0.2, 1)]
    passive = [Unit("passive", "Stand", "none", 0.0, 0)]
    with ResultsStore(tmp_path / "cpu.db") as cpu, ResultsStore(tmp_path / "jax.db") as jx:
        run_units(cpu, units, JobSpec("zero"))
        run_units(cpu, passive, JobSpec("passive"))
        # One batch holds a world that ends on the signal and (degenerate) worlds that run on.
        run_units_batched(units, "zero", jx, impl="cpu", batch_size=2, tasks={"Stand": task_cls()})
        run_units_batched(passive, "passive", jx, impl="cpu", batch_size=1, tasks={"Stand": task_cls()})
        cpu_records, batched_records = cpu.records(), jx.records()
    _assert_records_match(cpu_records, batched_records)
    assert all(r["solved_native_seen"] for r in cpu_records)
    if task_cls is _NativeStand:
        assert {(r["length"], r["termination"], r["success"], r["success_table_xii"]) for r in cpu_records} == {
            (5, "native_solved", True, False)}
    else:
        zero = {(r["length"], r["termination"], r["success"]) for r in cpu_records if r["method"] == "zero"}
        assert zero == {(HORIZON, "time_limit", True)}  # Table XII (survival) alone decides
        (fall,) = [r for r in cpu_records if r["method"] == "passive"]
        assert 5 < fall["length"] < HORIZON and fall["termination"] == "tilted" and not fall["success"]


class _SucceedsThenFalls(_ShortStand):
    """The 30-step Stand whose Table XII criterion holds from step 3 on: passive succeeds, then tips over."""

    def success(self, ts, steps, terminated, xp):
        return xp.asarray(steps) >= 3


@pytest.mark.slow
def test_success_step_and_a_fall_after_it_are_recorded_alike_by_both_evaluators(tmp_path, monkeypatch):
    """The batched evaluator computes ``success_step`` and ``fell_after_success`` from its traces with the CPU
    loop's function: the same values, a fall after success (passive, ``tilted``) and none (zero, time limit)."""
    monkeypatch.setattr(executors, "_ENVS", {"Stand": MSKEnv(_SucceedsThenFalls())})
    monkeypatch.setattr(executors, "_CHECKPOINT_POLICIES", {})
    with ResultsStore(tmp_path / "cpu.db") as cpu, ResultsStore(tmp_path / "jax.db") as jx:
        for policy in ("passive", "zero"):
            units = [Unit(policy, "Stand", "none", 0.0, 0), Unit(policy, "Stand", "dynamics", 0.2, 1)]
            run_units(cpu, units, JobSpec(policy))
            run_units_batched(units, policy, jx, impl="cpu", batch_size=2, tasks={"Stand": _SucceedsThenFalls()})
        cpu_records, batched_records = cpu.records(), jx.records()
    _assert_records_match(cpu_records, batched_records)
    outcome = {(r["method"], r["termination"], r["success"], r["success_step"], r["fell_after_success"])
               for r in batched_records}
    assert outcome == {("passive", "tilted", True, 3, True), ("zero", "time_limit", True, 3, False)}


@pytest.mark.slow
def test_batched_records_on_mujoco_warp_match_the_cpu_executor(tmp_path, short_cpu_executor):
    """The GPU evaluation path, physics included, on Warp's CPU device: the same successes,
    terminations and lengths; returns and metrics within float32 drift."""
    pytest.importorskip("mujoco_warp", reason="MuJoCo Warp not installed (pip install 'mskbench[warp]')")
    units = _units("zero")
    with ResultsStore(tmp_path / "cpu.db") as cpu, ResultsStore(tmp_path / "warp.db") as wp:
        run_units(cpu, units, JobSpec("zero"))
        assert run_units_batched(units, JobSpec("zero"), wp, impl="warp", batch_size=5,
                                 tasks=_short_tasks())["written"] == 5
        _assert_records_match(cpu.records(), wp.records(), rtol=1e-5)  # observed: 3e-7


@pytest.mark.slow
def test_random_policy_record_depends_only_on_the_unit(tmp_path):
    """The random policy and action noise draw from keys of the unit's seed: a unit's batched
    record does not depend on which other units share its batch (up to float32 round-off of
    the batched task code, which XLA may vectorise differently for another batch shape)."""
    units = [Unit("random", "Stand", "action", 0.1, 7), Unit("random", "Stand", "none", 0.0, 7),
             Unit("random", "Stand", "dynamics", 0.2, 8)]
    with ResultsStore(tmp_path / "a.db") as a, ResultsStore(tmp_path / "b.db") as b:
        run_units_batched(units, "random", a, impl="cpu", batch_size=3, tasks=_short_tasks())
        run_units_batched(units, "random", b, impl="cpu", batch_size=1, tasks=_short_tasks())
        ra, rb = a.records(), b.records()
    _assert_records_match(ra, rb, rtol=1e-5)
    by_pert = {r["perturbation"]: r for r in ra}
    assert by_pert["action"]["episode_return"] != by_pert["none"]["episode_return"]  # the noise acts
    assert all(0.0 < r["activation_cost"] < 1.0 for r in ra)


def _tiny_checkpoint(path, obs_size: int, obs_sample: np.ndarray):
    import jax

    from mskbench.agents.ppo import PPOConfig, RunningNorm, TrainState, adam_init, init_params, save_checkpoint

    cfg = PPOConfig(hidden=(16, 16), value_hidden=(8,), seed=3)
    params = init_params(jax.random.PRNGKey(3), cfg, obs_size, 416, None)
    params["policy"][-1]["w"] = params["policy"][-1]["w"] * 100.0  # actions that depend on the observation
    norm = RunningNorm(0.5 * obs_sample.astype(np.float64), (0.5 + 0.2 * np.abs(obs_sample)) ** 2, count=10.0)
    save_checkpoint(path, TrainState(params, adam_init(params), norm, key=jax.random.PRNGKey(0)), cfg)
    return path


@pytest.mark.slow
def test_ppo_checkpoint_evaluates_batched_like_the_cpu_executor(tmp_path, short_cpu_executor):
    env = executors._ENVS["Stand"]
    obs, _ = env.reset(seed=0)
    ckpt = str(_tiny_checkpoint(tmp_path / "best.npz", env.observation_space.shape[0], obs))
    units = [Unit("ppo", "Stand", "none", 0.0, 0), Unit("ppo", "Stand", "dynamics", 0.0, 1),
             Unit("ppo", "Stand", "observation", 0.0, 2), Unit("ppo", "Stand", "dynamics", 0.15, 1)]
    # Batched only: observation noise (its draws come from JAX keys, not the CPU's NumPy stream).
    noisy = Unit("ppo", "Stand", "observation", 0.1, 2)
    with ResultsStore(tmp_path / "cpu.db") as cpu, ResultsStore(tmp_path / "jax.db") as jx:
        run_units(cpu, units, JobSpec(ckpt))
        counts = run_units_batched([*units, noisy], JobSpec(ckpt), jx, impl="cpu", batch_size=5,
                                   tasks=_short_tasks())
        assert counts["written"] == 5
        batched = {(r["perturbation"], r["scale"]): r for r in jx.records()}
        _assert_records_match(cpu.records(), [batched[(u.perturbation, u.scale)] for u in sorted(units)])
    # The network acts (not the zero policy's record) and observation noise reaches it.
    ppo_none = batched[("none", 0.0)]
    assert batched[("observation", 0.1)]["episode_return"] != batched[("observation", 0.0)]["episode_return"]
    assert ppo_none["activation_cost"] != pytest.approx(0.2405, abs=1e-4)  # the zero policy's cost here
    assert batched[("dynamics", 0.15)]["length"] == HORIZON


def test_reset_to_first_observation_of_a_gain_world_matches_the_cpu_env():
    from mskbench.envs.jax_env import TaskJaxEnv
    from mskbench.eval.protocol import perturbation_for

    cpu = MSKEnv(_ShortStand(), perturbation=perturbation_for("dynamics", 0.2))
    obs, _ = cpu.reset(seed=3)
    jenv = TaskJaxEnv(_ShortStand(), num_envs=1, impl="cpu", vary_gain=True, reset_bank=1)
    state = jenv.reset_to([3], gain_range=0.2)
    np.testing.assert_allclose(np.asarray(state.obs[0]), obs, atol=1e-5)


def test_factory_policies_are_refused_with_a_pointer_to_the_cpu_executor(tmp_path):
    units = [Unit("f", "Stand", "none", 0.0, 0)]
    with ResultsStore(tmp_path / "r.db") as store:
        with pytest.raises(ValueError, match=r"built-in policies.*PPO checkpoints.*CPU executor"):
            run_units_batched(units, "mskbench.policies:make_policy", store, impl="cpu")
        assert len(store) == 0
    result = CliRunner().invoke(main, ["eval", "--task", "Stand", "--policy", "mskbench.policies:make_policy",
                                       "--backend", "jax", "--impl", "cpu", "--store", str(tmp_path / "c.db")])
    assert result.exit_code == 2 and "CPU executor" in result.output


def _cli_records(tmp_path, args: list[str], name: str):
    store = tmp_path / f"{name}.db"
    result = CliRunner().invoke(main, [*args, "--store", str(store)])
    assert result.exit_code == 0, result.output
    with ResultsStore(store) as s:
        return json.loads(result.stdout), s.records()


@pytest.mark.slow
def test_cli_sweep_backend_jax_writes_the_cpu_backend_records(tmp_path):
    """mskbench sweep --backend jax --impl cpu on the full Stand task (the passive body falls in ~20 steps):
    the five dynamics scales share one batch."""
    base = ["sweep", "--task", "Stand", "--policy", "passive", "--types", "dynamics", "--episodes", "1", "--json"]
    s_cpu, r_cpu = _cli_records(tmp_path, base, "cpu")
    s_jax, r_jax = _cli_records(tmp_path, [*base, "--backend", "jax", "--impl", "cpu", "--batch-size", "8"], "jax")
    assert len(r_jax) == 5 and s_jax == s_cpu
    _assert_records_match(r_cpu, r_jax)


def test_cli_eval_backend_jax_with_emg_reference(tmp_path):
    from pathlib import Path

    ref = Path(__file__).resolve().parents[2] / "shared" / "data" / "emg_reference" / "walking_treadmill_santuz.csv"
    if not ref.exists():
        pytest.skip(f"reference data not present at {ref}")
    base = ["eval", "--task", "Walk", "--policy", "passive", "--episodes", "1", "--emg-reference", str(ref), "--json"]
    s_cpu, r_cpu = _cli_records(tmp_path, base, "cpu")
    s_jax, r_jax = _cli_records(tmp_path, [*base, "--backend", "jax", "--impl", "cpu"], "jax")
    assert r_jax[0]["emg"] == r_cpu[0]["emg"] and "gait cycle" in r_jax[0]["emg"]["absent"]
    assert s_jax["Walk"]["terminations"] == s_cpu["Walk"]["terminations"]
    _assert_records_match(r_cpu, r_jax)


def test_a_checkpoint_of_an_unknown_format_is_a_clear_error(tmp_path):
    from mskbench.agents.checkpoint import load

    path = tmp_path / "other.npz"
    np.savez(path, format=np.array("some-trainer"), weights=np.zeros(3))
    with pytest.raises(ValueError, match="unknown checkpoint format 'some-trainer'.*mskbench-ppo"):
        load(path, {}, 3)

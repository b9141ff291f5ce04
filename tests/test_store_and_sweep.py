"""Evaluation protocol plumbing: units, the results store, resumable sweeps, executors."""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time

import pytest
from click.testing import CliRunner

from mskbench.cli import main
from mskbench.eval.executors import JobSpec, execute_unit, run_units
from mskbench.eval.protocol import (SCALES, Unit, check_policy_spec, eval_units, load_policy,
                                    perturbation_for, sweep_units)
from mskbench.eval.store import SCHEMA_VERSION, ResultsStore, StoreError

VOLATILE = ("wall_time_s", "created_at")


def _stable(records):
    return [{k: v for k, v in r.items() if k not in VOLATILE} for r in records]


# -- protocol --------------------------------------------------------------------------
def test_sweep_units_cover_paper_scales():
    units = sweep_units("m", ["Stand", "Reach"], seed=10, episodes=2)
    assert len(units) == 2 * 3 * 5 * 2
    assert {u.scale for u in units if u.perturbation == "observation"} == set(SCALES["observation"])
    assert {u.scale for u in units if u.perturbation == "action"} == {0.0, 0.05, 0.10, 0.15, 0.20}
    assert {u.seed for u in units} == {10, 11}
    assert len(set(units)) == len(units)
    assert [u.perturbation for u in eval_units("m", ["Walk"], 0, 3)] == ["none"] * 3


def test_unknown_perturbation_type_names_valid_ones():
    with pytest.raises(ValueError, match="action, observation, dynamics"):
        sweep_units("m", ["Stand"], 0, 1, types=["wind"])
    with pytest.raises(ValueError, match="none, action"):
        perturbation_for("gravity", 0.1)


def test_perturbation_for_maps_types():
    assert perturbation_for("action", 0.1).action_noise_std == 0.1
    assert perturbation_for("observation", 0.05).observation_noise_std == 0.05
    assert perturbation_for("dynamics", 0.2).muscle_gain_range == 0.2
    assert not perturbation_for("none", 0.0).active


def test_policy_paths_that_do_not_import_are_clear_errors():
    with pytest.raises(ValueError, match="cannot import module 'no_such_pkg.policies'"):
        check_policy_spec("no_such_pkg.policies:make")
    with pytest.raises(ValueError, match="has no attribute 'nope'"):
        check_policy_spec("mskbench.policies:nope")
    with pytest.raises(ValueError, match="package.module:factory"):
        check_policy_spec("clever")
    result = CliRunner().invoke(main, ["eval", "--task", "Stand", "--policy", "no_such_pkg:f",
                                       "--store", "unused.db"])
    assert result.exit_code == 2 and "cannot import" in result.output


def make_policy_for_test(action_space, seed):
    """A factory as a user would write it (used through 'tests.test_store_and_sweep:...')."""
    import numpy as np

    class Policy:
        def __init__(self):
            self.resets = 0

        def reset(self):
            self.resets += 1

        def act(self, obs):
            return np.full(action_space.shape, -0.5, dtype=np.float32)

    return Policy()


def test_factory_policy_is_built_with_the_arguments_it_accepts(stand_env):
    policy = load_policy(f"{__name__}:make_policy_for_test", stand_env, seed=3)
    assert policy.act(None).shape == (416,) and float(policy.act(None)[0]) == -0.5


# -- store -------------------------------------------------------------------------------
def _record(**over):
    rec = dict(method="m", task="Stand", perturbation="none", scale=0.0, seed=0, success=True,
               episode_return=1.5, length=10, termination="time_limit", activation_cost=0.1,
               smoothness=2.0, recruitment={"Deltoids": 0.5}, emg={"absent": "no EMG reference given"},
               wall_time_s=0.1)
    rec.update(over)
    return rec


def test_store_writes_a_unit_once_and_reads_it_back(tmp_path):
    path = tmp_path / "r.db"
    with ResultsStore(path) as store:
        assert store.write(_record()) is True
        assert store.write(_record(episode_return=99.0)) is False  # same unit: kept as first written
        assert store.write(_record(seed=1, success=False)) is True
        assert len(store) == 2
    with ResultsStore(path) as store:  # reopen: durable
        recs = store.records()
        assert [r["seed"] for r in recs] == [0, 1]
        assert recs[0]["episode_return"] == 1.5 and recs[0]["recruitment"] == {"Deltoids": 0.5}
        assert recs[0]["success"] is True and recs[1]["success"] is False
        assert store.missing([Unit("m", "Stand", "none", 0.0, s) for s in range(3)]) == [
            Unit("m", "Stand", "none", 0.0, 2)]
        assert list(store.success_rates()) == [("Stand", "m", "none", 0.0, 50.0, 2)]
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION


def test_store_refuses_newer_schema_and_foreign_files(tmp_path):
    newer = tmp_path / "newer.db"
    con = sqlite3.connect(newer)
    con.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    con.close()
    with pytest.raises(StoreError, match="upgrade mskbench"):
        ResultsStore(newer)
    foreign = tmp_path / "foreign.db"
    con = sqlite3.connect(foreign)
    con.execute("CREATE TABLE invoices (id INTEGER)")
    con.commit()
    con.close()
    with pytest.raises(StoreError, match="not an mskbench results store"):
        ResultsStore(foreign)


def test_execute_unit_is_deterministic_and_complete():
    unit = Unit("random", "Stand", "dynamics", 0.2, 4)
    a = execute_unit(unit, JobSpec("random"))
    b = execute_unit(unit, JobSpec("random"))
    assert _stable([a]) == _stable([b])
    assert a["method"] == "random" and a["perturbation"] == "dynamics" and a["scale"] == 0.2
    assert 0.0 <= a["activation_cost"] <= 1.0 and a["length"] >= 1
    assert a["emg"] == {"absent": "no EMG reference given"}
    assert a["recruitment"]["Quadriceps (Knee Extensors)"] > 0


def test_a_policy_is_built_from_the_env_as_compiled_whatever_ran_before(monkeypatch):
    """A worker caches its envs; a dynamics unit scales the cached model's peak forces F0 until the next
    reset. A policy built for the next unit must see the compiled body: the suite once failed when a
    latent run's map, built from the Stand env an earlier test's dynamics sweep had left scaled, found
    "the env's muscle parameters (priors P) differ" and passed alone."""
    import numpy as np

    from mskbench.eval import executors

    seen = []

    def spy(spec, env, seed):  # what a policy reading the simulator (a latent map, an expert) is built from
        seen.append((env.perturbation.active, env.model.actuator_gainprm[env.handles.muscle_ids, 2].copy()))
        return load_policy("passive", env, seed)

    monkeypatch.setattr(executors, "_ENVS", {})
    monkeypatch.setattr(executors, "load_policy", spy)
    first = execute_unit(Unit("p", "Stand", "dynamics", 0.2, 3), JobSpec("passive"))
    env = executors._ENVS["Stand"]
    nominal = env.handles.muscle_force_nominal
    assert not np.allclose(env.model.actuator_gainprm[env.handles.muscle_ids, 2], nominal)  # the unit scaled F0
    after = execute_unit(Unit("p", "Stand", "none", 0.0, 3), JobSpec("passive"))
    assert len(seen) == 2
    for active, gains in seen:
        assert not active
        np.testing.assert_array_equal(gains, nominal)
    # The episodes themselves: the dynamics unit ran with its scaled forces, the next one without them.
    monkeypatch.setattr(executors, "_ENVS", {})
    fresh = execute_unit(Unit("p", "Stand", "none", 0.0, 3), JobSpec("passive"))
    assert _stable([after]) == _stable([fresh]) and first["episode_return"] != after["episode_return"]


def test_native_end_is_the_first_raised_step_of_a_counted_signal():
    """Where the evaluators (the CPU loop and the batched one) end an episode on the native signal."""
    import numpy as np

    from mskbench.eval.episodes import native_end, native_ends
    from mskbench.tasks import REGISTRY
    from mskbench.tasks.stand import Stand

    flags = np.array([False, False, True, True, False])
    assert Stand.native_counts() and native_ends(Stand())
    assert native_end(Stand, flags, 5) == 3
    assert native_end(Stand(), flags, 2) is None  # raised after the env had ended the episode
    assert native_end(Stand, np.zeros(5, bool), 5) is None
    degenerate = REGISTRY["Walk"]  # raised at step 1 by any policy: not counted, ends nothing
    assert degenerate.native_solved is not None and degenerate.native_degenerate is not None
    assert native_end(degenerate, flags, 5) is None and not native_ends(degenerate)
    assert native_end(REGISTRY["Run"], flags, 5) is None  # no native signal


# -- sweeps ----------------------------------------------------------------------------
SWEEP_ARGS = ["sweep", "--task", "Stand,Reach", "--policy", "random", "--types", "action",
              "--episodes", "2", "--seed", "7", "--workers", "1"]
N_SWEEP_UNITS = 2 * 5 * 2


def _count(path) -> int:
    if not path.exists():
        return 0
    try:
        con = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
        try:
            return con.execute("SELECT COUNT(*) FROM episodes").fetchone()[0]
        finally:
            con.close()
    except sqlite3.OperationalError:
        return 0


@pytest.mark.slow
def test_sigkilled_sweep_resumes_without_losing_or_duplicating_units(tmp_path):
    killed = tmp_path / "killed.db"
    cmd = [sys.executable, "-m", "mskbench.cli", *SWEEP_ARGS, "--store", str(killed)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 120
    while _count(killed) < 4 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    partial = _count(killed)
    assert 4 <= partial < N_SWEEP_UNITS, f"kill landed outside the run ({partial} units)"

    result = CliRunner().invoke(main, [*SWEEP_ARGS, "--store", str(killed), "--json"])
    assert result.exit_code == 0, result.output
    with ResultsStore(killed) as store:
        resumed = store.records()
    expected = {u.key for u in sweep_units("random", ["Stand", "Reach"], 7, 2, ["action"])}
    keys = [(r["method"], r["task"], r["perturbation"], r["scale"], r["seed"]) for r in resumed]
    assert len(keys) == len(set(keys)) == N_SWEEP_UNITS
    assert set(keys) == expected

    # The same units, never interrupted, give the same records.
    clean = tmp_path / "clean.db"
    assert CliRunner().invoke(main, [*SWEEP_ARGS, "--store", str(clean)]).exit_code == 0
    with ResultsStore(clean) as store:
        assert _stable(store.records()) == _stable(resumed)

    summary = json.loads(result.stdout)
    assert set(summary["per_task"]) == {"Stand", "Reach"}
    assert 0.0 <= summary["average"] <= 100.0


@pytest.mark.slow
def test_local_workers_give_the_records_of_one_worker(tmp_path):
    units = sweep_units("random", ["Stand"], 0, 1, ["dynamics"])
    with ResultsStore(tmp_path / "one.db") as one, ResultsStore(tmp_path / "two.db") as two:
        c1 = run_units(one, units, JobSpec("random"), workers=1)
        c2 = run_units(two, units, JobSpec("random"), workers=2)
        assert c1 == c2 == {"planned": 5, "skipped": 0, "written": 5}
        assert _stable(one.records()) == _stable(two.records())
        assert run_units(two, units, JobSpec("random"), workers=2)["written"] == 0  # all stored


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")  # Ray starts its daemons by fork+exec
def test_ray_executor_matches_local(tmp_path):
    pytest.importorskip("ray", reason="Ray not installed (pip install 'mskbench[ray]')")
    units = sweep_units("random", ["Stand"], 3, 1, ["action"])
    with ResultsStore(tmp_path / "local.db") as local, ResultsStore(tmp_path / "ray.db") as remote:
        run_units(local, units, JobSpec("random"), workers=1)
        counts = run_units(remote, units, JobSpec("random"), executor="ray", workers=2)
        assert counts["written"] == len(units)
        assert _stable(remote.records()) == _stable(local.records())


def test_eval_cli_writes_records_and_summarises(tmp_path):
    store = tmp_path / "e.db"
    args = ["eval", "--task", "stand", "--policy", "random", "--episodes", "2", "--store", str(store), "--json"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)["Stand"]
    assert summary["episodes"] == 2 and summary["success_rate"] == 0.0
    assert summary["emg"] == {"absent": "no EMG reference given"}
    assert sum(summary["recruitment_percent"].values()) == pytest.approx(100.0)
    with ResultsStore(store) as s:
        assert len(s) == 2
    board = CliRunner().invoke(main, ["leaderboard", "--store", str(store), "--json"])
    assert board.exit_code == 0, board.output
    assert json.loads(board.output)["random"]["coverage"] == [0, 1]


def test_leaderboard_merges_store_and_published_csv(tmp_path):
    store = tmp_path / "e.db"
    with ResultsStore(store) as s:
        s.write(_record(method="ours", seed=0, success=True))
        s.write(_record(method="ours", seed=1, success=False))
    csv = tmp_path / "published.csv"
    csv.write_text("task,method,perturbation,scale,success_rate\nstand,DepRL,none,,50\nwalk,DepRL,none,0,30\n")
    result = CliRunner().invoke(main, ["leaderboard", "--store", str(store), "--from", str(csv), "--json"])
    assert result.exit_code == 0, result.output
    board = json.loads(result.output)
    assert board["ours"]["success_rate"]["stabilization"] == 50.0
    assert board["DepRL"]["success_rate"]["all"] == 40.0 and board["DepRL"]["coverage"] == [2, 2]
    missing = CliRunner().invoke(main, ["leaderboard", "--store", str(tmp_path / "none.db")])
    assert missing.exit_code == 2 and "does not exist" in missing.output


def test_emg_metric_wiring_on_walk(walk_env):
    """Activations that follow the reference envelopes over tiled gait cycles score r ≈ 1."""
    from pathlib import Path

    import numpy as np

    from mskbench.eval.episodes import emg_metric
    from mskbench.metrics.emg import SANTUZ_TO_MYOFULLBODY, load_emg_reference

    path = Path(__file__).resolve().parents[2] / "shared" / "data" / "emg_reference" / "walking_treadmill_santuz.csv"
    if not path.exists():
        pytest.skip(f"reference data not present at {path}")
    ref = load_emg_reference(path)
    names = walk_env.handles.muscle_names
    cycles, per_cycle = 4, 100
    t = np.arange(cycles * per_cycle)
    phase_pct = (t % per_cycle) * 100.0 / per_cycle
    acts = np.full((t.size, len(names)), 0.05)
    for channel, actuators in SANTUZ_TO_MYOFULLBODY.items():
        env_curve = np.interp(phase_pct, ref.gait_cycle_pct, ref[channel])
        for a in actuators:
            acts[:, names.index(a)] = 0.1 + 0.8 * env_curve
    heel = ((t % per_cycle) < 30).astype(float) * 100.0  # contact from each strike on
    out = emg_metric(ref, acts, heel, walk_env.task.name, names)
    assert out["cycles"] == cycles - 2  # strikes at 100, 200, 300 (sample 0 is no rising edge)
    assert set(out["per_muscle"]) == set(ref.muscles)
    assert min(out["per_muscle"].values()) > 0.99 and out["mean_r"] > 0.99

    absent = emg_metric(ref, acts[:50], heel[:50], walk_env.task.name, names)
    assert "absent" in absent and "gait cycle" in absent["absent"]


def test_eval_with_reference_warns_about_units_stored_without_one(tmp_path):
    from pathlib import Path

    ref = Path(__file__).resolve().parents[2] / "shared" / "data" / "emg_reference" / "walking_treadmill_santuz.csv"
    if not ref.exists():
        pytest.skip(f"reference data not present at {ref}")
    store = str(tmp_path / "e.db")
    base = ["eval", "--task", "Walk", "--policy", "passive", "--episodes", "1", "--store", store]
    assert CliRunner().invoke(main, base).exit_code == 0
    result = CliRunner().invoke(main, [*base, "--emg-reference", str(ref)])
    assert result.exit_code == 0
    assert "stored earlier without an EMG reference" in result.output
    bad = tmp_path / "bad.csv"
    bad.write_text("gait_cycle_pct,SO\n0,0.1\n")
    result = CliRunner().invoke(main, [*base, "--emg-reference", str(bad)])
    assert result.exit_code == 2 and "101" in result.output


# -- bad arguments: one-line errors, nothing written -------------------------------------------
def test_negative_seeds_are_refused_by_the_unit_builders():
    from mskbench.eval.protocol import episode_seeds

    for build in (lambda: episode_seeds(-1, 2), lambda: eval_units("m", ["Stand"], -1, 2),
                  lambda: sweep_units("m", ["Stand"], -3, 1, ["action"])):
        with pytest.raises(ValueError, match=r"seed must be >= 0 .*got -\d"):
            build()
    assert episode_seeds(0, 2) == [0, 1]


@pytest.mark.parametrize("types", ["", ",", " , "])
def test_sweep_without_perturbation_types_is_a_usage_error(tmp_path, types):
    store = tmp_path / "e.db"
    result = CliRunner().invoke(main, ["sweep", "--task", "Stand", "--types", types, "--episodes", "1",
                                       "--store", str(store)])
    assert result.exit_code == 2, result.output
    assert "--types: no perturbation type given; valid types: action, observation, dynamics" in result.output
    assert not store.exists()


def test_sweep_types_collapse_duplicates():
    from mskbench.eval.protocol import check_sweep_types

    assert check_sweep_types(["dynamics", "action", "dynamics", "action"]) == ["dynamics", "action"]
    assert len(sweep_units("m", ["Stand"], 0, 1, ["action", "action"])) == 5
    with pytest.raises(ValueError, match="no perturbation type given; valid types: action, observation"):
        sweep_units("m", ["Stand"], 0, 1, [])


def _damaged(kind, path):
    if kind == "random bytes":
        return os.urandom(8192)
    real = path.with_name("real.db")
    with ResultsStore(real) as store:
        for seed in range(20):
            store.write(_record(seed=seed, emg={"absent": "x" * 2000}))
    data = real.read_bytes()
    assert len(data) > 8 * 4096
    # Cut at a page boundary (SQLite finds it malformed), or by one byte (shorter than its header says).
    return data[:len(data) // 2 // 4096 * 4096] if kind == "truncated" else data[:-1]


@pytest.mark.parametrize("kind", ["random bytes", "truncated", "one byte short"])
def test_a_damaged_store_is_refused_by_name_and_left_unchanged(tmp_path, kind):
    path = tmp_path / "my results.db"
    data = _damaged(kind, path)
    path.write_bytes(data)
    with pytest.raises(StoreError, match="my results.db"):
        ResultsStore(path)
    for args in (["eval", "--task", "Stand", "--episodes", "1"],
                 ["sweep", "--task", "Stand", "--episodes", "1", "--types", "action"],
                 ["leaderboard"]):
        result = CliRunner().invoke(main, [*args, "--store", str(path)])
        assert result.exit_code == 1, result.output
        assert result.exception is not None and not isinstance(result.exception, StoreError)  # no traceback
        (line,) = result.output.splitlines()
        assert line.startswith(f"Error: results store {path} ")
        assert "left unchanged: pass another store file" in line
    assert path.read_bytes() == data
    assert not list(tmp_path.glob("*-journal"))


def test_reopening_a_store_does_not_write_to_it(tmp_path):
    path = tmp_path / "r.db"
    with ResultsStore(path) as store:
        store.write(_record())
    before = (path.read_bytes(), path.stat().st_mtime_ns)
    with ResultsStore(path) as store:
        assert len(store) == 1
    assert (path.read_bytes(), path.stat().st_mtime_ns) == before


def test_a_store_whose_last_write_was_killed_reopens_without_it(tmp_path):
    """A kill inside a write leaves a hot journal; the read-only check cannot roll it back, the writer does."""
    import shutil

    path = tmp_path / "r.db"
    with ResultsStore(path) as store:
        store.write(_record())
    killed = tmp_path / "killed.db"
    con = sqlite3.connect(path)
    con.execute("PRAGMA cache_size = 1")  # spill to the file (and journal) before the commit
    con.execute("BEGIN")
    for seed in range(1, 500):
        con.execute("INSERT INTO episodes (method, task, perturbation, scale, seed, success, episode_return, "
                    "length, termination, emg, created_at) VALUES ('m', 'Stand', 'none', 0, ?, 1, 1, 1, 'x', ?, 't')",
                    (seed, "x" * 500))
    shutil.copy(path, killed)
    shutil.copy(f"{path}-journal", f"{killed}-journal")
    con.rollback()
    con.close()
    with ResultsStore(killed) as store:
        assert [r["seed"] for r in store.records()] == [0]
    assert not os.path.exists(f"{killed}-journal")


def test_ray_executor_without_ray_says_what_to_install_before_creating_the_store(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray -> ImportError
    store = tmp_path / "e.db"
    result = CliRunner().invoke(main, ["eval", "--task", "Stand", "--episodes", "1", "--executor", "ray",
                                       "--store", str(store)])
    assert result.exit_code == 1, result.output
    assert result.output.splitlines() == ["Error: the Ray executor needs Ray: pip install 'mskbench[ray]'"]
    assert not store.exists()


# -- workers die with the sweep -----------------------------------------------------------------
def _proc_stat(pid) -> list[str] | None:
    """Fields of /proc/PID/stat after the command name (state, ppid, ...); None when it is gone."""
    try:
        return open(f"/proc/{pid}/stat").read().rpartition(")")[2].split()
    except OSError:
        return None


def _alive(pid) -> bool:
    stat = _proc_stat(pid)
    return stat is not None and stat[0] not in ("Z", "X")  # a zombie has exited (init may not reap it yet)


def _children(pid) -> dict[int, str]:
    """Live child processes of ``pid`` with their command lines."""
    out = {}
    for entry in os.listdir("/proc"):
        stat = _proc_stat(entry) if entry.isdigit() else None
        if stat is not None and int(stat[1]) == pid and _alive(entry):
            try:
                out[int(entry)] = open(f"/proc/{entry}/cmdline", "rb").read().replace(b"\0", b" ").decode()
            except OSError:
                pass
    return out


@pytest.mark.slow
@pytest.mark.skipif(not os.path.exists("/proc/self/stat"), reason="finds the workers through Linux /proc")
@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM], ids=["SIGKILL", "SIGTERM"])
def test_sweep_workers_exit_when_the_sweep_is_killed(tmp_path, sig):
    store = tmp_path / "k.db"
    cmd = [sys.executable, "-m", "mskbench.cli", "sweep", "--task", "Stand", "--policy", "random",
           "--types", "action", "--episodes", "4", "--workers", "2", "--store", str(store)]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    workers, tracker = [], []
    try:
        deadline = time.time() + 120
        while not (len(workers) == 2 and tracker and _count(store) >= 1):  # both workers at work
            assert proc.poll() is None and time.time() < deadline, "the sweep ended before it could be killed"
            time.sleep(0.05)
            children = _children(proc.pid)
            workers = [p for p, c in children.items() if "spawn_main" in c]
            tracker = [p for p, c in children.items() if "resource_tracker" in c]
        os.kill(proc.pid, sig)
        proc.wait()
        killed = time.monotonic()
        while any(map(_alive, workers + tracker)) and time.monotonic() - killed < 10:
            time.sleep(0.02)
        left = [p for p in workers + tracker if _alive(p)]
        assert not left, f"still running 10 s after the sweep was killed: {left}"
        print(f"{sig.name}: workers and resource tracker gone {time.monotonic() - killed:.2f} s after the kill")
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in workers + tracker:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


def test_a_worker_whose_parent_died_before_it_started_exits():
    # The parent pid the pool passes is not this process's parent any more: the worker ends at once.
    code = "import time; from mskbench.sim.processes import exit_with_parent; exit_with_parent(-1); time.sleep(60)"
    proc = subprocess.run([sys.executable, "-c", code], timeout=30)
    assert proc.returncode == 1

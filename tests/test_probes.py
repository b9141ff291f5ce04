"""The cheat probes (:mod:`mskbench.control.probes`): each runs on the tasks it aims at only, counts as free in
the calibration, and — the CI slice that keeps the criteria honest — succeeds on none of its tasks."""

from __future__ import annotations

import numpy as np
import pytest

from mskbench import policies
from mskbench.control import make_controller, serves
from mskbench.control.probes import PROBE_TASKS, PROBES, FallBack
from mskbench.eval import calibration as cal
from mskbench.eval.episodes import run_episode


def test_probes_are_registered_built_ins_and_serve_only_their_tasks():
    assert policies.CHEAT_PROBES == tuple(PROBES)
    assert set(policies.CHEAT_PROBES) <= set(policies.PRIVILEGED_POLICIES) <= set(policies.BUILTIN_POLICIES)
    assert cal.default_policies() == ("zero", "passive", "random", "hold", *policies.CHEAT_PROBES, "expert")
    for name, tasks in PROBE_TASKS.items():
        assert tasks and all(serves(name, t) for t in tasks)
        assert not serves(name, "Walk")
        assert cal.served(name, ["Walk", *tasks]) == list(tasks)
        assert all(cal.free_policy(name, t) for t in tasks)
    with pytest.raises(ValueError, match="the basket probe aims at Catch, not Stand"):
        make_controller("basket", _Env("Stand"))


class _Env:
    """Enough of an environment for :func:`make_controller` to refuse a task before it builds anything."""

    def __init__(self, task):
        self.task = type("T", (), {"name": task})()


def test_a_probe_success_is_a_free_success_and_fails_the_check():
    def row(task, policy, sr):
        return {"task": task, "policy": policy, "sr_paper_pct": sr, "sr_table_xii_pct": sr, "sr_native_pct": 0.0,
                "native_counts": False}

    tasks = ["Jump", "Catch"]
    table = {"tasks": tasks, "native": {t: cal._native(t) for t in tasks},
             "rows": [row("Jump", "calf-raise", 10.0), row("Catch", "basket", 0.0), row("Catch", "expert", 50.0)]}
    assert [(f["task"], f["policy"]) for f in cal.free_successes(table)] == [("Jump", "calf-raise")]


def test_natives_that_skip_clauses_agree_unmet():
    """WalkAndSit's native is declared for skipping Table XII's clauses: the verdict agrees although no probe met it."""
    tasks = ["WalkAndSit"]
    row = {"task": "WalkAndSit", "policy": "fall-back", "sr_paper_pct": 0.0, "sr_table_xii_pct": 0.0,
           "sr_native_pct": 0.0, "native_counts": False}
    verdict = cal.native_verdicts({"tasks": tasks, "native": {t: cal._native(t) for t in tasks}, "rows": [row]})
    assert verdict["WalkAndSit"]["declared_degenerate"] and not verdict["WalkAndSit"]["degenerate"]
    assert verdict["WalkAndSit"]["agrees"]


def test_fall_back_goes_limp_after_its_drive(shared_envs):
    env = shared_envs("Sit")
    policy = make_controller("fall-back", env)
    actions = []
    obs, _ = env.reset(seed=0)
    policy.reset(0)
    for _ in range(int(FallBack.drive_s / env.control_dt_s) + 2):
        actions.append(policy.act(obs))
        obs, *_ = env.step(actions[-1])
    assert np.all(actions[-1] == -1.0)  # no excitation at all: the landing is not controlled
    assert not np.all(actions[0] == -1.0)
    env.reset(seed=0)


@pytest.mark.slow
@pytest.mark.parametrize("probe, task", [(p, t) for p, ts in PROBE_TASKS.items() for t in ts])
def test_no_probe_succeeds_on_a_task_it_aims_at(shared_envs, probe, task):
    """The CI slice of the calibration's probe rows (docs/calibration.md has 10 episodes each): seed 0."""
    env = shared_envs(task)
    record = run_episode(env, make_controller(probe, env), 0)
    assert not record.success and not record.success_table_xii, (probe, task, record.termination)
    if (probe, task) == ("basket", "Catch"):
        # the basket meets the original's instantaneous catch signal, which counted as success before issue 47
        assert record.solved_native_seen and record.termination == "cube_dropped"
    env.reset(seed=0)

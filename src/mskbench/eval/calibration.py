"""Calibration: what policies that do not control anything score on every task.

The success rate is only meaningful if no policy gets it for free. The
calibration runs built-in policies — ``zero`` (every muscle at excitation
0.5), ``passive`` (no excitation), ``random`` (uniform actions) and any other
built-in registered by name in :data:`mskbench.policies.BUILTIN_POLICIES`
(the ``hold`` probe, the ``expert``, the cheat probes of :mod:`mskbench.control.probes`,
each on the tasks it serves) — on every task through the evaluation
protocol (train environment, episode ``i`` with seed ``seed + i``, the CPU
executors: local workers or Ray), into a results store, so a killed run
resumes where it stopped. Each policy's records are stored under the method
name of the policy.

Per task and policy the table gives: the success rate by the Table XII
criterion, by the native solved signal (and whether that signal counts) and
by the paper's rule (the two combined, :func:`mskbench.tasks.base.paper_success`),
the share of the successful episodes that then fell (ended in one of the task's
termination conditions after success first held; "—" when none succeeded),
the median, minimum and maximum episode length, the return's mean, spread
and extremes, the medians of the gait progress figures (steps taken, distance,
forward speed; :func:`mskbench.eval.summary.progress_medians`), shown for the
walking tasks (:data:`mskbench.catalog.WALKING`), and the termination reasons
with their counts.
:func:`free_successes` lists every counted success of a trivial policy
(``zero``, ``passive``, ``random``), of the ``hold`` probe on a task whose goal
is more than keeping its start (``Task.goal_is_start``) and of a cheat probe on a
task it aims at (each aims at the letter of a criterion, not the task), which must be none;
:func:`native_verdicts` says per task whether one of those meets its native
signal (the signal is then degenerate) and whether the task declares it so
(``Task.native_degenerate``).

``mskbench calibrate`` is the command; ``benchmarks/native_degeneracy.py``
prints the verdicts of the same records.
"""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from mskbench.eval.executors import JobSpec, run_units
from mskbench.eval.protocol import DEFAULT_EPISODES, Unit, eval_units
from mskbench.eval.summary import progress_medians, progress_text
from mskbench.policies import CHEAT_PROBES

#: Policies that control nothing: no success criterion that counts may be met by them.
TRIVIAL_POLICIES = ("zero", "passive", "random")
#: Probes the calibration adds to its default set when they are registered as built-ins.
OPTIONAL_POLICIES = ("hold", *CHEAT_PROBES, "expert")
#: The probe that holds the episode's start: it may succeed only where the goal is the start.
HOLD_PROBE = "hold"
#: A native signal a trivial policy meets in at least this % of its episodes is degenerate.
DEGENERACY_THRESHOLD_PCT = 1.0
__all__ = ["CHEAT_PROBES", "DEFAULT_EPISODES", "DEGENERACY_THRESHOLD_PCT", "HOLD_PROBE", "OPTIONAL_POLICIES",
           "TRIVIAL_POLICIES",
           "builtin_policies", "free_policy", "served", "serves", "calibration_table", "calibration_units", "check_policies", "default_policies",
           "free_successes", "markdown", "native_cell", "native_verdicts", "progress_cell", "run_calibration"]


def builtin_policies() -> tuple[str, ...]:
    """The built-in policies registered now (read when called, so a probe registered later is found)."""
    from mskbench import policies

    return tuple(policies.BUILTIN_POLICIES)


def default_policies() -> tuple[str, ...]:
    """``zero, passive, random``, then those of ``hold``, the cheat probes and ``expert`` that are registered."""
    available = builtin_policies()
    return TRIVIAL_POLICIES + tuple(p for p in OPTIONAL_POLICIES if p in available)


def check_policies(names: Iterable[str]) -> list[str]:
    """The calibration's policies, duplicates dropped: at least one, each a registered built-in."""
    names = list(dict.fromkeys(n.strip() for n in names if n.strip()))
    available = builtin_policies()
    valid = f"built-in policies: {', '.join(available)}"
    if not names:
        raise ValueError(f"no policy given; {valid}")
    for name in names:
        if name not in available:
            raise ValueError(f"unknown policy {name!r} for calibration; {valid}")
    return names


def serves(policy: str, task: str) -> bool:
    """Whether ``policy`` runs on ``task``: every built-in does, except the ``expert``, which has a behaviour
    for some tasks only (:data:`mskbench.control.EXPERT_BEHAVIOURS`), and a cheat probe, which runs on the
    tasks it aims at (:data:`mskbench.control.probes.PROBE_TASKS`)."""
    from mskbench.policies import PRIVILEGED_POLICIES

    if policy not in PRIVILEGED_POLICIES:
        return True
    from mskbench.control import serves as controller_serves

    return controller_serves(policy, task)


def served(policy: str, tasks: Sequence[str]) -> list[str]:
    """The tasks of ``tasks`` that ``policy`` runs on (:func:`serves`)."""
    return [t for t in tasks if serves(policy, t)]


def calibration_units(policies: Sequence[str], tasks: Sequence[str], seed: int, episodes: int) -> list[Unit]:
    """The train-environment units of every policy (its method name) on every task it serves."""
    return [u for p in policies for u in eval_units(p, served(p, tasks), seed, episodes)]


def run_calibration(store, policies: Sequence[str], tasks: Sequence[str], seed: int = 0,
                    episodes: int = DEFAULT_EPISODES, executor: str = "local", workers: int = 1,
                    address: str | None = None, on_record: Callable[[dict], None] | None = None) -> dict[str, dict]:
    """Run the units the store lacks, policy by policy (:func:`mskbench.eval.executors.run_units`); returns
    each policy's counts ``{"planned", "skipped", "written"}``."""
    policies = check_policies(policies)
    return {p: run_units(store, eval_units(p, served(p, tasks), seed, episodes), JobSpec(p), executor=executor,
                         workers=workers, address=address, on_record=on_record)
            for p in policies}


def _native(task: str) -> dict[str, Any]:
    from mskbench.tasks import REGISTRY

    cls = REGISTRY[task]
    return {"signal": cls.native_solved is not None, "counts": cls.native_counts(),
            "degenerate": cls.native_degenerate, "skips_clauses": cls.native_skips_clauses}


def _pct(flags: Sequence[bool]) -> float:
    return 100.0 * sum(bool(f) for f in flags) / len(flags)


def _fell_pct(records: list[dict]) -> float | None:
    """The % of the successful episodes (the paper's rule) that then ended in one of the task's termination
    conditions (``fell_after_success``); None when none succeeded or a successful record does not say."""
    won = [r for r in records if r["success"]]
    if not won or any(r.get("fell_after_success") is None for r in won):
        return None
    return _pct([r["fell_after_success"] for r in won])


def _row(task: str, policy: str, records: list[dict], native: dict[str, Any]) -> dict[str, Any]:
    lengths = [int(r["length"]) for r in records]
    returns = [float(r["episode_return"]) for r in records]
    walls = [float(r["wall_time_s"]) for r in records if r.get("wall_time_s") is not None]
    return {
        "task": task,
        "policy": policy,
        "episodes": len(records),
        "sr_table_xii_pct": _pct([r["success_table_xii"] for r in records]),
        # NULL (a schema-1 row) reads as not seen.
        "sr_native_pct": _pct([bool(r["solved_native_seen"]) for r in records]),
        "native_counts": native["counts"],
        "sr_paper_pct": _pct([r["success"] for r in records]),
        "length_median": float(statistics.median(lengths)),
        "length_min": min(lengths),
        "length_max": max(lengths),
        "return_mean": statistics.fmean(returns),
        "return_std": statistics.pstdev(returns),
        "return_min": min(returns),
        "return_max": max(returns),
        "distinct_returns": len(set(returns)),
        "fell_after_success_pct": _fell_pct(records),
        "progress": progress_medians(records),
        "terminations": dict(sorted(Counter(r["termination"] for r in records).items(),
                                    key=lambda kv: (-kv[1], kv[0]))),
        "wall_time_s_mean": statistics.fmean(walls) if walls else None,
    }


def calibration_table(store, policies: Sequence[str], tasks: Sequence[str], seed: int = 0,
                      episodes: int = DEFAULT_EPISODES) -> dict[str, Any]:
    """The calibration table of the records ``store`` holds for these policies, tasks and seeds.

    Returns ``{"seed", "episodes", "policies", "tasks", "native", "rows", "missing"}``: ``native`` per
    task (``signal``, ``counts``, ``degenerate``: the task's reason or None), one row per task and policy
    with at least one stored episode, tasks then policies in the given order (keys in :func:`_row`,
    percentages 0-100) and ``missing``, the
    number of units not stored yet (a run in progress or killed).
    """
    seeds = set(range(seed, seed + episodes))
    rows, missing = [], 0
    for policy in policies:
        by_task: dict[str, list[dict]] = {t: [] for t in tasks}
        for r in store.records(method=policy, perturbation="none"):
            if r["task"] in by_task and int(r["seed"]) in seeds:
                by_task[r["task"]].append(r)
        for task in served(policy, tasks):
            recs = by_task[task]
            missing += episodes - len(recs)
            if recs:
                rows.append(_row(task, policy, recs, _native(task)))
    order, porder = {t: i for i, t in enumerate(tasks)}, {p: i for i, p in enumerate(policies)}
    rows.sort(key=lambda r: (order[r["task"]], porder[r["policy"]]))
    return {"seed": seed, "episodes": episodes, "policies": list(policies), "tasks": list(tasks),
            "native": {t: _native(t) for t in tasks}, "rows": rows, "missing": missing}


def free_policy(policy: str, task: str) -> bool:
    """Whether any success of ``policy`` on ``task`` would be free: a trivial policy on any task, the
    ``hold`` probe on a task whose goal is more than keeping its start (``Task.goal_is_start`` False), a
    cheat probe on a task it aims at (it does the letter of the criterion, not the task)."""
    from mskbench.tasks import REGISTRY

    if policy in TRIVIAL_POLICIES:
        return True
    if policy in CHEAT_PROBES:
        return serves(policy, task)
    return policy == HOLD_PROBE and not REGISTRY[task].goal_is_start


def _probed(row: dict[str, Any], policies: Sequence[str] | None) -> bool:
    """Whether a table row belongs to the policies asked for, by default those for which a success is free."""
    return free_policy(row["policy"], row["task"]) if policies is None else row["policy"] in policies


def free_successes(table: dict[str, Any], policies: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Every row with a counted success (the Table XII criterion met, or a counted native signal seen: the
    paper's rule) of a policy for which it is free (:func:`free_policy`), or of ``policies`` if given.
    Must be empty."""
    return [{"task": r["task"], "policy": r["policy"], "sr_paper_pct": r["sr_paper_pct"],
             "sr_table_xii_pct": r["sr_table_xii_pct"],
             "sr_native_counted_pct": r["sr_native_pct"] if r["native_counts"] else 0.0}
            for r in table["rows"] if _probed(r, policies) and r["sr_paper_pct"] > 0]


def native_verdicts(table: dict[str, Any], threshold_pct: float = DEGENERACY_THRESHOLD_PCT,
                    policies: Sequence[str] | None = None) -> dict[str, dict[str, Any]]:
    """Per task: whether it has a native signal, the highest % of episodes in which a policy for which a
    success there is free (:func:`free_policy`; or one of ``policies`` if given) raised it, whether that
    makes it degenerate (>= ``threshold_pct``), whether the task declares it degenerate and whether the
    two agree."""
    out = {}
    for task in table["tasks"]:
        native = table["native"][task]
        rows = [r for r in table["rows"] if r["task"] == task and _probed(r, policies)]
        worst = max((r["sr_native_pct"] for r in rows), default=None)
        measured = native["signal"] and worst is not None and worst >= threshold_pct
        declared = native["degenerate"] is not None
        # a signal declared for skipping Table XII's own clauses does not count whether or not a probe met it
        structural = declared and bool(native.get("skips_clauses"))
        out[task] = {"has_native": native["signal"], "max_native_pct": worst, "degenerate": measured,
                     "declared_degenerate": declared,
                     "agrees": (not native["signal"]) or worst is None or measured == declared or structural}
    return out


def native_cell(row: dict[str, Any], native: dict[str, Any]) -> str:
    """A row's native-signal cell: the % of episodes that raised it and whether it counts."""
    if not native["signal"]:
        return "— (none)"
    return f"{row['sr_native_pct']:.0f} ({'counts' if native['counts'] else 'not counted: degenerate'})"


def progress_cell(row: dict[str, Any]) -> str:
    """A row's gait progress cell (medians: steps · distance · forward speed) for a walking task
    (:data:`mskbench.catalog.WALKING`); empty for the others."""
    from mskbench.catalog import task_ids

    if row["task"] not in task_ids(walking=True):
        return ""
    return progress_text(row.get("progress") or progress_medians([]))


def markdown(table: dict[str, Any]) -> str:
    """The table in Markdown (one row per task and policy, in the table's order)."""
    lines = ["| task | policy | episodes | SR Table XII % | native signal seen % | SR paper rule % | "
             "fell after success % | length median (min–max) | return mean ± sd (min–max) | "
             "steps · distance · forward speed (medians; walking tasks) | terminations |",
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in table["rows"]:
        terms = ", ".join(f"{k} {v}" for k, v in r["terminations"].items())
        fell = r.get("fell_after_success_pct")
        lines.append(
            f"| {r['task']} | {r['policy']} | {r['episodes']} | {r['sr_table_xii_pct']:.0f} | "
            f"{native_cell(r, table['native'][r['task']])} | {r['sr_paper_pct']:.0f} | "
            f"{'—' if fell is None else f'{fell:.0f}'} | "
            f"{r['length_median']:g} ({r['length_min']}–{r['length_max']}) | "
            f"{r['return_mean']:.1f} ± {r['return_std']:.1f} ({r['return_min']:.1f}–{r['return_max']:.1f}) | "
            f"{progress_cell(r)} | {terms} |")
    return "\n".join(lines) + "\n"

"""Which native "solved" signals measure nothing on this body: how often the zero, passive and random
policies meet each task's native signal and its Table XII criterion.

Every task of the suite (or ``--tasks``) is rolled out with the three built-in
policies (``zero``: every muscle at 0.5; ``passive``: no excitation; ``random``:
uniform actions) for ``--episodes`` episodes each (seeds 0, 1, ...), through
the evaluation protocol (:func:`mskbench.eval.executors.run_units`, local
workers), into a results store, so an interrupted run resumes where it
stopped. The report gives, per task and policy, the percentage of episodes in
which the native solved flag was raised at any step and the percentage that
met the Table XII criterion, the mean episode length, and the verdict: a native
signal met by any of the three policies in at least ``--threshold`` % of its
episodes is *degenerate* (it cannot tell a learned controller from no
controller), and ``Task.native_degenerate`` should say so.

    python benchmarks/native_degeneracy.py --episodes 50 --workers 2 --store degeneracy.db --json out.json
"""

from __future__ import annotations

import argparse
import json
import time
from collections import defaultdict

POLICIES = ("zero", "passive", "random")


def measure(tasks: list[str], episodes: int, workers: int, store_path: str) -> dict:
    from mskbench.eval.executors import JobSpec, run_units
    from mskbench.eval.protocol import eval_units
    from mskbench.eval.store import ResultsStore

    with ResultsStore(store_path) as store:
        for policy in POLICIES:
            t0 = time.perf_counter()
            counts = run_units(store, eval_units(policy, tasks, 0, episodes), JobSpec(policy), workers=workers)
            print(f"{policy}: {counts} in {time.perf_counter() - t0:.0f} s", flush=True)
        records = [r for r in store.records() if r["task"] in tasks and r["method"] in POLICIES
                   and r["perturbation"] == "none" and r["seed"] < episodes]
    groups: dict[tuple[str, str], list[dict]] = defaultdict(list)
    for r in records:
        groups[(r["task"], r["method"])].append(r)
    out: dict = {}
    for (task, policy), rs in sorted(groups.items()):
        out.setdefault(task, {})[policy] = {
            "episodes": len(rs),
            "native_seen_pct": 100.0 * sum(bool(r["solved_native_seen"]) for r in rs) / len(rs),
            "table_xii_pct": 100.0 * sum(bool(r["success_table_xii"]) for r in rs) / len(rs),
            "length_mean": sum(r["length"] for r in rs) / len(rs),
        }
    return out


def verdicts(results: dict, threshold: float) -> dict[str, dict]:
    from mskbench.tasks import REGISTRY

    out = {}
    for task, per_policy in results.items():
        cls = REGISTRY[task]
        worst = max(p["native_seen_pct"] for p in per_policy.values())
        out[task] = {"has_native": cls.native_solved is not None,
                     "degenerate": cls.native_solved is not None and worst >= threshold,
                     "max_native_pct": worst, "declared_degenerate": cls.native_degenerate is not None}
    return out


def main() -> None:
    from mskbench.catalog import suite_ids, task_id

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", default="all", help="comma-separated task ids, or 'all' (the 22 suite tasks)")
    parser.add_argument("--episodes", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--store", default="native_degeneracy.db")
    parser.add_argument("--threshold", type=float, default=1.0,
                        help="native-seen %% from which a no-controller policy makes the signal degenerate")
    parser.add_argument("--json", dest="json_path", default=None)
    args = parser.parse_args()
    tasks = suite_ids() if args.tasks == "all" else [task_id(t) for t in args.tasks.split(",")]
    results = measure(tasks, args.episodes, args.workers, args.store)
    verdict = verdicts(results, args.threshold)
    print(f"{'task':15s} " + " ".join(f"{p + ' native/XII %':>22s}" for p in POLICIES) + "  verdict")
    for task in tasks:
        cells = []
        for p in POLICIES:
            r = results.get(task, {}).get(p)
            cells.append(f"{r['native_seen_pct']:6.0f} / {r['table_xii_pct']:3.0f} ({r['length_mean']:5.0f})"
                         if r else f"{'—':>22s}")
        v = verdict.get(task, {})
        word = ("no native signal" if not v.get("has_native") else
                "DEGENERATE" if v.get("degenerate") else "counts")
        if v.get("has_native") and v.get("degenerate") != v.get("declared_degenerate"):
            word += " (the task's native_degenerate disagrees)"
        print(f"{task:15s} " + " ".join(f"{c:>22s}" for c in cells) + f"  {word}")
    if args.json_path:
        with open(args.json_path, "w") as f:
            json.dump({"episodes": args.episodes, "threshold_pct": args.threshold, "results": results,
                       "verdicts": verdict}, f, indent=2)


if __name__ == "__main__":
    main()

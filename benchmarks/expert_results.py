"""The expert's train-environment results beside the paper's best method on each task it serves.

Reads the expert's (and, when stored, the hold probe's) train-environment episodes from a results store
(``mskbench eval --policy expert --episodes 50 --store STORE``) and the paper's Tables XIII-XV (shipped
with the package), and prints a Markdown table per task: the expert's success rate (the paper's rule),
its activation cost (Eq. 7) and log smoothness (Eq. 10) averaged over episodes, the median episode
length and the termination reasons; beside it the paper's method with the highest train SR on that task
(ties: the lower activation cost) with its SR, activation cost and smoothness. ``--json`` writes the rows.

    python benchmarks/expert_results.py --store results.db --json docs/expert_results.json

``--policy NAME`` (repeatable) names one method whose name holds a comma.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from collections import Counter

from mskbench.control import EXPERT_BEHAVIOURS
from mskbench.eval.published import best_published
from mskbench.eval.store import ResultsStore


def rows_of(store_path: str, policy: str, tasks, seed: int, episodes: int) -> list[dict]:
    seeds = set(range(seed, seed + episodes))
    out = []
    with ResultsStore(store_path) as store:
        records = [r for r in store.records(method=policy, perturbation="none") if int(r["seed"]) in seeds]
    for task in tasks:
        recs = [r for r in records if r["task"] == task]
        if not recs:
            continue
        costs = [r["activation_cost"] for r in recs if r["activation_cost"] is not None]
        smooth = [r["smoothness"] for r in recs if r["smoothness"] is not None]
        out.append({
            "task": task, "policy": policy, "episodes": len(recs),
            "sr_pct": 100.0 * sum(bool(r["success"]) for r in recs) / len(recs),
            "activation_cost": statistics.fmean(costs) if costs else None,
            "log_smoothness": statistics.fmean(smooth) if smooth else None,
            "length_median": statistics.median(int(r["length"]) for r in recs),
            "terminations": dict(Counter(r["termination"] for r in recs).most_common()),
            "paper_best": best_published(task),
        })
    return out


def markdown(rows: list[dict]) -> str:
    def f(x, spec):
        return "—" if x is None else format(x, spec)

    lines = ["| task | policy | SR % | act. cost | log jerk | median length | ends | paper's best: method, SR %, act. cost, log jerk |",
             "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        p = r["paper_best"] or {}
        ends = ", ".join(f"{k} {v}" for k, v in r["terminations"].items())
        lines.append(f"| {r['task']} | {r['policy']} | {r['sr_pct']:.0f} | {f(r['activation_cost'], '.4f')} | "
                     f"{f(r['log_smoothness'], '.2f')} | {r['length_median']:.0f} | {ends} | "
                     f"{p.get('method', '—')}, {f(p.get('sr_pct'), '.0f')}, {f(p.get('activation_cost'), '.4f')}, "
                     f"{f(p.get('log_smoothness'), '.2f')} |")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--store", required=True)
    parser.add_argument("--tasks", default=",".join(EXPERT_BEHAVIOURS))
    parser.add_argument("--policies", default="expert,hold", help="method names, comma-separated")
    parser.add_argument("--policy", action="append", default=[],
                        help="one method name, commas allowed (repeatable; replaces --policies)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--episodes", type=int, default=50)
    parser.add_argument("--json", default=None)
    args = parser.parse_args()
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    policies = args.policy or [p.strip() for p in args.policies.split(",") if p.strip()]
    rows = [row for task in tasks for p in policies for row in rows_of(args.store, p, [task], args.seed, args.episodes)]
    found = {r["policy"] for r in rows}
    for p in policies:
        if p not in found:
            print(f"note: no episodes of {p!r} on {', '.join(tasks)} in {args.store}", file=sys.stderr)
    print(markdown(rows))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"store": args.store, "seed": args.seed, "episodes": args.episodes, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()

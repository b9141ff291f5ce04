"""Which native "solved" signals measure nothing on this body: how often the zero, passive and random
policies meet each task's native signal and its Table XII criterion.

The measurement is the calibration's (:mod:`mskbench.eval.calibration`, ``mskbench calibrate``): every task
of the suite (or ``--tasks``) rolled out with the three built-in policies (``zero``: every muscle at 0.5;
``passive``: no excitation; ``random``: uniform actions) for ``--episodes`` episodes each (seeds 0, 1, ...)
through the evaluation protocol into a results store, so an interrupted run resumes where it stopped (and a
store ``mskbench calibrate`` filled serves both). This script prints, per task and policy, the percentage
of episodes in which the native solved flag was raised at any step and the percentage that met the Table XII
criterion, the mean episode length, and the verdict (:func:`mskbench.eval.calibration.native_verdicts`): a
native signal met by any of the three policies in at least ``--threshold`` % of its episodes is
*degenerate* (it cannot tell a learned controller from no controller), and ``Task.native_degenerate``
should say so.

    python benchmarks/native_degeneracy.py --episodes 50 --workers 2 --store degeneracy.db --json out.json
"""

from __future__ import annotations

import argparse
import json
import time


def main() -> None:
    from mskbench.catalog import suite_ids, task_id
    from mskbench.eval import calibration as cal
    from mskbench.eval.store import ResultsStore

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", default="all", help="comma-separated task ids, or 'all' (the 22 suite tasks)")
    parser.add_argument("--episodes", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--store", default="native_degeneracy.db")
    parser.add_argument("--threshold", type=float, default=cal.DEGENERACY_THRESHOLD_PCT,
                        help="native-seen %% from which a no-controller policy makes the signal degenerate")
    parser.add_argument("--json", dest="json_path", default=None)
    args = parser.parse_args()
    try:
        tasks = suite_ids() if args.tasks == "all" else [task_id(t) for t in args.tasks.split(",")]
    except ValueError as exc:
        parser.error(str(exc))
    policies = cal.TRIVIAL_POLICIES
    with ResultsStore(args.store) as store:
        t0 = time.perf_counter()
        counts = cal.run_calibration(store, policies, tasks, 0, args.episodes, workers=args.workers)
        print(f"{counts} in {time.perf_counter() - t0:.0f} s", flush=True)
        table = cal.calibration_table(store, policies, tasks, 0, args.episodes)
    verdict = cal.native_verdicts(table, args.threshold)
    rows = {(r["task"], r["policy"]): r for r in table["rows"]}
    print(f"{'task':15s} " + " ".join(f"{p + ' native/XII %':>22s}" for p in policies) + "  verdict")
    for task in tasks:
        cells = []
        for p in policies:
            r = rows.get((task, p))
            cells.append(f"{r['sr_native_pct']:6.0f} / {r['sr_table_xii_pct']:3.0f} ({r['length_median']:5.0f})"
                         if r else f"{'—':>22s}")
        v = verdict[task]
        word = ("no native signal" if not v["has_native"] else
                "DEGENERATE" if v["degenerate"] else "counts")
        if not v["agrees"]:
            word += " (the task's native_degenerate disagrees)"
        print(f"{task:15s} " + " ".join(f"{c:>22s}" for c in cells) + f"  {word}")
    print("(cells: % of episodes that raised the native flag / met Table XII (median length))")
    if args.json_path:
        with open(args.json_path, "w") as f:
            json.dump({"episodes": args.episodes, "threshold_pct": args.threshold, "table": table,
                       "verdicts": verdict}, f, indent=2)


if __name__ == "__main__":
    main()

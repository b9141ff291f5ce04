"""Local executor: wall time of the same evaluation units on 1 vs N worker processes.

Each run writes into a fresh results store; the records of both runs are
checked to be identical (up to wall time), so the speed-up is for the same work.
Worker start-up (process spawn, model compile) is included: it is part of
what a user waits for.

    python benchmarks/executor_speedup.py --task Walk --episodes 8 --workers 2
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

from mskbench.eval.executors import JobSpec, run_units  # noqa: E402
from mskbench.eval.protocol import sweep_units  # noqa: E402
from mskbench.eval.store import ResultsStore  # noqa: E402


def timed_run(units, workers: int, policy: str, folder: Path) -> tuple[float, list[dict]]:
    with ResultsStore(folder / f"w{workers}.db") as store:
        t0 = time.perf_counter()
        run_units(store, units, JobSpec(policy), workers=workers)
        wall = time.perf_counter() - t0
        records = [{k: v for k, v in r.items() if k not in ("wall_time_s", "created_at")}
                   for r in store.records()]
    return wall, records


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--task", default="Walk")
    p.add_argument("--policy", default="random")
    p.add_argument("--types", default="action,dynamics")
    p.add_argument("--episodes", type=int, default=4, help="episodes per (type, scale)")
    p.add_argument("--workers", type=int, default=2)
    args = p.parse_args()
    units = sweep_units(args.policy, [args.task], 0, args.episodes, args.types.split(","))
    with tempfile.TemporaryDirectory() as tmp:
        t1, r1 = timed_run(units, 1, args.policy, Path(tmp))
        tn, rn = timed_run(units, args.workers, args.policy, Path(tmp))
    steps = sum(r["length"] for r in r1)
    print(json.dumps({
        "task": args.task, "units": len(units), "control_steps": steps, "cpus": os.cpu_count(),
        "wall_1_worker_s": round(t1, 2), f"wall_{args.workers}_workers_s": round(tn, 2),
        "speedup": round(t1 / tn, 3), "identical_records": r1 == rn,
    }))


if __name__ == "__main__":
    main()

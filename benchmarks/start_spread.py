"""The spread of the zero policy's episodes over seeds on the tasks whose start used to be fixed.

Until the starts were drawn as the paper and the original say (:mod:`mskbench.tasks.starts`), Stand,
Powerlift, Balance, Squat, StepStones, Slide and ChinUp started every episode from one state and
OpenDoor and PoleWalk only shifted the root, so a deterministic policy replayed one episode for every
seed. This script rolls out the zero policy (action 0: every muscle excited at 0.5) in the CPU
environment for ``--episodes`` seeds (0, 1, ...) per task and prints, per task, the minimum, median,
maximum and standard deviation of the episode returns and lengths, how many distinct returns there
were, the success count by the paper's rule (Table XII, or a counted native solved signal seen:
:func:`mskbench.tasks.base.paper_success`) and the termination reasons; ``--json`` writes every
episode's numbers too.

    nice -n 5 python benchmarks/start_spread.py --episodes 50 --workers 2 --json docs/start_spread.json
"""

from __future__ import annotations

import argparse
import json
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor

import numpy as np

TASKS = ("Stand", "Powerlift", "Balance", "Squat", "StepStones", "Slide", "ChinUp", "OpenDoor", "PoleWalk")

_ENVS: dict = {}


def episode(task: str, seed: int) -> dict:
    """One zero-policy episode of ``task`` from ``seed``: its return, length, success and end."""
    from mskbench.envs import MSKEnv
    from mskbench.tasks.base import paper_success

    env = _ENVS.get(task)
    if env is None:
        env = _ENVS[task] = MSKEnv(task)
    env.reset(seed=seed)
    action = np.zeros(env.n_muscles, np.float32)
    total, steps, info = 0.0, 0, {}
    while True:
        _, reward, terminated, truncated, info = env.step(action)
        total += float(reward)
        steps += 1
        if terminated or truncated:
            break
    table_xii, native = bool(info["success"]), bool(info["solved_native_seen"])
    return {"task": task, "seed": seed, "return": total, "length": steps, "success_table_xii": table_xii,
            "native_seen": native, "success": paper_success(env.task, table_xii, native),
            "end": str(info["termination"])}


def _stats(values) -> dict:
    v = np.asarray(values, dtype=float)
    return {"min": float(v.min()), "median": float(np.median(v)), "max": float(v.max()), "std": float(v.std())}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", default=",".join(TASKS), help=f"comma-separated task ids (default: {','.join(TASKS)})")
    parser.add_argument("--episodes", type=int, default=50, help="seeds 0 .. episodes-1 per task")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--json", dest="json_path", default=None)
    args = parser.parse_args()
    from mskbench.catalog import task_id

    try:
        tasks = [task_id(t) for t in args.tasks.split(",")]
    except ValueError as exc:
        parser.error(str(exc))
    if args.episodes < 1 or args.workers < 1:
        parser.error("--episodes and --workers must be at least 1")
    jobs = [(t, s) for t in tasks for s in range(args.episodes)]
    t0 = time.perf_counter()
    if args.workers == 1:
        results = [episode(t, s) for t, s in jobs]
    else:
        with ProcessPoolExecutor(args.workers) as pool:
            results = list(pool.map(episode, *zip(*jobs), chunksize=max(1, args.episodes // 2)))
    elapsed = time.perf_counter() - t0

    rows = []
    for task in tasks:
        eps = sorted((r for r in results if r["task"] == task), key=lambda r: r["seed"])
        returns, lengths = [r["return"] for r in eps], [r["length"] for r in eps]
        rows.append({"task": task, "episodes": len(eps), "return": _stats(returns), "length": _stats(lengths),
                     "distinct_returns": len({round(x, 9) for x in returns}),
                     "successes": sum(r["success"] for r in eps), "ends": dict(Counter(r["end"] for r in eps)),
                     "per_episode": [{k: r[k] for k in ("seed", "return", "length", "success", "success_table_xii",
                                                        "native_seen", "end")} for r in eps]})

    print(f"zero policy, seeds 0-{args.episodes - 1}, {elapsed:.0f} s")
    print(f"{'task':11s} {'return min':>11s} {'median':>10s} {'max':>10s} {'std':>9s} {'distinct':>8s}   "
          f"{'length min':>10s} {'median':>7s} {'max':>5s} {'std':>7s}  {'success':>7s}  ends")
    for r in rows:
        R, L = r["return"], r["length"]
        ends = ", ".join(f"{k} {v}" for k, v in sorted(r["ends"].items(), key=lambda kv: -kv[1]))
        print(f"{r['task']:11s} {R['min']:11.1f} {R['median']:10.1f} {R['max']:10.1f} {R['std']:9.1f} "
              f"{r['distinct_returns']:8d}   {L['min']:10.0f} {L['median']:7.0f} {L['max']:5.0f} {L['std']:7.1f}  "
              f"{r['successes']:3d}/{r['episodes']:<3d}  {ends}")
    if args.json_path:
        with open(args.json_path, "w") as f:
            tasks = "" if args.tasks == ",".join(TASKS) else f" --tasks {args.tasks}"
            json.dump({"command": f"python benchmarks/start_spread.py{tasks} --episodes {args.episodes}",
                       "policy": "zero (action 0: every muscle excited at 0.5)", "seeds": list(range(args.episodes)),
                       "rows": rows}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()

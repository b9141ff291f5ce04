"""Where an episode goes: the pelvis height over time, the step of the first success flag, and the end.

For each policy (anything ``mskbench eval --policy`` takes: a built-in name such as ``expert``, a run
directory, a ``.npz`` checkpoint) and each seed: one episode of ``--task`` in the CPU environment (the
train environment, the seed's own start). Prints per episode its length and end, the control step at
which ``info["success"]`` was first raised (None: never), the pelvis's lowest height and its step, the
highest height after it, and the height every ``--every`` control steps. ``--json`` writes the rows.

    python benchmarks/episode_trace.py --task Squat --policies expert,bc_squat --seeds 0,1,2 \\
        --json docs/distillation/squat_trace.json
"""

from __future__ import annotations

import argparse
import json

import numpy as np


def trace(task: str, policy: str, seed: int, every: int) -> dict:
    from mskbench.envs import MSKEnv
    from mskbench.eval.protocol import load_policy

    env = MSKEnv(task)
    pol = load_policy(policy, env, seed)
    obs, _ = env.reset(seed=seed)
    if hasattr(pol, "reset"):
        pol.reset()
    heights, first_success, info, steps = [], None, {}, 0
    done = False
    while not done:
        obs, _, terminated, truncated, info = env.step(pol.act(obs))
        steps += 1
        heights.append(float(env.data.body("pelvis").xpos[2]))
        if info.get("success") and first_success is None:
            first_success = steps
        done = terminated or truncated
    z = np.array(heights)
    low = int(z.argmin())
    return {"task": task, "policy": policy, "seed": seed, "length": steps, "end": info.get("termination"),
            "first_success": first_success, "pelvis_min_m": round(float(z[low]), 3), "pelvis_min_step": low + 1,
            "pelvis_max_after_min_m": round(float(z[low:].max()), 3),
            "every": every, "pelvis_m": [round(float(h), 3) for h in z[every - 1::every]]}


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", required=True)
    ap.add_argument("--policies", required=True, help="comma-separated policy specs (as mskbench eval --policy)")
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--every", type=int, default=50, help="record the pelvis height every this many control steps")
    ap.add_argument("--json", help="write the rows to this file")
    args = ap.parse_args(argv)
    if args.every < 1:
        ap.error(f"--every must be >= 1, got {args.every}")
    rows = []
    for policy in args.policies.split(","):
        for seed in (int(s) for s in args.seeds.split(",")):
            try:
                r = trace(args.task, policy, seed, args.every)
            except (ValueError, FileNotFoundError) as e:  # an unknown task or policy: one line naming the choices
                ap.error(str(e))
            rows.append(r)
            print(f"{policy} seed {seed}: {r['length']} steps, end {r['end']}, first success {r['first_success']}, "
                  f"pelvis min {r['pelvis_min_m']} m at {r['pelvis_min_step']}, max after {r['pelvis_max_after_min_m']}; "
                  f"every {args.every}: " + " ".join(f"{h:.2f}" for h in r["pelvis_m"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return rows


if __name__ == "__main__":
    main()

"""Where an episode goes: the pelvis height over time, the step of the first success flag, and the end.

For each policy (anything ``mskbench eval --policy`` takes: a built-in name such as ``expert``, a run
directory, a ``.npz`` checkpoint) and each seed: one episode of ``--task`` in the CPU environment (the
package's episode loop, :func:`mskbench.eval.episodes.play_episode`; the train environment, the seed's own
start). Prints per episode its length and end, the control step at
which ``info["success"]`` was first raised (None: never), the pelvis's lowest height and its step, the
highest height after it, and the height every ``--every`` control steps. ``--json`` writes the rows.

    python benchmarks/episode_trace.py --task Squat --policies expert,bc_squat --seeds 0,1,2 \\
        --json docs/distillation/squat_nogate_trace.json
"""

from __future__ import annotations

import argparse
import json

import numpy as np


def trace(task: str, policy: str, seed: int, every: int) -> dict:
    from mskbench.envs import MSKEnv
    from mskbench.eval.episodes import native_ends, play_episode
    from mskbench.eval.protocol import load_policy

    env = MSKEnv(task)
    heights: list[float] = []
    first_success: list[int] = []

    def record(env, step) -> None:  # after every step: the pelvis height and the first success flag
        if step is None:
            return
        heights.append(float(env.data.body("pelvis").xpos[2]))
        if step.info.get("success") and not first_success:
            first_success.append(step.index)

    played = play_episode(env, load_policy(policy, env, seed), seed, record, ends_on_native=native_ends(env.task))
    z = np.array(heights)
    low = int(z.argmin())
    return {"task": task, "policy": policy, "seed": seed, "length": played.steps, "end": played.termination,
            "first_success": first_success[0] if first_success else None,
            "pelvis_min_m": round(float(z[low]), 3), "pelvis_min_step": low + 1,
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

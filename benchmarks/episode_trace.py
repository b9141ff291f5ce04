"""Where an episode goes: the pelvis height (or another body's) over time, the step of the first success flag, and
the end.

For each policy (anything ``mskbench eval --policy`` takes: a built-in name such as ``expert``, a run
directory, a ``.npz`` checkpoint) and each seed: one episode of ``--task`` in the CPU environment (the
package's episode loop, :func:`mskbench.eval.episodes.play_episode`; the train environment, the seed's own
start). Prints per episode its length and end, the control step at
which ``info["success"]`` was first raised (None: never), the pelvis's lowest height and its step, the
highest height after it, its highest height and its step, and the height every ``--every`` control steps.
``--body`` traces another body (a role of the body such as ``head``, or a body name of the model) instead; the
keys of the rows then start with its name. ``--json`` writes the rows.

    python benchmarks/episode_trace.py --task Squat --policies expert,bc_squat --seeds 0,1,2 \\
        --json docs/distillation/squat_nogate_trace.json
    python benchmarks/episode_trace.py --task ChinUp --policies expert --seeds 0,1,2 --body head --every 25
"""

from __future__ import annotations

import argparse
import json

import numpy as np


def trace(task: str, policy: str, seed: int, every: int, body: str = "pelvis") -> dict:
    import mujoco

    from mskbench.envs import MSKEnv
    from mskbench.eval.episodes import native_ends, play_episode
    from mskbench.eval.protocol import load_policy

    env = MSKEnv(task)
    roles = env.handles.bodies
    bid = int(roles[body]) if body in roles else mujoco.mj_name2id(env.model, mujoco.mjtObj.mjOBJ_BODY, body)
    if bid < 0:
        raise ValueError(f"--body {body!r} is neither a role ({', '.join(roles)}) nor a body of the {task} model")
    heights: list[float] = []
    first_success: list[int] = []

    def record(env, step) -> None:  # after every step: the body's height and the first success flag
        if step is None:
            return
        heights.append(float(env.data.xpos[bid][2]))
        if step.info.get("success") and not first_success:
            first_success.append(step.index)

    played = play_episode(env, load_policy(policy, env, seed), seed, record, ends_on_native=native_ends(env.task))
    z = np.array(heights)
    low, high = int(z.argmin()), int(z.argmax())
    return {"task": task, "policy": policy, "seed": seed, "length": played.steps, "end": played.termination,
            "first_success": first_success[0] if first_success else None,
            f"{body}_min_m": round(float(z[low]), 3), f"{body}_min_step": low + 1,
            f"{body}_max_after_min_m": round(float(z[low:].max()), 3),
            f"{body}_max_m": round(float(z[high]), 3), f"{body}_max_step": high + 1,
            "every": every, f"{body}_m": [round(float(h), 3) for h in z[every - 1::every]]}


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", required=True)
    ap.add_argument("--policies", required=True, help="comma-separated policy specs (as mskbench eval --policy)")
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--every", type=int, default=50, help="record the height every this many control steps")
    ap.add_argument("--body", default="pelvis", help="the body traced: a role (pelvis, head, ...) or a body name")
    ap.add_argument("--json", help="write the rows to this file")
    args = ap.parse_args(argv)
    if args.every < 1:
        ap.error(f"--every must be >= 1, got {args.every}")
    rows = []
    for policy in args.policies.split(","):
        for seed in (int(s) for s in args.seeds.split(",")):
            try:
                r = trace(args.task, policy, seed, args.every, args.body)
            except (ValueError, FileNotFoundError) as e:  # an unknown task or policy: one line naming the choices
                ap.error(str(e))
            rows.append(r)
            b = args.body
            print(f"{policy} seed {seed}: {r['length']} steps, end {r['end']}, first success {r['first_success']}, "
                  f"{b} min {r[b + '_min_m']} m at {r[b + '_min_step']}, max after {r[b + '_max_after_min_m']}, "
                  f"max {r[b + '_max_m']} m at {r[b + '_max_step']}; every {args.every}: "
                  + " ".join(f"{h:.2f}" for h in r[b + "_m"]))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return rows


if __name__ == "__main__":
    main()

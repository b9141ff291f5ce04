"""The expert's catches, one line per episode: where the cube met the hands and how it ended.

For each seed, one Catch episode of the expert (the train environment, the seed's own throw) in the package's
episode loop: the control step at which the cube came within the behaviour's catch radius of the hands'
midpoint, whether the task's catch flag rose (both hands within 0.15 m of a cube slower than 0.5 m/s for
10 steps), the control step at which a caught cube left the hands (further than that radius again) with its
position relative to the hands' midpoint and its velocity then, and how the episode ended. ``--json`` writes the rows.

    python benchmarks/catch_trace.py --seeds 0,1,5,8,11 --json docs/catch_trace.json
"""

from __future__ import annotations

import argparse
import json

import numpy as np


def trace(seed: int) -> dict:
    from mskbench.control import make_controller
    from mskbench.envs import MSKEnv
    from mskbench.eval.episodes import play_episode

    env = MSKEnv("Catch")
    policy = make_controller("expert", env)
    beh, task = policy.behaviour, env.task
    left: dict = {}

    def rec(e, step):
        d = e.data
        cube = d.qpos[task.cube_qpos:task.cube_qpos + 3]
        middle = 0.5 * (d.xpos[beh.hands[0]] + d.xpos[beh.hands[1]])
        if (step is not None and beh.caught_at is not None and not left
                and np.linalg.norm(cube - middle) > beh.caught_m):
            left.update(control_step=step.index, offset=[float(v) for v in cube - middle],
                        velocity=[float(v) for v in d.qvel[task.cube_dof:task.cube_dof + 3]])

    played = play_episode(env, policy, seed, rec)
    row = {"seed": seed, "control_steps": played.steps, "termination": played.termination,
           "success": bool(played.info.get("success", False)), "caught_at": beh.caught_at,
           "catch_flag": bool(env.task_state["caught"]), "left_hands_at": left.get("control_step"),
           "cube_from_hands_m": left.get("offset"), "cube_velocity_mps": left.get("velocity")}
    env.close()
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seeds", default="0,1,5,8,11", help="comma-separated seeds")
    ap.add_argument("--json", default=None, help="write the rows here")
    args = ap.parse_args()
    rows = [trace(int(s)) for s in args.seeds.split(",")]
    for r in rows:
        off = np.round(r["cube_from_hands_m"] or [np.nan] * 3, 2).tolist()
        vel = np.round(r["cube_velocity_mps"] or [np.nan] * 3, 2).tolist()
        print(f"seed {r['seed']}: {r['control_steps']} control steps, {r['termination']}, success {r['success']}; "
              f"met the hands at control step {r['caught_at']}, catch flag {r['catch_flag']}; left them at "
              f"{r['left_hands_at']}: {off} m from their midpoint, moving {vel} m/s")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"task": "Catch", "policy": "expert", "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()

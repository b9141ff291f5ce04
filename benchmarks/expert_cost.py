"""The expert's cost per control step against the raw physics of that same step, measured in one run.

For each task, the expert (or ``--policy hold``) runs one episode (at most ``--steps`` control steps). At
every step three wall-clock times are taken on the same process:

* ``controller``: ``policy.act(obs)`` — loading the state into the controller's model, the task
  behaviour, the QP (assembly and PIQP) and the excitation inversion;
* ``physics``: MuJoCo's ``mj_step`` for the control step's physics steps, from the same state with the
  same controls, on a scratch copy of the data (the raw physics, nothing of the environment around it);
* ``env_step``: the environment's whole ``step`` (physics, task signals, observation).

Run it pinned to one core for the figures the docs quote (``taskset -c 1 python benchmarks/expert_cost.py``);
it prints a table and, with ``--json``, writes the raw per-task medians and percentiles.
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import mujoco
import numpy as np

from mskbench.control import EXPERT_BEHAVIOURS, make_controller, serves
from mskbench.envs import MSKEnv
from mskbench.envs.action_map import excitation


def measure(task: str, policy_name: str, steps: int, seed: int) -> dict:
    env = MSKEnv(task)
    policy = make_controller(policy_name, env)
    scratch = mujoco.MjData(env.model)
    obs, _ = env.reset(seed=seed)
    policy.reset(seed)
    ctrl_t, phys_t, env_t = [], [], []
    qp_t = []
    n = 0
    for n in range(1, steps + 1):
        t0 = time.perf_counter()
        action = policy.act(obs)
        t1 = time.perf_counter()
        # the raw physics of this very step, on a scratch copy of the state
        mujoco.mj_copyData(scratch, env.model, env.data)
        scratch.ctrl[:] = excitation(np.clip(action, -1.0, 1.0), env.action_map, np)
        t2 = time.perf_counter()
        mujoco.mj_step(env.model, scratch, nstep=env.sim.frame_skip)
        t3 = time.perf_counter()
        obs, _, terminated, truncated, _ = env.step(action)
        t4 = time.perf_counter()
        ctrl_t.append(t1 - t0)
        phys_t.append(t3 - t2)
        env_t.append(t4 - t3)
        qp_t.append(policy.last.status)
        if terminated or truncated:
            break
    env.close()
    c, p, e = (np.array(x) * 1e3 for x in (ctrl_t, phys_t, env_t))
    return {
        "task": task, "policy": policy_name, "steps": n, "physics_steps_per_control_step": env.sim.frame_skip,
        "controller_ms_median": float(np.median(c)), "controller_ms_p90": float(np.percentile(c, 90)),
        "physics_ms_median": float(np.median(p)), "env_step_ms_median": float(np.median(e)),
        "ratio_controller_to_physics": float(np.median(c) / np.median(p)),
        "ratio_total_to_physics": float((np.median(c) + np.median(e)) / np.median(p)),
        "solved_pct": 100.0 * float(np.mean([s == "PIQP_SOLVED" for s in qp_t])),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", default=",".join(EXPERT_BEHAVIOURS), help="comma-separated task ids")
    parser.add_argument("--policy", default="expert", choices=("expert", "hold"))
    parser.add_argument("--steps", type=int, default=300, help="control steps per task (at most one episode)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="write the rows as JSON here")
    args = parser.parse_args()
    if args.steps < 1:
        parser.error(f"--steps must be at least 1, got {args.steps}")
    tasks = [t.strip() for t in args.tasks.split(",") if t.strip()]
    try:
        unserved = [t for t in tasks if not serves(args.policy, t)]
    except ValueError as err:  # not a task at all
        parser.error(str(err))
    if unserved:
        parser.error(f"the expert has no behaviour for {', '.join(unserved)}; it serves {', '.join(EXPERT_BEHAVIOURS)}")
    rows = [measure(t, args.policy, args.steps, args.seed) for t in tasks]
    header = f"{'task':15s} {'steps':>5s} {'controller ms':>13s} {'physics ms':>10s} {'env.step ms':>11s} " \
             f"{'ctrl/phys':>9s} {'(ctrl+env)/phys':>15s}"
    print(header)
    for r in rows:
        print(f"{r['task']:15s} {r['steps']:5d} {r['controller_ms_median']:13.2f} {r['physics_ms_median']:10.2f} "
              f"{r['env_step_ms_median']:11.2f} {r['ratio_controller_to_physics']:9.2f} "
              f"{r['ratio_total_to_physics']:15.2f}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": platform.processor() or platform.machine(), "python": platform.python_version(),
                       "mujoco": mujoco.__version__, "policy": args.policy, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()

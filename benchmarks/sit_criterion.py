"""What the sit flag's clauses see: Sit and WalkAndSit under the trivial policies, and the seated pose.

``has_sat_down`` (:func:`mskbench.tasks.chair.advance_sit`) is the Table XII criterion of Sit and the sit
flag of WalkAndSit: for 30 consecutive steps the pelvis rests on the seat (``seated``), slower than
0.25 m/s (``slow``), the knees flexed (``knees``: mean knee angle >= ``SIT_KNEE_MIN_RAD``) and both heels at
most ``SIT_FEET_AHEAD_MAX_M`` ahead of the pelvis (``feet``); on Sit the pelvis also never moved down faster
than ``SIT_DESCENT_MAX_MPS`` before (``soft``). This script measures the quantities behind those thresholds:

* the seated pose of :mod:`mskbench.tasks.chair` (hips 1.5, knees 1.6 rad, resting on the seat) and the
  same pose at other knee angles: how far the heels and the knee joints are ahead of the pelvis origin;
* rollouts of built-in policies (``zero``, ``passive``, ``random``; a privileged one such as ``expert`` if
  named) in the CPU environment, seeds 0, 1, ...: per episode its length and end, whether the flag and the
  native signal were raised (and the native's first step), the pelvis's fastest descent, and over the steps
  on which the pelvis rested on the seat slowly the largest mean knee angle and the smallest heel lead; per
  policy, how many episodes would raise the flag if each clause (or pair of them) were dropped.

    nice -n 5 python benchmarks/sit_criterion.py --tasks Sit,WalkAndSit --policies zero,passive,random \\
        --episodes 20 --workers 2 --json docs/sit_criterion.json
"""

from __future__ import annotations

import argparse
import itertools
import json
import time
from concurrent.futures import ProcessPoolExecutor

import mujoco
import numpy as np

CLAUSES = ("knees", "feet", "soft")
_ENVS: dict = {}


def seated_pose_geometry(knees=(0.8, 1.0, 1.2, 1.6, 2.0)) -> list[dict]:
    """The heels' and knee joints' lead over the pelvis origin (+x) with the hips at 1.5 rad, resting on the seat."""
    from mskbench.envs import MSKEnv
    from mskbench.tasks import chair

    env = MSKEnv("Sit")
    env.reset(seed=0)
    ctx = env._ctx
    floor = mujoco.mj_name2id(env.model, mujoco.mjtObj.mjOBJ_GEOM, "floor")
    seat_geoms = [env.model.geom(n).id for n in ("r_pelvis_col", "l_pelvis_col", "r_femur1_col", "l_femur1_col",
                                                  "r_femur2_col", "l_femur2_col")]
    rows = []
    for knee in knees:
        joints = {"hip_flexion_l": 1.5, "hip_flexion_r": 1.5, "knee_angle_l": knee, "knee_angle_r": knee}
        qpos = ctx.pose(joints, root_xy=tuple(chair.SEAT_TARGET[:2]), on_ground=False)
        ctx.forward(qpos)
        low = min(mujoco.mj_geomDistance(env.model, ctx.data, floor, g, 10.0, np.zeros(6)) for g in seat_geoms)
        qpos[2] += chair.SEAT_TOP_M - low
        s = ctx.forward(qpos)
        p = s.pelvis_pos
        rows.append({"hip_rad": 1.5, "knee_rad": knee, "pelvis_z_m": float(p[2]),
                     "heel_lead_m": float(np.max(s.foot_pos[:, 0]) - p[0]),
                     "knee_joint_lead_m": float(max(s.pos("knee_l")[0], s.pos("knee_r")[0]) - p[0]),
                     "heel_height_m": float(np.max(s.foot_heights))})
    env.close()
    return rows


def _flag(steps: list[dict], drop: tuple[str, ...], soft: bool) -> bool:
    """Whether ``has_sat_down`` would be raised with the clauses in ``drop`` left out."""
    from mskbench.tasks import chair

    count = 0
    for c in steps:
        ok = c["seated"] and c["slow"] and all(c[k] for k in CLAUSES if k not in drop and (k != "soft" or soft))
        count = count + 1 if ok else 0
        if count >= chair.SIT_HOLD_STEPS:
            return True
    return False


def episode(task: str, policy: str, seed: int) -> dict:
    """One episode of ``policy`` on ``task`` from ``seed``, with the clauses of the sit flag at every step."""
    from mskbench.eval.protocol import load_policy
    from mskbench.envs import MSKEnv
    from mskbench.tasks import chair

    env = _ENVS.get(task)
    if env is None:
        env = _ENVS[task] = MSKEnv(task)
    obs, _ = env.reset(seed=seed)
    pol = load_policy(policy, env, seed)
    if hasattr(pol, "reset"):
        pol.reset(seed)
    soft = task == "Sit"
    steps, descent, knee_max, heel_min, native_at = [], 0.0, -np.inf, np.inf, None
    n = 0
    while True:
        obs, _, terminated, truncated, info = env.step(pol.act(obs))
        n += 1
        s = env.sim.view()
        v = s.vel("pelvis")
        descent = max(descent, float(-v[2]))
        knee = float(chair.mean_hip_knee(s, np)[1])
        lead = float(np.max(s.foot_pos[:, 0]) - s.pelvis_pos[0])
        c = {"seated": bool(chair.seated(s, np)), "slow": bool(np.linalg.norm(v) < chair.SIT_SPEED_MAX_MPS),
             "knees": bool(chair.knees_flexed(s, np)), "feet": bool(chair.feet_retracted(s, np)),
             "soft": descent <= chair.SIT_DESCENT_MAX_MPS}
        steps.append(c)
        if c["seated"] and c["slow"]:
            knee_max, heel_min = max(knee_max, knee), min(heel_min, lead)
        if native_at is None and bool(info["solved_native"]):
            native_at = n
        if terminated or truncated:
            break
    flag = bool(env.task_state["has_sat_down"])
    assert flag == _flag(steps, (), soft), "the replayed clauses disagree with the task's own flag"
    return {"task": task, "policy": policy, "seed": seed, "length": n, "end": str(info["termination"]),
            "has_sat_down": flag, "success_table_xii": bool(info["success"]), "native_first_step": native_at,
            "max_descent_mps": descent, "seated_slow_steps": sum(c["seated"] and c["slow"] for c in steps),
            "seated_knee_max_rad": None if knee_max == -np.inf else knee_max,
            "seated_heel_lead_min_m": None if heel_min == np.inf else heel_min,
            "flag_without": {"+".join(d): _flag(steps, d, soft)
                             for r in (1, 2, 3) for d in itertools.combinations(CLAUSES, r)
                             if soft or "soft" not in d}}


def _range(values) -> list[float] | None:
    """``[min, max]`` of the values that are not None (None: none are)."""
    v = [x for x in values if x is not None]
    return [min(v), max(v)] if v else None


def _fmt(r) -> str:
    return "-" if r is None else f"{r[0]:.2f} to {r[1]:.2f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", default="Sit,WalkAndSit")
    parser.add_argument("--policies", default="zero,passive,random")
    parser.add_argument("--episodes", type=int, default=20)
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--json", default=None, help="write the pose table and every episode here")
    args = parser.parse_args()
    tasks, pols = args.tasks.split(","), args.policies.split(",")
    t0 = time.time()
    pose = seated_pose_geometry()
    print("seated pose, hips 1.5 rad: knee (rad) | heel lead (m) | knee joint lead (m) | heel height (m)")
    for r in pose:
        print(f"  {r['knee_rad']:.1f} | {r['heel_lead_m']:.3f} | {r['knee_joint_lead_m']:.3f} | {r['heel_height_m']:.3f}")
    jobs = [(t, p, s) for t in tasks for p in pols for s in range(args.episodes)]
    with ProcessPoolExecutor(args.workers) as pool:
        episodes = list(pool.map(episode, *zip(*jobs)))
    rows = []
    print("task | policy | flag | native (first steps) | max descent m/s | seated knee max rad | seated heel lead min m "
          "| flag without each clause | ends")
    for t in tasks:
        for p in pols:
            eps = [e for e in episodes if e["task"] == t and e["policy"] == p]
            nat = [e["native_first_step"] for e in eps if e["native_first_step"] is not None]
            without = {k: sum(e["flag_without"][k] for e in eps) for k in eps[0]["flag_without"]}
            ends: dict = {}
            for e in eps:
                ends[e["end"]] = ends.get(e["end"], 0) + 1
            row = {"task": t, "policy": p, "episodes": len(eps), "has_sat_down": sum(e["has_sat_down"] for e in eps),
                   "native": len(nat), "native_first_steps": [min(nat), max(nat)] if nat else None,
                   "max_descent_mps": _range(e["max_descent_mps"] for e in eps),
                   "seated_knee_max_rad": _range(e["seated_knee_max_rad"] for e in eps),
                   "seated_heel_lead_min_m": _range(e["seated_heel_lead_min_m"] for e in eps),
                   "flag_without": without, "ends": ends}
            rows.append(row)
            print(f"{t} | {p} | {row['has_sat_down']}/{len(eps)} | {len(nat)}/{len(eps)} "
                  f"({row['native_first_steps']}) | {_fmt(row['max_descent_mps'])} | "
                  f"{_fmt(row['seated_knee_max_rad'])} | {_fmt(row['seated_heel_lead_min_m'])} | "
                  f"{', '.join(f'-{k} {v}' for k, v in without.items())} | {ends}")
    print(f"{len(episodes)} episodes in {time.time() - t0:.0f} s")
    if args.json:
        cmd = (f"python benchmarks/sit_criterion.py --tasks {args.tasks} --policies {args.policies} "
               f"--episodes {args.episodes}")
        with open(args.json, "w") as f:
            json.dump({"command": cmd, "seated_pose": pose, "rows": rows, "episodes": episodes}, f, indent=1)


if __name__ == "__main__":
    main()

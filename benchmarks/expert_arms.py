"""How the expert uses its arms: the share of control steps with a hand above its shoulder and the peak angular
momentum of an arm, per episode, on the tasks whose goal does not raise the arms.

For each task and seed, one episode of the expert (the train environment, the package's episode loop). After
every control step: whether either hand (the ``hand_l`` / ``hand_r`` roles) is higher than its shoulder (the
origin of ``humerus_l`` / ``humerus_r``, the shoulder joint's centre), and the angular momentum of each arm
about its own centre of mass (the bodies below :func:`mskbench.control.behaviours.arm_roots`, the clavicles,
kg·m²/s), summed over its bodies of at least :data:`MIN_MASS_KG`: MyoFullBody's shoulder has four massless
"phantom" bodies (1 g) with a rotational inertia of 1 kg·m² each, whose spin would dominate the sum (MuJoCo's
``subtree_angmom`` of a still-standing arm: 1.5 kg·m²/s, 1.2 of it one phantom); an episode whose QP is not solved ends there (its ``termination`` says so).
Per task: the success rate, the mean share of steps with a hand
above the shoulder (over episodes, and over the successful ones alone) and the largest arm angular momentum.
``--set NAME=VALUE`` sets an attribute of the behaviour before each episode (e.g. ``arm_posture_scale=1``
for the behaviour without its arm weight). ``--json`` writes the rows.

    python benchmarks/expert_arms.py --task SingleLegStand --episodes 12 --json arms.json

The default tasks are every task the expert serves but Powerlift, Reach, Squat and ChinUp, whose goals
raise the arms (a bar overhead or on the shoulders, a target in reach, a bar above the head).
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from multiprocessing import Pool

import mujoco
import numpy as np

#: Tasks whose goal raises the arms (left out by default).
RAISE_ARMS = ("Powerlift", "Reach", "Squat", "ChinUp")
SHOULDERS = ("humerus_l", "humerus_r")
#: Bodies lighter than this are left out of an arm's angular momentum (the phantom bodies).
MIN_MASS_KG = 0.01


def arm_bodies(m: mujoco.MjModel, root: int) -> np.ndarray:
    """The bodies of ``root``'s subtree of at least :data:`MIN_MASS_KG`."""
    from mskbench.control.behaviours import subtree

    return np.array([b for b in subtree(m, root) if m.body_mass[b] >= MIN_MASS_KG])


def angular_momentum(m: mujoco.MjModel, d: mujoco.MjData, bodies: np.ndarray) -> float:
    """|L| of ``bodies`` about their common centre of mass (world frame, kg·m²/s)."""
    mass = m.body_mass[bodies]
    com = mass @ d.xipos[bodies] / mass.sum()
    total, vel = np.zeros(3), np.zeros(6)
    for b, mb in zip(bodies, mass):
        mujoco.mj_objectVelocity(m, d, mujoco.mjtObj.mjOBJ_BODY, int(b), vel, 0)  # [angular, linear] at the body's com
        rot = d.ximat[b].reshape(3, 3)
        total += mb * np.cross(d.xipos[b] - com, vel[3:]) + rot @ (m.body_inertia[b] * (rot.T @ vel[:3]))
    return float(np.linalg.norm(total))


def episode(job: tuple[str, int, dict[str, float]]) -> dict:
    from mskbench.control import make_controller
    from mskbench.control.behaviours import arm_roots
    from mskbench.envs import MSKEnv
    from mskbench.eval.episodes import play_episode

    task, seed, sets = job
    env = MSKEnv(task)
    policy = make_controller("expert", env)
    for name, value in sets.items():
        setattr(policy.behaviour, name, value)
    m, d = env.model, env.data
    hands = [env.handles.bodies["hand_l"], env.handles.bodies["hand_r"]]
    shoulders = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, n) for n in SHOULDERS]
    arms = [arm_bodies(m, r) for r in arm_roots(m, *hands)]
    counts = {"steps": 0, "above": 0, "peak": 0.0}

    def rec(e, step):
        if step is None:
            return
        counts["steps"] += 1
        counts["above"] += int(any(d.xpos[h][2] > d.xpos[s][2] for h, s in zip(hands, shoulders)))
        counts["peak"] = max(counts["peak"], *(angular_momentum(m, d, a) for a in arms))

    try:
        played = play_episode(env, policy, seed, rec)
        steps, end, success = played.steps, played.termination, bool(played.info.get("success"))
    except RuntimeError as err:  # the QP not solved: the episode ends there, recorded as such
        steps, end, success = counts["steps"], f"error: {err}", False
    env.close()
    return {"task": task, "seed": seed, "control_steps": steps, "termination": end,
            "success": success, "hand_above_shoulder": counts["above"] / max(counts["steps"], 1),
            "peak_arm_angular_momentum": counts["peak"]}


def summary(rows: list[dict]) -> list[dict]:
    out = []
    for task in dict.fromkeys(r["task"] for r in rows):
        rs = [r for r in rows if r["task"] == task]
        won = [r["hand_above_shoulder"] for r in rs if r["success"]]
        out.append({"task": task, "episodes": len(rs), "sr_pct": 100.0 * sum(r["success"] for r in rs) / len(rs),
                    "hand_above_shoulder": statistics.fmean(r["hand_above_shoulder"] for r in rs),
                    "hand_above_shoulder_successes": statistics.fmean(won) if won else None,
                    "peak_arm_angular_momentum": max(r["peak_arm_angular_momentum"] for r in rs)})
    return out


def parse_sets(items: list[str]) -> dict[str, float]:
    sets = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            sets[name] = float(value)
        except ValueError:
            sep = ""
        if not sep or not name:
            raise SystemExit(f"--set takes NAME=NUMBER, got {item!r}")
    return sets


def check_sets(tasks: list[str], sets: dict[str, float]) -> None:
    """Each ``--set`` name is an attribute of every behaviour it is to set (a misspelt name would set nothing)."""
    from mskbench.control.registry import behaviour_for

    for task in tasks:
        behaviour = behaviour_for("expert", task)
        missing = [n for n in sets if not hasattr(behaviour, n)]
        if missing:
            raise SystemExit(f"the {task} behaviour ({type(behaviour).__name__}) has no attribute "
                             f"{', '.join(missing)}")


def main(argv: list[str] | None = None) -> None:
    from mskbench.control import EXPERT_BEHAVIOURS

    served = [t for t in EXPERT_BEHAVIOURS if t not in RAISE_ARMS]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--task", default=",".join(served), help="comma-separated tasks the expert serves")
    ap.add_argument("--episodes", type=int, default=10, help="episodes per task (seeds SEED, SEED+1, ...)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--set", action="append", default=[], metavar="NAME=VALUE", help="a behaviour attribute")
    ap.add_argument("--json", help="write the episode rows and the per-task summary here")
    args = ap.parse_args(argv)
    tasks = [t.strip() for t in args.task.split(",") if t.strip()]
    unknown = [t for t in tasks if t not in EXPERT_BEHAVIOURS]
    if unknown:
        raise SystemExit(f"the expert does not serve {', '.join(unknown)}; it serves {', '.join(EXPERT_BEHAVIOURS)}")
    if args.episodes < 1 or args.workers < 1:
        raise SystemExit(f"--episodes and --workers must be >= 1, got {args.episodes} and {args.workers}")
    sets = parse_sets(args.set)
    check_sets(tasks, sets)
    jobs = [(t, s, sets) for t in tasks for s in range(args.seed, args.seed + args.episodes)]
    with Pool(min(args.workers, len(jobs))) as pool:
        rows = pool.map(episode, jobs, chunksize=1)
    table = summary(rows)
    print("| task | episodes | SR % | hand above shoulder (share of steps) | in successes | peak arm L (kg·m²/s) |")
    print("|---|---|---|---|---|---|")
    for r in table:
        won = "—" if r["hand_above_shoulder_successes"] is None else f"{r['hand_above_shoulder_successes']:.3f}"
        print(f"| {r['task']} | {r['episodes']} | {r['sr_pct']:.0f} | {r['hand_above_shoulder']:.3f} | {won} | "
              f"{r['peak_arm_angular_momentum']:.2f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": " ".join(sys.argv), "sets": sets, "summary": table, "episodes": rows}, f, indent=1)


if __name__ == "__main__":
    main()

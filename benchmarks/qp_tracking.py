"""How closely the expert's QP plans what its behaviour asks, and how closely the body then does what was planned.

For each seed, one episode of the expert on ``--task`` (the train environment, the seed's own start, the
package's episode loop), for at most ``--steps`` control steps. At every control step it records the
centre-of-mass acceleration the behaviour asked for (``Targets.com_acc``), the one the QP planned (the
centre-of-mass Jacobian times the planned accelerations, the rows the QP's task holds) and the one the body
made over the step (the change of the centre of mass's velocity over the control step), and the share of
the QP's muscles whose planned mean activation sits at a bound of what one step can reach from its current
activation. Printed per seed and axis (x, y, z, world): the rms of asked − planned and of made − planned
(m/s²; their means in brackets) beside the rms of what was asked, and the median share at a bound.
``--json`` writes the rows.

    python benchmarks/qp_tracking.py --task Walk --seeds 5 --steps 300
    python benchmarks/qp_tracking.py --task Stand --seeds 0,1 --steps 300
"""

from __future__ import annotations

import argparse
import json

import mujoco
import numpy as np


def track(task: str, seed: int, steps: int) -> dict:
    from mskbench.control.expert import ExpertPolicy
    from mskbench.control.registry import behaviour_for
    from mskbench.envs import MSKEnv
    from mskbench.eval.episodes import play_episode

    env = MSKEnv(task)
    beh = behaviour_for("expert", task)
    policy = ExpertPolicy(env, beh)
    qp = policy.qp
    root = env.handles.bodies["root"]
    jac = np.zeros((3, env.model.nv))
    asked: list[np.ndarray] = []
    bounds: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []  # per step: the CoM Jacobian, activation bounds
    targets = beh.targets

    def asking(ctx):
        t = targets(ctx)
        asked.append(np.full(3, np.nan) if t.com_acc is None else np.asarray(t.com_acc, float))
        mujoco.mj_jacSubtreeCom(qp.m, qp.d, jac, root)  # at the state the QP plans from
        act = qp.d.act[qp.adr][qp.qp_muscles]
        bounds.append((jac.copy(), qp.mean_activation(act, np.full(act.size, qp.u_min), qp.qp_muscles),
                       qp.mean_activation(act, np.full(act.size, qp.u_max), qp.qp_muscles)))
        return t

    beh.targets = asking  # type: ignore[method-assign]
    rows: list[np.ndarray] = []
    saturated: list[float] = []
    last_vel: list[np.ndarray] = []
    dt = env.sim.control_dt_s

    def com_vel(e) -> np.ndarray:
        mujoco.mj_jacSubtreeCom(e.model, e.data, jac, root)
        return jac @ e.data.qvel

    def rec(e, step):
        vel = com_vel(e)
        if step is not None and last_vel and policy.last is not None and bounds:
            j, lo, hi = bounds[-1]
            planned = j @ policy.last.qacc
            a = policy.last.activation[qp.qp_muscles]
            saturated.append(float(np.mean((a <= lo + 1e-6) | (a >= hi - 1e-6))))
            rows.append(np.concatenate([asked[-1], planned, (vel - last_vel[-1]) / dt]))
        last_vel.append(vel)

    played = play_episode(env, policy, seed, rec, max_steps=steps)
    data = np.array(rows).reshape(-1, 9)
    ok = np.all(np.isfinite(data), axis=1)
    data = data[ok]
    out: dict = {"task": task, "seed": seed, "control_steps": played.steps, "termination": played.termination,
                 "median_share_at_bound": float(np.median(saturated)) if saturated else None, "axes": {}}
    for k, axis in enumerate("xyz"):
        ask, plan, made = data[:, k], data[:, 3 + k], data[:, 6 + k]
        out["axes"][axis] = {
            "rms_asked": float(np.sqrt(np.mean(ask**2))) if len(ask) else None,
            "rms_asked_minus_planned": float(np.sqrt(np.mean((ask - plan) ** 2))) if len(ask) else None,
            "mean_asked_minus_planned": float(np.mean(ask - plan)) if len(ask) else None,
            "rms_made_minus_planned": float(np.sqrt(np.mean((made - plan) ** 2))) if len(ask) else None,
            "mean_made_minus_planned": float(np.mean(made - plan)) if len(ask) else None,
        }
    return out


def main() -> None:
    from mskbench.control import EXPERT_BEHAVIOURS

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", default="Walk", help="a task the expert serves")
    ap.add_argument("--seeds", default="0", help="comma-separated seeds")
    ap.add_argument("--steps", type=int, default=300, help="control steps per episode at most (>= 2)")
    ap.add_argument("--json", default=None, help="write the rows here")
    args = ap.parse_args()
    served = sorted(EXPERT_BEHAVIOURS)
    if args.task not in served:
        raise SystemExit(f"error: the expert does not serve {args.task!r}; it serves {', '.join(served)}")
    if args.steps < 2:
        raise SystemExit(f"error: --steps must be at least 2, got {args.steps}")
    try:
        seeds = [int(s) for s in args.seeds.split(",")]
    except ValueError:
        raise SystemExit(f"error: --seeds must be comma-separated integers, got {args.seeds!r}") from None
    rows = []
    for seed in seeds:
        r = track(args.task, seed, args.steps)
        rows.append(r)
        print(f"{args.task} seed {seed}: {r['control_steps']} control steps ({r['termination']}), "
              f"median share of muscles at a one-step bound {r['median_share_at_bound']:.2f}")
        for axis, a in r["axes"].items():
            print(f"  {axis}: asked rms {a['rms_asked']:.2f}  asked-planned rms {a['rms_asked_minus_planned']:.2f} "
                  f"({a['mean_asked_minus_planned']:+.2f})  made-planned rms {a['rms_made_minus_planned']:.2f} "
                  f"({a['mean_made_minus_planned']:+.2f})  m/s²")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": "python benchmarks/qp_tracking.py " + " ".join(
                f"--{k} {v}" for k, v in (("task", args.task), ("seeds", args.seeds), ("steps", args.steps))),
                "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()

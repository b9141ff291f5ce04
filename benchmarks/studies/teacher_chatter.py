"""How the expert's labels move from step to step, and how spread out the states it visits are.

For each task: ``--worlds`` CPU worlds (seeds 0, 1, ...) run ``--steps`` control steps with the expert
acting (what the first, teacher-only iteration of ``mskbench train --algo bc`` collects). Prints, per
task, the mean squared step-to-step change of its actions (the excitation chatter), the same change
measured on the muscle activations the actions reach (:class:`mskbench.agents.bc.ActivationSpace`:
the activations the current action reaches against those the previous action would have reached, from
the same observed activations), the share of its excitations at a bound, and per observation block the
median standard deviation over the visited states. ``--teacher-rate`` gives the expert's QP that
``activation_rate`` weight (BC's ``teacher_rate``, removed after docs/distillation.md's runs; at commit
a6e0409). ``--json`` writes the rows.

    python benchmarks/studies/teacher_chatter.py --tasks Stand,Powerlift,SingleLegStand,Sit,Squat,Reach \\
        --json docs/distillation/teacher_chatter.json
    python benchmarks/studies/teacher_chatter.py --tasks Stand --teacher-rate 1000 --json docs/distillation/teacher_chatter_rate1000.json
"""

from __future__ import annotations

import argparse
import json

import numpy as np


def measure(task: str, worlds: int, steps: int, teacher_rate: float = 0.0) -> dict:
    from mskbench.agents.bc import ActivationSpace, DaggerWorlds
    from mskbench.control.registry import make_controller
    from mskbench.envs import MSKEnv
    from mskbench.envs.action_map import excitation

    envs = [MSKEnv(task) for _ in range(worlds)]
    pool = DaggerWorlds(envs, [make_controller("expert", env, teacher_rate) for env in envs], list(range(worlds)),
                        rng_seed=0)
    try:
        data = pool.collect(None, 1.0, steps)
        env = pool.envs[0]
        space = ActivationSpace(env, env.obs_layout)
        obs = data["obs"].reshape(steps, worlds, -1)
        act = data["labels"].reshape(steps, worlds, -1)
        exc_change = float(np.mean((act[1:] - act[:-1]) ** 2))
        act_change = float(np.mean([space.distance(obs[t, w], act[t, w], act[t - 1, w])
                                    for t in range(1, steps) for w in range(worlds)]))
        u = excitation(np.clip(act, -1, 1), env.action_map, np)
        at_bound = float(np.mean((u < 1e-3) | (u > 1 - 1e-3)))
        spread = obs.reshape(steps * worlds, -1).astype(np.float64).std(0)
        blocks = {name: {"median_std": float(np.median(spread[s])), "under_1e-3": int((spread[s] < 1e-3).sum()),
                         "size": int(s.stop - s.start)} for name, s in env.obs_layout.items()}
        return {"task": task, "teacher_rate": teacher_rate, "worlds": worlds, "steps": steps, "excitation_change": exc_change,
                "activation_change": act_change, "excitations_at_bound": at_bound, "obs_spread": blocks,
                "episodes_ended": len(data["finished"])}
    finally:
        pool.close()


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tasks", default="Stand,Powerlift,SingleLegStand,Sit,Squat,Reach")
    ap.add_argument("--worlds", type=int, default=4)
    ap.add_argument("--steps", type=int, default=250)
    ap.add_argument("--teacher-rate", type=float, default=0.0)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    rows = []
    print("| task | excitation change | activation change | excitations at a bound | muscle_length median std (m) |")
    print("|---|---|---|---|---|")
    for task in args.tasks.split(","):
        r = measure(task.strip(), args.worlds, args.steps, args.teacher_rate)
        rows.append(r)
        print(f"| {r['task']} | {r['excitation_change']:.4f} | {r['activation_change']:.5f} | "
              f"{100 * r['excitations_at_bound']:.0f} % | {r['obs_spread']['muscle_length']['median_std']:.1e} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"worlds": args.worlds, "steps": args.steps, "teacher_rate": args.teacher_rate, "rows": rows},
                      f, indent=2)


if __name__ == "__main__":
    main()

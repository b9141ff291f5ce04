"""The expert with the QP's ``activation_rate`` weight: does it still succeed, and how much calmer is it?

For each task and each weight: ``--episodes`` whole episodes of the expert (seeds 0, 1, ...; the train
environment; the package's episode loop, :func:`mskbench.eval.episodes.play_episode`), two at a time
in spawned processes. Prints per weight the success rate, the mean return and length, and the mean
squared change of the expert's action from one control step to the next over the episodes (the chatter
benchmarks/studies/teacher_chatter.py measures over a first iteration). ``--json`` appends the rows (JSON
lines).

    python benchmarks/expert_rate.py --task Stand --rates 0,300,1000,3000 --episodes 10 \\
        --json docs/distillation/expert_rate.jsonl
"""

from __future__ import annotations

import argparse
import json
import multiprocessing as mp
import os

import numpy as np


class _Recorded:
    """A policy that keeps every action it hands out (for the step-to-step change)."""

    def __init__(self, policy):
        self.policy, self.actions = policy, []

    def reset(self, seed: int | None = None) -> None:
        self.policy.reset(seed)

    def act(self, obs: np.ndarray) -> np.ndarray:
        self.actions.append(self.policy.act(obs))
        return self.actions[-1]


def episode(args: tuple[str, float, int, int]) -> dict:
    task, rate, seed, steps = args
    from mskbench.control.registry import make_controller
    from mskbench.envs.cpu_env import MSKEnv
    from mskbench.eval.episodes import native_ends, play_episode
    from mskbench.tasks import make_task

    env = MSKEnv(make_task(task))
    policy = _Recorded(make_controller("expert", env, activation_rate=rate))
    played = play_episode(env, policy, seed, max_steps=steps, ends_on_native=native_ends(env.task))
    a = np.array(policy.actions)
    return {"seed": seed, "return": played.total_reward, "length": played.steps,
            "success": bool(played.info["success"]), "termination": played.termination,
            "change": float(np.mean((a[1:] - a[:-1]) ** 2)) if len(a) > 1 else float("nan")}


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", default="Stand")
    ap.add_argument("--rates", default="0,1000")
    ap.add_argument("--episodes", type=int, default=10)
    ap.add_argument("--steps", type=int, default=1000, help="at most this many control steps per episode")
    ap.add_argument("--processes", type=int, default=2)
    ap.add_argument("--json", default=None)
    args = ap.parse_args(argv)
    for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(k, "1")
    print("| task | activation_rate | episodes | SR % | mean return | mean length | action change | ends |")
    print("|---|---|---|---|---|---|---|---|")
    with mp.get_context("spawn").Pool(args.processes) as pool:
        for rate in (float(r) for r in args.rates.split(",")):
            eps = pool.map(episode, [(args.task, rate, s, args.steps) for s in range(args.episodes)])
            ends: dict[str, int] = {}
            for e in eps:
                ends[str(e["termination"])] = ends.get(str(e["termination"]), 0) + 1
            row = {"task": args.task, "activation_rate": rate, "episodes": len(eps),
                   "success_rate": float(np.mean([e["success"] for e in eps])),
                   "mean_return": float(np.mean([e["return"] for e in eps])),
                   "mean_length": float(np.mean([e["length"] for e in eps])),
                   "action_change": float(np.nanmean([e["change"] for e in eps])), "ends": ends, "per_episode": eps}
            print(f"| {args.task} | {rate:g} | {len(eps)} | {100 * row['success_rate']:.0f} | {row['mean_return']:,.0f} | "
                  f"{row['mean_length']:.0f} | {row['action_change']:.5f} | "
                  + ", ".join(f"{k} {v}" for k, v in sorted(ends.items())) + " |", flush=True)
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()

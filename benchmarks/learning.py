"""Does an algorithm learn? A fixed wall-clock budget of training, its evaluations against reference policies.

    python benchmarks/learning.py sac --task Stand --minutes 30 --out runs/learning
    python benchmarks/learning.py deprl --task MouseImitation --clips clips/ --minutes 5 --out runs/learning

Trains ``ALGO`` on ``TASK`` with its Table XVI defaults (plus any ``--set
KEY=VALUE``) for ``--minutes`` of wall clock (``mskbench.train(...,
time_limit_s=...)``), evaluating every ``--eval-every-steps`` environment
steps with the run's own protocol evaluation (suite tasks: ``--episodes``
deterministic episodes from the protocol's starts of seeds 10000, ...;
MouseImitation: the track replay error on the first four clips). The zero,
random and passive policies are evaluated on the same episodes. Writes
``<out>/<task>-<algo>/`` (the run), ``<task>-<algo>.json`` (the numbers) and
``<task>-<algo>.png`` (return or replay error against steps, the reference
policies as lines; needs matplotlib). Nothing here claims the paper's
success rates: those need GPU-scale budgets (1e7–1e8 steps).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np


def reference_policies(task: str, episodes: int) -> dict:
    """Mean return and episode length of the zero, random and passive policies on the evaluation's episodes."""
    from mskbench.envs import MSKEnv
    from mskbench.eval.episodes import run_episode
    from mskbench.policies import as_policy, make_policy
    from mskbench.training import EVAL_SEED

    env = MSKEnv(task)
    out = {}
    for name in ("zero", "random", "passive"):
        policy = as_policy(make_policy(name, env.action_space.shape[0], seed=0))
        results = [run_episode(env, policy, EVAL_SEED + i) for i in range(episodes)]
        out[name] = {"mean_return": float(np.mean([r.episode_return for r in results])),
                     "mean_length": float(np.mean([r.length for r in results]))}
    return out


def episode_lengths(task: str, checkpoint: Path, episodes: int) -> float:
    """The mean episode length of a checkpoint's deterministic policy on the evaluation's episodes."""
    from mskbench.agents.checkpoint import load_policy
    from mskbench.envs import MSKEnv
    from mskbench.eval.episodes import run_episode
    from mskbench.training import EVAL_SEED

    env = MSKEnv(task)
    policy = load_policy(checkpoint, env.obs_layout, env.observation_space.shape[0])
    return float(np.mean([run_episode(env, policy, EVAL_SEED + i).length for i in range(episodes)]))


def plot(path: Path, title: str, metric: str, curve: list[tuple[int, float]], references: dict) -> bool:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: no PNG (pip install matplotlib)")
        return False
    fig, ax = plt.subplots(figsize=(6, 3.6), dpi=120)
    if curve:
        steps, values = zip(*curve)
        ax.plot(steps, values, marker="o", label="deterministic evaluation")
    for (name, ref), style in zip(references.items(), ("--", ":", "-.")):
        ax.axhline(ref["mean_return"], linestyle=style, color="grey", label=f"{name} policy")
    ax.set_xlabel("environment steps")
    ax.set_ylabel(metric.replace("_", " "))
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return True


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("algo", help="ppo, sac, deprl or dynsyn")
    p.add_argument("--task", default="Stand")
    p.add_argument("--minutes", type=float, default=30.0)
    p.add_argument("--out", type=Path, default=Path("runs/learning"))
    p.add_argument("--episodes", type=int, default=10, help="deterministic episodes per evaluation")
    p.add_argument("--eval-every-steps", type=int, default=20_000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--clips", default=None, help="MouseImitation: the clips (a directory); default: synthetic")
    p.add_argument("--set", dest="extra", action="append", default=[], metavar="KEY=VALUE",
                   help="a hyper-parameter (JSON value), repeatable")
    args = p.parse_args()
    import mskbench
    from mskbench.tasks import resolve_name

    task = resolve_name(args.task)
    config = {}
    for pair in args.extra:
        key, _, text = pair.partition("=")
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = text
        config[key] = tuple(value) if isinstance(value, list) else value
    args.out.mkdir(parents=True, exist_ok=True)
    name = f"{task}-{args.algo}"
    run_dir = args.out / name
    started = time.perf_counter()
    task_options = {"clips": args.clips} if args.clips else None
    run = mskbench.train(task, args.algo, out=run_dir, seed=args.seed, time_limit_s=60.0 * args.minutes,
                         task_options=task_options,
                         eval_every_steps=args.eval_every_steps, eval_episodes=args.episodes,
                         on_iteration=lambda row: print(json.dumps(row), flush=True), **config)
    wall = time.perf_counter() - started
    curve = [(row["steps"], row["eval"][run.metric]) for row in run.history if "eval" in row]
    summary: dict = {"algo": args.algo, "task": task, "machine": platform.processor() or platform.machine(),
                     "minutes": args.minutes, "wall_s": round(wall, 1), "steps": run.steps,
                     "steps_per_s": round(run.steps / wall, 1), "metric": run.metric,
                     "start": curve[0][1] if curve else None, "end": curve[-1][1] if curve else None,
                     "best": run.best, "curve": curve, "config": run.settings["config"]}
    references: dict = {}
    if task != "MouseImitation":
        references = reference_policies(task, args.episodes)
        summary["references"] = references
        summary["end_mean_length"] = episode_lengths(task, run_dir / "checkpoint.npz", args.episodes)
    summary["png"] = plot(args.out / f"{name}.png", f"{args.algo} on {task}: {run.steps} steps in "
                          f"{wall / 60:.0f} min ({summary['machine']})", run.metric, curve, references)
    (args.out / f"{name}.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps({k: v for k, v in summary.items() if k not in ("curve", "config")}))


if __name__ == "__main__":
    main()

"""Train a tracking prior, then residual policies over it, and measure them (docs/residual.md).

    python benchmarks/imitation_residual.py --out runs/imres                     # CPU, small budget
    python benchmarks/imitation_residual.py --out runs/imres --backend jax --impl warp \\
        --prior-steps 50000000 --residual-steps 20000000 --num-envs 4096          # GPU

1. ``TrackWalk`` (the imitation prior) with PPO for ``--prior-steps`` (or ``--prior-time``);
2. for each of ``--residual`` (default ResidualWalk): PPO on the residual task over the frozen prior;
3. evaluation on the CPU protocol env, ``--episodes`` deterministic episodes from seeds 10000, ...:
   the prior on TrackWalk (Eq. 20's reference rollout: the ``zero`` policy), and for each residual
   task the frozen base alone (zero residual; the paper's "MM" column and Eq. 20's reference) and the
   trained residual — episode length, success, the 16-site tracking RMSE (Eq. 19), the relative-site,
   root and joint errors and the divergence time (Eq. 20).

Writes ``OUT/report.json`` and prints it.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path


def evaluate(env, policy, seeds, reference_policy=None):
    from mskbench.paradigms.residual.measure import summarize, tracking_report, tracking_rollout

    reports = []
    for seed in seeds:
        trace = tracking_rollout(env, policy, seed)
        ref = tracking_rollout(env, reference_policy, seed) if reference_policy is not None else None
        reports.append(tracking_report(trace, ref))
    return summarize(reports), reports


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--backend", default="cpu", choices=["cpu", "jax"])
    ap.add_argument("--impl", default=None, choices=["warp", "jax", "cpu"])
    ap.add_argument("--num-envs", type=int, default=None)
    ap.add_argument("--rollout", type=int, default=None, help="steps per world per iteration")
    ap.add_argument("--prior-task", default="TrackWalk")
    ap.add_argument("--prior-steps", type=int, default=10_000_000)
    ap.add_argument("--prior-time", type=float, default=None, help="stop the prior after this many seconds")
    ap.add_argument("--residual", nargs="*", default=["ResidualWalk"])
    ap.add_argument("--residual-steps", type=int, default=5_000_000)
    ap.add_argument("--residual-time", type=float, default=None, help="stop each residual after this many seconds")
    ap.add_argument("--episodes", type=int, default=5)
    ap.add_argument("--eval-episodes", type=int, default=2, help="episodes of the periodic evaluation")
    ap.add_argument("--set", dest="extra", action="append", default=[], metavar="KEY=VALUE",
                    help="a PPO hyper-parameter (repeatable; values read as JSON), e.g. --set learning_rate=3e-5")
    args = ap.parse_args()

    import mskbench
    from mskbench.paradigms.residual import ResidualMap, ResidualPolicy, train_residual
    from mskbench.envs import MSKEnv
    from mskbench.eval.protocol import load_policy
    from mskbench.paradigms.residual.measure import base_rollout_policy
    from mskbench.policies import make_policy
    from mskbench.tasks import make_task
    from mskbench.training import EVAL_SEED

    cfg = {k: v for k, v in (("num_envs", args.num_envs), ("num_steps", args.rollout)) if v is not None}
    for pair in args.extra:
        key, _, text = pair.partition("=")
        cfg[key] = json.loads(text)
    common = dict(backend=args.backend, impl=args.impl, eval_episodes=args.eval_episodes, **cfg)
    seeds = [EVAL_SEED + i for i in range(args.episodes)]
    report: dict = {"settings": {k: (str(v) if isinstance(v, Path) else v) for k, v in vars(args).items()}}

    prior_dir = args.out / "prior"
    t0 = time.perf_counter()
    if not (prior_dir / "checkpoint.npz").exists():
        mskbench.train(args.prior_task, out=prior_dir, steps=args.prior_steps, time_limit_s=args.prior_time, **common)
    report["prior"] = {"task": args.prior_task, "steps": mskbench.Run.load(prior_dir).steps,
                       "train_wall_s": time.perf_counter() - t0}
    env = MSKEnv(args.prior_task)
    prior = load_policy(str(prior_dir), env, 0)
    summary, episodes = evaluate(env, prior, seeds, make_policy("zero", env.n_muscles))
    report["prior"].update(summary=summary, episodes=episodes)
    env.close()

    for task in args.residual:
        out = args.out / task
        t0 = time.perf_counter()
        if not (out / "checkpoint.npz").exists():
            train_residual(task, str(prior_dir), out=out, steps=args.residual_steps, time_limit_s=args.residual_time,
                           **common)
        entry: dict = {"steps": mskbench.Run.load(out).steps, "train_wall_s": time.perf_counter() - t0}
        env = MSKEnv(make_task(task, base=json.loads((out / "run.json").read_text())["task_options"]["base"]))
        base = base_rollout_policy(env)
        entry["base_alone"], entry["base_episodes"] = evaluate(env, base, seeds)
        residual = ResidualPolicy(load_policy(str(out), env, 0), ResidualMap(env.task, env.obs_layout))
        entry["residual"], entry["residual_episodes"] = evaluate(env, residual, seeds, base)
        report[task] = entry
        env.close()

    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.json").write_text(json.dumps(report, indent=2, default=float))
    brief = {k: (v.get("summary") if k == "prior"
                 else {"base_alone": v.get("base_alone"), "residual": v.get("residual")})
             for k, v in report.items() if k != "settings"}
    print(json.dumps(brief, indent=2, default=float))


if __name__ == "__main__":
    main()

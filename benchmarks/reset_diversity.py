"""How many different initial states a batched training run sees: distinct starts per million steps.

Runs the batched JAX env of each task with uniform random actions (the
episode lengths of early training) in rollouts of ``--rollout`` steps, with
:meth:`~mskbench.envs.jax_env.TaskJaxEnv.refresh` between rollouts as the
trainer does. Every world whose episode starts (after ``reset`` or an
auto-reset) is fingerprinted by its first observation; the report gives, per
task, the steps run, the episode starts, the distinct starts among them, the
resets that had to reuse a bank entry, and distinct starts per million steps.
A task whose start is fixed (Stand) has one start however often it resets.

    python benchmarks/reset_diversity.py --tasks Walk,Catch,Reach,Stand --num-envs 64 --steps 256 --impl cpu
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np


def measure(task: str, num_envs: int, steps: int, rollout: int, impl: str, seed: int = 0) -> dict:
    import jax
    import jax.numpy as jnp

    from mskbench.envs.jax_env import TaskJaxEnv

    t0 = time.perf_counter()
    env = TaskJaxEnv(task, num_envs, impl=impl, seed=seed, check_memory=False)
    build_s = time.perf_counter() - t0
    state = env.reset(jax.random.PRNGKey(seed))
    seen = {np.asarray(o).tobytes() for o in np.asarray(state.obs)}
    starts, reused = num_envs, 0
    key = jax.random.PRNGKey(seed + 1)
    t0 = time.perf_counter()
    for t in range(steps):
        key, k = jax.random.split(key)
        state, _ = env.step(state, jax.random.uniform(k, (num_envs, env.action_size), jnp.float32, -1.0, 1.0))
        fresh = np.asarray(state.steps) == 0
        starts += int(fresh.sum())
        seen.update(row.tobytes() for row in np.asarray(state.obs)[fresh])
        if (t + 1) % rollout == 0:
            reused += int(state.reused)
            state = env.refresh(state)
    reused += int(state.reused)
    run_s = time.perf_counter() - t0
    total = num_envs * steps
    return {"task": task, "impl": impl, "device_resets": env.device_resets, "num_envs": num_envs,
            "bank_size": env.bank_size, "steps": total, "episode_starts": starts, "distinct_starts": len(seen),
            "reused_bank_entries": reused, "distinct_starts_per_million_steps": round(1e6 * len(seen) / total),
            "episode_starts_per_million_steps": round(1e6 * starts / total), "build_s": round(build_s, 1),
            "run_s": round(run_s, 1)}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", default="Walk,Catch,Reach,Stand")
    ap.add_argument("--num-envs", type=int, default=64)
    ap.add_argument("--steps", type=int, default=256, help="control steps per world")
    ap.add_argument("--rollout", type=int, default=64, help="steps between refreshes (a PPO rollout)")
    ap.add_argument("--impl", choices=["cpu", "warp", "jax"], default="cpu")
    ap.add_argument("--json-out", default=None)
    args = ap.parse_args()
    rows = []
    for task in [t.strip() for t in args.tasks.split(",") if t.strip()]:
        rows.append(measure(task, args.num_envs, args.steps, args.rollout, args.impl))
        print(json.dumps(rows[-1]), flush=True)
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()

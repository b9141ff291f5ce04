"""Mouse imitation throughput: environment steps/s and PPO training steps/s.

Reports compile time apart from run time (warm-up first, ``block_until_ready``
around timed JAX work), for the CPU backend (MuJoCo C worlds in a loop) or the
JAX backend (``--impl jax``: MJX, ``--impl warp``: MuJoCo Warp; a GPU is what
it is for). With ``--until-mm`` it keeps training and reports the wall time at
which the evaluated track replay error first drops below that many millimetres.

    python benchmarks/mouse_train_speed.py --backend cpu --num-envs 32
    python benchmarks/mouse_train_speed.py --backend jax --impl warp --num-envs 4096 \\
        --clips ../shared/data/mouse_reach --until-mm 1.0 --budget-s 300
"""

from __future__ import annotations

import argparse
import json
import platform
import time

import numpy as np


def env_speed(env, backend: str, steps: int) -> dict:
    rng = np.random.default_rng(0)
    if backend == "cpu":
        env.reset(seed=0)
        actions = rng.uniform(-1, 1, (steps, env.num_envs, env.action_size))
        t0 = time.perf_counter()
        for a in actions:
            env.step(a)
        return {"env_steps_per_s": steps * env.num_envs / (time.perf_counter() - t0)}
    import jax

    state = env.reset(jax.random.PRNGKey(0))

    @jax.jit
    def run(state, key):
        def one(s, k):
            a = jax.random.uniform(k, (env.num_envs, env.action_size), minval=-1.0, maxval=1.0)
            s, out = env.step(s, a)
            return s, out.reward.mean()

        return jax.lax.scan(one, state, jax.random.split(key, steps))

    t0 = time.perf_counter()
    jax.block_until_ready(run(state, jax.random.PRNGKey(1)))
    compile_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    jax.block_until_ready(run(state, jax.random.PRNGKey(2)))
    run_s = time.perf_counter() - t0
    return {"env_compile_s": compile_s, "env_steps_per_s": steps * env.num_envs / run_s,
            "device": str(jax.devices()[0])}


def measure(backend: str = "cpu", impl: str = "jax", num_envs: int = 32, clips_dir: str | None = None,
            rollout: int = 64, hidden: int = 512, iterations: int = 5, until_mm: float | None = None,
            budget_s: float = 300.0, eval_every: int = 10) -> dict:
    """The report (also used by ``benchmarks/gpu_check.py``'s ``mouse_warp`` stage)."""
    from mskbench.agents.ppo import PPOConfig
    from mskbench.eval.mouse import evaluate
    from mskbench.tasks.mouse_imitation import MouseImitation
    from mskbench.training import make_env
    from mskbench.training.loop import train_loop

    task = MouseImitation(clips=clips_dir)  # None: 8 synthetic clips
    clips = task.clip_list
    t0 = time.perf_counter()
    env = make_env(task, backend, num_envs, impl=impl)
    build_s = time.perf_counter() - t0
    report = {"machine": platform.processor() or platform.machine(), "backend": backend,
              "impl": impl if backend == "jax" else None, "num_envs": num_envs,
              "clips": len(clips), "env_build_s": build_s}
    report.update(env_speed(env, backend, steps=64))

    per_iter = rollout * num_envs
    ppo = PPOConfig(num_envs=num_envs, total_steps=per_iter * (iterations + 1), num_steps=rollout,
                    policy="encoder_decoder",
                    encoder_hidden=(hidden,) * 3, decoder_hidden=(hidden,) * 3,
                    value_hidden=(hidden,) * 2, minibatch_size=min(4096, per_iter), epochs=4)
    rows = []
    t0 = time.perf_counter()
    train_loop("ppo", env, ppo, on_iteration=rows.append)
    total = time.perf_counter() - t0
    report["ppo_first_iteration_s"] = rows[0]["collect_s"] + rows[0]["update_s"]  # includes compilation
    timed = rows[1:]
    report["ppo_steps_per_s"] = per_iter * len(timed) / sum(r["collect_s"] + r["update_s"] for r in timed)
    report["ppo_collect_fraction"] = sum(r["collect_s"] for r in timed) / sum(
        r["collect_s"] + r["update_s"] for r in timed)
    report["ppo_total_s"] = total

    if until_mm is not None:
        hit, eval_s = {}, [0.0]
        start = time.perf_counter()

        def check(policy):
            t = time.perf_counter()
            err = evaluate(policy, clips, task)["overall"]["track_replay_error_mm"]
            eval_s[0] += time.perf_counter() - t
            if err < until_mm and "s" not in hit:
                hit["s"] = time.perf_counter() - start
                hit["training_s"] = hit["s"] - eval_s[0]  # the evaluations (MuJoCo C on the host) left out
            return {"track_replay_error_mm": err}

        budget_steps = int(report["ppo_steps_per_s"] * budget_s)
        long_cfg = PPOConfig(**{**ppo.__dict__, "total_steps": max(per_iter, budget_steps)})
        log = []
        train_loop("ppo", env, long_cfg, eval_fn=check, eval_every=eval_every, on_iteration=log.append)
        evals = [r["eval"]["track_replay_error_mm"] for r in log if "eval" in r]
        report["until_mm"] = {"target_mm": until_mm, "reached_after_s": hit.get("s"),
                              "training_s_when_reached": hit.get("training_s"), "evaluation_s": eval_s[0],
                              "best_mm": min(evals) if evals else None, "steps": log[-1]["steps"]}
    return report


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--backend", choices=["cpu", "jax"], default="cpu")
    p.add_argument("--impl", choices=["jax", "warp", "cpu"], default="jax")
    p.add_argument("--num-envs", type=int, default=32)
    p.add_argument("--clips", default=None, help="clip directory (default: 8 synthetic clips)")
    p.add_argument("--rollout", type=int, default=64)
    p.add_argument("--hidden", type=int, default=512)
    p.add_argument("--iterations", type=int, default=5, help="timed PPO iterations after one warm-up")
    p.add_argument("--until-mm", type=float, default=None)
    p.add_argument("--budget-s", type=float, default=300.0)
    p.add_argument("--eval-every", type=int, default=10, help="iterations between evaluations (--until-mm)")
    args = p.parse_args()
    report = measure(args.backend, args.impl, args.num_envs, args.clips, args.rollout, args.hidden,
                     args.iterations, args.until_mm, args.budget_s, args.eval_every)
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()

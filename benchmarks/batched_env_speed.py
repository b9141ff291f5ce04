"""Control steps/s of the batched JAX environment against the CPU env, on this machine.

    python benchmarks/batched_env_speed.py --task Walk --impl cpu --num-envs 8 --steps 40
    python benchmarks/batched_env_speed.py --task Walk --impl warp --num-envs 4096 --steps 100   # on a GPU
    python benchmarks/batched_env_speed.py --task Walk --impl cpu --num-envs 8 --latent z64.npz  # through the map

Zero actions with auto-reset; the first (compiling) step is timed apart. The
CPU env reference is one ``MSKEnv`` on one core (``--cpu-steps``, 0 to skip).
With ``--latent MODEL`` (a ``mskbench latent fit`` file) the worlds act through
hard-mode latent filtering inside the step (:class:`~mskbench.paradigms.latent.batched.LatentBatchedEnv`,
with the deviation penalty); compare with a run without it for the map's cost.
"""

from __future__ import annotations

import argparse
import json
import os
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", default="Walk")
    ap.add_argument("--impl", default="cpu", choices=("cpu", "jax", "warp"))
    ap.add_argument("--num-envs", type=int, default=8)
    ap.add_argument("--steps", type=int, default=40)
    ap.add_argument("--cpu-steps", type=int, default=300)
    ap.add_argument("--latent", default=None, help="a latent model file: step through the hard-mode map")
    ap.add_argument("--tube", type=float, default=0.25)
    args = ap.parse_args()

    import jax
    import jax.numpy as jnp

    from mskbench.envs import MSKEnv
    from mskbench.jax_env import make

    t0 = time.perf_counter()
    env = make(args.task, num_envs=args.num_envs, impl=args.impl, muscle_moments=args.latent is not None)
    if args.latent is not None:
        from mskbench.paradigms.latent import PenaltySchedule
        from mskbench.paradigms.latent.batched import LatentBatchedEnv
        from mskbench.paradigms.latent.model import LatentModel

        env = LatentBatchedEnv(env, LatentModel.load(args.latent), args.tube, schedule=PenaltySchedule())
    build_s = time.perf_counter() - t0
    actions = jnp.zeros((args.num_envs, 416), jnp.float32)
    t0 = time.perf_counter()
    state = env.reset(jax.random.PRNGKey(0))
    state, out = env.step(state, actions)
    jax.block_until_ready(out.reward)
    first_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    for _ in range(args.steps):
        state, out = env.step(state, actions)
    jax.block_until_ready(out.reward)
    run_s = time.perf_counter() - t0
    row = {"task": args.task, "impl": args.impl, "num_envs": args.num_envs, "device": str(jax.devices()[0]),
           "cpu_cores": os.cpu_count(), "build_s": round(build_s, 2), "compile_and_first_step_s": round(first_s, 2),
           "batched_steps_per_s": round(args.num_envs * args.steps / run_s, 1), "latent": args.latent}
    if args.cpu_steps > 0:
        cpu = MSKEnv(args.task)
        cpu.reset(seed=0)
        a = np.zeros(416, np.float32)
        t0 = time.perf_counter()
        for _ in range(args.cpu_steps):
            _, _, term, trunc, _ = cpu.step(a)
            if term or trunc:
                cpu.reset()
        row["cpu_env_steps_per_s"] = round(args.cpu_steps / (time.perf_counter() - t0), 1)
    print(json.dumps(row))


if __name__ == "__main__":
    main()

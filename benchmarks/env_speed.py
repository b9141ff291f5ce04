"""Environment control steps/s against a raw ``mj_step`` loop with the same substeps.

Both loops run on one core (set ``OMP_NUM_THREADS=1``), on the same compiled
model, with the same excitation sequence (uniform random actions drawn in
advance), restarting from the task's initial state whenever an episode ends.
The raw loop does only ``data.ctrl[:] = u; mj_step(model, data, nstep)`` and
restarts at the same steps from the same full physics states as the env loop
(``mjSTATE_FULLPHYSICS`` and the solver's warm start, so both loops simulate
the same trajectory: restoring only ``qpos``, ``qvel`` and ``act``, as this
benchmark once did, let the two runs drift apart after the first reset, into
different contacts and solver work, and the comparison measured that drift as
much as the environment); the env loop is ``env.step(a)`` including
observation, rewards, termination, success, info and the task's reset
sampling. Overhead = raw rate / env rate − 1; on a shared 2-core machine it
varies by several points from run to run (mj_step's own time does), so the
report also gives ``env_overhead_pct``: the env loop's time outside
``mj_step`` relative to its time inside it, both timed in the same run.

    python benchmarks/env_speed.py --task Stand --steps 2000
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import mujoco  # noqa: E402
import numpy as np  # noqa: E402

from mskbench.envs import MSKEnv  # noqa: E402


def bench(task: str, steps: int, seed: int, repeats: int) -> dict:
    env = MSKEnv(task)
    rng = np.random.default_rng(seed)
    actions = rng.uniform(-1, 1, size=(steps, env.action_space.shape[0])).astype(np.float32)
    excitations = 0.5 * (actions.astype(np.float64) + 1.0)
    m, d, nstep = env.model, env.data, env.sim.frame_skip

    resets: dict[int, np.ndarray] = {}
    physics_s = [0.0]
    step = mujoco.mj_step

    def timed_step(*args, **kwargs):  # the env's own mj_step calls, timed
        t = time.perf_counter()
        step(*args, **kwargs)
        physics_s[0] += time.perf_counter() - t

    def run_env() -> float:
        env.reset(seed=seed)
        resets.clear()
        physics_s[0] = 0.0
        mujoco.mj_step = timed_step
        try:
            t0 = time.perf_counter()
            for k, a in enumerate(actions):
                _, _, term, trunc, _ = env.step(a)
                if term or trunc:
                    env.reset()
                    resets[k] = env.sim.get_state()
            return time.perf_counter() - t0
        finally:
            mujoco.mj_step = step

    def run_raw() -> float:
        # The env run's physics: restarts where the env reset, from the full states it reset to
        # (restoring them costs a state copy only).
        env.reset(seed=seed)
        t0 = time.perf_counter()
        for k, u in enumerate(excitations):
            d.ctrl[:] = u
            mujoco.mj_step(m, d, nstep=nstep)
            if k in resets:
                env.sim.set_state(resets[k])
        return time.perf_counter() - t0

    env_t, raw_t, share = [], [], []
    for _ in range(repeats):  # interleave so drift hits both equally
        env_t.append(run_env())
        share.append(physics_s[0] / env_t[-1])
        raw_t.append(run_raw())
    env_rate = steps / min(env_t)
    raw_rate = steps / min(raw_t)
    return {
        "task": task,
        "control_steps": steps,
        "substeps": nstep,
        "env_steps_per_s": round(env_rate, 1),
        "raw_steps_per_s": round(raw_rate, 1),
        "episodes_ended": len(resets),
        "overhead_pct": round(100.0 * (raw_rate / env_rate - 1.0), 2),
        "env_overhead_pct": round(100.0 * (1.0 / share[int(np.argmin(env_t))] - 1.0), 2),
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--task", default="all", help="task id, comma-separated ids, or 'all' (every registered task)")
    p.add_argument("--steps", type=int, default=2000)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    from mskbench.tasks import REGISTRY, resolve_name

    tasks = list(REGISTRY) if args.task == "all" else [resolve_name(t.strip()) for t in args.task.split(",")]
    print(json.dumps({"machine": platform.processor() or platform.machine(), "mujoco": mujoco.__version__}))
    for t in tasks:
        print(json.dumps(bench(t, args.steps, args.seed, args.repeats)))


if __name__ == "__main__":
    main()

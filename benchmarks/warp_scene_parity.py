"""Every task's scene on MuJoCo Warp against the CPU (MuJoCo C) backend, step by step.

For each task: two worlds (episode seeds 0 and 1) on ``impl="warp"`` and on
``impl="cpu"`` (which steps MuJoCo C), the same uniform random actions for a
few control steps; reports the largest relative observation difference, the
largest reward difference, whether terminations and step counts agree, and
the build and first-step times. Runs wherever MuJoCo Warp runs (on a CPU
machine, on Warp's CPU device: slow, but the same kernels' logic).

    python benchmarks/warp_scene_parity.py [--tasks all|Stand,Catch] [--steps 5] [--json-out FILE]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np


def compare(task: str, steps: int, seed: int = 0) -> dict:
    import jax.numpy as jnp

    from mskbench.envs.jax_env import make

    kw = dict(num_envs=2, reset_bank=2, check_memory=False)
    t0 = time.perf_counter()
    envs = {impl: make(task, impl=impl, **kw) for impl in ("warp", "cpu")}
    build_s = time.perf_counter() - t0
    states = {impl: env.reset_to([0, 1]) for impl, env in envs.items()}
    rng = np.random.default_rng(seed)
    row = {"task": task, "build_s": build_s, "obs_rel_err": 0.0, "reward_abs_err": 0.0, "reward_scale": 0.0,
           "terminations_agree": True, "steps_agree": True}
    scale0 = np.maximum(np.abs(np.asarray(states["cpu"].obs)), 1.0)
    row["obs_rel_err"] = float(np.max(np.abs(np.asarray(states["warp"].obs) - np.asarray(states["cpu"].obs))
                                      / scale0))
    t0 = time.perf_counter()
    for t in range(steps):
        a = jnp.asarray(rng.uniform(-1, 1, (2, 416)), jnp.float32)
        outs = {}
        for impl, env in envs.items():
            states[impl], outs[impl] = env.step(states[impl], a)
        if t == 0:
            row["first_step_s"] = time.perf_counter() - t0
        w, c = (np.asarray(outs[k].obs) for k in ("warp", "cpu"))
        err = np.abs(w - c) / np.maximum(np.abs(c), 1.0)
        if err.max() > row["obs_rel_err"]:
            row["obs_rel_err"] = float(err.max())
            layout = envs["cpu"].obs_layout
            idx = int(err.argmax() % err.shape[1])
            row["worst_block"] = next(k for k, sl in layout.items() if sl.start <= idx < sl.stop)
            row["worst_step"] = t
        rw, rc = np.asarray(outs["warp"].reward), np.asarray(outs["cpu"].reward)
        row["reward_abs_err"] = max(row["reward_abs_err"], float(np.max(np.abs(rw - rc))))
        row["reward_scale"] = max(row["reward_scale"], float(np.max(np.abs(rc))))
        row["terminations_agree"] &= bool(np.array_equal(outs["warp"].termination, outs["cpu"].termination))
        row["steps_agree"] &= bool(np.array_equal(states["warp"].steps, states["cpu"].steps))
    row["overflows"] = int(np.sum(states["warp"].worlds.overflows))
    row["unstable_resets"] = int(np.sum(states["warp"].worlds.unstable_resets))
    return row


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tasks", default="all")
    ap.add_argument("--steps", type=int, default=5)
    ap.add_argument("--json-out", default=None)
    args = ap.parse_args()
    import mskbench
    from mskbench.tasks import resolve_name

    tasks = list(mskbench.TASK_IDS) if args.tasks == "all" else [resolve_name(t) for t in args.tasks.split(",")]
    rows = []
    for task in tasks:
        row = compare(task, args.steps)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()

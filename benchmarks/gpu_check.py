"""One GPU check of the batched JAX path on MyoFullBody, in a fixed time budget.

Stages, in order of importance (each in its own Python process, so a stage
that hangs in a compile is killed at its time limit and the rest still run;
the parent never initialises JAX, so a child gets the whole GPU):

1. ``info``: GPU, JAX devices, package versions;
2. ``env_warp``: environment steps/s of the task (Walk) with ``impl="warp"``
   at several ``num_envs`` (random actions, auto-reset);
3. ``ppo_warp``: PPO training steps/s (Table XVI networks, a few iterations;
   the first one, which compiles, apart);
4. ``eval_warp``: wall time of a 50-episode batched evaluation of the PPO
   checkpoint (``mskbench.eval.batched.run_units_batched``; reported missing
   if this checkout has no such function);
5. ``mouse_warp``: mouse imitation (issue 5) env and PPO steps/s at 4,096
   worlds on MuJoCo Warp (``benchmarks/mouse_train_speed.py``); with
   ``--mouse-clips DIR`` also the training time to a replay error < 1 mm;
6. ``warp_profile``: where the physics time goes: the task's scene at the
   largest size of 2, physics steps/s of bare ``mujoco_warp.step`` calls and
   MuJoCo Warp's per-function trace (``benchmarks/physics_profile.py``);
   ``train_warp`` (only with ``--train-s S``): ``mskbench train --time-limit S``
   at 4,096 worlds, its best policy exported to ``--policy-out`` (14 MB for
   Walk), to be evaluated on a CPU with ``mskbench eval --policy FILE``;
   ``env_warp_latent``: as 2 with hard-mode latent-action filtering inside the step
   (:class:`mskbench.paradigms.latent.batched.LatentBatchedEnv`, an encoder–decoder of the authors'
   width fitted for one step on a few random-policy samples: its speed and memory, not its quality);
7. ``env_warp_suite``: as 2 at one size (1,024) for each of the other
   registered tasks' scenes, in registry order, while its time lasts;
8. ``env_jax``: as 2 with ``impl="jax"`` (pure-JAX MJX; slower, smaller sizes);
9. ``env_warp_graph``: as 2 at the largest size with Warp's other CUDA graph
   modes (``MSKBENCH_WARP_GRAPH_MODE``; 2 used the default, ``WARP_STAGED``).

The summary ends with a projection of one method's full robustness sweep
(22 tasks x 15 settings x 50 episodes) from the measured env rows
(``sweep_projection``; policy inference not included).

Compile time is reported apart from run time: a jitted rollout is lowered
and compiled ahead of time (``compile_s``), run once to warm up
(``warmup_s``) and then timed (``run_s``), each ended with
``block_until_ready``. Before each further size a stage checks the time it
has left; sizes that would not fit are reported as skipped.

    python benchmarks/gpu_check.py [--quick] [--budget-s 400] [--json-out summary.json]
    python benchmarks/gpu_check.py --dry-run     # tiny sizes on any machine (MuJoCo Warp on its CPU device)
    python benchmarks/gpu_check.py --only train_warp --train-s 150 --budget-s 240 --policy-out walk.npz

On a machine without MuJoCo use ``benchmarks/gpu_check.sh WHEELS_DIR`` (installs the
wheels that ``benchmarks/gpu_wheels.sh`` downloads, then runs this).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RESULT = "@@gpu_check@@ "


# -- child side: one stage in this process ------------------------------------------------------
def emit(kind: str, **row) -> None:
    """One result line for the parent (stdout; progress goes to stderr)."""
    print(RESULT + json.dumps({"kind": kind, **row}), flush=True)


def say(msg: str) -> None:
    print(f"[gpu_check {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def stage_info(p: dict) -> None:
    import jax

    versions = {"python": platform.python_version()}
    for mod in ("jax", "jaxlib", "numpy", "mujoco", "warp", "mujoco_warp"):
        try:
            versions[mod] = __import__(mod).__version__
        except Exception as exc:  # noqa: BLE001 - a missing package is a result here
            versions[mod] = f"missing ({type(exc).__name__}: {exc})"
    try:
        from importlib.metadata import version

        versions["mujoco-mjx"] = version("mujoco-mjx")
    except Exception as exc:  # noqa: BLE001
        versions["mujoco-mjx"] = f"missing ({exc})"
    dev = jax.devices()[0]
    emit("info", backend=jax.default_backend(), device=str(dev), device_kind=dev.device_kind,
         device_count=jax.device_count(), versions=versions)


def stage_env(p: dict) -> None:
    """Environment steps/s at each size, compile apart from run."""
    import gc

    import jax
    import jax.numpy as jnp

    from mskbench.envs.jax_env import TaskJaxEnv

    deadline, steps = p["deadline"], p["steps"]
    latent = p.get("latent")
    model = _latent_model(p["task"], latent) if latent else None
    est = 0.0
    runs = [(task, mode, n) for task in p.get("tasks") or [p["task"]]
            for mode in p.get("graph_modes") or [None] for n in p["sizes"]]
    for i, (task, mode, n) in enumerate(runs):
        left = deadline - time.time()
        if i and est > left:
            emit("env", task=task, impl=p["impl"], num_envs=n, graph_mode=mode,
                 skipped=f"time budget: ~{est:.0f} s needed, {left:.0f} s left")
            continue
        if mode is not None:  # read by mskbench.sim.mjwarp.WarpPhysics
            os.environ["MSKBENCH_WARP_GRAPH_MODE"] = mode
        say(f"env {task} impl={p['impl']} num_envs={n}: building")
        t0 = time.perf_counter()
        env = TaskJaxEnv(task, n, impl=p["impl"], muscle_moments=model is not None)
        if model is not None:
            from mskbench.paradigms.latent import PenaltySchedule
            from mskbench.paradigms.latent.batched import LatentBatchedEnv

            env = LatentBatchedEnv(env, model, latent.get("tube", 0.25), schedule=PenaltySchedule())
        build_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        state = jax.block_until_ready(env.reset(jax.random.PRNGKey(0)))
        reset_s = time.perf_counter() - t0

        def rollout(state, key, env=env, n=n):
            def one(s, k):
                a = jax.random.uniform(k, (n, env.action_size), minval=-1.0, maxval=1.0)
                s, out = env.step(s, a)
                return s, (out.terminated | out.truncated).sum()

            s, done = jax.lax.scan(one, state, jax.random.split(key, steps))
            return s, done.sum()

        say(f"env impl={p['impl']} num_envs={n}: compiling a {steps}-step rollout")
        t0 = time.perf_counter()
        compiled = jax.jit(rollout).lower(state, jax.random.PRNGKey(1)).compile()
        compile_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        state, _ = jax.block_until_ready(compiled(state, jax.random.PRNGKey(2)))
        warmup_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        state, done = jax.block_until_ready(compiled(state, jax.random.PRNGKey(3)))
        run_s = time.perf_counter() - t0
        sps = steps * n / run_s
        row = {"task": task, "impl": p["impl"], "graph_mode": getattr(env.physics, "graph_mode", None), "num_envs": n,
               "steps": steps, "build_s": build_s, "reset_s": reset_s,
               "compile_s": compile_s, "warmup_s": warmup_s, "run_s": run_s, "env_steps_per_s": sps,
               "physics_steps_per_s": sps * env.physics.frame_skip, "episodes_ended": int(done),
               "unstable_resets": int(jnp.sum(state.worlds.unstable_resets)),
               "contact_overflows": int(jnp.sum(state.worlds.overflows)),
               "latent_dim": model.latent_dim if model is not None else None}
        emit("env", **row)
        say(f"env impl={p['impl']} num_envs={n}: {sps:,.0f} env steps/s (compile {compile_s:.1f} s)")
        # The next run: about the same compile, a run time that grows with the worlds.
        nxt = runs[i + 1][2] if i + 1 < len(runs) else n
        est = 1.3 * (build_s + reset_s + compile_s + (warmup_s + run_s) * nxt / n) + 10.0
        del env, state, compiled
        jax.clear_caches()
        gc.collect()


def _latent_model(task: str, cfg: dict):
    """An encoder–decoder for the step's cost: fitted for one update on ``cfg["samples"]`` random-policy
    samples of ``task`` (MuJoCo C), at ``cfg["sizes"]`` (default: the authors' width)."""
    from mskbench.paradigms.latent.data import collect
    from mskbench.paradigms.latent.model import fit

    t0 = time.perf_counter()
    data = collect(task, "random", steps=int(cfg.get("samples", 64)), seed=0)
    model = fit(data, int(cfg.get("dim", 64)), max_updates=1, batch_size=16, **cfg.get("sizes", {}))
    say(f"latent model ({model.latent_dim}, {model.config}) ready in {time.perf_counter() - t0:.1f} s")
    return model


class _OutOfTime(Exception):
    pass


def stage_ppo(p: dict) -> None:
    import jax

    from mskbench.agents.ppo import PPOConfig
    from mskbench.envs.jax_env import TaskJaxEnv
    from mskbench.training.loop import train_loop

    n, rollout = p["num_envs"], p["rollout"]
    per_iter = n * rollout
    say(f"ppo {p['task']} impl={p['impl']} num_envs={n} rollout={rollout} hidden={p['hidden']}: building")
    t0 = time.perf_counter()
    env = TaskJaxEnv(p["task"], n, impl=p["impl"])
    build_s = time.perf_counter() - t0
    # The CLI's --backend jax defaults: as many minibatches per epoch as Table XVI (2048 x 8 / 256 = 64).
    cfg = PPOConfig(num_envs=n, total_steps=per_iter * (p["iterations"] + 1), num_steps=rollout, epochs=p["epochs"],
                    minibatch_size=max(min(256, per_iter), per_iter // 64),
                    hidden=(p["hidden"],) * 2, value_hidden=(p["hidden"],) * 2)
    rows = []

    def on_iteration(row):
        rows.append(row)
        say(f"ppo iteration {row['iteration']}: {row['collect_s']:.1f} s collect, {row['update_s']:.1f} s update")
        if len(rows) >= 2 and time.time() + 1.5 * (rows[-1]["collect_s"] + rows[-1]["update_s"]) > p["deadline"]:
            raise _OutOfTime

    t0 = time.perf_counter()
    try:
        train_loop("ppo", env, cfg, out_dir=p["out_dir"], on_iteration=on_iteration)
    except _OutOfTime:
        say("ppo: stopping early (time budget)")
    total_s = time.perf_counter() - t0
    first = rows[0]
    timed = rows[1:]
    report = {"impl": p["impl"], "num_envs": n, "rollout": rollout, "hidden": p["hidden"], "epochs": p["epochs"],
              "minibatch": cfg.minibatch_size, "steps_per_iteration": per_iter, "build_s": build_s,
              "first_iteration_s": first["collect_s"] + first["update_s"],
              "first_iteration_collect_s": first["collect_s"], "first_iteration_update_s": first["update_s"],
              "timed_iterations": len(timed), "total_s": total_s, "device": str(jax.devices()[0])}
    if timed:
        wall = sum(r["collect_s"] + r["update_s"] for r in timed)
        report.update(train_steps_per_s=per_iter * len(timed) / wall,
                      collect_steps_per_s=per_iter * len(timed) / sum(r["collect_s"] for r in timed),
                      collect_fraction=sum(r["collect_s"] for r in timed) / wall,
                      mean_reward=timed[-1]["mean_reward"], episode_return=timed[-1]["episode_return"])
    emit("ppo", **report)


def stage_eval(p: dict) -> None:
    try:
        from mskbench.eval.batched import run_units_batched
    except ImportError as exc:
        emit("eval", missing=f"mskbench.eval.batched.run_units_batched is not in this checkout ({exc})")
        return
    from mskbench.eval.protocol import eval_units
    from mskbench.eval.store import ResultsStore

    ckpt = Path(p["out_dir"]) / "checkpoint.npz"
    spec = str(ckpt) if ckpt.exists() else "zero"
    episodes = p["episodes"]
    # Two batches of `episodes` worlds when time allows: the first includes building and compiling,
    # the second is a warm batch of the same size.
    batches = p["batches"]
    units = eval_units("gpu-check", [p["task"]], 0, episodes * batches)
    stamps = []
    say(f"eval {p['task']} impl={p['impl']}: {len(units)} episodes in batches of {episodes}, policy {spec}")
    with tempfile.TemporaryDirectory() as tmp, ResultsStore(Path(tmp) / "eval.db") as store:
        t0 = time.perf_counter()
        counts = run_units_batched(units, spec, store, impl=p["impl"], batch_size=episodes,
                                   progress=lambda r: stamps.append(time.perf_counter() - t0))
        wall = time.perf_counter() - t0
        records = store.records(method="gpu-check")
    first = [r for r in records if int(r["seed"]) < episodes]
    report = {"impl": p["impl"], "policy": spec, "episodes_per_batch": episodes, "counts": counts,
              "total_s": wall,
              # includes building the env and compiling; warm_batch_s (below) does not
              "first_batch_s": stamps[episodes - 1] if len(stamps) >= episodes else None,
              "success_rate": 100.0 * sum(bool(r["success"]) for r in first) / max(1, len(first)),
              "mean_return": sum(float(r["episode_return"]) for r in first) / max(1, len(first)),
              "mean_length": sum(int(r["length"]) for r in first) / max(1, len(first))}
    if batches > 1 and len(stamps) >= 2 * episodes:
        report["warm_batch_s"] = stamps[2 * episodes - 1] - stamps[episodes - 1]
    emit("eval", **report)


def stage_mouse(p: dict) -> None:
    """Mouse imitation (issue 5): env and PPO steps/s; with clips, time to a replay error below 1 mm."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from mouse_train_speed import measure

    left = p["deadline"] - time.time()
    say(f"mouse impl={p['impl']} num_envs={p['num_envs']} clips={p['clips'] or 'synthetic'}")
    report = measure("jax", p["impl"], p["num_envs"], p["clips"], hidden=p["hidden"], iterations=p["iterations"],
                     until_mm=1.0 if p["clips"] else None, budget_s=max(10.0, 0.5 * left))
    emit("mouse", **report)


def stage_profile(p: dict) -> None:
    """Where the physics time goes: MuJoCo Warp's per-function trace (``benchmarks/physics_profile.py``)."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from physics_profile import profile_warp

    say(f"profile {p['task']} on MuJoCo Warp, {p['nworld']} worlds, {p['steps']} physics steps")
    row = profile_warp(p["task"], p["nworld"], p["steps"])
    row["trace"] = [r for r in row["trace"] if r["path"].count("/") < 4]  # four levels into the summary
    for r in row["trace"]:
        if r["path"].count("/") < 3:
            say(f"profile {r['path']}: {r['ms_per_step']:.3f} ms per batch step ({100 * r['share']:.1f} %)")
    emit("profile", **row)


def stage_train(p: dict) -> None:
    """A policy trained for a few minutes (``mskbench train --time-limit``), exported for the CPU protocol."""
    from mskbench.agents.checkpoint import export_policy
    from mskbench.cli import main as cli

    run = Path(p["out_dir"]).parent / "train"
    seconds = max(10.0, min(p["seconds"], p["deadline"] - time.time() - p["reserve_s"]))
    args = ["train", p["task"], "--out", str(run), "--backend", "jax", "--impl", p["impl"],
            "--num-envs", str(p["num_envs"]), "--rollout", str(p["rollout"]), "--hidden", str(p["hidden"]),
            "--time-limit", f"{seconds:.0f}s", "--steps", str(10**12),
            # only the last iteration is evaluated: one protocol episode on the host (no second compile)
            "--eval-every-steps", str(10**12), "--eval-env", "cpu", "--eval-episodes", "1"]
    say(f"train: mskbench {' '.join(args)}")
    t0 = time.perf_counter()
    cli.main(args, standalone_mode=False)
    wall = time.perf_counter() - t0
    log = [json.loads(line) for line in (run / "eval_log.jsonl").read_text().splitlines()]
    out = Path(p["policy_out"])
    out.parent.mkdir(parents=True, exist_ok=True)
    export_policy(run / "best.npz", out)
    last = log[-1]
    emit("train", task=p["task"], impl=p["impl"], num_envs=p["num_envs"], time_limit_s=seconds, wall_s=wall,
         iterations=last["iteration"], steps=last["steps"], stopped=last.get("stopped"),
         train_steps_per_s=sum(r["steps_per_s"] for r in log[1:]) / (len(log) - 1) if len(log) > 1 else None,
         final_eval=last.get("eval"), policy=str(out), policy_mb=out.stat().st_size / 1e6,
         evaluate_with=f"mskbench eval --task {p['task']} --policy {out.name} --episodes 50")


STAGE_FUNCS = {"info": stage_info, "env": stage_env, "ppo": stage_ppo, "eval": stage_eval, "mouse": stage_mouse,
               "profile": stage_profile, "train": stage_train}


# -- parent side: the plan, the budget, the summary ------------------------------------------------
def plan(args) -> list[dict]:
    task = args.task
    if args.dry_run:
        # MuJoCo Warp runs on its CPU device (slowly): the GPU path's own code, at tiny sizes.
        warp = "warp" if importlib.util.find_spec("mujoco_warp") else "cpu"
        jax_impl = "cpu"  # MJX on MyoFullBody takes minutes per step to compile on a CPU
        env_sizes, jax_sizes, steps = [2, 4], [2], 5
        ppo = {"num_envs": 2, "rollout": 8, "hidden": 32, "iterations": 2, "epochs": 2}
        episodes, batches = 4, 2
        mouse = {"num_envs": 8, "hidden": 16, "iterations": 1}
        train = {"num_envs": 2, "rollout": 8, "hidden": 32}
        latent_sizes = [2]
        latent = {"dim": 4, "samples": 32,
                  "sizes": {"embed_dim": 8, "heads": 1, "blocks": 1, "encoder_hidden": (16,)}}
    elif args.quick:
        warp, jax_impl = "warp", "jax"
        env_sizes, jax_sizes, steps = [1024, 4096], [256], 50
        ppo = {"num_envs": 2048, "rollout": 32, "hidden": 1024, "iterations": 2, "epochs": 10}
        episodes, batches = 50, 1
        mouse = {"num_envs": 4096, "hidden": 512, "iterations": 2}
        train = {"num_envs": 4096, "rollout": 64, "hidden": 1024}
        latent_sizes, latent = [1024], {"dim": 64}
    else:
        warp, jax_impl = "warp", "jax"
        env_sizes, jax_sizes, steps = [1024, 4096, 8192], [256, 1024], 100
        ppo = {"num_envs": 4096, "rollout": 64, "hidden": 1024, "iterations": 3, "epochs": 10}
        episodes, batches = 50, 2
        mouse = {"num_envs": 4096, "hidden": 512, "iterations": 3}
        train = {"num_envs": 4096, "rollout": 64, "hidden": 1024}
        latent_sizes, latent = [1024, 4096], {"dim": 64}
    mouse["clips"] = args.mouse_clips
    from mskbench import TASK_IDS

    suite = [t for t in TASK_IDS if t != task]
    suite_size = 2 if args.dry_run else 1024
    if args.dry_run:  # two scenes with props of their own: the plumbing, not the speed
        suite = [t for t in ("Catch", "OpenDoor") if t in suite]
    if args.sizes:
        env_sizes = [int(s) for s in args.sizes.split(",")]
    # name, stage, params, share of the remaining budget it may use at most, minimum seconds to start it
    return [
        {"name": "info", "stage": "info", "p": {}, "share": 0.2, "min_s": 10},
        {"name": "env_warp", "stage": "env", "p": {"task": task, "impl": warp, "sizes": env_sizes, "steps": steps},
         "share": 0.4, "min_s": 30},
        {"name": "ppo_warp", "stage": "ppo", "p": {"task": task, "impl": warp, **ppo}, "share": 0.5, "min_s": 45},
        {"name": "eval_warp", "stage": "eval", "p": {"task": task, "impl": warp, "episodes": episodes,
                                                     "batches": batches}, "share": 0.6, "min_s": 30},
        {"name": "mouse_warp", "stage": "mouse", "p": {"impl": warp if warp != "cpu" else "jax", **mouse},
         "share": 0.5, "min_s": 45},
        # Latent-action RL's map inside the step (issue 16): its cost over env_warp at the same size.
        {"name": "env_warp_latent", "stage": "env",
         "p": {"task": task, "impl": warp, "sizes": latent_sizes, "steps": steps, "latent": latent},
         "share": 0.5, "min_s": 60},
        # Where the physics time goes (per MuJoCo Warp function) at the largest size.
        {"name": "warp_profile", "stage": "profile",
         "p": {"task": task, "nworld": env_sizes[-1], "steps": 10 if args.dry_run else 30},
         "share": 0.3, "min_s": 30, "skip": None if warp == "warp" else "needs MuJoCo Warp"},
        # With --train-s: a policy trained for that long, exported to --policy-out for the CPU protocol.
        {"name": "train_warp", "stage": "train",
         "p": {"task": task, "impl": warp, "seconds": args.train_s, "reserve_s": 60.0,
               "policy_out": args.policy_out, **train},
         "share": 1.0, "min_s": 90, "skip": None if args.train_s else "no --train-s"},
        # Every other task's scene (props, terrain, constraints) at one size, while time lasts.
        {"name": "env_warp_suite", "stage": "env",
         "p": {"task": task, "tasks": suite, "impl": warp, "sizes": [suite_size], "steps": steps},
         "share": 0.6, "min_s": 45},
        {"name": "env_jax", "stage": "env", "p": {"task": task, "impl": jax_impl, "sizes": jax_sizes,
                                                  "steps": steps}, "share": 0.7, "min_s": 30},
        # Warp's other CUDA graph modes (env_warp used the default, WARP_STAGED); GPU only.
        {"name": "env_warp_graph", "stage": "env",
         "p": {"task": task, "impl": warp, "sizes": [env_sizes[-1]], "steps": steps,
               "graph_modes": ["WARP_STAGED_EX", "WARP", "JAX"]}, "share": 1.0, "min_s": 60,
         "skip": "no CUDA graphs on the CPU" if args.dry_run else None},
    ]


#: One method's full robustness sweep (issue 4's target: < 1 hour on one H200): per task,
#: 3 perturbation types x 5 scales x 50 episodes.
SWEEP_EPISODES_PER_TASK = 15 * 50


def sweep_projection(stages: dict) -> dict:
    """Projected wall time of a full sweep from the measured env rows (env_warp, env_warp_suite).

    Per measured task, the sweep's 750 episodes run as batches of the measured
    size, each a full horizon of steps (episodes that end early are auto-reset
    and keep the batch busy, so this is an upper bound on stepping), plus the
    measured build and compile time once. Tasks without a measurement are listed.
    """
    import math

    from mskbench.tasks import REGISTRY

    rows = {}
    for name in ("env_warp", "env_warp_suite"):
        for r in stages.get(name, {}).get("sizes", []):
            if r.get("env_steps_per_s") and r.get("task") and r["task"] not in rows:
                rows[r["task"]] = r
    per_task = {}
    for task, r in rows.items():
        batches = math.ceil(SWEEP_EPISODES_PER_TASK / r["num_envs"])
        steps = batches * REGISTRY[task].horizon * r["num_envs"]
        per_task[task] = r["build_s"] + r["compile_s"] + steps / r["env_steps_per_s"]
    return {"episodes_per_task": SWEEP_EPISODES_PER_TASK, "seconds_per_task": per_task,
            "measured_tasks": len(per_task), "total_s_measured": sum(per_task.values()),
            "unmeasured": [t for t in REGISTRY if t not in per_task]}


def gpu_name() -> str | None:
    if shutil.which("nvidia-smi") is None:
        return None
    try:
        out = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version", "--format=csv,noheader"],
                             capture_output=True, text=True, timeout=20)
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def run_child(stage: str, p: dict, timeout: float) -> tuple[list[dict], str | None]:
    """Run one stage in a fresh process; its result lines, and why it stopped early (or None)."""
    cmd = [sys.executable, os.path.abspath(__file__), "--child", stage, "--params", json.dumps(p)]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True)  # stderr: straight to ours
    problem = None
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, _ = proc.communicate()
        problem = f"killed at its time limit ({timeout:.0f} s)"
    rows = []
    for line in out.splitlines():
        if line.startswith(RESULT):
            rows.append(json.loads(line[len(RESULT):]))
        else:
            print(line, flush=True)
    if problem is None and proc.returncode != 0:
        problem = f"exited with status {proc.returncode} (see its traceback above)"
    return rows, problem


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", default="Walk")
    ap.add_argument("--quick", action="store_true", help="fewer sizes and iterations")
    ap.add_argument("--dry-run", action="store_true",
                    help="tiny sizes on any machine: MuJoCo Warp on its CPU device (impl=cpu without it)")
    ap.add_argument("--budget-s", type=float, default=400.0,
                    help="wall-clock budget of all stages together (default 400 s: under 8 minutes with the "
                         "wheel install of gpu_check.sh)")
    ap.add_argument("--sizes", default=None, help="comma-separated num_envs for env_warp (overrides the mode's)")
    ap.add_argument("--skip", default="", help="comma-separated stage names to leave out")
    ap.add_argument("--only", default="", help="comma-separated stage names to run (the others are left out)")
    ap.add_argument("--mouse-clips", default=None,
                    help="mouse clip directory for mouse_warp (also times the replay error's fall below 1 mm); "
                         "default: 8 synthetic clips, speed only")
    ap.add_argument("--train-s", type=float, default=0.0,
                    help="also train a policy on the task for about this many seconds (mskbench train "
                         "--time-limit; Table XVI networks) and export it to --policy-out; default 0: no")
    ap.add_argument("--policy-out", default="gpu_policy.npz",
                    help="where --train-s writes the exported policy (default gpu_policy.npz; evaluate it on "
                         "any machine with mskbench eval --policy FILE)")
    ap.add_argument("--json-out", default=None, help="also write the summary here")
    ap.add_argument("--child", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--params", default=None, help=argparse.SUPPRESS)
    args = ap.parse_args()

    if args.child:
        STAGE_FUNCS[args.child](json.loads(args.params))
        return

    start = time.time()
    deadline = start + args.budget_s
    mode = "dry-run" if args.dry_run else "quick" if args.quick else "full"
    summary = {"mode": mode, "task": args.task, "gpu": gpu_name(), "host": platform.node(),
               "budget_s": args.budget_s, "stages": {}}
    say(f"mode {mode}, budget {args.budget_s:.0f} s, GPU: {summary['gpu'] or 'none found by nvidia-smi'}")
    skip = {s.strip() for s in args.skip.split(",") if s.strip()}
    only = {s.strip() for s in args.only.split(",") if s.strip()}
    stages = plan(args)
    unknown = (skip | only) - {item["name"] for item in stages}
    if unknown:
        ap.error(f"unknown stage(s) {', '.join(sorted(unknown))}; stages: {', '.join(i['name'] for i in stages)}")
    with tempfile.TemporaryDirectory(prefix="gpu_check_") as tmp:
        for item in stages:
            name = item["name"]
            if name in skip or (only and name not in only) or item.get("skip"):
                summary["stages"][name] = {"skipped": item.get("skip") or ("--skip" if name in skip else "--only")}
                continue
            left = deadline - time.time()
            if left < item["min_s"]:
                summary["stages"][name] = {"skipped": f"time budget ({left:.0f} s left)"}
                say(f"{name}: skipped, {left:.0f} s left")
                continue
            timeout = max(item["min_s"], item["share"] * left)
            p = {**item["p"], "deadline": time.time() + timeout - 5.0, "out_dir": os.path.join(tmp, "ppo")}
            say(f"{name}: starting (at most {timeout:.0f} s)")
            t0 = time.time()
            rows, problem = run_child(item["stage"], p, timeout)
            entry: dict = {"wall_s": time.time() - t0}
            if item["stage"] == "env":
                entry["impl"] = p["impl"]
                entry["sizes"] = [{k: v for k, v in r.items() if k != "kind"} for r in rows]
            elif rows:
                entry.update({k: v for k, v in rows[-1].items() if k != "kind"})
            if problem:
                entry["problem"] = problem
            summary["stages"][name] = entry
            say(f"{name}: done in {entry['wall_s']:.0f} s" + (f" ({problem})" if problem else ""))
    summary["sweep_projection"] = sweep_projection(summary["stages"])
    summary["total_s"] = time.time() - start
    text = json.dumps(summary, indent=2)
    print("GPU_CHECK_SUMMARY " + json.dumps(summary))
    print(text)
    if args.json_out:
        Path(args.json_out).write_text(text + "\n")


if __name__ == "__main__":
    main()

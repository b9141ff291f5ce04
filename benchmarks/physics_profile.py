"""Where a MyoFullBody physics step spends its time, stage by stage.

Two backends, the same scenes (each task's model as the environments build it):

* ``--impl cpu``: MuJoCo C. A task env steps random actions; MuJoCo's own
  per-stage timers (``mjData.timer``) give the time per physics step of each
  stage. MuJoCo times the tendons together with the kinematics; that timer is
  split by the share of ``mj_tendon`` in ``mj_kinematics + mj_comPos +
  mj_tendon`` timed alone (at the last state, interleaved, 200 rounds). Also: contacts, constraint rows and Newton iterations.
* ``--impl warp``: MuJoCo Warp at ``--nworld`` worlds, the buffers the batched
  envs use, started from the task's initial states (episode seeds 0..15,
  repeated) with uniform random excitations held for a control step (10
  physics steps). First the physics steps/s (on a GPU: one ``mujoco_warp.step``
  captured as a CUDA graph and replayed, as MuJoCo Warp's ``testspeed`` does),
  then a per-function trace from MuJoCo Warp's own event tracer (CUDA events
  around every function it marks; the time of each function per physics
  step, nested as MuJoCo Warp calls them). On Warp's CPU device, where there
  are no CUDA events, the same tracer is fed host clocks (CPU kernels run
  synchronously); those timings are the CPU kernels', a rehearsal of the GPU
  run, not a forecast of it.

    python benchmarks/physics_profile.py --impl cpu --tasks all [--steps 100] [--json-out F]
    python benchmarks/physics_profile.py --impl warp --tasks Walk --nworld 8192 [--steps 30] [--json-out F]

``benchmarks/gpu_check.py`` runs the Warp profile of Walk on the GPU (stage
``warp_profile``).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import time
import types

import numpy as np

#: MuJoCo C's timers, as the stages of one physics step (leaves only; ``tendon`` is timed apart).
CPU_STAGES = {
    "kinematics": "mjTIMER_POS_KINEMATICS",   # body poses, CoM, and (until taken out) the tendons
    "inertia": "mjTIMER_POS_INERTIA",         # mass matrix and its factorisation
    "collision": "mjTIMER_POS_COLLISION",
    "constraint_make": "mjTIMER_POS_MAKE",
    "constraint_project": "mjTIMER_POS_PROJECT",
    "velocity": "mjTIMER_VELOCITY",
    "actuation": "mjTIMER_ACTUATION",         # muscle forces and activation dynamics
    "solver": "mjTIMER_CONSTRAINT",
    "integration": "mjTIMER_ADVANCE",
}


def _timers(mujoco, d) -> dict:
    """MuJoCo's accumulated (seconds, calls) of each stage timer and of the whole step."""
    timers = {name: d.timer[int(getattr(mujoco.mjtTimer, name))] for name in [*CPU_STAGES.values(), "mjTIMER_STEP"]}
    return {name: (t.duration, t.number) for name, t in timers.items()}


def profile_cpu(task: str, steps: int = 100, seed: int = 0, repeats: int = 200) -> dict:
    """MuJoCo C's time per physics step of each stage, over ``steps`` control steps of random actions."""
    import mujoco

    from mskbench.envs import MSKEnv

    env = MSKEnv(task)
    env.reset(seed=seed)
    m, d = env.sim.model, env.sim.data
    rng = np.random.default_rng(seed)
    total = {k: [0.0, 0] for k in _timers(mujoco, d)}
    ncon, nefc, niter = [], [], []
    episode = seed
    for _ in range(steps):
        before = _timers(mujoco, d)
        _, _, terminated, truncated, _ = env.step(rng.uniform(-1.0, 1.0, env.action_space.shape))
        after = _timers(mujoco, d)
        for k in total:
            total[k][0] += after[k][0] - before[k][0]
            total[k][1] += after[k][1] - before[k][1]
        ncon.append(d.ncon)
        nefc.append(d.nefc)
        niter.append(int(d.solver_niter[0]))
        if terminated or truncated:
            episode += 1
            env.reset(seed=episode)
    n_phys = total["mjTIMER_STEP"][1]
    per_step = {stage: 1e6 * total[name][0] / n_phys for stage, name in CPU_STAGES.items()}  # µs
    # Split MuJoCo's kinematics timer by the tendons' share of its parts, timed alone, interleaved.
    parts = {"kinematics": [mujoco.mj_kinematics, mujoco.mj_comPos], "tendon": [mujoco.mj_tendon]}
    spent = dict.fromkeys(parts, 0.0)
    for _ in range(repeats):
        for name, fns in parts.items():
            t0 = time.perf_counter()
            for fn in fns:
                fn(m, d)
            spent[name] += time.perf_counter() - t0
    tendon_fraction = spent["tendon"] / sum(spent.values())
    per_step["tendon"] = tendon_fraction * per_step["kinematics"]
    per_step["kinematics"] -= per_step["tendon"]
    step_us = 1e6 * total["mjTIMER_STEP"][0] / n_phys
    per_step["other"] = max(step_us - sum(per_step.values()), 0.0)  # transmission, acceleration, checks
    env.close()
    return {"task": task, "impl": "cpu", "physics_steps": n_phys, "step_us": step_us,
            "stage_us": per_step, "share": {k: v / step_us for k, v in per_step.items()},
            "ncon_mean": float(np.mean(ncon)), "nefc_mean": float(np.mean(nefc)),
            "solver_iterations_mean": float(np.mean(niter)), "solver_iterations_max": int(np.max(niter)),
            "ntendon": int(m.ntendon), "nwrap": int(m.nwrap), "ngeom": int(m.ngeom), "nv": int(m.nv)}


# -- MuJoCo Warp -------------------------------------------------------------------------------
def _sum_trace(a: dict, b: dict) -> dict:
    """Add one call's trace ({name: (event times, sub-trace)}) to the running total ({name: [ms, count, sub]})."""
    for name, (events, sub) in b.items():
        entry = a.setdefault(name, [0.0, 0, {}])
        entry[0] += float(sum(events))
        entry[1] += len(events)
        _sum_trace(entry[2], sub)
    return a


def _trace_rows(total: dict, steps: int, step_ms: float, prefix: str = "") -> list[dict]:
    rows = []
    for name, (ms, count, sub) in sorted(total.items(), key=lambda kv: -kv[1][0]):
        path = f"{prefix}/{name}" if prefix else name
        rows.append({"path": path, "ms_per_step": ms / steps, "calls_per_step": count / steps,
                     "share": ms / steps / step_ms if step_ms else None})
        rows.extend(_trace_rows(sub, steps, step_ms, path))
    return rows


class _HostEvent:
    __slots__ = ("t",)

    def __init__(self, *args, **kwargs):
        self.t = 0.0


class _HostClockWarp:
    """Warp as the tracer module sees it, with events on the host clock."""

    Event = _HostEvent

    def __init__(self, wp):
        self._wp = wp

    def __getattr__(self, name):
        return getattr(self._wp, name)

    @staticmethod
    def record_event(event, *args, **kwargs):
        event.t = time.perf_counter()

    @staticmethod
    def get_event_elapsed_time(beg, end, *args, **kwargs):
        return 1e3 * (end.t - beg.t)


@contextlib.contextmanager
def _host_clock_tracer(warp_util):
    """MuJoCo Warp's event tracer on host clocks (Warp's CPU device has no CUDA events).

    Swaps, for the duration, the three event functions the tracer module calls
    (and its check for CUDA-graph while-loops, which do not exist on the CPU
    and whose stack walk would dominate the timings) for host equivalents.
    """
    wp, inspect = warp_util.wp, warp_util.inspect
    warp_util.wp = _HostClockWarp(wp)
    warp_util.inspect = types.SimpleNamespace(stack=lambda *a, **k: [])
    try:
        with warp_util.EventTracer() as tracer:
            yield tracer
    finally:
        warp_util.wp, warp_util.inspect = wp, inspect


def profile_warp(task: str, nworld: int, steps: int = 30, seed: int = 0, frame_skip: int = 10) -> dict:
    """Physics steps/s and MuJoCo Warp's per-function trace for ``nworld`` worlds of ``task``'s scene."""
    from mskbench.envs import MSKEnv
    from mskbench.sim.mjwarp import STATE_SIG, warp_data, warp_imports, warp_model

    wp, mjw = warp_imports()
    wp.config.log_level = wp.LOG_WARNING  # no per-module load messages
    from mujoco_warp._src import warp_util  # MuJoCo Warp's tracer (what its testspeed reports)

    env = MSKEnv(task)
    model = env.sim.model
    starts = []
    for s in range(min(nworld, 16)):
        env.reset(seed=seed + s)
        starts.append(env.sim.get_state())  # STATE_SIG's layout
    env.close()
    init = np.resize(np.stack(starts), (nworld, len(starts[0]))).astype(np.float32)
    rng = np.random.default_rng(seed)
    device = wp.get_device()
    cuda = device.is_cuda
    with wp.ScopedDevice(device):
        t0 = time.perf_counter()
        m, d = warp_model(model), warp_data(model, nworld)
        state0 = wp.array(init, dtype=float)
        ctrls = [wp.array(rng.uniform(0.0, 1.0, (nworld, model.nu)).astype(np.float32), dtype=float)
                 for _ in range(4)]
        build_s = time.perf_counter() - t0

        def restart():
            mjw.set_state(m, d, state0, STATE_SIG)
            wp.copy(d.ctrl, ctrls[0])

        restart()
        t0 = time.perf_counter()
        mjw.step(m, d)  # loads (or compiles) every kernel
        wp.synchronize_device(device)
        first_step_s = time.perf_counter() - t0

        def run(step_fn, trace_fn=None):
            restart()
            niter, nacon, nefc, trace, wall = [], [], [], {}, 0.0
            for i in range(steps):
                if i % frame_skip == 0:
                    wp.copy(d.ctrl, ctrls[(i // frame_skip) % len(ctrls)])
                wp.synchronize_device(device)
                t = time.perf_counter()
                step_fn()
                wp.synchronize_device(device)
                wall += time.perf_counter() - t
                if trace_fn is not None and cuda:  # the graph's events hold this launch's times
                    _sum_trace(trace, trace_fn())
                niter.append(d.solver_niter.numpy())
                nacon.append(int(d.nacon.numpy()[0]) / nworld)
                nefc.append(d.nefc.numpy())
            if trace_fn is not None and not cuda:  # every call recorded events of its own
                _sum_trace(trace, trace_fn())
            return wall, trace, np.concatenate(niter), np.asarray(nacon), np.concatenate(nefc)

        def launcher():
            if not cuda:
                return lambda: mjw.step(m, d)
            with wp.ScopedCapture() as capture:
                mjw.step(m, d)
            return lambda: wp.capture_launch(capture.graph)

        wall, _, niter, nacon, nefc = run(launcher())
        if cuda:
            with warp_util.EventTracer() as tracer:
                traced_wall, trace, *_ = run(launcher(), tracer.trace)
        else:
            with _host_clock_tracer(warp_util) as tracer:
                traced_wall, trace, *_ = run(launcher(), tracer.trace)
    step_ms = sum(v[0] for v in trace.values()) / steps
    return {"task": task, "impl": "warp", "device": str(device), "device_name": getattr(device, "name", None),
            "nworld": nworld, "physics_steps": steps, "build_s": build_s, "first_step_s": first_step_s,
            "physics_steps_per_s": steps * nworld / wall,
            "env_steps_per_s_physics_only": steps * nworld / wall / frame_skip,
            "traced_step_ms": step_ms, "untraced_step_ms": 1e3 * wall / steps, "traced_wall_s": traced_wall,
            "solver_iterations_mean": float(niter.mean()), "solver_iterations_max": int(niter.max()),
            "solver_iterations_limit": int(model.opt.iterations),
            "contacts_per_world_mean": float(nacon.mean()), "nefc_mean": float(nefc.mean()),
            "trace": _trace_rows(trace, steps, step_ms)}


# -- command line ------------------------------------------------------------------------------
def _print_cpu(rows: list[dict]) -> None:
    cols = ["tendon", "kinematics", "inertia", "collision", "constraint_make", "solver", "actuation",
            "velocity", "integration", "other"]
    print(f"{'task':15s} {'µs/step':>8s} " + " ".join(f"{c[:9]:>9s}" for c in cols) + "   ncon  nefc  iters")
    for r in rows:
        print(f"{r['task']:15s} {r['step_us']:8.1f} " + " ".join(f"{100 * r['share'][c]:8.1f}%" for c in cols)
              + f" {r['ncon_mean']:6.1f} {r['nefc_mean']:5.0f} {r['solver_iterations_mean']:6.2f}")


def _print_warp(r: dict, depth: int = 3) -> None:
    print(f"{r['task']} on MuJoCo Warp ({r['device']}, {r['nworld']} worlds): "
          f"{r['physics_steps_per_s']:,.0f} physics steps/s = {r['env_steps_per_s_physics_only']:,.0f} control "
          f"steps/s (physics only); {r['untraced_step_ms']:.2f} ms per batch step; first step "
          f"{r['first_step_s']:.1f} s; solver iterations mean {r['solver_iterations_mean']:.2f} "
          f"(max {r['solver_iterations_max']} of {r['solver_iterations_limit']}); "
          f"{r['contacts_per_world_mean']:.1f} contacts and {r['nefc_mean']:.0f} constraint rows per world")
    for row in r["trace"]:
        level = row["path"].count("/")
        if level < depth:
            print(f"  {'  ' * level}{row['path'].rsplit('/', 1)[-1]:{34 - 2 * level}s} "
                  f"{row['ms_per_step']:9.3f} ms {100 * row['share']:6.1f}%  x{row['calls_per_step']:g}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--impl", choices=["cpu", "warp"], default="cpu")
    ap.add_argument("--tasks", default="Walk", help="comma-separated task names, or 'all' (default Walk)")
    ap.add_argument("--steps", type=int, default=None,
                    help="control steps (cpu, default 100) or physics steps (warp, default 30)")
    ap.add_argument("--nworld", type=int, default=8192, help="worlds for --impl warp (default 8192)")
    ap.add_argument("--depth", type=int, default=3, help="levels of the Warp trace to print (default 3)")
    ap.add_argument("--json-out", default=None)
    args = ap.parse_args()

    from mskbench import TASK_IDS

    tasks = list(TASK_IDS) if args.tasks == "all" else [t.strip() for t in args.tasks.split(",") if t.strip()]
    unknown = [t for t in tasks if t not in TASK_IDS]
    if unknown:
        ap.error(f"unknown task(s) {', '.join(unknown)}; valid: all, {', '.join(TASK_IDS)}")
    if args.impl == "cpu":
        rows = [profile_cpu(t, args.steps or 100) for t in tasks]
        _print_cpu(rows)
    else:
        rows = [profile_warp(t, args.nworld, args.steps or 30) for t in tasks]
        for r in rows:
            _print_warp(r, args.depth)
    if args.json_out:
        with open(args.json_out, "w") as f:
            json.dump(rows, f, indent=2)


if __name__ == "__main__":
    main()

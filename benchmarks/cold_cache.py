"""Why the CPU env's time outside ``mj_step`` is 3-4x its warm cost: what ~7 ms of any other work does
to the next few microseconds of NumPy.

The env's own work per control step (action check, task signals, observation,
info) costs ~0.2-0.3 ms when timed warm in a tight loop, but 0.8-1.0 ms
between two ``mj_step(nstep=10)`` calls (``benchmarks/env_speed.py``). This
script times one small NumPy function (two ``isfinite(...).all()`` on
MyoFullBody-sized vectors) and one small pure-Python function right after
different kinds of preceding work of about one control step's length:

* nothing (warm);
* ``mj_step(nstep=10)`` on MyoFullBody (the env's physics);
* a pure-Python busy loop of 0.1 / 1 / 3 / 7 ms (a few bytes of state, no
  clock read or system call inside) and ``time.sleep(0.007)``.

Measured on the 2-core development VM (medians, µs; NumPy function / Python
function): warm 3.0 / 2.3; after the physics 16 / 19; after the 7 ms busy
loop 75 / 14, after 3 ms 33 / 9, after 1 ms 9 / 5; after sleeping 7 ms
108 / 28. A loop that touches no memory leaves the next NumPy call slower
than the physics does, and the cost grows with the loop's length: on this
machine the caches the interpreter and NumPy run from decay with wall time,
not only through what the physics touches. The env's step runs many
distinct NumPy code paths once each, and pays this on each of them.

    OMP_NUM_THREADS=1 python benchmarks/cold_cache.py
"""

from __future__ import annotations

import json
import os
import time

os.environ.setdefault("OMP_NUM_THREADS", "1")

import numpy as np  # noqa: E402


def _numpy_fn(a, b):
    return bool(np.isfinite(a).all() and np.isfinite(b).all())


def _python_fn():
    s = 0
    for i in range(100):
        s += i
    return s


def _spin(n: int) -> int:
    """A pure-Python busy loop: a few bytes of state, no memory traffic, no system call."""
    s = 0
    for i in range(n):
        s ^= i
    return s


def _time_after(work, fn, n: int = 200) -> float:
    """Median time (µs) of ``fn()`` right after ``work()``."""
    times = []
    for _ in range(n):
        work()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return round(1e6 * float(np.median(times)), 1)


def main() -> None:
    import mujoco

    from mskbench.envs import MSKEnv

    env = MSKEnv("Walk")
    env.reset(seed=0)
    m, d = env.model, env.data
    a, b = np.zeros(m.nq), np.zeros(m.nu)

    def count_for(seconds: float) -> int:  # loop iterations that take about this long (no clock read inside)
        n, t = 10_000, time.perf_counter()
        _spin(n)
        return max(1, int(n * seconds / (time.perf_counter() - t)))

    def spin(seconds: float):
        n = count_for(seconds)
        return lambda: _spin(n)

    def physics():
        mujoco.mj_step(m, d, nstep=10)
        if not np.isfinite(d.qpos).all():
            env.reset(seed=0)

    cases = {"nothing": lambda: None, "mj_step x10": physics, "sleep 7 ms": lambda: time.sleep(0.007)}
    cases.update({f"python loop {ms} ms": spin(ms / 1000) for ms in (0.1, 1, 3, 7)})
    for name, work in cases.items():
        print(json.dumps({"after": name, "numpy_fn_us": _time_after(work, lambda: _numpy_fn(a, b)),
                          "python_fn_us": _time_after(work, _python_fn)}))


if __name__ == "__main__":
    main()

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
* a pure-Python busy loop (touches almost no memory) and ``time.sleep``.

If only the physics evicted the env's working set, the busy loop would leave
the next call warm. It does not: after any ~7 ms, the small NumPy call costs
~20x its warm time, and the cost grows with the length of the preceding work
(0.1 / 1 / 3 / 7 ms are reported). On this shared 2-core virtual machine the
caches the Python and NumPy code paths run from are lost with wall time, not
only through the physics, so the env's outside-physics cost there scales with
the breadth of the code it runs per step.

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

    def spin(seconds: float):
        def work():
            t = time.perf_counter()
            while time.perf_counter() - t < seconds:
                pass
        return work

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

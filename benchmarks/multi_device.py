"""Steps per second of data-parallel batched PPO against the number of devices.

Each device count runs in its own process (JAX fixes the device list when it starts): on a CPU the devices
are forced host devices (``XLA_FLAGS=--xla_force_host_platform_device_count=N``), which share the machine's
cores, so the ratio says what the sharding costs or gains on this machine, not what N GPUs would give. On a
GPU machine the counts run over its GPUs (``--platform gpu``; counts above the GPUs there are skipped).

The environment is :class:`ToyReach`, a pure-JAX batched env (a point in the plane steered to a target
drawn per world), so the measurement is the learner's rollout, update and collectives, not a physics engine.
``--task`` instead trains on a real task's batched env (``--impl``, default ``cpu``). ``--eval`` times the
batched evaluation instead (:func:`mskbench.eval.batched.run_units_batched`, the passive policy on ``--task``,
default Stand, cut to ``--horizon`` steps): ``--iterations`` batches of ``--num-envs`` units.

Usage::

    python benchmarks/multi_device.py                       # 1, 2, 4 forced CPU devices
    python benchmarks/multi_device.py --eval --num-envs 16 --iterations 3
    python benchmarks/multi_device.py --devices 1 2 --num-envs 64 --iterations 3 --json out.json
    python benchmarks/multi_device.py --platform gpu --devices 1 --num-envs 4096
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

SRC = Path(__file__).resolve().parents[1] / "src"


class ToyReach:
    """A batched env (:class:`~mskbench.envs.protocols.BatchedEnv`) without physics: each world is a point
    ``p`` in the plane and a target ``g``; an action ``a`` in [-1, 1]^2 moves ``p`` by ``0.2 a``; the reward is
    ``-|p - g|^2``; an episode lasts ``horizon`` steps, then the world restarts at the origin with a new
    target drawn from its own key. Every world's randomness is its own key's, so a shard of worlds steps
    exactly as the same worlds in the whole batch."""

    termination_names = ("time_limit",)

    def __init__(self, num_envs: int, horizon: int = 8):
        self.num_envs, self.horizon = int(num_envs), int(horizon)
        self.obs_size, self.action_size = 4, 2
        self.obs_layout = {"task/reference": slice(0, 2), "position": slice(2, 4)}

    def _world(self, key):
        import jax
        import jax.numpy as jnp

        from mskbench.envs.protocols import World

        key, k_target = jax.random.split(key)
        target = jax.random.uniform(k_target, (2,), minval=-1.0, maxval=1.0)
        pos = jnp.zeros(2)
        zero = jnp.zeros((), jnp.int32)
        return World(pos, {"target": target}, jnp.concatenate([target, pos]), zero, jnp.zeros((), bool),
                     jnp.zeros((), bool), key, jnp.float32(0), jnp.float32(0), None, zero, zero)

    def reset(self, key):
        import jax
        import jax.numpy as jnp

        from mskbench.envs.protocols import Bank, State

        k_worlds, k_next = jax.random.split(key)
        worlds = jax.vmap(self._world)(jax.random.split(k_worlds, self.num_envs))
        return State(worlds, Bank(None, {}, None, None), jnp.int32(0), jnp.int32(0), k_next)

    def _step_one(self, w, action):
        import jax
        import jax.numpy as jnp

        from mskbench.envs.protocols import StepOut

        pos = w.data + 0.2 * jnp.clip(action, -1.0, 1.0)
        target = w.task["target"]
        reward = -jnp.sum((pos - target) ** 2)
        steps = w.steps + 1
        truncated = steps >= self.horizon
        final = jnp.concatenate([target, pos])
        fresh = self._world(w.key)
        stepped = w._replace(data=pos, obs=final, steps=steps, done=truncated)
        new = jax.tree_util.tree_map(lambda a, b: jnp.where(truncated, a, b), fresh, stepped)
        out = StepOut(new.obs, reward, jnp.zeros((), bool), truncated, final, jnp.zeros((), bool),
                      {"distance": -reward}, jnp.where(truncated, 0, -1), None)
        return new, out

    def step(self, state, actions, auto_reset=True, record=False):
        import jax

        worlds, out = jax.vmap(self._step_one)(state.worlds, actions)
        return state._replace(worlds=worlds), out

    def refresh(self, state):
        return state


def tiny_config(num_envs: int, devices: int, **overrides):
    """A PPO config small enough for a test: 8-step rollouts, 2 epochs of 4 minibatches, 16-wide networks."""
    from mskbench.agents.ppo import PPOConfig

    base = dict(num_envs=num_envs, devices=devices, num_steps=8, epochs=2, minibatch_size=num_envs * 2,
                hidden=(16, 16), value_hidden=(16, 16), learning_rate=3e-3, seed=3, total_steps=10**9)
    return PPOConfig(**{**base, **overrides})


def train_toy(devices: int, num_envs: int, iterations: int, **overrides) -> dict:
    """``iterations`` PPO iterations on :class:`ToyReach`; the parameters reached, the log rows, and the
    steps per second of the iterations after the first (which compiles)."""
    import jax

    from mskbench.agents.data_parallel import local
    from mskbench.agents.ppo import PPOLearner

    learner = PPOLearner(ToyReach(num_envs), tiny_config(num_envs, devices, **overrides))
    rows, times = [], []
    for _ in range(iterations):
        t0 = time.perf_counter()
        rows.append(learner.iterate())
        jax.block_until_ready(learner.state.params)
        times.append(time.perf_counter() - t0)
    params = jax.tree_util.tree_map(np.asarray, local(learner.state.params))
    timed = times[1:] or times
    return {"params": params, "rows": rows, "norm_mean": learner.state.norm.mean,
            "steps_per_s": num_envs * learner.cfg.num_steps * len(timed) / sum(timed),
            "devices_seen": jax.device_count()}


def train_task(task: str, impl: str, devices: int, num_envs: int, iterations: int) -> dict:
    """As :func:`train_toy` on ``task``'s batched env."""
    import jax

    from mskbench.agents.ppo import PPOLearner
    from mskbench.envs.jax_env import TaskJaxEnv

    env = TaskJaxEnv(task, num_envs, impl=impl, devices=devices)
    learner = PPOLearner(env, tiny_config(num_envs, devices))
    times = []
    for _ in range(iterations):
        t0 = time.perf_counter()
        learner.iterate()
        jax.block_until_ready(learner.state.params)
        times.append(time.perf_counter() - t0)
    timed = times[1:] or times
    return {"steps_per_s": num_envs * learner.cfg.num_steps * len(timed) / sum(timed)}


def eval_task(task: str, impl: str, devices: int, num_envs: int, iterations: int, horizon: int) -> dict:
    """The batched evaluation of the passive policy: ``iterations`` batches of ``num_envs`` units of ``task`` cut
    to ``horizon`` steps. Steps per second: the episode steps of the batches after the first (which compiles)
    over their wall time (a record's ``wall_time_s`` is its batch's wall time over its units)."""
    import tempfile

    from mskbench.eval.batched import run_units_batched
    from mskbench.eval.protocol import Unit
    from mskbench.eval.store import ResultsStore
    from mskbench.tasks import make_task

    t = make_task(task)
    t.horizon = horizon
    units = [Unit("passive", t.name, "none", 0.0, seed) for seed in range(num_envs * iterations)]
    with tempfile.TemporaryDirectory() as tmp, ResultsStore(Path(tmp) / "results.db") as store:
        run_units_batched(units, "passive", store, impl=impl, batch_size=num_envs, tasks={t.name: t},
                          devices=devices)
        records = store.records()
    timed = [r for r in records if r["seed"] >= num_envs] or records
    return {"steps_per_s": sum(r["length"] for r in timed) / sum(r["wall_time_s"] for r in timed)}


def _child(args) -> None:
    if args.eval:
        out = eval_task(args.task or "Stand", args.impl, args.child, args.num_envs, args.iterations, args.horizon)
    elif args.task:
        out = train_task(args.task, args.impl, args.child, args.num_envs, args.iterations)
    else:
        out = train_toy(args.child, args.num_envs, args.iterations)
        out = {"steps_per_s": out["steps_per_s"]}
    print(json.dumps(out))


def measure(devices: int, args) -> dict:
    """One device count, in a fresh process."""
    env = dict(os.environ, PYTHONPATH=f"{SRC}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    if args.platform == "cpu":
        env.update(JAX_PLATFORMS="cpu", XLA_FLAGS=f"--xla_force_host_platform_device_count={devices}")
    cmd = [sys.executable, __file__, "--child", str(devices), "--num-envs", str(args.num_envs),
           "--iterations", str(args.iterations), "--impl", args.impl, "--horizon", str(args.horizon)]
    cmd += (["--task", args.task] if args.task else []) + (["--eval"] if args.eval else [])
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=args.timeout)
    if done.returncode != 0:
        raise RuntimeError(f"{devices} devices failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--devices", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--num-envs", type=int, default=256)
    parser.add_argument("--iterations", type=int, default=4, help="timed: all but the first (compilation)")
    parser.add_argument("--platform", choices=["cpu", "gpu"], default="cpu")
    parser.add_argument("--task", default=None, help="a task id: train on its batched env instead of ToyReach")
    parser.add_argument("--impl", choices=["cpu", "warp", "jax"], default="cpu")
    parser.add_argument("--eval", action="store_true",
                        help="time the batched evaluation (passive policy on --task, default Stand) instead")
    parser.add_argument("--horizon", type=int, default=20, help="--eval: the task's episodes cut to this many steps")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per device count")
    parser.add_argument("--json", type=Path, default=None, help="also write the rows here")
    parser.add_argument("--child", type=int, default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        _child(args)
        return
    bad = [d for d in args.devices if d < 1 or args.num_envs % d]
    if bad:
        valid = [d for d in range(1, args.num_envs + 1) if args.num_envs % d == 0][:12]
        parser.error(f"--devices {bad} must divide --num-envs {args.num_envs}; valid: {valid}")
    rows = []
    for d in args.devices:
        try:
            r = measure(d, args)
        except RuntimeError as exc:
            print(f"{d} devices: skipped ({str(exc).splitlines()[-1]})", file=sys.stderr)
            continue
        rows.append({"devices": d, "num_envs": args.num_envs, "steps_per_s": r["steps_per_s"]})
    base = rows[0]["steps_per_s"] if rows else None
    env = f"evaluation of passive on {args.task or 'Stand'} ({args.horizon} steps)" if args.eval \
        else args.task or "ToyReach"
    print(f"{env}, {args.num_envs} worlds, {args.platform} ({os.cpu_count()} cores)")
    print(f"{'devices':>8} {'steps/s':>12} {'vs first':>9}")
    for r in rows:
        r["ratio"] = r["steps_per_s"] / base
        print(f"{r['devices']:>8} {r['steps_per_s']:>12.0f} {r['ratio']:>9.2f}")
    if args.json is not None:
        args.json.write_text(json.dumps({"env": env, "platform": args.platform, "cpu_count": os.cpu_count(),
                                         "iterations": args.iterations, "rows": rows}, indent=2))


if __name__ == "__main__":
    main()

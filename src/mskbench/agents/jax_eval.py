"""Deterministic policy evaluation on a batched JAX environment, for training.

``mskbench train --backend jax`` picks ``best.npz`` by this evaluation: the
deterministic policy (the one ``mskbench eval --policy RUN`` runs) on one
world per episode seed, each world started exactly as the CPU protocol
environment starts that seed (:meth:`TaskJaxEnv.reset_to
<mskbench.envs.jax_env.TaskJaxEnv.reset_to>`: same initial state, no
perturbation), stepped without auto-reset until every world has ended or the
task's horizon is reached — one jitted ``lax.while_loop`` on the device.

Only the physics implementation differs from the protocol (``impl`` of the
environment: MJX or MuJoCo Warp instead of MuJoCo C; with ``impl="cpu"`` it
is MuJoCo C too), so returns are comparable with ``mskbench eval`` but not
bit-identical.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from mskbench.agents.ppo import normalize


class BatchedEvaluator:
    """``evaluator(policy) -> dict`` for policies from :func:`mskbench.agents.ppo.make_policy`.

    Parameters
    ----------
    env:
        A :class:`~mskbench.envs.jax_env.TaskJaxEnv` (any ``impl``); on
        MuJoCo Warp each batch size has its own buffers, allocated by
        ``reset_to``.
    seeds:
        Episode seeds, one world each.
    """

    def __init__(self, env, seeds: Sequence[int]):
        import jax

        self.env = env
        self.seeds = [int(s) for s in seeds]
        if not self.seeds:
            raise ValueError("no evaluation seeds given")
        self._start = jax.block_until_ready(env.reset_to(self.seeds))
        self._apply: Callable | None = None
        self._run: Callable[..., Any] | None = None  # the jitted evaluation of ``_apply`` (built on first use)

    def _build(self, apply, clip: float):
        import jax
        import jax.numpy as jnp

        env = self.env
        horizon = int(env.task.horizon)
        n = len(self.seeds)
        native = type(env.task).native_counts()  # the paper's rule: Table XII, or a native solved seen

        def run(params, mean, std, state):
            def cond(c):
                t, s = c[0], c[1]
                return (t < horizon) & jnp.logical_not(jnp.all(s.done))

            def body(c):
                t, s, ret, length, success, term = c
                x = normalize(s.obs, mean, std, clip, jnp)
                alive = jnp.logical_not(s.done)
                s, out = env.step(s, apply(params, x), auto_reset=False)
                ended = out.terminated | out.truncated  # zero once a world has ended
                solved = (ended & out.success) | (out.solved_native if native else False)
                return (t + 1, s, ret + out.reward, length + alive.astype(jnp.int32),
                        success | solved, jnp.where(ended, out.termination, term))

            init = (jnp.int32(0), state, jnp.zeros(n, jnp.float32), jnp.zeros(n, jnp.int32),
                    jnp.zeros(n, bool), jnp.full(n, -1, jnp.int32))
            _, _, ret, length, success, term = jax.lax.while_loop(cond, body, init)
            return ret, length, success, term

        return jax.jit(run)

    def __call__(self, policy) -> dict:
        import jax.numpy as jnp

        norm = policy.norm
        if self._run is None or policy.apply is not self._apply:
            self._apply = policy.apply
            self._run = self._build(policy.apply, float(norm.clip))
        t0 = time.perf_counter()
        mean = jnp.asarray(norm.mean, jnp.float32)
        std = jnp.asarray(np.sqrt(norm.var + 1e-8), jnp.float32)
        ret, length, success, term = (np.asarray(x) for x in self._run(policy.params, mean, std, self._start))
        names = self.env.termination_names
        counts: dict[str, int] = {}
        for code in term:
            # -1: still running at the horizon cap (cannot happen: the horizon truncates).
            name = names[code] if code >= 0 else "running"
            counts[name] = counts.get(name, 0) + 1
        return {"mean_return": float(ret.mean()), "success_rate": 100.0 * float(success.mean()),
                "mean_length": float(length.mean()), "terminations": counts, "episodes": len(self.seeds),
                "wall_s": time.perf_counter() - t0}

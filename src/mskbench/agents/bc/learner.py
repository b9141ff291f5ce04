"""The DAgger learner (:class:`BCLearner`): each iteration collects labelled steps in the worlds
(:class:`~mskbench.agents.bc.worlds.WorldPool`), aggregates them into the data set and fits the student
(:func:`make_fit`)."""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mskbench.agents.base import savez_atomic
from mskbench.agents.bc.checkpoint import BCState, load_checkpoint, save_checkpoint
from mskbench.agents.bc.config import BCConfig
from mskbench.agents.bc.student import ActivationSpace, read_demos, stack_members
from mskbench.agents.bc.worlds import WorldPool
from mskbench.agents.ppo_networks import RunningNorm, _jax, adam_init, adam_update, mlp_apply, mlp_init

#: The data set's folder beside the checkpoint: one ``NNNNN.npz`` per iteration.
DATA_DIR = "dagger"
#: Bounds of the fitted log-std (std 0.02 .. 0.61, PPO's initial).
LOG_STD_RANGE = (-4.0, -0.5)


def make_fit(cfg: BCConfig, space: ActivationSpace | None = None):
    """Jitted ``fit(params, opt_state, obs, labels, acts, idx) -> (params, opt_state, losses, squared
    residuals)``: one Adam step per row of ``idx`` (minibatch indices into the normalised ``obs``, the
    ``labels`` and the observed activations ``acts``). The loss: the mean squared difference between the
    student's mean action and the label (``bounded``: none past a label at a bound), or (``space`` given)
    between the activations the two reach from ``acts``; the residuals are the actions'. The learning rate
    is ``cfg.learning_rate``, or the matching entry of ``lrs`` (one per row of ``idx``), the optional last
    argument (``benchmarks/studies/bc_refit.py`` fits in phases of their own rates)."""
    jax, jnp = _jax()
    lr = cfg.learning_rate

    def loss_fn(params, x, y, a0):
        mean = mlp_apply(params, x)
        err = mean - y
        if cfg.loss == "bounded":  # past a label at a bound the clipped action equals it: no error there
            err = jnp.where(y >= 1.0, jnp.minimum(err, 0.0), jnp.where(y <= -1.0, jnp.maximum(err, 0.0), err))
        if space is None:
            return jnp.mean(err**2), err
        gap = space.reached(a0, mean, jnp) - space.reached(a0, y, jnp)
        return jnp.mean(gap**2), err

    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    def fit_one(params, opt_state, obs, labels, acts, idx, lrs=None):
        def step(carry, xs):
            rows, lr = xs
            params, opt_state = carry
            (loss, err), grads = grad_fn(params, obs[rows], labels[rows], acts[rows])
            params, opt_state, _ = adam_update(grads, opt_state, params, lr, cfg.max_grad_norm)
            return (params, opt_state), (loss, jnp.mean(err**2, axis=0))

        if lrs is None:  # a linspace, not jnp.full: the rates of earlier runs to the last bit (they differ)
            lrs = jnp.linspace(lr, lr, idx.shape[0], dtype=jnp.float32)
        (params, opt_state), (losses, sq) = jax.lax.scan(step, (params, opt_state), (idx, lrs))
        return params, opt_state, losses, sq

    if cfg.ensemble == 1:
        fit = jax.jit(fit_one)
    else:  # the members side by side: stacked params and optimiser states, one ``idx`` each (K, steps, rows)
        members = jax.vmap(fit_one, in_axes=(0, 0, None, None, None, 0, None))

        @jax.jit
        def fit(params, opt_state, obs, labels, acts, idx, lrs=None):
            params, opt_state, losses, sq = members(params, opt_state, obs, labels, acts, idx, lrs)
            return params, opt_state, losses.mean(0), sq.mean(0)  # the members' mean loss and residuals

    return Fit(fit, cfg.ensemble)


@dataclass(frozen=True)
class Fit:
    """A fit of :func:`make_fit` and its number of members (``idx`` has a leading axis of that size when > 1)."""

    fn: Any
    members: int = 1

    def __call__(self, *args):
        return self.fn(*args)


def draw_rows(rng: np.random.Generator, n: int, steps: int, minibatch: int, members: int = 1) -> np.ndarray:
    """Minibatch indices into ``n`` rows for ``steps`` Adam steps: ``(steps, minibatch)``, or one such draw per
    member of an ensemble, ``(members, steps, minibatch)``."""
    return rng.integers(0, n, size=(steps, minibatch) if members == 1 else (members, steps, minibatch))


class BCLearner:
    """DAgger on the task of ``env`` (a :class:`~mskbench.envs.vector.MSKVectorEnv`, of one world is enough:
    its task, layout and sizes; BC brings its own ``num_envs`` worlds, built beside their teachers,
    :class:`WorldPool`). ``checkpoint`` continues a run (same settings; its data set is read back from the
    checkpoint's folder)."""

    def __init__(self, env: Any, cfg: BCConfig, checkpoint: Path | None = None):
        from mskbench.control.registry import behaviour_for
        from mskbench.envs.vector import worlds

        envs = worlds(env, "bc (it distils the expert)")
        if not hasattr(envs[0], "task"):
            raise ValueError("bc distils the expert on the CPU env (backend='cpu') without a paradigm's wrapper")
        task = envs[0].task
        behaviour_for(cfg.teacher, task.name)  # a clear error for a task the teacher does not serve
        self.env, self.cfg, self.task = env, cfg, task
        self.obs_layout = dict(env.obs_layout)
        self.obs_size, self.action_size = int(env.obs_size), int(env.action_size)
        self.space = ActivationSpace(envs[0], self.obs_layout) if cfg.loss == "activation" else None
        self.fit = make_fit(cfg, self.space)
        self.deterministic = None
        self._obs: list[np.ndarray] = []
        self._labels: list[np.ndarray] = []
        self._new: tuple[np.ndarray, np.ndarray] | None = None  # this iteration's data, saved with the checkpoint
        if checkpoint is not None:
            self.state = load_checkpoint(checkpoint, cfg, self.obs_layout)
            self._read_data(Path(checkpoint).parent / DATA_DIR)
        else:
            jax, _ = _jax()
            key, sizes = jax.random.PRNGKey(cfg.seed), [self.obs_size, *cfg.hidden, self.action_size]
            nets = [mlp_init(key if k == 0 else jax.random.fold_in(key, k), sizes, last_scale=0.01)
                    for k in range(cfg.ensemble)]
            params, opt = (nets[0], adam_init(nets[0])) if cfg.ensemble == 1 else \
                (stack_members(nets), stack_members([adam_init(n) for n in nets]))
            self.state = BCState(params, opt, RunningNorm.create(self.obs_size),
                                 np.full(self.action_size, LOG_STD_RANGE[1], np.float32), members=cfg.ensemble)
            if cfg.demos:
                obs, labels = read_demos(cfg.demos, task.name, self.obs_layout)
                self._add(obs, labels)
                self._new = (obs, labels)
        self.rng = np.random.default_rng(cfg.seed + 1_000_003 * self.state.iteration)
        self.pool = WorldPool(task, cfg.num_envs, cfg.seed + 1_000_003 * self.state.iteration, cfg.teacher,
                              cfg.workers, cfg.horizon)

    @property
    def steps(self) -> int:
        return self.state.steps

    @property
    def iteration(self) -> int:
        return self.state.iteration

    # -- the data set ----------------------------------------------------------------------------------
    def _add(self, obs: np.ndarray, labels: np.ndarray) -> None:
        self._obs.append(np.asarray(obs, np.float32))
        self._labels.append(np.asarray(labels, np.float32))
        self.state.norm.update(obs)
        self._trim()

    def _trim(self) -> None:
        keep_newest(self._obs, self._labels, self.cfg.max_samples)

    def _read_data(self, folder: Path) -> None:
        self._obs, self._labels = read_dataset(folder, self.state.iteration)
        self._trim()

    @property
    def samples(self) -> int:
        return sum(len(o) for o in self._obs)

    # -- one iteration ---------------------------------------------------------------------------------
    def _student(self) -> dict | None:
        if self.state.iteration == 0:  # the first iteration is the teacher's
            return None
        params = [{k: np.asarray(v) for k, v in layer.items()} for layer in self.state.deployed]
        norm = self.state.norm
        return {"params": params, "mean": norm.mean, "std": np.sqrt(norm.var + 1e-8), "clip": norm.clip,
                "space": self.space}

    def iterate(self, deadline: float | None = None) -> dict:
        _, jnp = _jax()
        cfg, state = self.cfg, self.state
        t0 = time.perf_counter()
        beta = cfg.beta(state.iteration)
        student = self._student()
        data = self.pool.collect(student, beta if student else 1.0, cfg.num_steps, cfg.gate)
        new_obs, new_labels = data["obs"], data["labels"]
        self._add(new_obs, new_labels)
        self._new = (new_obs, new_labels) if self._new is None else (np.concatenate([self._new[0], new_obs]),
                                                                      np.concatenate([self._new[1], new_labels]))
        collect_s = time.perf_counter() - t0
        obs = np.concatenate(self._obs)
        x = jnp.asarray(state.norm(obs))
        y = jnp.asarray(np.concatenate(self._labels))
        acts = jnp.asarray(obs[:, self.space.act] if self.space is not None else np.zeros((len(obs), 0), np.float32))
        idx = draw_rows(self.rng, len(obs), cfg.updates, cfg.minibatch_size, cfg.ensemble)
        params, opt_state, losses, sq = self.fit(state.params, state.opt_state, x, y, acts, jnp.asarray(idx))
        tail = max(1, cfg.updates // 4)  # the residuals of the last quarter of the steps
        state.params, state.opt_state = params, opt_state
        state.log_std = fitted_log_std(sq, tail)
        state.steps += cfg.num_steps * cfg.num_envs
        state.iteration += 1
        wall = time.perf_counter() - t0
        finished = data["finished"]
        return {"iteration": state.iteration, "steps": state.steps,
                "beta": beta if student is not None else 1.0,
                "teacher_share": float(data["teacher_acted"].mean()), "gated_share": float(data["gated"].mean()),
                "samples": len(obs),
                "mean_reward": float(data["rewards"].mean()),
                "episode_return": float(np.mean([f["return"] for f in finished])) if finished else None,
                "episodes": len(finished),
                "episode_success": float(np.mean([f["success"] for f in finished])) if finished else None,
                "bc_loss": float(np.asarray(losses)[-tail:].mean()), "bc_loss_first": float(np.asarray(losses)[0]),
                "steps_per_s": cfg.num_steps * cfg.num_envs / wall, "collect_s": collect_s,
                "update_s": wall - collect_s}

    def policy(self):
        """The student's deterministic policy (PPO's :func:`~mskbench.agents.ppo.make_policy`)."""
        from mskbench.agents.ppo import make_functions, make_policy

        if self.deterministic is None:
            self.deterministic = make_functions(self.cfg.actor_config(), None)[2]
        return make_policy({"policy": self.state.deployed}, self.state.norm, self.cfg.actor_config(), None,
                           self.deterministic)

    def save(self, path: Path) -> None:
        path = Path(path)
        if self._new is not None:  # the data this checkpoint has seen, before the checkpoint names it
            folder = path.parent / DATA_DIR
            folder.mkdir(exist_ok=True)
            savez_atomic(folder / f"{self.state.iteration:05d}.npz", {"obs": self._new[0], "labels": self._new[1]})
            self._new = None
        save_checkpoint(path, self.state, self.cfg, self.obs_layout)

    def close(self) -> None:
        self.pool.close()

    def __del__(self):
        try:
            self.pool.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def fitted_log_std(sq: Any, tail: int) -> np.ndarray:
    """The maximum-likelihood log-std of a fit's residuals: per action entry, from the mean squared
    residuals ``sq`` (one row per Adam step) of its last ``tail`` steps, within :data:`LOG_STD_RANGE`."""
    rms = np.sqrt(np.asarray(sq)[-tail:].mean(0))
    return np.clip(np.log(np.maximum(rms, 1e-6)), *LOG_STD_RANGE).astype(np.float32)


def keep_newest(obs: list[np.ndarray], labels: list[np.ndarray], max_samples: int) -> None:
    """Drop the oldest whole iterations' arrays (in place) while the rest still hold ``max_samples``."""
    total = sum(len(o) for o in obs)
    while obs and total - len(obs[0]) >= max_samples:
        total -= len(obs.pop(0))
        labels.pop(0)


def read_dataset(folder: str | Path, iteration: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """A run's data set (its ``dagger/`` folder) as the checkpoint of ``iteration`` saw it: the observations
    and labels of each iteration's file up to that one (a later file was written after that checkpoint)."""
    folder = Path(folder)
    obs, labels = [], []
    for f in sorted(folder.glob("*.npz")) if folder.is_dir() else []:
        if int(f.stem) > iteration:
            continue
        with np.load(f) as z:
            obs.append(z["obs"])
            labels.append(z["labels"])
    return obs, labels

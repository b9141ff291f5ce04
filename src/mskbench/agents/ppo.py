"""Proximal Policy Optimisation in JAX, readable top to bottom.

This file: generalised advantage estimation, the clipped PPO loss, rollouts,
one iteration of the learner (:class:`PPOLearner`; the loop around it is
:func:`mskbench.training.loop.train_loop`), the deterministic policy. Its
checkpoints are :mod:`mskbench.agents.ppo_checkpoints` (names importable from
here). The model it trains — the hyper-parameters (:class:`PPOConfig`),
the networks (an MLP policy or the encoder–decoder policy with a Gaussian
bottleneck of the mouse imitation study), observation normalisation and
Adam — is :mod:`mskbench.agents.ppo_networks`, its names importable from here.
It trains on either kind of environment of :mod:`mskbench.envs.protocols`:

* a :class:`~mskbench.envs.protocols.VectorEnv` (NumPy worlds stepped from
  Python, e.g. MuJoCo C), rollouts collected on the host;
* a :class:`~mskbench.envs.protocols.BatchedEnv` (functional JAX), whose whole
  rollout runs as one ``jax.lax.scan`` on the device; between rollouts the
  env's bank of initial states is refreshed, and the iteration's log row says
  how many resets there were and how many had to reuse a start.

Actions are in [-1, 1] (the muscle interface maps them to excitations).
The policy is a diagonal Gaussian with a state-independent log standard
deviation; the action sent to the env is the sample clipped to [-1, 1].

Encoder–decoder policy (Leonardis et al. 2025): the encoder sees the
observation blocks whose names start with ``reference`` and outputs the mean
and log-variance of a latent "intention" z (Gaussian bottleneck); the decoder
sees z and the remaining (proprioceptive) blocks and outputs the action mean.
A KL penalty ``kl_weight · KL(q(z|ref) ‖ N(0, I))`` regularises z. At
evaluation z is the encoder mean.

The learner is jitted (``jax.jit``) and runs wherever JAX runs (GPU or CPU).
For a functional env the rollout, the advantages (GAE) and the update stay on
the device; for a host env the advantages are computed with NumPy.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import cast

import numpy as np

from mskbench.agents.base import normalize
from mskbench.agents.data_parallel import DataParallel, local, resolve_devices, state_specs
from mskbench.agents.ppo_checkpoints import (  # noqa: F401 - the checkpoint functions, re-exported
    CHECKPOINT_VERSION, FORMAT, check_layout, export_policy, init_actor, load_checkpoint, ppo_policy_checkpoint,
    save_checkpoint)
from mskbench.agents.ppo_networks import (_HALF_LOG_2PI, ObsSplit, PPOConfig, RunningNorm, TrainState, _jax,
                                          adam_init, adam_update, deterministic_action, gaussian_logp, init_params,
                                          mlp_apply, policy_mean)
from mskbench.agents.ppo_networks import mlp_init  # noqa: F401 - re-exported, as all of ppo_networks' names
from mskbench.envs.protocols import WORLD_AXIS, BatchedEnv, VectorEnv

log = logging.getLogger(__name__)



# -- the learner ---------------------------------------------------------------------------
#: Bound on |log π_new − log π_old| before the ratio's exp (see ``loss_fn``).
LOG_RATIO_LIMIT = 20.0


def make_functions(cfg: PPOConfig, split: ObsSplit | None):
    """Jitted ``act`` (rollout step) and ``update`` (one PPO iteration's epochs)."""
    jax, jnp = _jax()

    @jax.jit
    def act(params, obs, key):
        k_z, k_a = jax.random.split(key)
        mean, _ = policy_mean(params, obs, cfg, split, k_z)
        log_std = params["log_std"]
        action = mean + jnp.exp(log_std) * jax.random.normal(k_a, mean.shape)
        logp = gaussian_logp(action, mean, log_std)
        value = mlp_apply(params["value"], obs)[..., 0]
        return action, logp, value

    @jax.jit
    def value_fn(params, obs):
        return mlp_apply(params["value"], obs)[..., 0]

    @jax.jit
    def deterministic(params, obs):
        return deterministic_action(params, obs, cfg, split)

    grad_fn = jax.value_and_grad(_loss_fn(cfg, split), has_aux=True)

    def update(params, opt_state, data, key, train_actor=True):
        n = data["obs"].shape[0]

        def grads(params, idx, kk):
            batch = jax.tree_util.tree_map(lambda x: x[idx], data)
            noise = jax.random.normal(kk, (idx.shape[0], cfg.latent_size)) if split is not None else None
            (_, aux), g = grad_fn(params, batch, noise, lambda x: x)
            return g, aux

        return _epochs(cfg, params, opt_state, n, key, grads, train_actor)

    return act, value_fn, deterministic, jax.jit(update, static_argnames="train_actor")


def _loss_fn(cfg: PPOConfig, split: ObsSplit | None):
    """PPO's loss of a minibatch, ``(loss, aux)``: ``noise`` samples the encoder-decoder's latent; ``mean``
    averages a statistic over the devices holding the minibatch's parts (the identity on one device), for the
    advantages' normalisation and the reported statistics."""
    jax, jnp = _jax()

    def loss_fn(params, batch, noise, mean_over):
        mean, kl = policy_mean(params, batch["obs"], cfg, split, noise=noise)
        logp = gaussian_logp(batch["actions"], mean, params["log_std"])
        # The log-ratio sums over every muscle (416 on MyoFullBody), so one large step can take it past
        # float32's exp (88): clamped, the ratio stays finite and the clipped objective saturates as before.
        log_ratio = jnp.clip(logp - batch["logp"], -LOG_RATIO_LIMIT, LOG_RATIO_LIMIT)
        ratio = jnp.exp(log_ratio)
        adv = batch["adv"]
        adv_mean = mean_over(adv.mean())
        adv_std = jnp.sqrt(mean_over(jnp.mean((adv - adv_mean) ** 2)))
        adv = (adv - adv_mean) / (adv_std + 1e-8)
        pg = -jnp.mean(jnp.minimum(ratio * adv, jnp.clip(ratio, 1 - cfg.clip, 1 + cfg.clip) * adv))
        value = mlp_apply(params["value"], batch["obs"])[..., 0]
        v_loss = 0.5 * jnp.mean((value - batch["returns"]) ** 2)
        entropy = jnp.sum(params["log_std"] + _HALF_LOG_2PI + 0.5)
        loss = pg + cfg.value_coef * v_loss - cfg.entropy_coef * entropy + cfg.kl_weight * jnp.mean(kl)
        approx_kl = jnp.mean((ratio - 1) - log_ratio)
        return loss, {"policy_loss": pg, "value_loss": v_loss, "latent_kl": jnp.mean(kl), "approx_kl": approx_kl}

    return loss_fn


def minibatch_samples(cfg: PPOConfig) -> int:
    """Samples in each minibatch of an iteration's update (the rollout cut into equal minibatches of about
    ``cfg.minibatch_size``; the remainder is left out)."""
    n = cfg.num_steps * cfg.num_envs
    return n // max(1, n // cfg.minibatch_size)


def _epochs(cfg: PPOConfig, params, opt_state, n: int, key, grads, train_actor: bool):
    """The epochs of one iteration over ``n`` samples: each epoch a permutation of them cut into minibatches,
    one Adam step per minibatch. ``grads(params, idx, key)`` returns the gradient and the statistics of the
    minibatch of sample indices ``idx`` (whatever devices hold them)."""
    jax, jnp = _jax()
    n_mb = max(1, n // cfg.minibatch_size)
    size = n // n_mb
    lr = cfg.learning_rate if cfg.actor_learning_rate is None else {
        k: cfg.learning_rate if k == "value" else cfg.actor_learning_rate for k in params}

    def epoch(carry, k):
        k_perm, k_loss = jax.random.split(k)
        perm = jax.random.permutation(k_perm, n)[: n_mb * size].reshape(n_mb, size)

        def minibatch(carry, xs):
            params, opt_state, active = carry
            idx, kk = xs
            g, aux = grads(params, idx, kk)
            if not train_actor:  # the critic's warm-up: every gradient but the value network's is zero
                g = {k: v if k == "value" else jax.tree_util.tree_map(jnp.zeros_like, v) for k, v in g.items()}
            new_params, new_opt, gnorm = adam_update(g, opt_state, params, lr, cfg.max_grad_norm)
            if cfg.target_kl is not None:  # stop at the first minibatch past the KL target (not applied)
                active = active & (aux["approx_kl"] <= 1.5 * cfg.target_kl)
                keep = lambda new, old: jax.tree_util.tree_map(  # noqa: E731
                    lambda a, b: jnp.where(active, a, b), new, old)
                new_params, new_opt = keep(new_params, params), keep(new_opt, opt_state)
            return (new_params, new_opt, active), {**aux, "grad_norm": gnorm, "applied": active.astype(jnp.float32)}

        return jax.lax.scan(minibatch, carry, (perm, jax.random.split(k_loss, n_mb)))

    carry = (params, opt_state, jnp.asarray(True))
    (params, opt_state, _), stats = jax.lax.scan(epoch, carry, jax.random.split(key, cfg.epochs))
    # Statistics of the minibatches computed (with a KL target: up to the first one not applied).
    applied = stats.pop("applied")
    computed = jnp.concatenate([jnp.ones((1,)), applied.reshape(-1)[:-1]]).reshape(applied.shape)
    means = jax.tree_util.tree_map(lambda x: jnp.sum(x * computed) / jnp.sum(computed), stats)
    return params, opt_state, {**means, "updates_applied": jnp.mean(applied)}


def make_sharded_functions(cfg: PPOConfig, split: ObsSplit | None):
    """The data-parallel learner's ``act`` and ``update``, traced inside a ``shard_map`` over
    :data:`~mskbench.envs.protocols.WORLD_AXIS` (:mod:`mskbench.agents.data_parallel`); their results do not
    depend on the number of devices.

    ``act(params, obs, key, world)``: each world's noise is drawn from ``key`` folded with the world's global
    index ``world``. ``update(params, opt_state, data, key, train_actor)``: ``data`` is this device's
    ``(steps, worlds)`` slice of the rollout; sample ``t * num_envs + w`` of the one-device update is step
    ``t`` of world ``w``, so the permutation and the minibatches are the one-device update's. Each device
    gathers its equal part of every minibatch (a ``psum_scatter`` of the samples it holds), computes the
    gradient of that part's mean loss, and the gradients are averaged over the devices: the one-device
    gradient, up to the order of float sums.
    """
    jax, jnp = _jax()
    axis = WORLD_AXIS
    grad_fn = jax.value_and_grad(_loss_fn(cfg, split), has_aux=True)

    def act(params, obs, key, world):
        def one(o, w):
            k_z, k_a = jax.random.split(jax.random.fold_in(key, w))
            noise = jax.random.normal(k_z, (cfg.latent_size,)) if split is not None else None
            mean, _ = policy_mean(params, o, cfg, split, noise=noise)
            action = mean + jnp.exp(params["log_std"]) * jax.random.normal(k_a, mean.shape)
            return action, gaussian_logp(action, mean, params["log_std"])

        action, logp = jax.vmap(one)(obs, world)
        return action, logp, mlp_apply(params["value"], obs)[..., 0]

    def update(params, opt_state, data, key, train_actor=True):
        steps, local = data["adv"].shape[:2]
        devices = jax.lax.axis_size(axis) if hasattr(jax.lax, "axis_size") else jax.lax.psum(1, axis)
        me = jax.lax.axis_index(axis)
        num_envs = local * devices

        def grads(params, idx, kk):
            t, w = idx // num_envs, idx % num_envs
            mine = w // local == me
            wl = jnp.where(mine, w - me * local, 0)

            def part(x):
                rows = x[t, wl]
                return jnp.where(mine.reshape((-1,) + (1,) * (rows.ndim - 1)), rows, jnp.zeros_like(rows))

            batch = jax.tree_util.tree_map(
                lambda x: jax.lax.psum_scatter(part(x), axis, scatter_dimension=0, tiled=True), data)
            share = idx.shape[0] // devices
            noise = None
            if split is not None:  # the one-device draw for the whole minibatch, this device's rows of it
                noise = jax.lax.dynamic_slice_in_dim(jax.random.normal(kk, (idx.shape[0], cfg.latent_size)),
                                                     me * share, share)
            (_, aux), g = grad_fn(params, batch, noise, lambda x: jax.lax.pmean(x, axis))
            return jax.lax.pmean(g, axis), jax.lax.pmean(aux, axis)

        return _epochs(cfg, params, opt_state, steps * num_envs, key, grads, train_actor)

    return act, update


def gae(rewards, values, next_values, terminated, done, gamma, lam):
    """Advantages and returns over a (T, N) rollout; ``done`` ends the trace, only
    ``terminated`` zeroes the bootstrap (truncation bootstraps from ``next_values``)."""
    T = rewards.shape[0]
    adv = np.zeros_like(rewards)
    last = np.zeros(rewards.shape[1])
    for t in reversed(range(T)):
        delta = rewards[t] + gamma * next_values[t] * (1.0 - terminated[t]) - values[t]
        last = delta + gamma * lam * (1.0 - done[t]) * last
        adv[t] = last
    return adv, adv + values


def gae_device(rewards, values, next_values, terminated, done, gamma, lam):
    """:func:`gae`'s advantages with ``jax.lax.scan`` (traceable; for rollouts kept on the device)."""
    jax, jnp = _jax()

    def backward(last, t):
        r, v, nv, term, d = t
        last = r + gamma * nv * (1.0 - term) - v + gamma * lam * (1.0 - d) * last
        return last, last

    _, adv = jax.lax.scan(backward, jnp.zeros(rewards.shape[1], rewards.dtype),
                          (rewards, values, next_values, terminated, done), reverse=True)
    return adv


# -- the learner ---------------------------------------------------------------------------------------
class PPOLearner:
    """PPO on ``env`` (``cfg.num_envs`` worlds): each :meth:`iterate` collects a rollout and runs the
    epochs of updates on it. ``checkpoint`` continues a run from its checkpoint (same config, same
    observation layout). The loop around the iterations — evaluations, checkpoints, the log, the time
    limit — is :func:`mskbench.training.loop.train_loop`'s.

    A batched env is trained data-parallel over ``cfg.devices`` devices (:mod:`mskbench.agents.data_parallel`,
    :func:`make_sharded_functions`; one device is the same program on a mesh of one); a vector env trains on
    one device.
    """

    def __init__(self, env: VectorEnv | BatchedEnv, cfg: PPOConfig, checkpoint: Path | None = None):
        jax, _ = _jax()
        if env.num_envs != cfg.num_envs:
            raise ValueError(f"the env has {env.num_envs} worlds, the config says num_envs={cfg.num_envs}")
        if not isinstance(env, BatchedEnv) and cfg.devices != 1:
            raise ValueError(f"devices={cfg.devices}: only a batched JAX env's worlds are sharded over devices; a "
                             "vector env (worlds stepped on the host) trains on one device: devices=1")
        self.env, self.cfg = env, cfg
        self.split = ObsSplit.from_layout(env.obs_layout, env.obs_size, cfg.encoder_blocks) \
            if cfg.policy == "encoder_decoder" else None
        act, value_fn, self.deterministic, self.update = make_functions(cfg, self.split)
        if checkpoint is not None:
            self.state = load_checkpoint(checkpoint, expect_config=cfg, expect_layout=env.obs_layout)
        else:
            key = jax.random.PRNGKey(cfg.seed)
            key, k_init = jax.random.split(key)
            params = init_params(k_init, cfg, env.obs_size, env.action_size, self.split)
            norm = RunningNorm.create(env.obs_size)
            if cfg.init is not None:
                params, norm = init_actor(cfg.init, params, cfg, env.obs_layout, env.obs_size)
            self.state = TrainState(params, adam_init(params), norm, key=key)
        self.collector: _HostCollector | _ScanCollector
        if isinstance(env, BatchedEnv):
            self.dp = DataParallel(resolve_devices(cfg.devices, cfg.num_envs, minibatch_samples(cfg)))
            self.state.params, self.state.opt_state = self.dp.replicate((self.state.params, self.state.opt_state))
            self.collector = _ScanCollector(env, cfg, self.split, value_fn, cfg.seed + self.state.iteration, self.dp)
            self.update = self.collector.update
        else:
            self.collector = _HostCollector(cast(VectorEnv, env), cfg, act, value_fn, cfg.seed + self.state.iteration)
        if self.state.iteration == 0 and cfg.init is None:  # a started actor keeps the normalisation it learned in
            self.state.norm.update_moments(*self.collector.initial_moments())

    @property
    def steps(self) -> int:
        return self.state.steps

    @property
    def iteration(self) -> int:
        return self.state.iteration

    def iterate(self, deadline: float | None = None) -> dict:
        """One iteration (a rollout and its updates); returns its log row."""
        jax, _ = _jax()
        state, cfg = self.state, self.cfg
        batch_steps = cfg.num_steps * self.env.num_envs
        t0 = time.perf_counter()
        data, moments, episode_return, mean_reward, starts = self.collector.collect(state)
        if cfg.update_norm:
            state.norm.update_moments(*moments)  # statistics for the next iteration
        collect_s = time.perf_counter() - t0
        state.key, k = jax.random.split(state.key)
        warmup = state.iteration < cfg.critic_warmup
        params, opt_state, stats = self.update(state.params, state.opt_state, data, k, train_actor=not warmup)
        if not _finite(params):  # refused before it reaches the checkpoint (the last one stays as it was)
            raise RuntimeError(
                f"PPO's update of iteration {state.iteration + 1} made the policy non-finite (approx_kl "
                f"{float(stats['approx_kl']):.3g}, grad_norm {float(stats['grad_norm']):.3g}); the step is too "
                "large for this policy: lower learning_rate or epochs, or set target_kl")
        state.params, state.opt_state = params, opt_state
        state.steps += batch_steps
        state.iteration += 1
        wall = time.perf_counter() - t0
        return {"iteration": state.iteration, "steps": state.steps,
                "mean_reward": mean_reward, "episode_return": episode_return,
                "steps_per_s": batch_steps / wall, "collect_s": collect_s, "update_s": wall - collect_s,
                **({"critic_warmup": True} if warmup else {}), **starts, **{k: float(v) for k, v in stats.items()}}

    def policy(self):
        """The current deterministic policy (:func:`make_policy`), its parameters on this process's first
        device."""
        return make_policy(local(self.state.params), self.state.norm, self.cfg, self.split, self.deterministic)

    def save(self, path: Path) -> None:
        state = self.state
        save_checkpoint(path, TrainState(local(state.params), local(state.opt_state), state.norm, state.steps,
                                         state.iteration, state.key), self.cfg, self.env.obs_layout)


def _finite(tree) -> bool:
    jax, jnp = _jax()
    return bool(jax.tree_util.tree_reduce(lambda ok, x: ok & jnp.all(jnp.isfinite(x)), tree, jnp.asarray(True)))


class _HostCollector:
    """Rollouts from a vector env stepped from Python (MuJoCo C worlds, or any NumPy env)."""

    def __init__(self, env: VectorEnv, cfg: PPOConfig, act, value_fn, seed: int):
        self.env, self.cfg, self.act, self.value_fn = env, cfg, act, value_fn
        self.obs = env.reset(seed=seed)

    def initial_moments(self):
        return _moments(self.obs)

    def collect(self, state: "TrainState"):
        jax, _ = _jax()
        env, obs = self.env, self.obs
        raw_obs, ep_returns = [], []
        buf: dict[str, list[np.ndarray]] = {
            k: [] for k in ("obs", "actions", "logp", "values", "rewards", "next_values", "terminated", "done")}
        for _ in range(self.cfg.num_steps):
            nobs = state.norm(obs)
            state.key, k = jax.random.split(state.key)
            action, logp, value = self.act(state.params, nobs, k)
            action = np.asarray(action)
            raw_obs.append(obs)
            next_obs, reward, terminated, truncated, info = env.step(np.clip(action, -1.0, 1.0))
            done = np.logical_or(terminated, truncated)
            final = info["final_obs"] if done.any() else next_obs
            buf["obs"].append(nobs)
            buf["actions"].append(action)
            buf["logp"].append(np.asarray(logp))
            buf["values"].append(np.asarray(value))
            buf["rewards"].append(np.asarray(reward, np.float32))
            buf["next_values"].append(np.asarray(self.value_fn(state.params, state.norm(final))))
            buf["terminated"].append(terminated.astype(np.float32))
            buf["done"].append(done.astype(np.float32))
            ep_returns.extend(info["episode_returns"])
            obs = next_obs
        self.obs = obs
        roll = {k: np.asarray(v) for k, v in buf.items()}
        adv, returns = gae(roll["rewards"], roll["values"], roll["next_values"], roll["terminated"],
                           roll["done"], self.cfg.gamma, self.cfg.gae_lambda)
        n = roll["rewards"].size
        data = {"obs": roll["obs"].reshape(n, -1), "actions": roll["actions"].reshape(n, -1),
                "logp": roll["logp"].reshape(-1), "adv": adv.reshape(-1).astype(np.float32),
                "returns": returns.reshape(-1).astype(np.float32)}
        resets = int(roll["done"].sum())
        episode_return = float(np.mean(ep_returns)) if ep_returns else None
        return data, _moments(np.asarray(raw_obs)), episode_return, float(roll["rewards"].mean()), {"resets": resets}


class _ScanCollector:
    """Rollouts from a batched JAX env, the whole rollout one ``jax.lax.scan`` on each device of ``dp``
    over its shard of the worlds — the GPU path; the rollout stays on the devices, sharded, for
    :attr:`update` (:func:`make_sharded_functions`). After each rollout the env's bank of initial states is
    refreshed (:meth:`BatchedEnv.refresh`)."""

    def __init__(self, env: BatchedEnv, cfg: PPOConfig, split: ObsSplit | None, value_fn, seed: int,
                 dp: DataParallel):
        jax, jnp = _jax()
        from jax.sharding import PartitionSpec as P

        self.env, self.dp = env, dp
        state = env.reset(jax.random.PRNGKey(seed))
        self._initial = _moments(np.asarray(state.obs))
        self.specs = state_specs(state, dp.devices)
        self.env_state = dp.place(state, self.specs)
        act, update = make_sharded_functions(cfg, split)
        local = env.num_envs // dp.devices
        clip = RunningNorm.create(1).clip

        def collect(params, mean, std, env_state, key):
            world = jax.lax.axis_index(WORLD_AXIS) * local + jnp.arange(local)

            def norm(x):
                return normalize(x, mean, std, clip, jnp)

            def one(carry, k):
                env_state, ret = carry
                raw = env_state.obs
                nobs = norm(raw)
                action, logp, value = act(params, nobs, k, world)
                env_state, out = env.step(env_state, jnp.clip(action, -1.0, 1.0))
                done = out.terminated | out.truncated
                ret = ret + out.reward
                step = {"obs": nobs, "actions": action, "logp": logp, "values": value,
                        "rewards": out.reward.astype(jnp.float32),
                        "next_values": value_fn(params, norm(out.final_obs)),
                        "terminated": out.terminated.astype(jnp.float32), "done": done.astype(jnp.float32),
                        "finished_return": jnp.where(done, ret, 0.0), "raw_sum": raw.sum(0),
                        "raw_sq": (raw.astype(jnp.float32) ** 2).sum(0)}
                return (env_state, jnp.where(done, 0.0, ret)), step

            keys = jax.random.split(key, cfg.num_steps)
            (env_state, _), traj = jax.lax.scan(one, (env_state, jnp.zeros(local)), keys)
            adv = gae_device(traj["rewards"], traj["values"], traj["next_values"], traj["terminated"],
                             traj["done"], cfg.gamma, cfg.gae_lambda)
            data = {"obs": traj["obs"], "actions": traj["actions"], "logp": traj["logp"], "adv": adv,
                    "returns": adv + traj["values"]}
            total = lambda x: jax.lax.psum(x, WORLD_AXIS)  # noqa: E731
            stats = {"raw_sum": total(traj["raw_sum"].sum(0)), "raw_sq": total(traj["raw_sq"].sum(0)),
                     "episodes": total(traj["done"].sum()), "return_sum": total(traj["finished_return"].sum()),
                     "reward_sum": total(traj["rewards"].sum())}
            return env_state, data, stats

        rollout = P(None, WORLD_AXIS)  # (steps, worlds, ...): the worlds sharded
        self._collect = dp.shard_map(collect, in_specs=(P(), P(), P(), self.specs, P()),
                                     out_specs=(self.specs, rollout, P()))
        self._updates = {train_actor: dp.shard_map(
            lambda params, opt, data, key, t=train_actor: update(params, opt, data, key, t),
            in_specs=(P(), P(), rollout, P()), out_specs=(P(), P(), P())) for train_actor in (False, True)}

    def update(self, params, opt_state, data, key, train_actor: bool = True):
        """The iteration's epochs on the sharded rollout ``data`` (:func:`make_sharded_functions`)."""
        return self._updates[bool(train_actor)](params, opt_state, data, self.dp.replicate(key))

    def initial_moments(self):
        return self._initial

    def collect(self, state: "TrainState"):
        jax, _ = _jax()
        state.key, k = jax.random.split(state.key)
        std = np.sqrt(state.norm.var + 1e-8)
        mean, std, k = self.dp.replicate((np.asarray(state.norm.mean, np.float32), np.asarray(std, np.float32), k))
        self.env_state, data, stats = self._collect(state.params, mean, std, self.env_state, k)
        n = self.env.num_envs * data["logp"].shape[0]  # the rollout stays on the devices; only these come back
        mean = np.asarray(stats["raw_sum"], np.float64) / n
        var = np.maximum(np.asarray(stats["raw_sq"], np.float64) / n - mean**2, 0.0)
        episodes = int(stats["episodes"])
        starts = {"resets": episodes, "starts_reused": int(self.env_state.reused)}
        # The bank is refreshed on this process's first device and replicated again.
        refreshed = self.env.refresh(self.dp.localize(self.env_state, self.specs))
        self.env_state = self.dp.place(refreshed, self.specs)
        episode_return = float(stats["return_sum"]) / episodes if episodes else None
        return data, (mean, var, n), episode_return, float(stats["reward_sum"]) / n, starts


def _moments(batch: np.ndarray):
    b = np.asarray(batch, np.float64).reshape(-1, batch.shape[-1])
    return b.mean(0), b.var(0), b.shape[0]


def make_policy(params, norm: RunningNorm, cfg: PPOConfig, split: ObsSplit | None, deterministic=None):
    """A deterministic ``act(obs)`` policy object (encoder mean, no sampling).

    ``deterministic`` is the jitted function from :func:`make_functions`; the
    trainer passes its own so evaluations do not compile it again.
    """
    if deterministic is None:
        _, _, deterministic, _ = make_functions(cfg, split)

    class DeterministicPolicy:
        def __init__(self):
            # For evaluators that run the policy inside a jitted loop (mskbench.agents.jax_eval):
            # ``apply(params, x)`` with ``x`` normalised as ``norm`` does it.
            self.params, self.norm, self.apply = params, norm, deterministic

        def normalize_observation(self, obs):
            return norm(obs)

        def act_normalized(self, x):
            return np.asarray(deterministic(params, x))

        def act(self, obs):
            return self.act_normalized(self.normalize_observation(obs))

        def reset(self, seed=None):
            pass

    return DeterministicPolicy()

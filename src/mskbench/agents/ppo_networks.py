"""PPO's model (:mod:`mskbench.agents.ppo`): its hyper-parameters (:class:`PPOConfig`), the networks (an MLP
policy or the encoder–decoder policy with a Gaussian bottleneck of the mouse imitation study; the value MLP;
the Gaussian log-likelihood), observation normalisation (:class:`RunningNorm`) and Adam with gradient-norm
clipping. Pure functions of their parameters, jittable; the learner is in :mod:`mskbench.agents.ppo`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from mskbench._jax import require_jax
from mskbench.agents.base import normalize


@dataclass
class PPOConfig:
    """Hyper-parameters. Defaults follow Table XVI's PPO row where it applies."""

    total_steps: int = 1_000_000
    num_steps: int = 64  # rollout length per env per iteration
    epochs: int = 10
    minibatch_size: int = 256
    learning_rate: float = 3e-4
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip: float = 0.2
    value_coef: float = 0.5
    entropy_coef: float = 0.0
    max_grad_norm: float = 1.0
    init_log_std: float = -0.5
    policy: str = "mlp"  # "mlp" or "encoder_decoder"
    hidden: tuple[int, ...] = (1024, 1024)  # Table XVI: 2 × 1024
    value_hidden: tuple[int, ...] = (1024, 1024)
    encoder_hidden: tuple[int, ...] = (512, 512, 512)
    decoder_hidden: tuple[int, ...] = (512, 512, 512)
    latent_size: int = 60
    kl_weight: float = 1e-5
    #: The encoder of the encoder–decoder policy reads the observation blocks whose names start with this.
    encoder_blocks: str = "task/reference"
    num_envs: int = 8  # Table XVI: 8 parallel environments
    seed: int = 0
    #: Stop an iteration's epochs at the first minibatch whose approx_kl exceeds 1.5 × this (Stable-Baselines3's
    #: rule; the minibatch is not applied). None: every minibatch of every epoch is applied (Table XVI).
    target_kl: float | None = None
    #: A checkpoint (or run directory) whose actor and observation normalisation start the run
    #: (:func:`mskbench.agents.ppo.init_actor`; ``mskbench train --init RUN``).
    init: str | None = None
    #: Iterations at the start in which only the critic learns (the actor frozen): a critic fitted to a
    #: started actor's returns before its advantages move the actor.
    critic_warmup: int = 0
    #: The actor's Adam step (its mean network, log-std and encoder), the critic keeping ``learning_rate``.
    #: None: ``learning_rate`` for both (Table XVI). A started actor whose log-std is small moves far, in KL,
    #: for a step the critic needs (``--init``; docs/distillation.md).
    actor_learning_rate: float | None = None
    #: Update the observation normalisation from every rollout (False: keep the one the run started with;
    #: the default for a run started from an actor, whose weights were fitted to it).
    update_norm: bool = True
    #: Devices a batched env's worlds are sharded over (:mod:`mskbench.agents.data_parallel`); the run's
    #: numbers do not depend on it (up to float summation order), so a run may resume on another count.
    devices: int = 1

    def __post_init__(self):
        if self.policy not in ("mlp", "encoder_decoder"):
            raise ValueError(f"policy must be 'mlp' or 'encoder_decoder', got {self.policy!r}")
        for name in ("total_steps", "num_steps", "epochs", "minibatch_size", "latent_size", "num_envs", "devices"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.critic_warmup < 0:
            raise ValueError(f"critic_warmup must be >= 0, got {self.critic_warmup}")
        if self.actor_learning_rate is not None and not self.actor_learning_rate >= 0:
            raise ValueError(f"actor_learning_rate must be >= 0 (or None), got {self.actor_learning_rate}")
        if self.target_kl is not None and not self.target_kl > 0:
            raise ValueError(f"target_kl must be > 0 (or None), got {self.target_kl}")
        # A lone width from ``--set hidden=1024`` is wrapped by the algorithm registry before it gets here.
        for name in ("hidden", "value_hidden", "encoder_hidden", "decoder_hidden"):
            widths = getattr(self, name)
            if not isinstance(widths, (tuple, list)) or not all(
                    isinstance(w, int) and not isinstance(w, bool) and w >= 1 for w in widths):
                raise ValueError(f"{name} must be widths >= 1 (e.g. 1024,1024), got {widths!r}")
            setattr(self, name, tuple(widths))


# -- networks ---------------------------------------------------------------------------
def _jax():
    return require_jax("training")


def mlp_init(key, sizes: list[int], last_scale: float = 1.0):
    jax, jnp = _jax()
    params = []
    keys = jax.random.split(key, len(sizes) - 1)
    for i, (k, n_in, n_out) in enumerate(zip(keys, sizes[:-1], sizes[1:])):
        scale = last_scale if i == len(sizes) - 2 else float(np.sqrt(2.0))
        w = jax.random.orthogonal(k, max(n_in, n_out))[:n_in, :n_out] * scale
        params.append({"w": w.astype(jnp.float32), "b": jnp.zeros(n_out, jnp.float32)})
    return params


def mlp_apply(params, x):
    _, jnp = _jax()
    for i, layer in enumerate(params):
        x = x @ layer["w"] + layer["b"]
        if i < len(params) - 1:
            x = jnp.tanh(x)
    return x


@dataclass(frozen=True)
class ObsSplit:
    """Indices of the reference and proprioceptive parts of the observation."""

    reference: np.ndarray
    proprio: np.ndarray

    @classmethod
    def from_layout(cls, layout: Mapping[str, slice], obs_size: int, prefix: str = "task/reference") -> "ObsSplit":
        ref = [np.arange(s.start, s.stop) for k, s in layout.items() if k.startswith(prefix)]
        if not ref:
            raise ValueError(f"the encoder-decoder policy needs observation blocks named '{prefix}...'; "
                             f"this env has {list(layout)}")
        ref_idx = np.concatenate(ref)
        mask = np.ones(obs_size, bool)
        mask[ref_idx] = False
        return cls(ref_idx, np.flatnonzero(mask))


def _require_split(split: ObsSplit | None, cfg: PPOConfig) -> ObsSplit:
    """``split``, which every policy but the MLP needs (:meth:`ObsSplit.from_layout`)."""
    if split is None:
        raise ValueError(f"policy={cfg.policy!r} needs the observation split (ObsSplit.from_layout); got None")
    return split


def init_params(key, cfg: PPOConfig, obs_size: int, action_size: int, split: ObsSplit | None):
    jax, jnp = _jax()
    k_pi, k_v, k_dec = jax.random.split(key, 3)
    params = {
        "value": mlp_init(k_v, [obs_size, *cfg.value_hidden, 1]),
        "log_std": jnp.full(action_size, cfg.init_log_std, jnp.float32),
    }
    if cfg.policy == "mlp":
        params["policy"] = mlp_init(k_pi, [obs_size, *cfg.hidden, action_size], last_scale=0.01)
    else:
        split = _require_split(split, cfg)
        params["encoder"] = mlp_init(k_pi, [len(split.reference), *cfg.encoder_hidden, 2 * cfg.latent_size],
                                     last_scale=0.01)
        params["decoder"] = mlp_init(k_dec, [cfg.latent_size + len(split.proprio), *cfg.decoder_hidden,
                                             action_size], last_scale=0.01)
    return params


def policy_mean(params, obs, cfg: PPOConfig, split: ObsSplit | None, key=None, noise=None):
    """Action mean for normalised ``obs`` (..., obs_size); returns (mean, kl).

    With ``key`` the latent is sampled (training); with ``noise`` (standard normal, the latent's shape) it is
    ``mu + sigma * noise``; with neither, it is the encoder mean.
    """
    jax, jnp = _jax()
    if cfg.policy == "mlp":
        return mlp_apply(params["policy"], obs), jnp.zeros(obs.shape[:-1])
    split = _require_split(split, cfg)
    enc = mlp_apply(params["encoder"], obs[..., split.reference])
    mu, logvar = enc[..., : cfg.latent_size], jnp.clip(enc[..., cfg.latent_size:], -10.0, 5.0)
    if noise is None and key is not None:
        noise = jax.random.normal(key, mu.shape)
    z = mu if noise is None else mu + jnp.exp(0.5 * logvar) * noise
    kl = 0.5 * jnp.sum(jnp.exp(logvar) + mu**2 - 1.0 - logvar, axis=-1)
    mean = mlp_apply(params["decoder"], jnp.concatenate([z, obs[..., split.proprio]], axis=-1))
    return mean, kl


def deterministic_action(params, obs, cfg: PPOConfig, split: ObsSplit | None):
    """The deterministic action for normalised ``obs``: the mean (the encoder's mean latent), clipped to [-1, 1]."""
    _, jnp = _jax()
    return jnp.clip(policy_mean(params, obs, cfg, split, None)[0], -1.0, 1.0)


_HALF_LOG_2PI = float(0.5 * np.log(2 * np.pi))  # a Python float stays weakly typed (no float64 promotion)


def gaussian_logp(x, mean, log_std):
    _, jnp = _jax()
    return jnp.sum(-0.5 * ((x - mean) / jnp.exp(log_std)) ** 2 - log_std - _HALF_LOG_2PI, axis=-1)


# -- observation normalisation ---------------------------------------------------------------
@dataclass
class RunningNorm:
    """Running mean / variance of observations (parallel Welford updates)."""

    mean: np.ndarray
    var: np.ndarray
    count: float = 1e-4
    clip: float = 10.0

    @classmethod
    def create(cls, size: int) -> "RunningNorm":
        return cls(np.zeros(size), np.ones(size))

    def update(self, batch: np.ndarray) -> None:
        b = np.asarray(batch, np.float64).reshape(-1, self.mean.size)
        self.update_moments(b.mean(0), b.var(0), b.shape[0])

    def update_moments(self, mean: np.ndarray, var: np.ndarray, n: int) -> None:
        """Merge a batch given by its mean, (population) variance and size."""
        delta = np.asarray(mean, np.float64) - self.mean
        total = self.count + n
        self.mean = self.mean + delta * n / total
        self.var = (self.var * self.count + np.asarray(var, np.float64) * n + delta**2 * self.count * n / total) / total
        self.count = total

    def __call__(self, obs):
        return normalize(np.asarray(obs), self.mean, np.sqrt(self.var + 1e-8), self.clip)


# -- optimiser -----------------------------------------------------------------------------
def adam_init(params):
    jax, jnp = _jax()
    zeros = jax.tree_util.tree_map(jnp.zeros_like, params)
    return {"m": zeros, "v": jax.tree_util.tree_map(jnp.zeros_like, params), "t": jnp.zeros((), jnp.int32)}


def adam_update(grads, state, params, lr, max_norm, b1=0.9, b2=0.999, eps=1e-8):
    """One Adam step after clipping the gradients' global norm to ``max_norm``. ``lr``: a number, or a mapping
    from each of ``params``' top-level keys to its step."""
    jax, jnp = _jax()
    if isinstance(lr, Mapping):
        lr = {k: jax.tree_util.tree_map(lambda _, r=lr[k]: r, v) for k, v in params.items()}
    else:
        lr = jax.tree_util.tree_map(lambda _: lr, params)
    leaves = jax.tree_util.tree_leaves(grads)
    norm = jnp.sqrt(sum(jnp.sum(g**2) for g in leaves))
    scale = jnp.minimum(1.0, max_norm / (norm + 1e-6))
    grads = jax.tree_util.tree_map(lambda g: g * scale, grads)
    t = state["t"] + 1
    m = jax.tree_util.tree_map(lambda m, g: b1 * m + (1 - b1) * g, state["m"], grads)
    v = jax.tree_util.tree_map(lambda v, g: b2 * v + (1 - b2) * g**2, state["v"], grads)
    mhat_c, vhat_c = 1 - b1**t, 1 - b2**t
    params = jax.tree_util.tree_map(
        lambda p, m, v, r: (p - r * (m / mhat_c) / (jnp.sqrt(v / vhat_c) + eps)).astype(p.dtype), params, m, v, lr)
    m = jax.tree_util.tree_map(lambda a, p: a.astype(p.dtype), m, params)
    v = jax.tree_util.tree_map(lambda a, p: a.astype(p.dtype), v, params)
    return params, {"m": m, "v": v, "t": t}, norm


# -- the training state -----------------------------------------------------------------------
@dataclass
class TrainState:
    """What a PPO checkpoint holds: parameters, optimiser state, observation normalisation, counters, RNG key."""

    params: Any
    opt_state: Any
    norm: RunningNorm
    steps: int = 0
    iteration: int = 0
    key: Any = None

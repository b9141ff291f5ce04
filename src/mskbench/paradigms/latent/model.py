"""The latent-action encoder–decoder (Eq. 21) in flax, its behaviour-cloning fit (Eq. 22), and its file.

Architecture (the authors' ``networks.py``, facts only:
``rl_paradigms/deprl_middleware_22tasks/deprl_middleware_22tasks/networks.py``
@ 4ffd2d661cad201cd1fb8bb55a177e9260e91df1; the defaults of :class:`ModelConfig`):

* **Encoder** ``a ∈ [−1, 1]^muscles → z ∈ (−1, 1)^latent``: Dense 256 → LayerNorm
  → GELU → Dense 128 → LayerNorm → GELU → Dense latent → tanh.
* **Decoder** ("Full Anatomical Transformer"): one token per muscle, made by
  concatenating four embeddings — its priors P (Dense 64), its state S
  (Dense 64), its row of the moment matrix M (Dense 128 over the ``nv`` dofs)
  and the latent command z (Dense ``embed``, the same for every muscle) — and
  mixing them with a Dense ``embed`` (256); then ``blocks`` (3) pre-LayerNorm
  blocks of multi-head self-attention across the muscles (8 heads) and a GELU
  MLP (4 × ``embed``), each with a residual connection; then Dense 1 → sigmoid
  per muscle: ``â ∈ (0, 1)^muscles``.
* **Fit** (``train_expert_transformer.py`` @ d7a289173d4b9301b23c74d00a59cf39233aa06a):
  Adam, learning rate 1e-4, minibatches of 256, 40 epochs, the loss of Eq. 22
  (:func:`~mskbench.paradigms.latent.core.bc_loss`).

Ours where the original is silent or does not fit:

* **Input scaling.** The authors feed the raw features. Here P and S are
  standardised per feature (mean and standard deviation over the training
  samples and muscles, stored with the model) and M divided by the RMS of its
  nonzeros (zeros stay zeros), so one learning rate suits every feature.
* **Held-out data.** The authors report the training loss only. :func:`fit`
  holds out the last ``holdout`` share of the *episodes* (whole episodes, so
  held-out states are not neighbours of training states; with a single
  episode, its last ``holdout`` share of steps) and reports the
  reconstruction statistics of :func:`~mskbench.paradigms.latent.core.reconstruction_stats`
  on them, beside the training samples' and a PCA code of the same size.
* **Budget.** ``max_updates`` and ``time_limit_s`` stop a fit early (the CPU
  cannot afford the original's 40 epochs of 50,000 samples at full width);
  the last partial minibatch of an epoch is dropped (one compiled step).
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mskbench.paradigms.latent.core import bc_loss, hard_mode, pca_reconstruction, reconstruction_stats
from mskbench.paradigms.latent.data import N_PRIOR, N_STATE, LatentData, dense_moments

FORMAT = "mskbench-latent-model"
FORMAT_VERSION = 1


def _flax():
    try:
        import flax.linen as nn
        import jax
        import jax.numpy as jnp
        import optax
    except ImportError as exc:  # pragma: no cover - depends on the install
        raise RuntimeError(f"the latent-action encoder-decoder needs JAX, flax and optax ({exc}); "
                           "pip install -e '.[offpolicy]'") from None
    return nn, jax, jnp, optax


@dataclass(frozen=True)
class ModelConfig:
    """Sizes of the encoder–decoder (defaults: the authors')."""

    latent_dim: int = 64
    n_muscles: int = 416
    nv: int = 128
    encoder_hidden: tuple[int, ...] = (256, 128)
    embed_dim: int = 256
    heads: int = 8
    blocks: int = 3
    prior_width: int = 64
    state_width: int = 64
    moment_width: int = 128

    def __post_init__(self) -> None:
        object.__setattr__(self, "encoder_hidden", tuple(int(w) for w in self.encoder_hidden))
        for name in ("latent_dim", "n_muscles", "nv", "embed_dim", "heads", "blocks", "prior_width",
                     "state_width", "moment_width"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        if any(w < 1 for w in self.encoder_hidden):
            raise ValueError(f"encoder_hidden widths must be positive, got {self.encoder_hidden}")
        if self.embed_dim % self.heads:
            raise ValueError(f"embed_dim ({self.embed_dim}) must be a multiple of heads ({self.heads})")

    def as_dict(self) -> dict[str, Any]:
        d = dataclasses.asdict(self)
        d["encoder_hidden"] = list(self.encoder_hidden)
        return d

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "ModelConfig":
        fields = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(d) - fields)
        if unknown:
            raise ValueError(f"unknown model settings {unknown}; valid: {', '.join(sorted(fields))}")
        kwargs: dict[str, Any] = {k: tuple(v) if k == "encoder_hidden" else v for k, v in d.items()}
        return cls(**kwargs)


_NETWORK_CACHE: dict[str, Any] = {}


def network(config: ModelConfig):
    """The flax module of ``config``: ``apply(params, a, P, S, M)`` reconstructs; ``method="encode"`` /
    ``method="decode"`` give the halves (inputs already scaled, see :func:`scale_inputs`)."""
    if "cls" not in _NETWORK_CACHE:
        nn, _, jnp, _ = _flax()

        class MuscleAttentionBlock(nn.Module):  # type: ignore[name-defined]
            embed_dim: int
            heads: int

            @nn.compact
            def __call__(self, x):
                h = nn.LayerNorm(name="ln1")(x)
                x = x + nn.MultiHeadDotProductAttention(num_heads=self.heads, name="attention")(h, h)
                h = nn.LayerNorm(name="ln2")(x)
                h = nn.Dense(4 * self.embed_dim, name="mlp_in")(h)
                h = nn.Dense(self.embed_dim, name="mlp_out")(nn.gelu(h, approximate=False))
                return x + h

        class LatentAutoencoder(nn.Module):  # type: ignore[name-defined]
            config: ModelConfig

            def setup(self):
                c = self.config
                self.enc = [nn.Dense(w, name=f"enc_dense{i}") for i, w in enumerate(c.encoder_hidden)]
                self.enc_norm = [nn.LayerNorm(name=f"enc_ln{i}") for i in range(len(c.encoder_hidden))]
                self.enc_out = nn.Dense(c.latent_dim, name="enc_out")
                self.prior_in = nn.Dense(c.prior_width, name="prior_in")
                self.state_in = nn.Dense(c.state_width, name="state_in")
                self.moment_in = nn.Dense(c.moment_width, name="moment_in")
                self.command_in = nn.Dense(c.embed_dim, name="command_in")
                self.mix = nn.Dense(c.embed_dim, name="mix")
                self.attention = [MuscleAttentionBlock(c.embed_dim, c.heads, name=f"block{i}")
                                  for i in range(c.blocks)]
                self.out = nn.Dense(1, name="out")

            def encode(self, a):
                x = a
                for dense, norm in zip(self.enc, self.enc_norm):
                    x = nn.gelu(norm(dense(x)), approximate=False)
                return jnp.tanh(self.enc_out(x))

            def decode(self, z, P, S, M):
                lead = S.shape[:-1]  # (..., muscles)
                p = jnp.broadcast_to(self.prior_in(P), (*lead, self.config.prior_width))
                s = self.state_in(S)
                m = self.moment_in(M)
                c = jnp.broadcast_to(self.command_in(z)[..., None, :], (*lead, self.config.embed_dim))
                x = self.mix(jnp.concatenate([p, s, m, c], axis=-1))
                for block in self.attention:
                    x = block(x)
                return nn.sigmoid(self.out(x)[..., 0])

            def __call__(self, a, P, S, M):
                return self.decode(self.encode(a), P, S, M)

        _NETWORK_CACHE["cls"] = LatentAutoencoder
    return _NETWORK_CACHE["cls"](config)


# -- input scaling -------------------------------------------------------------------------------------
def input_scaling(data: LatentData, *, floor: float = 1e-6) -> dict[str, np.ndarray]:
    """Standardisation of P and S per feature, and M's scale (RMS of its nonzeros), from ``data``."""
    s = data.states.reshape(-1, N_STATE).astype(np.float64)
    p = data.priors.astype(np.float64)
    nz = data.moments[data.moments != 0]
    return {"prior_mean": p.mean(0).astype(np.float32), "prior_std": np.maximum(p.std(0), floor).astype(np.float32),
            "state_mean": s.mean(0).astype(np.float32), "state_std": np.maximum(s.std(0), floor).astype(np.float32),
            "moment_scale": np.float32(max(float(np.sqrt(np.mean(nz.astype(np.float64) ** 2))) if nz.size else 1.0,
                                           floor))}


def scale_inputs(scaling: Mapping[str, Any], P, S, M):
    """P, S, M as the network takes them (works on NumPy and JAX arrays)."""
    return ((P - scaling["prior_mean"]) / scaling["prior_std"], (S - scaling["state_mean"]) / scaling["state_std"],
            M / scaling["moment_scale"])


# -- the model ---------------------------------------------------------------------------------------------
class LatentModel:
    """A fitted encoder–decoder with what it was fitted on: sizes, parameters, input scaling, the body's
    muscle priors P and moment pattern, the muscle names, and the fit's statistics (``metrics``).

    Host-side calls (NumPy in, NumPy out, jitted on the first use):
    :meth:`prior` (Eq. 24: ``â`` of muscle actions), :meth:`decode` (``â`` of latent codes),
    :meth:`encode`. :meth:`hard_filter` is the pure JAX function of Eqs. 23-27 for use inside a
    jitted step.
    """

    def __init__(self, config: ModelConfig, params: Any, scaling: Mapping[str, Any], priors: np.ndarray,
                 moment_index: np.ndarray, muscle_names: Sequence[str], metrics: Mapping[str, Any] | None = None,
                 meta: Mapping[str, Any] | None = None):
        self.config = config
        self.params = params
        self.scaling = {k: np.asarray(v, np.float32) for k, v in scaling.items()}
        self.priors = np.asarray(priors, np.float32)
        self.moment_index = np.asarray(moment_index, np.int32)
        self.muscle_names = tuple(muscle_names)
        self.metrics = dict(metrics or {})
        self.meta = dict(meta or {})
        if self.priors.shape != (config.n_muscles, N_PRIOR):
            raise ValueError(f"priors have shape {self.priors.shape}, expected ({config.n_muscles}, {N_PRIOR})")
        if len(self.muscle_names) != config.n_muscles:
            raise ValueError(f"{len(self.muscle_names)} muscle names for {config.n_muscles} muscles")
        self._jit: dict[str, Any] = {}

    @property
    def latent_dim(self) -> int:
        return self.config.latent_dim

    @property
    def n_muscles(self) -> int:
        return self.config.n_muscles

    # -- pure JAX functions (usable inside jit) --------------------------------------------------------
    def _dense(self, values, jnp):
        return dense_moments(values, jnp.asarray(self.moment_index), self.config.n_muscles, self.config.nv, jnp)

    def _network_fn(self, method: str | None) -> Callable:
        """``f(params, x, states, moments)``: the network (or one of its methods) on ``x`` with the scaled
        priors, states and dense moments, in JAX."""
        _, _, jnp, _ = _flax()
        net = network(self.config)
        scaling = {k: jnp.asarray(v) for k, v in self.scaling.items()}
        P0 = jnp.asarray(self.priors)
        kwargs = {} if method is None else {"method": method}

        def f(params, x, states, moments):
            P, S, M = scale_inputs(scaling, P0, states, moments)
            return net.apply(params, x, P, S, M, **kwargs)

        return f

    def prior_fn(self) -> Callable:
        """``f(params, actions, states, moments) -> â`` in JAX (``moments`` dense, ``(..., muscles, nv)``)."""
        _, _, jnp, _ = _flax()
        apply = self._network_fn(None)
        return lambda params, actions, states, moments: apply(params, jnp.clip(actions, -1.0, 1.0), states, moments)

    def decode_fn(self) -> Callable:
        """``f(params, z, states, moments) -> â`` in JAX (the decoder alone, ``moments`` dense)."""
        return self._network_fn("decode")

    def hard_filter(self) -> Callable:
        """``f(params, actions, states, moments, delta) -> (env actions, L_dev, â)``: Eqs. 23-27 in JAX,
        for a batched env's jitted step (``moments`` dense ``(..., muscles, nv)``, ``delta`` a scalar)."""
        _, _, jnp, _ = _flax()
        prior = self.prior_fn()

        def f(params, actions, states, moments, delta):
            p = prior(params, actions, states, moments)
            env, dev = hard_mode(actions, p, delta, jnp)
            return env, dev, p

        return f

    # -- host calls -----------------------------------------------------------------------------------
    def _consts(self) -> dict[str, Any]:
        if "consts" not in self._jit:
            _, _, jnp, _ = _flax()
            self._jit["consts"] = {"scaling": {k: jnp.asarray(v) for k, v in self.scaling.items()},
                                   "priors": jnp.asarray(self.priors), "index": jnp.asarray(self.moment_index)}
        return self._jit["consts"]

    def _call(self, name: str, *args: np.ndarray) -> np.ndarray:
        return np.asarray(_host_function(self.config, name)(self.params, self._consts(), *args), np.float64)

    def prior(self, actions: np.ndarray, states: np.ndarray, moments: np.ndarray) -> np.ndarray:
        """Eq. 24: ``â = Decoder(Encoder(a), P, S, M)`` in [0, 1], ``(batch, muscles)``; ``moments`` are the
        nonzeros of M in this model's pattern, ``(batch, nnz)``."""
        return self._call("prior", np.asarray(actions, np.float32), np.asarray(states, np.float32),
                          np.asarray(moments, np.float32))

    def decode(self, z: np.ndarray, states: np.ndarray, moments: np.ndarray) -> np.ndarray:
        """``Decoder(z, P, S, M)`` in [0, 1] for latent codes ``z`` ``(batch, latent)``."""
        return self._call("decode", np.asarray(z, np.float32), np.asarray(states, np.float32),
                          np.asarray(moments, np.float32))

    def encode(self, actions: np.ndarray) -> np.ndarray:
        return self._call("encode", np.asarray(actions, np.float32))

    def reconstruct(self, data: LatentData, batch_size: int = 256) -> np.ndarray:
        """``â`` of every sample of ``data``, in chunks of ``batch_size`` (the last one padded, so one
        compiled shape serves every chunk)."""
        out = []
        for i in range(0, data.n_samples, batch_size):
            j = min(i + batch_size, data.n_samples)
            pad = batch_size - (j - i)
            a, s, v = data.actions[i:j], data.states[i:j], data.moments[i:j]
            if pad:
                a, s, v = (np.concatenate([x, np.repeat(x[-1:], pad, axis=0)]) for x in (a, s, v))
            out.append(self.prior(a, s, v)[: j - i])
        return np.concatenate(out) if out else np.zeros((0, self.n_muscles))

    def check_body(self, priors: np.ndarray, moment_index: np.ndarray, muscle_names: Sequence[str] | None = None) -> None:
        """A clear error when an env's muscles, priors or moment pattern differ from the model's."""
        if muscle_names is not None and tuple(muscle_names) != self.muscle_names:
            raise ValueError(f"the model was fitted on other muscles ({self.n_muscles}: {self.muscle_names[:3]}...) "
                             f"than the env's ({len(muscle_names)})")
        if priors.shape != self.priors.shape or not np.allclose(priors, self.priors, rtol=1e-5, atol=1e-7):
            raise ValueError("the env's muscle parameters (priors P) differ from the ones the model was fitted on")
        if not np.array_equal(np.asarray(moment_index), self.moment_index):
            raise ValueError("the env's moment-matrix pattern (dofs per muscle) differs from the model's; "
                             "was the model fitted on a task with other props?")

    # -- file ---------------------------------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        from mskbench.agents.base import flatten_tree, savez_atomic

        path = Path(path)
        arrays = {f"params/{k}": v for k, v in flatten_tree(_to_numpy(self.params)).items()}
        arrays.update({f"scaling/{k}": np.asarray(v) for k, v in self.scaling.items()})
        arrays.update(format=np.array(FORMAT), format_version=np.array(FORMAT_VERSION),
                      config=np.array(json.dumps(self.config.as_dict())), priors=self.priors,
                      moment_index=self.moment_index, muscle_names=np.array(json.dumps(list(self.muscle_names))),
                      metrics=np.array(json.dumps(self.metrics, default=float)),
                      meta=np.array(json.dumps(self.meta, default=str)))
        savez_atomic(path, arrays)
        return path

    @classmethod
    def load(cls, path: str | Path) -> "LatentModel":
        from mskbench.agents.base import unflatten_tree

        try:
            with np.load(path, allow_pickle=False) as z:
                if "format" not in z.files or str(z["format"]) != FORMAT:
                    raise ValueError(f"{path} is not a latent-action model (make one with 'mskbench latent fit')")
                params = unflatten_tree({k[len("params/"):]: z[k] for k in z.files if k.startswith("params/")})
                scaling = {k[len("scaling/"):]: z[k] for k in z.files if k.startswith("scaling/")}
                config = ModelConfig.from_dict(json.loads(str(z["config"])))
                return cls(config, params, scaling, z["priors"], z["moment_index"], json.loads(str(z["muscle_names"])),
                           json.loads(str(z["metrics"])), json.loads(str(z["meta"])))
        except (OSError, KeyError, json.JSONDecodeError) as exc:
            raise ValueError(f"cannot read {path}: {exc}") from None


_HOST_FUNCTIONS: dict[tuple[ModelConfig, str], Callable] = {}


def _host_function(config: ModelConfig, name: str) -> Callable:
    """The jitted ``prior``/``decode``/``encode`` of a network size, shared by every model of that size
    (parameters and the model's constants are arguments, so a reloaded model compiles nothing new)."""
    key = (config, name)
    if key not in _HOST_FUNCTIONS:
        _, jax, jnp, _ = _flax()
        net = network(config)

        def inputs(consts, s, v):
            M = dense_moments(v, consts["index"], config.n_muscles, config.nv, jnp)
            return scale_inputs(consts["scaling"], consts["priors"], s, M)

        def prior(params, consts, a, s, v):
            return net.apply(params, jnp.clip(a, -1.0, 1.0), *inputs(consts, s, v))

        def decode(params, consts, z, s, v):
            return net.apply(params, z, *inputs(consts, s, v), method="decode")

        def encode(params, consts, a):
            return net.apply(params, jnp.clip(a, -1.0, 1.0), method="encode")

        f = {"prior": prior, "decode": decode, "encode": encode}[name]
        _HOST_FUNCTIONS[key] = jax.jit(f)
    return _HOST_FUNCTIONS[key]


def _to_numpy(tree):
    if isinstance(tree, Mapping):
        return {k: _to_numpy(v) for k, v in tree.items()}
    return np.asarray(tree)


# -- fitting -------------------------------------------------------------------------------------------------
_UPDATES: dict[tuple[ModelConfig, float], tuple[Callable, Callable, Callable]] = {}


def _update_function(config: ModelConfig, learning_rate: float) -> tuple[Callable, Callable, Callable]:
    """``(init, opt_init, update)``: the network's and Adam's jitted initialisations and the jitted step on
    Eq. 22 for a network size (cached: fits of one size compile once)."""
    key = (config, learning_rate)
    if key not in _UPDATES:
        _, jax, jnp, optax = _flax()
        net = network(config)
        opt = optax.adam(learning_rate)

        def loss_fn(params, consts, a, s, v):
            M = dense_moments(v, consts["index"], config.n_muscles, config.nv, jnp)
            return bc_loss(net.apply(params, a, *scale_inputs(consts["scaling"], consts["priors"], s, M)), a, jnp)

        @jax.jit
        def update(params, opt_state, consts, a, s, v):
            loss, grads = jax.value_and_grad(loss_fn)(params, consts, a, s, v)
            delta, opt_state = opt.update(grads, opt_state, params)
            return optax.apply_updates(params, delta), opt_state, loss

        _UPDATES[key] = (jax.jit(net.init), jax.jit(opt.init), update)
    return _UPDATES[key]


def _share_seen(rows: np.ndarray, reference: np.ndarray) -> float:
    """Share of ``rows`` that occur exactly in ``reference`` (a deterministic expert on a task without
    random starts repeats its episodes: held-out statistics then measure nothing held out)."""
    seen = {r.tobytes() for r in np.ascontiguousarray(reference)}
    return float(np.mean([r.tobytes() in seen for r in np.ascontiguousarray(rows)])) if len(rows) else 0.0


def split_holdout(data: LatentData, holdout: float) -> tuple[np.ndarray, np.ndarray, str]:
    """``(train indices, held-out indices, how)``: the last ``holdout`` share of the episodes held out
    (``how="episodes"``), or with one episode its last ``holdout`` share of steps (``"steps"``)."""
    if not 0.0 < holdout < 1.0:
        raise ValueError(f"holdout must be in (0, 1), got {holdout!r}")
    n = data.n_samples
    episodes = np.unique(data.episode)
    if len(episodes) >= 2:
        k = min(len(episodes) - 1, max(1, round(holdout * len(episodes))))
        test = np.isin(data.episode, episodes[-k:])
        return np.flatnonzero(~test), np.flatnonzero(test), "episodes"
    k = min(n - 1, max(1, round(holdout * n)))
    return np.arange(n - k), np.arange(n - k, n), "steps"


def _batches(n: int, batch_size: int, rng: np.random.Generator):
    perm = rng.permutation(n)
    for i in range(0, n - batch_size + 1, batch_size):
        yield perm[i:i + batch_size]


def fit(data: LatentData, latent_dim: int = 64, *, epochs: int = 40, batch_size: int = 256,
        learning_rate: float = 1e-4, holdout: float = 0.2, seed: int = 0, max_updates: int | None = None,
        time_limit_s: float | None = None, eval_samples: int | None = None,
        progress: Callable[[dict], None] | None = None, **sizes: Any) -> LatentModel:
    """Fit the encoder–decoder on ``data`` by Eq. 22 and return it with its statistics in ``metrics``.

    ``sizes`` are :class:`ModelConfig` fields (``embed_dim``, ``heads``,
    ``blocks``, ``encoder_hidden``, ...; default: the authors'). The fit stops
    after ``epochs``, ``max_updates`` gradient steps or the first step past
    ``time_limit_s``, whichever comes first. ``metrics`` holds ``heldout``
    and ``train`` (:func:`~mskbench.paradigms.latent.core.reconstruction_stats`
    of the held-out samples and of up to ``eval_samples`` training samples,
    default as many as held out) and ``pca_heldout`` (the same for a PCA code
    of ``latent_dim`` components fitted on the training actions), the loss
    history, the budget used, and ``heldout_seen_in_train``: the share of
    held-out actions that also occur in the training set (near 1 when a
    deterministic expert repeats identical episodes — collect with noise
    then). ``progress(row)`` gets a row per epoch.
    """
    _, jax, jnp, optax = _flax()
    for name, value in (("epochs", epochs), ("batch_size", batch_size)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    if not (math.isfinite(learning_rate) and learning_rate > 0):
        raise ValueError(f"learning_rate must be > 0, got {learning_rate!r}")
    if max_updates is not None and max_updates < 1:
        raise ValueError(f"max_updates must be >= 1, got {max_updates!r}")
    config = ModelConfig(latent_dim=int(latent_dim), n_muscles=data.n_muscles, nv=data.nv, **sizes)
    train_idx, test_idx, how = split_holdout(data, holdout)
    train, test = data.subset(train_idx), data.subset(test_idx)
    bs = min(int(batch_size), train.n_samples)
    scaling = input_scaling(train)
    rng = np.random.default_rng(seed)
    model = LatentModel(config, None, scaling, data.priors, data.moment_index, data.meta.get("muscle_names") or
                        [f"muscle{i}" for i in range(data.n_muscles)])
    consts = model._consts()
    init, opt_init, update = _update_function(config, float(learning_rate))
    # The parameters' shapes do not depend on the batch or the number of muscles: initialise on two tokens.
    params = init(jax.random.PRNGKey(seed), jnp.zeros((1, config.n_muscles)), jnp.zeros((2, N_PRIOR)),
                  jnp.zeros((1, 2, N_STATE)), jnp.zeros((1, 2, config.nv)))
    opt_state = opt_init(params)

    history: list[dict] = []
    updates, started, stopped = 0, time.perf_counter(), "epochs"
    for epoch in range(int(epochs)):
        losses = []
        for idx in _batches(train.n_samples, bs, rng):
            params, opt_state, loss = update(params, opt_state, consts, train.actions[idx], train.states[idx],
                                             train.moments[idx])
            losses.append(float(loss))
            updates += 1
            if max_updates is not None and updates >= max_updates:
                stopped = "max_updates"
                break
            if time_limit_s is not None and time.perf_counter() - started >= time_limit_s:
                stopped = "time_limit"
                break
        row = {"epoch": epoch + 1, "updates": updates, "train_loss": float(np.mean(losses)) if losses else None,
               "wall_s": round(time.perf_counter() - started, 2)}
        history.append(row)
        if progress is not None:
            progress(row)
        if stopped != "epochs":
            break
    fit_s = time.perf_counter() - started
    model.params = params
    y_test = (test.actions.astype(np.float64) + 1.0) / 2.0
    n_eval = min(train.n_samples, eval_samples if eval_samples is not None else test.n_samples)
    sub = train.subset(rng.choice(train.n_samples, n_eval, replace=False)) if n_eval >= 2 else train
    y_train = (train.actions.astype(np.float64) + 1.0) / 2.0
    model.metrics = {
        "latent_dim": config.latent_dim, "updates": updates, "epochs": len(history), "stopped": stopped,
        "samples_seen": updates * bs, "batch_size": bs, "learning_rate": learning_rate, "fit_s": round(fit_s, 2),
        "n_train": train.n_samples, "n_heldout": test.n_samples, "heldout_by": how, "seed": seed,
        "heldout_seen_in_train": _share_seen(test.actions, train.actions),
        "heldout": reconstruction_stats(y_test, model.reconstruct(test, bs)),
        "train": reconstruction_stats((sub.actions + 1.0) / 2.0, model.reconstruct(sub, bs)),
        "pca_heldout": reconstruction_stats(y_test, np.clip(pca_reconstruction(y_train, y_test, config.latent_dim),
                                                            0.0, 1.0)),
        "history": history,
    }
    model.meta = {"data": {k: data.meta.get(k) for k in ("task", "body", "policy", "seed", "noise_std")},
                  "n_samples": data.n_samples}
    return model


__all__ = ["FORMAT", "LatentModel", "ModelConfig", "fit", "input_scaling", "network", "scale_inputs",
           "split_holdout"]

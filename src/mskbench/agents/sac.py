"""Soft Actor-Critic for mskbench's CPU vector envs, from SBX (Stable-Baselines in JAX); DepRL's DEP
exploration and DynSyn's synergy action layer plug into the same learner.

The learner is ``sbx.SAC`` (flax networks, optax, Stable-Baselines3's replay
buffers and collection loop): this module only adapts it to mskbench — the
vector env protocol (:class:`~mskbench.envs.protocols.VectorEnv`) as an SB3
``VecEnv`` (:mod:`mskbench.agents.sac_vecenv`), observation normalisation
(SB3's ``VecNormalize``, its statistics saved with the checkpoint), iterations
with a log row, periodic evaluation and an atomic checkpoint, and a resume
that continues the run exactly: the networks, optimisers, entropy coefficient,
every random state (JAX keys, NumPy's global generator that the replay buffer
samples with, the warm-up's action sampler, DEP's) and the replay buffer
(saved incrementally: each checkpoint adds the rows collected since the
previous one) come back as they were. Episodes running at the checkpoint are
started afresh on resume.

Three algorithms share it (:data:`mskbench.agents.ALGORITHMS`):

* ``sac``: Gaussian (tanh-squashed) exploration, Table XVI's SAC;
* ``deprl``: the policy's actions are replaced, per world and for stretches of
  steps, by the DEP controller's (:mod:`mskbench.agents.dep`), which senses
  the muscle lengths; 3-step returns;
* ``dynsyn``: the actor outputs one action per muscle group and a weight per
  muscle; the DynSyn map (:mod:`mskbench.agents.dynsyn`) turns them into the
  416 muscle actions, with the weights' bound growing on a linear schedule.

Checkpoints are ``.npz`` files of format ``mskbench-sac``; any of them
reduces to a :class:`~mskbench.agents.base.PolicyCheckpoint` for the
evaluation protocol (the deterministic action: the tanh of the actor's mean,
through the DynSyn map when there is one).
"""

from __future__ import annotations

import dataclasses
import json
import math
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mskbench.agents.base import (PolicyCheckpoint, check_obs_layout, flatten_tree, layout_json, savez_atomic,
                                  unflatten_tree)
from mskbench.agents.sac_vecenv import protocol_vec_env_class
from mskbench.envs.protocols import BatchedEnv, VectorEnv

FORMAT = "mskbench-sac"
CHECKPOINT_VERSION = 1
EXPLORATIONS = ("gaussian", "dep")
ACTION_MAPS = ("direct", "dynsyn")
#: VecNormalize's defaults: observations clipped to ±10 after normalisation, var + 1e-8.
OBS_CLIP = 10.0
OBS_EPS = 1e-8


@dataclass
class SACConfig:
    """Hyper-parameters of the SAC family (defaults: Table XVI's SAC; SB3's where the table is silent).

    An *iteration* is ``num_steps`` vectorised steps (``num_envs × num_steps``
    transitions): one log row and one checkpoint; evaluations every few.
    """

    num_envs: int = 8
    num_steps: int = 1250
    total_steps: int = 200_000_000
    seed: int = 0
    hidden: tuple[int, ...] = (1024, 1024)
    critic_hidden: tuple[int, ...] = (1024, 1024)
    learning_rate: float = 1e-4
    #: Linear decay of the actor's learning rate to this value over ``total_steps`` (None: constant).
    learning_rate_final: float | None = None
    #: The critics' learning rate (None: the actor's, following its schedule).
    critic_learning_rate: float | None = None
    batch_size: int = 256
    #: Replay capacity in transitions. SB3's default is 1e6; at MyoFullBody's ~2,400 float32
    #: observations (twice: obs and next obs) that is ~19 GB, so 2e5 (~4 GB) here.
    buffer_size: int = 200_000
    learning_starts: int = 100
    #: Vectorised steps between updates, and gradient steps per update.
    train_freq: int = 1
    gradient_steps: int = 1
    n_steps: int = 1
    gamma: float = 0.99
    tau: float = 0.005
    ent_coef: str = "auto"
    #: The entropy target of ``ent_coef="auto"``: ``"auto"`` is −(action size), except under the DynSyn map,
    #: where it is −(number of groups), as MSK-Bench's DynSyn-SAC sets it.
    target_entropy: str | float = "auto"
    log_std_init: float = -3.0
    exploration: str = "gaussian"
    #: DEP settings (``mskbench.agents.dep.DEPConfig`` fields) for ``exploration="dep"``.
    dep: dict[str, Any] = field(default_factory=dict)
    action_map: str = "direct"
    #: DynSyn settings (``mskbench.agents.dynsyn``): ``groups`` (a groups.json path; None: computed for the
    #: task at the start), ``weight_bound_start``, ``weight_bound_end``, ``weight_bound_steps``.
    dynsyn: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self):
        self.hidden = tuple(int(h) for h in self.hidden)
        self.critic_hidden = tuple(int(h) for h in self.critic_hidden)
        for name in ("num_envs", "num_steps", "total_steps", "batch_size", "buffer_size", "train_freq",
                     "gradient_steps", "n_steps"):
            if int(getattr(self, name)) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        if self.learning_starts < 0:
            raise ValueError(f"learning_starts must be >= 0, got {self.learning_starts}")
        if not self.learning_rate > 0:
            raise ValueError(f"learning_rate must be > 0, got {self.learning_rate}")
        if self.exploration not in EXPLORATIONS:
            raise ValueError(f"exploration must be one of {', '.join(EXPLORATIONS)}, got {self.exploration!r}")
        if self.action_map not in ACTION_MAPS:
            raise ValueError(f"action_map must be one of {', '.join(ACTION_MAPS)}, got {self.action_map!r}")
        if self.ent_coef != "auto":
            try:
                if not float(self.ent_coef) > 0:
                    raise ValueError
            except ValueError:
                raise ValueError(f"ent_coef must be 'auto' or a positive number, got {self.ent_coef!r}") from None


# -- the learner ------------------------------------------------------------------------------------------
def _model_class() -> type:
    from sbx import SAC

    class MSKSAC(SAC):
        """``sbx.SAC`` with DEP exploration (``self.dep``, per world) and the last update's losses kept."""

        dep: Any = None
        dep_sensors: slice | None = None
        last_losses: dict[str, float] = {}
        #: Replay rows (vectorised steps) ever stored, and how many of them are saved.
        replay_rows: int = 0
        replay_rows_saved: int = 0
        #: World-steps acted by DEP and by the policy in the current iteration.
        dep_steps: int = 0
        policy_steps: int = 0
        #: The run's total steps: the learning-rate schedule's horizon across ``learn`` calls.
        run_total_steps: int | None = None

        def _setup_learn(self, total_timesteps, *args, **kwargs):
            total, callback = super()._setup_learn(total_timesteps, *args, **kwargs)
            if self.run_total_steps is not None:
                self._total_timesteps = self.run_total_steps
            return total, callback

        def _sample_action(self, learning_starts, action_noise=None, n_envs=1):
            action, buffer_action = super()._sample_action(learning_starts, action_noise, n_envs)
            if self.dep is not None:
                raw = self._vec_normalize_env.get_original_obs()
                dep_action = self.dep.act(self.dep.sensors(raw[:, self.dep_sensors]))
                use = self.dep.use_dep(self.num_timesteps)  # DEP alone during its pre-training steps
                self.dep_steps += int(use.sum())
                self.policy_steps += int(n_envs - use.sum())
                action = np.where(use[:, None], dep_action, action).astype(np.float32)
                buffer_action = action
            return action, buffer_action

        def _store_transition(self, replay_buffer, buffer_action, new_obs, reward, dones, infos):
            if self.dep is not None and np.any(dones):
                self.dep.episode_done(np.asarray(dones, bool))
            super()._store_transition(replay_buffer, buffer_action, new_obs, reward, dones, infos)
            self.replay_rows += 1

        def train(self, gradient_steps, batch_size):
            super().train(gradient_steps, batch_size)
            values = self.logger.name_to_value
            self.last_losses = {k.split("/", 1)[1]: float(values[k]) for k in
                                ("train/actor_loss", "train/critic_loss", "train/ent_coef") if k in values}

    return MSKSAC


def _schedule(cfg: SACConfig) -> Any:
    """The actor's learning rate as SB3's schedule of ``progress_remaining`` (1 -> 0)."""
    if cfg.learning_rate_final is None:
        return float(cfg.learning_rate)
    lr0, lr1 = float(cfg.learning_rate), float(cfg.learning_rate_final)
    return lambda progress_remaining: lr1 + (lr0 - lr1) * progress_remaining


def _action_map(cfg: SACConfig, env: VectorEnv) -> tuple[int, Any, dict]:
    """The learner's action size, the map to muscle actions (None: direct) and what to store of it."""
    if cfg.action_map == "direct":
        return env.action_size, None, {}
    from mskbench.agents import dynsyn

    return dynsyn.learner_action_map(cfg.dynsyn, env)


def _target_entropy(cfg: SACConfig, action_map: Any) -> str | float:
    if cfg.target_entropy != "auto":
        return float(cfg.target_entropy)
    groups = getattr(action_map, "groups", None)
    return -float(groups.n_groups) if groups is not None else "auto"


def build_model(env: VectorEnv, cfg: SACConfig):
    """The SBX model on ``env`` (normalised observations), with DEP when configured; and the DynSyn map."""
    from stable_baselines3.common.vec_env import VecNormalize

    action_size, action_map, map_record = _action_map(cfg, env)
    venv = VecNormalize(protocol_vec_env_class()(env, action_size, action_map, cfg.seed), norm_obs=True,
                        norm_reward=False, clip_obs=OBS_CLIP, epsilon=OBS_EPS, gamma=cfg.gamma)
    policy_kwargs = {"net_arch": {"pi": list(cfg.hidden), "qf": list(cfg.critic_hidden)},
                     "log_std_init": cfg.log_std_init}
    model = _model_class()(
        "MlpPolicy", venv, learning_rate=_schedule(cfg), qf_learning_rate=cfg.critic_learning_rate,
        buffer_size=cfg.buffer_size, learning_starts=cfg.learning_starts,
        batch_size=cfg.batch_size, tau=cfg.tau, gamma=cfg.gamma, train_freq=cfg.train_freq,
        gradient_steps=cfg.gradient_steps, n_steps=cfg.n_steps,
        ent_coef=cfg.ent_coef if cfg.ent_coef == "auto" else float(cfg.ent_coef),
        target_entropy=_target_entropy(cfg, action_map), policy_kwargs=policy_kwargs, seed=cfg.seed, verbose=0)
    # SB3 makes a logger at every ``learn`` call unless one is set, and that one creates an empty
    # /tmp/SB3-<time> folder: one per iteration. The learner reads the losses from ``name_to_value``
    # alone, so a logger that writes nowhere is enough.
    from stable_baselines3.common.logger import Logger

    model.set_logger(Logger(folder=None, output_formats=[]))
    if cfg.exploration == "dep":
        from mskbench.agents.dep import DEPConfig, DEPExploration

        block = env.obs_layout.get("muscle_length")
        if block is None:
            raise ValueError("DEP senses the muscle lengths; this env's observation has no 'muscle_length' block")
        model.dep = DEPExploration(env.num_envs, env.action_size, DEPConfig(**cfg.dep), seed=cfg.seed)
        model.dep_sensors = block
    model.action_map_record = map_record
    model.muscle_action_map = action_map
    return model


# -- the learner ------------------------------------------------------------------------------------------
class SACLearner:
    """The SBX learner on ``env`` (``cfg.num_envs`` CPU worlds): each :meth:`iterate` is ``num_steps``
    vectorised steps with their updates, cut short at ``deadline`` (a ``time.perf_counter()`` value).
    ``checkpoint`` continues a run exactly (:func:`load_checkpoint`). The loop around the iterations is
    :func:`mskbench.training.loop.train_loop`'s.
    """

    def __init__(self, env: VectorEnv, cfg: SACConfig, checkpoint: Path | None = None):
        if isinstance(env, BatchedEnv):
            raise TypeError("the SAC family trains on the CPU vector env (backend='cpu'); the batched JAX env is "
                            "PPO's")
        if env.num_envs != cfg.num_envs:
            raise ValueError(f"the env has {env.num_envs} worlds, the config says num_envs={cfg.num_envs}")
        self.env, self.cfg = env, cfg
        self.model = build_model(env, cfg)
        self.steps, self.iteration = 0, 0
        if checkpoint is not None:
            self.steps, self.iteration = load_checkpoint(checkpoint, self.model, cfg, env.obs_layout)

    def iterate(self, deadline: float | None = None) -> dict:
        """One iteration; returns its log row."""
        from stable_baselines3.common.callbacks import BaseCallback

        class Clock(BaseCallback):
            def _on_step(self) -> bool:
                return deadline is None or time.perf_counter() < deadline

        model, cfg = self.model, self.cfg
        venv = model.get_env()
        t0 = time.perf_counter()
        chunk = min(cfg.num_envs * cfg.num_steps, cfg.total_steps - self.steps)
        venv.venv.episode_returns.clear()
        model.dep_steps = model.policy_steps = 0
        model.run_total_steps = cfg.total_steps
        model.learn(chunk, callback=Clock(), reset_num_timesteps=False, log_interval=10**9)
        done_steps = int(model.num_timesteps) - self.steps
        self.steps = int(model.num_timesteps)
        self.iteration += 1
        wall = time.perf_counter() - t0
        returns = venv.venv.episode_returns
        row: dict[str, Any] = {"iteration": self.iteration, "steps": self.steps,
                               "episode_return": float(np.mean(returns)) if returns else None,
                               "episodes": len(returns), "steps_per_s": done_steps / wall,
                               "buffer": int(model.replay_buffer.size() * cfg.num_envs), **model.last_losses}
        if model.dep is not None:
            row["dep_share"] = model.dep_steps / max(1, model.policy_steps + model.dep_steps)
        return row

    def policy(self):
        """The current deterministic policy, as the evaluation protocol runs a checkpoint."""
        return policy_checkpoint_of(self.model, self.cfg, None).host_policy()

    def save(self, path: Path) -> None:
        save_checkpoint(path, self.model, self.cfg, self.env.obs_layout, self.steps, self.iteration)


# -- the policy ------------------------------------------------------------------------------------------
def deterministic_fn(hidden: tuple[int, ...], action_size: int, action_map: Mapping[str, Any] | None):
    """``deterministic(params, x) -> muscle actions`` (jax.numpy, batched): the tanh of the actor's
    mean, through the DynSyn map when the run has one."""
    from sbx.common.policies import SquashedGaussianActor

    actor = SquashedGaussianActor(net_arch=list(hidden), action_dim=action_size)
    muscle = None
    if action_map:
        from mskbench.agents import dynsyn

        muscle = dynsyn.stored_map(action_map)

    def deterministic(params, x):
        import jax.numpy as jnp

        a = actor.apply(params, jnp.reshape(x, (-1, x.shape[-1]))).mode()
        a = a if muscle is None else muscle(a, jnp)
        return jnp.reshape(a, (*x.shape[:-1], a.shape[-1]))

    return deterministic


def policy_checkpoint_of(model, cfg: SACConfig, path: Path | None) -> PolicyCheckpoint:
    """The model's current deterministic policy as the evaluation protocol reads a checkpoint."""
    rms = model.get_env().obs_rms
    action_size = int(model.action_space.shape[0])
    return PolicyCheckpoint(path or Path("<in memory>"), FORMAT, model.policy.actor_state.params,
                            np.asarray(rms.mean, np.float64), np.sqrt(np.asarray(rms.var, np.float64) + OBS_EPS),
                            OBS_CLIP, deterministic_fn(cfg.hidden, action_size, model.action_map_record))


# -- checkpoints -----------------------------------------------------------------------------------------
def _state_arrays(prefix: str, tree) -> dict[str, np.ndarray]:
    from flax import serialization

    return {f"{prefix}/{k}": v for k, v in flatten_tree(serialization.to_state_dict(tree)).items()}


def _restore(prefix: str, template, z) -> Any:
    """``template`` (a flax/optax state) with the arrays stored under ``prefix`` (same structure)."""
    from flax import serialization

    def fill(node, path: str):
        if isinstance(node, dict):
            return {k: fill(v, f"{path}/{k}") for k, v in node.items()}
        if path not in z.files:
            raise ValueError(f"the checkpoint lacks {path}: it was written by another learner version")
        return np.asarray(z[path]).astype(np.asarray(node).dtype)

    return serialization.from_state_dict(template, fill(serialization.to_state_dict(template), prefix))


_BUFFER_FIELDS = ("observations", "next_observations", "actions", "rewards", "dones", "timeouts")


def _replay_dir(path: Path) -> Path:
    return path.parent / "replay"


def _save_replay(path: Path, model) -> int:
    """Write the replay rows collected since the last save as ``replay/<first row>.npz`` (a row: one
    vectorised step of every world); return the rows ever written. Chunks the buffer has overwritten
    since are deleted."""
    buf = model.replay_buffer
    written = int(getattr(model, "replay_rows_saved", 0))
    rows = int(model.replay_rows)
    d = _replay_dir(path)
    d.mkdir(exist_ok=True)
    if rows > written:
        idx = np.arange(written, rows) % buf.buffer_size
        arrays = {name: getattr(buf, name)[idx] for name in _BUFFER_FIELDS}
        tmp = d / f"{written:012d}.tmp.npz"
        np.savez(tmp, first=np.array(written), **arrays)
        tmp.replace(d / f"{written:012d}.npz")
    for f in d.glob("*.npz"):  # chunks wholly overwritten since
        try:
            first = int(f.name.split(".")[0])
        except ValueError:
            continue
        with np.load(f) as z:
            n = int(z["rewards"].shape[0])
        if first + n <= rows - buf.buffer_size:
            f.unlink()
    model.replay_rows_saved = rows
    return rows


def _load_replay(path: Path, model, rows: int) -> None:
    """Refill the replay buffer with the first ``rows`` rows ever written (the last ``buffer_size`` of them)."""
    buf = model.replay_buffer
    d = _replay_dir(path)
    chunks = []
    for f in d.glob("*.npz") if d.is_dir() else []:
        try:
            chunks.append((int(f.name.split(".")[0]), f))
        except ValueError:
            continue
    keep_from = max(0, rows - buf.buffer_size)
    have = keep_from
    for first, f in sorted(chunks):
        with np.load(f) as z:
            n = int(z["rewards"].shape[0])
            lo, hi = max(first, keep_from), min(first + n, rows)
            if lo >= hi:
                continue
            if lo > have:
                break
            idx = np.arange(lo, hi) % buf.buffer_size
            for name in _BUFFER_FIELDS:
                getattr(buf, name)[idx] = z[name][lo - first:hi - first]
            have = max(have, hi)
    if have < rows:
        raise ValueError(f"{d} is missing replay rows {have}..{rows}; the run cannot resume exactly")
    buf.pos = rows % buf.buffer_size
    buf.full = rows >= buf.buffer_size
    model.replay_rows = model.replay_rows_saved = rows


def save_checkpoint(path: Path, model, cfg: SACConfig, layout: Mapping[str, slice], steps: int,
                    iteration: int) -> None:
    """Atomically write the learner's whole state (the replay rows first, then the checkpoint that
    counts them): a kill at any moment leaves a checkpoint that resumes exactly."""
    rows = _save_replay(path, model)
    pol = model.policy
    arrays: dict[str, Any] = {
        "format": np.array(FORMAT), "format_version": np.array(CHECKPOINT_VERSION),
        "config": np.array(json.dumps(asdict(cfg))), "obs_layout": np.array(layout_json(layout)),
        "steps": np.array(steps), "iteration": np.array(iteration), "replay_rows": np.array(rows),
        "n_updates": np.array(model._n_updates), "action_map": np.array(json.dumps(model.action_map_record)),
        "key": np.asarray(model.key), "policy_key": np.asarray(pol.key), "noise_key": np.asarray(pol.noise_key),
        "np_random": np.array(json.dumps(_np_global_state())),
        "action_space_random": np.array(json.dumps(model.action_space.np_random.bit_generator.state)),
        "norm/mean": model.get_env().obs_rms.mean, "norm/var": model.get_env().obs_rms.var,
        "norm/count": np.array(model.get_env().obs_rms.count),
    }
    arrays.update(_state_arrays("actor", pol.actor_state))
    arrays.update(_state_arrays("qf", pol.qf_state))
    arrays.update(_state_arrays("ent", model.ent_coef_state))
    if model.dep is not None:
        arrays["dep"] = np.array(json.dumps(model.dep.state_dict(), default=_json_array))
    savez_atomic(path, arrays)


def _json_array(x):
    if isinstance(x, np.ndarray):
        return {"__array__": x.tolist(), "dtype": str(x.dtype)}
    if isinstance(x, np.generic):
        return x.item()
    raise TypeError(f"cannot store {type(x).__name__} in a checkpoint")


def _from_json_arrays(node):
    if isinstance(node, dict):
        if "__array__" in node:
            return np.asarray(node["__array__"], dtype=node["dtype"])
        return {k: _from_json_arrays(v) for k, v in node.items()}
    if isinstance(node, list):
        return [_from_json_arrays(v) for v in node]
    return node


def _np_global_state() -> list:
    name, keys, pos, has_gauss, cached = np.random.get_state()
    return [name, np.asarray(keys).tolist(), int(pos), int(has_gauss), float(cached)]


def _set_np_global_state(s: list) -> None:
    np.random.set_state((s[0], np.asarray(s[1], np.uint32), s[2], s[3], s[4]))


def _read_config(z) -> SACConfig:
    return SACConfig(**json.loads(str(z["config"])))


def _check(path, z, layout: Mapping[str, slice] | None, obs_size: int | None) -> None:
    version = int(z["format_version"])
    if version != CHECKPOINT_VERSION:
        raise ValueError(f"{path}: checkpoint format {version}, this mskbench reads {CHECKPOINT_VERSION}")
    check_obs_layout(path, str(z["obs_layout"]), layout, obs_size, int(z["norm/mean"].size))


def load_checkpoint(path: str | Path, model, cfg: SACConfig, layout: Mapping[str, slice]) -> tuple[int, int]:
    """Restore ``model`` (built by :func:`build_model` with the same config) from ``path``; return
    (steps, iteration)."""
    import jax.numpy as jnp

    path = Path(path)
    with np.load(path, allow_pickle=False) as z:
        if "policy_only" in z.files:
            raise ValueError(f"{path} holds only a policy (mskbench export-policy): it can be evaluated, not "
                             "resumed; resume from the run's checkpoint.npz")
        _check(path, z, layout, None)
        old = asdict(_read_config(z))
        diff = sorted(k for k, v in asdict(cfg).items() if k != "total_steps" and old.get(k) != v)
        if diff:
            raise ValueError(f"{path} was trained with a different config ({diff}); resume with the same settings")
        pol = model.policy
        pol.actor_state = _restore("actor", pol.actor_state, z)
        pol.qf_state = _restore("qf", pol.qf_state, z)
        model.ent_coef_state = _restore("ent", model.ent_coef_state, z)
        model.key, pol.key, pol.noise_key = (jnp.asarray(z[k]) for k in ("key", "policy_key", "noise_key"))
        _set_np_global_state(json.loads(str(z["np_random"])))
        model.action_space.np_random.bit_generator.state = json.loads(str(z["action_space_random"]))
        rms = model.get_env().obs_rms
        rms.mean, rms.var, rms.count = z["norm/mean"].copy(), z["norm/var"].copy(), float(z["norm/count"])
        model._n_updates = int(z["n_updates"])
        steps, iteration = int(z["steps"]), int(z["iteration"])
        model.num_timesteps = steps
        if model.muscle_action_map is not None:  # the DynSyn weight bound's schedule continues
            model.muscle_action_map.set_step(steps)
        _load_replay(path, model, int(z["replay_rows"]))
        if model.dep is not None and "dep" in z.files:
            model.dep.load_state_dict(_from_json_arrays(json.loads(str(z["dep"]))))
    return steps, iteration


def sac_policy_checkpoint(path: str | Path, obs_layout: Mapping[str, slice], obs_size: int) -> PolicyCheckpoint:
    """A ``mskbench-sac`` checkpoint (full or policy-only) as a :class:`~mskbench.agents.base.PolicyCheckpoint`."""
    import jax.numpy as jnp

    path = Path(path)
    with np.load(path, allow_pickle=False) as z:
        _check(path, z, obs_layout, obs_size)
        cfg = _read_config(z)
        flat = {k[len("actor/params/"):]: jnp.asarray(z[k]) for k in z.files if k.startswith("actor/params/")}
        params = unflatten_tree(flat)
        action_map = json.loads(str(z["action_map"]))
        mean, var = z["norm/mean"].astype(np.float64), z["norm/var"].astype(np.float64)
    last = max(int(k.split("/")[1].split("_")[1]) for k in flat if k.startswith("params/Dense_"))
    action_size = int(flat[f"params/Dense_{last}/bias"].shape[0])
    return PolicyCheckpoint(path, FORMAT, params, mean, np.sqrt(var + OBS_EPS), OBS_CLIP,
                            deterministic_fn(cfg.hidden, action_size, action_map))


#: What a policy-only export keeps.
_POLICY_KEYS = ("format", "format_version", "config", "obs_layout", "steps", "iteration", "action_map",
                "norm/mean", "norm/var", "norm/count")


def export_policy(src: str | Path, dst: str | Path) -> Path:
    """The actor and the normalisation of checkpoint ``src`` in ``dst`` (no critics, optimisers, replay,
    random states): evaluates like ``src``; cannot be resumed."""
    dst = Path(dst)
    with np.load(src, allow_pickle=False) as z:
        _check(src, z, None, None)
        kept = {k: z[k] for k in z.files if k in _POLICY_KEYS or k.startswith("actor/params/")}
    kept["policy_only"] = np.array(True)
    savez_atomic(dst, kept)
    return dst


def derive(config: SACConfig, given: Mapping[str, Any], backend: str) -> SACConfig:
    """DepRL's cadence in scalar transitions (30 updates per 1,000): one update round every
    ``ceil(1000 / num_envs)`` vectorised steps unless ``train_freq`` was given."""
    if config.exploration == "dep" and "train_freq" not in given:
        return dataclasses.replace(config, train_freq=max(1, math.ceil(1000 / config.num_envs)))
    return config

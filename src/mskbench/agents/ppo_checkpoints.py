"""PPO's checkpoints (:mod:`mskbench.agents.ppo`): writing, reading and resuming them, a policy-only export,
the deterministic policy of one (:func:`ppo_policy_checkpoint`), and the actor of one as the start of a new run
(:func:`init_actor`, ``--init``). A checkpoint without a ``format`` entry is this trainer's.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict
from functools import partial
from pathlib import Path

import numpy as np

from mskbench.agents.base import (PolicyCheckpoint, check_obs_layout, flatten_tree, layout_json, savez_atomic,
                                  unflatten_tree)
from mskbench.agents.ppo_networks import ObsSplit, PPOConfig, RunningNorm, TrainState, _jax, deterministic_action

#: The checkpoints' format (they carry no ``format`` entry: a checkpoint without one is this trainer's).
FORMAT = "mskbench-ppo"
CHECKPOINT_VERSION = 1


def jax_jit(fn):
    jax, _ = _jax()
    return jax.jit(fn)


def init_actor(path: str | Path, params, cfg: PPOConfig, layout: Mapping[str, slice], obs_size: int):
    """``params`` with the actor of the checkpoint at ``path`` (any whose policy is PPO's: a PPO or BC run;
    a run directory picks its evaluated checkpoint): its mean network and log-std, and its observation
    normalisation. The critic stays ``params``'. A different architecture or observation layout is a
    ``ValueError``."""
    from mskbench.agents.run_dir import checkpoint_path

    _, jnp = _jax()
    found = checkpoint_path(str(path))
    if found is None:
        raise ValueError(f"--init {path}: no checkpoint there (a run directory or a .npz)")
    with np.load(found, allow_pickle=False) as z:
        if "params/policy/0/w" not in z.files:
            fmt = str(z["format"]) if "format" in z.files else FORMAT
            raise ValueError(f"--init {path}: a {fmt} checkpoint has no PPO actor (its MLP policy); PPO starts "
                             "from a PPO or BC run")
        theirs = PPOConfig(**json.loads(str(z["config"])))
        if theirs.policy != cfg.policy or theirs.hidden != cfg.hidden:
            raise ValueError(f"--init {path}: its actor is a {theirs.policy} of widths {list(theirs.hidden)}, this "
                             f"run's a {cfg.policy} of widths {list(cfg.hidden)}; give the same hidden sizes")
        loaded, norm = _read_policy(z)
        check_layout(found, _stored_layout(z), layout, obs_size, norm.mean.size, theirs)
    out = dict(params)
    out["policy"] = loaded["policy"]
    if "log_std" in loaded:
        out["log_std"] = jnp.asarray(loaded["log_std"], jnp.float32)
    for got, want in zip(jax_leaves(out["policy"]), jax_leaves(params["policy"])):
        if got.shape != want.shape:
            raise ValueError(f"--init {path}: its actor's shapes differ from this task's ({got.shape} vs {want.shape})")
    return out, norm


def jax_leaves(tree):
    jax, _ = _jax()
    return jax.tree_util.tree_leaves(tree)


# -- checkpoints ----------------------------------------------------------------------------
def check_layout(path, stored: str | None, layout: Mapping[str, slice], obs_size: int, trained_size: int,
                 cfg: PPOConfig) -> None:
    """A clear error when a checkpoint's observations do not match the env's.

    A checkpoint without a recorded layout predates the record; its encoder–decoder policies (the
    mouse imitation's) read the observation blocks in an order the env no longer has, so they are
    refused rather than fed permuted observations.
    """
    if stored is None and cfg.policy == "encoder_decoder":
        raise ValueError(f"{path} is an encoder-decoder checkpoint written before checkpoints recorded their "
                         "observation layout; its observation blocks were in another order: train it again")
    check_obs_layout(path, stored, layout, obs_size, trained_size)


def save_checkpoint(path: Path, state: TrainState, cfg: PPOConfig, layout: Mapping[str, slice] | None = None) -> None:
    """Write atomically (temp file + rename): a kill never leaves a torn checkpoint. ``layout``
    (the env's observation layout) is recorded, so evaluation and resume can check it."""
    flat = {f"params/{k}": v for k, v in flatten_tree(state.params).items()}
    flat.update({f"opt/{k}": v for k, v in flatten_tree(state.opt_state).items()})
    flat.update({"norm/mean": state.norm.mean, "norm/var": state.norm.var, "norm/count": np.array(state.norm.count),
                 "steps": np.array(state.steps), "iteration": np.array(state.iteration),
                 "key": np.asarray(state.key), "format_version": np.array(CHECKPOINT_VERSION),
                 "config": np.array(json.dumps(asdict(cfg)))})
    if layout is not None:
        flat["obs_layout"] = np.array(layout_json(layout))
    savez_atomic(path, flat)


def _read_version(z, path) -> None:
    version = int(z["format_version"])
    if version != CHECKPOINT_VERSION:
        raise ValueError(f"{path}: checkpoint format {version}, this mskbench reads {CHECKPOINT_VERSION}")


def _stored_layout(z) -> str | None:
    return str(z["obs_layout"]) if "obs_layout" in z.files else None


def _read_policy(z):
    """The parameters and the observation normalisation of an open checkpoint."""
    _, jnp = _jax()
    params = unflatten_tree({k[len("params/"):]: jnp.asarray(z[k]) for k in z.files if k.startswith("params/")})
    return params, RunningNorm(z["norm/mean"].copy(), z["norm/var"].copy(), float(z["norm/count"]))


def load_checkpoint(path: str | Path, expect_config: PPOConfig | None = None,
                    expect_layout: Mapping[str, slice] | None = None) -> TrainState:
    _, jnp = _jax()
    with np.load(path, allow_pickle=False) as z:
        _read_version(z, path)
        if "policy_only" in z.files:
            raise ValueError(f"{path} holds only a policy (mskbench export-policy): it can be evaluated, not "
                             "resumed; resume from the run's checkpoint.npz")
        cfg = PPOConfig(**json.loads(str(z["config"])))
        if expect_config is not None:
            a, b = asdict(cfg), asdict(expect_config)
            diff = {k for k in a if k not in ("total_steps", "devices") and a[k] != b[k]}
            if diff:
                raise ValueError(f"{path} was trained with a different config ({sorted(diff)}); "
                                 "resume with the same settings")
        params, norm = _read_policy(z)
        if expect_layout is not None:
            size = list(expect_layout.values())[-1].stop  # a Mapping's values are not reversible
            check_layout(path, _stored_layout(z), expect_layout, size, norm.mean.size, cfg)
        opt = unflatten_tree({k[len("opt/"):]: jnp.asarray(z[k]) for k in z.files if k.startswith("opt/")})
        return TrainState(params, opt, norm, int(z["steps"]), int(z["iteration"]), jnp.asarray(z["key"]))


#: What a policy-only export leaves out: the critic, the optimiser's moments, the RNG key.
_TRAINING_ONLY = ("params/value/", "opt/", "key")


def export_policy(src: str | Path, dst: str | Path) -> Path:
    """Write the policy of checkpoint ``src`` to ``dst``: its networks, log-std and observation
    normalisation, and the config and step count, without what only training needs
    (:data:`_TRAINING_ONLY`). For Table XVI's networks that is about a sixth of the size. The file
    evaluates like ``src`` (the same deterministic actions); it cannot be resumed.
    """
    dst = Path(dst)
    with np.load(src, allow_pickle=False) as z:
        _read_version(z, src)
        kept = {k: z[k] for k in z.files if not k.startswith(_TRAINING_ONLY)}
    kept["policy_only"] = np.array(True)
    savez_atomic(dst, kept)
    return dst


def ppo_policy_checkpoint(path: str | Path, obs_layout: Mapping[str, slice], obs_size: int):
    """This trainer's checkpoint (full or policy-only) as a :class:`~mskbench.agents.base.PolicyCheckpoint`."""
    with np.load(path, allow_pickle=False) as z:
        _read_version(z, path)
        cfg = PPOConfig(**json.loads(str(z["config"])))
        params, norm = _read_policy(z)
        check_layout(path, _stored_layout(z), obs_layout, obs_size, norm.mean.size, cfg)
    split = ObsSplit.from_layout(obs_layout, obs_size, cfg.encoder_blocks) if cfg.policy == "encoder_decoder" else None
    return PolicyCheckpoint(Path(path), FORMAT, params, np.asarray(norm.mean, np.float64),
                            np.sqrt(np.asarray(norm.var, np.float64) + 1e-8), norm.clip,
                            jax_jit(partial(deterministic_action, cfg=cfg, split=split)))

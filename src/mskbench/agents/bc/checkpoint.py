"""BC's checkpoints: the student in PPO's layout plus the format, the optimiser and the BC settings
(:func:`save_checkpoint`), read back to resume (:func:`load_checkpoint`), as a policy
(:func:`bc_policy_checkpoint`) or exported alone (:func:`export_policy`)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mskbench.agents.base import RESUME_FREE, PolicyCheckpoint, check_obs_layout, config_defaults, flatten_tree
from mskbench.agents.base import layout_json, savez_atomic, unflatten_tree
from mskbench.agents.bc.config import REMOVED_AT, BCConfig, removed_settings
from mskbench.agents.bc.student import widen_members
from mskbench.agents.ppo_networks import RunningNorm, _jax

FORMAT = "mskbench-bc"
CHECKPOINT_VERSION = 1


@dataclass
class BCState:
    params: Any  # the fitted MLP (PPO's params["policy"] layout; an ensemble's members stacked, leading axis K)
    opt_state: Any
    norm: RunningNorm
    log_std: np.ndarray
    steps: int = 0
    iteration: int = 0
    members: int = 1  # BCConfig.ensemble

    @property
    def deployed(self) -> Any:
        """The student that acts, is saved as ``params/policy`` and is evaluated: an ensemble's members as one
        wide MLP."""
        return self.params if self.members == 1 else widen_members(self.params)


def save_checkpoint(path: Path, state: BCState, cfg: BCConfig, layout: Mapping[str, slice] | None = None) -> None:
    """The student in PPO's layout (``params/policy``, ``params/log_std``, ``norm/``, ``config`` as PPO's
    actor config), plus the format, the optimiser and the BC settings (an ensemble's members as
    ``bc_members/``)."""
    flat = {f"params/policy/{k}": v for k, v in flatten_tree(state.deployed).items()}
    if state.members > 1:  # the members the run goes on from
        flat.update({f"bc_members/{k}": v for k, v in flatten_tree(state.params).items()})
    flat["params/log_std"] = np.asarray(state.log_std, np.float32)
    flat.update({f"opt/{k}": v for k, v in flatten_tree(state.opt_state).items()})
    flat.update({"format": np.array(FORMAT), "format_version": np.array(CHECKPOINT_VERSION),
                 "norm/mean": state.norm.mean, "norm/var": state.norm.var, "norm/count": np.array(state.norm.count),
                 "steps": np.array(state.steps), "iteration": np.array(state.iteration),
                 "config": np.array(json.dumps(asdict(cfg.actor_config()))),
                 "bc_config": np.array(json.dumps(asdict(cfg)))})
    if layout is not None:
        flat["obs_layout"] = np.array(layout_json(layout))
    savez_atomic(path, flat)


def load_checkpoint(path: str | Path, expect_config: BCConfig, expect_layout: Mapping[str, slice]) -> BCState:
    """The state a run goes on from: its checkpoint at ``path``, trained with ``expect_config`` (a
    ``ValueError`` otherwise, and for a run that used a setting BC no longer has, :data:`REMOVED`)."""
    with np.load(path, allow_pickle=False) as z:
        if "bc_config" not in z.files:
            raise ValueError(f"{path} holds only a policy: it can be evaluated, not resumed")
        old = json.loads(str(z["bc_config"]))
        gone = removed_settings(old)
        if gone:
            raise ValueError(f"{path} was trained with {', '.join(f'{k}={v}' for k, v in gone.items())}, removed from "
                             f"BC (docs/distillation.md; still at commit {REMOVED_AT}): it can be evaluated, not resumed")
        new = json.loads(json.dumps(asdict(expect_config)))
        defaults = json.loads(json.dumps(config_defaults(BCConfig)))  # keys newer than the run
        diff = sorted(k for k in new if k not in RESUME_FREE and old.get(k, defaults[k]) != new[k])
        if diff:
            raise ValueError(f"{path} was trained with a different config ({diff}); resume with the same settings")
        size = list(expect_layout.values())[-1].stop
        check_obs_layout(path, str(z["obs_layout"]), expect_layout, size, z["norm/mean"].size)
    return read_state(path, expect_config.ensemble)


def read_state(path: str | Path, members: int = 1) -> BCState:
    """The state a BC checkpoint holds, unchecked (for studies of a run's student): the network that acts, or
    the ``members`` of an ensemble, the optimiser and the normalisation the student divides by. (Of a run with
    the removed ``average``: the averaged network or members, which acted.)"""
    _, jnp = _jax()
    with np.load(path, allow_pickle=False) as z:
        deployed, fitted, averaged = ({k[len(p):]: jnp.asarray(z[k]) for k in z.files if k.startswith(p)}
                                      for p in ("params/policy/", "bc_members/", "bc_members_average/"))
        params = unflatten_tree(averaged or fitted or deployed)
        opt = unflatten_tree({k[len("opt/"):]: jnp.asarray(z[k]) for k in z.files if k.startswith("opt/")})
        norm = RunningNorm(z["norm/mean"].copy(), z["norm/var"].copy(), float(z["norm/count"]))
        return BCState(params, opt, norm, z["params/log_std"].copy(), int(z["steps"]), int(z["iteration"]), members)


def bc_policy_checkpoint(path: str | Path, obs_layout: Mapping[str, slice], obs_size: int) -> PolicyCheckpoint:
    """A BC checkpoint as a :class:`~mskbench.agents.base.PolicyCheckpoint` (PPO's reader: the same actor)."""
    from mskbench.agents.ppo import ppo_policy_checkpoint

    ckpt = ppo_policy_checkpoint(path, obs_layout, obs_size)
    ckpt.format = FORMAT
    return ckpt


def export_policy(src: str | Path, dst: str | Path) -> Path:
    """The student alone (no optimiser, no BC settings): it evaluates like ``src`` and cannot be resumed. (A
    checkpoint of a run with the removed ``std_floor`` or ``average`` also held ``bc_norm_var`` or ``bc_fitted/``.)"""
    dst = Path(dst)
    with np.load(src, allow_pickle=False) as z:
        kept = {k: z[k] for k in z.files
                if not k.startswith(("opt/", "bc_config", "bc_norm_var", "bc_fitted/", "bc_members"))}
    kept["policy_only"] = np.array(True)
    savez_atomic(dst, kept)
    return dst

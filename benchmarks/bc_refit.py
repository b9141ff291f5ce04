"""A BC student fitted further on its own run's data set, at lower learning rates, with no new data.

Reads a checkpoint of ``mskbench train --algo bc`` (its student, optimiser and normalisation) and the
data set that checkpoint had seen (the run's ``dagger/`` files up to its iteration), then runs Adam steps
(minibatches of the run's size, drawn uniformly) in phases of a constant learning rate each, and writes
the result to ``--out``/checkpoint.npz, a BC checkpoint in the run's format (with the run's ``run.json``
and ``config.json`` beside it): ``mskbench eval --policy OUT/checkpoint.npz`` evaluates it. Prints the
mean loss of the last 250 steps of every 1,000. It asks whether a student's swings from one checkpoint
to the next are the noise of the fast fit (``--set lr_final=...`` is the in-run answer).

    python benchmarks/bc_refit.py runs/bc-stand/checkpoint.npz --out runs/bc-stand-refit \\
        --phases 1e-4:3000,3e-5:3000
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from pathlib import Path

import numpy as np


def refit(checkpoint: Path, out: Path, phases: list[tuple[float, int]], seed: int = 12345) -> list[dict]:
    from mskbench.agents import bc
    from mskbench.agents.checkpoint import stored_layout
    from mskbench.agents.ppo_networks import _jax

    _, jnp = _jax()
    with np.load(checkpoint, allow_pickle=False) as z:
        if "bc_config" not in z.files:
            raise SystemExit(f"error: {checkpoint} is not a resumable BC checkpoint (no bc_config)")
        cfg = bc.BCConfig(**json.loads(str(z["bc_config"])))
    if cfg.loss != "excitation":
        raise SystemExit(f"error: the run fits loss={cfg.loss!r}; this script refits loss='excitation' runs only")
    layout = stored_layout(checkpoint)
    state = bc.load_checkpoint(checkpoint, cfg, layout)
    if state.average is not None:  # a run with `average`: refit the averaged student (an ensemble's averaged members)
        state.params, state.average = state.average, None
    obs, labels = bc.read_dataset(checkpoint.parent / bc.DATA_DIR, state.iteration)
    if not obs:
        raise SystemExit(f"error: no data set beside {checkpoint} (expected {checkpoint.parent / bc.DATA_DIR})")
    bc.keep_newest(obs, labels, cfg.max_samples)  # what the run's fit drew from
    obs, labels = np.concatenate(obs), np.concatenate(labels)
    x = jnp.asarray(cfg.policy_norm(state.norm)(obs))
    acts = jnp.zeros((len(obs), 0), jnp.float32)

    def show(row: dict) -> None:
        print(f"lr {row['lr']:g}: {row['steps']} steps, loss {row['loss']:.5f} ({row['seconds']:.0f} s)", flush=True)

    params, opt, rows, sq = bc.fit_phases(bc.make_fit(cfg), state.params, state.opt_state, x, jnp.asarray(labels),
                                          acts, phases, np.random.default_rng(seed), cfg.minibatch_size, show)
    state.params, state.opt_state = params, opt
    state.log_std = bc.fitted_log_std(sq, 250)  # phases are never empty (parse_phases)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("run.json", "config.json"):
        if (checkpoint.parent / name).is_file():
            shutil.copy(checkpoint.parent / name, out / name)
    bc.save_checkpoint(out / "checkpoint.npz", state, cfg, layout)
    print(f"{len(obs)} samples (iteration {state.iteration}); wrote {out / 'checkpoint.npz'}")
    return rows


def _phases(text: str) -> list[tuple[float, int]]:
    from mskbench.agents.bc import parse_phases

    try:
        return parse_phases(text)
    except ValueError as e:
        raise SystemExit(f"error: --phases: {e}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoint", help="a BC run's checkpoint.npz or best.npz")
    ap.add_argument("--out", required=True, help="folder for the refitted checkpoint.npz")
    ap.add_argument("--phases", default="1e-4:3000,3e-5:3000", help="LR:STEPS[,LR:STEPS...]")
    ap.add_argument("--seed", type=int, default=12345, help="seed of the minibatch draws")
    args = ap.parse_args(argv)
    path = Path(args.checkpoint)
    if not path.is_file():
        sys.exit(f"error: no checkpoint at {path}")
    refit(path, Path(args.out), _phases(args.phases), args.seed)


if __name__ == "__main__":
    main()

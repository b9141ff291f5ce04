"""A BC student fitted further on its own run's data set, at lower learning rates, with no new data.

Reads a checkpoint of ``mskbench train --algo bc`` (its student, optimiser and normalisation) and the
data set that checkpoint had seen (the run's ``dagger/`` files up to its iteration), then runs Adam steps
(minibatches of the run's size, drawn uniformly) in phases of a constant learning rate each, and writes
the result to ``--out``/checkpoint.npz, a BC checkpoint in the run's format (with the run's ``run.json``
and ``config.json`` beside it): ``mskbench eval --policy OUT/checkpoint.npz`` evaluates it. Prints the
mean loss of the last 250 steps of every 1,000. It asks whether a student's swings from one checkpoint
to the next are the noise of the fast fit (docs/distillation.md, "A slower end to each fit": runs 9 refitted;
BC's in-run answers, ``lr_final`` and ``polish``, were removed after runs 10 and 11, and run at commit a6e0409).

    python benchmarks/studies/bc_refit.py runs/bc-stand/checkpoint.npz --out runs/bc-stand-refit \\
        --phases 1e-4:3000,3e-5:3000
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
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
        cfg = bc.stored_config(json.loads(str(z["bc_config"])))  # a removed setting's effect is in the state
    if cfg.loss != "excitation":
        raise SystemExit(f"error: the run fits loss={cfg.loss!r}; this script refits loss='excitation' runs only")
    layout = stored_layout(checkpoint)
    state = bc.read_state(checkpoint, cfg.ensemble)  # a run with the removed `average`: its averaged student
    obs, labels = bc.read_dataset(checkpoint.parent / bc.DATA_DIR, state.iteration)
    if not obs:
        raise SystemExit(f"error: no data set beside {checkpoint} (expected {checkpoint.parent / bc.DATA_DIR})")
    bc.keep_newest(obs, labels, cfg.max_samples)  # what the run's fit drew from
    obs, labels = np.concatenate(obs), np.concatenate(labels)
    x = jnp.asarray(state.norm(obs))  # what the student divides by (floored for a run with `std_floor`)
    acts = jnp.zeros((len(obs), 0), jnp.float32)

    def show(row: dict) -> None:
        print(f"lr {row['lr']:g}: {row['steps']} steps, loss {row['loss']:.5f} ({row['seconds']:.0f} s)", flush=True)

    params, opt, rows, sq = fit_phases(bc.make_fit(cfg), state.params, state.opt_state, x, jnp.asarray(labels),
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


def parse_phases(text: str) -> list[tuple[float, int]]:
    """``"LR:STEPS[,LR:STEPS...]"`` as (learning rate, Adam steps) pairs; a clear error otherwise."""
    form = "LR:STEPS[,LR:STEPS...], e.g. 1e-4:3000,3e-5:3000"
    try:
        phases = [(float(lr), int(n)) for lr, n in (p.split(":") for p in str(text).split(","))]
    except ValueError:
        raise ValueError(f"phases take the form {form}; got {text!r}") from None
    if not phases or any(not lr > 0 or n < 1 for lr, n in phases):
        raise ValueError(f"phases need learning rates > 0 and steps >= 1 ({form}); got {text!r}")
    return phases


def fit_phases(fit, params, opt_state, x, y, acts, phases: list[tuple[float, int]], rng: np.random.Generator,
               minibatch: int, on_chunk=None, chunk: int = 1000):
    """Adam steps of ``fit`` (:func:`make_fit`) in ``phases`` of a constant learning rate each, on minibatches
    of ``minibatch`` rows drawn uniformly from ``x``/``y``/``acts``, ``chunk`` steps per call. Returns
    ``(params, opt_state, rows, squared residuals of the last call)``; one row per call (the phase's
    learning rate, its steps so far, the mean loss of the call's last 250 steps, its seconds so far),
    each also given to ``on_chunk``."""
    from mskbench.agents import bc
    from mskbench.agents.ppo_networks import _jax

    _, jnp = _jax()
    rows, sq = [], None
    for lr, n in phases:
        t0 = time.perf_counter()
        for done in range(0, n, chunk):
            idx = bc.draw_rows(rng, len(x), min(chunk, n - done), minibatch, fit.members)
            params, opt_state, losses, sq = fit(params, opt_state, x, y, acts, jnp.asarray(idx),
                                                jnp.full(idx.shape[-2], lr, jnp.float32))
            rows.append({"lr": lr, "steps": done + idx.shape[-2], "loss": float(np.asarray(losses)[-250:].mean()),
                         "seconds": time.perf_counter() - t0})
            if on_chunk is not None:
                on_chunk(rows[-1])
    return params, opt_state, rows, sq


def _phases(text: str) -> list[tuple[float, int]]:
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

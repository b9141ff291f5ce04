"""The mean of BC students' weights: one checkpoint whose network is the average of several.

Every ``params/policy/...`` array is the mean of those arrays over the checkpoints given (of one run, or
of runs with the same network and observation layout); everything else (normalisation, log-std,
settings) is the last checkpoint's. ``mskbench eval --policy OUT`` evaluates it. It asks whether the
students of nearby checkpoints err in different directions, so that their mean errs less (``--set
average=...`` is the in-run answer).

    python benchmarks/studies/bc_average.py runs/bc-stand/best.npz runs/bc-stand/checkpoint.npz --out mean.npz
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np


def average(paths: list[Path], out: Path) -> Path:
    from mskbench.agents.base import savez_atomic

    loaded = []
    for p in paths:
        with np.load(p, allow_pickle=False) as z:
            loaded.append({k: z[k] for k in z.files})
    keys = [k for k in loaded[-1] if k.startswith("params/policy/")]
    if not keys:
        raise SystemExit(f"error: {paths[-1]} holds no params/policy/ arrays (not a BC or PPO checkpoint)")
    for p, z in zip(paths, loaded):
        bad = [k for k in keys if k not in z or z[k].shape != loaded[-1][k].shape]
        if bad:
            raise SystemExit(f"error: {p} has another network than {paths[-1]} ({bad[0]})")
    merged = dict(loaded[-1])
    for k in keys:
        merged[k] = np.mean([z[k] for z in loaded], axis=0).astype(loaded[-1][k].dtype)
    out.parent.mkdir(parents=True, exist_ok=True)
    savez_atomic(out, merged)
    return out


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkpoints", nargs="+", help="checkpoint files (.npz); the last gives everything but the weights")
    ap.add_argument("--out", required=True, help="the averaged checkpoint (.npz)")
    args = ap.parse_args(argv)
    paths = [Path(p) for p in args.checkpoints]
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        sys.exit(f"error: no checkpoint at {', '.join(missing)}")
    print(f"averaged {len(paths)} students into {average(paths, Path(args.out))}")


if __name__ == "__main__":
    main()

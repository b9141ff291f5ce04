"""Where the teacher's label sits at a bound of [-1, 1], how far inside it does the student act?

A BC run (``mskbench train --algo bc``) keeps its DAgger data (``dagger/NNNNN.npz``, the observations and
the teacher's labels of each iteration). This reads the first, the middle and the last of those files of
each run, draws up to ``--rows`` rows of each, and compares the run's last student (``checkpoint.npz``; its
clipped mean action, as it acts) with the labels: the share of label entries at +1 and at -1, the
student's mean action on those entries, and its mean error on the entries inside the bounds.

    python benchmarks/studies/bound_bias.py bc_reach_drop60 bc_reach_bounded --json bound_bias.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def bound_bias(run: str, rows: int = 2000) -> list[dict]:
    import numpy as np

    from mskbench.agents import bc
    from mskbench.agents.bc.student import student_action

    ckpt = Path(run) / "checkpoint.npz"
    files = sorted((Path(run) / "dagger").glob("*.npz"))
    if not ckpt.is_file() or not files:
        raise ValueError(f"{run} is not a BC run directory (it needs checkpoint.npz and dagger/*.npz)")
    with np.load(ckpt, allow_pickle=False) as z:
        cfg = bc.stored_config(json.loads(str(z["bc_config"])))
    state = bc.read_state(ckpt, cfg.ensemble)
    params = [{k: np.asarray(v) for k, v in layer.items()} for layer in state.deployed]
    norm = state.norm  # what the student divides by
    out = []
    for f in dict.fromkeys([files[0], files[len(files) // 2], files[-1]]):
        with np.load(f) as d:
            obs, labels = d["obs"], d["labels"]
        idx = np.random.default_rng(0).choice(len(obs), min(rows, len(obs)), replace=False)
        y = labels[idx].astype(np.float64)
        a = student_action(params, norm(obs[idx].astype(np.float64)).astype(np.float32)).astype(np.float64)
        hi, lo = y >= 1.0, y <= -1.0
        inside = ~(hi | lo)
        out.append({"run": Path(run).name, "file": f.name, "at_plus1": round(float(hi.mean()), 3),
                    "at_minus1": round(float(lo.mean()), 3),
                    "student_where_plus1": round(float(a[hi].mean()), 3) if hi.any() else None,
                    "student_where_minus1": round(float(a[lo].mean()), 3) if lo.any() else None,
                    "error_inside": round(float((a[inside] - y[inside]).mean()), 4) if inside.any() else None})
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("runs", nargs="+", help="BC run directories")
    ap.add_argument("--rows", type=int, default=2000, help="rows drawn from each data file")
    ap.add_argument("--json", help="write the rows here")
    args = ap.parse_args()
    if args.rows < 1:
        ap.error(f"--rows must be >= 1, got {args.rows}")
    table = []
    for run in args.runs:
        try:
            table += bound_bias(run, args.rows)
        except ValueError as e:
            ap.error(str(e))
    for r in table:
        print(f"{r['run']} {r['file']}: labels at +1 {r['at_plus1']:.2f}, at -1 {r['at_minus1']:.2f}; the student "
              f"there {r['student_where_plus1']}, {r['student_where_minus1']}; mean error inside {r['error_inside']}")
    if args.json:
        Path(args.json).write_text(json.dumps(table, indent=1))


if __name__ == "__main__":
    main()

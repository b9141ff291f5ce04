"""The benchmark's "achievable" column: on each of the 22 tasks, the best controller this package ships and
its success rate, beside the paper's best method.

Reads results files written by ``benchmarks/expert_results.py --json`` (each a 50-episode run of the
expert on some tasks, seeds 0-49, the train environment) in the order given: a later file's row for a task
replaces an earlier one's (the files are the behaviours' successive runs, the last the one shipped). The
probes' rows (``hold`` and the cheat probes, stored beside the expert to test the criterion) are not
controllers and are skipped. A task no file covers is listed as having no controller. Prints a Markdown
table; ``--json`` writes the rows.

    python benchmarks/achievable.py docs/expert_results.json docs/walk_expert_results.json --json docs/achievable.json
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from mskbench.catalog import SUITE
from mskbench.control.probes import PROBES
from mskbench.eval.published import best_published

#: The privileged built-in policies that probe a criterion rather than solve a task.
PROBE_NAMES = frozenset({"hold", *PROBES})


def achievable(paths: list[str]) -> list[dict]:
    """One row per suite task: its shipped controller's row from the last file that has one (or none)."""
    latest: dict[str, tuple[str, dict]] = {}
    for path in paths:
        try:
            data = json.loads(Path(path).read_text())
            rows = data["rows"]
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise SystemExit(f"error: {path} is not a results file of benchmarks/expert_results.py ({exc})") from None
        for row in rows:
            if row["policy"] not in PROBE_NAMES:
                latest[row["task"]] = (path, row)
    out = []
    for task in SUITE:
        path, row = latest.get(task, (None, None))
        out.append({"task": task, "controller": row["policy"] if row else None,
                    "sr_pct": row["sr_pct"] if row else None, "episodes": row["episodes"] if row else None,
                    "source": path, "paper_best": best_published(task)})
    return out


def markdown(rows: list[dict]) -> str:
    lines = ["| task | best controller shipped | SR % | episodes | raw rows | paper's best: method, SR % |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        best = r["paper_best"]
        paper = f"{best['method']}, {best['sr_pct']:g}" if best else "—"
        if r["controller"] is None:
            lines.append(f"| {r['task']} | none | — | — | — | {paper} |")
        else:
            lines.append(f"| {r['task']} | {r['controller']} | {r['sr_pct']:g} | {r['episodes']} | {r['source']} | {paper} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("results", nargs="+", help="results files of benchmarks/expert_results.py --json, oldest first")
    ap.add_argument("--json", default=None, help="write the rows here")
    args = ap.parse_args(argv)
    rows = achievable(args.results)
    print(markdown(rows))
    served = [r for r in rows if r["controller"] is not None]
    print(f"\n{len(served)} of {len(rows)} tasks have a controller; it succeeds on "
          f"{sum(r['sr_pct'] > 0 for r in served)} of them.", file=sys.stderr)
    if args.json:
        Path(args.json).write_text(json.dumps(rows, indent=1) + "\n")


if __name__ == "__main__":
    main()

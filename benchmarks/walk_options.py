"""The walking expert with its options changed: how long it walks, how far, on which seeds.

Each positional argument is one setting: space-separated ``name=value`` overrides of
``mskbench.control.walking.Walking``'s class options (``""``: the shipped settings). For each, one Walk
episode per seed (the train environment, the seed's own start, the package's episode loop) and a line:
the median episode length in control steps and every seed's, the median number of steps the walker
landed, the median pelvis travel (m), the median of each episode's largest sideways speed (m/s), the mean
muscle activation, and how many episodes reached the time limit (walked the whole 10 s). ``--json``
writes the per-seed rows.

    python benchmarks/walk_options.py --seeds 0-15 "" "predict_law=0" "min_width_m=0.08 max_width_m=0.40"
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np


def seeds_of(text: str) -> list[int]:
    if "-" in text and "," not in text:
        lo, hi = (int(x) for x in text.split("-"))
        return list(range(lo, hi + 1))
    return [int(x) for x in text.split(",")]


def parse_setting(text: str) -> dict[str, float]:
    from mskbench.control.walking import Walking

    out = {}
    for item in text.split():
        name, _, value = item.partition("=")
        if not hasattr(Walking, name) or not isinstance(getattr(Walking, name), (int, float)):
            options = sorted(k for k, v in vars(Walking).items() if isinstance(v, (int, float)) and not k.startswith("_"))
            raise SystemExit(f"error: {name!r} is not a numeric option of Walking; options: {', '.join(options)}")
        out[name] = float(value)
    return out


def run(setting: dict[str, float], seeds: list[int]) -> list[dict]:
    from mskbench.control.expert import ExpertPolicy
    from mskbench.control.walking import Walk
    from mskbench.envs import MSKEnv
    from mskbench.eval.episodes import play_episode

    env = MSKEnv("Walk")
    beh = Walk()
    for name, value in setting.items():
        setattr(beh, name, value)
    policy = ExpertPolicy(env, beh)
    rows = []
    for seed in seeds:
        xs: list[float] = []
        vy: list[float] = [0.0]
        act: list[float] = []

        def rec(e, step):
            if step is not None:
                xs.append(float(e.sim.view().pelvis_pos[0]))
                vy.append(abs(float(e.data.qvel[1])))
                act.append(float(np.mean(e.data.act)))

        played = play_episode(env, policy, seed, rec)
        rows.append({"seed": seed, "control_steps": played.steps, "termination": played.termination,
                     "steps": beh.steps, "pelvis_travel_m": (xs[-1] - xs[0]) if xs else 0.0,
                     "max_sideways_mps": max(vy), "mean_activation": float(np.mean(act)) if act else 0.0})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("settings", nargs="*", default=[""], help='"name=value ..." per setting ("": as shipped)')
    ap.add_argument("--seeds", default="0-7", help="a range lo-hi or comma-separated seeds")
    ap.add_argument("--json", default=None, help="write the rows here")
    args = ap.parse_args()
    seeds = seeds_of(args.seeds)
    settings = [(text, parse_setting(text)) for text in (args.settings or [""])]
    out = []
    for text, setting in settings:
        t0 = time.perf_counter()
        rows = run(setting, seeds)
        lengths = [r["control_steps"] for r in rows]
        walked = sum(r["termination"] == "time_limit" for r in rows)
        print(f"{text or 'as shipped':<40} control steps {np.median(lengths):5.0f} [{','.join(map(str, lengths))}] "
              f"steps {np.median([r['steps'] for r in rows]):4.1f} "
              f"travel {np.median([r['pelvis_travel_m'] for r in rows]):.2f} m "
              f"sideways {np.median([r['max_sideways_mps'] for r in rows]):.2f} m/s "
              f"act {np.mean([r['mean_activation'] for r in rows]):.2f} "
              f"10 s walks {walked}/{len(rows)}  ({time.perf_counter() - t0:.0f} s)", flush=True)
        out.append({"setting": text, "overrides": setting, "rows": rows})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"task": "Walk", "seeds": seeds, "settings": out}, f, indent=1)


if __name__ == "__main__":
    main()

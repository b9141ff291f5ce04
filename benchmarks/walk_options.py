"""The walking expert with its options changed: how long it walks, how far, on which seeds.

Each positional argument is one setting: space-separated ``name=value`` overrides of the expert's
behaviour's class options on the gait task ``--task`` (Walk by default; PoleWalk and WalkTurn walk from
rest on a route, ``mskbench.control.courses``) (``""``: the shipped settings). For each, one episode per
seed (the train environment, the seed's own start, the package's episode loop) and a line:
the median episode length in control steps and every seed's, the median number of steps the walker
landed, the median pelvis travel (m, along +x), the median of each episode's largest sideways speed
(m/s), the mean muscle activation, how many episodes reached the time limit (on Walk: walked the whole
10 s) and how many succeeded (Table XII, at the last step). ``--json`` writes the per-seed rows.

    python benchmarks/walk_options.py --seeds 0-15 "" "predict_law=0" "min_width_m=0.08 max_width_m=0.40"
    python benchmarks/walk_options.py --task WalkTurn --seeds 0-7 "" "start_shift=0.4" "turn_rate=0.4"
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np

from mskbench.control.registry import WALKING_TASKS


def seeds_of(text: str) -> list[int]:
    if "-" in text and "," not in text:
        lo, hi = (int(x) for x in text.split("-"))
        return list(range(lo, hi + 1))
    return [int(x) for x in text.split(",")]


def parse_setting(text: str, task: str = "Walk") -> dict[str, float]:
    from mskbench.control import EXPERT_BEHAVIOURS

    cls = EXPERT_BEHAVIOURS[task]
    numeric = {k for c in cls.__mro__ for k, v in vars(c).items()
               if isinstance(v, (int, float)) and not isinstance(v, bool) and not k.startswith("_")}
    out = {}
    for item in text.split():
        name, _, value = item.partition("=")
        if name not in numeric:
            raise SystemExit(f"error: {name!r} is not a numeric option of {cls.__name__}; options: "
                             f"{', '.join(sorted(numeric))}")
        out[name] = float(value)
    return out


def run(setting: dict[str, float], seeds: list[int], task: str = "Walk") -> list[dict]:
    from mskbench.control import EXPERT_BEHAVIOURS
    from mskbench.control.expert import ExpertPolicy
    from mskbench.envs import MSKEnv
    from mskbench.eval.episodes import play_episode

    env = MSKEnv(task)
    beh = EXPERT_BEHAVIOURS[task]()
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
                     "success": bool(played.info.get("success", False)),
                     "steps": beh.steps, "pelvis_travel_m": (xs[-1] - xs[0]) if xs else 0.0,
                     "max_sideways_mps": max(vy), "mean_activation": float(np.mean(act)) if act else 0.0})
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("settings", nargs="*", default=[""], help='"name=value ..." per setting ("": as shipped)')
    ap.add_argument("--task", default="Walk", choices=WALKING_TASKS, help="the gait task")
    ap.add_argument("--seeds", default="0-7", help="a range lo-hi or comma-separated seeds")
    ap.add_argument("--json", default=None, help="write the rows here")
    args = ap.parse_args()
    seeds = seeds_of(args.seeds)
    settings = [(text, parse_setting(text, args.task)) for text in (args.settings or [""])]
    out = []
    for text, setting in settings:
        t0 = time.perf_counter()
        rows = run(setting, seeds, args.task)
        lengths = [r["control_steps"] for r in rows]
        walked = sum(r["termination"] == "time_limit" for r in rows)
        print(f"{text or 'as shipped':<40} control steps {np.median(lengths):5.0f} [{','.join(map(str, lengths))}] "
              f"steps {np.median([r['steps'] for r in rows]):4.1f} "
              f"travel {np.median([r['pelvis_travel_m'] for r in rows]):.2f} m "
              f"sideways {np.median([r['max_sideways_mps'] for r in rows]):.2f} m/s "
              f"act {np.mean([r['mean_activation'] for r in rows]):.2f} "
              f"time limit {walked}/{len(rows)} success {sum(r['success'] for r in rows)}/{len(rows)}  "
              f"({time.perf_counter() - t0:.0f} s)", flush=True)
        out.append({"setting": text, "overrides": setting, "rows": rows})
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"task": args.task, "seeds": seeds, "settings": out}, f, indent=1)


if __name__ == "__main__":
    main()

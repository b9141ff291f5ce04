"""A PD-like heuristic controller that plays a direct-control session end to end through the CLI and files.

It is an external controller in the sense of App. A-F: it never imports the
simulator. It starts a session with ``mskbench direct start``, and at every
decision reads only ``env_info.json`` and the pending observation file,
writes a bare JSON array of muscle commands and runs ``mskbench direct act``;
when no further observation appears the session is over and it prints
``mskbench direct report``.

The control law is a muscle-space stretch reflex — proportional to each
muscle's stretch relative to its length in observation 0 (the starting
posture), derivative on its lengthening velocity::

    excitation_m = clip(base + kp · (l_m − l_m,0) / l_m,0 + kd · v_m / l_m,0, 0, 1)
    action_m     = 2 · excitation_m − 1

so stretched and lengthening muscles are excited more and pull the body back
towards the start. Held for 0.2 s at a time it cannot walk; with the defaults
(base 0.5, kp 2, kd 1) the seed-0 Walk session lasts 1.88 s before the body
tilts past the task's limit, where the constant command of the ``zero`` policy
(every excitation 0.5) lasts 1.18 s.

    python examples/direct_pd_controller.py --dir runs/direct-pd [--task Walk --seed 0 --hold-steps 20]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path


def mskbench(*args: str) -> str:
    """Run one ``mskbench`` command; its output, or exit with its error message."""
    done = subprocess.run([sys.executable, "-m", "mskbench", *args], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"mskbench {' '.join(args)} failed: {(done.stderr or done.stdout).strip()}")
    return done.stdout


def muscle_columns(info: dict) -> dict[str, int]:
    """Column of each muscle field in the observation file's per-muscle rows."""
    return {e["field"]: e["column"] for e in info["observation_layout"] if e["key"] == "muscles"}


def pd_action(muscles: list[list[float]], columns: dict[str, int], rest_lengths: list[float],
              base: float, kp: float, kd: float) -> list[float]:
    """The stretch-reflex command of every muscle, in action order."""
    out = []
    for row, rest in zip(muscles, rest_lengths):
        stretch = (row[columns["length"]] - rest) / rest
        rate = row[columns["velocity"]] / rest
        excitation = min(1.0, max(0.0, base + kp * stretch + kd * rate))
        out.append(2.0 * excitation - 1.0)
    return out


def play(directory: Path, task: str, seed: int, hold_steps: int, max_duration: float,
         base: float, kp: float, kd: float) -> str:
    """Play one session in ``directory``; returns the report's text."""
    mskbench("direct", "start", task, "--dir", str(directory), "--seed", str(seed),
             "--hold-steps", str(hold_steps), "--max-duration", str(max_duration))
    info = json.loads((directory / "env_info.json").read_text())
    columns = muscle_columns(info)
    rest_lengths: list[float] = []
    decision = 0
    while True:
        path = directory / "observations" / f"decision_{decision:03d}.json"
        if not path.is_file():  # no observation follows the last action: the session has ended
            break
        muscles = json.loads(path.read_text())["observation"]["muscles"]
        if not rest_lengths:
            rest_lengths = [row[columns["length"]] for row in muscles]
        action = pd_action(muscles, columns, rest_lengths, base, kp, kd)
        action_file = directory / "controller" / f"action_{decision:03d}.json"
        action_file.parent.mkdir(exist_ok=True)
        action_file.write_text(json.dumps(action))
        print(mskbench("direct", "act", str(directory), str(action_file)).strip(), flush=True)
        decision += 1
    return mskbench("direct", "report", str(directory))


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dir", type=Path, default=None, help="session directory (default: a new temporary one)")
    parser.add_argument("--task", default="Walk")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--hold-steps", type=int, default=20)
    parser.add_argument("--max-duration", type=float, default=3.0)
    parser.add_argument("--base", type=float, default=0.5, help="excitation at rest length")
    parser.add_argument("--kp", type=float, default=2.0, help="gain on relative stretch")
    parser.add_argument("--kd", type=float, default=1.0, help="gain on lengthening velocity (1/s)")
    args = parser.parse_args(argv)
    directory = args.dir or Path(tempfile.mkdtemp(prefix="mskbench-direct-")) / "session"
    print(play(directory, args.task, args.seed, args.hold_steps, args.max_duration, args.base, args.kp, args.kd),
          end="")


if __name__ == "__main__":
    main()

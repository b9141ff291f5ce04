"""Can the teacher recover from the student's states? The student acts first, then the expert takes over.

DAgger (``mskbench train --algo bc``) teaches the student the expert's labels of the states the student
reaches; that teaches recovery only where the expert's own action there leads back to success. This
runs one episode of ``--task`` per seed and per takeover step K (the package's episode loop,
:func:`mskbench.eval.episodes.play_episode`; the train environment, the seed's own start): the student
(anything ``mskbench eval --policy`` takes) acts in control steps 1 … K and the expert from K + 1 on. The
expert labels every step from the first, as a DAgger world's teacher does, so its own state (a behaviour's
clock or table) is the one it would have there. K = 0 is the expert's own episode. Prints per episode
the pelvis height after step K, the length, the end and the step of the first success flag (None:
never). ``--json`` writes the rows.

    python benchmarks/studies/takeover.py --task Squat --student bc_squat --at 0,30,60,90,120 --seeds 0,1
"""

from __future__ import annotations

import argparse
import json


class Takeover:
    """The student's action for the first ``at`` steps of an episode, the teacher's after; the teacher is
    asked at every step."""

    def __init__(self, student, teacher, at: int):
        from mskbench.policies import as_policy

        self.student, self.teacher, self.at, self.t = as_policy(student), teacher, at, 0

    def reset(self, seed: int | None = None) -> None:
        self.student.reset(seed)
        self.teacher.reset(seed)
        self.t = 0

    def act(self, obs):
        label = self.teacher.act(obs)
        action = self.student.act(obs) if self.t < self.at else label
        self.t += 1
        return action


def takeover(task: str, student: str, at: int, seed: int, teacher_rate: float = 0.0) -> dict:
    from mskbench.control.registry import make_controller
    from mskbench.envs import MSKEnv
    from mskbench.eval.episodes import native_ends, play_episode
    from mskbench.eval.protocol import load_policy

    env = MSKEnv(task)
    policy = Takeover(load_policy(student, env, seed), make_controller("expert", env, teacher_rate), at)
    seen: dict = {"pelvis_at_takeover_m": None, "first_success": None}  # None: the episode ended before step K

    def record(env, step) -> None:
        if step is None:
            if at == 0:
                seen["pelvis_at_takeover_m"] = round(float(env.data.body("pelvis").xpos[2]), 3)
            return
        if step.index == at:
            seen["pelvis_at_takeover_m"] = round(float(env.data.body("pelvis").xpos[2]), 3)
        if step.info.get("success") and seen["first_success"] is None:
            seen["first_success"] = step.index

    played = play_episode(env, policy, seed, record, ends_on_native=native_ends(env.task))
    return {"task": task, "student": student, "teacher_rate": teacher_rate, "seed": seed, "takeover_at": at,
            "student_steps": min(at, played.steps), "length": played.steps, "end": played.termination, **seen}


def main(argv=None) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--task", required=True)
    ap.add_argument("--student", required=True, help="the policy acting first (as mskbench eval --policy)")
    ap.add_argument("--at", default="0,50,100", help="comma-separated takeover steps K (0: the expert alone)")
    ap.add_argument("--seeds", default="0,1")
    ap.add_argument("--teacher-rate", type=float, default=0.0,
                    help="the expert's activation-rate weight (as --set teacher_rate of --algo bc)")
    ap.add_argument("--json", help="write the rows to this file")
    args = ap.parse_args(argv)
    try:
        ats = [int(k) for k in args.at.split(",")]
        seeds = [int(s) for s in args.seeds.split(",")]
    except ValueError:
        ap.error(f"--at and --seeds take comma-separated integers, got {args.at!r} and {args.seeds!r}")
    if min(ats) < 0:
        ap.error(f"--at takes steps >= 0, got {args.at!r}")
    rows = []
    for seed in seeds:
        for at in ats:
            try:
                r = takeover(args.task, args.student, at, seed, args.teacher_rate)
            except (ValueError, FileNotFoundError) as e:  # an unknown task or policy, or a task the expert does not serve
                ap.error(str(e))
            rows.append(r)
            print(f"seed {seed}, expert from step {at + 1} (pelvis {r['pelvis_at_takeover_m']} m): {r['length']} steps, "
                  f"end {r['end']}, first success {r['first_success']}", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rows, f, indent=1)
    return rows


if __name__ == "__main__":
    main()

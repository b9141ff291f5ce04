"""The walking expert's steps, one line per touchdown: where each step landed and what the DCM did.

For each seed, one episode of the expert on a gait task (``--task``: Walk by default, or PoleWalk,
WalkTurn or WalkAndSit; the train environment, the seed's own start) in the package's episode loop. Every touchdown the walker logs
(``Walking.touchdowns``) is printed: the side, the control step, the heel's landing error from the
foothold it was sent to (m, x forward / y left), the DCM's offset from the new stance foot at that moment
beside the offset a steady walk at the target speed has, and the forward speed. Then the episode's end
and, per episode, the medians of the landing error and of the DCM offset's excess over the steady one.
On WalkAndSit it also reports the sit that follows the walk (``WalkAndSit.sit``): the pelvis's position and
velocity when it starts, its speed when the pelvis or a thigh touches the seat, and at the episode's end
the sit flag's clauses (pelvis height, mean knee angle, the heels' distance ahead of the pelvis).
``--json`` writes the rows.

    python benchmarks/walk_trace.py --seeds 0,3,10 --json docs/walk_trace.json
    python benchmarks/walk_trace.py --task WalkTurn --seeds 0,1
    python benchmarks/walk_trace.py --task WalkAndSit --seeds 0,3,8
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from mskbench.control.registry import WALKING_TASKS


#: Muscle groups of the stance leg whose mean activation in mid-stance (30-70 % of the other leg's swing) is
#: reported: the ankle's dorsiflexor and plantarflexors, the hip's flexors and extensors, the knee's extensors.
STANCE_GROUPS = {
    "tibialis anterior": ("tibant",),
    "plantarflexors": ("soleus", "gasmed", "gaslat"),
    "hip flexors": ("iliacus", "psoas", "recfem", "sart", "tfl"),
    "hip extensors": ("glmax1", "glmax2", "glmax3", "bflh", "semimem", "semiten"),
    "knee extensors": ("vasmed", "vaslat", "vasint"),
}


def trace(seed: int, task: str = "Walk") -> dict:
    from mskbench.control.expert import ExpertPolicy
    from mskbench.control.registry import behaviour_for
    from mskbench.envs import MSKEnv
    from mskbench.eval.episodes import play_episode

    env = MSKEnv(task)
    beh = behaviour_for("expert", task)
    policy = ExpertPolicy(env, beh)
    xs: list[float] = []
    names = list(env.handles.muscle_names)
    groups = {g: {side: [names.index(f"{m}_{side}") for m in muscles if f"{m}_{side}" in names]
                  for side in ("l", "r")} for g, muscles in STANCE_GROUPS.items()}
    mid_stance: dict[str, list[float]] = {g: [] for g in STANCE_GROUPS}
    sit: dict = {}

    def rec(e, step):
        xs.append(float(e.sim.view().pelvis_pos[0]))
        if getattr(beh, "sit", None) is not None and step is not None:
            sit_trace(e, beh, step.index, sit)
        sch = beh.schedule
        if step is not None and sch.phase == "single" and 0.3 <= sch.swing_phase <= 0.7:
            act = e.data.act[env.handles.muscle_act_adr]
            for g, idx in groups.items():
                mid_stance[g].append(float(np.mean(act[idx[sch.stance]])))

    played = play_episode(env, policy, seed, rec)
    steps = beh.touchdowns
    land = np.array([s["landing_error_m"] for s in steps if s["landing_error_m"] is not None]).reshape(-1, 2)
    excess = np.array([np.subtract(s["dcm_offset_m"], s["wanted_offset_m"]) for s in steps]).reshape(-1, 2)
    # the lateral excess counted outwards from the midline (+: the foot is further out than the steady walk's)
    side = np.array([1.0 if s["side"] == "l" else -1.0 for s in steps])
    return {"seed": seed, "control_steps": played.steps, "termination": played.termination,
            "pelvis_travel_m": (xs[-1] - xs[0]) if xs else 0.0, "touchdowns": steps,
            "median_landing_error_m": np.median(land, axis=0).tolist() if len(land) else None,
            "median_dcm_excess_m": ([float(np.median(excess[:, 0])), float(np.median(-side * excess[:, 1]))]
                                    if len(excess) else None),
            "mid_stance_activation": {g: float(np.mean(v)) if v else None for g, v in mid_stance.items()},
            **({"sit": sit} if sit else {})}


def sit_trace(env, beh, index: int, out: dict) -> None:
    """The sit after a walk: its start, the seat's first touch, and the sit flag's clauses now."""
    from mskbench.tasks import chair

    view = env.sim.view()
    pelvis, vel = view.pelvis_pos, view.vel("pelvis")
    if "start" not in out:
        out["start"] = {"control_step": index, "pelvis": [float(v) for v in pelvis],
                        "pelvis_velocity": [float(v) for v in vel]}
    if beh.sit.landed and "seat_touch" not in out:
        out["seat_touch"] = {"control_step": index, "pelvis": [float(v) for v in pelvis],
                             "pelvis_speed": float(np.linalg.norm(vel))}
    heels = [float(env.data.xpos[beh.foot[s][0]][0] - pelvis[0]) for s in ("l", "r")]
    out["now"] = {"control_step": index, "pelvis_z": float(pelvis[2]), "seated": bool(chair.seated(view, np)),
                  "mean_knee": float(chair.mean_hip_knee(view, np)[1]), "heels_ahead": heels,
                  "seated_steps": int(env.task_state["seated_steps"])}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--task", default="Walk", choices=WALKING_TASKS, help="the gait task")
    ap.add_argument("--seeds", default="0,3,10", help="comma-separated seeds")
    ap.add_argument("--json", default=None, help="write the rows here")
    args = ap.parse_args()
    rows = []
    for seed in (int(s) for s in args.seeds.split(",")):
        row = trace(seed, args.task)
        rows.append(row)
        print(f"seed {seed}: {row['control_steps']} control steps, {row['termination']}, "
              f"{len(row['touchdowns'])} steps, pelvis {row['pelvis_travel_m']:.2f} m")
        print("  step side ctrl  landing error x/y   DCM offset x/y   steady x/y   speed")
        for s in row["touchdowns"]:
            le = s["landing_error_m"] or [float("nan")] * 2
            print(f"  {s['step']:4d} {s['side']:>4} {s['control_step']:4d}   {le[0]:+.2f} {le[1]:+.2f}"
                  f"        {s['dcm_offset_m'][0]:+.2f} {s['dcm_offset_m'][1]:+.2f}      "
                  f"{s['wanted_offset_m'][0]:+.2f} {s['wanted_offset_m'][1]:+.2f}   {s['speed_mps']:.2f}")
        if row["median_dcm_excess_m"] is not None:
            print(f"  medians: landing error {np.round(row['median_landing_error_m'], 3).tolist()} m; DCM offset "
                  f"less the steady one {np.round(row['median_dcm_excess_m'], 3).tolist()} m "
                  f"(x: behind the foot is negative; y: positive = the foot further out than a steady walk's)")
        print("  stance leg, mean activation in mid-stance: " + ", ".join(
            f"{g} {v:.2f}" for g, v in row["mid_stance_activation"].items() if v is not None))
        if "sit" in row:
            st, touch, end = row["sit"]["start"], row["sit"].get("seat_touch"), row["sit"]["now"]
            print(f"  sit from control step {st['control_step']}: pelvis at x {st['pelvis'][0]:+.2f} y "
                  f"{st['pelvis'][1]:+.2f}, moving {np.round(st['pelvis_velocity'], 2).tolist()} m/s")
            if touch:
                print(f"  seat touched at control step {touch['control_step']}, pelvis at {touch['pelvis_speed']:.2f} m/s")
            print(f"  at the end: pelvis {end['pelvis_z']:.2f} m high, seated {end['seated']}, knees "
                  f"{end['mean_knee']:.2f} rad, heels {np.round(end['heels_ahead'], 2).tolist()} m ahead of the "
                  f"pelvis, {end['seated_steps']} steps seated with the flag's clauses")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"task": args.task, "policy": "expert", "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()

"""How far the start noise moves a start off its support: the device-drawn starts are placed once and
noised per episode without being placed again (:mod:`mskbench.tasks.starts`).

For every task that draws a noisy start on the device, ``--draws`` starts of the CPU environment's
episodes (seeds 0, 1, ...; the device draws the same distribution, ``tests/test_starts.py``) are
measured against the noise-free start: the signed distance (mm) from the body's colliding geoms to
the support (the floor, Balance's board, StepStones' first stone, Slide's flat start; positive:
above, negative: into it), and for ChinUp the largest distance (mm) between a hand and its grip point
on the bar (the holds pull the hands back in the first control step).

    python benchmarks/start_offsets.py --draws 200 --json start_offsets.json
"""

from __future__ import annotations

import argparse
import json

import mujoco
import numpy as np

#: Task -> the geom its start stands on (None: ChinUp hangs from the bar).
SUPPORTS = {"Stand": "floor", "Balance": "balance_board_geom", "Squat": "floor", "StepStones": None,
            "Slide": None, "OpenDoor": "floor", "WalkAndSit": "floor", "PoleWalk": "floor", "ChinUp": None}


def support_gap_mm(model, data, handles, geom: int) -> float:
    """Signed distance (mm) of the body's lowest colliding geom to ``geom`` at ``data.qpos``."""
    mujoco.mj_kinematics(model, data)
    tree = set(handles.body_tree.tolist())
    fromto = np.zeros(6)
    best = np.inf
    for g in range(model.ngeom):
        if model.geom_bodyid[g] not in tree:
            continue
        if not (model.geom_contype[g] & model.geom_conaffinity[geom] or model.geom_conaffinity[g] & model.geom_contype[geom]):
            continue
        best = min(best, mujoco.mj_geomDistance(model, data, geom, g, 10.0, fromto))
    return 1000.0 * best


def hold_offset_mm(model, data, prefix: str) -> float:
    """Largest hand-to-grip distance (mm) of the two holds."""
    mujoco.mj_kinematics(model, data)
    out = 0.0
    for side in ("l", "r"):
        hand = data.site(f"{prefix}_hand_{side}").xpos
        grip = data.site(f"{prefix}_grip_{side}").xpos
        out = max(out, float(np.linalg.norm(hand - grip)))
    return 1000.0 * out


def measure(task_name: str, draws: int) -> dict:
    from mskbench.envs import MSKEnv

    env = MSKEnv(task_name)
    task, ctx, model = env.task, env._ctx, env.model
    data = mujoco.MjData(model)
    if task_name == "StepStones":
        geom = task.terrain.names[0]
    elif task_name == "Slide":
        geom = task.terrain.names[0]
    else:
        geom = SUPPORTS[task_name]

    def value(qpos) -> float:
        data.qpos[:] = qpos
        if task_name == "ChinUp":
            return hold_offset_mm(model, data, "chinup")
        return support_gap_mm(model, data, env.handles, mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_GEOM, geom))

    base = value(task.start(ctx).qpos)
    values = np.array([value(task.initial_state(ctx, np.random.default_rng(seed)).qpos) for seed in range(draws)])
    env.close()
    return {"task": task_name, "measure": "hold offset" if task_name == "ChinUp" else f"gap to {geom}",
            "noise_free_mm": base, "min_mm": float(values.min()), "median_mm": float(np.median(values)),
            "max_mm": float(values.max()), "draws": draws}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--tasks", default=",".join(SUPPORTS), help=f"comma-separated, from {', '.join(SUPPORTS)}")
    parser.add_argument("--draws", type=int, default=200)
    parser.add_argument("--json", dest="json_path", default=None)
    args = parser.parse_args()
    names = args.tasks.split(",")
    unknown = [t for t in names if t not in SUPPORTS]
    if unknown:
        parser.error(f"unknown task(s) {', '.join(unknown)}; valid: {', '.join(SUPPORTS)}")
    rows = [measure(t, args.draws) for t in names]
    print(f"{'task':12s} {'measure':28s} {'noise-free':>10s} {'min':>8s} {'median':>8s} {'max':>8s}  (mm)")
    for r in rows:
        print(f"{r['task']:12s} {r['measure']:28s} {r['noise_free_mm']:10.1f} {r['min_mm']:8.1f} "
              f"{r['median_mm']:8.1f} {r['max_mm']:8.1f}")
    if args.json_path:
        with open(args.json_path, "w") as f:
            json.dump({"draws": args.draws, "rows": rows}, f, indent=2)


if __name__ == "__main__":
    main()

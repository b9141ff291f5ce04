"""The physiology of the expert's walking (issue 48): muscle timing, ground-reaction force, stride and
cadence of the training-free walker on Walk, beside human norms.

One episode per seed of ``make_controller("expert", env)`` on ``MSKEnv("Walk")`` (the package's episode
loop, :func:`mskbench.eval.episodes.run_episode`, seeds 0, 4 and 6 by default: those walk the whole
10 s), one process, episodes one after the other. Per episode and pooled over the episodes:

1. EMG-envelope similarity, the project's own metric (Eq. 14, :mod:`mskbench.metrics.emg`) against the
   Santuz treadmill-walking reference (``../shared/data/emg_reference/walking_treadmill_santuz.csv``,
   13 right-leg channels, :data:`~mskbench.metrics.emg.SANTUZ_TO_MYOFULLBODY`): r per channel and their
   mean, with the cycles cut at the rising edges of the right heel touch sensor (how the evaluator cut
   them before it took the right foot's touchdowns), and with the cycles cut at the right foot's
   touchdowns from its ground-reaction force (the load hysteresis below), so that heel-sensor chatter
   cannot cut a stride in two. The evaluator's own record (``run_episode(..., emg_reference=...)``,
   cycles at the right foot's touchdowns from its touch sensors) is printed after them and kept in the
   JSON as ``emg_record``. The paper's MuscleMimic walking r stands beside SO (soleus), BF (biceps femoris long
   head) and ST (semitendinosus): 0.71, 0.69, 0.63. Pooled: the cycles of all episodes averaged into one
   envelope per channel, then Eqs. 30 and 32.
2. Vertical ground-reaction force per stance: the sum over the foot's contacts with the floor (every
   body from the talus down) of the world-vertical component of ``mujoco.mj_contactForce``, at each
   control step (10 ms; the instantaneous force after the step, unfiltered), in body weights (the
   body's mass, ``handles.total_mass``, times g). The touch sensors sum normal force over their site
   volumes only; their ratio to this force in stance is printed as a check, as is the mean total
   vertical force over the episode (1 BW when the body neither rises nor sinks on average). A stance
   runs from a touchdown (load above 5 % BW after at least 0.1 s below 1 %: the hysteresis of
   :mod:`mskbench.metrics.progress`) to the next lift-off; per stance the first peak (maximum of its
   first half), second peak (maximum of its second half), the minimum between them and whether that is
   a double hump (dip >= 0.05 BW below the lower peak), :mod:`mskbench.metrics.gait_physiology`. Human
   norm at about 1.2 m/s, a widely reported range (e.g. Winter, Biomechanics and Motor Control of Human
   Movement): peaks about 1.1-1.2 BW, mid-stance minimum about 0.7-0.8 BW.
3. Stride length (same-foot touchdown to touchdown: the heel's (calcaneus origin's) horizontal travel,
   and the pelvis's), stride time, cadence (120 / mean stride time, steps/min) and the mean forward
   speed (the pelvis's displacement along its start heading over the episode, as the evaluator's
   ``forward_speed_mps``; and stride length / stride time). Human norms at about 1.2 m/s: stride about
   1.3-1.4 m, cadence about 105-115 steps/min. The expert walks slower (its target speed times its
   speed share), so the norms are a scale, not a pass mark.
4. mm-evalkit (PyPI ``mm-evalkit`` 0.1.0, when installed): the episodes are also written as its rollout
   archive (the layout of ``mskbench record --evalkit``, docs/controllers.md, built by the same
   functions of :mod:`mskbench.eval.demos`), checked by its own validator, and its gait extraction
   (``extract_trajectory_data`` with the Wang channels) counts the gait cycles it finds. Its Wang score
   (joint angles, muscle activation, EMG against a population gait profile) needs the Wang data set's
   source files, which mm-evalkit does not ship; without them the JSON records why, never a number.

    python benchmarks/walk_physiology.py --seeds 0,4,6 --json /tmp/walk_physiology.json

``--json`` writes every number (per stance, per stride, per channel). The EMG reference is looked for
beside the checkout (``--reference`` to give another); without it part 1 is left out, said so.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
from pathlib import Path
from typing import cast

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SANTUZ = ROOT.parent / "shared" / "data" / "emg_reference" / "walking_treadmill_santuz.csv"
#: The paper's MuscleMimic walking r (its three walking muscles) by Santuz channel.
PAPER_R = {"SO": 0.71, "BF": 0.69, "ST": 0.63}
HUMAN = {
    "grf_peak_bw": (1.1, 1.2), "grf_valley_bw": (0.7, 0.8),
    "stride_m": (1.3, 1.4), "cadence_spm": (105.0, 115.0), "speed_mps": 1.2,
}
SIDES = ("l", "r")  # the order of FOOT_SENSORS (left foot first)


# -- per-frame traces ---------------------------------------------------------------------------------
def foot_bodies(model, side: str) -> set[int]:
    """The body ids from ``talus_{side}`` down (talus, calcaneus, toes)."""
    import mujoco

    top = mujoco.mj_name2id(model, mujoco.mjtObj.mjOBJ_BODY, f"talus_{side}")
    if top < 0:
        raise ValueError(f"no body talus_{side}")
    out = set()
    for b in range(model.nbody):
        a = b
        while a > 0 and a != top:
            a = int(model.body_parentid[a])
        if a == top:
            out.add(b)
    return out


class Traces:
    """Per-frame traces (the start state and the state after each control step)."""

    def __init__(self, env):
        import mujoco

        m, h = env.model, env.handles
        self.feet = [foot_bodies(m, s) for s in SIDES]
        self.floor = {g for g in range(m.ngeom) if m.geom_bodyid[g] == 0}
        self.calcn = [mujoco.mj_name2id(m, mujoco.mjtObj.mjOBJ_BODY, f"calcn_{s}") for s in SIDES]
        self.touch_names = list(h.touch_names)
        self.fz, self.touch, self.pelvis, self.yaw, self.heel = [], [], [], [], []
        self._f6 = np.zeros(6)

    def vertical_grf(self, m, d) -> list[float]:
        """Each foot's vertical force from the floor (N, up positive), left then right."""
        import mujoco

        out = [0.0, 0.0]
        for i in range(d.ncon):
            c = d.contact[i]
            if c.efc_address < 0:
                continue
            g1, g2 = int(c.geom1), int(c.geom2)
            if g1 in self.floor:
                other, sign = g2, 1.0  # the normal points from geom1 (the floor) to geom2 (the foot)
            elif g2 in self.floor:
                other, sign = g1, -1.0
            else:
                continue
            b = int(m.geom_bodyid[other])
            for k, feet in enumerate(self.feet):
                if b in feet:
                    mujoco.mj_contactForce(m, d, i, self._f6)
                    world = c.frame.reshape(3, 3).T @ self._f6[:3]  # force of geom1 on geom2, world frame
                    out[k] += sign * float(world[2])
        return out

    def __call__(self, env) -> None:
        from mskbench.sim.state import StateView

        m, d, h = env.model, env.data, env.handles
        view = StateView(d, h)
        self.fz.append(self.vertical_grf(m, d))
        self.touch.append(d.sensordata[h.touch_adr].copy())
        self.pelvis.append(np.asarray(view.pelvis_pos[:2], float).copy())
        self.yaw.append(float(view.yaw))
        self.heel.append([d.xpos[b][:2].copy() for b in self.calcn])

    def arrays(self) -> dict[str, np.ndarray]:
        return {"fz": np.array(self.fz), "touch": np.array(self.touch), "pelvis": np.array(self.pelvis),
                "yaw": np.array(self.yaw), "heel": np.array(self.heel)}


# -- analysis -----------------------------------------------------------------------------------------
def _stats(x) -> dict:
    x = np.asarray(x, float)
    if x.size == 0:
        return {"n": 0, "mean": None, "sd": None, "min": None, "max": None}
    return {"n": int(x.size), "mean": float(x.mean()), "sd": float(x.std()), "min": float(x.min()),
            "max": float(x.max())}


def gait_figures(tr: dict, dt: float, weight_n: float) -> dict:
    """Stances, their GRF figures, strides and speed from one episode's per-frame traces."""
    from mskbench.metrics.gait_physiology import cadence_steps_per_min, stance_grf, stance_phases, strides
    from mskbench.metrics.progress import DOWN_FRACTION, MIN_AIR_S, UP_FRACTION, foot_loads, touchdowns

    air = max(1, math.ceil(MIN_AIR_S / dt - 1e-9))
    fz_bw = np.clip(tr["fz"], 0.0, None) / weight_n  # (F, 2) left, right
    touch_load = foot_loads(tr["touch"], tr["touch_names"])  # (F, 2) N, left, right
    out: dict = {"frames": int(fz_bw.shape[0]), "mean_total_fz_bw": float(fz_bw.sum(axis=1).mean()),
                 "feet": {}}
    all_stance, all_len_heel, all_len_pelvis, all_dur = [], [], [], []
    strike_idx = {}
    for k, side in enumerate(SIDES):
        load = fz_bw[:, k]
        phases = stance_phases(load, DOWN_FRACTION, UP_FRACTION, air)
        stances = []
        for a, b in phases:
            g = stance_grf(load[a:b])
            seg_fz = tr["fz"][a:b, k]
            ratio = float(touch_load[a:b, k].sum() / seg_fz.sum()) if seg_fz.sum() > 0 else None
            stances.append({"start": int(a), "end": int(b), "duration_s": float((b - a) * dt), **g._asdict(),
                            "touch_over_contact_fz": ratio})
        strikes = touchdowns(load, DOWN_FRACTION, UP_FRACTION, air)
        strike_idx[side] = strikes
        sh = strides(strikes, tr["heel"][:, k], dt)
        sp = strides(strikes, tr["pelvis"], dt)
        out["feet"][side] = {"touchdowns": strikes.tolist(), "stances": stances,
                             "stride_length_heel_m": sh.length_m.tolist(),
                             "stride_length_pelvis_m": sp.length_m.tolist(),
                             "stride_time_s": sh.duration_s.tolist()}
        all_stance += stances
        all_len_heel += sh.length_m.tolist()
        all_len_pelvis += sp.length_m.tolist()
        all_dur += sh.duration_s.tolist()
    out["summary"] = summarize(all_stance, all_len_heel, all_len_pelvis, all_dur)
    heading = float(tr["yaw"][0])
    delta = tr["pelvis"][-1] - tr["pelvis"][0]
    duration = (fz_bw.shape[0] - 1) * dt
    out["summary"]["forward_speed_mps"] = float(delta @ [math.cos(heading), math.sin(heading)]) / duration
    out["summary"]["cadence_spm"] = cadence_steps_per_min(all_dur) if all_dur else None
    out["right_touchdowns"] = strike_idx["r"]
    return out


def summarize(stances: list[dict], len_heel, len_pelvis, dur) -> dict:
    from mskbench.metrics.gait_physiology import cadence_steps_per_min

    ratios = [s["touch_over_contact_fz"] for s in stances if s["touch_over_contact_fz"] is not None]
    return {
        "stances": len(stances),
        "first_peak_bw": _stats([s["first_peak"] for s in stances]),
        "valley_bw": _stats([s["valley"] for s in stances]),
        "second_peak_bw": _stats([s["second_peak"] for s in stances]),
        "first_peak_pct": _stats([s["first_peak_pct"] for s in stances]),
        "valley_pct": _stats([s["valley_pct"] for s in stances]),
        "second_peak_pct": _stats([s["second_peak_pct"] for s in stances]),
        "stance_s": _stats([s["duration_s"] for s in stances]),
        "double_hump_share": (float(np.mean([s["double_hump"] for s in stances])) if stances else None),
        "touch_over_contact_fz": _stats(ratios),
        "stride_length_heel_m": _stats(len_heel),
        "stride_length_pelvis_m": _stats(len_pelvis),
        "stride_time_s": _stats(dur),
        "cadence_spm": cadence_steps_per_min(dur) if len(dur) else None,
        "speed_from_strides_mps": (float(np.sum(len_heel) / np.sum(dur)) if len(dur) else None),
    }


def channel_signals(acts: np.ndarray, names, channels) -> np.ndarray:
    """(T, C): per reference channel the mean activation of its mapped actuators (as ``emg_similarity``)."""
    from mskbench.metrics.emg import SANTUZ_TO_MYOFULLBODY

    index = {n: i for i, n in enumerate(names)}
    return np.stack([acts[:, [index[t] for t in SANTUZ_TO_MYOFULLBODY[c]]].mean(axis=1) for c in channels], axis=1)


def emg_from_cycles(cycles: list[np.ndarray], channels, reference) -> dict:
    """Eq. 14 from cycles pooled over episodes: (n, 101, C) averaged, normalised (Eq. 30), best shift (Eq. 32)."""
    from mskbench.metrics.emg import NORM_EPS, emg_envelope_similarity

    if not cycles:
        return {"absent": "no complete gait cycle"}
    c = np.concatenate(cycles, axis=0)
    m = c.mean(axis=0)
    m = (m - m.min(axis=0)) / (m.max(axis=0) - m.min(axis=0) + NORM_EPS)
    r = {}
    for k, ch in enumerate(channels):
        r[ch] = 0.0 if np.ptp(m[:, k]) == 0.0 else emg_envelope_similarity(m[:, k], reference[ch]).r
    return {"mean_r": float(np.mean(list(r.values()))), "cycles": int(c.shape[0]), "per_muscle": r}


# -- mm-evalkit -----------------------------------------------------------------------------------------
def evalkit_part(env, recorder, results, seeds, path: Path) -> dict:
    """Write the mm-evalkit archive, validate and extract it with mm-evalkit, and try its Wang score."""
    from mskbench.eval.demos import _demo_arrays, _evalkit_arrays

    out: dict = {"archive": str(path)}
    demos = _demo_arrays(env, recorder, results, "Walk", "expert", int(seeds[0]), None)
    arrays = _evalkit_arrays(env, demos)
    np.savez(path, **arrays)
    try:
        import importlib.metadata as md

        out["version"] = md.version("mm-evalkit")
        from mm_evalkit.paths import resolve_dataset_path
        from mm_evalkit.workflows.gait.loading import build_channels
        from mm_evalkit.workflows.gait.policy_data import extract_trajectory_data
    except Exception as exc:  # noqa: BLE001 - any import failure means: not installed / not usable
        out["absent"] = f"mm-evalkit not importable ({type(exc).__name__}: {exc}); pip install mm-evalkit==0.1.0"
        return out
    import contextlib
    import io

    log = io.StringIO()
    try:
        with contextlib.redirect_stdout(log):
            ex = extract_trajectory_data(build_channels("Wang"), path, subject_based=False)
        out["validated"] = True
        records = [dict(r) for r in ex.episode_gait_records]  # TypedDicts: episode, traj_id, n_gaits, reason, ...
        out["episode_gait_records"] = json.loads(json.dumps(records, default=_jsonable))
        out["gait_cycles_per_seed"] = {str(r["traj_id"]): int(r["n_gaits"]) for r in records}
        out["gait_cycles"] = int(len(ex.all_gait_lengths))
        out["gait_cycle_frames"] = [int(x) for x in ex.all_gait_lengths]
        out["skipped_episodes"] = json.loads(json.dumps([dict(s) for s in ex.skipped_episodes], default=_jsonable))
    except Exception as exc:  # noqa: BLE001 - report mm-evalkit's own refusal verbatim
        out["validated"] = False
        out["extract_error"] = f"{type(exc).__name__}: {exc}"
    policies = path.with_suffix(".policies.yaml")
    policies.write_text(f"policies:\n  - id: expert\n    label: \"mskbench expert\"\n"
                        f"    trajectory_data_path: {path}\n    color: \"#2a78d6\"\n    linestyle: \"-\"\n")
    out["command"] = (f"mm-evalkit evaluate wang --dataset_dir WANG_DIR --policy_config_file {policies} "
                      f"--plots_dir EMPTY_DIR")
    try:
        wang = resolve_dataset_path("wang")
    except (FileNotFoundError, KeyError) as exc:
        out["wang_score"] = {
            "absent": ("mm-evalkit's Wang workflow (FullBodyAnalysis(dataset_name='Wang'), 'mm-evalkit evaluate "
                       "wang') compares the rollout with the Wang population profiles, which it reads from the "
                       "data set's source files <WANG_DIR>/Subj04..Subj12/SubjNN_walk_45.mat "
                       "(mm_evalkit/datasets/wang.py: load_wang_profiles, Datastr.Resample.Sych.Average "
                       "EMG and IKAngData ave_r); mm-evalkit 0.1.0 ships no human data and none is on this "
                       f"machine; its path lookup says: {exc}"),
        }
        return out
    out["wang_score"] = {"absent": f"a Wang directory is configured ({wang}) but this script does not run the "
                                   f"Wang workflow itself; run: {out['command'].replace('WANG_DIR', str(wang))}"}
    return out


# -- run ------------------------------------------------------------------------------------------------
def run(seeds: list[int], reference_path: Path | None, evalkit_path: Path | None) -> dict:
    from mskbench.control import make_controller
    from mskbench.envs import MSKEnv
    from mskbench.eval.demos import _Recorder
    from mskbench.eval.episodes import body_weight_n, run_episode
    from mskbench.metrics.emg import SANTUZ_TO_MYOFULLBODY, cycle_envelopes, emg_similarity, heel_strikes

    reference = None
    if reference_path is not None and reference_path.is_file():
        from mskbench.metrics.emg import load_emg_reference

        reference = load_emg_reference(reference_path)
    env = MSKEnv("Walk")
    try:
        policy = make_controller("expert", env)
        recorder = _Recorder(env, None)
        h = env.handles
        weight = body_weight_n(env.model, h)
        dt = env.control_dt_s
        channels = [] if reference is None else [c for c in reference.muscles if c in SANTUZ_TO_MYOFULLBODY]
        heel_col = list(h.touch_names).index("r_foot")
        episodes, results = [], []
        pooled_cycles: dict[str, list] = {"heel_sensor": [], "grf_touchdowns": []}
        for seed in seeds:
            traces = Traces(env)
            rec = run_episode(cast("MSKEnv", recorder), policy, seed, on_step=traces, emg_reference=reference)
            results.append(rec)
            tr = {**traces.arrays(), "touch_names": traces.touch_names}
            ep = {"seed": seed, "length": rec.length, "termination": rec.termination, "success": rec.success,
                  "return": rec.episode_return, "steps_taken": rec.steps_taken,
                  "forward_speed_mps_record": rec.forward_speed_mps}
            gait = gait_figures(tr, dt, weight)
            right_td = gait.pop("right_touchdowns")
            ep["gait"] = gait
            if reference is not None:
                rows = recorder.episodes[-1]["rows"]
                acts = np.clip(np.array([r[3] for r in rows], np.float64), 0.0, 1.0)  # per step, as run_episode
                heel = np.array([r[6][heel_col] for r in rows], np.float64)
                sig = channel_signals(acts, h.muscle_names, channels)
                ep["emg_record"] = rec.emg  # the evaluator's record: cycles at the right foot's touchdowns
                strikes = heel_strikes(heel)
                # frames -> steps: frame f is the state after step f (f >= 1), i.e. step row f - 1
                td = np.asarray([f - 1 for f in right_td if f >= 1], np.int64)
                ep["right_strikes"] = {"heel_sensor": strikes.tolist(), "grf_touchdowns": td.tolist()}
                for key, field, cuts, what in (("heel_sensor", "emg_heel_cycles", strikes, "heel edges"),
                                               ("grf_touchdowns", "emg_grf_cycles", td, "right touchdowns")):
                    if len(cuts) >= 2:
                        res = emg_similarity(acts, h.muscle_names, cuts, reference, on_constant="zero")
                        ep[field] = {"mean_r": res.mean_r, "cycles": res.n_cycles, "per_muscle": dict(res.r)}
                        pooled_cycles[key].append(cycle_envelopes(sig, cuts))
                    else:
                        ep[field] = {"absent": f"fewer than one complete cycle ({len(cuts)} {what})"}
            episodes.append(ep)
            print(f"seed {seed}: {rec.length} steps, {rec.termination}", file=sys.stderr, flush=True)
        out: dict = {"task": "Walk", "policy": "expert", "seeds": seeds, "control_dt_s": dt,
                     "body_weight_n": weight, "body_mass_kg": float(h.total_mass), "episodes": episodes,
                     "human_norms": HUMAN, "paper_musclemimic_walking_r": PAPER_R,
                     "emg_reference": str(reference_path) if reference is not None else None}
        if reference is None:
            out["emg_absent"] = f"EMG reference not found at {reference_path}"
        else:
            out["emg_channels"] = channels
            out["pooled_emg"] = {k: emg_from_cycles(v, channels, reference) for k, v in pooled_cycles.items()}
        stances = [s for e in episodes for f in e["gait"]["feet"].values() for s in f["stances"]]
        cat = lambda key: [x for e in episodes for f in e["gait"]["feet"].values() for x in f[key]]  # noqa: E731
        out["pooled_gait"] = summarize(stances, cat("stride_length_heel_m"), cat("stride_length_pelvis_m"),
                                       cat("stride_time_s"))
        out["pooled_gait"]["forward_speed_mps"] = float(np.mean([e["gait"]["summary"]["forward_speed_mps"]
                                                                 for e in episodes]))
        out["pooled_gait"]["mean_total_fz_bw"] = float(np.mean([e["gait"]["mean_total_fz_bw"] for e in episodes]))
        if evalkit_path is not None:
            out["mm_evalkit"] = evalkit_part(env, recorder, results, seeds, evalkit_path)
        return out
    finally:
        env.close()


# -- table ----------------------------------------------------------------------------------------------
def _f(x, nd=2) -> str:
    return "-" if x is None else f"{x:.{nd}f}"


def _ms(s: dict, nd=2) -> str:
    return "-" if not s or s.get("n", 0) == 0 else f"{s['mean']:.{nd}f}±{s['sd']:.{nd}f}"


def table(out: dict) -> str:
    eps = out["episodes"]
    cols = [f"seed {e['seed']}" for e in eps] + ["pooled"]
    w0, w = 34, 12
    runs = ", ".join(f"seed {e['seed']} {e['length']} steps ({e['termination']})" for e in eps)
    lines = [f"Walk, expert: {runs}",
             f"body {out['body_mass_kg']:.2f} kg, weight {out['body_weight_n']:.1f} N",
             "".ljust(w0) + "".join(c.rjust(w) for c in cols) + "   human / paper"]

    def row(label, vals, norm=""):
        lines.append(label.ljust(w0) + "".join(v.rjust(w) for v in vals) + ("   " + norm if norm else ""))

    if "emg_channels" in out:
        for key, title in (("heel_sensor", "EMG r, Eq. 14 (cycles at r heel sensor edges)"),
                           ("grf_touchdowns", "EMG r, Eq. 14 (cycles at r GRF touchdowns)")):
            lines.append(title)
            per_ep = [e["emg_heel_cycles"] if key == "heel_sensor" else e["emg_grf_cycles"] for e in eps]
            pooled = out["pooled_emg"][key]
            chans = sorted(out["emg_channels"], key=lambda c: (c not in PAPER_R, list(PAPER_R).index(c)
                                                              if c in PAPER_R else 0))
            for c in chans:
                vals = [_f(p.get("per_muscle", {}).get(c)) for p in per_ep] + [_f(pooled.get("per_muscle", {}).get(c))]
                row(f"  {c}", vals, f"MuscleMimic {PAPER_R[c]:.2f}" if c in PAPER_R else "")
            row(f"  mean r ({len(chans)} channels)", [_f(p.get("mean_r")) for p in per_ep] + [_f(pooled.get("mean_r"))])
            row("  cycles", [str(p.get("cycles", "-")) for p in per_ep] + [str(pooled.get("cycles", "-"))])
        lines.append("EMG r, Eq. 14, the evaluator's record (mskbench eval: cycles at the right foot's touchdowns)")
        row("  mean r", [_f(e["emg_record"].get("mean_r")) for e in eps] + [""])
        row("  cycles", [str(e["emg_record"].get("cycles", "-")) for e in eps] + [""])
    else:
        lines.append(f"EMG: {out.get('emg_absent')}")
    sums = [e["gait"]["summary"] for e in eps] + [out["pooled_gait"]]
    lo, hi = HUMAN["grf_peak_bw"]
    vlo, vhi = HUMAN["grf_valley_bw"]
    lines.append("Vertical GRF per stance (BW, mean±sd)")
    row("  stances", [str(s["stances"]) for s in sums])
    row("  first peak", [_ms(s["first_peak_bw"]) for s in sums], f"{lo}-{hi} BW")
    row("  mid-stance minimum", [_ms(s["valley_bw"]) for s in sums], f"{vlo}-{vhi} BW")
    row("  second peak", [_ms(s["second_peak_bw"]) for s in sums], f"{lo}-{hi} BW")
    row("  first peak at (% stance)", [_ms(s["first_peak_pct"], 0) for s in sums], "about 25 % (typical)")
    row("  minimum at (% stance)", [_ms(s["valley_pct"], 0) for s in sums], "about 50 % (typical)")
    row("  second peak at (% stance)", [_ms(s["second_peak_pct"], 0) for s in sums], "about 75 % (typical)")
    row("  double hump (share)", [_f(s["double_hump_share"]) for s in sums], "1.00")
    row("  stance time (s)", [_ms(s["stance_s"]) for s in sums])
    row("  touch sensors / contact Fz", [_ms(s["touch_over_contact_fz"]) for s in sums], "check")
    row("  mean total Fz (BW)", [_f(e["gait"]["mean_total_fz_bw"], 3) for e in eps]
        + [_f(out["pooled_gait"]["mean_total_fz_bw"], 3)], "check: 1")
    slo, shi = HUMAN["stride_m"]
    clo, chi = HUMAN["cadence_spm"]
    lines.append(f"Stride and cadence (human norms at about {HUMAN['speed_mps']} m/s)")
    row("  strides (both feet)", [str(s["stride_time_s"]["n"]) for s in sums])
    row("  stride length, heel (m)", [_ms(s["stride_length_heel_m"]) for s in sums], f"{slo}-{shi} m")
    row("  stride length, pelvis (m)", [_ms(s["stride_length_pelvis_m"]) for s in sums])
    row("  stride time (s)", [_ms(s["stride_time_s"]) for s in sums])
    row("  cadence (steps/min)", [_f(s["cadence_spm"], 1) for s in sums], f"{clo:.0f}-{chi:.0f}")
    row("  forward speed, episode (m/s)", [_f(s["forward_speed_mps"]) for s in sums], f"{HUMAN['speed_mps']}")
    row("  speed, stride/time (m/s)", [_f(s["speed_from_strides_mps"]) for s in sums])
    ek = out.get("mm_evalkit")
    if ek:
        lines.append(f"mm-evalkit {ek.get('version', '')}: archive {ek['archive']}")
        if "absent" in ek:
            lines.append(f"  {ek['absent']}")
        else:
            lines.append(f"  validated and extracted: {ek.get('validated')}; gait cycles it finds: "
                         f"{ek.get('gait_cycles', ek.get('extract_error'))}")
            lines.append(f"  Wang score: {ek['wang_score'].get('absent', ek['wang_score'])}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", default="0,4,6", help="comma-separated episode seeds (default 0,4,6)")
    ap.add_argument("--json", type=Path, default=None, help="write every number here")
    ap.add_argument("--reference", type=Path, default=SANTUZ, help="the Santuz EMG reference CSV")
    ap.add_argument("--evalkit", type=Path, default=None,
                    help="the mm-evalkit archive to write (default: a temporary file); --no-evalkit: none")
    ap.add_argument("--no-evalkit", action="store_true")
    args = ap.parse_args(argv)
    seeds = [int(s) for s in args.seeds.split(",") if s.strip()]
    evalkit = None
    if not args.no_evalkit:
        evalkit = args.evalkit or Path(tempfile.mkdtemp(prefix="walk_physiology_")) / "expert_walk_evalkit.npz"
    out = run(seeds, args.reference, evalkit)
    print(table(out))
    if args.json is not None:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(out, indent=1, default=_jsonable) + "\n")
        print(f"wrote {args.json}")
    return 0


def _jsonable(x):
    if isinstance(x, np.integer):
        return int(x)
    if isinstance(x, np.floating):
        return float(x)
    if isinstance(x, np.bool_):
        return bool(x)
    if isinstance(x, np.ndarray):
        return x.tolist()
    raise TypeError(f"not JSON serialisable: {type(x).__name__}")


if __name__ == "__main__":
    os.environ.setdefault("OMP_NUM_THREADS", "1")
    sys.exit(main())

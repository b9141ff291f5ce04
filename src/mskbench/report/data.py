"""What a report shows, gathered into plain data: dicts, lists and NumPy arrays, no plotting.

Every ``gather_*`` function takes its inputs (a results store, run directories, a
mouse-evaluation JSON file, a video folder, a policy to roll out) and returns a
dict with the data of one or more report sections and a list ``notes`` of what is
missing or was left out and why, with the command that would provide it. None of
them raises for missing or partial data: an empty store gives empty data and notes.
Only arguments that cannot be read at all (a file that is not a results store, a
JSON file that is not a mouse evaluation) raise ``ValueError`` / ``StoreError``,
which the command line reports as one-line errors.

Definitions (the same as the rest of mskbench):

* success of an episode: the store's ``success`` column (the paper's rule) or,
  with ``success_label="table-xii"``, ``success_table_xii``;
* the leaderboard: :func:`mskbench.eval.leaderboard.compute_leaderboard` over the
  store's per-setting success rates (suite tasks only);
* robustness of a task and perturbation type: :func:`mskbench.metrics.robustness_auc`
  of success % over the stored scales (at least two);
* learning curves: a run's ``eval_log.jsonl`` rows that carry an evaluation,
  ``steps`` against ``eval[metric]`` (``mean_return`` for suite tasks; the mouse
  imitation's ``track_replay_error_mm``, lower is better); the peak is
  :meth:`mskbench.training.Run.peak_efficiency` (App. A-B5) for returns, the
  lowest value (earliest on ties) for errors.
"""

from __future__ import annotations

import glob
import json
import math
import os
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from mskbench.catalog import FAMILIES, SUITE, task_ids

#: Perturbation types of the robustness sweeps (App. A-B2), in the paper's order.
SWEEP_TYPES: tuple[str, ...] = ("action", "observation", "dynamics")
#: Video files linked by the report.
VIDEO_SUFFIXES: tuple[str, ...] = (".mp4", ".gif")
#: The metric of training evaluations where higher is better; every other one (errors) is lower-is-better.
RETURN_METRIC = "mean_return"


def task_order(tasks: Iterable[str]) -> list[str]:
    """Tasks in suite order (stabilization, locomotion, interaction), any others after, sorted."""
    tasks = set(tasks)
    return [t for t in SUITE if t in tasks] + sorted(t for t in tasks if t not in SUITE)


def _mean(values: Iterable[float | None]) -> float | None:
    vals = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    return math.fsum(vals) / len(vals) if vals else None


# -- the results store ------------------------------------------------------------------------------
def gather_store(path: str | Path, success_label: str = "paper", published: bool = False) -> dict[str, Any]:
    """The store's episodes summarised for every store-based section.

    Returns ``{"path", "records", "methods", "tasks", "notes", "leaderboard", "leaderboard_notes",
    "task_counts", "summary", "sweeps", "published", "privileged"}``:

    * ``records``: the episode records, ``success`` set from ``success_label``;
    * ``leaderboard``: ``compute_leaderboard`` output for the local methods (``{}`` without
      train-environment or sweep rows), with ``--published`` followed by the paper's columns
      ``"METHOD (paper)"``;
    * ``summary``: ``{method: summarize_eval(...)}`` (train-environment episodes per task);
    * ``sweeps``: ``{method: {task: {type: {"scales", "success", "episodes", "auc"}}}}``;
    * ``published``: ``{"table2", "tasks"}`` (Table II and Tables XIII–XV) or ``{}``;
    * ``privileged``: the methods that read the simulator (``ResultsStore.privileged_methods``).

    Raises :class:`mskbench.eval.store.StoreError` for a file that is not a results store.
    """
    from mskbench.eval.store import SUCCESS_LABELS, ResultsStore
    from mskbench.eval.summary import summarize_eval

    if success_label not in SUCCESS_LABELS:
        raise ValueError(f"unknown success label {success_label!r}; valid: {', '.join(SUCCESS_LABELS)}")
    column = SUCCESS_LABELS[success_label]
    path = Path(path)
    with ResultsStore(path) as store:
        raw = store.records()
        privileged = store.privileged_methods()
    records = []
    for r in raw:
        rec = dict(r)
        if rec.get(column) is not None:
            rec["success"] = bool(rec[column])
        records.append(rec)
    notes: list[str] = []
    if not records:
        notes.append(f"the results store {path} holds no episodes: run e.g. 'mskbench eval --task Stand,Walk "
                     f"--policy random --episodes 10 --store {path}' and 'mskbench sweep ... --store {path}'")
    methods = list(dict.fromkeys(r["method"] for r in records))
    tasks = task_order(r["task"] for r in records)
    summary = {m: summarize_eval([r for r in records if r["method"] == m]) for m in methods}
    if records and not any(summary.values()):
        notes.append("the store has no train-environment episodes (perturbation 'none'): run 'mskbench eval'")
    sweeps = _sweeps(records)
    out: dict[str, Any] = {"path": str(path), "records": records, "methods": methods, "tasks": tasks,
                           "notes": notes, "summary": summary, "sweeps": sweeps, "success_label": success_label,
                           "privileged": privileged}
    out.update(leaderboard_data(records, published))
    return out


def _sweeps(records: list[dict]) -> dict[str, dict[str, dict[str, dict[str, Any]]]]:
    groups: dict[tuple[str, str, str, float], list[bool]] = defaultdict(list)
    for r in records:
        if r["perturbation"] in SWEEP_TYPES:
            groups[(r["method"], r["task"], r["perturbation"], float(r["scale"]))].append(bool(r["success"]))
    out: dict[str, dict[str, dict[str, dict[str, Any]]]] = {}
    for (method, task, kind, scale), flags in sorted(groups.items()):
        entry = out.setdefault(method, {}).setdefault(task, {}).setdefault(
            kind, {"scales": [], "success": [], "episodes": [], "auc": None})
        entry["scales"].append(scale)
        entry["success"].append(100.0 * sum(flags) / len(flags))
        entry["episodes"].append(len(flags))
    from mskbench.metrics import robustness_auc

    for per_task in out.values():
        for per_type in per_task.values():
            for entry in per_type.values():
                if len(entry["scales"]) >= 2:
                    entry["auc"] = robustness_auc(entry["scales"], entry["success"])
    return out


def leaderboard_data(records: list[dict], published: bool) -> dict[str, Any]:
    """Table II for the local methods (and the paper's with ``published``), and what kept rows out of it."""
    from mskbench.eval.leaderboard import ResultRow, compute_leaderboard, family_task_counts, published_columns
    from mskbench.eval.summary import fell_after_success_counts

    notes: list[str] = []
    groups: dict[tuple[str, str, str, float], list[dict]] = defaultdict(list)
    others: Counter[str] = Counter()
    for r in records:
        if r["task"] not in SUITE:
            others[r["task"]] += 1
            continue
        groups[(r["task"], r["method"], r["perturbation"], float(r["scale"]))].append(r)
    for task, n in sorted(others.items()):
        notes.append(f"{n} episode(s) of {task}, which is not one of the 22 suite tasks, are left out of Table II")
    scales: dict[tuple[str, str, str], set[float]] = defaultdict(set)
    for task, method, pert, scale in groups:
        if pert != "none":
            scales[(task, method, pert)].add(scale)
    short = {k for k, v in scales.items() if len(v) < 2}
    for task, method, pert in sorted(short):
        notes.append(f"{method} on {task}: the {pert} sweep has one scale; a robustness area needs at least two "
                     f"(run 'mskbench sweep --task {task} --types {pert} --policy ...')")
    rows = []
    for (t, m, p, s), rs in groups.items():
        if (t, m, p) in short:
            continue
        won, fell = fell_after_success_counts(rs) if p == "none" else (None, None)
        rows.append(ResultRow(task=t, method=m, perturbation=p, scale=s,
                              success_rate=100.0 * sum(bool(r["success"]) for r in rs) / len(rs),
                              successes=won if fell is not None else None, fell_after_success=fell))
    local = compute_leaderboard(rows) if rows else {}
    if records and not any(p == "none" for (_t, _m, p, _s) in groups):
        notes.append("no train-environment episodes of suite tasks: the success rows and coverage are empty "
                     "(run 'mskbench eval --task ... --store ...')")
    if records and not any(p != "none" for (_t, _m, p, _s) in groups):
        notes.append("no robustness sweeps in the store: the robustness rows are empty "
                     "(run 'mskbench sweep --task ... --store ...')")
    for method, entry in local.items():
        missing = [k for k in SWEEP_TYPES if entry["robustness"][k] is None]
        if entry["robustness"] and missing and len(missing) < len(SWEEP_TYPES):
            notes.append(f"{method}: no {', '.join(missing)} sweep, so no average robustness")
    board = dict(local)
    paper: dict[str, Any] = {}
    count_rows = list(rows)
    if published:
        from dataclasses import replace

        from mskbench.eval.published import published_rows, published_table2, read_published_tables

        all_rows = published_rows()
        train_rows = [r for r in all_rows if r.perturbation == "none"]
        table2 = published_columns(published_table2(), all_rows)
        paper = {"table2": table2, "tasks": read_published_tables()}
        for method, entry in table2.items():
            name = f"{method} (paper)"
            if name in board:
                notes.append(f"a local method is named {name!r}; the paper's column of that name is not shown")
                continue
            board[name] = entry
        count_rows += [replace(r, method=f"{r.method} (paper)") for r in train_rows]
    return {"leaderboard": board, "local_methods": list(local), "leaderboard_notes": notes,
            "task_counts": family_task_counts(count_rows), "published": paper}


# -- radar axes (Fig. 1b) ---------------------------------------------------------------------------
#: The radar's axes, in drawing order: (key, label).
RADAR_AXES: tuple[tuple[str, str], ...] = (
    ("success", "Success"),
    ("coverage", "Coverage\n(SR > 0)"),
    ("robust_action", "Robust.\naction"),
    ("robust_observation", "Robust.\nobservation"),
    ("robust_dynamics", "Robust.\ndynamics"),
    ("activation", "Activation\nefficiency"),
    ("smoothness", "Smoothness"),
    ("emg", "EMG r"),
)
#: log10 mean squared jerk (rad²/s⁶) mapped to the outer and the inner ring of the smoothness axis:
#: the paper's Tables XIII–XV span 1.708–7.145, inside these bounds.
SMOOTH_BEST_LOG10 = 1.0
SMOOTH_WORST_LOG10 = 8.0

#: How each radar axis is scaled to [0, 1] (1 = the outer ring = better); shown on the report page.
RADAR_NORMALISATION: tuple[tuple[str, str], ...] = (
    ("Success", "mean train-environment success rate (%) over the family's tasks, divided by 100"),
    ("Coverage (SR > 0)", "fraction of the family's tasks with a success rate above 0"),
    ("Robust. action / observation / dynamics",
     "mean over the family's tasks of the normalised area under success (%) vs perturbation scale "
     "(mskbench.metrics.robustness_auc), divided by 100"),
    ("Activation efficiency",
     "1 − mean activation cost (Eq. 7: mean squared activation, in [0, 1] because activations are) over the "
     "family's tasks; 1 = no activation"),
    ("Smoothness",
     f"(L_worst − L) / (L_worst − L_best) clipped to [0, 1], where L is the mean log10 mean squared joint jerk "
     f"(Eq. 10, rad²/s⁶) over the family's tasks, L_best = {SMOOTH_BEST_LOG10:g} and "
     f"L_worst = {SMOOTH_WORST_LOG10:g} (fixed bounds around the paper's published range 1.7–7.1); "
     "lower jerk is further out"),
    ("EMG r", "mean phase-optimised EMG-envelope correlation r (Eq. 14) over the family's gait tasks that have "
              "one, clipped to [0, 1] (negative correlations sit at the centre); gait tasks only, with a reference"),
)


def smoothness_score(log10_jerk: float | None) -> float | None:
    """The smoothness axis: ``(L_worst − L) / (L_worst − L_best)`` clipped to [0, 1]."""
    if log10_jerk is None:
        return None
    score = (SMOOTH_WORST_LOG10 - log10_jerk) / (SMOOTH_WORST_LOG10 - SMOOTH_BEST_LOG10)
    return float(min(1.0, max(0.0, score)))


def _axis_values(success: list[float], robust: dict[str, list[float]], activation: list[float],
                 smooth: list[float], emg: list[float]) -> dict[str, float | None]:
    sr = _mean(success)
    cost = _mean(activation)
    r = _mean(emg)
    out: dict[str, float | None] = {
        "success": None if sr is None else sr / 100.0,
        "coverage": (sum(1 for v in success if v > 0) / len(success)) if success else None,
        "activation": None if cost is None else 1.0 - min(1.0, max(0.0, cost)),
        "smoothness": smoothness_score(_mean(smooth)),
        "emg": None if r is None else min(1.0, max(0.0, r)),
    }
    for kind in SWEEP_TYPES:
        auc = _mean(robust.get(kind, []))
        out[f"robust_{kind}"] = None if auc is None else auc / 100.0
    return out


def radar_values(store: dict[str, Any]) -> dict[str, dict[str, dict[str, Any]]]:
    """``{family: {series: {"axes": {axis: value in [0, 1] or None}, "raw": {...}, "tasks": n}}}``,
    one series per local method and, with ``--published``, per paper method (Tables XIII–XV)."""
    out: dict[str, dict[str, dict[str, Any]]] = {fam: {} for fam in FAMILIES}
    for method in store.get("methods", []):
        summary = store["summary"].get(method, {})
        sweeps = store["sweeps"].get(method, {})
        for fam in FAMILIES:
            tasks = [t for t in task_order(set(summary) | set(sweeps)) if SUITE.get(t) == fam]
            if not tasks:
                continue
            s = [summary[t] for t in tasks if t in summary]
            robust = {k: [sweeps[t][k]["auc"] for t in tasks if t in sweeps and k in sweeps[t]
                          and sweeps[t][k]["auc"] is not None] for k in SWEEP_TYPES}
            raw = {"success_rate": [x["success_rate"] for x in s],
                   "activation_cost": [x["activation_cost"] for x in s if x["activation_cost"] is not None],
                   "log10_jerk": [x["smoothness"] for x in s if x["smoothness"] is not None],
                   "emg_r": [x["emg"]["mean_r"] for x in s if "mean_r" in x["emg"]]}
            out[fam][method] = {
                "axes": _axis_values(raw["success_rate"], robust, raw["activation_cost"], raw["log10_jerk"],
                                     raw["emg_r"]),
                "raw": {"success_rate": _mean(raw["success_rate"]), "activation_cost": _mean(raw["activation_cost"]),
                        "log10_jerk": _mean(raw["log10_jerk"]), "emg_r": _mean(raw["emg_r"]),
                        **{f"robustness_{k}": _mean(v) for k, v in robust.items()}},
                "tasks": len(tasks), "local": True,
            }
    from mskbench.metrics import robustness_auc

    for result_method in dict.fromkeys(r.method for r in store.get("published", {}).get("tasks", [])):
        rows = [r for r in store["published"]["tasks"] if r.method == result_method]
        for fam in FAMILIES:
            mine = [r for r in rows if r.family == fam]
            if not mine:
                continue
            robust = {k: [robustness_auc(*zip(*r.sweep(k))) for r in mine] for k in SWEEP_TYPES}
            sr = [r.train_sr for r in mine]
            cost = [r.activation_cost for r in mine]
            smooth = [r.log10_smooth for r in mine]
            out[fam][f"{result_method} (paper)"] = {
                "axes": _axis_values(sr, robust, cost, smooth, []),
                "raw": {"success_rate": _mean(sr), "activation_cost": _mean(cost), "log10_jerk": _mean(smooth),
                        "emg_r": None, **{f"robustness_{k}": _mean(v) for k, v in robust.items()}},
                "tasks": len(mine), "local": False,
            }
    return out


# -- training runs ----------------------------------------------------------------------------------
def _run_dirs(paths: Sequence[str | Path]) -> tuple[list[Path], list[str]]:
    """Run directories from the given paths: a run directory (it has run.json), a folder searched for
    them, or a glob pattern (when the shell did not expand it)."""
    from mskbench.agents.run_dir import RUN_FILE, RunDir

    found: list[Path] = []
    notes: list[str] = []
    for given in paths:
        text = str(given)
        candidates = [Path(p) for p in sorted(glob.glob(text))] if any(c in text for c in "*?[") else [Path(text)]
        if not candidates:
            notes.append(f"--runs {text}: nothing matches")
        for p in candidates:
            if RunDir(p).is_run():
                found.append(p)
            elif p.is_dir():
                inner = sorted(q.parent for q in p.rglob(RUN_FILE))
                if inner:
                    found.extend(inner)
                else:
                    notes.append(f"--runs {p}: no run directory ({RUN_FILE}) in it")
            elif p.exists():
                notes.append(f"--runs {p}: not a directory (a run directory from 'mskbench train' holds {RUN_FILE})")
            else:
                notes.append(f"--runs {p}: does not exist")
    return list(dict.fromkeys(p.resolve() for p in found)), notes


def gather_runs(paths: Sequence[str | Path]) -> dict[str, Any]:
    """Learning curves: ``{"runs": [{"path", "name", "task", "algo", "metric", "lower_is_better", "steps",
    "values", "peak_step", "peak_value", "steps_done"}], "notes": [...]}``; ``algo`` is the method as the
    report names it (:attr:`mskbench.training.Run.label`: ``"ppo (from bc)"`` for a run started from a BC
    run's actor)."""
    from mskbench.training import Run

    notes: list[str] = []
    if not paths:
        return {"runs": [], "notes": ["no training runs given: pass --runs runs/* (directories written by "
                                      "'mskbench train TASK --out runs/NAME' or 'mskbench mouse train')"]}
    dirs, notes = _run_dirs(paths)
    runs = []
    for d in dirs:
        try:
            run = Run.load(d)
        except (OSError, ValueError, KeyError) as exc:
            notes.append(f"{d}: not a readable run ({exc})")
            continue
        metric = run.metric or RETURN_METRIC
        rows = [(int(r["steps"]), float(r["eval"][metric])) for r in run.history
                if isinstance(r.get("eval"), dict) and isinstance(r["eval"].get(metric), (int, float))]
        if not rows:
            notes.append(f"{d.name} ({run.task}, {run.algo}): no evaluation logged yet in eval_log.jsonl "
                         f"({len(run.history)} iteration(s))")
            continue
        steps = [s for s, _ in rows]
        values = [v for _, v in rows]
        lower = metric != RETURN_METRIC
        if lower:
            i = int(np.argmin(values))  # the first minimum: the earliest step
            peak_step, peak_value = float(steps[i]), float(values[i])
        else:
            try:
                peak = run.peak_efficiency()
                peak_step, peak_value = float(peak.t_max), float(peak.r_max)
            except ValueError as exc:
                notes.append(f"{d.name}: no peak efficiency ({exc})")
                i = int(np.argmax(values))
                peak_step, peak_value = float(steps[i]), float(values[i])
        runs.append({"path": str(d), "name": d.name, "task": run.task, "algo": run.label, "metric": metric,
                     "lower_is_better": lower, "steps": steps, "values": values, "peak_step": peak_step,
                     "peak_value": peak_value, "steps_done": run.steps})
    return {"runs": runs, "notes": notes}


# -- mouse evaluation -------------------------------------------------------------------------------
def gather_mouse(path: str | Path | None) -> dict[str, Any]:
    """The output of ``mskbench mouse eval --json`` (``{"overall", "per_clip"}``), or a note.

    Raises ValueError when the file is not JSON of that shape."""
    if path is None:
        return {"mouse": None, "notes": ["no mouse evaluation given: run 'mskbench mouse eval --policy RUN --json "
                                         "> mouse_eval.json' and pass --mouse mouse_eval.json"]}
    p = Path(path)
    try:
        data = json.loads(p.read_text())
    except (OSError, json.JSONDecodeError) as exc:
        raise ValueError(f"cannot read {p} as JSON: {exc}") from None
    if not (isinstance(data, dict) and isinstance(data.get("overall"), dict)
            and isinstance(data.get("per_clip"), dict)):
        raise ValueError(f"{p} is not the output of 'mskbench mouse eval --json' (keys 'overall' and 'per_clip')")
    return {"mouse": data, "path": str(p), "notes": []}


# -- videos -----------------------------------------------------------------------------------------
def gather_videos(folder: str | Path | None, out_dir: str | Path) -> dict[str, Any]:
    """Every *.mp4 / *.gif under ``folder`` (recursively), with its path relative to ``out_dir``."""
    if folder is None:
        return {"videos": [], "notes": ["no videos given: render some with 'mskbench render TASK --policy random "
                                        "--out videos/TASK.mp4' and pass --videos videos/"]}
    root = Path(folder)
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix.lower() in VIDEO_SUFFIXES)
    notes = [] if files else [f"no .mp4 or .gif file under {root}: render one with 'mskbench render TASK "
                              f"--out {root / 'TASK.mp4'}'"]
    out = Path(out_dir).resolve()
    videos = [{"name": str(p.relative_to(root)), "href": Path(os.path.relpath(p.resolve(), out)).as_posix(),
               "kind": p.suffix.lower()[1:], "bytes": p.stat().st_size} for p in files]
    return {"videos": videos, "notes": notes}


# -- activation heatmaps and EMG envelopes (one rollout per task, on request) ------------------------
def family_order(muscle_names: Sequence[str]) -> tuple[list[int], list[tuple[str, int, int]]]:
    """Muscle indices sorted by Table XVIII family (then by name), and ``(family, start, stop)`` blocks."""
    from mskbench.metrics import FAMILY_NAMES, UNCLASSIFIED, family_of

    rank = {f: i for i, f in enumerate((*FAMILY_NAMES, UNCLASSIFIED))}
    fams = [family_of(n) for n in muscle_names]
    order = sorted(range(len(muscle_names)), key=lambda i: (rank[fams[i]], muscle_names[i]))
    blocks: list[tuple[str, int, int]] = []
    for pos, i in enumerate(order):
        if blocks and blocks[-1][0] == fams[i]:
            blocks[-1] = (fams[i], blocks[-1][1], pos + 1)
        else:
            blocks.append((fams[i], pos, pos + 1))
    return order, blocks


def rollout_activations(task: str, policy_spec: str, seed: int = 0, emg_reference=None) -> dict[str, Any]:
    """One protocol episode of ``task`` (train environment, reset with ``seed``) with ``policy_spec``
    (as ``mskbench eval --policy``), recording the activations of every control step.

    Returns ``{"task", "policy", "seed", "activations" (T, M), "muscles", "dt", "length", "termination",
    "success", "emg"}``; ``emg`` is ``None`` without a reference, else ``{"absent": reason}`` or
    ``{"mean_r", "cycles", "channels": {name: {"r", "shift", "sim", "ref"}}}`` with both envelopes
    min-max normalised (Eq. 30) and ``sim`` before the optimal shift."""
    from mskbench.envs import MSKEnv
    from mskbench.eval.episodes import NONPHYSICAL_TERMINATIONS, Step, body_weight_n, play_episode
    from mskbench.eval.protocol import load_policy

    env = MSKEnv(task)
    try:
        policy = load_policy(policy_spec, env, seed)
        h = env.handles
        # the right foot's load (heel and toes sensors): its touchdowns start the EMG's gait cycles, as in
        # the protocol's records (mskbench.eval.episodes.right_foot_strikes)
        foot_adr = [h.touch_adr[h.touch_index(n)] for n in ("r_foot", "r_toes") if n in h.touch_names]
        weight = body_weight_n(env.model, h)
        acts, foot = [], []

        def record(env: MSKEnv, step: Step | None) -> None:
            if step is not None:
                acts.append(np.asarray(step.info["activation"], dtype=np.float64))
                foot.append(float(sum(env.data.sensordata[a] for a in foot_adr)))

        info: dict[str, Any] = play_episode(env, policy, seed, record).info
        muscles = list(h.muscle_names)
        dt = float(env.control_dt_s)
    finally:
        env.close()
    activations = np.array(acts)
    if info.get("termination") in NONPHYSICAL_TERMINATIONS:  # the last step carries no physical state
        activations, foot = activations[:-1], foot[:-1]
    emg = None if emg_reference is None else _emg_envelopes(task, activations, np.array(foot), muscles,
                                                            emg_reference, dt, weight)
    return {"task": task, "policy": policy_spec, "seed": seed, "activations": activations, "muscles": muscles,
            "dt": dt, "length": int(info.get("step", len(acts))), "termination": str(info.get("termination")),
            "success": bool(info.get("success")), "emg": emg}


def _emg_envelopes(task: str, activations: np.ndarray, foot: np.ndarray, muscles: list[str], reference,
                   dt: float, weight_n: float) -> dict:
    from mskbench.metrics.emg import NORM_EPS, emg_similarity
    from mskbench.metrics.progress import foot_touchdowns

    def minmax(x: np.ndarray) -> np.ndarray:  # Eq. 30, as the metric normalises both envelopes
        return (x - x.min()) / (x.max() - x.min() + NORM_EPS)

    gait = task_ids(gait=True)
    if task not in gait:
        return {"absent": f"not a gait task: EMG references apply to {', '.join(gait)} only"}
    strikes = foot_touchdowns(foot, dt, weight_n) if len(foot) else np.array([], dtype=np.int64)
    if len(strikes) < 2:
        return {"absent": f"fewer than one complete gait cycle in the episode ({len(strikes)} right heel strikes)"}
    result = emg_similarity(activations, muscles, strikes, reference, on_constant="zero")
    ref = reference.as_dict() if hasattr(reference, "as_dict") else dict(reference)
    channels = {name: {"r": float(m.r), "shift": int(m.shift), "sim": np.asarray(result.sim_envelopes[name]),
                       "ref": minmax(np.asarray(ref[name], dtype=np.float64))}
                for name, m in result.per_muscle.items()}
    return {"mean_r": float(result.mean_r), "cycles": int(result.n_cycles), "channels": channels}


def gather_heatmaps(policy_spec: str | None, tasks: Sequence[str], seed: int = 0, emg_reference=None,
                    on_task=None) -> dict[str, Any]:
    """Rollouts for the activation heatmaps (and EMG envelopes): ``{"heatmaps": {task: rollout}, "notes"}``."""
    if policy_spec is None:
        return {"heatmaps": {}, "notes": ["no activation heatmap requested: pass --heatmap-policy POLICY "
                                          "[--heatmap-tasks T1,T2] to roll out one seeded episode per task"]}
    heatmaps = {}
    notes = []
    for task in tasks:
        if on_task is not None:
            on_task(task)
        try:
            heatmaps[task] = rollout_activations(task, policy_spec, seed, emg_reference)
        except (ValueError, TypeError, RuntimeError, OSError) as exc:
            notes.append(f"{task}: the {policy_spec} rollout failed ({exc})")
    if not tasks:
        notes.append("--heatmap-policy given but no task: pass --heatmap-tasks T1,T2 or a store with episodes")
    return {"heatmaps": heatmaps, "notes": notes}

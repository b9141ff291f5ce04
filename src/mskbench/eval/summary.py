"""Summaries of stored episode records: per-task evaluation, robustness, leaderboard rows."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

from mskbench.eval.leaderboard import ResultRow
from mskbench.eval.protocol import PERTURBATION_TYPES
from mskbench.metrics import robustness_auc


def _mean(values) -> float | None:
    vals = [v for v in values if v is not None]
    return float(np.mean(vals)) if vals else None


def fell_after_success_counts(records: list[dict]) -> tuple[int, int | None]:
    """``(successes, fell)``: the successful episodes among ``records`` and how many of them then fell
    (``fell_after_success``); ``fell`` is None (unknown) when a successful episode's flag is unknown (a
    record stored before schema 3)."""
    won = [r for r in records if r["success"]]
    if any(r.get("fell_after_success") is None for r in won):
        return len(won), None
    return len(won), sum(1 for r in won if r["fell_after_success"])


def fell_after_success_share(records: list[dict]) -> dict[str, float | int | None]:
    """``{"percent", "fell", "successes"}`` (:func:`fell_after_success_counts`) with the share (%) that then
    fell; ``percent`` is None without a success or when ``fell`` is unknown. The shape of
    :func:`mskbench.eval.leaderboard.compute_leaderboard`'s entry of that name."""
    won, fell = fell_after_success_counts(records)
    return {"percent": 100.0 * fell / won if won and fell is not None else None, "fell": fell, "successes": won}


#: The gait progress figures of a record whose medians :func:`progress_medians` gives.
PROGRESS_FIGURES = ("steps_taken", "distance_m", "forward_distance_m", "forward_speed_mps")


def progress_medians(records: list[dict]) -> dict:
    """The median over ``records`` of each gait progress figure (:data:`PROGRESS_FIGURES`) and ``episodes``,
    the number of records that have them; ``{"absent": reason}`` when none has (a body without feet,
    episodes shorter than two steps, or records stored before schema 4)."""
    have = [r for r in records if all(r.get(k) is not None for k in PROGRESS_FIGURES)]
    if not have:
        return {"absent": "no episode has gait progress figures (a body without feet, episodes shorter "
                          "than two steps, or stored before they were recorded)"}
    return {"episodes": len(have), **{k: float(np.median([r[k] for r in have])) for k in PROGRESS_FIGURES}}


def progress_text(medians: dict) -> str:
    """A :func:`progress_medians` result as one table cell, ``"12 · 3.41 m · 0.52 m/s"`` (steps taken, distance,
    forward speed), or ``"—"`` when absent."""
    if "absent" in medians:
        return "—"
    return (f"{medians['steps_taken']:g} · {medians['distance_m']:.2f} m · "
            f"{medians['forward_speed_mps']:.2f} m/s")


def summarize_eval(records: list[dict]) -> dict[str, dict]:
    """Per task: success rate (%), the share of successful episodes that then fell
    (:func:`fell_after_success_share`), return and length statistics, activation cost,
    smoothness, family recruitment (% of the mean activation mass), EMG, the medians of the
    gait progress figures (:func:`progress_medians`) and termination counts, over the
    train-environment (``none``) episodes given.
    """
    by_task: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        if r["perturbation"] == "none":
            by_task[r["task"]].append(r)
    out = {}
    for task, rs in by_task.items():
        returns = np.array([r["episode_return"] for r in rs])
        families: dict[str, float] = defaultdict(float)
        for r in rs:
            for fam, mass in (r.get("recruitment") or {}).items():
                families[fam] += mass / len(rs)
        total = sum(families.values())
        emg_r = [r["emg"]["mean_r"] for r in rs if r.get("emg") and "mean_r" in r["emg"]]
        if emg_r:
            per_muscle: dict[str, list[float]] = defaultdict(list)
            for r in rs:
                for k, v in (r.get("emg") or {}).get("per_muscle", {}).items():
                    per_muscle[k].append(v)
            emg = {"mean_r": float(np.mean(emg_r)), "episodes": len(emg_r),
                   "per_muscle": {k: float(np.mean(v)) for k, v in per_muscle.items()}}
        else:
            reasons = Counter((r.get("emg") or {}).get("absent", "not recorded") for r in rs)
            emg = {"absent": reasons.most_common(1)[0][0]}
        out[task] = {
            "episodes": len(rs),
            "success_rate": 100.0 * float(np.mean([r["success"] for r in rs])),
            "fell_after_success": fell_after_success_share(rs),
            "return_mean": float(returns.mean()),
            "return_std": float(returns.std()),
            "length_mean": float(np.mean([r["length"] for r in rs])),
            "activation_cost": _mean(r["activation_cost"] for r in rs),
            "smoothness": _mean(r["smoothness"] for r in rs),
            "recruitment_percent": {k: (100.0 * v / total if total > 0 else 0.0) for k, v in families.items()},
            "emg": emg,
            "progress": progress_medians(rs),
            "terminations": dict(Counter(r["termination"] for r in rs)),
        }
    return out


def success_by_setting(records: list[dict]) -> dict[tuple[str, str, float], float]:
    """Success rate (%) per (task, perturbation, scale)."""
    groups: dict[tuple[str, str, float], list[bool]] = defaultdict(list)
    for r in records:
        groups[(r["task"], r["perturbation"], float(r["scale"]))].append(bool(r["success"]))
    return {k: 100.0 * float(np.mean(v)) for k, v in groups.items()}


def summarize_sweep(records: list[dict]) -> dict:
    """Robustness (area under success % vs scale / range) per task and type,
    the mean over tasks per type, and the average over types (equal weights)."""
    sr = success_by_setting(records)
    per_task: dict[str, dict[str, float]] = defaultdict(dict)
    for task in sorted({k[0] for k in sr}):
        for kind in PERTURBATION_TYPES:
            points = sorted((scale, rate) for (t, p, scale), rate in sr.items() if t == task and p == kind)
            if len(points) >= 2:
                scales, rates = zip(*points)
                per_task[task][kind] = robustness_auc(scales, rates)
    per_type = {kind: _mean(v.get(kind) for v in per_task.values()) for kind in PERTURBATION_TYPES}
    per_type = {k: v for k, v in per_type.items() if v is not None}
    return {
        "per_task": dict(per_task),
        "per_type": per_type,
        "average": _mean(per_type.values()),
        "success_rate": {f"{t}/{p}/{s:g}": v for (t, p, s), v in sorted(sr.items())},
    }


def rows_from_store(path: str | Path, success: str = "paper") -> list[ResultRow]:
    """Leaderboard rows (success % per task, method, perturbation, scale) from a results store, success
    by the paper's rule (``"paper"``) or the Table XII criterion alone (``"table-xii"``); a ``none`` row
    carries its successful episodes and how many then fell (both None when that is unknown)."""
    from mskbench.eval.store import ResultsStore

    with ResultsStore(path) as store:
        falls = store.fell_after_success_counts(success)
        rows = []
        for t, m, p, s, rate, _n in store.success_rates(success):
            won, fell = falls[(t, m, p, float(s))] if p == "none" else (None, None)
            rows.append(ResultRow(task=t, method=m, perturbation=p, scale=float(s), success_rate=float(rate),
                                  successes=won if fell is not None else None, fell_after_success=fell))
        return rows


def privileged_from_store(path: str | Path) -> list[str]:
    """The store's privileged methods (:meth:`mskbench.eval.store.ResultsStore.privileged_methods`)."""
    from mskbench.eval.store import ResultsStore

    with ResultsStore(path) as store:
        return store.privileged_methods()

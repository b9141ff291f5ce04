"""The report's figures, drawn with matplotlib on its Agg/SVG canvases (no display, no pyplot state).

Each ``*_figure`` function takes the plain data of :mod:`mskbench.report.data` and returns a
:class:`matplotlib.figure.Figure`; :func:`save` writes it as PNG and SVG and returns the SVG
text for inlining. Colours are fixed per method for a whole report (:func:`method_colors`); the
paper's methods (``--published``) are drawn dashed / hatched.

Figure                                 paper
=====================================  =====================================================
:func:`radar_figure`                   Fig. 1b (per family; axes in data.RADAR_AXES)
:func:`learning_figure`                Fig. 2 (one panel per task)
:func:`robustness_figure`              Figs. 3b–d, 5 (success vs perturbation scale)
:func:`emg_r_figure`                   Fig. 6 (per-muscle r; the store keeps no envelopes)
:func:`emg_envelope_figure`            Fig. 6 (envelopes, from a rollout with a reference)
:func:`jerk_figure`                    Fig. 7
:func:`recruitment_figure`             Figs. 8–9
:func:`heatmap_figure`                 Figs. 14–15
:func:`mouse_error_figure`,            the mouse evaluation (track replay error per clip,
:func:`mouse_rho_figure`               simplex ρ per muscle)
=====================================  =====================================================
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from matplotlib import rc_context
from matplotlib.figure import Figure

from mskbench.catalog import FAMILIES, SUITE
from mskbench.report.data import RADAR_AXES, SWEEP_TYPES, family_order, task_order

#: One colour per method, in order of appearance (matplotlib's "tab10", then "tab20").
_PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
            "#17becf", "#aec7e8", "#ffbb78", "#98df8a", "#ff9896", "#c5b0d5", "#c49c94")
FAMILY_COLOURS = {"stabilization": "#e8f1fa", "locomotion": "#fdf0e2", "interaction": "#eaf6ea"}

STYLE: dict[str, Any] = {
    "font.size": 9,
    "axes.titlesize": 10,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "legend.fontsize": 8,
    "legend.frameon": False,
    "svg.fonttype": "none",  # text stays text in the SVG (searchable, small)
}


def method_colors(names: Sequence[str]) -> dict[str, str]:
    """A colour per method name; a paper method ``"X (paper)"`` gets the colour after the local ones."""
    return {name: _PALETTE[i % len(_PALETTE)] for i, name in enumerate(dict.fromkeys(names))}


def _is_paper(name: str) -> bool:
    return name.endswith(" (paper)")


def report_style():
    """A context in which figures are built and saved with the report's rcParams (``STYLE``)."""
    return rc_context(STYLE)


def new_figure(width: float, height: float) -> Figure:
    """An empty figure (no pyplot: nothing global, no display), laid out by matplotlib's constrained layout."""
    return Figure(figsize=(width, height), layout="constrained")


def save(fig: Figure, stem: Path, dpi: int = 130) -> str:
    """Write ``stem``.png and ``stem``.svg; return the SVG markup (from ``<svg``) for inlining.

    ``svg.hashsalt`` is set to the file name, so the SVG's internal ids are reproducible and differ
    between figures inlined in one page."""
    stem.parent.mkdir(parents=True, exist_ok=True)
    settings: Any = {**STYLE, "svg.hashsalt": stem.name}
    with rc_context(settings):
        fig.savefig(stem.with_suffix(".png"), dpi=dpi)
        buf = io.StringIO()
        fig.savefig(buf, format="svg", metadata={"Date": None})
    svg = buf.getvalue()
    stem.with_suffix(".svg").write_text(svg, encoding="utf-8")
    # inline: from <svg on, without the RDF metadata block (namespace URLs only, nothing to show)
    return re.sub(r"<metadata>.*?</metadata>\s*", "", svg[svg.index("<svg"):], count=1, flags=re.S)


# -- Fig. 1b: radar ---------------------------------------------------------------------------------
def radar_figure(family: str, series: Mapping[str, Mapping[str, Any]], colors: Mapping[str, str]) -> Figure:
    """One family's radar: a polygon per method over ``RADAR_AXES`` (values in [0, 1]); an axis a
    method has no value for is left out of its polygon (the line jumps over it) and marked "n/a"
    in the axis label when no method has it."""
    fig = new_figure(3.9, 4.3)
    ax = fig.add_subplot(projection="polar")
    n = len(RADAR_AXES)
    angles = np.linspace(0.0, 2.0 * math.pi, n, endpoint=False)
    labels = []
    for i, (key, label) in enumerate(RADAR_AXES):
        has = any(s["axes"].get(key) is not None for s in series.values())
        labels.append(label if has else f"{label}\n(n/a)")
    for name, s in series.items():
        values = np.array([np.nan if s["axes"].get(k) is None else s["axes"][k] for k, _ in RADAR_AXES])
        closed_a = np.append(angles, angles[0])
        closed_v = np.append(values, values[0])
        style = "--" if not s.get("local", True) else "-"
        ax.plot(closed_a, closed_v, style, color=colors[name], lw=1.6, label=f"{name} ({s['tasks']} tasks)")
        ax.plot(angles, values, "o", color=colors[name], ms=3.5)
        if s.get("local", True) and np.isfinite(closed_v).all():
            ax.fill(closed_a, closed_v, color=colors[name], alpha=0.12)
    ax.set_xticks(angles)
    ax.set_xticklabels(labels, fontsize=8)
    ax.set_ylim(0.0, 1.0)
    ax.set_yticks([0.25, 0.5, 0.75, 1.0])
    ax.set_yticklabels(["0.25", "0.5", "0.75", "1"], fontsize=7, color="#666")
    ax.set_title(family.capitalize(), pad=14)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.1), ncol=2, fontsize=7)
    return fig


# -- Fig. 2: learning curves ------------------------------------------------------------------------
def learning_figure(runs: Sequence[Mapping[str, Any]], colors: Mapping[str, str]) -> Figure:
    """One panel per task: evaluation metric vs environment steps, a line per run (colour by
    algorithm), the peak (App. A-B5: the earliest step with the best evaluation) starred; runs of the
    same task and algorithm evaluated at the same steps also get their min–max band shaded."""
    tasks = task_order({r["task"] for r in runs})
    ncols = min(3, len(tasks))
    nrows = math.ceil(len(tasks) / ncols)
    fig = new_figure(3.6 * ncols + 0.4, 2.8 * nrows + 0.3)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    for ax, task in zip(axes, tasks):
        mine = [r for r in runs if r["task"] == task]
        by_algo: dict[str, list[Mapping[str, Any]]] = {}
        for r in mine:
            by_algo.setdefault(r["algo"], []).append(r)
        for algo, group in by_algo.items():
            grid = group[0]["steps"]
            if len(group) > 1 and all(g["steps"] == grid for g in group):
                v = np.array([g["values"] for g in group])
                ax.fill_between(grid, v.min(axis=0), v.max(axis=0), color=colors[algo], alpha=0.18, lw=0)
            for r in group:
                label = f"{algo}: {r['name']}" if len(mine) > 1 else algo
                ax.plot(r["steps"], r["values"], "-", color=colors[algo], lw=1.4, label=label,
                        marker="." if len(r["steps"]) < 30 else None)
                ax.plot([r["peak_step"]], [r["peak_value"]], "*", color=colors[algo], ms=11, mec="black", mew=0.6)
                ax.annotate(f"peak {r['peak_value']:.6g}\n@ {r['peak_step']:.3g} steps",
                            (r["peak_step"], r["peak_value"]), textcoords="offset points", xytext=(4, 4),
                            fontsize=7)
        metric = mine[0]["metric"]
        ax.ticklabel_format(axis="y", useOffset=False)
        ax.set_title(f"{task}")
        ax.set_xlabel("environment steps")
        ax.set_ylabel(metric + (" (lower is better)" if mine[0]["lower_is_better"] else ""))
        ax.legend(loc="best")
    for ax in axes[len(tasks):]:
        ax.set_visible(False)
    return fig


# -- Figs. 3, 5: robustness curves ------------------------------------------------------------------
def robustness_figure(task: str, sweeps: Mapping[str, Mapping[str, Mapping[str, Any]]],
                      paper: Mapping[str, Mapping[str, Sequence[tuple[float, float]]]],
                      colors: Mapping[str, str]) -> Figure:
    """Success (%) vs perturbation scale, a panel per type, a line per method with its AUC
    (normalised area, 0–100) in the legend. ``sweeps``: ``{method: {type: entry}}`` of this task;
    ``paper``: ``{"METHOD (paper)": {type: [(scale, sr)]}}`` (dashed)."""
    from mskbench.metrics import robustness_auc

    kinds = [k for k in SWEEP_TYPES if any(k in s for s in sweeps.values())]
    fig = new_figure(3.3 * len(kinds) + 0.4, 3.0)
    axes = np.atleast_1d(fig.subplots(1, len(kinds), squeeze=False)).ravel()
    for ax, kind in zip(axes, kinds):
        for method, per_type in sweeps.items():
            e = per_type.get(kind)
            if e is None:
                continue
            auc = "AUC n/a (1 scale)" if e["auc"] is None else f"AUC {e['auc']:.1f}"
            ax.plot(e["scales"], e["success"], "-o", color=colors[method], ms=4, lw=1.5, label=f"{method}: {auc}")
        for method, paper_types in paper.items():
            pts = paper_types.get(kind)
            if not pts:
                continue
            xs, ys = zip(*pts)
            ax.plot(xs, ys, "--", color=colors[method], lw=1.1, alpha=0.8,
                    label=f"{method}: AUC {robustness_auc(xs, ys):.1f}")
        ax.set_title(f"{task}: {kind}")
        ax.set_xlabel(f"{kind} perturbation scale")
        ax.set_ylabel("success rate (%)")
        ax.set_ylim(-4, 104)
        ax.legend(loc="best", fontsize=7)
    return fig


# -- Fig. 6: EMG ------------------------------------------------------------------------------------
def emg_r_figure(task: str, per_method: Mapping[str, Mapping[str, Any]], colors: Mapping[str, str]) -> Figure:
    """Per-muscle phase-optimised r (Eq. 13) of one gait task, grouped bars per method, mean r dotted.
    ``per_method``: ``{method: summarize_eval(...)[task]["emg"]}`` with ``per_muscle``."""
    channels = list(dict.fromkeys(c for e in per_method.values() for c in e["per_muscle"]))
    fig = new_figure(max(5.0, 0.45 * len(channels) * max(1, len(per_method)) + 1.5), 3.0)
    ax = fig.add_subplot()
    width = 0.8 / max(1, len(per_method))
    x = np.arange(len(channels))
    for i, (method, e) in enumerate(per_method.items()):
        vals = [e["per_muscle"].get(c, np.nan) for c in channels]
        ax.bar(x + (i - (len(per_method) - 1) / 2) * width, vals, width, color=colors[method],
               label=f"{method}: mean r {e['mean_r']:.2f} ({e['episodes']} episodes)")
        ax.axhline(e["mean_r"], color=colors[method], ls=":", lw=1)
    ax.axhline(0.0, color="black", lw=0.6)
    ax.set_xticks(x)
    ax.set_xticklabels(channels)
    ax.set_ylim(-1.0, 1.0)
    ax.set_ylabel("phase-optimised r")
    ax.set_xlabel("reference channel")
    ax.set_title(f"{task}: EMG-envelope similarity per muscle")
    ax.legend(loc="lower left")
    return fig


def emg_envelope_figure(rollout: Mapping[str, Any]) -> Figure:
    """Simulated (after the optimal cyclic shift) vs reference envelope per channel, over the gait
    cycle, both min-max normalised (Eq. 30); r and the shift in each panel's title."""
    emg = rollout["emg"]
    names = list(emg["channels"])
    ncols = min(5, len(names))
    nrows = math.ceil(len(names) / ncols)
    fig = new_figure(2.3 * ncols + 0.3, 1.9 * nrows + 0.6)
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False, sharex=True, sharey=True)).ravel()
    pct = np.arange(101)
    for ax, name in zip(axes, names):
        c = emg["channels"][name]
        ax.plot(pct, c["ref"], color="black", lw=1.3, label="human reference")
        ax.plot(pct, np.roll(c["sim"], c["shift"]), color="#d62728", lw=1.3, label="simulated (shifted)")
        ax.set_title(f"{name}: r {c['r']:.2f}, shift {c['shift']:+d}%", fontsize=8)
        ax.set_ylim(-0.05, 1.05)
    for ax in axes[len(names):]:
        ax.set_visible(False)
    axes[0].legend(loc="upper right", fontsize=6)
    fig.supxlabel("gait cycle (%)")
    fig.supylabel("normalised envelope")
    fig.suptitle(f"{rollout['task']}: {rollout['policy']}, seed {rollout['seed']}: mean r {emg['mean_r']:.2f} over "
                 f"{emg['cycles']} cycle(s)")
    return fig


# -- Fig. 7: log jerk -------------------------------------------------------------------------------
def jerk_figure(summary: Mapping[str, Mapping[str, Mapping[str, Any]]],
                paper: Mapping[str, Mapping[str, float]], colors: Mapping[str, str]) -> Figure:
    """log10 mean squared joint jerk (Eq. 10) per task, a bar per method (mean over episodes; error
    bar: the SD over episodes where given as ``smoothness_sd``), tasks grouped by family on a tinted
    background; ``paper``: ``{"METHOD (paper)": {task: log10}}`` (hatched)."""
    tasks = task_order({t for s in summary.values() for t, v in s.items() if v.get("smoothness") is not None})
    series = [(m, {t: v["smoothness"] for t, v in s.items() if v.get("smoothness") is not None},
               {t: v.get("smoothness_sd") for t, v in s.items()}) for m, s in summary.items()]
    series = [s for s in series if s[1]]
    series += [(m, {t: v for t, v in p.items() if t in tasks}, {}) for m, p in paper.items()]
    fig = new_figure(max(5.0, 0.28 * len(tasks) * len(series) + 1.8), 3.4)
    ax = fig.add_subplot()
    x = np.arange(len(tasks))
    width = 0.8 / max(1, len(series))
    _family_bands(ax, tasks)
    for i, (method, values, sds) in enumerate(series):
        vals = [values.get(t, np.nan) for t in tasks]
        err = [sds.get(t) or 0.0 for t in tasks] if sds else None
        ax.bar(x + (i - (len(series) - 1) / 2) * width, vals, width, color=colors[method], label=method,
               yerr=err, capsize=2, hatch="//" if _is_paper(method) else None,
               alpha=0.55 if _is_paper(method) else 1.0, edgecolor="white" if _is_paper(method) else None)
    ax.set_xticks(x)
    ax.set_xticklabels(tasks, rotation=35, ha="right")
    ax.set_ylabel("log10 mean sq. jerk (rad²/s⁶)")
    ax.set_title("Joint smoothness per task (lower is smoother)")
    ax.margins(y=0.12)
    ax.legend(loc="upper left", bbox_to_anchor=(1.0, 1.0))
    return fig


def _family_bands(ax, tasks: Sequence[str]) -> None:
    for fam in FAMILIES:
        idx = [i for i, t in enumerate(tasks) if SUITE.get(t) == fam]
        if idx:
            ax.axvspan(min(idx) - 0.5, max(idx) + 0.5, color=FAMILY_COLOURS[fam], zorder=0, lw=0)
            ax.text((min(idx) + max(idx)) / 2, 0.99, fam, transform=ax.get_xaxis_transform(), ha="center",
                    va="top", fontsize=7, color="#555")


# -- Figs. 8-9: recruitment -------------------------------------------------------------------------
def recruitment_figure(task: str, per_method: Mapping[str, Mapping[str, float]], colors: Mapping[str, str]) -> Figure:
    """Activation mass per muscle family (Eq. 35: the sum of the family's time-averaged activations,
    mean over episodes), a horizontal bar per method; families in Table XVIII order."""
    from mskbench.metrics import FAMILY_NAMES, UNCLASSIFIED

    fams = [f for f in (*FAMILY_NAMES, UNCLASSIFIED)
            if f != UNCLASSIFIED or any(m.get(UNCLASSIFIED, 0.0) > 0 for m in per_method.values())]
    fig = new_figure(6.4, min(9.0, 0.12 * len(fams) * max(1, len(per_method)) + 1.6))
    ax = fig.add_subplot()
    y = np.arange(len(fams))
    height = 0.8 / max(1, len(per_method))
    for i, (method, masses) in enumerate(per_method.items()):
        ax.barh(y + (i - (len(per_method) - 1) / 2) * height, [masses.get(f, 0.0) for f in fams], height,
                color=colors[method], label=method)
    ax.set_yticks(y)
    ax.set_yticklabels(fams, fontsize=7)
    ax.invert_yaxis()
    ax.set_xlabel("activation mass (sum of time-averaged activations)")
    ax.set_title(f"{task}: recruitment by muscle family")
    ax.legend(loc="lower right")
    return fig


# -- Figs. 14-15: activation heatmap ----------------------------------------------------------------
def heatmap_figure(rollout: Mapping[str, Any]) -> Figure:
    """Activation (0–1) of every muscle over one episode: time on x, muscles on y grouped by Table
    XVIII family (labelled blocks, thin separators)."""
    acts = np.asarray(rollout["activations"])
    order, blocks = family_order(rollout["muscles"])
    fig = new_figure(7.6, 6.4)
    ax = fig.add_subplot()
    if acts.size == 0:
        ax.text(0.5, 0.5, "the episode recorded no physical step", ha="center", va="center", transform=ax.transAxes)
        return fig
    t_end = acts.shape[0] * rollout["dt"]
    im = ax.imshow(acts[:, order].T, aspect="auto", interpolation="nearest", cmap="magma", vmin=0.0, vmax=1.0,
                   extent=(0.0, t_end, len(order), 0))
    for _fam, start, _stop in blocks[1:]:
        ax.axhline(start, color="white", lw=0.4, alpha=0.7)
    ax.set_yticks([(a + b) / 2 for _f, a, b in blocks])
    ax.set_yticklabels([f"{f} ({b - a})" for f, a, b in blocks], fontsize=6)
    ax.set_xlabel("time (s)")
    ax.set_title(f"{rollout['task']}: {rollout['policy']}, seed {rollout['seed']}, {rollout['length']} steps, "
                 f"ended by {rollout['termination']}")
    fig.colorbar(im, ax=ax, label="activation", fraction=0.04)
    return fig


# -- the mouse evaluation ---------------------------------------------------------------------------
def mouse_error_figure(mouse: Mapping[str, Any]) -> Figure:
    """Track replay error (mm) per clip, the overall mean dashed; unstable clips hatched."""
    clips = list(mouse["per_clip"])
    fig = new_figure(max(4.5, 0.35 * len(clips) + 1.5), 3.0)
    ax = fig.add_subplot()
    vals = [mouse["per_clip"][c]["track_replay_error_mm"] for c in clips]
    bars = ax.bar(np.arange(len(clips)), vals, color="#1f77b4")
    for bar, c in zip(bars, clips):
        if not mouse["per_clip"][c].get("stable", True):
            bar.set_hatch("xx")
    ax.axhline(mouse["overall"]["track_replay_error_mm"], color="black", ls="--", lw=1,
               label=f"mean {mouse['overall']['track_replay_error_mm']:.2f} mm")
    ax.set_xticks(np.arange(len(clips)))
    ax.set_xticklabels(clips, rotation=45, ha="right", fontsize=7)
    ax.set_ylabel("track replay error (mm)")
    ax.set_title("Mouse imitation: track replay error per clip")
    ax.legend()
    return fig


def mouse_rho_figure(mouse: Mapping[str, Any]) -> Figure:
    """Simplex ρ (cross-mapping skill of each muscle's activation from the joint angles) per muscle,
    mean over clips; muscles whose activation stayed flat on every clip have no ρ (marked)."""
    rho = mouse["overall"]["simplex_rho"]
    muscles = list(rho["per_muscle"])
    fig = new_figure(max(4.5, 0.45 * len(muscles) + 1.5), 3.0)
    ax = fig.add_subplot()
    vals = [np.nan if rho["per_muscle"][m] is None else rho["per_muscle"][m] for m in muscles]
    ax.bar(np.arange(len(muscles)), vals, color="#2ca02c")
    for i, v in enumerate(vals):
        if not np.isfinite(v):
            ax.text(i, 0.02, "flat", ha="center", va="bottom", rotation=90, fontsize=7, color="#666")
    ax.axhline(0.0, color="black", lw=0.6)
    ax.set_xticks(np.arange(len(muscles)))
    ax.set_xticklabels(muscles, rotation=45, ha="right", fontsize=7)
    ax.set_ylim(min(-0.1, np.nanmin(vals) - 0.05) if np.isfinite(vals).any() else -0.1, 1.0)
    ax.set_ylabel("simplex ρ")
    ax.set_title(f"Mouse imitation: simplex ρ per muscle (E={rho.get('E')}, τ={rho.get('tau')}, Tp={rho.get('Tp')})")
    return fig

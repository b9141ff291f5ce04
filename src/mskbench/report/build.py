"""Build a report: gather the data, draw the figures, write the files.

Output directory layout::

    OUT/index.html          the self-contained page (not with figures_only)
    OUT/figures/<slug>.png  every figure, 130 dpi
    OUT/figures/<slug>.svg  every figure, vector
    OUT/report.json         what was built: sections, their status, figures and missing-data notes

``report.json`` (``"generator": "mskbench report"``) also marks the directory as a report, so a
later build may rewrite it (:func:`check_out_dir`); any other non-empty directory is refused.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import numpy as np

from mskbench.catalog import FAMILIES, SUITE, task_ids
from mskbench.eval.summary import progress_text
from mskbench.report import data as D
from mskbench.report.html import FigureOut, Section, esc, page, table
from mskbench.report.table2 import leaderboard_table

MANIFEST = "report.json"
GENERATOR = "mskbench report"
FIGURES_DIR = "figures"


class OutDirError(ValueError):
    """The output directory cannot take a report."""


@dataclass
class ReportOptions:
    """What to build a report from (see ``mskbench report --help``)."""

    store: Path | None
    out: Path
    published: bool = False
    success_label: str = "paper"
    runs: Sequence[str | Path] = ()
    figures_only: bool = False
    mouse: Path | None = None
    videos: Path | None = None
    heatmap_policy: str | None = None
    heatmap_tasks: Sequence[str] | None = None
    heatmap_seed: int = 0
    emg_reference: Path | None = None
    command: str = ""


@dataclass
class ReportResult:
    """What :func:`build_report` wrote."""

    out: Path
    index: Path | None
    figures: list[Path] = field(default_factory=list)
    sections: list[Section] = field(default_factory=list)


def check_out_dir(out: Path) -> None:
    """Refuse an ``out`` that is a file, or a non-empty directory that is not an earlier report (no
    ``report.json`` written by ``mskbench report``)."""
    if out.exists() and not out.is_dir():
        raise OutDirError(f"{out} is a file; give a directory for the report")
    if out.is_dir() and any(out.iterdir()):
        try:
            manifest = json.loads((out / MANIFEST).read_text())
        except (OSError, ValueError):
            manifest = None
        if not isinstance(manifest, dict) or manifest.get("generator") != GENERATOR:
            raise OutDirError(f"{out} is not empty and holds no earlier report ({MANIFEST}); give a new or empty "
                              "directory (an earlier report's directory is rewritten)")


def _clear_previous(out: Path) -> None:
    """Remove what an earlier report wrote there (its page, manifest and figures), nothing else."""
    figures = out / FIGURES_DIR
    if figures.is_dir():
        for p in figures.iterdir():
            if p.is_file() and p.suffix in (".png", ".svg"):
                p.unlink()
    for name in ("index.html", MANIFEST):
        if (out / name).is_file():
            (out / name).unlink()


def _fmt(v: float | None, spec: str = ".2f") -> str:
    return "—" if v is None else format(v, spec)


Progress = Callable[[str, int, int], None]


class _Steps:
    def __init__(self, total: int, progress: Progress | None):
        self.total, self.done, self.progress = total, 0, progress

    def __call__(self, label: str) -> None:
        if self.progress is not None:
            self.progress(label, self.done, self.total)
        self.done += 1


SECTION_KEYS = ("leaderboard", "radar", "learning", "robustness", "emg", "smoothness", "recruitment", "heatmap",
                "mouse", "videos")


def build_report(options: ReportOptions, progress: Progress | None = None) -> ReportResult:
    """Gather, draw and write a report (see the module docstring for the files).

    ``progress(label, done, total)`` is called before each step. Raises :class:`OutDirError`,
    ``ValueError`` (unreadable inputs) and :class:`mskbench.eval.store.StoreError`; missing or
    partial data never raises: each section says what it lacks."""
    from mskbench.report.figures import report_style

    out = Path(options.out)
    check_out_dir(out)
    heat_tasks = list(options.heatmap_tasks or [])
    store_given = options.store is not None
    steps = _Steps(4 + (len(heat_tasks) if options.heatmap_policy else 0) + len(SECTION_KEYS) + 1, progress)

    steps("reading the results store")
    store: dict[str, Any] = {"methods": [], "tasks": [], "records": [], "summary": {}, "sweeps": {},
                             "leaderboard": {}, "local_methods": [], "leaderboard_notes": [], "task_counts": {},
                             "published": {}, "notes": [], "privileged": []}
    if store_given:
        store = D.gather_store(options.store, options.success_label, options.published)  # type: ignore[arg-type]
    else:
        store["notes"].append("no results store given: pass --store results.db")
        if options.published:
            store.update(D.leaderboard_data([], True))
    _add_episode_stats(store)
    steps("reading training runs")
    runs = D.gather_runs(options.runs)
    steps("reading the mouse evaluation")
    mouse = D.gather_mouse(options.mouse)
    steps("finding videos")
    videos = D.gather_videos(options.videos, out)
    if options.heatmap_policy and not heat_tasks:
        heat_tasks = [t for t in store["tasks"]]
    emg_ref = None
    if options.emg_reference is not None:
        from mskbench.metrics.emg import load_emg_reference

        emg_ref = load_emg_reference(options.emg_reference)
    heat = D.gather_heatmaps(options.heatmap_policy, heat_tasks, options.heatmap_seed, emg_ref,
                             on_task=lambda t: steps(f"rolling out {options.heatmap_policy} on {t}"))

    if out.is_dir():
        _clear_previous(out)
    figdir = out / FIGURES_DIR
    figdir.mkdir(parents=True, exist_ok=True)
    names = list(store["methods"]) + [m for m in store["leaderboard"] if m not in store["methods"]]
    names += [r["algo"] for r in runs["runs"]]
    from mskbench.report.figures import method_colors

    colors = method_colors(names)
    ctx = _Ctx(options, store, runs, mouse, videos, heat, colors, figdir)
    sections = []
    with report_style():
        for key in SECTION_KEYS:
            steps(f"drawing: {key}")
            sections.append(getattr(ctx, f"section_{key}")())
    steps("writing the report")
    written = sorted(figdir.glob("*.png")) + sorted(figdir.glob("*.svg"))
    index = None
    if not options.figures_only:
        index = out / "index.html"
        index.write_text(page("mskbench report", _meta_html(options, store, runs), sections,
                              _lead_html(options, store, runs, mouse)), encoding="utf-8")
    manifest = {
        "generator": GENERATOR,
        "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds"),
        "command": options.command,
        "store": None if options.store is None else str(options.store),
        "index": None if index is None else index.name,
        "sections": [{"key": s.key, "title": s.title, "status": s.status,
                      "figures": [f.slug for f in s.figures], "tables": len(s.tables), "missing": s.missing}
                     for s in sections],
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n", encoding="utf-8")
    return ReportResult(out, index, written, sections)


def _add_episode_stats(store: dict[str, Any]) -> None:
    """Per method and task (train environment): the SD of log jerk over episodes and the mean family
    activation mass (Eq. 35), beside summarize_eval's numbers."""
    for method, per_task in store["summary"].items():
        for task, s in per_task.items():
            rs = [r for r in store["records"]
                  if r["method"] == method and r["task"] == task and r["perturbation"] == "none"]
            smooth = [r["smoothness"] for r in rs if r["smoothness"] is not None]
            s["smoothness_sd"] = float(np.std(smooth)) if len(smooth) > 1 else None
            mass: dict[str, float] = defaultdict(float)
            with_rec = [r for r in rs if r.get("recruitment")]
            for r in with_rec:
                for fam, m in r["recruitment"].items():
                    mass[fam] += m / len(with_rec)
            s["recruitment_mass"] = dict(mass)


def _meta_html(options: ReportOptions, store: dict[str, Any], runs: dict[str, Any]) -> str:
    from mskbench._version import __version__

    parts = [f"mskbench {esc(__version__)}",
             f"built {esc(datetime.now(timezone.utc).strftime('%Y-%m-%d %H:%M UTC'))}"]
    if options.store is not None:
        parts.append(f"store <code>{esc(options.store)}</code>: {len(store['records'])} episodes, "
                     f"{len(store['methods'])} method(s), {len(store['tasks'])} task(s); success by the "
                     f"{'paper' if options.success_label == 'paper' else 'Table XII'} rule")
    if runs["runs"]:
        parts.append(f"{len(runs['runs'])} training run(s)")
    if options.command:
        parts.append(f"<code>{esc(options.command)}</code>")
    return " · ".join(parts)


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _lead_html(options: ReportOptions, store: dict[str, Any], runs: dict[str, Any], mouse: dict[str, Any]) -> str:
    """The page's first sentence: what was measured (each method's tasks and train-environment episodes,
    its sweeps, the training runs, the mouse evaluation) and whether the paper's methods are beside it."""
    from mskbench.eval.published import METHODS

    measured = []
    privileged = set(store.get("privileged", []))
    for method in store["methods"]:
        per_task = store["summary"].get(method, {})
        name = f"<strong>{esc(method)}</strong>{' †' if method in privileged else ''}"
        if per_task:
            tasks = D.task_order(per_task)
            suite = [t for t in tasks if t in SUITE]
            which = (f"{len(suite)} of the {len(SUITE)} tasks" if len(suite) < len(SUITE)
                     else f"all {len(SUITE)} tasks")
            if len(suite) != len(tasks):
                which += f" and {_count(len(tasks) - len(suite), 'other task')}"
            if len(tasks) <= 4:
                which += f" ({', '.join(esc(t) for t in tasks)})"
            episodes = sorted({v["episodes"] for v in per_task.values()})
            each = (f"{_count(episodes[0], 'episode')} each" if len(episodes) == 1
                    else f"{episodes[0]}–{episodes[-1]} episodes each")
            text = f"{name} on {which}, {each}"
        else:
            text = name
        swept = store["sweeps"].get(method)
        if swept:
            text += f"{',' if per_task else ''} robustness sweeps of {_count(len(swept), 'task')}"
        measured.append(text)
    parts = []
    if measured:
        parts.append("Measured: " + "; ".join(measured) + ".")
    if runs["runs"]:
        parts.append(f"{_count(len(runs['runs']), 'training run')}.")
    if mouse.get("mouse") is not None:
        parts.append("The mouse forelimb imitation evaluation.")
    if store["published"]:
        paper = [m for m in METHODS if f"{m} (paper)" in store["leaderboard"]]
        parts.append(f"Beside them: the paper's {', '.join(paper[:-1])} and {paper[-1]} (Table II; Tables "
                     "XIII–XV per task)." if len(paper) > 1 else f"Beside them: the paper's {', '.join(paper)}.")
    elif measured:
        parts.append("The paper's methods are not drawn: build the report with --published to add them.")
    if privileged & set(store["methods"]):
        parts.append("† privileged: reads the simulator; not an observation-only policy.")
    return " ".join(parts)


class _Ctx:
    """Draws the sections from the gathered data (one ``section_<key>`` method per section)."""

    def __init__(self, options, store, runs, mouse, videos, heat, colors, figdir: Path):
        self.o, self.store, self.runs, self.mouse = options, store, runs, mouse
        self.videos, self.heat, self.colors, self.figdir = videos, heat, colors, figdir

    def _fig(self, slug: str, title: str, caption: str, fig) -> FigureOut:
        from mskbench.report.figures import save

        svg = save(fig, self.figdir / slug)
        return FigureOut(slug, title, caption, svg)

    def _store_missing(self) -> list[str]:
        return list(self.store["notes"])

    # -- Table II -----------------------------------------------------------------------------------
    def section_leaderboard(self) -> Section:
        s = Section("leaderboard", "Leaderboard", "Table II",
                    "Success rate per family and over all tasks (train environment; the paper's rule), the share "
                    "of successful episodes that then fell (success first held before the episode's last step, "
                    "and a termination condition then ended it), robustness per perturbation type (normalised "
                    "area under success vs scale, 0–100) and coverage (tasks with SR > 0), per method. A value "
                    "over fewer tasks than the suite has says over how many, \"(2 of 22)\"; the best value of "
                    "each row, among the methods over the most tasks, in bold. Below: the per-task numbers "
                    "behind it.")
        s.missing += self._store_missing() + self.store["leaderboard_notes"]
        board = self.store["leaderboard"]
        if board:
            s.tables.append(leaderboard_table(board, self.store["task_counts"], self.store["privileged"]))
        elif not s.missing:
            s.missing.append("nothing to rank: the store has no episodes of suite tasks")
        rows, walking = [], task_ids(walking=True)
        for method, per_task in self.store["summary"].items():
            for task in D.task_order(per_task):
                v = per_task[task]
                emg = v["emg"]
                fell = v["fell_after_success"]
                rows.append((task, method, v["episodes"], f"{v['success_rate']:.1f}",
                             "—" if fell["percent"] is None else f"{fell['percent']:.0f} ({fell['fell']}/"
                                                                 f"{fell['successes']})",
                             f"{v['return_mean']:.2f} ± {v['return_std']:.2f}", f"{v['length_mean']:.1f}",
                             _fmt(v["activation_cost"], ".4f"), _fmt(v["smoothness"], ".2f"),
                             f"{emg['mean_r']:.3f}" if "mean_r" in emg else "—",
                             progress_text(v["progress"]) if task in walking else "",
                             ", ".join(f"{k} {n}" for k, n in v["terminations"].items())))
        if rows:
            s.tables.append(table(["task", "method", "episodes", "SR %", "then fell %", "return", "length",
                                   "act. cost", "log10 jerk", "EMG r", "steps · dist. · fwd speed", "terminations"],
                                  rows, cls="per-task",
                                  caption="Per task (train environment); then fell %: of the successful episodes, "
                                          "those that succeeded before their last step and were then ended by a "
                                          "termination condition (—: no success, or stored before it was "
                                          "recorded); steps · dist. · fwd speed (walking tasks): medians over the "
                                          "episodes of the foot touchdowns, the pelvis's horizontal displacement "
                                          "and its forward speed along the start heading"))
        return s

    # -- Fig. 1b ------------------------------------------------------------------------------------
    def section_radar(self) -> Section:
        s = Section("radar", "Method profiles per family", "Fig. 1b",
                    "Radar charts per task family: every axis is scaled to [0, 1] with 1 (the outer ring) the "
                    "better end, as listed below; each value averages the family's tasks that have data. The "
                    "paper's radar has eight axes it does not name one by one; these are the eight of this "
                    "report. Local methods are solid and filled; the paper's methods (--published, Tables "
                    "XIII–XV) are dashed and have no EMG axis. A missing value leaves a gap in the polygon.")
        values = D.radar_values(self.store)
        if not any(values.values()):
            s.missing += self._store_missing() or ["no method has episodes of a suite task"]
            return s
        norm = "".join(f"<dt>{esc(a)}</dt><dd>{esc(b)}</dd>" for a, b in D.RADAR_NORMALISATION)
        s.html_extra = f'<dl class="norm" id="radar-normalisation">{norm}</dl>'
        for fam in FAMILIES:
            series = values[fam]
            if not series:
                s.missing.append(f"{fam}: no method has episodes of a task of this family "
                                 f"({', '.join(t for t, f in SUITE.items() if f == fam)})")
                continue
            from mskbench.report.figures import radar_figure

            missing_axes = {label.replace("\n", " ") for key, label in D.RADAR_AXES
                            if all(v["axes"].get(key) is None for v in series.values())}
            caption = (f"{len(series)} series. "
                       + (f"No data on: {', '.join(sorted(missing_axes))}." if missing_axes else ""))
            s.figures.append(self._fig(f"radar-{fam}", f"{fam.capitalize()} profile", caption,
                                       radar_figure(fam, series, self.colors)))
            rows = []
            for name, v in series.items():
                r = v["raw"]
                rows.append((name, v["tasks"], _fmt(r["success_rate"], ".1f"),
                             *[_fmt(r.get(f"robustness_{k}"), ".1f") for k in D.SWEEP_TYPES],
                             _fmt(r["activation_cost"], ".4f"), _fmt(r["log10_jerk"], ".2f"), _fmt(r["emg_r"], ".3f")))
            s.tables.append(table(["series", "tasks", "SR %", "robust. action", "robust. obs.", "robust. dyn.",
                                   "act. cost", "log10 jerk", "EMG r"], rows,
                                  caption=f"{fam.capitalize()}: values before scaling"))
        if not self.o.published:
            s.missing.append("the paper's methods are not drawn: pass --published to add them")
        if not any("mean_r" in v["emg"] for per in self.store["summary"].values() for v in per.values()):
            s.missing.append("the EMG axis is empty: no stored episode has an EMG similarity (gait tasks evaluated "
                             "with 'mskbench eval --emg-reference CSV')")
        return s

    # -- Fig. 2 -------------------------------------------------------------------------------------
    def section_learning(self) -> Section:
        s = Section("learning", "Learning curves", "Fig. 2",
                    "Mean deterministic evaluation return (or, for the mouse imitation, the track replay error) "
                    "against environment steps, from each run's eval_log.jsonl; a line per run, coloured by "
                    "algorithm; the star marks the peak (App. A-B5, Eqs. 11–12: the earliest evaluated step with "
                    "the best value). Runs of one task and algorithm evaluated at the same steps are shaded "
                    "between their minimum and maximum.")
        s.missing += self.runs["notes"]
        runs = self.runs["runs"]
        if runs:
            from mskbench.report.figures import learning_figure

            s.figures.append(self._fig("learning-curves", "Learning curves",
                                       f"{len(runs)} run(s) of {len({r['task'] for r in runs})} task(s).",
                                       learning_figure(runs, self.colors)))
            s.tables.append(table(["run", "task", "algorithm", "metric", "steps trained", "evaluations",
                                   "peak step (T_max)", "peak value"],
                                  [(r["name"], r["task"], r["algo"], r["metric"], r["steps_done"], len(r["steps"]),
                                    f"{r['peak_step']:.0f}", f"{r['peak_value']:.6g}") for r in runs],
                                  caption="Runs"))
        return s

    # -- Figs. 3, 5 ---------------------------------------------------------------------------------
    def section_robustness(self) -> Section:
        s = Section("robustness", "Robustness curves", "Figs. 3, 5; App. A-B2",
                    "Success rate against perturbation scale per task and perturbation type (action noise, "
                    "observation noise, muscle-gain dynamics), a line per method; the legend gives the "
                    "normalised area under the curve (AUC, 0–100), the task's robustness score. With "
                    "--published the paper's sweeps of the same task are dashed.")
        sweeps = self.store["sweeps"]
        tasks = D.task_order({t for per in sweeps.values() for t in per})
        if not tasks:
            s.missing.append("no robustness sweep in the store: run 'mskbench sweep --task T --policy P "
                             f"--store {self.o.store or 'results.db'}'")
            return s
        from mskbench.report.figures import robustness_figure

        paper_rows = self.store["published"].get("tasks", [])
        rows = []
        for task in tasks:
            per_method = {m: per[task] for m, per in sweeps.items() if task in per}
            paper = {f"{r.method} (paper)": {k: list(r.sweep(k)) for k in D.SWEEP_TYPES if k in
                                             {kk for pm in per_method.values() for kk in pm}}
                     for r in paper_rows if r.task == task}
            paper = {m: v for m, v in paper.items() if m in self.colors}
            kinds = [k for k in D.SWEEP_TYPES if any(k in pm for pm in per_method.values())]
            s.figures.append(self._fig(f"robustness-{task}", f"{task}: success vs perturbation scale",
                                       f"Types: {', '.join(kinds)}.", robustness_figure(task, per_method, paper,
                                                                                         self.colors)))
            for m, pm in per_method.items():
                for k in D.SWEEP_TYPES:
                    if k in pm:
                        e = pm[k]
                        rows.append((task, m, k, ", ".join(f"{x:g}" for x in e["scales"]),
                                     ", ".join(f"{x:.0f}" for x in e["success"]), min(e["episodes"]),
                                     _fmt(e["auc"], ".1f")))
                        if e["auc"] is None:
                            s.missing.append(f"{m} on {task}, {k}: one scale only, no AUC")
        s.tables.append(table(["task", "method", "type", "scales", "success %", "episodes per scale", "AUC"], rows,
                              caption="Sweeps"))
        return s

    # -- Fig. 6 -------------------------------------------------------------------------------------
    def section_emg(self) -> Section:
        s = Section("emg", "EMG-envelope similarity", "Fig. 6; App. A-H",
                    "For gait tasks (Walk, Run, Stairs): the phase-optimised Pearson r between each muscle's "
                    "simulated activation envelope (cycle-averaged, min-max normalised) and the human EMG "
                    "envelope, after the best cyclic shift (Eqs. 13–14, 29–32). Per-muscle r comes from the "
                    "store; the envelopes themselves from a rollout made for this report.")
        from mskbench.report.figures import emg_envelope_figure, emg_r_figure

        gait = [t for t in self.store["tasks"] if t in task_ids(gait=True)]
        for task in gait:
            per_method = {m: per[task]["emg"] for m, per in self.store["summary"].items()
                          if task in per and "mean_r" in per[task]["emg"]}
            if per_method:
                s.figures.append(self._fig(f"emg-r-{task}", f"{task}: per-muscle EMG r",
                                           "Bars: r per reference channel, mean over episodes; dotted: mean r.",
                                           emg_r_figure(task, per_method, self.colors)))
            for m, per in self.store["summary"].items():
                if task in per and "absent" in per[task]["emg"]:
                    reason = per[task]["emg"]["absent"]
                    hint = (f"evaluate with 'mskbench eval --task {task} --emg-reference walking_treadmill_santuz.csv "
                            "--method NEW_NAME' (stored units are not rerun)" if "reference" in reason else
                            "EMG needs episodes with at least one complete gait cycle (two right heel strikes)")
                    s.missing.append(f"{task} ({m}): no EMG r in the store: {reason}; {hint}")
        if not gait:
            s.missing.append("the store has no episodes of a gait task (Walk, Run, Stairs), where EMG is compared")
        tried = False
        for task, roll in self.heat["heatmaps"].items():
            emg = roll.get("emg")
            if emg is None:
                continue
            tried = True
            if "absent" in emg:
                s.missing.append(f"{task} rollout ({roll['policy']}, seed {roll['seed']}): no envelopes: "
                                 f"{emg['absent']}")
                continue
            s.figures.append(self._fig(f"emg-envelopes-{task}", f"{task}: EMG envelopes",
                                       "Black: human reference; red: simulated activation envelope after the optimal "
                                       "cyclic shift; both min-max normalised.", emg_envelope_figure(roll)))
        if not tried:
            s.missing.append("no envelope overlays: the results store keeps per-muscle r only (not the envelopes nor "
                             "the optimal shift); to draw them, roll out a gait task for this report: "
                             "--heatmap-policy POLICY --heatmap-tasks Walk --emg-reference "
                             "walking_treadmill_santuz.csv (a 101-point envelope CSV)")
        return s

    # -- Fig. 7 -------------------------------------------------------------------------------------
    def section_smoothness(self) -> Section:
        s = Section("smoothness", "Joint smoothness", "Fig. 7; App. A-B4",
                    "log10 of the mean squared finite-difference angular jerk of the non-root joints (Eq. 10, "
                    "rad²/s⁶, control-step Δt), mean over the train-environment episodes of each task, error bars "
                    "one SD over episodes; lower is smoother. It characterises motion fluctuation, not success. "
                    "With --published the paper's values (Tables XIII–XV) of the same tasks are hatched.")
        summary = self.store["summary"]
        if not any(v.get("smoothness") is not None for per in summary.values() for v in per.values()):
            s.missing += self._store_missing() or ["no episode in the store has a smoothness value (episodes "
                                                   "shorter than 3 steps have none)"]
            return s
        from mskbench.report.figures import jerk_figure

        tasks = {t for per in summary.values() for t in per}
        paper: dict[str, dict[str, float]] = defaultdict(dict)
        for r in self.store["published"].get("tasks", []):
            if r.task in tasks and f"{r.method} (paper)" in self.colors:
                paper[f"{r.method} (paper)"][r.task] = r.log10_smooth
        s.figures.append(self._fig("smoothness", "Joint smoothness per task",
                                   f"{len(tasks)} task(s), {len(summary)} method(s).",
                                   jerk_figure(summary, dict(paper), self.colors)))
        return s

    # -- Figs. 8-9 ----------------------------------------------------------------------------------
    def section_recruitment(self) -> Section:
        s = Section("recruitment", "Muscle-family recruitment", "Figs. 8–9; App. A-I",
                    "Activation mass per muscle family (Table XVIII): the sum of the family's time-averaged "
                    "activations (Eq. 35), mean over a task's train-environment episodes, a bar per method. It is "
                    "not an instantaneous activation and not agreement with human recordings.")
        from mskbench.report.figures import recruitment_figure

        for task in self.store["tasks"]:
            per_method = {m: per[task]["recruitment_mass"] for m, per in self.store["summary"].items()
                          if task in per and per[task].get("recruitment_mass")}
            if not per_method:
                continue
            total = {m: sum(v for k, v in masses.items()) for m, masses in per_method.items()}
            caption = "Total mass: " + ", ".join(f"{m} {t:.3g}" for m, t in total.items()) + "."
            if all(t == 0 for t in total.values()):
                caption += " Every muscle stayed inactive (e.g. the passive policy)."
            s.figures.append(self._fig(f"recruitment-{task}", f"{task}: recruitment", caption,
                                       recruitment_figure(task, per_method, self.colors)))
        if not s.figures:
            s.missing += self._store_missing() or ["no stored episode has recruitment masses"]
        return s

    # -- Figs. 14-15 --------------------------------------------------------------------------------
    def section_heatmap(self) -> Section:
        s = Section("heatmap", "Activation heatmaps", "Figs. 14–15",
                    "Activation of every muscle (rows, grouped by Table XVIII family) over one episode (columns, "
                    "seconds), from a seeded rollout made for this report with --heatmap-policy (the train "
                    "environment, as the protocol resets seed S).")
        s.missing += self.heat["notes"]
        from mskbench.report.figures import heatmap_figure

        for task, roll in self.heat["heatmaps"].items():
            acts = np.asarray(roll["activations"])
            peak = float(acts.max()) if acts.size else 0.0
            s.figures.append(self._fig(f"heatmap-{task}", f"{task}: activations",
                                       f"{acts.shape[1] if acts.ndim == 2 else 0} muscles × {acts.shape[0]} control "
                                       f"steps of {roll['dt'] * 1000:.0f} ms; peak activation {peak:.2f}.",
                                       heatmap_figure(roll)))
        return s

    # -- the mouse evaluation -----------------------------------------------------------------------
    def section_mouse(self) -> Section:
        s = Section("mouse", "Mouse forelimb imitation", "App. A-G",
                    "The output of 'mskbench mouse eval --json': track replay error per clip (mm, the simulated "
                    "keypoints against the reference replay) and the simplex cross-mapping skill ρ of each muscle's "
                    "activation from the joint angles.")
        s.missing += self.mouse["notes"]
        mouse = self.mouse["mouse"]
        if mouse is None:
            return s
        from mskbench.report.figures import mouse_error_figure, mouse_rho_figure

        o = mouse["overall"]
        rows = [(k, f"{v:.4g}" if isinstance(v, float) else v) for k, v in o.items() if not isinstance(v, dict)]
        emg = o.get("emg_fit_mae", {})
        rows.append(("emg_fit_mae", f"{emg['mean']:.4g}" if "mean" in emg else f"absent: {emg.get('absent', '?')}"))
        s.tables.append(table(["metric", "value"], rows, caption=f"Overall ({self.mouse['path']})"))
        if mouse["per_clip"]:
            s.figures.append(self._fig("mouse-track-error", "Track replay error per clip",
                                       "Dashed: mean over clips; hatched: clips whose rollout went unstable.",
                                       mouse_error_figure(mouse)))
        if o.get("simplex_rho", {}).get("per_muscle"):
            s.figures.append(self._fig("mouse-simplex-rho", "Simplex ρ per muscle", "Mean over clips.",
                                       mouse_rho_figure(mouse)))
        return s

    # -- videos -------------------------------------------------------------------------------------
    def section_videos(self) -> Section:
        s = Section("videos", "Rollout videos", "mskbench render",
                    "Links to the videos found under --videos (made with 'mskbench render'); paths are relative "
                    "to this page, so keep the folders where they are.")
        s.missing += self.videos["notes"]
        items = []
        for v in self.videos["videos"]:
            n = v["bytes"]
            size = f"{n / 1e6:.1f} MB" if n >= 1e5 else f"{n / 1e3:.0f} kB" if n >= 1e3 else f"{n} bytes"
            items.append(f'<li><a class="video" href="{esc(v["href"])}">{esc(v["name"])}</a> '
                         f'({v["kind"]}, {size})</li>')
        if items:
            s.html_extra = '<ul class="videos">' + "".join(items) + "</ul>"
        return s

"""``mskbench report``: the static HTML report of a results store and training runs."""

from __future__ import annotations

import os
from pathlib import Path

import click

from mskbench.cli.common import DEFAULT_STORE, make_console, progress_bar, task_list


@click.command("report")
@click.option("--store", "store_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help=f"Results store to report [default: $MSKBENCH_STORE or {DEFAULT_STORE}; without one that "
                   "exists, a report of --runs / --mouse alone].")
@click.option("--out", "out_dir", type=click.Path(path_type=Path), default=Path("report"), show_default=True,
              help="Report directory: index.html, figures/*.png|svg, report.json. It must be new, empty or an "
                   "earlier report (which is rewritten); any other directory is refused.")
@click.option("--published", is_flag=True,
              help="Add the paper's numbers (Table II beside the local columns; Tables XIII-XV in the radar, "
                   "robustness and smoothness figures).")
@click.option("--runs", "runs", multiple=True, metavar="DIR",
              help="Training run directory (from 'mskbench train' or 'mskbench mouse train'), or a folder searched "
                   "for them, for the learning curves; repeatable, and any further RUN_DIR arguments count too, "
                   "so '--runs runs/*' works.")
@click.argument("more_runs", nargs=-1, type=click.Path(path_type=Path), metavar="[RUN_DIR]...")
@click.option("--success", "success_label", type=click.Choice(["paper", "table-xii"]), default="paper",
              show_default=True, help="Success label read from the store (as 'mskbench leaderboard --success').")
@click.option("--figures-only", is_flag=True, help="Write the figures (PNG and SVG) and report.json, no HTML page.")
@click.option("--heatmap-policy", default=None, metavar="POLICY",
              help="Roll out one seeded episode per --heatmap-tasks task with POLICY (as 'mskbench eval --policy') "
                   "for the activation heatmaps (and, with --emg-reference, the EMG envelope overlays).")
@click.option("--heatmap-tasks", default=None, metavar="T1,T2",
              help="Tasks of the heatmap rollouts [default: the store's tasks].")
@click.option("--heatmap-seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seed of the heatmap rollouts (the protocol's episode seed).")
@click.option("--emg-reference", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="101-point EMG envelope CSV: the heatmap rollouts of gait tasks (Walk, Run, Stairs) are compared "
                   "with it and their envelopes drawn.")
@click.option("--mouse", "mouse_path", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="The output of 'mskbench mouse eval --policy RUN --json > FILE'.")
@click.option("--videos", "videos_dir", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
              help="Folder searched for *.mp4 / *.gif (from 'mskbench render') to link from the page.")
def report_cmd(store_path, out_dir, published, runs, more_runs, success_label, figures_only, heatmap_policy,
               heatmap_tasks, heatmap_seed, emg_reference, mouse_path, videos_dir):
    """Write a static HTML report (no server, no network) of a results store and training runs.

    Sections after the paper's views: the Table II leaderboard, radar charts per family (Fig. 1b),
    learning curves with peak efficiency (Fig. 2), robustness curves with their AUC (Figs. 3, 5),
    EMG similarity (Fig. 6), log-jerk bars (Fig. 7), muscle-family recruitment (Figs. 8-9),
    activation heatmaps on request (Figs. 14-15), the mouse evaluation and links to rollout videos.
    Every figure is also written as PNG and SVG under OUT/figures. The page opens with what was
    measured; the sections without data are listed once, at its end, each with the command that
    provides it. Needs matplotlib: pip install 'mskbench[report]'.
    """
    try:
        import matplotlib  # noqa: F401  (only checked here; the report modules import it)
    except ImportError:
        raise click.ClickException("the report needs matplotlib: pip install 'mskbench[report]'") from None
    from mskbench.eval.store import StoreError
    from mskbench.report.build import MANIFEST, OutDirError, ReportOptions, build_report, check_out_dir

    all_runs = [*runs, *map(str, more_runs)]
    if store_path is None:
        default = Path(os.environ.get("MSKBENCH_STORE", DEFAULT_STORE))
        if default.exists():
            store_path = default
        elif not (all_runs or mouse_path):
            raise click.UsageError(f"no results store: {default} does not exist; pass --store results.db (from "
                                   "'mskbench eval' or 'mskbench sweep'), or --runs / --mouse for a report without one")
    elif not store_path.exists():
        raise click.BadParameter(f"results store {store_path} does not exist; run 'mskbench eval --store "
                                 f"{store_path} ...' first", param_hint="--store")
    try:
        check_out_dir(out_dir)
    except OutDirError as exc:
        raise click.BadParameter(str(exc), param_hint="--out") from None
    tasks = None
    if heatmap_tasks is not None:
        if heatmap_policy is None:
            raise click.BadParameter("needs --heatmap-policy POLICY", param_hint="--heatmap-tasks")
        try:
            tasks = task_list(heatmap_tasks)
        except click.BadParameter as exc:
            raise click.BadParameter(exc.message, param_hint="--heatmap-tasks") from None
    if emg_reference is not None:
        if heatmap_policy is None:
            raise click.BadParameter("the EMG envelopes come from the heatmap rollouts: add --heatmap-policy POLICY "
                                     "--heatmap-tasks Walk", param_hint="--emg-reference")
        from mskbench.metrics.emg import load_emg_reference

        try:
            load_emg_reference(emg_reference)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--emg-reference") from None
    if heatmap_policy is not None:
        from mskbench.eval.protocol import check_policy_spec

        try:
            check_policy_spec(heatmap_policy)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--heatmap-policy") from None
    options = ReportOptions(store=store_path, out=out_dir, published=published, success_label=success_label,
                            runs=all_runs, figures_only=figures_only, mouse=mouse_path, videos=videos_dir,
                            heatmap_policy=heatmap_policy, heatmap_tasks=tasks, heatmap_seed=heatmap_seed,
                            emg_reference=emg_reference,
                            command=_report_command(store_path, out_dir, published, all_runs, success_label,
                                                    figures_only, heatmap_policy, tasks))
    console = make_console()
    with progress_bar(console) as progress:
        job = progress.add_task("building the report", total=None)

        def step(label: str, done: int, total: int) -> None:
            progress.update(job, description=label, completed=done, total=total)
            if not console.is_terminal:  # no bar: a plain line per step, on stderr
                click.echo(f"[{done + 1}/{total}] {label}", err=True)

        try:
            result = build_report(options, progress=step)
        except OutDirError as exc:
            raise click.BadParameter(str(exc), param_hint="--out") from None
        except StoreError as exc:
            raise click.ClickException(str(exc)) from None
        except ValueError as exc:  # an unreadable --mouse file
            raise click.BadParameter(str(exc), param_hint="--mouse") from None
    empty = [s.key for s in result.sections if s.status == "missing"]
    figures = len([p for p in result.figures if p.suffix == ".png"])
    click.echo(f"wrote {figures} figure(s) as PNG and SVG to {out_dir / 'figures'}")
    if empty:
        where = ("the page lists them at its end, 'Not in this report', each with what it needs"
                 if result.index is not None else f"{MANIFEST} says what each needs")
        click.echo(f"{len(empty)} of {len(result.sections)} sections have no data ({', '.join(empty)}); {where}")
    if result.index is not None:
        click.echo(f"open {result.index}   (in a browser: {result.index.resolve().as_uri()})")


def _report_command(store, out, published, runs, success, figures_only, policy, tasks) -> str:
    """The ``mskbench report`` command line of these settings, shown on the page."""
    import shlex

    parts = ["mskbench", "report"]
    if store is not None:
        parts += ["--store", str(store)]
    parts += ["--out", str(out)]
    parts += ["--published"] if published else []
    for r in runs:
        parts += ["--runs", str(r)]
    parts += ["--success", success] if success != "paper" else []
    parts += ["--figures-only"] if figures_only else []
    if policy is not None:
        parts += ["--heatmap-policy", policy] + (["--heatmap-tasks", ",".join(tasks)] if tasks else [])
    return " ".join(shlex.quote(p) for p in parts)

"""``mskbench eval``, ``sweep``, ``calibrate`` and ``leaderboard``: the evaluation protocol and its tables."""

from __future__ import annotations

import json
import os
from pathlib import Path

import click
from rich.table import Table

from mskbench.cli.common import (DEFAULT_STORE, fmt, log, make_console, print_table, progress_bar, store_option,
                                 task_lines, task_list, writable_file)


def _protocol_options(f):
    from mskbench.eval.backends import BACKENDS
    from mskbench.eval.executors import EXECUTORS
    from mskbench.policies import BUILTIN_POLICIES, PRIVILEGED_POLICIES

    opts = [
        click.option("--task", default="all", show_default=True, help="Task id, comma-separated ids or 'all'."),
        click.option("--family", type=click.Choice(["stabilization", "locomotion", "interaction"]), default=None,
                     help="Only the tasks of one family."),
        click.option("--policy", "policy_spec", default="zero", show_default=True,
                     help=f"Built-in ({', '.join(BUILTIN_POLICIES)}; † {', '.join(PRIVILEGED_POLICIES)} read the "
                          "simulator: the expert serves some tasks, each cheat probe the tasks it aims at), a "
                          "checkpoint of any trainer (.npz or run directory) or 'package.module:factory'."),
        click.option("--method", default=None, help="Method name in the store (default: the policy spec)."),
        click.option("--episodes", type=click.IntRange(min=1), default=50, show_default=True),
        click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
                     help="Episode i uses seed+i."),
        click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
                     help="Worker processes (local) or CPUs for a local Ray instance."),
        click.option("--executor", type=click.Choice(EXECUTORS), default="local", show_default=True),
        click.option("--address", default=None, help="Ray cluster address (with --executor ray)."),
        click.option("--backend", type=click.Choice(BACKENDS), default="cpu", show_default=True,
                     help="cpu: episodes on the MuJoCo C env via --executor (any policy); jax: episodes and "
                          "perturbation scales batched on the JAX env (built-ins and checkpoints; "
                          "--executor, --workers and --address do not apply)."),
        click.option("--impl", type=click.Choice(["warp", "jax", "cpu"]), default="warp", show_default=True,
                     help="Physics of --backend jax: warp (MuJoCo Warp, NVIDIA GPU), jax (MJX) or cpu "
                          "(MuJoCo C behind the JAX interface)."),
        click.option("--batch-size", type=click.IntRange(min=1), default=1024, show_default=True,
                     help="Worlds per batch with --backend jax."),
        click.option("--devices", type=click.IntRange(min=1), default=None,
                     help="--backend jax: devices each batch's worlds are split over, the first N JAX sees "
                          "(default: all); the batch is padded to a multiple of N."),
        store_option,
    ]
    for opt in reversed(opts):
        f = opt(f)
    return f


def _select_tasks(task: str, family: str | None) -> list[str]:
    from mskbench.tasks import task_names

    if family is not None:
        if task.lower() != "all":
            raise click.UsageError("give either --task or --family, not both")
        names = task_names(family)
        if not names:
            raise click.UsageError(f"no {family} task is implemented yet")
        return names
    try:
        names = task_list(task)
    except click.BadParameter as exc:
        raise click.BadParameter(exc.message, param_hint="--task") from None
    from mskbench.eval.protocol import check_protocol_tasks

    try:
        return check_protocol_tasks(names)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--task") from None


def _run_protocol(units, policy_spec: str, store_path: Path, executor: str, workers: int,
                  address: str | None, emg_reference: str | None = None, backend: str = "cpu",
                  impl: str = "warp", batch_size: int = 1024, devices: int | None = None) -> dict:
    from collections import Counter

    from mskbench.eval.backends import check_backend, check_backend_policy, check_devices, run_on_backend, unit_records
    from mskbench.eval.executors import JobSpec
    from mskbench.eval.store import ResultsStore, StoreError

    # Everything the arguments can get wrong is checked before the store is opened (or created).
    try:
        check_backend_policy(policy_spec, backend, sorted({u.task for u in units}))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--policy") from None
    try:
        check_devices(backend, devices)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--devices") from None
    try:
        check_backend(backend, executor)
        store = ResultsStore(store_path)
    except (RuntimeError, StoreError) as exc:  # no Ray; a file that is not a results store
        raise click.ClickException(str(exc)) from None
    console = make_console()
    with store, progress_bar(console) as progress:
        todo = store.missing(units)
        job = progress.add_task(f"{len(todo)} episodes to run ({len(units) - len(todo)} stored)", total=len(todo))
        finished = task_lines(console, Counter(u.task for u in todo))

        def on_record(record: dict) -> None:
            progress.advance(job)
            finished(record["task"], record["episode_return"])

        try:
            counts = run_on_backend(store, units, JobSpec(policy_spec, emg_reference), backend=backend,
                                    executor=executor, workers=workers, address=address, impl=impl,
                                    batch_size=batch_size, devices=devices, on_record=on_record)
        except (RuntimeError, MemoryError) as exc:  # no JAX / MJX / Warp, or a batch too large
            if backend != "jax":
                raise
            raise click.ClickException(str(exc)) from None
        records = unit_records(store, units)
    log.info("units: %s", counts)
    return {"counts": counts, "records": records}


@click.command("eval")
@_protocol_options
@click.option("--emg-reference", type=click.Path(exists=True, dir_okay=False), default=None,
              help="101-point EMG envelope CSV (gait_cycle_pct + one column per muscle) for gait tasks.")
@click.option("--json", "as_json", is_flag=True, help="Print the per-task summary as JSON.")
def eval_cmd(task, family, policy_spec, method, episodes, seed, workers, executor, address, backend, impl,
             batch_size, devices, store_path, emg_reference, as_json):
    """Evaluate a policy with the shared protocol (train environment, Table XII success).

    Every episode record goes into the results store; units already stored are
    not run again.
    """
    from mskbench.catalog import task_ids
    from mskbench.eval.protocol import eval_units
    from mskbench.eval.summary import progress_text, summarize_eval

    if emg_reference is not None:
        from mskbench.metrics.emg import load_emg_reference

        try:
            load_emg_reference(emg_reference)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--emg-reference") from None
    names = _select_tasks(task, family)
    units = eval_units(method or policy_spec, names, seed, episodes)
    out = _run_protocol(units, policy_spec, store_path, executor, workers, address, emg_reference,
                        backend=backend, impl=impl, batch_size=batch_size, devices=devices)
    if emg_reference is not None:
        stale = sum(1 for r in out["records"] if (r.get("emg") or {}).get("absent") == "no EMG reference given")
        if stale:  # units are written once: earlier records keep what they were written with
            click.echo(f"note: {stale} of these episodes were stored earlier without an EMG reference and were "
                       "not rerun; use a new --store or --method to compute EMG for them", err=True)
    summary = summarize_eval(out["records"])
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    table = Table(title=f"{method or policy_spec}: {episodes} episodes per task, seeds {seed}..{seed + episodes - 1}")
    walking = [name for name in summary if name in task_ids(walking=True)]
    columns = ["task", "SR %", "then fell %", "return", "length", "act. cost", "log jerk", "EMG r", "terminations"]
    if walking:
        columns.insert(-1, "steps · dist. · fwd speed")
    for col in columns:
        table.add_column(col, justify="left" if col in ("task", "terminations") else "right")
    absent: dict[str, list[str]] = {}  # why EMG r is absent -> the tasks it is absent from, said once below
    for name, s in summary.items():
        emg = s["emg"]
        if "mean_r" not in emg:
            absent.setdefault(emg["absent"], []).append(name)
        fell = s["fell_after_success"]
        fell_txt = "—" if fell["percent"] is None else f"{fell['percent']:.0f} ({fell['fell']}/{fell['successes']})"
        cells = [name, f"{s['success_rate']:.1f}", fell_txt, f"{s['return_mean']:.2f}", f"{s['length_mean']:.1f}",
                 fmt(s["activation_cost"], ".4f"), fmt(s["smoothness"], ".2f"),
                 f"{emg['mean_r']:.3f}" if "mean_r" in emg else "—",
                 ", ".join(f"{k} {v}" for k, v in s["terminations"].items())]
        if walking:
            cells.insert(-1, progress_text(s["progress"]) if name in walking else "")
        table.add_row(*cells)
    print_table(table)
    click.echo("then fell %: of the successful episodes, those that succeeded before their last step and then "
               "ended by a termination condition (— : no success, or stored before this was recorded)")
    if walking:
        click.echo("steps · dist. · fwd speed (walking tasks): medians over the episodes of the foot touchdowns, the "
                   "pelvis's horizontal displacement and its forward speed along the start heading (a fall "
                   "moves the pelvis too; — : stored before this was recorded)")
    for reason, tasks in absent.items():
        where = f"all {len(tasks)} tasks" if len(tasks) == len(summary) and len(tasks) > 1 else ", ".join(tasks)
        click.echo(f"EMG r absent ({where}): {reason}")
    click.echo(f"records in {store_path}")


@click.command("sweep")
@_protocol_options
@click.option("--types", default="action,observation,dynamics", show_default=True,
              help="Comma-separated perturbation types.")
@click.option("--json", "as_json", is_flag=True, help="Print robustness scores as JSON.")
def sweep_cmd(task, family, policy_spec, method, episodes, seed, workers, executor, address, backend, impl,
              batch_size, devices, store_path, types, as_json):
    """Robustness sweeps: success vs action / observation / dynamics perturbation scale.

    Scores each task and type by the normalised area under success vs scale
    and averages equally over tasks and types. A killed sweep resumes where it
    stopped when run again with the same arguments.
    """
    from mskbench.eval.protocol import check_sweep_types, sweep_units
    from mskbench.eval.summary import summarize_sweep

    try:
        kinds = check_sweep_types(t.strip() for t in types.split(",") if t.strip())
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--types") from None
    names = _select_tasks(task, family)
    units = sweep_units(method or policy_spec, names, seed, episodes, kinds)
    out = _run_protocol(units, policy_spec, store_path, executor, workers, address, backend=backend, impl=impl,
                        batch_size=batch_size, devices=devices)
    summary = summarize_sweep(out["records"])
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    table = Table(title=f"robustness of {method or policy_spec} (area under success % vs scale, 0–100)")
    table.add_column("task")
    for kind in kinds:
        table.add_column(kind, justify="right")
    for name in names:
        table.add_row(name, *[fmt(summary["per_task"][name].get(k), ".2f") for k in kinds])
    table.add_row("[bold]mean over tasks[/bold]", *[fmt(summary["per_type"].get(k), ".2f") for k in kinds],
                  end_section=True)
    print_table(table)
    click.echo(f"average over tasks and types: {fmt(summary['average'], '.2f')}  (records in {store_path})")


DEFAULT_CALIBRATION_STORE = "mskbench-calibration.db"


@click.command("calibrate")
@click.option("--task", default="all", show_default=True, help="Task id, comma-separated ids or 'all'.")
@click.option("--policies", default=None,
              help="Comma-separated built-in policies [default: zero,passive,random, then hold, the cheat probes "
                   "(calf-raise, fall-back, basket, lean: each on the tasks it aims at) and expert].")
@click.option("--episodes", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Episode i uses seed+i.")
@click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
              help="Worker processes (local) or CPUs for a local Ray instance.")
@click.option("--executor", type=click.Choice(["local", "ray"]), default="local", show_default=True)
@click.option("--address", default=None, help="Ray cluster address (with --executor ray).")
@click.option("--store", "store_path", type=click.Path(dir_okay=False, path_type=Path),
              default=DEFAULT_CALIBRATION_STORE, show_default=True,
              help="Results store (SQLite); a rerun skips the episodes it holds.")
@click.option("--json", "json_path", type=click.Path(path_type=Path), default=None,
              help="Write the table (and the free successes and native verdicts) as JSON to this file.")
@click.option("--markdown", "md_path", type=click.Path(path_type=Path), default=None,
              help="Write the table as Markdown to this file.")
@click.option("--check", is_flag=True,
              help="Exit with status 1 when zero, passive or random, hold where a task's goal is more than keeping "
                   "its start, or a cheat probe on a task it aims at meets a success criterion that counts.")
def calibrate_cmd(task, policies, episodes, seed, workers, executor, address, store_path, json_path, md_path,
                  check):
    """Calibrate success: built-in policies that control nothing, on every task.

    Runs each policy for --episodes episodes per task (train environment, seeds
    SEED..SEED+N-1) into the results store, then prints per task and policy the
    success rate by Table XII, by the native solved signal (and whether it
    counts) and by the paper's rule, the episode lengths and returns and the
    termination reasons. A killed run resumes when run again with the same
    arguments.
    """
    from collections import Counter

    from mskbench._version import __version__
    from mskbench.eval import calibration as cal
    from mskbench.eval.executors import check_executor
    from mskbench.eval.store import ResultsStore, StoreError

    try:
        names = cal.check_policies(policies.split(",") if policies is not None else cal.default_policies())
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--policies") from None
    tasks = _select_tasks(task, None)
    writable_file(json_path, "--json")
    writable_file(md_path, "--markdown")
    try:
        check_executor(executor)
        store = ResultsStore(store_path)
    except (RuntimeError, StoreError) as exc:
        raise click.ClickException(str(exc)) from None
    console = make_console()
    with store:
        todo = store.missing(cal.calibration_units(names, tasks, seed, episodes))
        with progress_bar(console) as progress:
            bars = {p: progress.add_task(f"{p}: {n} episodes to run", total=n)
                    for p, n in Counter(u.method for u in todo).items()}
            finished = task_lines(console, Counter(f"{u.task} ({u.method})" for u in todo))

            def on_record(record: dict) -> None:
                progress.advance(bars[record["method"]])
                finished(f"{record['task']} ({record['method']})", record["episode_return"])

            counts = cal.run_calibration(store, names, tasks, seed, episodes, executor=executor, workers=workers,
                                         address=address, on_record=on_record)
        table = cal.calibration_table(store, names, tasks, seed, episodes)
    log.info("units: %s", counts)
    free = cal.free_successes(table)
    verdicts = cal.native_verdicts(table)
    if json_path is not None:
        command = (f"mskbench calibrate --task {','.join(tasks)} --policies {','.join(names)} "
                   f"--episodes {episodes} --seed {seed}")
        out = {"command": command, "mskbench_version": __version__, **table, "free_successes": free,
               "degeneracy_threshold_pct": cal.DEGENERACY_THRESHOLD_PCT, "native_verdicts": verdicts}
        json_path.write_text(json.dumps(out, indent=1) + "\n")
    if md_path is not None:
        md_path.write_text(cal.markdown(table))
    rich = Table(title=f"calibration: {episodes} episodes per task and policy, seeds {seed}..{seed + episodes - 1}")
    walking = any(cal.progress_cell(r) for r in table["rows"])
    columns = ["task", "policy", "n", "SR XII %", "native %", "SR paper %", "fell after %", "length med (min–max)",
               "return mean ± sd", "terminations"]
    if walking:
        columns.insert(-1, "steps · dist. · fwd speed")
    for col in columns:
        rich.add_column(col, justify="left" if col in ("task", "policy", "native %", "terminations") else "right")
    for r in table["rows"]:
        native = table["native"][r["task"]]
        cells = [r["task"], r["policy"], str(r["episodes"]), f"{r['sr_table_xii_pct']:.0f}",
                 cal.native_cell(r, native), f"{r['sr_paper_pct']:.0f}", fmt(r["fell_after_success_pct"], ".0f"),
                 f"{r['length_median']:g} ({r['length_min']}–{r['length_max']})",
                 f"{r['return_mean']:.1f} ± {r['return_std']:.1f}",
                 ", ".join(f"{k} {v}" for k, v in r["terminations"].items())]
        if walking:
            cells.insert(-1, cal.progress_cell(r))
        rich.add_row(*cells)
    print_table(rich, console)
    if walking:
        click.echo("steps · dist. · fwd speed (walking tasks): medians over the episodes of the foot touchdowns, the "
                   "pelvis's horizontal displacement and its forward speed along the start heading")
    disagree = [t for t, v in verdicts.items() if not v["agrees"]]
    if disagree:
        click.echo("native signals met by a policy that controls nothing (or by hold where the goal is more than "
                   "the start) but counted, or declared degenerate but never met by one: " + ", ".join(disagree))
    if table["missing"]:
        click.echo(f"{table['missing']} episodes are not in {store_path} yet")
    trivial = [p for p in names if p in cal.TRIVIAL_POLICIES]
    if cal.HOLD_PROBE in names:
        trivial.append(f"{cal.HOLD_PROBE} where the goal is more than the start")
    trivial += [f"{p} on the tasks it aims at" for p in names if p in cal.CHEAT_PROBES]
    if free:
        click.echo("free successes (a trivial policy, hold where the goal is more than the start, or a cheat probe "
                   "on a task it aims at, meets a criterion that counts): "
                   + ", ".join(f"{f['task']}/{f['policy']} {f['sr_paper_pct']:.0f} %" for f in free))
    elif trivial:
        click.echo(f"free successes: none ({', '.join(trivial)} never met a criterion that counts)")
    click.echo(f"records in {store_path}")
    if check and free:
        raise click.ClickException(f"{len(free)} free successes")


@click.command("leaderboard")
@click.option("--store", "store_path", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help=f"Results store to read (default: $MSKBENCH_STORE or {DEFAULT_STORE} when it exists).")
@click.option("--from", "csv_paths", type=click.Path(exists=True, dir_okay=False), multiple=True,
              help="CSV with columns task,method,perturbation,scale,success_rate (repeatable).")
@click.option("--published", is_flag=True,
              help="Show the paper's Table II (shipped with mskbench); with --store/--from, beside the local "
                   "results as 'METHOD (paper)' columns.")
@click.option("--success", "success_label", type=click.Choice(["paper", "table-xii"]), default="paper",
              show_default=True,
              help="Success label read from the store: the paper's rule (Table XII, or a task's native solved "
                   "signal where it counts) or the Table XII criterion alone.")
@click.option("--json", "as_json", is_flag=True,
              help="Print the leaderboard as JSON (each method with \"privileged\": whether it reads the simulator, "
                   "\"tasks_averaged\": the tasks each success rate is over, \"fell_after_success\" and "
                   "\"per_task\").")
def leaderboard_cmd(store_path, csv_paths, published, success_label, as_json):
    """Table II: success per family, coverage and robustness per method.

    Reads the results store and/or published numbers from CSV files, so both
    can be compared side by side. --published adds the paper's own Table II
    as printed; alone it shows just that table. Privileged methods (they read
    the simulator: the expert, hold, a policy trained over the expert; the
    store records which) come after the others, marked †. A success rate over
    fewer tasks than the suite's says over how many ("100.00 (2 of 22)"). Beside
    SR: the share of successful episodes that then fell (from a store written
    since it is recorded; unknown, "—", for CSV rows and older stores).
    """
    from mskbench.eval.leaderboard import (compute_leaderboard, family_task_counts, format_leaderboard,
                                           privileged_columns, published_columns, read_results_csv)
    from mskbench.eval.store import StoreError
    from mskbench.eval.summary import privileged_from_store, rows_from_store

    paper = {}
    privileged = None  # without a store: the privileged built-ins by name
    paper_rows = []
    if published:
        from dataclasses import replace

        from mskbench.eval.published import published_rows, published_table2

        try:
            # the paper's per-task train-env rows (Tables XIII-XV): the tasks each average is over, and the "(n)"
            # task counts of the labels
            all_rows = published_rows()
            train_rows = [r for r in all_rows if r.perturbation == "none"]
            table2 = published_columns(published_table2(), all_rows)
            paper_rows = [replace(r, method=f"{r.method} (paper)") for r in train_rows]
        except (OSError, ValueError) as exc:
            raise click.ClickException(f"cannot read the published results shipped with mskbench: {exc}") from None
        if store_path is None and not csv_paths:
            if as_json:
                click.echo(json.dumps(table2, indent=2))
                return
            table = format_leaderboard(table2)
            table.title = "MSK-Bench paper, Table II (published)"
            print_table(table)
            return
        paper = {f"{m} (paper)": entry for m, entry in table2.items()}

    rows = []
    try:
        for path in csv_paths:
            rows.extend(read_results_csv(path))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--from") from None
    if store_path is None and not csv_paths:
        store_path = Path(os.environ.get("MSKBENCH_STORE", DEFAULT_STORE))
    if store_path is not None:
        if not store_path.exists():
            raise click.UsageError(f"results store {store_path} does not exist; run 'mskbench eval' or "
                                   "'mskbench sweep' first, or pass --from results.csv")
        try:
            rows.extend(rows_from_store(store_path, success_label))
            privileged = set(privileged_from_store(store_path))
        except StoreError as exc:
            raise click.ClickException(str(exc)) from None
    if not rows:
        raise click.UsageError("no results to rank")
    try:
        board = compute_leaderboard(rows)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from None
    clash = [m for m in board if m in paper]
    if clash:
        raise click.UsageError(f"local method name(s) {', '.join(map(repr, clash))} clash with the published "
                               f"columns ({', '.join(paper)}); rename them to show both")
    board = {**board, **paper}
    if privileged is not None and csv_paths:  # a CSV cannot say: its privileged built-ins by name
        from mskbench.policies import PRIVILEGED_POLICIES

        privileged |= {r.method for r in rows if r.method in PRIVILEGED_POLICIES}
    if as_json:  # each method says whether it is privileged (reads the simulator)
        _, marked = privileged_columns(board, privileged)
        click.echo(json.dumps({m: {**entry, "privileged": m in marked} for m, entry in board.items()}, indent=2))
        return
    table = format_leaderboard(board, family_task_counts([*rows, *paper_rows]), privileged)
    if paper:
        table.title = "Full-suite leaderboard (Table II): local results beside the paper's"
    print_table(table)

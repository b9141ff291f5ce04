"""What every ``mskbench`` command shares: console, progress bars, tables, durations, task lists, options."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import click
from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)
from rich.table import Table

from mskbench.catalog import suite_ids, task_id

log = logging.getLogger("mskbench")


def make_console() -> Console:
    return Console(stderr=False)


def progress_bar(console: Console) -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=console, transient=True, disable=not console.is_terminal)


def task_list(task: str) -> list[str]:
    """Task ids from 'all' (the 22 suite tasks), one id or a comma-separated list (case-insensitive)."""
    if task.strip().lower() == "all":
        return suite_ids()
    names = []
    for part in task.split(","):
        try:
            name = task_id(part.strip())
        except ValueError as exc:
            raise click.BadParameter(f"{exc} (or 'all')", param_hint="TASK") from None
        if name not in names:
            names.append(name)
    return names


class Duration(click.ParamType):
    """A wall-clock duration in seconds: a number, optionally with s, m or h (``90``, ``90s``, ``3m``, ``1.5h``)."""

    name = "duration"
    units = {"s": 1.0, "m": 60.0, "h": 3600.0}

    def convert(self, value, param, ctx):
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            seconds = float(value)
        else:
            text = str(value).strip().lower()
            scale = self.units.get(text[-1:])
            try:
                seconds = float(text[:-1] if scale else text) * (scale or 1.0)
            except ValueError:
                self.fail(f"{value!r} is not a duration: give seconds, or a number with s, m or h "
                          f"(90, 90s, 3m, 1.5h)", param, ctx)
        if not 0 < seconds < float("inf"):
            self.fail(f"{value!r}: a duration must be positive and finite", param, ctx)
        return seconds


#: ``--time-limit`` of the training commands.
TIME_LIMIT_HELP = ("Also stop after the first iteration that ends past this wall-clock time from the start of "
                   "training, compilation included (90s, 3m, 1.5h): the policy it reached is evaluated and "
                   "checkpointed, and --resume continues it.")


def stop_note(state) -> str:
    """' (stopped at the time limit)' when the last iteration of ``state`` was stopped by it."""
    last = state.history[-1] if state.history else {}
    return " (stopped at the time limit; --resume continues)" if last.get("stopped") == "time_limit" else ""


def run_training(task, *, out_dir: Path, **kwargs):
    """``mskbench.training.train`` with its errors as one-line command errors: a line per iteration and,
    on a terminal, a progress bar (steps, steps/s, latest return, time left)."""
    from mskbench.training import train

    console = make_console()
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        TextColumn("{task.fields[rate]} steps/s  return {task.fields[ret]}"), TimeElapsedColumn(),
                        TextColumn("ETA"), TimeRemainingColumn(), console=console, transient=True,
                        disable=not console.is_terminal)
    bar: list = []

    def report(row):
        msg = f"iter {row['iteration']} steps {row['steps']}"
        if row.get("mean_reward") is not None:
            msg += f" reward/step {row['mean_reward']:.3f}"
        if row.get("episode_return") is not None:
            msg += f" return {row['episode_return']:.2f}"
        msg += f" {row['steps_per_s']:.0f} steps/s"
        if row.get("bc_loss") is not None:
            msg += f" bc loss {row['bc_loss']:.4g} (teacher acted {row['teacher_share']:.0%})"
        if row.get("critic_loss") is not None:
            msg += f" critic {row['critic_loss']:.4g} actor {row['actor_loss']:.4g}"
        if "eval" in row:
            msg += " | " + ", ".join(f"{k} {v:.3f}" for k, v in row["eval"].items() if isinstance(v, float))
        progress.console.print(msg, markup=False, highlight=False, soft_wrap=True)
        if bar:
            ret = row.get("episode_return")
            progress.update(bar[0], completed=row["steps"], rate=f"{row['steps_per_s']:.0f}",
                            ret="-" if ret is None else f"{ret:.1f}")

    def start(settings):
        cfg = settings["config"]
        physics = f"{settings['backend']}" + (f", {settings['impl']}" if settings["impl"] else "")
        click.echo(f"{settings['task']}: {settings['algo']}, {cfg['num_envs']} worlds ({physics}) on "
                   f"{settings['device']}, {cfg['num_steps']}-step iterations ({cfg['num_envs'] * cfg['num_steps']} "
                   f"steps each), evaluation on {settings['eval_env']} by {settings['metric']}")
        bar.append(progress.add_task(f"{settings['task']} {settings['algo']}", total=cfg["total_steps"],
                                     rate="-", ret="-"))

    try:
        with progress:
            return train(task, out=out_dir, on_start=start, on_iteration=report, **kwargs)
    except (ValueError, TypeError) as exc:
        if bar:  # raised once training had started (e.g. by the env): not a matter of the options given
            raise click.ClickException(str(exc)) from None
        raise click.UsageError(str(exc)) from None
    except (RuntimeError, MemoryError, FileExistsError, FileNotFoundError, ImportError) as exc:
        raise click.ClickException(str(exc)) from None


def policy_choice():
    from mskbench.policies import BUILTIN_POLICIES

    return click.Choice(BUILTIN_POLICIES)


DEFAULT_STORE = "mskbench-results.db"


def store_option(f):
    return click.option("--store", "store_path", type=click.Path(dir_okay=False, path_type=Path),
                        default=lambda: os.environ.get("MSKBENCH_STORE", DEFAULT_STORE), show_default=DEFAULT_STORE,
                        help="Results store (SQLite file; env MSKBENCH_STORE).")(f)


def fmt(x, spec: str) -> str:
    return "—" if x is None else format(x, spec)


def print_table(table: Table, console=None) -> None:
    """Print ``table`` with no cell cut short: at its full width when piped; on a terminal narrower than
    the table, without its outer border first, then with cells folded onto more lines (never cut)."""
    console = console or make_console()
    for column in table.columns:
        column.overflow = "fold"
    unbounded = console.options.update_width(2**16)
    if not console.is_terminal:
        console.width = max(console.width, console.measure(table, options=unbounded).maximum)
    elif console.measure(table, options=unbounded).maximum > console.width:
        table.show_edge = table.pad_edge = False
    console.print(table)


def task_lines(console, episodes: dict[str, int]):
    """A callback ``(task, episode_return)`` that prints one plain line on stderr when the last of a
    task's ``episodes[task]`` episodes is done, when stdout is not a terminal (no progress bar then)."""
    returns: dict[str, list[float]] = {}

    def finished(task: str, episode_return: float) -> None:
        rs = returns.setdefault(task, [])
        rs.append(episode_return)
        if not console.is_terminal and len(rs) == episodes[task]:
            click.echo(f"{task}: {len(rs)} episode{'s' * (len(rs) != 1)}, mean return {sum(rs) / len(rs):.2f}",
                       err=True)

    return finished


def writable_file(path: Path | None, option: str) -> None:
    """A one-line usage error, before anything runs, when ``path`` cannot be written."""
    if path is None:
        return
    if path.is_dir():
        raise click.BadParameter(f"{path} is a directory; give a file name", param_hint=option)
    if not path.parent.is_dir():
        raise click.BadParameter(f"directory {path.parent} does not exist", param_hint=option)

"""What every ``mskbench`` command group shares: console, progress bars, durations, task lists."""

from __future__ import annotations

from pathlib import Path

import click
from rich.console import Console
from rich.progress import (BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn,
                           TimeRemainingColumn)

from mskbench.catalog import suite_ids, task_id


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

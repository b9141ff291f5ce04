"""``mskbench tasks``, ``run`` and ``record``: the tasks, and episodes of a policy on them."""

from __future__ import annotations

import json
from pathlib import Path

import click
from rich.table import Table

from mskbench.cli.common import log, make_console, policy_choice, print_table, progress_bar, task_lines, task_list


@click.command("tasks")
@click.option("--options", "options_of", metavar="TASK", default=None,
              help="List TASK's options (name, default, meaning) instead: what mskbench.tasks.make_task(TASK, ...) "
                   "and gymnasium.make(..., task_kwargs={...}) take.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def tasks_cmd(options_of: str | None, as_json: bool) -> None:
    """List the tasks with family, horizon and observation/action sizes (the 22 suite tasks, then the others)."""
    from mskbench.tasks import REGISTRY

    if options_of is not None:
        _options_table(options_of, as_json)
        return
    from mskbench.envs import MSKEnv

    console = make_console()
    rows = []
    with progress_bar(console) as progress:
        job = progress.add_task("building environments", total=len(REGISTRY))
        for name, cls in REGISTRY.items():
            env = MSKEnv(name)
            rows.append({
                "task": name,
                "family": cls.family,
                "horizon": env.task.horizon,
                "obs_size": int(env.observation_space.shape[0]),
                "action_size": int(env.action_space.shape[0]),
                "summary": cls.summary,
            })
            env.close()
            progress.advance(job)
    if as_json:
        click.echo(json.dumps(rows, indent=2))
        return
    table = Table(title="mskbench tasks")
    for col in ("task", "family", "horizon", "obs", "action", "summary"):
        table.add_column(col, justify="right" if col in ("horizon", "obs", "action") else "left")
    for r in rows:
        table.add_row(r["task"], r["family"], str(r["horizon"]), str(r["obs_size"]),
                      str(r["action_size"]), r["summary"])
    console.print(table)


def _options_table(task: str, as_json: bool) -> None:
    from mskbench.tasks import REGISTRY, resolve_name

    try:
        name = resolve_name(task)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--options") from None
    options = REGISTRY[name].options()
    if as_json:
        click.echo(json.dumps({k: {"default": d, "doc": doc} for k, (d, doc) in options.items()}, indent=2,
                              default=repr))
        return
    if not options:
        click.echo(f"{name} has no options")
        return
    table = Table(title=f"{name} options (mskbench.tasks.make_task({name!r}, option=value, ...))")
    for col in ("option", "default", "meaning"):
        table.add_column(col, overflow="fold")
    for key, (default, doc) in options.items():
        table.add_row(key, repr(default), doc)
    make_console().print(table)


@click.command("run")
@click.argument("task")
@click.option("--policy", "policy_name", type=policy_choice(), default="zero", show_default=True,
              help="Built-in policy.")
@click.option("--episodes", type=click.IntRange(min=1), default=3, show_default=True)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Episode i uses seed+i.")
@click.option("--json", "as_json", is_flag=True, help="Print per-episode records as JSON lines.")
def run_cmd(task: str, policy_name: str, episodes: int, seed: int, as_json: bool) -> None:
    """Roll out a built-in policy on TASK (a task id or 'all') and print per-episode results."""
    from mskbench.envs import MSKEnv
    from mskbench.eval.episodes import run_episode
    from mskbench.eval.protocol import load_policy

    names = task_list(task)
    console = make_console()
    results = []
    finished = task_lines(console, {name: episodes for name in names})
    with progress_bar(console) as progress:
        for name in names:
            env = MSKEnv(name)
            try:
                policy = load_policy(policy_name, env, seed)
            except ValueError as exc:  # a task the expert has no behaviour for
                raise click.ClickException(str(exc)) from None
            job = progress.add_task(f"{name} ({policy_name})", total=episodes)
            for i in range(episodes):
                steps = progress.add_task(f"  episode {i}", total=env.task.horizon)
                # run_episode calls on_step before it returns: `steps` is this episode's row.
                result = run_episode(env, policy, seed + i,
                                     on_step=lambda e: progress.update(steps, completed=e.steps))
                progress.remove_task(steps)
                results.append(result)
                progress.advance(job)
                finished(name, result.episode_return)
                log.info("%s episode %d: return %.2f, %d steps", name, i, result.episode_return, result.length)
            env.close()
    if as_json:
        for r in results:
            click.echo(json.dumps(r.as_dict()))
        return
    table = Table(title=f"policy '{policy_name}', seeds {seed}..{seed + episodes - 1}")
    for col in ("task", "episode", "seed", "return", "length", "success", "termination"):
        table.add_column(col, justify="right" if col in ("episode", "seed", "return", "length") else "left")
    for name in names:
        rs = [r for r in results if r.task == name]
        for i, r in enumerate(rs):
            table.add_row(name, str(i), str(r.seed), f"{r.episode_return:.2f}", str(r.length),
                          "yes" if r.success else "no", r.termination)
        sr = 100.0 * sum(r.success for r in rs) / len(rs)
        mean_ret = sum(r.episode_return for r in rs) / len(rs)
        mean_len = sum(r.length for r in rs) / len(rs)
        table.add_row(f"[bold]{name}[/bold]", "mean", "", f"{mean_ret:.2f}", f"{mean_len:.1f}",
                      f"SR {sr:.0f}%", "", end_section=True)
    print_table(table, console)


@click.command("record")
@click.argument("task")
@click.option("--policy", "policy_spec", required=True,
              help="expert or hold (privileged built-ins, on the tasks they serve), zero, passive, random, a "
                   "checkpoint (.npz or run directory) or 'package.module:factory'.")
@click.option("--episodes", type=click.IntRange(min=1), default=1, show_default=True)
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Episode i uses seed+i.")
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="The demonstrations file to write (.npz; layout in docs/controllers.md, Demonstrations).")
@click.option("--evalkit", "evalkit_path", type=click.Path(path_type=Path), default=None,
              help="Also write the rollout archive mm-evalkit reads (.npz; Walk and Run).")
@click.option("--max-steps", type=click.IntRange(min=1), default=None,
              help="End each episode after this many control steps (termination step_limit).")
@click.option("--force", "--overwrite", "force", is_flag=True,
              help="Replace OUT (and the --evalkit file) if it exists.")
def record_cmd(task, policy_spec, episodes, seed, out, evalkit_path, max_steps, force):
    """Record episodes of a policy on TASK, every control step, to OUT: observation, action, excitation,
    activation, qpos, qvel, touch, reward and its terms, and per episode its seed, length, termination and
    success (the protocol's episodes: episode i is reset with seed S+i).

    The training-free expert serves the tasks docs/controllers.md lists (Stand, Walk, OpenDoor and more);
    on any other it is a one-line error naming them.
    """
    from mskbench.eval.demos import record_demos

    names = task_list(task)
    if len(names) != 1:
        raise click.BadParameter("record takes one task", param_hint="TASK")
    console = make_console()
    with progress_bar(console) as progress:
        rows = {}

        def report(episode: int, step: int) -> None:
            if episode not in rows:
                rows[episode] = progress.add_task(f"{names[0]} ({policy_spec}) episode {episode}", total=None)
            progress.update(rows[episode], completed=step)

        try:
            summary = record_demos(names[0], policy_spec, episodes, seed, out, evalkit_path=evalkit_path,
                                   max_steps=max_steps, overwrite=force, progress=report)
        except FileExistsError as exc:
            raise click.UsageError(str(exc)) from None
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
    table = Table(title=f"{summary.task}, policy '{policy_spec}', seeds {seed}..{seed + episodes - 1}")
    for col in ("episode", "seed", "return", "length", "success", "termination"):
        table.add_column(col, justify="left" if col in ("success", "termination") else "right")
    for i, r in enumerate(summary.episodes):
        table.add_row(str(i), str(r.seed), f"{r.episode_return:.2f}", str(r.length), "yes" if r.success else "no",
                      r.termination)
    print_table(table, console)
    click.echo(f"wrote {summary.n_steps} steps of {len(summary.episodes)} episodes to {summary.path}"
               + (f" and the mm-evalkit rollout to {summary.evalkit_path}" if summary.evalkit_path else ""))

"""The ``mskbench`` command line.

    mskbench tasks
    mskbench run TASK|all --policy zero|passive|random --episodes N --seed S
    mskbench record TASK --policy expert --episodes N --seed S --out demos.npz [--evalkit rollout.npz]
    mskbench eval --task T|all --policy P --episodes 50 --store results.db
    mskbench sweep --task T|all --policy P --episodes 50 --workers 2
    mskbench calibrate --task all --policies zero,passive,random --episodes 50 --workers 2 --json out.json
    mskbench leaderboard [--store results.db] [--from results.csv] [--published] [--success paper|table-xii] [--json]
    mskbench train TASK --out runs/ppo-stand [--steps N --num-envs 8] [--agentic rule|http]
    mskbench direct start|act|report ...   (direct external control, App. A-F)
    mskbench report --store results.db --out report/ [--published] [--runs runs/*]   (HTML report)
    mskbench render TASK --policy random --out video.mp4
    mskbench render --all --frames 1 --out sheet.png

Episode ``i`` of a run is reset with seed ``S + i``, so any single episode can
be reproduced on its own.
"""

from __future__ import annotations

import ctypes.util
import json
import logging
import os
from pathlib import Path

# MuJoCo fixes its OpenGL backend when it is first imported, so the headless
# default is chosen here, before anything imports it: OSMesa when there is no
# display, MUJOCO_GL is unset and the OSMesa library is installed.
if "MUJOCO_GL" not in os.environ and not os.environ.get("DISPLAY") and ctypes.util.find_library("OSMesa"):
    os.environ["MUJOCO_GL"] = "osmesa"

import click  # noqa: E402
from rich.table import Table  # noqa: E402

from mskbench._cli import (TIME_LIMIT_HELP, Duration, make_console, progress_bar, run_training,  # noqa: E402
                           stop_note, task_list)

log = logging.getLogger("mskbench")


from mskbench.agents import ALGORITHMS  # noqa: E402  (light: no JAX until something trains)


def _policy_choice():
    from mskbench.policies import BUILTIN_POLICIES

    return click.Choice(BUILTIN_POLICIES)


class _Main(click.Group):
    """Loads the ``mouse``, ``direct`` and ``latent`` command groups on first use, so starting the CLI imports no
    simulator (``render`` must set ``MUJOCO_GL`` before MuJoCo is imported)."""

    def list_commands(self, ctx):
        return sorted([*super().list_commands(ctx), "mouse", "direct", "latent"])

    def get_command(self, ctx, name):
        if name == "mouse":
            from mskbench.mouse.cli import mouse

            return mouse
        if name == "direct":
            from mskbench.paradigms.cli import direct

            return direct
        if name == "latent":
            from mskbench.paradigms.latent_cli import latent

            return latent
        return super().get_command(ctx, name)


@click.group(cls=_Main)
@click.option("-v", "--verbose", is_flag=True, help="Log progress details to stderr.")
@click.version_option(package_name="mskbench")
def main(verbose: bool) -> None:
    """mskbench: full-body musculoskeletal motor-control benchmark (MyoFullBody, 416 muscles)."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")


@main.command("tasks")
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


@main.command("run")
@click.argument("task")
@click.option("--policy", "policy_name", type=_policy_choice(), default="zero", show_default=True,
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
    finished = _task_lines(console, {name: episodes for name in names})
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
    _print_table(table, console)


@main.command("record")
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

    The training-free expert serves Stand, Powerlift, SingleLegStand, Sit, Balance, Squat and Reach.
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
    _print_table(table, console)
    click.echo(f"wrote {summary.n_steps} steps of {len(summary.episodes)} episodes to {summary.path}"
               + (f" and the mm-evalkit rollout to {summary.evalkit_path}" if summary.evalkit_path else ""))


DEFAULT_STORE = "mskbench-results.db"
#: Evaluation backends: the CPU executors, or batched on the JAX env (mskbench.eval.batched).
BACKENDS = ("cpu", "jax")


def _store_option(f):
    return click.option("--store", "store_path", type=click.Path(dir_okay=False, path_type=Path),
                        default=lambda: os.environ.get("MSKBENCH_STORE", DEFAULT_STORE), show_default=DEFAULT_STORE,
                        help="Results store (SQLite file; env MSKBENCH_STORE).")(f)


def _protocol_options(f):
    from mskbench.eval.executors import EXECUTORS

    opts = [
        click.option("--task", default="all", show_default=True, help="Task id, comma-separated ids or 'all'."),
        click.option("--family", type=click.Choice(["stabilization", "locomotion", "interaction"]), default=None,
                     help="Only the tasks of one family."),
        click.option("--policy", "policy_spec", default="zero", show_default=True,
                     help="Built-in (zero, passive, random), a checkpoint of any trainer (.npz or run directory) "
                          "or 'package.module:factory'."),
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
        _store_option,
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
    from mskbench.catalog import task_ids

    residual = [n for n in names if n in task_ids(family="residual")]
    if residual:  # the protocol would run the residual action alone, on a default base
        raise click.BadParameter(f"{', '.join(residual)}: a residual run acts through its base policy, which the "
                                 "protocol does not compose; evaluate it with mskbench.paradigms.residual."
                                 "residual_policy(RUN, env) (docs/residual.md)", param_hint="--task")
    return names


def _run_protocol(units, policy_spec: str, store_path: Path, executor: str, workers: int,
                  address: str | None, emg_reference: str | None = None, backend: str = "cpu",
                  impl: str = "warp", batch_size: int = 1024) -> dict:
    from collections import Counter

    from mskbench.eval.executors import JobSpec, check_executor, run_units
    from mskbench.eval.protocol import check_policy_spec
    from mskbench.eval.store import ResultsStore, StoreError

    # Everything the arguments can get wrong is checked before the store is opened (or created).
    try:
        check_policy_spec(policy_spec)
        if backend == "jax":
            from mskbench.eval.batched import check_batched_policy

            check_batched_policy(policy_spec)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--policy") from None
    try:
        if backend == "cpu":
            check_executor(executor)
        store = ResultsStore(store_path)
    except (RuntimeError, StoreError) as exc:  # no Ray; a file that is not a results store
        raise click.ClickException(str(exc)) from None
    console = make_console()
    with store, progress_bar(console) as progress:
        todo = store.missing(units)
        job = progress.add_task(f"{len(todo)} episodes to run ({len(units) - len(todo)} stored)", total=len(todo))
        finished = _task_lines(console, Counter(u.task for u in todo))

        def on_record(record: dict) -> None:
            progress.advance(job)
            finished(record["task"], record["episode_return"])

        if backend == "jax":
            from mskbench.eval.batched import run_units_batched

            try:
                counts = run_units_batched(units, JobSpec(policy_spec, emg_reference), store, impl=impl,
                                           batch_size=batch_size, progress=on_record)
            except (RuntimeError, MemoryError) as exc:  # no JAX / MJX / Warp, or a batch too large
                raise click.ClickException(str(exc)) from None
        else:
            counts = run_units(store, units, JobSpec(policy_spec, emg_reference), executor=executor,
                               workers=workers, address=address, on_record=on_record)
        keys = {u.key for u in units}
        records = [r for r in store.records(method=units[0].method)
                   if (r["method"], r["task"], r["perturbation"], float(r["scale"]), int(r["seed"])) in keys]
    log.info("units: %s", counts)
    return {"counts": counts, "records": records}


@main.command("eval")
@_protocol_options
@click.option("--emg-reference", type=click.Path(exists=True, dir_okay=False), default=None,
              help="101-point EMG envelope CSV (gait_cycle_pct + one column per muscle) for gait tasks.")
@click.option("--json", "as_json", is_flag=True, help="Print the per-task summary as JSON.")
def eval_cmd(task, family, policy_spec, method, episodes, seed, workers, executor, address, backend, impl,
             batch_size, store_path, emg_reference, as_json):
    """Evaluate a policy with the shared protocol (train environment, Table XII success).

    Every episode record goes into the results store; units already stored are
    not run again.
    """
    from mskbench.eval.protocol import eval_units
    from mskbench.eval.summary import summarize_eval

    if emg_reference is not None:
        from mskbench.metrics.emg import load_emg_reference

        try:
            load_emg_reference(emg_reference)
        except ValueError as exc:
            raise click.BadParameter(str(exc), param_hint="--emg-reference") from None
    names = _select_tasks(task, family)
    units = eval_units(method or policy_spec, names, seed, episodes)
    out = _run_protocol(units, policy_spec, store_path, executor, workers, address, emg_reference,
                        backend=backend, impl=impl, batch_size=batch_size)
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
    for col in ("task", "SR %", "return", "length", "act. cost", "log jerk", "EMG r", "terminations"):
        table.add_column(col, justify="left" if col in ("task", "terminations", "EMG r") else "right")
    for name, s in summary.items():
        emg = s["emg"]
        emg_txt = f"{emg['mean_r']:.3f}" if "mean_r" in emg else f"absent: {emg['absent']}"
        table.add_row(name, f"{s['success_rate']:.1f}", f"{s['return_mean']:.2f}", f"{s['length_mean']:.1f}",
                      _fmt(s["activation_cost"], ".4f"), _fmt(s["smoothness"], ".2f"), emg_txt,
                      ", ".join(f"{k} {v}" for k, v in s["terminations"].items()))
    _print_table(table)
    click.echo(f"records in {store_path}")


def _fmt(x, spec: str) -> str:
    return "—" if x is None else format(x, spec)


def _print_table(table: Table, console=None) -> None:
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


def _task_lines(console, episodes: dict[str, int]):
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


@main.command("sweep")
@_protocol_options
@click.option("--types", default="action,observation,dynamics", show_default=True,
              help="Comma-separated perturbation types.")
@click.option("--json", "as_json", is_flag=True, help="Print robustness scores as JSON.")
def sweep_cmd(task, family, policy_spec, method, episodes, seed, workers, executor, address, backend, impl,
              batch_size, store_path, types, as_json):
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
                        batch_size=batch_size)
    summary = summarize_sweep(out["records"])
    if as_json:
        click.echo(json.dumps(summary, indent=2))
        return
    table = Table(title=f"robustness of {method or policy_spec} (area under success % vs scale, 0–100)")
    table.add_column("task")
    for kind in kinds:
        table.add_column(kind, justify="right")
    for name in names:
        table.add_row(name, *[_fmt(summary["per_task"][name].get(k), ".2f") for k in kinds])
    table.add_row("[bold]mean over tasks[/bold]", *[_fmt(summary["per_type"].get(k), ".2f") for k in kinds],
                  end_section=True)
    _print_table(table)
    click.echo(f"average over tasks and types: {_fmt(summary['average'], '.2f')}  (records in {store_path})")


DEFAULT_CALIBRATION_STORE = "mskbench-calibration.db"


def _writable_file(path: Path | None, option: str) -> None:
    """A one-line usage error, before anything runs, when ``path`` cannot be written."""
    if path is None:
        return
    if path.is_dir():
        raise click.BadParameter(f"{path} is a directory; give a file name", param_hint=option)
    if not path.parent.is_dir():
        raise click.BadParameter(f"directory {path.parent} does not exist", param_hint=option)


@main.command("calibrate")
@click.option("--task", default="all", show_default=True, help="Task id, comma-separated ids or 'all'.")
@click.option("--policies", default=None,
              help="Comma-separated built-in policies [default: zero,passive,random, and hold and expert when "
                   "they are registered].")
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
              help="Exit with status 1 when zero, passive or random meets a success criterion that counts.")
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
    _writable_file(json_path, "--json")
    _writable_file(md_path, "--markdown")
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
            finished = _task_lines(console, Counter(f"{u.task} ({u.method})" for u in todo))

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
    for col in ("task", "policy", "n", "SR XII %", "native %", "SR paper %", "length med (min–max)",
                "return mean ± sd", "terminations"):
        rich.add_column(col, justify="left" if col in ("task", "policy", "native %", "terminations") else "right")
    for r in table["rows"]:
        native = table["native"][r["task"]]
        rich.add_row(r["task"], r["policy"], str(r["episodes"]), f"{r['sr_table_xii_pct']:.0f}",
                     cal.native_cell(r, native), f"{r['sr_paper_pct']:.0f}",
                     f"{r['length_median']:g} ({r['length_min']}–{r['length_max']})",
                     f"{r['return_mean']:.1f} ± {r['return_std']:.1f}",
                     ", ".join(f"{k} {v}" for k, v in r["terminations"].items()))
    _print_table(rich, console)
    disagree = [t for t, v in verdicts.items() if not v["agrees"]]
    if disagree:
        click.echo("native signals met by a trivial policy but counted, or declared degenerate but never met: "
                   + ", ".join(disagree))
    if table["missing"]:
        click.echo(f"{table['missing']} episodes are not in {store_path} yet")
    trivial = [p for p in names if p in cal.TRIVIAL_POLICIES]
    if free:
        click.echo("free successes (a trivial policy meets a criterion that counts): "
                   + ", ".join(f"{f['task']}/{f['policy']} {f['sr_paper_pct']:.0f} %" for f in free))
    elif trivial:
        click.echo(f"free successes: none ({', '.join(trivial)} never met a criterion that counts)")
    click.echo(f"records in {store_path}")
    if check and free:
        raise click.ClickException(f"{len(free)} free successes")


@main.command("leaderboard")
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
@click.option("--json", "as_json", is_flag=True, help="Print the leaderboard as JSON.")
def leaderboard_cmd(store_path, csv_paths, published, success_label, as_json):
    """Table II: success per family, coverage and robustness per method.

    Reads the results store and/or published numbers from CSV files, so both
    can be compared side by side. --published adds the paper's own Table II
    as printed; alone it shows just that table.
    """
    from mskbench.eval.leaderboard import (compute_leaderboard, family_task_counts, format_leaderboard,
                                           read_results_csv)
    from mskbench.eval.store import StoreError
    from mskbench.eval.summary import rows_from_store

    paper = {}
    paper_rows = []
    if published:
        from dataclasses import replace

        from mskbench.eval.published import published_rows, published_table2

        try:
            table2 = published_table2()
            # the paper's per-task train-env rows (Tables XIII-XV), only for the "(n)" task counts of the labels
            paper_rows = [replace(r, method=f"{r.method} (paper)") for r in published_rows()
                          if r.perturbation == "none"]
        except (OSError, ValueError) as exc:
            raise click.ClickException(f"cannot read the published results shipped with mskbench: {exc}") from None
        if store_path is None and not csv_paths:
            if as_json:
                click.echo(json.dumps(table2, indent=2))
                return
            table = format_leaderboard(table2)
            table.title = "MSK-Bench paper, Table II (published)"
            _print_table(table)
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
    if as_json:
        click.echo(json.dumps(board, indent=2))
        return
    table = format_leaderboard(board, family_task_counts([*rows, *paper_rows]))
    if paper:
        table.title = "Full-suite leaderboard (Table II): local results beside the paper's"
    _print_table(table)


def _settings(pairs: tuple[str, ...]) -> dict:
    """``--set KEY=VALUE`` pairs as hyper-parameters (values read as JSON, else kept as text)."""
    out = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise click.BadParameter(f"{pair!r} is not KEY=VALUE", param_hint="--set")
        try:
            value = json.loads(text)
        except json.JSONDecodeError:
            value = text
        out[key.strip()] = tuple(value) if isinstance(value, list) else value
    return out


@main.command("train")
@click.argument("task")
@click.option("--algo", type=click.Choice(list(ALGORITHMS)), default="ppo", show_default=True,
              help="Training algorithm (mskbench.agents.ALGORITHMS).")
@click.option("--out", "out_dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Run directory: run.json, checkpoint.npz (latest), best.npz (best evaluation), eval_log.jsonl.")
@click.option("--steps", type=click.IntRange(min=1), default=None,
              help="Environment steps [default: Table XVI's 2e8].")
@click.option("--backend", type=click.Choice(["cpu", "jax"]), default="cpu", show_default=True,
              help="cpu: MuJoCo C worlds stepped from Python; jax: the batched JAX env "
                   "(mskbench.jax_env), the whole rollout on the device.")
@click.option("--impl", type=click.Choice(["warp", "jax", "cpu"]), default=None,
              help="Physics of --backend jax: warp (MuJoCo Warp, NVIDIA GPU; default), jax (MJX) or "
                   "cpu (MuJoCo C behind the JAX interface, for testing).")
@click.option("--num-envs", type=click.IntRange(min=1), default=None,
              help="Parallel worlds [default: 8 (cpu), 4096 (jax)].")
@click.option("--rollout", type=click.IntRange(min=1), default=None,
              help="Steps per environment per iteration (one log row and checkpoint) [default: PPO 2048 (cpu), "
                   "64 (jax); SAC 1250; DepRL 625; DynSyn-SAC 160].")
@click.option("--hidden", type=click.IntRange(min=1), default=None,
              help="Width of every layer of the actor and the critic(s) [default: 1024].")
@click.option("--minibatch", type=click.IntRange(min=1), default=None,
              help="[default: 256 (cpu); jax: rollout x num-envs / 64, at least 256, i.e. as many gradient "
                   "steps per epoch as Table XVI's 2048 x 8 / 256]")
@click.option("--epochs", type=click.IntRange(min=1), default=None, help="[default: 10]")
@click.option("--learning-rate", type=float, default=None,
              help="[default: PPO 3e-4, SAC 1e-4, DepRL 5e-5 (actor), DynSyn-SAC 5e-4 decaying to 1.25e-4]")
@click.option("--set", "extra", multiple=True, metavar="KEY=VALUE",
              help="Any other hyper-parameter of the algorithm (repeatable), e.g. --set gamma=0.98.")
@click.option("--eval-every-steps", type=click.IntRange(min=1), default=None,
              help="[default: the algorithm's (Table XVI): PPO 500000, SAC 200000, DynSyn-SAC 5000000; "
                   "5000000 on --backend jax]")
@click.option("--eval-episodes", type=click.IntRange(min=1), default=None,
              help="Deterministic episodes per evaluation [default: the algorithm's, Table XVI: 10; DynSyn-SAC 3].")
@click.option("--eval-env", type=click.Choice(["cpu", "jax"]), default=None,
              help="Where the periodic evaluation runs [default: the backend's]: cpu = the protocol's "
                   "MuJoCo C env, episode by episode; jax = the training env's physics, one world per episode, "
                   "batched on the device (--backend jax only).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--resume", is_flag=True, help="Continue the run in --out.")
@click.option("--time-limit", type=Duration(), default=None, help=TIME_LIMIT_HELP)
@click.option("--agentic", type=click.Choice(["rule", "http"]), default=None,
              help="Agentic reward tuning (App. A-E; the paper's learner is --algo deprl): every --agentic-every "
                   "steps a reasoner rewrites the reward weights (each nonzero weight by at most 20% per update, "
                   "||w||_1 = 40). rule: built-in rules, offline; http: an OpenAI-compatible chat API from "
                   "MSKBENCH_LLM_URL, MSKBENCH_LLM_MODEL, MSKBENCH_LLM_KEY. Updates are logged to "
                   "OUT/agentic_updates.jsonl; Table III (survival, tracking RMSE, activation) to "
                   "OUT/agentic_summary.json. --backend cpu only.")
@click.option("--agentic-every", type=click.IntRange(min=1), default=None,
              help="Environment steps between reward-weight updates [default: 20000].")
@click.option("--agentic-timeout", type=Duration(), default=None,
              help="How long the reasoner may take per update before it is abandoned [default: 60s].")
@click.option("--base", default=None, metavar="RUN",
              help="Residual adaptation (Eq. 2 / 38, App. A-J; TASK: ResidualWalk, ResidualRun or ResidualStairs): "
                   "the frozen base policy, a run directory or checkpoint of a tracking prior (mskbench train "
                   "TrackWalk ...; zero or passive for tests). The trained policy is the residual a_res; the "
                   "muscles get clip(a_base + alpha * clip(a_res, -1, 1), -1, 1) (mskbench.paradigms.residual).")
@click.option("--latent", "latent_model", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
              help="Latent-action RL, hard mode (App. A-G): every muscle action is clipped into a tube around the "
                   "prior this encoder-decoder (mskbench latent fit) decodes from it and the muscle states, and "
                   "the reward pays the decaying deviation penalty (Eqs. 23-28); the evaluation runs through the "
                   "same filter (afterwards: mskbench latent eval OUT). Any --backend: on jax the map runs inside "
                   "the batched step.")
@click.option("--tube", type=click.FloatRange(0.0, 1.0), default=None,
              help="Tube radius delta of --latent, in activation units [default: 0.25, the authors'].")
def train_cmd(task, algo, out_dir, steps, backend, impl, num_envs, rollout, hidden, minibatch, epochs, learning_rate,
              extra, eval_every_steps, eval_episodes, eval_env, seed, resume, time_limit, agentic, agentic_every,
              agentic_timeout, base, latent_model, tube):
    """Train an algorithm on TASK with Table XVI's defaults: ppo (2x1024 MLPs, lr 3e-4, batch 256, 2048
    steps x 8 envs, 10 epochs), sac (SBX: 2x1024 actor, twin 2x1024 critics, lr 1e-4, 8 envs, one
    gradient step per vectorised step), deprl (DEP exploration on SAC, 3-step returns, 16 envs, 1e5
    warm-up, 30 updates per 1,000 transitions), dynsyn (SAC through muscle-synergy groups, 3x1024,
    64 envs, lr 5e-4 -> 1.25e-4). The best checkpoint (best.npz) is the highest mean deterministic
    evaluation return; DepRL reports its last checkpoint (checkpoint.npz; best_return.npz is kept).
    The SAC family trains on --backend cpu.

    --backend jax trains the same networks on the batched JAX env (GPU: --impl warp) and writes the
    same checkpoints. Its periodic evaluation (--eval-env jax) runs the deterministic policy on
    --eval-episodes worlds started exactly as the protocol starts seeds 10000, 10001, ... (same
    initial states, no perturbation) until each episode ends; only the physics implementation
    differs from the protocol's MuJoCo C, so best.npz is chosen by returns close to, not identical
    with, what mskbench eval reports. --eval-env cpu evaluates in the protocol env itself (exact,
    but one episode at a time on the host).

    The same run from Python: mskbench.train(TASK, algo=..., backend=..., out=...). Evaluate the
    result with the shared protocol: mskbench eval --task TASK --policy OUT.
    """
    names = task_list(task)
    if len(names) != 1:
        raise click.BadParameter("train takes one task", param_hint="TASK")
    config = _settings(extra)
    ppo = algo == "ppo"
    if epochs is not None and not ppo:
        raise click.BadParameter(f"--epochs is PPO's (passes over each rollout); {algo} is off-policy",
                                 param_hint="--epochs")
    for key, value in (("num_envs", num_envs), ("num_steps", rollout),
                       ("minibatch_size" if ppo else "batch_size", minibatch), ("epochs", epochs),
                       ("learning_rate", learning_rate)):
        if value is not None:
            config[key] = value
    if hidden is not None:  # every layer of the actor and the critic(s) this wide
        from mskbench.training import resolve_config

        layers = len(resolve_config(algo, names[0], backend, {}).hidden)
        config.update({"hidden": (hidden,) * layers, ("value_hidden" if ppo else "critic_hidden"): (hidden,) * layers})
    tuner = _agentic_tuner(agentic, agentic_every, agentic_timeout, backend)
    residual, task_options = _residual_base(names[0], base, tuner)
    prior = _latent_prior(latent_model, tube, tuner or residual)
    run = run_training(names[0], out_dir=out_dir, algo=algo, backend=backend, impl=impl, steps=steps, seed=seed,
                       resume=resume, time_limit_s=time_limit, eval_episodes=eval_episodes,
                       eval_every_steps=eval_every_steps, eval_env=eval_env, env_wrapper=tuner or residual or prior,
                       task_options=task_options, **config)
    click.echo(f"trained {run.steps} steps{stop_note(run)}; checkpoints in {out_dir}")
    if tuner is not None:
        from mskbench.paradigms.cli import report_agentic

        report_agentic(run, tuner)


def _residual_base(task, base, tuner):
    """``train --base``: the residual wrapper and the task option ``base`` (None, None without it)."""
    from mskbench.catalog import task_ids

    residual_task = task in task_ids(family="residual")
    if base is None:
        if residual_task:
            raise click.BadParameter(f"{task} trains a residual over a frozen base policy: give --base RUN",
                                     param_hint="--base")
        return None, None
    if not residual_task:
        names = ", ".join(task_ids(family="residual"))
        raise click.BadParameter(f"--base is for the residual tasks ({names}), not {task}", param_hint="--base")
    if tuner is not None:
        raise click.BadParameter("--base and --agentic cannot be combined", param_hint="--base")
    from mskbench.paradigms.residual import ResidualWrapper, resolve_base

    try:
        return ResidualWrapper(), {"base": resolve_base(base)}
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--base") from None


def _latent_prior(model, tube, other):
    """The latent-action filter of ``train --latent`` (None without it); option errors as usage errors."""
    if model is None:
        if tube is not None:
            raise click.BadParameter("--tube needs --latent MODEL", param_hint="--tube")
        return None
    if other is not None:
        raise click.BadParameter("--latent cannot be combined with --agentic or --base", param_hint="--latent")
    from mskbench.agents.latent.core import DEFAULT_TUBE
    from mskbench.paradigms.latent import LatentPrior

    try:
        return LatentPrior(model, DEFAULT_TUBE if tube is None else tube)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--latent") from None


def _agentic_tuner(agentic, every, timeout, backend):
    """The agentic reward tuner of ``train --agentic`` (None without it); option errors as usage errors."""
    if agentic is None:
        for name, value in (("--agentic-every", every), ("--agentic-timeout", timeout)):
            if value is not None:
                raise click.BadParameter(f"{name} needs --agentic rule|http", param_hint=name)
        return None
    if backend != "cpu":
        raise click.BadParameter("agentic reward tuning trains on --backend cpu", param_hint="--agentic")
    from mskbench.paradigms.agentic import DEFAULT_EVERY_STEPS, DEFAULT_TIMEOUT_S, AgenticTuner

    try:
        return AgenticTuner(agentic, every_steps=every or DEFAULT_EVERY_STEPS,
                            timeout_s=timeout or DEFAULT_TIMEOUT_S)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--agentic") from None


@main.command("export-policy")
@click.argument("run", type=click.Path(exists=True, path_type=Path))
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), required=True,
              help="The policy file to write (.npz).")
@click.option("--overwrite", is_flag=True, help="Replace OUT if it exists.")
def export_policy_cmd(run: Path, out: Path, overwrite: bool):
    """Write the policy of RUN (a run directory, meaning its best.npz, or a checkpoint file) to OUT,
    without the critic, the optimiser state and the RNG key.

    The file is a fraction of the checkpoint's size (Table XVI's Walk networks: 14.3 MB of 80.7 MB),
    evaluates with the same actions (mskbench eval --policy OUT, mskbench mouse eval --policy OUT),
    and cannot be resumed.
    """
    from mskbench.agents.checkpoint import checkpoint_path, export_policy

    try:
        src = checkpoint_path(str(run))
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="RUN") from None
    if src is None:
        raise click.BadParameter(f"{run} is neither a run directory nor a .npz checkpoint", param_hint="RUN")
    if out.suffix != ".npz":
        raise click.BadParameter(f"{out} must end in .npz", param_hint="--out")
    if out.exists() and out.resolve() == src.resolve():
        raise click.BadParameter("OUT is the checkpoint itself; write the policy to another file", param_hint="--out")
    if out.exists() and not overwrite:
        raise click.ClickException(f"{out} exists; pass --overwrite to replace it")
    try:
        export_policy(src, out)
    except (ValueError, KeyError) as exc:
        raise click.ClickException(f"cannot export {src}: {exc}") from None
    click.echo(f"wrote {out} ({out.stat().st_size / 1e6:.1f} MB; the checkpoint {src} is "
               f"{src.stat().st_size / 1e6:.1f} MB)")


@main.command("synergies")
@click.argument("task")
@click.option("--out", type=click.Path(path_type=Path), required=True,
              help="The groups file to write (.json); read back by mskbench.agents.dynsyn.SynergyGroups.from_json.")
@click.option("--steps", type=click.IntRange(min=1), default=None,
              help="Control steps to record, a multiple of the 100-sample correlation window "
                   "[default: 25600, where the DynSyn authors report the grouping converged].")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True,
              help="Seeds the kicks, the starts and the k-medoids restarts.")
@click.option("--groups", "n_groups", type=click.IntRange(min=1), default=None,
              help="Number of groups, shared among the body sides by size [default: 76, MSK-Bench's DynSyn-SAC].")
@click.option("--restarts", type=click.IntRange(min=1), default=None,
              help="k-medoids (FasterPAM) starts per body side [default: 20, DynSyn's].")
@click.option("--force", "--overwrite", "force", is_flag=True, help="Replace OUT if it exists.")
@click.option("--json", "as_json", is_flag=True, help="Print the groups as JSON instead of a table.")
def synergies_cmd(task, out, steps, seed, n_groups, restarts, force, as_json):
    """DynSyn muscle groups of TASK's body, saved to OUT.

    The body is simulated without excitation, its joints kicked to random
    velocities every 10 control steps (root held, contacts off); muscles whose
    lengths move together (cosine similarity of the min-max normalised
    lengths in 100-sample windows) are grouped by k-medoids, each body side on
    its own, so no group mixes left and right muscles (mskbench.agents.dynsyn).
    """
    from mskbench.agents import dynsyn

    names = task_list(task)
    if len(names) != 1:
        raise click.BadParameter("synergies takes one task", param_hint="TASK")
    if out.is_dir():
        raise click.BadParameter(f"{out} is a directory; give a file name ending in .json", param_hint="--out")
    if out.suffix.lower() != ".json":
        raise click.BadParameter(f"{out} must end in .json", param_hint="--out")
    if not out.parent.is_dir():
        raise click.BadParameter(f"directory {out.parent} does not exist", param_hint="--out")
    if out.exists() and not force:
        raise click.UsageError(f"{out} exists; pass --force to replace it")
    steps = dynsyn.DEFAULT_STEPS if steps is None else steps
    if steps % dynsyn.CORRELATION_WINDOW:
        raise click.BadParameter(f"{steps} is not a multiple of the {dynsyn.CORRELATION_WINDOW}-sample "
                                 "correlation window", param_hint="--steps")
    console = make_console()
    with progress_bar(console) as progress:
        jobs = {}

        def report(stage, done, total):
            if stage not in jobs:
                jobs[stage] = progress.add_task(f"{names[0]}: {stage}", total=total)
            progress.update(jobs[stage], completed=done)

        try:
            groups = dynsyn.compute_groups(
                names[0], steps=steps, seed=seed,
                n_groups=dynsyn.DEFAULT_N_GROUPS if n_groups is None else n_groups,
                restarts=dynsyn.RESTARTS if restarts is None else restarts, progress=report)
        except ValueError as exc:
            raise click.UsageError(str(exc)) from None
    try:
        groups.to_json(out, overwrite=force)
    except OSError as exc:
        raise click.ClickException(f"cannot write {out}: {exc}") from None
    if as_json:
        click.echo(json.dumps({"out": str(out), "sizes": groups.sizes, **groups.as_dict()}, indent=2))
        return
    sides = dynsyn.muscle_sides(groups.muscle_names)
    table = Table(title=f"{names[0]} ({groups.params['body']}): {groups.n_groups} DynSyn groups of "
                        f"{groups.n_muscles} muscles, {steps} steps, seed {seed}")
    for col in ("group", "side", "size", "representative", "muscles"):
        table.add_column(col, justify="right" if col in ("group", "size") else "left")
    for g, (rep, members) in enumerate(zip(groups.representative, groups.groups)):
        table.add_row(str(g), sides[rep], str(len(members)), groups.muscle_names[rep],
                      ", ".join(groups.muscle_names[i] for i in members))
    _print_table(table, console)
    sizes = sorted(groups.sizes)
    click.echo(f"wrote {groups.n_groups} groups (sizes {sizes[0]}..{sizes[-1]}, median "
               f"{sizes[len(sizes) // 2]}) to {out}")


#: Output suffixes of ``mskbench render``: a video of one task, or a contact sheet of one or more tasks.
VIDEO_SUFFIXES = (".mp4", ".gif")
SHEET_SUFFIXES = (".png", ".jpg", ".jpeg")


@main.command("report")
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
    Every figure is also written as PNG and SVG under OUT/figures. A section without data says what
    is missing and which command provides it. Needs matplotlib: pip install 'mskbench[report]'.
    """
    try:
        import matplotlib  # noqa: F401  (only checked here; the report modules import it)
    except ImportError:
        raise click.ClickException("the report needs matplotlib: pip install 'mskbench[report]'") from None
    from mskbench.eval.store import StoreError
    from mskbench.report.build import OutDirError, ReportOptions, build_report, check_out_dir

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
        click.echo(f"{len(empty)} of {len(result.sections)} sections have no data ({', '.join(empty)}); "
                   "each says what is missing")
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


@main.command("render")
@click.argument("task", required=False)
@click.option("--all", "all_tasks", is_flag=True,
              help="Every suite task (the paper's 22) in one contact sheet; same as TASK 'all'.")
@click.option("--policy", "policy_name", type=_policy_choice(), default="zero", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, writable=True, path_type=Path), required=True,
              help="A video of one task (.mp4 or .gif), or a contact sheet of one or more tasks (.png or .jpg).")
@click.option("--frames", type=click.IntRange(min=1), default=None,
              help="Contact sheet: frames per task. 1 (default): the initial state, 6 tasks a row. N > 1: a row "
                   "per task, the initial state and N-1 more evenly spaced over --steps control steps of an "
                   "episode under --policy.")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--steps", type=click.IntRange(min=1), default=None,
              help="Control steps to render (default: one episode, up to the task's horizon).")
@click.option("--width", type=click.IntRange(min=16), default=None,
              help="Frame width [default: 640 for a video, 320 per contact-sheet tile].")
@click.option("--height", type=click.IntRange(min=16), default=None,
              help="Frame height [default: 480 for a video, 240 per contact-sheet tile].")
@click.option("--overwrite", is_flag=True, help="Replace OUT if it exists.")
def render_cmd(task: str | None, all_tasks: bool, policy_name: str, out: Path, frames: int | None, seed: int,
               steps: int | None, width: int | None, height: int | None, overwrite: bool) -> None:
    """Render TASK offscreen: one episode to a video, or scenes to a contact sheet.

    \b
    mskbench render Reach --policy random --out reach.mp4     (the task's tracking camera)
    mskbench render --all --frames 1 --out sheet.png         (every task's initial scene, labelled)
    mskbench render Stairs,Hurdle --frames 5 --out strip.png (5 frames of an episode per task)

    A contact sheet frames each scene with a free camera that takes in the body and the task's props
    (mskbench.contact_sheet). Needs 'pip install mskbench[render]'. Without a display, MUJOCO_GL
    defaults to 'osmesa' when OSMesa is installed (Debian: apt-get install libosmesa6); on a GPU machine
    set MUJOCO_GL=egl.
    """
    if all_tasks and task is not None:
        raise click.UsageError(f"give TASK or --all, not both (got TASK {task!r} and --all)")
    if not all_tasks and task is None:
        raise click.UsageError("give a TASK (a task id, a comma-separated list or 'all'; 'mskbench tasks' lists "
                               "them) or --all")
    names = task_list(task if task is not None else "all")
    suffix = out.suffix.lower()
    if suffix not in VIDEO_SUFFIXES + SHEET_SUFFIXES:
        raise click.BadParameter(f"unsupported extension {out.suffix!r}; use .mp4 or .gif (a video of one task) "
                                 f"or .png or .jpg (a contact sheet)", param_hint="--out")
    sheet = suffix in SHEET_SUFFIXES
    if not sheet and len(names) != 1:
        raise click.BadParameter(f"a video shows one task, not {len(names)}; for several tasks write a contact "
                                 f"sheet (--out sheet.png)", param_hint="--out")
    if not sheet and frames is not None:
        raise click.BadParameter("--frames is for a contact sheet (--out .png or .jpg); a video's length is --steps",
                                 param_hint="--frames")
    if out.exists() and not overwrite:
        raise click.UsageError(f"{out} exists; pass --overwrite to replace it")
    gl = os.environ.get("MUJOCO_GL")
    if (gl == "osmesa" or (gl is None and not os.environ.get("DISPLAY"))) and not ctypes.util.find_library("OSMesa"):
        raise click.ClickException(
            "no display and no OSMesa library for offscreen rendering; on Debian/Ubuntu run "
            "'apt-get install libosmesa6' (or set MUJOCO_GL=egl on a machine with a GPU)")
    if sheet:
        _render_sheet(names, out, frames or 1, steps, policy_name, seed, width or 320, height or 240)
        return
    try:
        import imageio.v2 as imageio
    except ImportError:
        raise click.ClickException("rendering needs imageio: pip install 'mskbench[render]'") from None
    from mskbench.envs import MSKEnv
    from mskbench.eval.protocol import load_policy
    from mskbench.policies import as_policy

    width, height = width or 640, height or 480
    console = make_console()
    env = MSKEnv(names[0], render_mode="rgb_array", width=width, height=height)
    try:
        policy = as_policy(load_policy(policy_name, env, seed))
    except ValueError as exc:
        raise click.ClickException(str(exc)) from None
    n = steps or env.task.horizon
    video = []
    try:
        obs, _ = env.reset(seed=seed)
        policy.reset(seed)
        video.append(env.render())
        with progress_bar(console) as progress:
            job = progress.add_task(f"rendering {names[0]}", total=n)
            for _ in range(n):
                obs, _, terminated, truncated, _ = env.step(policy.act(obs))
                video.append(env.render())
                progress.advance(job)
                if terminated or truncated:
                    break
    finally:
        env.close()
    tmp = out.with_name(out.name + ".partial" + out.suffix)
    imageio.mimsave(tmp, video, fps=env.metadata["render_fps"] if suffix == ".mp4" else 50)
    tmp.replace(out)
    console.print(f"wrote {len(video)} frames ({width}x{height}) to {out}")


def _render_sheet(names: list[str], out: Path, frames: int, steps: int | None, policy_name: str, seed: int,
                  width: int, height: int) -> None:
    """``mskbench render`` to a contact sheet: a progress bar on a terminal, a line per task otherwise."""
    try:
        import PIL  # noqa: F401
    except ImportError:
        raise click.ClickException("contact sheets need Pillow: pip install 'mskbench[render]'") from None
    from mskbench.contact_sheet import contact_sheet

    console = make_console()
    with progress_bar(console) as progress:
        job = progress.add_task(f"rendering {len(names)} task{'s' * (len(names) != 1)}", total=len(names))

        def done(name: str) -> None:
            progress.advance(job)
            if not console.is_terminal:
                click.echo(f"rendered {name}", err=True)

        image = contact_sheet(names, frames=frames, steps=steps, policy=policy_name, seed=seed, width=width,
                              height=height, on_task=done)
    tmp = out.with_name(out.name + ".partial" + out.suffix)
    if out.suffix.lower() == ".png":
        image.save(tmp, format="PNG", optimize=True)
    else:
        image.save(tmp, format="JPEG", quality=90)
    tmp.replace(out)
    console.print(f"wrote a contact sheet of {len(names)} task{'s' * (len(names) != 1)} × {frames} "
                  f"frame{'s' * (frames != 1)} ({image.width}x{image.height}) to {out}")


if __name__ == "__main__":
    main()

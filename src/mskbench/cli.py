"""The ``mskbench`` command line.

    mskbench tasks
    mskbench run TASK|all --policy zero|passive|random --episodes N --seed S
    mskbench render TASK --policy random --out video.mp4

Episode ``i`` of a run is reset with seed ``S + i``, so any single episode can
be reproduced on its own.
"""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

import click
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

log = logging.getLogger("mskbench")


def _console() -> Console:
    return Console(stderr=False)


def _progress(console: Console) -> Progress:
    return Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                    TimeElapsedColumn(), console=console, transient=True, disable=not console.is_terminal)


def _task_list(task: str) -> list[str]:
    from mskbench.tasks import REGISTRY, resolve_name

    if task.lower() == "all":
        return list(REGISTRY)
    try:
        return [resolve_name(task)]
    except ValueError as exc:
        raise click.BadParameter(f"{exc} (or 'all')", param_hint="TASK") from None


def _policy_choice():
    from mskbench.policies import BUILTIN_POLICIES

    return click.Choice(BUILTIN_POLICIES)


@click.group()
@click.option("-v", "--verbose", is_flag=True, help="Log progress details to stderr.")
@click.version_option(package_name="mskbench")
def main(verbose: bool) -> None:
    """mskbench: full-body musculoskeletal motor-control benchmark (MyoFullBody, 416 muscles)."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")


@main.command("tasks")
@click.option("--json", "as_json", is_flag=True, help="Print JSON instead of a table.")
def tasks_cmd(as_json: bool) -> None:
    """List the tasks with family, horizon and observation/action sizes."""
    from mskbench.envs import MSKEnv
    from mskbench.tasks import REGISTRY

    console = _console()
    rows = []
    with _progress(console) as progress:
        job = progress.add_task("building environments", total=len(REGISTRY))
        for name, cls in REGISTRY.items():
            env = MSKEnv(name)
            rows.append({
                "task": name,
                "family": cls.family,
                "horizon": cls.horizon,
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


@main.command("run")
@click.argument("task")
@click.option("--policy", "policy_name", type=_policy_choice(), default="zero", show_default=True,
              help="Built-in policy.")
@click.option("--episodes", type=click.IntRange(min=1), default=3, show_default=True)
@click.option("--seed", type=int, default=0, show_default=True, help="Episode i uses seed+i.")
@click.option("--json", "as_json", is_flag=True, help="Print per-episode records as JSON lines.")
def run_cmd(task: str, policy_name: str, episodes: int, seed: int, as_json: bool) -> None:
    """Roll out a built-in policy on TASK (a task id or 'all') and print per-episode results."""
    from mskbench.envs import MSKEnv
    from mskbench.eval import run_episode
    from mskbench.policies import make_policy

    names = _task_list(task)
    console = _console()
    results = []
    with _progress(console) as progress:
        for name in names:
            env = MSKEnv(name)
            policy = make_policy(policy_name, env.action_space.shape[0], seed=seed)
            job = progress.add_task(f"{name} ({policy_name})", total=episodes)
            for i in range(episodes):
                steps = progress.add_task(f"  episode {i}", total=env.task.horizon)
                result = run_episode(env, policy, seed + i,
                                     on_step=lambda e, s=steps: progress.update(s, completed=e.steps))
                progress.remove_task(steps)
                results.append(result)
                progress.advance(job)
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
    console.print(table)


@main.command("render")
@click.argument("task")
@click.option("--policy", "policy_name", type=_policy_choice(), default="zero", show_default=True)
@click.option("--out", type=click.Path(dir_okay=False, writable=True, path_type=Path), required=True,
              help="Output video file (.mp4 or .gif).")
@click.option("--seed", type=int, default=0, show_default=True)
@click.option("--steps", type=click.IntRange(min=1), default=None,
              help="Control steps to render (default: one episode, up to the horizon).")
@click.option("--width", type=click.IntRange(min=16), default=640, show_default=True)
@click.option("--height", type=click.IntRange(min=16), default=480, show_default=True)
@click.option("--overwrite", is_flag=True, help="Replace OUT if it exists.")
def render_cmd(task: str, policy_name: str, out: Path, seed: int, steps: int | None,
               width: int, height: int, overwrite: bool) -> None:
    """Render one episode of TASK offscreen to a video.

    Without a display, MUJOCO_GL defaults to 'osmesa' (Debian: apt-get install
    libosmesa6); on a GPU machine set MUJOCO_GL=egl.
    """
    if "MUJOCO_GL" not in os.environ and not os.environ.get("DISPLAY"):
        if "mujoco" in sys.modules:
            log.warning("mujoco already imported; MUJOCO_GL=osmesa may not take effect")
        os.environ["MUJOCO_GL"] = "osmesa"
    if out.exists() and not overwrite:
        raise click.UsageError(f"{out} exists; pass --overwrite to replace it")
    if out.suffix.lower() not in (".mp4", ".gif"):
        raise click.BadParameter(f"unsupported extension {out.suffix!r}; use .mp4 or .gif", param_hint="--out")
    try:
        import imageio.v2 as imageio
    except ImportError:
        raise click.ClickException("rendering needs imageio: pip install 'mskbench[render]'") from None
    names = _task_list(task)
    if len(names) != 1:
        raise click.BadParameter("render takes one task, not 'all'", param_hint="TASK")
    if os.environ.get("MUJOCO_GL") == "osmesa":
        import ctypes.util

        if ctypes.util.find_library("OSMesa") is None:
            raise click.ClickException(
                "MUJOCO_GL=osmesa but the OSMesa library is not installed; on Debian/Ubuntu run "
                "'apt-get install libosmesa6' (or set MUJOCO_GL=egl on a machine with a GPU)")
    from mskbench.envs import MSKEnv
    from mskbench.policies import make_policy

    console = _console()
    env = MSKEnv(names[0], render_mode="rgb_array", width=width, height=height)
    policy = make_policy(policy_name, env.action_space.shape[0], seed=seed)
    n = steps or env.task.horizon
    frames = []
    try:
        obs, _ = env.reset(seed=seed)
        frames.append(env.render())
        with _progress(console) as progress:
            job = progress.add_task(f"rendering {names[0]}", total=n)
            for _ in range(n):
                obs, _, terminated, truncated, _ = env.step(policy.act(obs))
                frames.append(env.render())
                progress.advance(job)
                if terminated or truncated:
                    break
    finally:
        env.close()
    tmp = out.with_name(out.name + ".partial" + out.suffix)
    imageio.mimsave(tmp, frames, fps=env.metadata["render_fps"] if out.suffix == ".mp4" else 50)
    tmp.replace(out)
    console.print(f"wrote {len(frames)} frames ({width}x{height}) to {out}")


if __name__ == "__main__":
    main()

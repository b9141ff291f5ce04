"""``mskbench render``: a video of one episode, or a contact sheet of scenes."""

from __future__ import annotations

import ctypes.util
import os
from pathlib import Path

import click

from mskbench.cli.common import make_console, policy_choice, progress_bar, task_list


#: Output suffixes of ``mskbench render``: a video of one task, or a contact sheet of one or more tasks.
VIDEO_SUFFIXES = (".mp4", ".gif")


SHEET_SUFFIXES = (".png", ".jpg", ".jpeg")


@click.command("render")
@click.argument("task", required=False)
@click.option("--all", "all_tasks", is_flag=True,
              help="Every suite task (the paper's 22) in one contact sheet; same as TASK 'all'.")
@click.option("--policy", "policy_name", type=policy_choice(), default="zero", show_default=True)
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
    (mskbench.report.contact_sheet). Needs 'pip install mskbench[render]'. Without a display, MUJOCO_GL
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
    from mskbench.eval.protocol import check_policy_spec

    try:
        check_policy_spec(policy_name, names)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--policy") from None
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
    from mskbench.report.contact_sheet import render_video

    width, height = width or 640, height or 480
    console = make_console()
    with progress_bar(console) as progress:
        job = progress.add_task(f"rendering {names[0]}", total=steps)

        def advance(done: int, total: int) -> None:
            progress.update(job, completed=done, total=total)

        try:
            video, fps = render_video(names[0], steps=steps, policy=policy_name, seed=seed, width=width,
                                      height=height, on_frame=advance)
        except ValueError as exc:
            raise click.ClickException(str(exc)) from None
    tmp = out.with_name(out.name + ".partial" + out.suffix)
    imageio.mimsave(tmp, video, fps=fps if suffix == ".mp4" else 50)
    tmp.replace(out)
    console.print(f"wrote {len(video)} frames ({width}x{height}) to {out}")


def _render_sheet(names: list[str], out: Path, frames: int, steps: int | None, policy_name: str, seed: int,
                  width: int, height: int) -> None:
    """``mskbench render`` to a contact sheet: a progress bar on a terminal, a line per task otherwise."""
    try:
        import PIL  # noqa: F401
    except ImportError:
        raise click.ClickException("contact sheets need Pillow: pip install 'mskbench[render]'") from None
    from mskbench.report.contact_sheet import contact_sheet

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

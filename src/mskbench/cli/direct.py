"""``mskbench direct start|act|report``: direct external control (App. A-F).

    mskbench direct start Walk --seed 0 --hold-steps 20 --dir D     # metadata + observation 0, then pause
    mskbench direct act D action.json                               # validate, replay, hold, next observation
    mskbench direct report D [--reference zero|POLICY|SESSION_DIR] [--json]
"""

from __future__ import annotations

import json
from pathlib import Path

import click

from mskbench.cli.common import task_list


@click.group("direct", short_help="Direct external control: a paused, replayable session driven through files (App. A-F).")
def direct() -> None:
    """Direct external control (App. A-F): a paused, replayable, file-mediated session.

    'start' writes DIR/env_info.json (actuators in action order, bounds, the observation layout after
    Table XVII, timesteps, the hold) and DIR/observations/decision_000.json, then stops. A controller
    reads those two files and writes a bare JSON array with one number in [-1, 1] per muscle; 'act'
    validates it, rebuilds the seeded env, replays the committed actions, holds the new one for
    --hold-steps control steps (checking the fall gate after every step) and writes the next
    observation or the outcome. 'report' gives duration, divergence time and tracking RMSE (Table IV).
    """


@direct.command("start")
@click.argument("task")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="The session directory (must not hold a session yet).")
@click.option("--seed", type=click.IntRange(min=0), default=0, show_default=True, help="Seed of the reset.")
@click.option("--hold-steps", type=click.IntRange(min=1), default=20, show_default=True,
              help="Native control steps (10 ms each) every action is held: 20 = 0.2 s, decisions at 5 Hz.")
@click.option("--max-duration", type=click.FloatRange(min=0.0, min_open=True), default=3.0, show_default=True,
              help="Simulated seconds after which the session ends (also capped by the task's horizon).")
def start_cmd(task: str, directory: Path, seed: int, hold_steps: int, max_duration: float) -> None:
    """Start a direct-control session of TASK in --dir and pause at decision 0."""
    from mskbench.paradigms.direct import DirectSession

    names = task_list(task)
    if len(names) != 1:
        raise click.BadParameter("a session drives one task", param_hint="TASK")
    try:
        session = DirectSession.start(directory, names[0], seed=seed, hold_steps=hold_steps,
                                      max_duration_s=max_duration)
    except FileExistsError as exc:
        raise click.ClickException(str(exc)) from None
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from None
    info = session.info
    click.echo(f"{info['task']} session in {directory}: seed {seed}, {info['action_dim']} muscles, actions held "
               f"{info['hold_s']:g} s, at most {info['max_decisions']} decisions ({info['max_duration_s']:g} s).")
    click.echo(f"read {directory / 'env_info.json'} and {directory / session.manifest['pending_observation']}, "
               f"write a JSON array of {info['action_dim']} numbers in [-1, 1], then: "
               f"mskbench direct act {directory} ACTION.json")


def _open(directory: Path):
    from mskbench.paradigms.direct import DirectSession

    try:
        return DirectSession(directory)
    except (FileNotFoundError, ValueError) as exc:
        raise click.ClickException(str(exc)) from None


@direct.command("act")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.argument("action_file", type=click.Path(dir_okay=False, path_type=Path))
def act_cmd(directory: Path, action_file: Path) -> None:
    """Apply the action in ACTION_FILE to the session in DIRECTORY (a rejected action changes nothing)."""
    from mskbench.paradigms.direct import ActionRejected, SessionComplete

    session = _open(directory)
    k = session.decisions
    try:
        manifest = session.act_file(action_file)
    except ActionRejected as exc:
        raise click.ClickException(f"action rejected, session unchanged: {exc}") from None
    except SessionComplete as exc:
        raise click.ClickException(str(exc)) from None
    except RuntimeError as exc:
        raise click.ClickException(str(exc)) from None
    last = manifest["decisions"][-1]
    if manifest["status"] == "complete":
        out = manifest["outcome"]
        click.echo(f"decision {k} applied; session complete at {out['time_s']:.2f} s: {out['reason']} "
                   f"({out['detail']}). Report: mskbench direct report {directory}")
    else:
        click.echo(f"decision {k} applied; t = {last['time_after_s']:.2f} s; next observation: "
                   f"{directory / manifest['pending_observation']}")


@direct.command("report")
@click.argument("directory", type=click.Path(file_okay=False, path_type=Path))
@click.option("--reference", default="zero", show_default=True,
              help="Reference rollout of the divergence criterion (Eq. 20): a policy (built-in name, checkpoint "
                   "or package.module:factory) run from the same seed, or another session's directory.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def report_cmd(directory: Path, reference: str, as_json: bool) -> None:
    """Duration, divergence time and tracking RMSE of the session in DIRECTORY (Table IV's columns)."""
    session = _open(directory)
    try:
        result = session.report(reference)
    except (ValueError, TypeError, FileNotFoundError) as exc:
        raise click.ClickException(f"cannot report {directory}: {exc}") from None
    if as_json:
        click.echo(json.dumps(result, indent=2))
        return
    rmse = result["tracking_rmse_m"]
    div = result["divergence_s"]
    div_text = f"{div:.2f} s" if div is not None else "N/A"
    if div is None and "absent" in result.get("divergence", {}):
        div_text += f" ({result['divergence']['absent']})"
    elif "reference" in result.get("divergence", {}):
        div_text += f" (reference: {result['divergence']['reference']})"
    out = result["outcome"]
    click.echo(f"{result['task']} seed {result['seed']}: {result['decisions']} decisions, "
               f"{result['native_steps']} native steps")
    click.echo(f"duration        {result['duration_s']:.2f} s")
    click.echo(f"divergence      {div_text}")
    click.echo(f"tracking RMSE   {'N/A' if rmse is None else f'{rmse:.3f} m'}")
    click.echo(f"outcome         {out['reason']} ({out['detail']})")

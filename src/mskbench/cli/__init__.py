"""The ``mskbench`` command line: a module per command group, each a thin layer over library calls.

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
import logging
import os

# MuJoCo fixes its OpenGL backend when it is first imported, so the headless
# default is chosen here, before anything imports it: OSMesa when there is no
# display, MUJOCO_GL is unset and the OSMesa library is installed.
if "MUJOCO_GL" not in os.environ and not os.environ.get("DISPLAY") and ctypes.util.find_library("OSMesa"):
    os.environ["MUJOCO_GL"] = "osmesa"

import click  # noqa: E402

# Every command module imports only click, rich and the light parts of the package at its top (each
# command imports what it runs), so starting the CLI imports no simulator.
from mskbench.cli import direct, evaluate, latent, mouse, render, report, tasks, train  # noqa: E402


@click.group()
@click.option("-v", "--verbose", is_flag=True, help="Log progress details to stderr.")
@click.version_option(package_name="mskbench")
def main(verbose: bool) -> None:
    """mskbench: full-body musculoskeletal motor-control benchmark (MyoFullBody, 416 muscles)."""
    logging.basicConfig(level=logging.INFO if verbose else logging.WARNING,
                        format="%(levelname)s %(name)s: %(message)s")


for command in (tasks.tasks_cmd, tasks.run_cmd, tasks.record_cmd, evaluate.eval_cmd, evaluate.sweep_cmd,
                evaluate.calibrate_cmd, evaluate.leaderboard_cmd, train.train_cmd, train.export_policy_cmd,
                train.synergies_cmd, report.report_cmd, render.render_cmd, mouse.mouse, direct.direct, latent.latent):
    main.add_command(command)

__all__ = ["main"]

"""``mskbench render`` to a contact sheet: the layout, the scene framing and, with OSMesa, every task's first frame.

Rendering needs an OpenGL backend fixed before MuJoCo is imported, so the rendering tests run the command
line in a fresh process (which picks OSMesa by itself on a headless machine); the layout and framing tests
need no OpenGL.
"""

from __future__ import annotations

import ctypes.util
import os
import subprocess
import sys

import numpy as np
import pytest
from click.testing import CliRunner

from mskbench.catalog import suite_ids
from mskbench.cli import main

needs_osmesa = pytest.mark.skipif(ctypes.util.find_library("OSMesa") is None,
                                  reason="OSMesa not installed (apt-get install libosmesa6; .ci/run installs it)")


def _render(args: list[str], tmp_path) -> subprocess.CompletedProcess:
    # A headless machine with nothing set: the CLI must pick OSMesa by itself.
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "MUJOCO_GL")}
    return subprocess.run([sys.executable, "-m", "mskbench.cli", "render", *args], env=env, capture_output=True,
                          text=True, timeout=600, cwd=tmp_path)


@pytest.mark.parametrize("args, message", [
    (["--out", "x.png"], "give a TASK"),
    (["Stand", "--all", "--out", "x.png"], "give TASK or --all, not both"),
    (["--all", "--out", "x.mp4"], "a video shows one task, not 22"),
    (["Stand", "--frames", "2", "--out", "x.mp4"], "--frames is for a contact sheet"),
    (["Stand", "--out", "x.webm"], "use .mp4 or .gif (a video of one task) or .png or .jpg (a contact sheet)"),
    (["Flyy", "--out", "x.png"], "valid tasks: Stand"),
], ids=["no-task", "task-and-all", "video-of-all", "frames-of-video", "extension", "unknown-task"])
def test_render_argument_errors_are_one_line_usage_errors(tmp_path, args, message):
    result = CliRunner().invoke(main, ["render", *[str(tmp_path / a) if a.startswith("x.") else a for a in args]])
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())  # click may wrap the line
    assert not list(tmp_path.iterdir())


def test_frame_steps_start_at_the_initial_state_and_spread_evenly():
    from mskbench.report.contact_sheet import frame_steps

    assert frame_steps(1, 1000) == [0]
    assert frame_steps(5, 1000) == [0, 250, 500, 750, 1000]
    assert frame_steps(3, 5) == [0, 2, 5]
    assert frame_steps(6, 2) == [0, 1, 2]  # never a step twice


def test_compose_lays_out_labelled_tiles_in_rows():
    pytest.importorskip("PIL")
    from mskbench.report.contact_sheet import GAP, Tile, compose, label_band, tile_box

    w, h = 40, 30
    tiles = [Tile(f"T{i}", 0, 0.0, np.full((h, w, 3), 40 * i, np.uint8)) for i in range(5)]
    sheet = np.asarray(compose([[(t, t.task) for t in tiles[:3]], [(t, t.task) for t in tiles[3:]]]))
    band = label_band(h)
    assert sheet.shape == (2 * (h + band + GAP) + GAP, 3 * (w + GAP) + GAP, 3)
    for i, tile in enumerate(tiles):
        x0, y0, x1, y1 = tile_box(i, 3, w, h)
        assert (sheet[y0:y1, x0:x1] == tile.image).all()
        assert sheet[y1:y1 + band, x0:x1].min() < 128  # a label was drawn under it
    x0, y0, x1, y1 = tile_box(5, 3, w, h)
    assert (sheet[y0:y1 + band, x0:x1] == 255).all()  # the sixth place is empty


def test_scene_camera_frames_the_body_and_the_props():
    import mujoco

    from mskbench.report.contact_sheet import scene_camera, scene_points
    from mskbench.envs import MSKEnv

    env = MSKEnv("Stairs")
    try:
        env.reset(seed=0)
        points = scene_points(env)
        assert points[:, 0].max() > 3.0  # the staircase ahead is in the framing
        aspect = 4 / 3
        cam = scene_camera(env, aspect=aspect)
        assert cam.type == mujoco.mjtCamera.mjCAMERA_FREE
        az, el = np.radians(cam.azimuth), np.radians(cam.elevation)
        forward = np.array([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)])
        right = np.array([np.sin(az), -np.cos(az), 0.0])
        up = np.cross(right, forward)
        rel = points - (np.asarray(cam.lookat) - cam.distance * forward)
        depth = rel @ forward
        ty = np.tan(np.radians(env.model.vis.global_.fovy) / 2)
        u, v = (rel @ right) / (depth * ty * aspect), (rel @ up) / (depth * ty)
        assert (depth > 0).all() and np.abs(u).max() <= 1 and np.abs(v).max() <= 1  # all in view
        assert max(np.abs(u).max(), np.abs(v).max()) > 0.85  # and filling it
    finally:
        env.close()


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")  # fork+exec of the CLI, not a bare fork
@needs_osmesa
def test_contact_sheet_of_every_task(tmp_path):
    Image = pytest.importorskip("PIL.Image")
    from mskbench.report.contact_sheet import GAP, label_band, tile_box

    w, h = 64, 48
    proc = _render(["--all", "--frames", "1", "--width", str(w), "--height", str(h), "--out", "sheet.png"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    # Piped output: a line per task as it is rendered.
    assert [line for line in proc.stderr.splitlines() if line.startswith("rendered ")] == [
        f"rendered {name}" for name in suite_ids()]
    sheet = np.asarray(Image.open(tmp_path / "sheet.png").convert("RGB"))
    n = len(suite_ids())
    assert n == 22
    rows = -(-n // 6)
    assert sheet.shape == (rows * (h + label_band(h) + GAP) + GAP, 6 * (w + GAP) + GAP, 3)
    for i, name in enumerate(suite_ids()):
        x0, y0, x1, y1 = tile_box(i, 6, w, h)
        assert sheet[y0:y1, x0:x1].std() > 10, f"{name}'s tile is blank"
        assert sheet[y1:y1 + label_band(h), x0:x1].min() < 128, f"{name}'s tile has no label"
    x0, y0, x1, y1 = tile_box(n, 6, w, h)
    assert (sheet[y0:, x0:] == 255).all()  # nothing after the last task
    # Refuses to overwrite without --overwrite.
    proc = _render(["--all", "--out", "sheet.png"], tmp_path)
    assert proc.returncode != 0 and "exists" in proc.stderr


@pytest.mark.slow
@pytest.mark.filterwarnings("ignore:os.fork:RuntimeWarning")
@needs_osmesa
def test_contact_sheet_with_several_frames_is_a_row_per_task(tmp_path):
    Image = pytest.importorskip("PIL.Image")
    from mskbench.report.contact_sheet import GAP, label_band, tile_box

    w, h = 64, 48
    proc = _render(["Catch,Stand", "--frames", "3", "--steps", "4", "--policy", "random", "--width", str(w),
                    "--height", str(h), "--out", "strip.jpg"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    sheet = np.asarray(Image.open(tmp_path / "strip.jpg").convert("RGB")).astype(float)
    assert sheet.shape == (2 * (h + label_band(h) + GAP) + GAP, 3 * (w + GAP) + GAP, 3)
    for row in range(2):
        crops = [sheet[y0:y1, x0:x1] for x0, y0, x1, y1 in (tile_box(3 * row + c, 3, w, h) for c in range(3))]
        assert all(c.std() > 10 for c in crops)
    # The episode moves on between the first and the last frame (the cube flies, the body moves).
    first, last = (sheet[y0:y1, x0:x1] for x0, y0, x1, y1 in (tile_box(0, 3, w, h), tile_box(2, 3, w, h)))
    assert np.abs(first - last).mean() > 0.5

"""Contact sheets: the first frames of tasks, tiled and labelled in one image (``mskbench render --all``).

Each scene is seen through a free camera framed on it (:func:`scene_camera`): it looks at the box that
holds the body and the task's visible props within :data:`PROP_RADIUS_M` of the body, from the task's
view in :data:`SCENE_VIEWS` (azimuth, elevation; :data:`DEFAULT_VIEW` otherwise), at the distance that
fits the whole box in the image. The camera is fixed at the first frame, so later frames show the body
moving through the scene.

Rendering needs an OpenGL backend chosen before MuJoCo is imported (``MUJOCO_GL=osmesa`` on a machine
without a display, as the command line sets); composing needs Pillow (``pip install 'mskbench[render]'``).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import mujoco
    from PIL import Image

    from mskbench.envs import MSKEnv

#: Props farther than this (horizontally) from the body's root are left out of the framing (a slide or
#: a row of hurdles runs on for metres; the sheet shows its start).
PROP_RADIUS_M = 4.0
#: The camera's (azimuth, elevation) in degrees, MuJoCo's free-camera convention: the body faces +x,
#: azimuth 90 looks along +y at its right side, 60 from behind its right shoulder; negative elevation
#: looks down.
DEFAULT_VIEW = (60.0, -20.0)
#: Scenes a different view shows better.
SCENE_VIEWS: dict[str, tuple[float, float]] = {
    "Sit": (110.0, -15.0),         # the chair behind the body, from its right front
    "WalkAndSit": (110.0, -15.0),  # the chair behind the start
    "OpenDoor": (35.0, -15.0),     # the door's face, past the body's right shoulder
    "WalkTurn": (60.0, -45.0),     # the obstacles around the start, from above
    "PoleWalk": (60.0, -40.0),     # the ring of poles, from above
    "Crawl": (60.0, -30.0),        # the body lying face down, from higher
    "ChinUp": (30.0, -10.0),       # the bar above the head, across the view
}


@dataclass(frozen=True)
class Tile:
    """One rendered frame: the task, its control step and time, and the RGB image (H, W, 3)."""

    task: str
    step: int
    time_s: float
    image: np.ndarray
    ended: bool = False  #: the episode had ended before the step asked for: ``image`` is its last frame


def _descendants(model: mujoco.MjModel, root: int) -> np.ndarray:
    """A mask over bodies: ``root`` and every body under it."""
    mask = np.zeros(model.nbody, bool)
    for b in range(model.nbody):
        x = b
        while x > 0 and x != root:
            x = model.body_parentid[x]
        mask[b] = x == root
    return mask


def _geom_corners(model: mujoco.MjModel, data: mujoco.MjData, geoms: np.ndarray) -> np.ndarray:
    """The 8 world-frame corners of each geom's bounding box, stacked as (8·len(geoms), 3)."""
    if len(geoms) == 0:
        return np.zeros((0, 3))
    signs = np.array([[sx, sy, sz] for sx in (-1, 1) for sy in (-1, 1) for sz in (-1, 1)], float)
    aabb = model.geom_aabb[geoms]                                   # local centre (3), half-size (3)
    local = aabb[:, None, :3] + signs[None] * aabb[:, None, 3:]     # (n, 8, 3)
    rot = data.geom_xmat[geoms].reshape(-1, 3, 3)
    world = np.einsum("nij,nkj->nki", rot, local) + data.geom_xpos[geoms][:, None, :]
    return world.reshape(-1, 3)


def scene_points(env: MSKEnv, radius_m: float = PROP_RADIUS_M) -> np.ndarray:
    """Points whose box the camera frames: the corners of the body's visible geoms and of the task's
    visible props, the props clipped to ``radius_m`` (horizontally) around the body's root."""
    import mujoco

    model, data = env.model, env.data
    root = model.body(env.task.body.root).id
    on_body = _descendants(model, root)[model.geom_bodyid]
    visible = (model.geom_group < 3) & (model.geom_rgba[:, 3] > 0) & (model.geom_type != mujoco.mjtGeom.mjGEOM_PLANE)
    body = _geom_corners(model, data, np.flatnonzero(visible & on_body))
    props = _geom_corners(model, data, np.flatnonzero(visible & ~on_body))
    centre = data.xpos[root]
    lo, hi = body.min(axis=0), body.max(axis=0)
    # A stage around the body as wide as the body is long, so that a scene without props keeps the
    # body's scale (for MyoFullBody about 1.8 m square).
    half = float(np.max(hi - lo)) / 2
    stage = np.array([[centre[0] + dx, centre[1] + dy, lo[2]] for dx in (-half, half) for dy in (-half, half)])
    if len(props):
        props = props.copy()
        props[:, :2] = np.clip(props[:, :2], centre[:2] - radius_m, centre[:2] + radius_m)
        props[:, 2] = np.clip(props[:, 2], min(0.0, lo[2]), hi[2] + 1.0)
    return np.concatenate([body, stage, props])


def scene_camera(env: MSKEnv, view: tuple[float, float] | None = None, aspect: float = 4 / 3,
                 margin: float = 1.1) -> mujoco.MjvCamera:
    """A free camera that sees all of :func:`scene_points` from ``view`` = (azimuth, elevation) in degrees
    (default: the task's entry in :data:`SCENE_VIEWS`, else :data:`DEFAULT_VIEW`), in an image of width
    ``aspect`` × height, with ``margin`` to spare."""
    import mujoco

    azimuth, elevation = view or SCENE_VIEWS.get(env.task.name, DEFAULT_VIEW)
    az, el = np.radians(azimuth), np.radians(elevation)
    forward = np.array([np.cos(el) * np.cos(az), np.cos(el) * np.sin(az), np.sin(el)])
    right = np.array([np.sin(az), -np.cos(az), 0.0])
    up = np.cross(right, forward)
    ty = np.tan(np.radians(env.model.vis.global_.fovy) / 2)
    tx = ty * aspect
    points = scene_points(env)
    lookat = (points.min(axis=0) + points.max(axis=0)) / 2
    distance = 1.0
    for _ in range(4):  # fit the distance, then centre the projected box; repeat (converges in a few)
        rel = points - lookat
        depth, x, y = rel @ forward, rel @ right, rel @ up
        distance = float(np.max(np.maximum(np.abs(x) / tx, np.abs(y) / ty) - depth)) * margin
        z = distance + depth
        u, v = x / (z * tx), y / (z * ty)
        lookat = lookat + distance * ((u.max() + u.min()) / 2 * tx * right + (v.max() + v.min()) / 2 * ty * up)
    cam = mujoco.MjvCamera()
    cam.type = mujoco.mjtCamera.mjCAMERA_FREE
    cam.lookat[:] = lookat
    cam.distance = distance
    cam.azimuth, cam.elevation = float(azimuth), float(elevation)
    return cam


def frame_steps(frames: int, steps: int) -> list[int]:
    """The control steps a task's ``frames`` tiles show: 0 (the initial state) and then evenly spaced up
    to ``steps`` (``[0]`` for one frame)."""
    if frames == 1:
        return [0]
    return sorted({round(i * steps / (frames - 1)) for i in range(frames)})


def render_task(task: str, *, frames: int = 1, steps: int | None = None, policy: str = "zero", seed: int = 0,
                width: int = 320, height: int = 240, view: tuple[float, float] | None = None) -> list[Tile]:
    """Render ``task``'s initial state (reset with ``seed``) and, for ``frames`` > 1, the states at
    :func:`frame_steps` control steps of an episode under the built-in ``policy`` (``steps`` defaults to
    the task's horizon). If the episode ends first, the remaining tiles repeat its last frame, marked
    ``ended``."""
    from mskbench.envs import MSKEnv
    from mskbench.eval.episodes import Step, play_episode
    from mskbench.eval.protocol import load_policy

    env = MSKEnv(task, render_mode="rgb_array", width=width, height=height)
    try:
        wanted = frame_steps(frames, steps or env.task.horizon)
        policy_ = load_policy(policy, env, seed)
        images: dict[int, np.ndarray] = {}

        def record(env: MSKEnv, step: Step | None) -> None:
            if step is None:
                env.render_camera = scene_camera(env, view, aspect=width / height)
                images[0] = env.render()
            elif step.index in wanted or step.terminated or step.truncated:
                images[step.index] = env.render()

        last = play_episode(env, policy_, seed, record, max_steps=wanted[-1]).steps
        dt = env.sim.control_dt_s
        return [Tile(env.task.name, min(target, last), min(target, last) * dt, images[min(target, last)],
                     ended=last < target) for target in wanted]
    finally:
        env.close()


def render_video(task: str, *, steps: int | None = None, policy: str = "zero", seed: int = 0,
                 width: int = 640, height: int = 480,
                 on_frame: Callable[[int, int], None] | None = None) -> tuple[list, float]:
    """The frames of one episode of ``task`` (reset with ``seed``) under ``policy`` (as ``mskbench eval
    --policy``): the initial state, then one frame per control step up to ``steps`` (default: the
    task's horizon) or the episode's end; and the environment's frame rate. ``on_frame(done, total)``
    is called after each step's frame with the steps taken and the steps asked for (a progress bar). Raises ValueError for a policy the task cannot take.
    """
    from mskbench.envs import MSKEnv
    from mskbench.eval.episodes import Step, play_episode
    from mskbench.eval.protocol import load_policy

    env = MSKEnv(task, render_mode="rgb_array", width=width, height=height)
    try:
        act = load_policy(policy, env, seed)
        video: list = []
        total = steps or env.task.horizon

        def record(env: MSKEnv, step: Step | None) -> None:
            video.append(env.render())
            if step is not None and on_frame is not None:
                on_frame(step.index, total)

        play_episode(env, act, seed, record, max_steps=total)
        return video, float(env.metadata["render_fps"])
    finally:
        env.close()


#: Pixels between tiles and around the sheet.
GAP = 4


def _font_size(height: int) -> int:
    return max(11, height // 13)


def _font(size: int):
    from PIL import ImageFont

    return ImageFont.load_default(size=size)  # Pillow >= 10.1: its scalable FreeType font


def label_band(height: int) -> int:
    """The height in pixels of the label band under each tile of a sheet of ``height``-pixel tiles."""
    return int(_font_size(height) * 1.6)


def tile_box(index: int, columns: int, width: int, height: int) -> tuple[int, int, int, int]:
    """The (left, top, right, bottom) pixels of tile ``index`` (row-major, ``columns`` a row) of a sheet."""
    r, c = divmod(index, columns)
    x, y = GAP + c * (width + GAP), GAP + r * (height + label_band(height) + GAP)
    return x, y, x + width, y + height


def tile_label(tile: Tile, frames: int) -> str:
    """The caption under a tile: the task, and for several frames per task the step and time."""
    if frames == 1:
        return tile.task
    note = " (ended)" if tile.ended else ""
    return f"{tile.task}  step {tile.step}, {tile.time_s:.2f} s{note}"


def compose(rows: Sequence[Sequence[tuple[Tile, str]]]) -> Image.Image:
    """Lay out ``rows`` of (tile, label): each frame with its label centred in a white band beneath
    (:func:`tile_box`), the sheet as wide as the longest row."""
    from PIL import Image, ImageDraw

    h, w = rows[0][0][0].image.shape[:2]
    size, band = _font_size(h), label_band(h)
    columns = max(len(row) for row in rows)
    sheet = Image.new("RGB", (columns * (w + GAP) + GAP, len(rows) * (h + band + GAP) + GAP), "white")
    draw = ImageDraw.Draw(sheet)
    for r, row in enumerate(rows):
        for c, (tile, label) in enumerate(row):
            x, y, _, bottom = tile_box(r * columns + c, columns, w, h)
            sheet.paste(Image.fromarray(tile.image), (x, y))
            font = _font(size)
            while font.getlength(label) > w - 2 and font.size > 6:  # a long label in a narrow tile: smaller
                font = _font(font.size - 1)
            draw.text((x + w / 2, bottom + band / 2), label, fill="black", font=font, anchor="mm")
    return sheet


def contact_sheet(tasks: Sequence[str], *, frames: int = 1, steps: int | None = None, policy: str = "zero",
                  seed: int = 0, width: int = 320, height: int = 240, columns: int = 6,
                  on_task: Callable[[str], None] | None = None) -> Image.Image:
    """One image of ``tasks``' scenes: with ``frames`` = 1, their initial frames in rows of ``columns``
    (6: the suite's 6 stabilization, 6 locomotion and 10 interaction tasks fall into rows by family);
    with ``frames`` > 1, one row per task of its frames at :func:`frame_steps`. ``on_task`` is called
    with each task's name once it is rendered."""
    per_task: list[list[tuple[Tile, str]]] = []
    for task in tasks:
        tiles = render_task(task, frames=frames, steps=steps, policy=policy, seed=seed, width=width, height=height)
        per_task.append([(t, tile_label(t, frames)) for t in tiles])
        if on_task is not None:
            on_task(task)
    if frames > 1:
        return compose(per_task)
    flat = [row[0] for row in per_task]
    return compose([flat[i:i + columns] for i in range(0, len(flat), columns)])

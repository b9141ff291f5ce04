"""The walker on a route: gait tasks whose goal is a place, not a speed.

:class:`Routed` walks the gait layer (:class:`mskbench.control.walking.Walking`) from a start at rest
through a list of waypoints: its velocity goal points from the centre of mass to the next waypoint, at
``walk_speed`` reached over ``ramp_s``, slowing within ``slow_m`` of the last; the heading turns towards
it (``turn_rate``) and the body walks where it faces, slower the further it faces from the waypoint. A
waypoint within ``waypoint_radius_m`` counts as passed. The expert is privileged: it reads the scene (poles,
obstacles, waypoints) from the task.
"""

from __future__ import annotations

import numpy as np

from mskbench.control.expert import Context
from mskbench.control.walking import Walking


class Routed(Walking):
    """Walk from rest through :meth:`route`'s waypoints, then stop at the last."""

    walk_speed = 0.8
    ramp_s = 1.0
    #: The hip strategy in full: the centre-of-mass acceleration the pressure law asks for beyond the stance
    #: foot (sideways, a foot's contact points leave little room) is asked of the trunk and limbs.
    beyond_support = 1.0
    waypoint_radius_m = 0.3
    slow_m = 0.5
    #: The share of the speed kept while the heading is far from the waypoint's direction.
    turning_share = 0.3

    def route(self, ctx: Context) -> list[np.ndarray]:
        raise NotImplementedError

    def reset(self, ctx: Context) -> None:
        super().reset(ctx)
        self.elapsed_s = 0.0
        self.points = [np.asarray(p, float) for p in self.route(ctx)]
        self.waypoint = 0

    def course(self, ctx: Context, com: np.ndarray) -> tuple[float, np.ndarray]:
        self.elapsed_s += ctx.control_dt_s
        last = len(self.points) - 1
        while self.waypoint < last and np.linalg.norm(self.points[self.waypoint] - com[:2]) < self.waypoint_radius_m:
            self.waypoint += 1
        to = self.points[self.waypoint] - com[:2]
        dist = float(np.linalg.norm(to))
        speed = self.walk_speed * min(self.elapsed_s / self.ramp_s, 1.0)
        if self.waypoint == last:
            speed *= min(dist / self.slow_m, 1.0)
        heading = float(np.arctan2(to[1], to[0])) if dist > 0.05 else self.heading
        # walk where the body faces (the heading turns towards the waypoint at ``turn_rate``), slower while
        # it faces away from it
        facing, err = self.turned(ctx, heading)
        self.speed = speed * max(float(np.cos(err)), self.turning_share)
        return heading, self.speed * np.array([np.cos(facing), np.sin(facing)])


class PoleWalk(Routed):
    """PoleWalk: between the poles, through the gap beside the one straight ahead, past the success line."""

    tasks = ("PoleWalk",)
    #: The lane's offset from the start's line (m): halfway between the pole ahead and those beside it.
    lane_m = 0.4
    #: How far past the start the route ends (m).
    end_m = 2.2
    #: Straight ahead for ``straight_m`` before turning into the lane, reached ``lane_at_m`` past the start.
    straight_m = 0.5
    lane_at_m = 1.3

    def route(self, ctx: Context) -> list[np.ndarray]:
        x0, y0 = (float(v) for v in ctx.d.xpos[self.pelvis][:2])
        return [np.array([x0 + self.straight_m, y0]), np.array([x0 + self.lane_at_m, y0 + self.lane_m]),
                np.array([x0 + self.end_m, y0 + self.lane_m])]


class WalkTurn(Routed):
    """WalkTurn: the episode's waypoints in turn (read from the task state), each leg bent round any obstacle
    it would pass within ``clearance_m`` of (a via point beside the obstacle's nearest point)."""

    tasks = ("WalkTurn",)
    clearance_m = 0.8

    def route(self, ctx: Context) -> list[np.ndarray]:
        from mskbench.tasks.walk_turn import OBSTACLES

        points = [np.asarray(p, float) for p in ctx.task_state["waypoints"]]
        here = np.asarray(ctx.d.xpos[self.pelvis][:2], float)
        out = []
        for p in points:
            out.extend(detour(here, p, OBSTACLES, self.clearance_m))
            out.append(p)
            here = p
        return out


def detour(a: np.ndarray, b: np.ndarray, centres: np.ndarray, clearance_m: float) -> list[np.ndarray]:
    """Via points that keep the leg ``a`` → ``b`` at least ``clearance_m`` from every centre in ``centres``:
    for the nearest centre the straight leg passes too close to, one point ``clearance_m`` from it, beside
    the leg's nearest point (on the leg's side of it); none when the leg is clear."""
    ab = b - a
    length2 = float(ab @ ab)
    if length2 < 1e-12:
        return []
    best = None
    for c in np.asarray(centres, float):
        s = float(np.clip((c - a) @ ab / length2, 0.0, 1.0))
        near = a + s * ab
        gap = float(np.linalg.norm(near - c))
        if gap < clearance_m and 0.0 < s < 1.0 and (best is None or s < best[0]):
            best = (s, near, c, gap)
    if best is None:
        return []
    _, near, c, gap = best
    away = near - c if gap > 1e-9 else np.array([-ab[1], ab[0]]) / np.sqrt(length2)
    return [c + away / np.linalg.norm(away) * clearance_m]


__all__ = ["PoleWalk", "Routed", "WalkTurn", "detour"]

"""The gait layer's pieces: footholds from the divergent component of motion, the swing foot's path and
the contact schedule.

Linear inverted pendulum, ``ω = √(g / z)``: the divergent component of motion (DCM, the capture point)
``ξ = x + ẋ/ω`` moves away from the centre of pressure ``p`` as ``ξ̇ = ω (ξ − p)``, so with the pressure
held at the stance foot ``p`` for the rest of a step ``T``, the step ends with ``ξ_T = p + (ξ − p) e^{ωT}``
(:func:`dcm_at_step_end`). A walk at speed ``v`` with steps of length ``L = v T_step`` and width ``W``
has, at every touchdown, its DCM offset from the new stance foot by
``b = (L / (e^{ωT_step} − 1), ∓W / (e^{ωT_step} + 1))`` (towards the midline), the
offsets that repeat step after step (Englsberger et al. 2015); placing the next foot at ``ξ_T − b``
(:func:`next_foothold`) steers the measured DCM back onto that cycle in one step — the rule re-plans
every control step from the measured state.

The swing foot moves on a minimum-jerk path from where it lifted to its foothold, raised by a bump of
``apex_m`` at mid-swing (:func:`swing_point`). :class:`ContactSchedule` switches single support to double
support when the swing time is up or the swing foot has landed (its measured load), and double support
to the next single support after a fixed time.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mskbench.control.balance import GRAVITY, omega  # noqa: F401  (the pendulum's, re-exported for the gait layer)


def dcm(com_xy: np.ndarray, com_vel_xy: np.ndarray, w: float) -> np.ndarray:
    """The divergent component of motion ``ξ = x + ẋ/ω`` (horizontal)."""
    return np.asarray(com_xy, float) + np.asarray(com_vel_xy, float) / w


def dcm_at_step_end(xi: np.ndarray, stance_xy: np.ndarray, w: float, remaining_s: float) -> np.ndarray:
    """Where the DCM ``xi`` will be after ``remaining_s`` with the centre of pressure held at ``stance_xy``."""
    stance_xy = np.asarray(stance_xy, float)
    return stance_xy + (np.asarray(xi, float) - stance_xy) * np.exp(w * max(remaining_s, 0.0))


def steady_offset(speed_mps: float, step_s: float, width_m: float, w: float, left_stance: bool) -> np.ndarray:
    """The DCM's offset from the stance foot at its touchdown in a steady walk (body frame: x forward,
    y left): ``(v T / (e^{ωT} − 1), ∓W / (e^{ωT} + 1))`` — towards the midline: to the right of a left
    foot (``left_stance``), to the left of a right one."""
    e = np.exp(w * step_s)
    return np.array([speed_mps * step_s / (e - 1.0), (-1.0 if left_stance else 1.0) * width_m / (e + 1.0)])


def next_foothold(xi: np.ndarray, stance_xy: np.ndarray, w: float, remaining_s: float, offset_xy: np.ndarray,
                  heading_rad: float = 0.0) -> np.ndarray:
    """The foothold that puts the DCM at ``offset_xy`` (body frame, rotated by ``heading_rad``) from the next
    stance foot at touchdown: ``ξ_T − R(heading) b``."""
    c, s = np.cos(heading_rad), np.sin(heading_rad)
    b = np.array([[c, -s], [s, c]]) @ np.asarray(offset_xy, float)
    return dcm_at_step_end(xi, stance_xy, w, remaining_s) - b


def min_jerk(s: float) -> tuple[float, float, float]:
    """The minimum-jerk blend at phase ``s`` ∈ [0, 1] and its first and second derivatives in ``s``."""
    s = float(np.clip(s, 0.0, 1.0))
    return (s**3 * (10.0 - 15.0 * s + 6.0 * s * s), 30.0 * s * s * (1.0 - s) ** 2,
            60.0 * s * (1.0 - s) * (1.0 - 2.0 * s))


def swing_point(start: np.ndarray, goal: np.ndarray, s: float, duration_s: float,
                apex_m: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The swing foot's position, velocity and acceleration at phase ``s`` of a swing of ``duration_s``:
    minimum jerk from ``start`` to ``goal`` (3-D), plus ``apex_m · sin²(π s)`` in height (zero height and
    vertical speed at lift-off and touchdown)."""
    start, goal = np.asarray(start, float), np.asarray(goal, float)
    blend, dblend, ddblend = min_jerk(s)
    s = float(np.clip(s, 0.0, 1.0))
    pos = start + blend * (goal - start)
    vel = dblend * (goal - start) / duration_s
    acc = ddblend * (goal - start) / duration_s**2
    pos[2] += apex_m * np.sin(np.pi * s) ** 2
    vel[2] += apex_m * np.pi * np.sin(2.0 * np.pi * s) / duration_s
    acc[2] += apex_m * 2.0 * np.pi**2 * np.cos(2.0 * np.pi * s) / duration_s**2
    return pos, vel, acc


@dataclass
class ContactSchedule:
    """Single support on one foot, then double support, then single support on the other.

    ``phase`` is ``"single"`` or ``"double"``, ``stance`` the supporting side in single support
    (``"l"``/``"r"``; in double support, the side that will stance next), ``elapsed_s`` the time in the
    phase. :meth:`advance` moves it one control step on, given whether the swing foot carries load."""

    single_s: float = 0.45
    double_s: float = 0.1
    #: The swing foot counts as landed once it carries this share of body weight, after this share of the swing.
    landing_load: float = 0.2
    landing_after: float = 0.6
    phase: str = "single"
    stance: str = "r"
    elapsed_s: float = 0.0

    @property
    def swing(self) -> str:
        return "l" if self.stance == "r" else "r"

    @property
    def swing_phase(self) -> float:
        """The swing's phase in [0, 1] (1 in double support)."""
        return min(self.elapsed_s / self.single_s, 1.0) if self.phase == "single" else 1.0

    def remaining_s(self) -> float:
        """Time left before the swing foot lands (0 in double support)."""
        return max(self.single_s - self.elapsed_s, 0.0) if self.phase == "single" else 0.0

    def advance(self, dt_s: float, swing_load: float) -> bool:
        """One control step on; ``swing_load`` is the swing foot's load as a share of body weight. Returns
        whether the phase changed."""
        self.elapsed_s += dt_s
        if self.phase == "single":
            landed = self.swing_phase >= self.landing_after and swing_load >= self.landing_load
            if landed or self.elapsed_s >= self.single_s - 1e-9:
                self.phase, self.stance, self.elapsed_s = "double", self.swing, 0.0
                return True
        elif self.elapsed_s >= self.double_s - 1e-9:
            self.phase, self.elapsed_s = "single", 0.0
            return True
        return False

"""CPU backend: MuJoCo C through the ``mujoco`` Python bindings."""

from __future__ import annotations

import logging

import mujoco
import numpy as np

from mskbench.body.base import BodyHandles
from mskbench.sim.state import StateView

log = logging.getLogger(__name__)


def _route_mujoco_warnings() -> None:
    """Send MuJoCo warnings to ``logging`` instead of ``MUJOCO_LOG.TXT`` in the cwd.

    Only when no handler is installed yet, so a user's own handler wins.
    """
    if mujoco.get_mju_user_warning() is None:
        mujoco.set_mju_user_warning(lambda msg: log.warning("MuJoCo: %s", msg))


_UNSTABLE_WARNINGS = (
    mujoco.mjtWarning.mjWARN_BADQACC,
    mujoco.mjtWarning.mjWARN_BADQPOS,
    mujoco.mjtWarning.mjWARN_BADQVEL,
)


class CpuSimulator:
    """One MuJoCo world: reset to a state, step with a muscle excitation, view.

    MuJoCo resets the data by itself when it meets a non-finite or exploding
    acceleration and only counts a warning; :meth:`step` reports that (and any
    non-finite state) as instability so the episode can end instead of
    silently continuing from the reset pose.
    """

    def __init__(self, model: mujoco.MjModel, handles: BodyHandles, frame_skip: int):
        if frame_skip < 1:
            raise ValueError(f"frame_skip must be >= 1, got {frame_skip}")
        _route_mujoco_warnings()
        self.model = model
        self.data = mujoco.MjData(model)
        self.handles = handles
        self.frame_skip = int(frame_skip)
        m = handles.muscle_ids
        self._gain0 = model.actuator_gainprm[m, 2].copy()
        self._bias0 = model.actuator_biasprm[m, 2].copy()

    @property
    def control_dt_s(self) -> float:
        return self.frame_skip * float(self.model.opt.timestep)

    def set_muscle_gain_scale(self, scale: np.ndarray | None) -> None:
        """Scale each muscle's peak force F0 (active and passive) by ``scale``.

        ``None`` restores the compiled values exactly (they are copied back,
        never divided out).
        """
        m = self.handles.muscle_ids
        self.model.actuator_gainprm[m, 2] = self._gain0
        self.model.actuator_biasprm[m, 2] = self._bias0
        if scale is not None:
            self.model.actuator_gainprm[m, 2] = self._gain0 * scale
            self.model.actuator_biasprm[m, 2] = self._bias0 * scale

    def reset(self, qpos: np.ndarray, qvel: np.ndarray) -> None:
        mujoco.mj_resetData(self.model, self.data)
        self.data.qpos[:] = qpos
        self.data.qvel[:] = qvel
        mujoco.mj_forward(self.model, self.data)

    #: What :meth:`get_state` / :meth:`set_state` carry: everything the next step depends on
    #: (the full physics state and the constraint solver's warm start).
    STATE_SPEC = int(mujoco.mjtState.mjSTATE_FULLPHYSICS) | int(mujoco.mjtState.mjSTATE_WARMSTART)

    def state_size(self) -> int:
        return int(mujoco.mj_stateSize(self.model, self.STATE_SPEC))

    def get_state(self) -> np.ndarray:
        """The full physics state (time, qpos, qvel, act, mocap, ...) and the warm start, as float64."""
        out = np.empty(self.state_size())
        mujoco.mj_getState(self.model, self.data, out, self.STATE_SPEC)
        return out

    def set_state(self, state: np.ndarray) -> None:
        """Load a state from :meth:`get_state`, ready for :meth:`step` (which computes the derived
        quantities itself; they are stale until then).

        The warning counters are cleared, so :meth:`step` reports only what
        happens after this state.
        """
        mujoco.mj_setState(self.model, self.data, np.asarray(state, np.float64), self.STATE_SPEC)
        self.data.warning.number[:] = 0

    def step(self, ctrl: np.ndarray) -> bool:
        """Hold ``ctrl`` for ``frame_skip`` physics steps; False if the physics went unstable."""
        d = self.data
        d.ctrl[:] = ctrl
        mujoco.mj_step(self.model, d, nstep=self.frame_skip)
        for w in _UNSTABLE_WARNINGS:
            if d.warning[w].number:
                return False
        return bool(np.isfinite(d.qpos).all() and np.isfinite(d.qvel).all() and np.isfinite(d.act).all())

    def view(self) -> StateView:
        return StateView(self.data, self.handles, np)

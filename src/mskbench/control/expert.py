"""The expert policy: a task behaviour's targets, the whole-body muscle QP, the excitations.

It is a *privileged* controller: it reads the simulator (the model, the contacts, the props and the
task's own state), which no learned policy may. Its proprioception — the body's joint positions and
velocities and the muscle activations — is read from the observation, so observation noise acts on
what it believes about its own body (root x, y are not observed; it reads them from the simulator).
Its model of the muscles starts as the nominal one; a dynamics perturbation (muscle gains scaled per
episode) is not told to it, and it reads each muscle's strength off the forces the observation carries
(:mod:`mskbench.control.strength`; ``estimate_strength=False``: the nominal model throughout).
"""

from __future__ import annotations

import copy
from typing import TYPE_CHECKING, Any

import numpy as np

from mskbench.control.qp import Solution, Targets, WholeBodyQP, Weights
from mskbench.control.filtering import ObservationFilter
from mskbench.control.strength import StrengthEstimate
from mskbench.envs.action_map import action_for, excitation_range

if TYPE_CHECKING:
    from mskbench.tasks.base import InitContext


class Context:
    """What a behaviour reads at a control step: the loaded QP (its data ``d`` holds the state the
    controller believes), the environment's task and task state, the episode's start and step."""

    def __init__(self, env, qp: WholeBodyQP):
        self.env = env
        self.qp = qp
        self.task = env.task
        self.start_qpos = np.zeros(qp.m.nq)
        self.start_com = np.zeros(3)
        self.step = 0
        self._poses: InitContext | None = None

    @property
    def poses(self) -> InitContext:
        """Poses by joint name (:meth:`~mskbench.tasks.base.InitContext.pose`, ``joint_qpos_adr``), the tasks' own
        helpers, on the controller's model and a scratch copy of its own (never the environment's)."""
        if self._poses is None:
            import mujoco

            from mskbench.body.base import default_qpos
            from mskbench.tasks.base import InitContext

            m = self.qp.m
            self._poses = InitContext(m, mujoco.MjData(m), self.env.handles, default_qpos(m, self.env.handles),
                                      self.control_dt_s)
        return self._poses

    @property
    def d(self):
        return self.qp.d

    @property
    def task_state(self):
        return self.env.task_state

    @property
    def control_dt_s(self) -> float:
        return float(self.env.control_dt_s)

    def body(self, role_or_name: str) -> int:
        h = self.env.handles
        if role_or_name in h.bodies:
            return int(h.bodies[role_or_name])
        import mujoco

        idx = mujoco.mj_name2id(self.qp.m, mujoco.mjtObj.mjOBJ_BODY, role_or_name)
        if idx < 0:
            raise ValueError(f"the model has no body {role_or_name!r}")
        return int(idx)


class Behaviour:
    """A task's targets for the whole-body QP. Subclasses implement :meth:`targets`."""

    #: Task ids the behaviour serves.
    tasks: tuple[str, ...] = ()
    #: The friction coefficient the QP plans its support forces with (MuJoCo's feet and floor have 1).
    friction = 0.8

    def reset(self, ctx: Context) -> None:
        """An episode starts (the state loaded in ``ctx`` is its first)."""

    def targets(self, ctx: Context) -> Targets:
        raise NotImplementedError

    def limp(self, ctx: Context) -> bool:
        """Whether to control nothing this step (every excitation 0; a cheat probe letting go). Default: never."""
        return False

    def weights(self) -> Weights:
        return Weights()


class ExpertPolicy:
    """``act(obs)`` for an environment (a :class:`~mskbench.envs.MSKEnv` or a wrapper of one) with a
    behaviour; ``last`` holds the last step's :class:`Solution` (reserves, forces) for diagnostics."""

    #: It reads the simulator: the results store records its methods as privileged.
    privileged = True

    def __init__(self, env, behaviour: Behaviour, name: str = "expert", estimate_strength: bool = True,
                 filter_observation: bool = True):
        base = getattr(env, "unwrapped", env)
        self.env = base
        self.name = name
        self.behaviour = behaviour
        self.qp = WholeBodyQP(base.model, base.handles, base.sim.frame_skip, nominal_gain=base.sim._gain0,
                              nominal_bias=base.sim._bias0, weights=behaviour.weights(),
                              friction=behaviour.friction,
                              excitation_range=excitation_range(base.action_map),
                              minor_joints=base.task.body.minor_joints)
        self.ctx = Context(base, self.qp)
        layout = base.obs_layout
        self._qpos_slice, self._qvel_slice = layout["qpos"], layout["qvel"]
        self._act_slice = layout["muscle_activation"]
        h = base.handles
        self._nq_body = 2 + (self._qpos_slice.stop - self._qpos_slice.start)
        self._nv_body = self._qvel_slice.stop - self._qvel_slice.start
        self.last: Solution | None = None
        self._started = False
        #: Each muscle's strength read from the observed forces (:mod:`mskbench.control.strength`), or None.
        nominal = copy.copy(self.qp.muscles)  # set_strength replaces the QP's arrays, not these
        self.strength = (StrengthEstimate(nominal, h.muscle_force_nominal, float(base.model.opt.timestep),
                                          substeps=base.sim.frame_skip)
                         if estimate_strength and "muscle_force" in layout else None)
        self._seen_act: np.ndarray | None = None  # the muscles' activations as last observed
        self._sent: np.ndarray | None = None
        #: The state estimate under observation noise (:mod:`mskbench.control.filtering`), or None.
        self.filter = (ObservationFilter(self.qp.m, self._nq_body, self._nv_body, h.couplings, nominal,
                                         h.muscle_act_adr, base.sim.frame_skip)
                       if filter_observation and "muscle_length" in layout else None)

    # -- state -----------------------------------------------------------------------------------
    def _state(self, obs: np.ndarray | None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        d = self.env.data
        qpos, qvel, act = d.qpos.copy(), d.qvel.copy(), d.act.copy()
        if obs is not None:
            obs = np.asarray(obs, np.float64)
            qpos[2:self._nq_body] = obs[self._qpos_slice]
            quat = qpos[3:7]
            qpos[3:7] = quat / max(np.linalg.norm(quat), 1e-9)
            qvel[:self._nv_body] = obs[self._qvel_slice]
            act[self.env.handles.muscle_act_adr] = np.clip(obs[self._act_slice], 0.0, 1.0)
        return qpos, qvel, act

    def reset(self, seed: int | None = None) -> None:
        if self.strength is not None:
            self.strength.reset()
            self.qp.set_strength(None)
        self._sent = self._seen_act = None
        qpos, qvel, act = self._state(None)
        if self.filter is not None:
            self.filter.start(qpos, qvel, act)
        self.qp.load(qpos, qvel, act)
        self.ctx.start_qpos = qpos.copy()
        self.ctx.start_com = self.qp.com()[0]
        self.ctx.step = 0
        self.behaviour.reset(self.ctx)
        self._started = True

    def act(self, obs: np.ndarray) -> np.ndarray:
        if not self._started:
            self.reset()
        qpos, qvel, act = self._state(obs)
        self.qp.load(qpos, qvel, act)
        sigma = 0.0
        if self.filter is not None:
            layout = self.env.obs_layout
            sigma = self.filter.noise_level(obs[layout["muscle_length"]], obs[layout["muscle_velocity"]],
                                            self.qp.d.actuator_length[self.qp.mid])
        if self.strength is not None and sigma < ObservationFilter.threshold:  # noisy forces teach nothing
            self._estimate_strength(np.asarray(obs, np.float64))
        if self.filter is not None:
            filtered = self.filter.estimate(qpos, qvel, act, sigma)
            if sigma >= self.filter.threshold:
                self.qp.load(*filtered)
        limp = self.behaviour.limp(self.ctx)
        if not limp:
            sol = self.qp.solve(self.behaviour.targets(self.ctx))
            self.last = sol
        self.ctx.step += 1
        u = np.zeros(self.env.model.nu)
        if not limp:
            u[self.qp.mid] = sol.excitation
        self._sent = u[self.qp.mid]
        if self.filter is not None:
            self.filter.planned(np.zeros(self.qp.nv) if limp else sol.qacc, self._sent)
        return action_for(u[: self.env.n_muscles], self.env.action_map, np).astype(np.float32)

    def _estimate_strength(self, obs: np.ndarray) -> None:
        """Update the strength estimate from the observation (it follows a step this policy sent) and plan
        with it."""
        seen, previous = np.clip(obs[self._act_slice], 0.0, 1.0), self._seen_act
        self._seen_act = seen
        if self._sent is None:  # the episode's first observation: no step observed yet
            return
        layout = self.env.obs_layout
        assert self.strength is not None
        factors = self.strength.update(obs[layout["muscle_force"]], obs[layout["muscle_length"]],
                                       obs[layout["muscle_velocity"]], seen, self._sent, previous)
        self.qp.set_strength(None if np.all(factors == 1.0) else factors)

    def describe(self) -> dict[str, Any]:
        return {"policy": self.name, "behaviour": type(self.behaviour).__name__}

"""Hard-mode latent-action RL on the batched JAX env: the same map as the CPU wrapper, inside the jitted step.

:class:`LatentBatchedEnv` wraps a :class:`~mskbench.envs.jax_env.TaskJaxEnv` made with
``muscle_moments=True`` (its worlds carry the moment nonzeros on every backend, MJX, MuJoCo Warp or MuJoCo
C; :mod:`mskbench.sim.muscles`). Each step reads every world's S and M
(:meth:`TaskJaxEnv.muscle_features <mskbench.envs.jax_env.TaskJaxEnv.muscle_features>`), maps the
learner's actions with :meth:`LatentModel.hard_filter <mskbench.paradigms.latent.model.LatentModel.hard_filter>`
(Eqs. 23-27, the formulas of :mod:`mskbench.paradigms.latent.core` that the CPU
:class:`~mskbench.paradigms.latent.wrapper.LatentActionMap` evaluates with NumPy), steps the worlds with the
executed actions and, with a penalty schedule, returns ``R − λ_t L_dev`` (Eq. 28).

``λ_t`` needs the training transitions so far inside a jitted rollout, so the wrapper's state is a
:class:`LatentState`: the env's :class:`~mskbench.envs.protocols.State` and a transition counter (int32,
counting ``num_envs`` per step and saturating at the schedule's ``decay_steps``, after which ``λ_t`` stays at
its floor). ``out.reward_terms["latent_deviation"]`` is each world's ``L_dev``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from mskbench.envs.protocols import State, StepOut
from mskbench.envs.wrappers import BatchedWrapper
from mskbench.paradigms.latent.core import DEFAULT_TUBE, PenaltySchedule, env_action, penalized_reward
from mskbench.paradigms.latent.wrapper import MODES, check_tube
from mskbench.sim.muscles import dense_moments, muscle_priors

if TYPE_CHECKING:
    from mskbench.envs.jax_env import TaskJaxEnv
    from mskbench.paradigms.latent.model import LatentModel

#: Name of the per-world ``L_dev`` in ``StepOut.reward_terms``.
DEVIATION_TERM = "latent_deviation"


class LatentState(NamedTuple):
    """The batched env's state and the training transitions counted for ``λ_t`` (a JAX pytree)."""

    inner: State
    transitions: Any  # int32, saturating at the schedule's decay_steps

    @property
    def obs(self) -> Any:
        return self.inner.obs

    @property
    def done(self) -> Any:
        return self.inner.done

    @property
    def steps(self) -> Any:
        return self.inner.steps

    @property
    def worlds(self) -> Any:
        return self.inner.worlds

    @property
    def cursor(self) -> Any:
        return self.inner.cursor

    @property
    def reused(self) -> Any:
        return self.inner.reused


def check_env(env: "TaskJaxEnv", model: "LatentModel") -> None:
    """A clear error when ``env``'s worlds cannot feed ``model``'s decoder."""
    pattern = getattr(env, "moment_pattern", None)
    if pattern is None:
        raise ValueError("latent-action filtering on the batched env needs its worlds' moment matrix: make the "
                         "TaskJaxEnv with muscle_moments=True")
    if env.action_size != model.n_muscles:
        raise ValueError(f"the model decodes {model.n_muscles} muscles; the env acts on {env.action_size}")
    model.check_body(muscle_priors(env.model, env.handles.muscle_ids), pattern.index, env.handles.muscle_names)


class LatentBatchedEnv(BatchedWrapper):
    """A :class:`~mskbench.envs.jax_env.TaskJaxEnv` acting through the latent map (a batched env).

    ``step(state, actions, auto_reset=True, record=False)`` is jitted and may run inside
    ``jax.lax.scan`` (PPO's device rollouts); ``reset``, ``refresh`` and ``reset_to`` return
    :class:`LatentState` s. ``action_size`` is the learner's (muscles for ``mode="hard"``, the latent size
    for ``mode="latent"``). Without a ``schedule`` the reward is the task's (evaluation), as
    :class:`~mskbench.paradigms.latent.wrapper.LatentFilteredEnv`. Everything else (``task``,
    ``termination_names``, ``obs_layout``, ...) is the wrapped env's.
    """

    def __init__(self, env: "TaskJaxEnv", model: "LatentModel", tube: float = DEFAULT_TUBE, mode: str = "hard",
                 schedule: PenaltySchedule | None = None, steps: int = 0):
        import jax
        import jax.numpy as jnp

        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        check_env(env, model)
        super().__init__(env)
        self.model = model
        self.tube = check_tube(tube)
        self.mode = mode
        self.schedule = schedule
        self.action_size = model.n_muscles if mode == "hard" else model.latent_dim
        self._cap = int(schedule.decay_steps) if schedule is not None else 0
        if self._cap > np.iinfo(np.int32).max - env.num_envs:
            raise ValueError(f"decay_steps {self._cap} is too large for the batched transition counter")
        self.steps = 0
        self.set_step(steps)
        self._params = jax.tree_util.tree_map(jnp.asarray, model.params)
        self._map = self._map_fn()
        self.step = jax.jit(self._step, static_argnames=("auto_reset", "record"))  # type: ignore[method-assign]

    def set_step(self, step: int) -> None:
        """Transitions already made (a resumed run); the next :meth:`reset` starts its counter there."""
        if step < 0:
            raise ValueError(f"step must be >= 0, got {step}")
        self.steps = int(step)

    def _map_fn(self):
        """``f(params, actions, S, M nonzeros) -> (env actions, L_dev)`` in JAX."""
        import jax.numpy as jnp

        model = self.model
        index = jnp.asarray(model.moment_index)

        def dense(values):
            return dense_moments(values, index, model.n_muscles, model.config.nv, jnp)

        if self.mode == "hard":
            hard = model.hard_filter()

            def f(params, actions, states, values):
                env, dev, _ = hard(params, actions, states, dense(values), self.tube)
                return env, dev
        else:
            decode = model.decode_fn()

            def f(params, z, states, values):
                prior = decode(params, z, states, dense(values))
                return env_action(prior, jnp), jnp.zeros(z.shape[:-1], jnp.float32)
        return f

    def _counter(self, state: State) -> LatentState:
        import jax.numpy as jnp

        return LatentState(state, jnp.int32(min(self.steps, self._cap)))

    # -- the BatchedEnv interface ----------------------------------------------------------------------
    def reset(self, key: Any) -> LatentState:
        return self._counter(self.env.reset(key))

    def refresh(self, state: LatentState) -> LatentState:
        return state._replace(inner=self.env.refresh(state.inner))

    def reset_to(self, seeds: Sequence[int], **kwargs: Any) -> LatentState:
        """:meth:`TaskJaxEnv.reset_to <mskbench.envs.jax_env.TaskJaxEnv.reset_to>` (evaluation starts)."""
        return self._counter(self.env.reset_to(seeds, **kwargs))

    def reset_to_states(self, inits: Sequence[Any], **kwargs: Any) -> LatentState:
        """:meth:`TaskJaxEnv.reset_to_states <mskbench.envs.jax_env.TaskJaxEnv.reset_to_states>`."""
        return self._counter(self.env.reset_to_states(inits, **kwargs))

    def _step(self, state: LatentState, actions: Any, auto_reset: bool = True,
              record: bool = False) -> tuple[LatentState, StepOut]:
        import jax
        import jax.numpy as jnp

        states, values = jax.vmap(self.env.muscle_features)(state.inner.worlds.data)
        a = jnp.asarray(actions, jnp.float32)
        a = jnp.clip(jnp.nan_to_num(a, nan=-1.0, posinf=1.0, neginf=-1.0), -1.0, 1.0)
        env_actions, dev = self._map(self._params, a, states, values)
        inner, out = self.env.step(state.inner, env_actions, auto_reset=auto_reset, record=record)
        if not auto_reset:  # a world that had ended is not stepped and reports nothing
            dev = jnp.where(state.inner.worlds.done, 0.0, dev)
        reward = out.reward
        if self.schedule is not None:
            lam = self.schedule(state.transitions.astype(jnp.float32), jnp)
            reward = penalized_reward(reward, dev, lam).astype(out.reward.dtype)
        counter = jnp.minimum(state.transitions + self.env.num_envs, self._cap).astype(jnp.int32)
        out = out._replace(reward=reward, reward_terms={**out.reward_terms, DEVIATION_TERM: dev})
        return LatentState(inner, counter), out


__all__ = ["DEVIATION_TERM", "LatentBatchedEnv", "LatentState", "check_env"]

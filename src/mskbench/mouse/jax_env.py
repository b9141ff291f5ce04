"""Batched mouse imitation environment on MJX (JAX): thousands of forelimbs on a GPU.

Functional core (Brax / MuJoCo Playground shape)::

    env = MouseImitationJaxEnv(clips, cfg, num_envs=4096)
    state = env.reset(jax.random.PRNGKey(0))
    state, out = env.step(state, actions)      # jitted, vmapped over worlds

``out`` holds ``obs``, ``reward``, ``terminated``, ``truncated`` and
``final_obs``; finished worlds are reset inside ``step`` (new clip and start
frame drawn from the world's own key). The reward, observation and
termination come from the same functions as the CPU environment
(:mod:`mskbench.mouse.imitation`), evaluated with ``jax.numpy``.

:class:`JaxVectorEnv` adapts it to the vector-env protocol of
:mod:`mskbench.agents.ppo` (NumPy in and out), so the same trainer runs on it.
The physics is any batched backend of :mod:`mskbench.sim.batched` that takes
float32 configurations: ``impl="jax"`` (MJX, ``pip install 'mskbench[gpu]'``)
or ``impl="warp"`` (MuJoCo Warp, ``pip install 'mskbench[warp]'``; NVIDIA
GPUs, or Warp's CPU device).
"""

from __future__ import annotations

import mujoco
import numpy as np

from mskbench.mouse.clips import Clip
from mskbench.mouse.imitation import (ImitationConfig, ReferenceBank, clip_over, observation_blocks,
                                      reference_at, reward_terms, too_far)
from mskbench.envs.vector import checked_actions
from mskbench.sim.batched import make_physics
from mskbench.sim.mjx import mjx_imports as _imports


class MouseImitationJaxEnv:
    #: Trainers may run whole rollouts of this env inside ``jax.lax.scan``.
    functional = True

    def __init__(self, clips: list[Clip], cfg: ImitationConfig | None = None, num_envs: int = 1024,
                 model: mujoco.MjModel | None = None, impl: str = "jax"):
        jax, jnp, mjx = _imports()
        from mskbench.body.mouse_forelimb import MouseHandles, build_mouse_model

        if impl not in ("jax", "warp"):
            raise ValueError(f"impl must be 'jax' or 'warp', got {impl!r}")
        self.cfg = cfg or ImitationConfig()
        self.model = model if model is not None else build_mouse_model(timestep=self.cfg.physics_dt_s)
        self.handles = MouseHandles.from_model(self.model)
        self.num_envs = int(num_envs)
        bank = ReferenceBank.from_clips(clips)
        if np.any(bank.lengths < self.cfg.min_frames + 1):
            raise ValueError(f"every clip needs more than min_frames={self.cfg.min_frames} frames")
        self.bank = bank
        self.physics = make_physics(self.model, self.handles.muscle_ids, self.cfg.substeps, impl)
        self.physics.prepare(self.num_envs)
        self._q = jnp.asarray(bank.qpos)
        self._qd = jnp.asarray(bank.qvel)
        self._len = jnp.asarray(bank.lengths)
        self._frames_per_step = self.cfg.control_dt_s * bank.fps
        h = self.handles
        self._qadr = jnp.asarray(h.qpos_adr)
        self._dadr = jnp.asarray(h.dof_adr)
        self._mus = jnp.asarray(h.muscle_ids)
        self._act_adr = jnp.asarray(self.model.actuator_actadr[h.muscle_ids])
        self.action_size = int(self.model.nu)
        self._qpos0 = jnp.asarray(self.model.qpos0, jnp.float32)
        self._qvel0 = jnp.zeros(self.model.nv, jnp.float32)
        self.reset = jax.jit(self._reset)
        self.step = jax.jit(self._step)
        # The layout, in observation order, from a world of the right shapes (no physics run).
        shapes = jax.eval_shape(lambda k: self._start_one(k)[0], jax.random.PRNGKey(0))
        world = jax.tree_util.tree_map(lambda x: jnp.zeros(x.shape, x.dtype), shapes)
        probe = self._observe_one(world, jnp.int32(0), jnp.float32(0.0))
        self.obs_layout, start = {}, 0
        for k, v in probe.items():
            self.obs_layout[k] = slice(start, start + int(np.size(v)))
            start += int(np.size(v))
        self.obs_size = start

    # -- one world ------------------------------------------------------------------------
    def _observe_one(self, d, clip, frame):
        _, jnp, _ = _imports()
        f = self.physics.fields(d)
        return observation_blocks(f.qpos[self._qadr], f.qvel[self._dadr], f.act[self._act_adr],
                                  f.actuator_length[self._mus], f.actuator_velocity[self._mus],
                                  self._q, clip, frame, self.cfg, jnp)

    def _flat(self, blocks):
        _, jnp, _ = _imports()
        return jnp.concatenate([jnp.ravel(v) for v in blocks.values()]).astype(jnp.float32)

    def _start_one(self, key, clip=None, frame=None):
        jax, jnp, mjx = _imports()
        k_clip, k_frame = jax.random.split(key)
        if clip is None:
            clip = jax.random.randint(k_clip, (), 0, self._len.shape[0])
        if frame is None:
            last = self._len[clip] - 1 - self.cfg.min_frames
            frame = jax.random.randint(k_frame, (), 0, last + 1).astype(jnp.float32)
        d = self.physics.init_one({"qpos": self._qpos0.at[self._qadr].set(reference_at(self._q, clip, frame, jnp)),
                                   "qvel": self._qvel0.at[self._dadr].set(reference_at(self._qd, clip, frame, jnp))})
        return d, clip, frame

    def _reset(self, key):
        jax, jnp, _ = _imports()
        keys = jax.random.split(key, self.num_envs + 1)
        d, clip, frame = jax.vmap(self._start_one)(keys[1:])
        obs = jax.vmap(lambda d, c, f: self._flat(self._observe_one(d, c, f)))(d, clip, frame)
        return {"data": d, "clip": clip, "frame": frame, "key": jax.random.split(keys[0], self.num_envs),
                "obs": obs}

    def start_at(self, clip: int, frame: float):
        """A batch of ``num_envs`` identical worlds at ``frame`` of ``clip`` (evaluation, parity tests)."""
        jax, jnp, _ = _imports()
        d, c, f = jax.vmap(lambda k: self._start_one(k, jnp.int32(clip), jnp.float32(frame)))(
            jax.random.split(jax.random.PRNGKey(0), self.num_envs))
        obs = jax.vmap(lambda d, c, f: self._flat(self._observe_one(d, c, f)))(d, c, f)
        return {"data": d, "clip": c, "frame": f, "key": jax.random.split(jax.random.PRNGKey(1), self.num_envs),
                "obs": obs}

    def _step_one(self, d, clip, frame, key, action, auto_reset):
        jax, jnp, mjx = _imports()
        exc = 0.5 * (jnp.clip(action, -1.0, 1.0) + 1.0)
        d, health = self.physics.step_one(d, jnp.zeros(self.action_size, jnp.float32).at[self._mus].set(exc))
        f = self.physics.fields(d)
        frame = frame + self._frames_per_step
        q = f.qpos[self._qadr]
        q_ref = reference_at(self._q, clip, frame, jnp)
        reward, _ = reward_terms(q, q_ref, f.qvel[self._dadr], exc, f.qfrc_actuator[self._dadr], self.cfg, jnp)
        unstable = health["unstable"]
        terminated = too_far(q, q_ref, self.cfg, jnp) | unstable
        truncated = jnp.logical_not(terminated) & clip_over(frame, self._len[clip])
        reward = jnp.where(unstable, 0.0, reward)
        final_obs = jnp.where(unstable, 0.0, self._flat(self._observe_one(d, clip, frame)))
        done = terminated | truncated
        key, k_reset = jax.random.split(key)
        d_new, clip_new, frame_new = self._start_one(k_reset)
        reset = done & auto_reset
        d = self.physics.where(reset, d_new, d)
        clip = jnp.where(reset, clip_new, clip)
        frame = jnp.where(reset, frame_new, frame)
        obs = jnp.where(reset, self._flat(self._observe_one(d, clip, frame)), final_obs)
        return d, clip, frame, key, obs, reward, terminated, truncated, final_obs

    def _step(self, state, actions, auto_reset=True):
        jax, _, _ = _imports()
        d, clip, frame, key, obs, reward, term, trunc, final = jax.vmap(
            self._step_one, in_axes=(0, 0, 0, 0, 0, None))(
            state["data"], state["clip"], state["frame"], state["key"], actions, auto_reset)
        new = {"data": d, "clip": clip, "frame": frame, "key": key, "obs": obs}
        return new, {"obs": obs, "reward": reward, "terminated": term, "truncated": trunc, "final_obs": final}


class JaxVectorEnv:
    """The vector-env protocol over :class:`MouseImitationJaxEnv` (NumPy in and out)."""

    def __init__(self, env: MouseImitationJaxEnv):
        self.env = env
        self.num_envs, self.obs_size, self.action_size = env.num_envs, env.obs_size, env.action_size
        self.obs_layout = env.obs_layout
        self._state = None
        self._returns = np.zeros(self.num_envs)

    def reset(self, seed: int | None = None) -> np.ndarray:
        jax, _, _ = _imports()
        self._state = self.env.reset(jax.random.PRNGKey(0 if seed is None else seed))
        self._returns[:] = 0.0
        return np.asarray(self._state["obs"])

    def step(self, actions):
        _, jnp, _ = _imports()
        a = checked_actions(actions, self.num_envs, self.action_size, np.float32)
        self._state, out = self.env.step(self._state, jnp.asarray(a))
        out = {k: np.asarray(v) for k, v in out.items()}
        done = out["terminated"] | out["truncated"]
        self._returns += out["reward"]
        finished = list(self._returns[done])
        self._returns[done] = 0.0
        info = {"final_obs": out["final_obs"], "episode_returns": finished}
        return out["obs"], out["reward"], out["terminated"], out["truncated"], info

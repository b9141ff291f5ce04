"""The student's side of behaviour cloning (:mod:`mskbench.agents.bc`): its action in NumPy, how two
actions are compared by the activations they reach, and recorded demonstrations as training data."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from mskbench.agents.base import check_obs_layout


class ActivationSpace:
    """Actions compared by the muscle activations they reach: from the activations an observation holds
    (``act``, the ``muscle_activation`` block), one control step of MuJoCo's activation dynamics
    (:func:`mskbench.sim.muscles.activation_after`) holding the action's excitations."""

    def __init__(self, env: Any, obs_layout: Mapping[str, slice]):
        from mskbench.sim.muscles import MuscleParams

        self.params = MuscleParams(env.model, env.handles.muscle_ids)
        self.dt_s, self.n_steps = float(env.model.opt.timestep), int(env.sim.frame_skip)
        self.action_map = env.action_map
        self.act = obs_layout["muscle_activation"]

    def reached(self, act: Any, action: Any, xp: Any = np) -> Any:
        """The activations reached from ``act`` by the end of the step holding ``action``."""
        from mskbench.envs.action_map import excitation
        from mskbench.sim.muscles import activation_after

        u = excitation(xp.clip(action, -1.0, 1.0), self.action_map, xp)
        return activation_after(self.params, xp.clip(act, 0.0, 1.0), u, self.dt_s, self.n_steps, xp)

    def distance(self, obs: np.ndarray, a: np.ndarray, b: np.ndarray) -> float:
        """Mean squared difference of the activations ``a`` and ``b`` reach from ``obs``'s."""
        act = np.asarray(obs, np.float64)[self.act]
        return float(np.mean((self.reached(act, a) - self.reached(act, b)) ** 2))


def student_action(params: list[dict[str, np.ndarray]], x: np.ndarray) -> np.ndarray:
    """The student's deterministic action for normalised ``x`` in NumPy (PPO's MLP: tanh between
    layers, the mean clipped to [-1, 1])."""
    for i, layer in enumerate(params):
        x = x @ layer["w"] + layer["b"]
        if i < len(params) - 1:
            x = np.tanh(x)
    return np.clip(x, -1.0, 1.0)


# -- demonstrations ---------------------------------------------------------------------------------------
def read_demos(path: str | Path, task: str, layout: Mapping[str, slice]) -> tuple[np.ndarray, np.ndarray]:
    """The observations and actions of a demonstrations file (``mskbench record``) of ``task``."""
    with np.load(path, allow_pickle=False) as z:
        if "format" not in z.files or str(z["format"]) != "mskbench-demos":
            raise ValueError(f"{path} is not a demonstrations file of mskbench record")
        if str(z["task"]) != task:
            raise ValueError(f"{path} holds demonstrations of {z['task']}, not {task}")
        check_obs_layout(path, str(z["obs_layout"]), layout, None, 0)
        return np.asarray(z["observation"], np.float32), np.asarray(z["action"], np.float32)


# -- an ensemble of students ------------------------------------------------------------------------------
def stack_members(members: list[Any]) -> Any:
    """Networks of one shape (lists of ``{"w", "b"}`` layers, or their optimiser states) stacked along a new
    leading axis: the layout the ensemble's vmapped fit takes (:attr:`mskbench.agents.bc.config.BCConfig.ensemble`)."""
    from mskbench.agents.ppo_networks import _jax

    jax, jnp = _jax()
    return jax.tree_util.tree_map(lambda *a: jnp.stack(a), *members)


def widen_members(stacked: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The mean of K stacked MLPs (leading axis K, tanh between layers) as one MLP of K times their widths:
    the first layer's outputs side by side, the hidden layers block-diagonal, the last layer's inputs
    stacked and scaled by 1/K. Its output is the mean of the K members' outputs before any clip, so PPO's
    actor of these widths (its mean clipped to [-1, 1]) acts as the clipped mean of the members."""
    from mskbench.agents.ppo_networks import _jax

    jax, jnp = _jax()
    k = int(stacked[0]["w"].shape[0])
    wide = []
    for i, layer in enumerate(stacked):
        w, b = layer["w"], layer["b"]
        if i == len(stacked) - 1:
            wide.append({"w": jnp.concatenate(list(w), axis=0) / k, "b": jnp.mean(b, axis=0)})
        elif i == 0:
            wide.append({"w": jnp.concatenate(list(w), axis=1), "b": jnp.concatenate(list(b))})
        else:
            wide.append({"w": jax.scipy.linalg.block_diag(*list(w)), "b": jnp.concatenate(list(b))})
    return wide

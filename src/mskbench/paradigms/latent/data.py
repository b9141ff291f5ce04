"""Expert data for the latent-action encoder–decoder: what the decoder is conditioned on, and its collection.

Per muscle the decoder sees three things (Eq. 21):

* **P, muscle priors** (fixed per model, ``(muscles, 5)``, :func:`muscle_priors`):
  the operating range of the normalised fibre length (``gainprm[0:2]``), the peak
  isometric force ``F0`` (``gainprm[2]``) in kN, and the actuator length range
  (``actuator_lengthrange``, m). The authors' code uses ``(gainprm[0],
  biasprm[0])`` (``expert_data.py`` @ 740316b), but MuJoCo's muscles carry the
  same parameters in both, so that pair is one number twice; ours keeps it and
  adds the rest of what distinguishes the muscles.
* **S, muscle states** (``(muscles, 4)``, :func:`muscle_states`), as the authors':
  actuator length (m), velocity (m/s), force / 1000 (N/1000, negative when
  pulling), activation.
* **M, the muscle–joint moment matrix** (``(muscles, nv)``, MuJoCo's
  ``actuator_moment``: row ``i`` is ``∂ length_i / ∂ q``, m per rad). MuJoCo
  keeps it sparse, with a pattern fixed by the model (on MyoFullBody 9,788
  nonzeros of 416 × 128 = 53,248 entries, at most 43 per muscle), so a data set
  stores the pattern once (``moment_index``: flat indices into ``muscles × nv``)
  and the nonzeros per sample (``moments``, 39 kB per sample instead of 213 kB
  dense); :func:`dense_moments` rebuilds the matrix (NumPy or JAX). Lossless.

A data set (:func:`collect`, ``mskbench latent collect``) is an ``.npz`` of
``actions`` (the executed expert actions in [−1, 1], ``(N, muscles)``),
``observations`` ``(N, obs)``, ``states`` ``(N, muscles, 4)``, ``moments``
``(N, nnz)``, ``moment_index`` ``(nnz,)``, ``priors`` ``(muscles, 5)``,
``episode`` and ``step`` ``(N,)`` and ``meta`` (JSON: task, policy, seed,
``nv``, muscle names, the episodes' returns and lengths). Features are recorded
in the state the action was chosen in, before the step (as the authors' collector).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mskbench.sim import muscles as _muscles
from mskbench.sim.muscles import N_PRIOR, N_STATE, PRIOR_NAMES, STATE_NAMES, dense_moments

if TYPE_CHECKING:
    import mujoco

    from mskbench.body.base import BodyHandles
    from mskbench.envs.cpu_env import MSKEnv

FORMAT = "mskbench-latent-data"
FORMAT_VERSION = 1
#: Samples the authors collect per task (``collect_expert_data.py --samples``).
DEFAULT_SAMPLES = 50_000


def muscle_priors(model: "mujoco.MjModel", handles: "BodyHandles") -> np.ndarray:
    """P: ``(muscles, 5)`` float32 (:func:`mskbench.sim.muscles.muscle_priors`) of the body as compiled: F0 is
    the handles' nominal peak force, not the model's current one, which the robustness protocol's dynamics
    perturbation scales for an episode (and which stays scaled until the env's next reset)."""
    p = _muscles.muscle_priors(model, handles.muscle_ids)
    p[:, 2] = (np.asarray(handles.muscle_force_nominal, np.float64) / 1000.0).astype(np.float32)
    return p


def muscle_states(data: "mujoco.MjData", handles: "BodyHandles") -> np.ndarray:
    """S: ``(muscles, 4)`` float32 (:func:`mskbench.sim.muscles.muscle_states`)."""
    return _muscles.muscle_states(data, handles.muscle_ids, handles.muscle_act_adr, np)


class MuscleFeatures:
    """P, S and M of one compiled model: ``priors`` once, ``states(data)`` and ``moments(data)`` per step.

    ``moments(data)`` returns the nonzeros of the muscles' rows of
    ``actuator_moment`` in the order of :attr:`index` (flat indices into
    ``muscles × nv``, :class:`~mskbench.sim.muscles.MomentPattern`); the
    sparsity pattern is read from the first data it sees and checked at every
    call (a model whose pattern changed is an error).
    """

    def __init__(self, model: "mujoco.MjModel", handles: "BodyHandles"):
        self.model = model
        self.handles = handles
        self.n_muscles = int(len(handles.muscle_ids))
        self.nv = int(model.nv)
        self.priors = muscle_priors(model, handles)
        self.pattern: _muscles.MomentPattern | None = None

    @property
    def index(self) -> np.ndarray | None:
        return None if self.pattern is None else self.pattern.index

    def states(self, data: "mujoco.MjData") -> np.ndarray:
        return muscle_states(data, self.handles)

    def moments(self, data: "mujoco.MjData") -> np.ndarray:
        """The nonzeros of M, ``(nnz,)`` float32, in the order of :attr:`index`."""
        if self.pattern is None:
            self.pattern = _muscles.MomentPattern.of_data(self.model, data, self.handles.muscle_ids)
        return self.pattern.values(data)

    def dense(self, values: np.ndarray) -> np.ndarray:
        """M ``(..., muscles, nv)`` from :meth:`moments` values."""
        if self.index is None:
            raise RuntimeError("no moment pattern yet: call moments(data) first")
        return dense_moments(np.asarray(values), self.index, self.n_muscles, self.nv, np)


# -- data sets -----------------------------------------------------------------------------------------
@dataclass
class LatentData:
    """An expert data set in memory (the arrays of the module docstring)."""

    actions: np.ndarray
    states: np.ndarray
    moments: np.ndarray
    moment_index: np.ndarray
    priors: np.ndarray
    observations: np.ndarray
    episode: np.ndarray
    step: np.ndarray
    meta: dict[str, Any]

    @property
    def n_samples(self) -> int:
        return int(self.actions.shape[0])

    @property
    def n_muscles(self) -> int:
        return int(self.actions.shape[1])

    @property
    def nv(self) -> int:
        return int(self.meta["nv"])

    def save(self, path: str | Path) -> Path:
        """Write the ``.npz`` (atomically: a temporary file, then a rename)."""
        from mskbench.agents.base import savez_atomic

        path = Path(path)
        savez_atomic(path, dict(format=np.array(FORMAT), format_version=np.array(FORMAT_VERSION),
                                actions=self.actions, states=self.states, moments=self.moments,
                                moment_index=self.moment_index, priors=self.priors, observations=self.observations,
                                episode=self.episode, step=self.step, meta=np.array(json.dumps(self.meta))))
        return path

    @classmethod
    def load(cls, path: str | Path) -> "LatentData":
        """Read a data set written by :meth:`save`; anything else is a ``ValueError`` saying what it is not."""
        try:
            with np.load(path, allow_pickle=False) as z:
                if "format" not in z.files or str(z["format"]) != FORMAT:
                    raise ValueError(f"{path} is not a latent-action data set (make one with 'mskbench latent collect')")
                arrays = {k: z[k] for k in ("actions", "states", "moments", "moment_index", "priors", "observations",
                                            "episode", "step")}
                meta = json.loads(str(z["meta"]))
        except (OSError, KeyError, json.JSONDecodeError) as exc:
            raise ValueError(f"cannot read {path}: {exc}") from None
        data = cls(**arrays, meta=meta)
        data.check()
        return data

    def check(self) -> None:
        n, m = self.actions.shape
        shapes = {"states": (n, m, N_STATE), "priors": (m, N_PRIOR), "episode": (n,), "step": (n,)}
        for name, shape in shapes.items():
            if getattr(self, name).shape != shape:
                raise ValueError(f"{name} has shape {getattr(self, name).shape}, expected {shape}")
        if self.moments.shape != (n, self.moment_index.shape[0]):
            raise ValueError(f"moments has shape {self.moments.shape}, expected ({n}, {self.moment_index.shape[0]})")

    def subset(self, idx: np.ndarray) -> "LatentData":
        return LatentData(self.actions[idx], self.states[idx], self.moments[idx], self.moment_index, self.priors,
                          self.observations[idx], self.episode[idx], self.step[idx], dict(self.meta))


def collect(task: "str | MSKEnv", policy: Any = "random", *, steps: int = DEFAULT_SAMPLES, seed: int = 0,
            noise_std: float = 0.0, progress: Callable[[int, int], None] | None = None) -> LatentData:
    """Roll ``policy`` out on ``task`` for ``steps`` control steps and record (state, action) pairs.

    ``task``: a task id or an :class:`~mskbench.envs.cpu_env.MSKEnv` (used as
    is, not closed). ``policy``: an object with ``act(obs)`` (optionally
    ``reset(seed)``) or a built-in name (``zero``, ``passive``, ``random``);
    checkpoints and factories by spec: :func:`mskbench.paradigms.latent.collect_expert`.
    Episode ``e`` is reset with seed ``seed + e`` (and the policy told so). The
    recorded action is the policy's, clipped to [−1, 1]; with ``noise_std`` > 0
    the executed one has Gaussian noise added (the authors' ``--noise-std``),
    the recorded one does not. ``progress(done, total)`` is called every 100 steps.
    """
    from mskbench.envs.cpu_env import MSKEnv
    from mskbench.policies import BUILTIN_POLICIES, PRIVILEGED_POLICIES, as_policy, make_policy

    if isinstance(steps, bool) or not isinstance(steps, (int, np.integer)) or steps < 2:
        raise ValueError(f"steps must be an integer >= 2, got {steps!r}")
    if not (np.isfinite(noise_std) and noise_std >= 0):
        raise ValueError(f"noise_std must be >= 0, got {noise_std!r}")
    own = not isinstance(task, MSKEnv)
    env = task if isinstance(task, MSKEnv) else MSKEnv(task)
    try:
        spec = policy if isinstance(policy, str) else getattr(policy, "spec", type(policy).__name__)
        if isinstance(policy, str):
            if policy not in BUILTIN_POLICIES:
                raise ValueError(f"unknown built-in policy {policy!r} ({', '.join(BUILTIN_POLICIES)}); collect from "
                                 "a checkpoint or factory with mskbench.paradigms.latent.collect_expert")
            if policy in PRIVILEGED_POLICIES:
                from mskbench.control import make_controller

                policy = make_controller(policy, env)
            else:
                policy = make_policy(policy, int(env.action_space.shape[0]), seed=seed)
        full = as_policy(policy)
        feats = MuscleFeatures(env.model, env.handles)
        n, m = int(steps), feats.n_muscles
        obs_size = int(env.observation_space.shape[0])
        actions = np.zeros((n, m), np.float32)
        states = np.zeros((n, m, N_STATE), np.float32)
        observations = np.zeros((n, obs_size), np.float32)
        episode = np.zeros(n, np.int32)
        step_of = np.zeros(n, np.int32)
        moments: np.ndarray | None = None
        rng = np.random.default_rng((seed, 1))
        returns, lengths = [], []
        ep, t, ret = 0, 0, 0.0
        obs, _ = env.reset(seed=seed)
        full.reset(seed)
        started = time.perf_counter()
        # Not eval.episodes.play_episode: a budget of n steps over episodes (the last one cut), the action
        # recorded clean and executed with noise.
        for i in range(n):
            a = np.clip(np.asarray(full.act(obs), np.float64).reshape(-1), -1.0, 1.0)
            if a.shape != (m,):
                raise ValueError(f"the policy returned an action of shape {a.shape}; the task has {m} muscles")
            values = feats.moments(env.data)
            if moments is None:
                moments = np.zeros((n, values.shape[0]), np.float32)
            moments[i] = values
            states[i] = feats.states(env.data)
            actions[i] = a
            observations[i] = obs
            episode[i], step_of[i] = ep, t
            executed = a if noise_std == 0 else np.clip(a + rng.normal(0.0, noise_std, m), -1.0, 1.0)
            obs, reward, terminated, truncated, _ = env.step(executed)
            ret += float(reward)
            t += 1
            if terminated or truncated:
                returns.append(ret)
                lengths.append(t)
                ep, t, ret = ep + 1, 0, 0.0
                obs, _ = env.reset(seed=seed + ep)
                full.reset(seed + ep)
            if progress is not None and ((i + 1) % 100 == 0 or i + 1 == n):
                progress(i + 1, n)
        assert moments is not None and feats.index is not None
        meta = {"task": env.task.name, "body": env.task.body.name, "policy": spec, "seed": int(seed),
                "noise_std": float(noise_std), "nv": feats.nv, "muscle_names": list(env.handles.muscle_names),
                "prior_features": list(PRIOR_NAMES), "state_features": list(STATE_NAMES),
                "episodes_finished": len(returns), "episode_returns": returns, "episode_lengths": lengths,
                "unfinished_episode_steps": t, "wall_s": round(time.perf_counter() - started, 2)}
        return LatentData(actions, states, moments, feats.index.copy(), feats.priors.copy(), observations, episode,
                          step_of, meta)
    finally:
        if own:
            env.close()


__all__ = ["DEFAULT_SAMPLES", "FORMAT", "LatentData", "MuscleFeatures", "collect", "dense_moments", "muscle_priors",
           "muscle_states"]

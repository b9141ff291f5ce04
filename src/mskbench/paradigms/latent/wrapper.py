"""Hard-mode latent-action RL between a learner and the env: the action map, its vector-env wrapper and a
filtered single env (for evaluation).

Per step and world (:class:`LatentActionMap`): the learner's muscle action
``a ∈ [−1, 1]^muscles`` is encoded to ``z`` and decoded, conditioned on the
world's P, S and M, to the prior ``â`` (Eq. 24); the executed action is ``a``
clipped into the tube of radius δ around ``â`` (Eqs. 23, 25, 26); the
violation ``L_dev`` (Eq. 27) is subtracted from the reward with the decaying
``λ_t`` (Eq. 28) by :class:`LatentActionWrapper`. The learner's action space
stays the muscles' (as the paper's: "the executed muscle-action space remains
unchanged"); the latent size is the bottleneck the prior goes through.

``mode="latent"`` is an alternative the paper does not use: the learner
outputs ``z ∈ [−1, 1]^latent`` itself and the executed action is the decoded
``2 â − 1`` (no tube, no deviation).

:class:`mskbench.paradigms.latent.LatentPrior` ties it to a training run
(``mskbench train TASK --latent MODEL --tube R``). On the batched JAX env the same
map runs inside the jitted step (:class:`mskbench.paradigms.latent.batched.LatentBatchedEnv`).

:class:`LatentFilteredPolicy` puts the map on the policy's side instead (it reads S and M of the env it
acts in), so the evaluation protocol (``mskbench eval --policy RUN``) runs a latent run's checkpoint
through the map its run trained with (:class:`mskbench.paradigms.latent.LatentActing`).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from mskbench.envs.wrappers import VectorWrapper
from mskbench.paradigms.latent.core import DEFAULT_TUBE, PenaltySchedule, env_action, hard_mode, penalized_reward
from mskbench.paradigms.latent.data import MuscleFeatures

if TYPE_CHECKING:
    from mskbench.envs.cpu_env import MSKEnv
    from mskbench.envs.vector import MSKVectorEnv
    from mskbench.paradigms.latent.model import LatentModel

MODES = ("hard", "latent")


def check_tube(tube: float) -> float:
    tube = float(tube)
    if not (np.isfinite(tube) and 0.0 <= tube <= 1.0):
        raise ValueError(f"the tube radius must be in [0, 1] (activation units), got {tube!r}")
    return tube


class LatentActionMap:
    """Learner actions ``(worlds, action_size)`` and the worlds' S and M → ``(env actions, L_dev, â)``.

    ``action_size`` is the number of muscles (``mode="hard"``) or the latent
    size (``mode="latent"``). Non-finite learner actions are mapped as the
    env maps them (NaN → −1, ±inf → ±1) before anything else.
    """

    def __init__(self, model: "LatentModel", tube: float = DEFAULT_TUBE, mode: str = "hard"):
        if mode not in MODES:
            raise ValueError(f"mode must be one of {', '.join(MODES)}, got {mode!r}")
        self.model = model
        self.tube = check_tube(tube)
        self.mode = mode
        self.action_size = model.n_muscles if mode == "hard" else model.latent_dim

    def __call__(self, actions: Any, states: np.ndarray, moments: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        a = np.asarray(actions, np.float64)
        if a.ndim != 2 or a.shape[1] != self.action_size:
            raise ValueError(f"latent-{self.mode} actions must have shape (worlds, {self.action_size}), got {a.shape}")
        a = np.clip(np.nan_to_num(a, nan=-1.0, posinf=1.0, neginf=-1.0), -1.0, 1.0)
        if self.mode == "hard":
            prior = self.model.prior(a, states, moments)
            env, dev = hard_mode(a, prior, self.tube, np)
            return env, dev, prior
        prior = self.model.decode(a, states, moments)
        return env_action(prior, np), np.zeros(a.shape[0]), prior

    def one(self, action: Any, features: MuscleFeatures, data: Any) -> tuple[np.ndarray, float]:
        """One world's ``(env action, L_dev)`` for ``action`` in the state of ``data`` (S and M read by
        ``features``)."""
        a = np.asarray(action, np.float64).reshape(1, -1)
        env, dev, _ = self(a, features.states(data)[None], features.moments(data)[None])
        return env[0], float(dev[0])


def _features(envs: list, model: "LatentModel") -> list[MuscleFeatures]:
    feats = []
    for e in envs:
        f = MuscleFeatures(e.model, e.handles)
        f.moments(e.data)  # binds the moment pattern
        assert f.index is not None
        model.check_body(f.priors, f.index, e.handles.muscle_names)
        feats.append(f)
    return feats


class LatentActionWrapper(VectorWrapper):
    """A CPU vector env acting through hard-mode latent filtering, with Eq. 28's penalised reward.

    A :class:`~mskbench.envs.protocols.VectorEnv` like the
    :class:`~mskbench.envs.vector.MSKVectorEnv` it wraps, with
    ``action_size`` the learner's (:class:`LatentActionMap`). Each
    :meth:`step` reads every world's S and M (the state the action is chosen
    in), maps the actions in one batched decoder call, steps the worlds and
    returns ``R − λ_t L_dev`` with ``λ_t`` of the transitions counted so far
    (:attr:`steps`, ``num_envs`` per step; :meth:`set_step` for a resumed run).
    ``info["latent_deviation"]`` (per world) and ``info["latent_lambda"]``
    report them; ``info["episode_returns"]`` stay the task's returns.
    """

    def __init__(self, env: "MSKVectorEnv", model: "LatentModel", tube: float = DEFAULT_TUBE,
                 schedule: PenaltySchedule | None = None, mode: str = "hard", steps: int = 0):
        from mskbench.envs.vector import worlds

        envs = worlds(env, "latent-action filtering (it reads each world's MuJoCo data)")
        if env.action_size != model.n_muscles:
            raise ValueError(f"the model decodes {model.n_muscles} muscles; the env acts on {env.action_size}")
        super().__init__(env)
        self.map = LatentActionMap(model, tube, mode)
        self.schedule = schedule if schedule is not None else PenaltySchedule()
        self.worlds = envs
        self.features = _features(envs, model)
        self.action_size = self.map.action_size
        self.steps = 0
        self.set_step(steps)

    def set_step(self, step: int) -> None:
        if step < 0:
            raise ValueError(f"step must be >= 0, got {step}")
        self.steps = int(step)

    @property
    def penalty_weight(self) -> float:
        """``λ_t`` of the next step."""
        return float(self.schedule(self.steps))

    def observe(self) -> tuple[np.ndarray, np.ndarray]:
        """S ``(worlds, muscles, 4)`` and M's nonzeros ``(worlds, nnz)`` of the worlds now."""
        return (np.stack([f.states(e.data) for f, e in zip(self.features, self.worlds)]),
                np.stack([f.moments(e.data) for f, e in zip(self.features, self.worlds)]))

    def step(self, actions: Any):
        states, moments = self.observe()
        env_actions, dev, _ = self.map(actions, states, moments)
        lam = self.penalty_weight
        obs, reward, terminated, truncated, info = self.env.step(env_actions)
        self.steps += self.num_envs
        info = dict(info, latent_deviation=dev, latent_lambda=lam)
        return obs, penalized_reward(np.asarray(reward, np.float64), dev, lam), terminated, truncated, info


class LatentFilteredEnv:
    """One :class:`~mskbench.envs.cpu_env.MSKEnv` acting through the latent map (for evaluation).

    Everything but ``step``, ``action_space`` and ``close`` is the wrapped
    env's (``run_episode`` and the protocol run it as an MSKEnv). The reward is
    the task's unless ``schedule`` is given (then ``R − λ_t L_dev`` with
    ``λ_t`` at ``steps``). ``info["latent_deviation"]`` is the step's ``L_dev``.
    """

    def __init__(self, env: "MSKEnv", model: "LatentModel", tube: float = DEFAULT_TUBE, mode: str = "hard",
                 schedule: PenaltySchedule | None = None, steps: int = 0):
        import gymnasium as gym

        self.env = env
        self.map = LatentActionMap(model, tube, mode)
        self.features = _features([env], model)[0]
        self.schedule = schedule
        self.steps = int(steps)
        self.deviation_total = 0.0  # Σ L_dev over the steps taken (mean: / deviation_steps)
        self.deviation_steps = 0
        self.action_space = gym.spaces.Box(-1.0, 1.0, (self.map.action_size,), np.float32)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.env, name)

    def step(self, action: Any):
        executed, dev = self.map.one(action, self.features, self.env.data)
        obs, reward, terminated, truncated, info = self.env.step(executed)
        if self.schedule is not None:
            reward = float(penalized_reward(reward, dev, self.schedule(self.steps)))
        self.steps += 1
        self.deviation_total += dev
        self.deviation_steps += 1
        info = dict(info, latent_deviation=dev)
        return obs, reward, terminated, truncated, info

    def close(self) -> None:
        self.env.close()


# -- a trained run's filter, for the evaluation protocol (mskbench.paradigms.latent.LatentActing) ------------
def sha256_of(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


class LatentFilteredPolicy:
    """A policy acting through the latent map in the CPU env it acts in.

    Each action is mapped with S and M of ``env``'s current state (the state the action is chosen in), as
    :class:`LatentFilteredEnv` does before stepping, so the protocol's episode of this policy in ``env`` is
    the filtered env's; action noise is then added to the executed action by the env, as there. Observation
    noise goes between ``normalize_observation`` and ``act_normalized`` of the wrapped policy.
    """

    def __init__(self, policy: Any, env: "MSKEnv", model: "LatentModel", tube: float = DEFAULT_TUBE,
                 mode: str = "hard"):
        from mskbench.policies import as_policy

        self.policy = as_policy(policy)
        self.env = env
        self.map = LatentActionMap(model, tube, mode)
        self.features = _features([env], model)[0]

    def _filter(self, action: Any) -> np.ndarray:
        return self.map.one(action, self.features, self.env.data)[0]

    def reset(self, seed: int | None = None) -> None:
        self.policy.reset(seed)

    def normalize_observation(self, obs: np.ndarray) -> np.ndarray:
        return self.policy.normalize_observation(obs)

    def act_normalized(self, x: np.ndarray) -> np.ndarray:
        return self._filter(self.policy.act_normalized(x))

    def act(self, obs: np.ndarray) -> np.ndarray:
        return self._filter(self.policy.act(obs))


__all__ = ["MODES", "LatentActionMap", "LatentActionWrapper", "LatentFilteredEnv", "LatentFilteredPolicy",
           "sha256_of"]

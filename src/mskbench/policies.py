"""Built-in reference policies, and any policy made whole.

A policy is any object with ``act(obs) -> action`` (action in [−1, 1], one per
muscle); the optional parts are declared in :mod:`mskbench.envs.protocols`
(``reset(seed)`` at the start of every episode, ``normalize_observation`` /
``act_normalized`` for policies that normalise observations themselves).
:func:`as_policy` wraps any policy so that all of them can be called.

Built-ins (no learning; they anchor the bottom of the leaderboard):

* ``zero``: action 0 everywhere, i.e. every muscle at excitation 0.5.
* ``passive``: action −1, i.e. no excitation at all.
* ``random``: uniform actions in [−1, 1]; each episode's actions depend only
  on the episode's seed (``reset(seed)`` reseeds it).

The other built-ins are *privileged* (:data:`PRIVILEGED_POLICIES`): they read the simulator of the
environment they act in, so they are built with it — by :func:`mskbench.eval.protocol.load_policy`
(``spec, env, seed``) or :func:`mskbench.control.make_controller` — not by :func:`make_policy`:

* ``expert``: the training-free whole-body muscle QP with the task's behaviour
  (:mod:`mskbench.control`; it serves the tasks of ``mskbench.control.EXPERT_BEHAVIOURS``).
* ``hold``: the same controller whose only target is the episode's start pose.

and the *cheat probes* (:data:`CHEAT_PROBES`, :mod:`mskbench.control.probes`): the same controller
scripted at the letter of one task's criterion and not its intent (``calf-raise`` on Jump,
``fall-back`` on Sit and WalkAndSit, ``basket`` on Catch, ``lean`` on Balance and SingleLegStand).
"""

from __future__ import annotations

import inspect

import numpy as np

from mskbench.envs.protocols import EpisodicPolicy, NormalizingPolicy, Policy

__all__ = ["BUILTIN_POLICIES", "CHEAT_PROBES", "PRIVILEGED_POLICIES", "ConstantPolicy", "FullPolicy", "Policy", "RandomPolicy", "as_policy", "make_policy"]


class ConstantPolicy:
    def __init__(self, n_actions: int, value: float):
        self._action = np.full(n_actions, value, dtype=np.float32)

    def reset(self, seed: int | None = None) -> None:
        pass

    def act(self, obs: np.ndarray) -> np.ndarray:
        return self._action.copy()


class RandomPolicy:
    """Uniform actions; ``reset(seed)`` restarts the stream, so an episode's actions depend on its seed only."""

    def __init__(self, n_actions: int, seed: int | None = None):
        self.n_actions = n_actions
        self._rng = np.random.default_rng(seed)

    def reset(self, seed: int | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)

    def act(self, obs: np.ndarray) -> np.ndarray:
        return self._rng.uniform(-1.0, 1.0, self.n_actions).astype(np.float32)


#: The built-in policies that read the simulator (built with the environment: see the module docstring).
#: The cheat probes (their behaviours and tasks: :data:`mskbench.control.probes.PROBES`).
CHEAT_PROBES = ("calf-raise", "fall-back", "basket", "lean")
PRIVILEGED_POLICIES = ("hold", "expert", *CHEAT_PROBES)
BUILTIN_POLICIES = ("zero", "passive", "random") + PRIVILEGED_POLICIES


def make_policy(name: str, n_actions: int, seed: int | None = None) -> Policy:
    """A built-in policy by name; raises naming the valid ones (the privileged ones need the env)."""
    if name in PRIVILEGED_POLICIES:
        raise ValueError(f"{name!r} reads the simulator: build it with its environment, "
                         "mskbench.eval.protocol.load_policy(name, env, seed) or mskbench.control.make_controller")
    if name == "zero":
        return ConstantPolicy(n_actions, 0.0)
    if name == "passive":
        return ConstantPolicy(n_actions, -1.0)
    if name == "random":
        return RandomPolicy(n_actions, seed)
    raise ValueError(f"unknown policy {name!r}; built-in policies: {', '.join(BUILTIN_POLICIES)}")


class FullPolicy:
    """Any policy with every optional part: ``reset(seed)`` (passed on as the wrapped policy
    accepts it), ``normalize_observation`` / ``act_normalized`` (identity normalisation when the
    policy has none: the observation itself is its normalised input)."""

    def __init__(self, policy: Policy):
        if not callable(getattr(policy, "act", None)):
            raise TypeError(f"{type(policy).__name__} has no act(obs) method")
        self.policy = policy
        self._normalizing = isinstance(policy, NormalizingPolicy)
        self._reset = getattr(policy, "reset", None) if isinstance(policy, EpisodicPolicy) else None
        self._reset_takes_seed = self._reset is not None and _accepts_argument(self._reset)

    def reset(self, seed: int | None = None) -> None:
        if self._reset is None:
            return
        if self._reset_takes_seed:
            self._reset(seed)
        else:
            self._reset()

    def normalize_observation(self, obs: np.ndarray) -> np.ndarray:
        return self.policy.normalize_observation(obs) if self._normalizing else obs  # type: ignore[attr-defined]

    def act_normalized(self, x: np.ndarray) -> np.ndarray:
        return self.policy.act_normalized(x) if self._normalizing else self.policy.act(x)  # type: ignore[attr-defined]

    def act(self, obs: np.ndarray) -> np.ndarray:
        return self.policy.act(obs)


def _accepts_argument(fn) -> bool:
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return False
    return any(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL) for p in params)


def as_policy(policy: Policy) -> FullPolicy:
    """``policy`` with every optional method (see :class:`FullPolicy`); a :class:`FullPolicy` as is."""
    return policy if isinstance(policy, FullPolicy) else FullPolicy(policy)

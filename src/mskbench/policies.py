"""Built-in reference policies and the policy protocol.

A policy is any object with ``act(obs) -> action`` (action in [-1, 1]^416)
and, optionally, ``reset()`` called at the start of every episode.

Built-ins (no learning; they anchor the bottom of the leaderboard):

* ``zero``: action 0 everywhere, i.e. every muscle at excitation 0.5.
* ``passive``: action −1, i.e. no excitation at all.
* ``random``: uniform actions in [−1, 1], seeded.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class Policy(Protocol):
    def act(self, obs: np.ndarray) -> np.ndarray: ...


class ConstantPolicy:
    def __init__(self, n_actions: int, value: float):
        self._action = np.full(n_actions, value, dtype=np.float32)

    def reset(self) -> None:
        pass

    def act(self, obs: np.ndarray) -> np.ndarray:
        return self._action.copy()


class RandomPolicy:
    def __init__(self, n_actions: int, seed: int | None = None):
        self.n_actions = n_actions
        self._rng = np.random.default_rng(seed)

    def reset(self) -> None:
        pass

    def act(self, obs: np.ndarray) -> np.ndarray:
        return self._rng.uniform(-1.0, 1.0, self.n_actions).astype(np.float32)


BUILTIN_POLICIES = ("zero", "passive", "random")


def make_policy(name: str, n_actions: int, seed: int | None = None) -> Policy:
    """A built-in policy by name; raises naming the valid ones."""
    if name == "zero":
        return ConstantPolicy(n_actions, 0.0)
    if name == "passive":
        return ConstantPolicy(n_actions, -1.0)
    if name == "random":
        return RandomPolicy(n_actions, seed)
    raise ValueError(f"unknown policy {name!r}; built-in policies: {', '.join(BUILTIN_POLICIES)}")

"""Wrapper bases for the two kinds of training environment (:mod:`mskbench.envs.protocols`).

A paradigm that changes what an action or a reward means wraps the environment the algorithm trains
on. :class:`VectorWrapper` (NumPy worlds, a :class:`~mskbench.envs.protocols.VectorEnv`) and
:class:`BatchedWrapper` (functional JAX, a :class:`~mskbench.envs.protocols.BatchedEnv`) delegate
every method and attribute to the wrapped ``env`` (the habit of Brax's ``Wrapper``), so a subclass
overrides ``step`` — and whatever it changes, such as ``action_size``, or ``reset`` where it keeps
per-episode state of its own (the agentic env's returns) — and nothing else.
:func:`is_batched` tells the two kinds apart by the protocol the trainers test, not by probing for a
method.
"""

from __future__ import annotations

from typing import Any

from mskbench.envs.protocols import BatchedEnv


def is_batched(env: Any) -> bool:
    """Whether ``env`` is a functional :class:`~mskbench.envs.protocols.BatchedEnv` (else a VectorEnv)."""
    return isinstance(env, BatchedEnv)


class _Delegating:
    env: Any
    #: The protocol's attributes, copied (``isinstance`` on a runtime protocol does not see ``__getattr__``).
    _copied: tuple[str, ...] = ("num_envs", "obs_size", "action_size", "obs_layout")

    def __init__(self, env: Any):
        self.env = env
        for name in self._copied:
            if hasattr(env, name):  # a partial stand-in (tests) may lack some
                setattr(self, name, getattr(env, name))

    def __getattr__(self, name: str) -> Any:
        if name == "env":  # not set yet (unpickling, a subclass that has not called __init__)
            raise AttributeError(name)
        return getattr(self.env, name)


class VectorWrapper(_Delegating):
    """A :class:`~mskbench.envs.protocols.VectorEnv` around ``env`` that passes everything through."""

    def reset(self, seed: int | None = None) -> Any:
        return self.env.reset(seed=seed)

    def step(self, actions: Any) -> Any:
        return self.env.step(actions)

    def close(self) -> None:
        self.env.close()


class BatchedWrapper(_Delegating):
    """A :class:`~mskbench.envs.protocols.BatchedEnv` around ``env`` that passes everything through."""

    _copied = (*_Delegating._copied, "termination_names")

    def reset(self, key: Any) -> Any:
        return self.env.reset(key)

    def step(self, state: Any, actions: Any, auto_reset: bool = True, record: bool = False) -> Any:
        return self.env.step(state, actions, auto_reset=auto_reset, record=record)

    def refresh(self, state: Any) -> Any:
        return self.env.refresh(state)

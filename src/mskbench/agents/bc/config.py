"""The settings of behaviour cloning (:class:`BCConfig`), as a run's ``run.json`` and a checkpoint's
``bc_config`` record them."""

from __future__ import annotations

from dataclasses import dataclass

from mskbench.agents.ppo_networks import PPOConfig

#: What the fit compares (:attr:`BCConfig.loss`).
LOSSES = ("excitation", "activation", "bounded")
#: Settings BC had and no longer has, each with the value that left BC as it is now: each was measured in
#: docs/distillation.md and not kept (its runs can still be made at :data:`REMOVED_AT`). A run that recorded one
#: at that value reads as a run of today's BC; at another it evaluates (its checkpoint holds what acts) and is
#: not resumed (:func:`removed_settings`).
REMOVED = {"lr_final": None, "polish": None, "average": 0.0, "gate_iterations": None, "drop_tail": 0, "noise": 0.0,
           "std_floor": 0.0, "teacher_rate": 0.0}
#: The last commit with every setting of :data:`REMOVED`.
REMOVED_AT = "a6e0409"


def removed_settings(stored: dict) -> dict:
    """The settings of :data:`REMOVED` that a stored BC config (a ``run.json``'s or a checkpoint's) holds at a
    value other than the one today's BC acts as."""
    return {k: stored[k] for k in REMOVED if k in stored and stored[k] != REMOVED[k]}


def stored_config(stored: dict) -> BCConfig:
    """A stored BC config as today's :class:`BCConfig`: the settings of :data:`REMOVED` left out."""
    return BCConfig(**{k: v for k, v in stored.items() if k not in REMOVED})


@dataclass
class BCConfig:
    """Hyper-parameters of :class:`BCLearner` (our choices; the paper trains no BC)."""

    total_steps: int = 200_000
    num_envs: int = 8
    num_steps: int = 250  # control steps per world per iteration
    updates: int = 1000  # Adam steps per iteration
    minibatch_size: int = 256
    learning_rate: float = 3e-4
    #: Students fitted side by side, each from its own initial weights and on its own minibatches of the one
    #: data set (``updates`` Adam steps each); the student deployed is the mean of their actions, saved as one
    #: MLP of ``ensemble`` times the ``hidden`` widths (:func:`~mskbench.agents.bc.student.widen_members`), so
    #: it loads wherever a PPO actor of those widths loads. Measured on Stand: docs/distillation.md, runs 13, 14, 16.
    ensemble: int = 1
    max_grad_norm: float = 1.0
    hidden: tuple[int, ...] = (1024, 1024)  # PPO's actor (Table XVI)
    beta0: float = 1.0
    beta_decay: float = 0.7
    #: The teacher also acts where the student's action is farther than this from the label (mean squared
    #: difference, in the units ``loss`` compares; None: never): the worlds stay near the teacher's states while
    #: the student is poor. Without it on Stand the student's falls filled the data set (docs/distillation.md).
    gate: float | None = 0.03
    #: A world restarts after this many control steps of an episode (None: when the task ends it): restarting
    #: sooner sees more starts (run 4 in docs/distillation.md; Sit's student, without the gate, at 500).
    horizon: int | None = None
    #: What the fit and the gate compare: ``excitation`` (the actions), ``bounded`` (the same, with no loss past a
    #: label at a bound of [-1, 1], where the clipped action equals it) or ``activation`` (the activations both
    #: reach from the observed ones by the end of the control step, MuJoCo's activation dynamics). The expert's
    #: labels jump (mean squared change per step: Stand 0.009, Powerlift 0.083, Sit 0.66;
    #: benchmarks/studies/teacher_chatter.py).
    loss: str = "excitation"
    teacher: str = "expert"
    demos: str | None = None
    max_samples: int = 400_000  # the data set keeps the newest this many
    workers: int = 0
    seed: int = 0

    def __post_init__(self):
        for name in ("total_steps", "num_envs", "num_steps", "updates", "minibatch_size", "max_samples", "ensemble"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be >= 1, got {getattr(self, name)}")
        for name in ("beta0", "beta_decay"):
            if not 0.0 <= getattr(self, name) <= 1.0:
                raise ValueError(f"{name} must be in [0, 1], got {getattr(self, name)}")
        if self.horizon is not None and self.horizon < 1:
            raise ValueError(f"horizon must be >= 1 (or None), got {self.horizon}")
        if self.loss not in LOSSES:
            raise ValueError(f"unknown loss {self.loss!r}; valid: {', '.join(LOSSES)}")
        if self.gate is not None and not self.gate > 0:
            raise ValueError(f"gate must be > 0 (or None), got {self.gate}")
        if self.workers < 0:
            raise ValueError(f"workers must be >= 0 (0: one per core), got {self.workers}")
        from mskbench.control.registry import check_controller

        check_controller(self.teacher)
        self.hidden = tuple(self.hidden)

    def beta(self, iteration: int) -> float:
        """The teacher's share of the executed actions at ``iteration`` (0-based)."""
        return self.beta0 * self.beta_decay ** iteration

    def actor_config(self) -> PPOConfig:
        """The student deployed as PPO describes its actor (what a PPO checkpoint's ``config`` holds): an
        ensemble's widths are ``ensemble`` times ``hidden``."""
        hidden = tuple(h * self.ensemble for h in self.hidden)
        return PPOConfig(hidden=hidden, value_hidden=hidden, num_envs=self.num_envs, seed=self.seed,
                         total_steps=self.total_steps)


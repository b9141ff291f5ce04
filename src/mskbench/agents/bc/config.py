"""The settings of behaviour cloning (:class:`BCConfig`), as a run's ``run.json`` and a checkpoint's
``bc_config`` record them."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from mskbench.agents.ppo_networks import PPOConfig, RunningNorm

#: What the fit compares (:attr:`BCConfig.loss`).
LOSSES = ("excitation", "activation", "bounded")


@dataclass
class BCConfig:
    """Hyper-parameters of :class:`BCLearner` (our choices; the paper trains no BC)."""

    total_steps: int = 200_000
    num_envs: int = 8
    num_steps: int = 250  # control steps per world per iteration
    updates: int = 1000  # Adam steps per iteration
    minibatch_size: int = 256
    learning_rate: float = 3e-4
    #: The learning rate at the end of each iteration's fit: it falls linearly from ``learning_rate`` over the
    #: iteration's ``updates`` Adam steps and starts again the next (None: constant). Every checkpoint is
    #: then the end of a slow fit rather than a point of a fast one.
    lr_final: float | None = None
    #: Adam steps after the run's last iteration, on the whole data set and with no new data, in phases of a
    #: constant learning rate each: ``"LR:STEPS[,LR:STEPS...]"`` (None: none). Under a time limit the run
    #: stops collecting early enough for them (their time estimated from the last iteration); a resumed run may
    #: change it. Measured on Stand: docs/distillation.md, runs 9 and 11.
    polish: str | None = None
    #: The student deployed (acting in the worlds, in the checkpoint, evaluated) is an exponential moving
    #: average of the fitted networks at the ends of the iterations: ``avg ← average·avg + (1 − average)·fitted``
    #: (0: the fitted network itself); the fit goes on from the fitted one, and the log-std stays the fit of
    #: the fitted network's residuals. Measured on Stand: docs/distillation.md, run 12.
    average: float = 0.0
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
    #: The gate applies in the first this many iterations, then no more (None: in all), so that the student meets
    #: the drift its own steps lead to. Measured on Stand (docs/distillation.md, run 15): worse within 30 minutes.
    gate_iterations: int | None = None
    #: A world restarts after this many control steps of an episode (None: when the task ends it): restarting
    #: sooner sees more starts (run 4 in docs/distillation.md).
    horizon: int | None = None
    #: Leave out of the data set the last this many steps (of that iteration's collection) of every episode a
    #: termination ended, a fall: the expert does not recover from such states (benchmarks/takeover.py). 0: all.
    drop_tail: int = 0
    #: Standard deviation of Gaussian noise added to every executed action (clipped to [-1, 1]); the label
    #: stays the teacher's clean action for the state reached (DART's noise injection). 0: none.
    noise: float = 0.0
    #: The smallest standard deviation the observation's normalisation divides by (observation units; 0:
    #: PPO's 1e-4). Standing, many entries barely move (muscle lengths: median std 0.4 mm on the expert's path
    #: on Stand), so a centimetre off that path is 10+ standard deviations.
    std_floor: float = 0.0
    #: What the fit and the gate compare: ``excitation`` (the actions), ``bounded`` (the same, with no loss past a
    #: label at a bound of [-1, 1], where the clipped action equals it) or ``activation`` (the activations both
    #: reach from the observed ones by the end of the control step, MuJoCo's activation dynamics). The expert's
    #: labels jump (mean squared change per step: Stand 0.009, Powerlift 0.083, Sit 0.66; teacher_chatter.py).
    loss: str = "excitation"
    teacher: str = "expert"
    #: The teacher's QP weight on each activation's change over the step
    #: (:attr:`mskbench.control.qp.Weights.activation_rate`; 0: the expert as it is). Measured on Stand:
    #: docs/distillation.md, run 8.
    teacher_rate: float = 0.0
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
        if not 0.0 <= self.noise <= 1.0:
            raise ValueError(f"noise must be in [0, 1], got {self.noise}")
        if self.loss not in LOSSES:
            raise ValueError(f"unknown loss {self.loss!r}; valid: {', '.join(LOSSES)}")
        if not self.std_floor >= 0.0:
            raise ValueError(f"std_floor must be >= 0, got {self.std_floor}")
        if self.gate is not None and not self.gate > 0:
            raise ValueError(f"gate must be > 0 (or None), got {self.gate}")
        if not self.teacher_rate >= 0.0:
            raise ValueError(f"teacher_rate must be >= 0, got {self.teacher_rate}")
        if self.lr_final is not None and not 0.0 < self.lr_final <= self.learning_rate:
            raise ValueError(f"lr_final must be in (0, learning_rate={self.learning_rate}] (or None), got {self.lr_final}")
        for name, zero in (("workers", "one per core"), ("drop_tail", "keep all"), ("gate_iterations", "no gate")):
            if (getattr(self, name) or 0) < 0:
                raise ValueError(f"{name} must be >= 0 (0: {zero}), got {getattr(self, name)}")
        if self.polish is not None:
            parse_phases(self.polish)
        if not 0.0 <= self.average < 1.0:
            raise ValueError(f"average must be in [0, 1) (0: no average), got {self.average}")
        from mskbench.control.registry import check_controller

        check_controller(self.teacher)
        self.hidden = tuple(self.hidden)

    def policy_norm(self, norm: RunningNorm) -> RunningNorm:
        """The normalisation the student uses: the running statistics, their variance floored at
        ``std_floor``² (what its checkpoint stores as ``norm/var``)."""
        if self.std_floor <= 0:
            return norm
        return RunningNorm(norm.mean, np.maximum(norm.var, self.std_floor**2), norm.count, norm.clip)

    def beta(self, iteration: int) -> float:
        """The teacher's share of the executed actions at ``iteration`` (0-based)."""
        return self.beta0 * self.beta_decay ** iteration

    def gate_at(self, iteration: int) -> float | None:
        """The gate at ``iteration`` (0-based; None: none)."""
        return self.gate if self.gate_iterations is None or iteration < self.gate_iterations else None

    def polish_phases(self) -> list[tuple[float, int]]:
        """:attr:`polish` as (learning rate, Adam steps) pairs (none: ``[]``)."""
        return parse_phases(self.polish) if self.polish is not None else []

    def actor_config(self) -> PPOConfig:
        """The student deployed as PPO describes its actor (what a PPO checkpoint's ``config`` holds): an
        ensemble's widths are ``ensemble`` times ``hidden``."""
        hidden = tuple(h * self.ensemble for h in self.hidden)
        return PPOConfig(hidden=hidden, value_hidden=hidden, num_envs=self.num_envs, seed=self.seed,
                         total_steps=self.total_steps)


def parse_phases(text: str) -> list[tuple[float, int]]:
    """``"LR:STEPS[,LR:STEPS...]"`` as (learning rate, Adam steps) pairs; a clear error otherwise."""
    form = "LR:STEPS[,LR:STEPS...], e.g. 1e-4:3000,3e-5:3000"
    try:
        phases = [(float(lr), int(n)) for lr, n in (p.split(":") for p in str(text).split(","))]
    except ValueError:
        raise ValueError(f"polish phases take the form {form}; got {text!r}") from None
    if not phases or any(not lr > 0 or n < 1 for lr, n in phases):
        raise ValueError(f"polish phases need learning rates > 0 and steps >= 1 ({form}); got {text!r}")
    return phases

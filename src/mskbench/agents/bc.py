"""Behaviour cloning with DAgger relabelling: the privileged expert distilled into PPO's actor.

The teacher is a built-in privileged controller (:mod:`mskbench.control`, ``expert`` by default): it
reads the simulator of the world it labels. The student is the network PPO trains
(:mod:`mskbench.agents.ppo_networks`: an MLP of ``hidden`` widths with tanh, its mean clipped to
[-1, 1]) and sees the policy observation only, normalised as PPO normalises it. Each iteration:

1. **collect** ``num_steps`` control steps in each of the ``num_envs`` CPU worlds. In every step the
   teacher labels the state the world is in (its action for that state); the action executed is the
   teacher's with probability ``beta`` and the student's otherwise (DAgger's mixture,
   ``beta = beta0 · beta_decay^i`` at iteration ``i``; the first iteration is the teacher's alone). Where
   the student acts but its action differs from the label by more than ``gate`` (mean squared
   difference), the teacher acts instead (a gate on the student, as HG-DAgger's expert takes over): the
   worlds stay near the states the teacher keeps them in, and the student's own states are labelled
   as far as it strays before the gate. Episodes run on across iterations and restart as the training
   env restarts them, or after ``horizon`` control steps (a restart for the data's sake, not an end the
   task declares: the episode is not counted among the finished); the teacher is reset with its world.
2. **aggregate**: the observations and labels join the data set of every earlier iteration
   (DAgger's aggregation; ``demos``, a file of ``mskbench record``, can seed it).
3. **fit**: ``updates`` Adam steps on minibatches drawn uniformly from the whole data set, the loss
   the mean squared error between the student's mean action and the label (``loss="activation"``:
   between the activations the two reach); observations normalised by the running statistics of every
   observation collected, their standard deviation at least ``std_floor``. The log-std of the checkpoint's
   Gaussian is then the maximum-likelihood one of the residuals (per muscle, over the last
   minibatches), so PPO started from it (``mskbench train --algo ppo --init RUN``) explores about as
   far as the student errs.

``polish`` adds Adam steps on the whole data set after the last iteration; ``average`` deploys a moving
average of the fitted networks instead of the latest; ``ensemble`` fits several students side by side and
deploys the mean of their actions, as one MLP of wider layers.

The worlds run in ``workers`` processes (0: one per CPU core, at most one per world), each holding its
worlds and their teachers; the student's weights go to them once per iteration. Checkpoints hold the
student in PPO's layout (``params/policy``, ``params/log_std``, the normalisation), so a BC run loads
wherever a PPO checkpoint loads, plus ``format = "mskbench-bc"``, the optimiser and the BC settings;
the data set is kept beside the checkpoint, one file per iteration in ``dagger/`` (resuming reads it
back).
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mskbench.agents.base import RESUME_FREE, PolicyCheckpoint, check_obs_layout, config_defaults, flatten_tree
from mskbench.agents.base import layout_json, savez_atomic, unflatten_tree
from mskbench.agents.bc_student import ActivationSpace, read_demos, stack_members, student_action  # noqa: F401
from mskbench.agents.bc_student import widen_members
from mskbench.agents.bc_worlds import DaggerWorlds, WorldPool  # noqa: F401 (the API)
from mskbench.agents.ppo_networks import PPOConfig, RunningNorm, _jax, adam_init, adam_update, mlp_apply, mlp_init

FORMAT = "mskbench-bc"
CHECKPOINT_VERSION = 1
#: The data set's folder beside the checkpoint: one ``NNNNN.npz`` per iteration.
DATA_DIR = "dagger"
#: Bounds of the fitted log-std (std 0.02 .. 0.61, PPO's initial).
LOG_STD_RANGE = (-4.0, -0.5)
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
    #: MLP of ``ensemble`` times the ``hidden`` widths (:func:`~mskbench.agents.bc_student.widen_members`), so
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


# -- the learner ---------------------------------------------------------------------------------------
def make_fit(cfg: BCConfig, space: ActivationSpace | None = None):
    """Jitted ``fit(params, opt_state, obs, labels, acts, idx) -> (params, opt_state, losses, squared
    residuals)``: one Adam step per row of ``idx`` (minibatch indices into the normalised ``obs``, the
    ``labels`` and the observed activations ``acts``). The loss: the mean squared difference between the
    student's mean action and the label (``bounded``: none past a label at a bound), or (``space`` given)
    between the activations the two reach from ``acts``; the residuals are the actions'. The learning rate
    goes from ``cfg.learning_rate`` at the first row to ``cfg.lr_final`` at the last (linearly; constant where
    it is None), or is the matching entry of ``lrs`` (one per row of ``idx``), the optional last argument."""
    jax, jnp = _jax()
    lr0 = cfg.learning_rate
    lr1 = cfg.learning_rate if cfg.lr_final is None else cfg.lr_final

    def loss_fn(params, x, y, a0):
        mean = mlp_apply(params, x)
        err = mean - y
        if cfg.loss == "bounded":  # past a label at a bound the clipped action equals it: no error there
            err = jnp.where(y >= 1.0, jnp.minimum(err, 0.0), jnp.where(y <= -1.0, jnp.maximum(err, 0.0), err))
        if space is None:
            return jnp.mean(err**2), err
        gap = space.reached(a0, mean, jnp) - space.reached(a0, y, jnp)
        return jnp.mean(gap**2), err

    grad_fn = jax.value_and_grad(loss_fn, has_aux=True)

    def fit_one(params, opt_state, obs, labels, acts, idx, lrs=None):
        def step(carry, xs):
            rows, lr = xs
            params, opt_state = carry
            (loss, err), grads = grad_fn(params, obs[rows], labels[rows], acts[rows])
            params, opt_state, _ = adam_update(grads, opt_state, params, lr, cfg.max_grad_norm)
            return (params, opt_state), (loss, jnp.mean(err**2, axis=0))

        if lrs is None:
            lrs = jnp.linspace(lr0, lr1, idx.shape[0], dtype=jnp.float32)
        (params, opt_state), (losses, sq) = jax.lax.scan(step, (params, opt_state), (idx, lrs))
        return params, opt_state, losses, sq

    if cfg.ensemble == 1:
        fit = jax.jit(fit_one)
    else:  # the members side by side: stacked params and optimiser states, one ``idx`` each (K, steps, rows)
        members = jax.vmap(fit_one, in_axes=(0, 0, None, None, None, 0, None))

        @jax.jit
        def fit(params, opt_state, obs, labels, acts, idx, lrs=None):
            params, opt_state, losses, sq = members(params, opt_state, obs, labels, acts, idx, lrs)
            return params, opt_state, losses.mean(0), sq.mean(0)  # the members' mean loss and residuals

    return Fit(fit, cfg.ensemble)


@dataclass(frozen=True)
class Fit:
    """A fit of :func:`make_fit` and its number of members (``idx`` has a leading axis of that size when > 1)."""

    fn: Any
    members: int = 1

    def __call__(self, *args):
        return self.fn(*args)


def draw_rows(rng: np.random.Generator, n: int, steps: int, minibatch: int, members: int = 1) -> np.ndarray:
    """Minibatch indices into ``n`` rows for ``steps`` Adam steps: ``(steps, minibatch)``, or one such draw per
    member of an ensemble, ``(members, steps, minibatch)``."""
    return rng.integers(0, n, size=(steps, minibatch) if members == 1 else (members, steps, minibatch))


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


def fit_phases(fit, params, opt_state, x, y, acts, phases: list[tuple[float, int]], rng: np.random.Generator,
               minibatch: int, on_chunk=None, chunk: int = 1000):
    """Adam steps of ``fit`` (:func:`make_fit`) in ``phases`` of a constant learning rate each, on minibatches
    of ``minibatch`` rows drawn uniformly from ``x``/``y``/``acts``, ``chunk`` steps per call. Returns
    ``(params, opt_state, rows, squared residuals of the last call)``; one row per call (the phase's
    learning rate, its steps so far, the mean loss of the call's last 250 steps, its seconds so far),
    each also given to ``on_chunk``. The polish of a run (:attr:`BCConfig.polish`) and
    ``benchmarks/bc_refit.py`` are this."""
    _, jnp = _jax()
    rows, sq = [], None
    for lr, n in phases:
        t0 = time.perf_counter()
        for done in range(0, n, chunk):
            idx = draw_rows(rng, len(x), min(chunk, n - done), minibatch, fit.members)
            params, opt_state, losses, sq = fit(params, opt_state, x, y, acts, jnp.asarray(idx),
                                                jnp.full(idx.shape[-2], lr, jnp.float32))
            rows.append({"lr": lr, "steps": done + idx.shape[-2], "loss": float(np.asarray(losses)[-250:].mean()),
                         "seconds": time.perf_counter() - t0})
            if on_chunk is not None:
                on_chunk(rows[-1])
    return params, opt_state, rows, sq


@dataclass
class BCState:
    params: Any  # the fitted MLP (PPO's params["policy"] layout; an ensemble's members stacked, leading axis K)
    opt_state: Any
    norm: RunningNorm
    log_std: np.ndarray
    steps: int = 0
    iteration: int = 0
    average: Any = None  # the moving average of the fitted MLPs (BCConfig.average; None: none)
    members: int = 1  # BCConfig.ensemble

    @property
    def deployed(self) -> Any:
        """The student that acts, is saved as ``params/policy`` and is evaluated: the average where there is one,
        an ensemble's members as one wide MLP."""
        net = self.params if self.average is None else self.average
        return net if self.members == 1 else widen_members(net)

    def take_in(self, weight: float) -> None:
        """Move the average towards the fitted network (``average ← weight·average + (1 − weight)·params``);
        ``weight`` 0: no average."""
        if weight <= 0:
            return
        if self.average is None:
            self.average = self.params
        else:
            jax, _ = _jax()
            self.average = jax.tree_util.tree_map(lambda a, p: weight * a + (1.0 - weight) * p, self.average,
                                                  self.params)


class BCLearner:
    """DAgger on the task of ``env`` (a :class:`~mskbench.envs.vector.MSKVectorEnv`: its task and
    layout; the worlds themselves are rebuilt beside their teachers, :class:`WorldPool`). ``checkpoint``
    continues a run (same settings; its data set is read back from the checkpoint's folder)."""

    def __init__(self, env: Any, cfg: BCConfig, checkpoint: Path | None = None):
        from mskbench.control.registry import behaviour_for
        from mskbench.envs.vector import worlds

        envs = worlds(env, "bc (it distils the expert)")
        if not hasattr(envs[0], "task"):
            raise ValueError("bc distils the expert on the CPU env (backend='cpu') without a paradigm's wrapper")
        if env.num_envs != cfg.num_envs:
            raise ValueError(f"the env has {env.num_envs} worlds, the config says num_envs={cfg.num_envs}")
        task = envs[0].task
        behaviour_for(cfg.teacher, task.name)  # a clear error for a task the teacher does not serve
        self.env, self.cfg, self.task = env, cfg, task
        self.obs_layout = dict(env.obs_layout)
        self.obs_size, self.action_size = int(env.obs_size), int(env.action_size)
        self.space = ActivationSpace(envs[0], self.obs_layout) if cfg.loss == "activation" else None
        self.fit = make_fit(cfg, self.space)
        self.deterministic = None
        self._obs: list[np.ndarray] = []
        self._labels: list[np.ndarray] = []
        self._new: tuple[np.ndarray, np.ndarray] | None = None  # this iteration's data, saved with the checkpoint
        if checkpoint is not None:
            self.state = load_checkpoint(checkpoint, cfg, self.obs_layout)
            self._read_data(Path(checkpoint).parent / DATA_DIR)
        else:
            jax, _ = _jax()
            key, sizes = jax.random.PRNGKey(cfg.seed), [self.obs_size, *cfg.hidden, self.action_size]
            nets = [mlp_init(key if k == 0 else jax.random.fold_in(key, k), sizes, last_scale=0.01)
                    for k in range(cfg.ensemble)]
            params, opt = (nets[0], adam_init(nets[0])) if cfg.ensemble == 1 else \
                (stack_members(nets), stack_members([adam_init(n) for n in nets]))
            self.state = BCState(params, opt, RunningNorm.create(self.obs_size),
                                 np.full(self.action_size, LOG_STD_RANGE[1], np.float32), members=cfg.ensemble)
            if cfg.demos:
                obs, labels = read_demos(cfg.demos, task.name, self.obs_layout)
                self._add(obs, labels)
                self._new = (obs, labels)
        self.rng = np.random.default_rng(cfg.seed + 1_000_003 * self.state.iteration)
        self.pool = WorldPool(task, cfg.num_envs, cfg.seed + 1_000_003 * self.state.iteration, cfg.teacher,
                              cfg.workers, cfg.horizon, cfg.teacher_rate)

    @property
    def steps(self) -> int:
        return self.state.steps

    @property
    def iteration(self) -> int:
        return self.state.iteration

    # -- the data set ----------------------------------------------------------------------------------
    def _add(self, obs: np.ndarray, labels: np.ndarray) -> None:
        self._obs.append(np.asarray(obs, np.float32))
        self._labels.append(np.asarray(labels, np.float32))
        self.state.norm.update(obs)
        self._trim()

    def _trim(self) -> None:
        keep_newest(self._obs, self._labels, self.cfg.max_samples)

    def _read_data(self, folder: Path) -> None:
        self._obs, self._labels = read_dataset(folder, self.state.iteration)
        self._trim()

    @property
    def samples(self) -> int:
        return sum(len(o) for o in self._obs)

    # -- one iteration ---------------------------------------------------------------------------------
    def _student(self) -> dict | None:
        if self.state.iteration == 0:  # the first iteration is the teacher's
            return None
        params = [{k: np.asarray(v) for k, v in layer.items()} for layer in self.state.deployed]
        norm = self.cfg.policy_norm(self.state.norm)
        return {"params": params, "mean": norm.mean, "std": np.sqrt(norm.var + 1e-8), "clip": norm.clip,
                "space": self.space}

    def iterate(self, deadline: float | None = None) -> dict:
        _, jnp = _jax()
        cfg, state = self.cfg, self.state
        t0 = time.perf_counter()
        beta = cfg.beta(state.iteration)
        student = self._student()
        data = self.pool.collect(student, beta if student else 1.0, cfg.num_steps, cfg.gate_at(state.iteration),
                                 cfg.noise, cfg.drop_tail)
        keep = ~data["dropped"].reshape(-1)
        new_obs, new_labels = data["obs"][keep], data["labels"][keep]
        self._add(new_obs, new_labels)
        self._new = (new_obs, new_labels) if self._new is None else (np.concatenate([self._new[0], new_obs]),
                                                                      np.concatenate([self._new[1], new_labels]))
        collect_s = time.perf_counter() - t0
        obs = np.concatenate(self._obs)
        x = jnp.asarray(cfg.policy_norm(state.norm)(obs))
        y = jnp.asarray(np.concatenate(self._labels))
        acts = jnp.asarray(obs[:, self.space.act] if self.space is not None else np.zeros((len(obs), 0), np.float32))
        idx = draw_rows(self.rng, len(obs), cfg.updates, cfg.minibatch_size, cfg.ensemble)
        params, opt_state, losses, sq = self.fit(state.params, state.opt_state, x, y, acts, jnp.asarray(idx))
        tail = max(1, cfg.updates // 4)  # the residuals of the last quarter of the steps
        state.params, state.opt_state = params, opt_state
        state.take_in(cfg.average)
        state.log_std = fitted_log_std(sq, tail)
        state.steps += cfg.num_steps * cfg.num_envs
        state.iteration += 1
        wall = time.perf_counter() - t0
        polish = self._polish(x, y, acts, wall, (wall - collect_s) / cfg.updates, deadline)
        finished = data["finished"]
        return {**polish, "iteration": state.iteration, "steps": state.steps,
                "beta": beta if student is not None else 1.0,
                "teacher_share": float(data["teacher_acted"].mean()), "gated_share": float(data["gated"].mean()),
                "dropped_share": float(data["dropped"].mean()),
                "samples": len(obs),
                "mean_reward": float(data["rewards"].mean()),
                "episode_return": float(np.mean([f["return"] for f in finished])) if finished else None,
                "episodes": len(finished),
                "episode_success": float(np.mean([f["success"] for f in finished])) if finished else None,
                "bc_loss": float(np.asarray(losses)[-tail:].mean()), "bc_loss_first": float(np.asarray(losses)[0]),
                "steps_per_s": cfg.num_steps * cfg.num_envs / wall, "collect_s": collect_s,
                "update_s": wall - collect_s}

    def _polish(self, x, y, acts, iteration_s: float, step_s: float, deadline: float | None) -> dict:
        """The polish (:attr:`BCConfig.polish`) after the run's last iteration: the one that reaches
        ``total_steps``, or after which another iteration (as long as this one, ``iteration_s``) and the
        polish (``step_s`` per Adam step) would end past ``deadline``. Returns its log entries, with
        ``done`` (the run is finished) when it ran; ``{}`` when it did not."""
        cfg, state = self.cfg, self.state
        phases = cfg.polish_phases()
        steps = sum(n for _, n in phases)
        last = state.steps >= cfg.total_steps or (
            deadline is not None and time.perf_counter() + iteration_s + steps * step_s > deadline)
        if not phases or not last:
            return {}
        t0 = time.perf_counter()
        state.params, state.opt_state, rows, sq = fit_phases(self.fit, state.params, state.opt_state, x, y, acts,
                                                             phases, self.rng, cfg.minibatch_size)
        state.take_in(cfg.average)
        state.log_std = fitted_log_std(sq, min(250, len(sq)))
        return {"done": True, "polish_loss": rows[-1]["loss"], "polish_s": time.perf_counter() - t0,
                "polish": rows}

    def policy(self):
        """The student's deterministic policy (PPO's :func:`~mskbench.agents.ppo.make_policy`)."""
        from mskbench.agents.ppo import make_functions, make_policy

        if self.deterministic is None:
            self.deterministic = make_functions(self.cfg.actor_config(), None)[2]
        return make_policy({"policy": self.state.deployed}, self.cfg.policy_norm(self.state.norm),
                           self.cfg.actor_config(), None,
                           self.deterministic)

    def save(self, path: Path) -> None:
        path = Path(path)
        if self._new is not None:  # the data this checkpoint has seen, before the checkpoint names it
            folder = path.parent / DATA_DIR
            folder.mkdir(exist_ok=True)
            savez_atomic(folder / f"{self.state.iteration:05d}.npz", {"obs": self._new[0], "labels": self._new[1]})
            self._new = None
        save_checkpoint(path, self.state, self.cfg, self.obs_layout)

    def close(self) -> None:
        self.pool.close()

    def __del__(self):
        try:
            self.pool.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown
            pass


def fitted_log_std(sq: Any, tail: int) -> np.ndarray:
    """The maximum-likelihood log-std of a fit's residuals: per action entry, from the mean squared
    residuals ``sq`` (one row per Adam step) of its last ``tail`` steps, within :data:`LOG_STD_RANGE`."""
    rms = np.sqrt(np.asarray(sq)[-tail:].mean(0))
    return np.clip(np.log(np.maximum(rms, 1e-6)), *LOG_STD_RANGE).astype(np.float32)


def keep_newest(obs: list[np.ndarray], labels: list[np.ndarray], max_samples: int) -> None:
    """Drop the oldest whole iterations' arrays (in place) while the rest still hold ``max_samples``."""
    total = sum(len(o) for o in obs)
    while obs and total - len(obs[0]) >= max_samples:
        total -= len(obs.pop(0))
        labels.pop(0)


def read_dataset(folder: str | Path, iteration: int) -> tuple[list[np.ndarray], list[np.ndarray]]:
    """A run's data set (its ``dagger/`` folder) as the checkpoint of ``iteration`` saw it: the observations
    and labels of each iteration's file up to that one (a later file was written after that checkpoint)."""
    folder = Path(folder)
    obs, labels = [], []
    for f in sorted(folder.glob("*.npz")) if folder.is_dir() else []:
        if int(f.stem) > iteration:
            continue
        with np.load(f) as z:
            obs.append(z["obs"])
            labels.append(z["labels"])
    return obs, labels


# -- checkpoints -------------------------------------------------------------------------------------------
def save_checkpoint(path: Path, state: BCState, cfg: BCConfig, layout: Mapping[str, slice] | None = None) -> None:
    """The student in PPO's layout (``params/policy``, ``params/log_std``, ``norm/``, ``config`` as PPO's
    actor config), plus the format, the optimiser and the BC settings. ``norm/var`` is the variance the
    student divides by (floored, :meth:`BCConfig.policy_norm`); ``bc_norm_var`` the running one."""
    flat = {f"params/policy/{k}": v for k, v in flatten_tree(state.deployed).items()}
    if state.members > 1:  # the members the run goes on from (and their average, if any)
        flat.update({f"bc_members/{k}": v for k, v in flatten_tree(state.params).items()})
        if state.average is not None:
            flat.update({f"bc_members_average/{k}": v for k, v in flatten_tree(state.average).items()})
    elif state.average is not None:  # the fitted network the run goes on from
        flat.update({f"bc_fitted/{k}": v for k, v in flatten_tree(state.params).items()})
    flat["params/log_std"] = np.asarray(state.log_std, np.float32)
    flat.update({f"opt/{k}": v for k, v in flatten_tree(state.opt_state).items()})
    flat.update({"format": np.array(FORMAT), "format_version": np.array(CHECKPOINT_VERSION),
                 "norm/mean": state.norm.mean, "norm/var": cfg.policy_norm(state.norm).var,
                 "bc_norm_var": state.norm.var, "norm/count": np.array(state.norm.count),
                 "steps": np.array(state.steps), "iteration": np.array(state.iteration),
                 "config": np.array(json.dumps(asdict(cfg.actor_config()))),
                 "bc_config": np.array(json.dumps(asdict(cfg)))})
    if layout is not None:
        flat["obs_layout"] = np.array(layout_json(layout))
    savez_atomic(path, flat)


def load_checkpoint(path: str | Path, expect_config: BCConfig, expect_layout: Mapping[str, slice]) -> BCState:
    _, jnp = _jax()
    with np.load(path, allow_pickle=False) as z:
        if "bc_config" not in z.files:
            raise ValueError(f"{path} holds only a policy: it can be evaluated, not resumed")
        old = json.loads(str(z["bc_config"]))
        new = json.loads(json.dumps(asdict(expect_config)))
        defaults = json.loads(json.dumps(config_defaults(BCConfig)))  # keys newer than the run
        diff = sorted(k for k in new if k not in RESUME_FREE and old.get(k, defaults[k]) != new[k])
        if diff:
            raise ValueError(f"{path} was trained with a different config ({diff}); resume with the same settings")
        size = list(expect_layout.values())[-1].stop
        check_obs_layout(path, str(z["obs_layout"]), expect_layout, size, z["norm/mean"].size)
        deployed, fitted, members, members_avg = ({k[len(p):]: jnp.asarray(z[k]) for k in z.files if k.startswith(p)}
                                                  for p in ("params/policy/", "bc_fitted/", "bc_members/",
                                                            "bc_members_average/"))
        if members:
            params, average = unflatten_tree(members), unflatten_tree(members_avg) if members_avg else None
        else:
            params = unflatten_tree(fitted or deployed)
            average = unflatten_tree(deployed) if fitted else None
        opt = unflatten_tree({k[len("opt/"):]: jnp.asarray(z[k]) for k in z.files if k.startswith("opt/")})
        var = z["bc_norm_var"] if "bc_norm_var" in z.files else z["norm/var"]
        norm = RunningNorm(z["norm/mean"].copy(), var.copy(), float(z["norm/count"]))
        return BCState(params, opt, norm, z["params/log_std"].copy(), int(z["steps"]), int(z["iteration"]), average,
                       expect_config.ensemble)


def bc_policy_checkpoint(path: str | Path, obs_layout: Mapping[str, slice], obs_size: int) -> PolicyCheckpoint:
    """A BC checkpoint as a :class:`~mskbench.agents.base.PolicyCheckpoint` (PPO's reader: the same actor)."""
    from mskbench.agents.ppo import ppo_policy_checkpoint

    ckpt = ppo_policy_checkpoint(path, obs_layout, obs_size)
    ckpt.format = FORMAT
    return ckpt


def export_policy(src: str | Path, dst: str | Path) -> Path:
    """The student alone (no optimiser, no BC settings): it evaluates like ``src`` and cannot be resumed."""
    dst = Path(dst)
    with np.load(src, allow_pickle=False) as z:
        kept = {k: z[k] for k in z.files
                if not k.startswith(("opt/", "bc_config", "bc_norm_var", "bc_fitted/", "bc_members"))}
    kept["policy_only"] = np.array(True)
    savez_atomic(dst, kept)
    return dst

"""Executors: run evaluation units on local worker processes or on Ray.

Both take the same units and yield the same records (a unit's record depends
only on its key). The process that calls :func:`run_units` is the only writer
of the results store: it writes each record, in its own transaction, as soon
as it arrives, so a killed run loses only the units in flight and a rerun
resumes from the store.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from mskbench.eval.protocol import Unit, checkpoint_path, load_policy, perturbation_for

log = logging.getLogger(__name__)
EXECUTORS = ("local", "ray")


@dataclass(frozen=True)
class JobSpec:
    """What every unit of one run shares (picklable)."""

    policy: str
    emg_reference: str | None = None


# -- the work of one unit (runs in a worker) ------------------------------------------
_ENVS: dict = {}
_EMG_REFS: dict = {}
_CHECKPOINT_POLICIES: dict = {}


def _env(task: str):
    """The worker's env of ``task``, as compiled: a cached env is handed out with the muscle gains its
    model was compiled with and no perturbation, whatever the previous unit did to it (a dynamics unit
    scales the model's peak forces until the next reset), so building a policy from it (one that reads the
    muscle parameters or the model) never depends on which unit ran before."""
    from mskbench.envs import MSKEnv
    from mskbench.envs.perturbations import Perturbation

    if task not in _ENVS:
        _ENVS[task] = MSKEnv(task)
    env = _ENVS[task]
    env.perturbation = Perturbation()
    env.sim.set_muscle_gain_scale(None)
    return env


def _emg_reference(path: str | None):
    if path is None:
        return None
    if path not in _EMG_REFS:
        from mskbench.metrics.emg import load_emg_reference

        _EMG_REFS[path] = load_emg_reference(path)
    return _EMG_REFS[path]


def _policy(spec: str, env, unit: Unit):
    """The unit's policy. A checkpoint is deterministic, so it is loaded (and its
    network compiled) once per worker and task; other policies are built per unit
    because the unit's seed drives them. A checkpoint acts as it records
    (:func:`~mskbench.eval.protocol.load_policy`)."""
    ckpt = checkpoint_path(spec)
    if ckpt is None:
        return load_policy(spec, env, unit.seed)
    stat = Path(ckpt).stat()  # a checkpoint rewritten in place (a run still training) is loaded again
    key = (str(Path(ckpt).resolve()), stat.st_mtime_ns, stat.st_size, unit.task)
    if key not in _CHECKPOINT_POLICIES:
        _CHECKPOINT_POLICIES[key] = load_policy(spec, env, unit.seed)
    return _CHECKPOINT_POLICIES[key]


def execute_unit(unit: Unit, spec: JobSpec) -> dict:
    """Run one unit and return its store record. Envs are cached per worker process."""
    from mskbench.eval.episodes import run_episode

    env = _env(unit.task)
    policy = _policy(spec.policy, env, unit)  # from the env as compiled, before this unit's perturbation
    env.perturbation = perturbation_for(unit.perturbation, unit.scale)
    result = run_episode(env, policy, unit.seed, emg_reference=_emg_reference(spec.emg_reference))
    record = result.as_dict()
    record.update(method=unit.method, task=unit.task, perturbation=unit.perturbation,
                  scale=float(unit.scale), seed=int(unit.seed), privileged=is_privileged(policy))
    return record


def is_privileged(policy) -> bool:
    """Whether ``policy`` reads the simulator (it says so: ``privileged = True``, as the expert, ``hold`` and a
    policy over the expert do); the store records it per method."""
    return bool(getattr(policy, "privileged", False))


class _UnitRunner:
    """What a local worker holds: the job's spec (its envs and policies are cached per process)."""

    def __init__(self, spec: JobSpec):
        self.spec = spec

    def run(self, unit: Unit) -> dict:
        return execute_unit(unit, self.spec)


# -- executors -------------------------------------------------------------------------
def run_local(units: list[Unit], spec: JobSpec, workers: int) -> Iterator[dict]:
    """Yield records as units finish, on ``workers`` processes (1: in this process)."""
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    if workers == 1:
        for u in units:
            yield execute_unit(u, spec)
        return
    from mskbench.sim.processes import Workers  # here: importing mskbench.sim loads MuJoCo

    # Two units in flight a worker, so a kill loses little and memory stays flat.
    queue = iter(units)
    with Workers(_UnitRunner, [(spec,)] * workers) as pool:
        held = [0] * workers

        def feed(i: int) -> None:
            u = next(queue, None)
            if u is not None:
                pool.send(i, "run", u)
                held[i] += 1

        for i in list(range(workers)) * 2:
            feed(i)
        while any(held):
            for i in pool.answered([i for i in range(workers) if held[i]]):
                held[i] -= 1
                yield pool.recv(i)
                feed(i)


def _import_ray():
    try:
        import ray
    except ImportError:
        raise RuntimeError("the Ray executor needs Ray: pip install 'mskbench[ray]'") from None
    return ray


def check_executor(name: str) -> str:
    """``name`` if that executor can run here; errors name the valid ones or what to install."""
    if name not in EXECUTORS:
        raise ValueError(f"unknown executor {name!r}; valid executors: {', '.join(EXECUTORS)}")
    if name == "ray":
        _import_ray()
    return name


def run_ray(units: list[Unit], spec: JobSpec, address: str | None = None,
            num_cpus: int | None = None) -> Iterator[dict]:
    """Yield records as units finish on a Ray cluster (``address``) or a local Ray instance."""
    ray = _import_ray()
    started = False
    if not ray.is_initialized():
        kwargs: dict[str, bool | str | int] = {"include_dashboard": False, "log_to_driver": False}
        if address:
            kwargs["address"] = address
        elif num_cpus:
            kwargs["num_cpus"] = num_cpus
        ray.init(**kwargs)
        started = True
    try:
        remote = ray.remote(num_cpus=1)(execute_unit)
        spec_ref = ray.put(spec)
        pending = [remote.remote(u, spec_ref) for u in units]
        while pending:
            done, pending = ray.wait(pending, num_returns=1)
            yield ray.get(done[0])
    finally:
        if started:
            ray.shutdown()


def run_units(store, units: Iterable[Unit], spec: JobSpec, executor: str = "local", workers: int = 1,
              address: str | None = None, on_record: Callable[[dict], None] | None = None) -> dict:
    """Run the units the store lacks and write each record as it arrives.

    Returns counts: ``{"planned", "skipped", "written"}``.
    """
    check_executor(executor)
    units = sorted(set(units))
    todo = store.missing(units)
    log.info("%d units planned, %d already stored, %d to run", len(units), len(units) - len(todo), len(todo))
    if executor == "local":
        stream = run_local(todo, spec, workers)
    else:
        stream = run_ray(todo, spec, address=address, num_cpus=workers if not address else None)
    written = 0
    for record in stream:
        written += store.write(record)
        if on_record is not None:
            on_record(record)
    return {"planned": len(units), "skipped": len(units) - len(todo), "written": written}

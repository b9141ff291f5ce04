"""Where the protocol's episodes run: the CPU executors (:mod:`mskbench.eval.executors`) or batched
on the JAX env (:mod:`mskbench.eval.batched`), behind one call for ``mskbench eval`` and ``sweep``.

:func:`check_backend_policy` says before any store is opened whether a backend can run a policy, and
:func:`check_devices` whether a device count fits;
:func:`run_on_backend` runs the units the store lacks on the chosen backend and writes their
records; :func:`unit_records` reads back the stored records of exactly those units.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from mskbench.eval.executors import JobSpec, check_executor, run_units
from mskbench.eval.protocol import Unit, check_policy_spec
from mskbench.eval.store import ResultsStore

#: Evaluation backends: the CPU executors, or batched on the JAX env (mskbench.eval.batched).
BACKENDS = ("cpu", "jax")


def check_backend_policy(policy_spec: str, backend: str = "cpu", tasks: Iterable[str] = ()) -> None:
    """Raise ValueError when ``policy_spec`` is no policy, one ``backend`` cannot run, or a built-in controller
    with no behaviour for one of ``tasks``."""
    check_policy_spec(policy_spec, tasks)
    if backend == "jax":
        from mskbench.eval.batched import check_batched_policy

        check_batched_policy(policy_spec)


def check_backend(backend: str, executor: str) -> None:
    """Raise RuntimeError when the CPU backend's ``executor`` cannot run here (Ray missing)."""
    if backend not in BACKENDS:
        raise ValueError(f"unknown backend {backend!r}; choose from {', '.join(BACKENDS)}")
    if backend == "cpu":
        check_executor(executor)


def check_devices(backend: str, devices: int | None) -> None:
    """Raise ValueError when ``devices`` is given for the CPU backend, or is not a count of devices JAX sees
    (1 up to all of them; the batched evaluation pads each batch to a multiple of it)."""
    if devices is None:
        return
    if backend != "jax":
        raise ValueError("--devices splits the batched evaluation's worlds over devices (--backend jax); "
                         "--backend cpu runs its episodes on the host")
    from mskbench.agents.data_parallel import resolve_devices

    resolve_devices(devices, None)


def run_on_backend(store: ResultsStore, units: list[Unit], spec: JobSpec, *, backend: str = "cpu",
                   executor: str = "local", workers: int = 1, address: str | None = None, impl: str = "warp",
                   batch_size: int = 1024, devices: int | None = None,
                   on_record: Callable[[dict], None] | None = None) -> dict:
    """Run the units ``store`` lacks on ``backend`` and write each record as it arrives (``on_record``
    sees each). ``executor``, ``workers`` and ``address`` apply to the CPU backend, ``impl``,
    ``batch_size`` and ``devices`` to the JAX one. Returns the counts of the backend's runner."""
    check_backend(backend, executor)
    if backend == "jax":
        from mskbench.eval.batched import run_units_batched

        return run_units_batched(units, spec, store, impl=impl, batch_size=batch_size, progress=on_record,
                                 devices=devices)
    return run_units(store, units, spec, executor=executor, workers=workers, address=address,
                     on_record=on_record)


def unit_records(store: ResultsStore, units: Iterable[Unit]) -> list[dict]:
    """The stored records of ``units`` (all of one method), in the store's key order."""
    units = list(units)
    if not units:
        return []
    keys = {u.key for u in units}
    return [r for r in store.records(method=units[0].method)
            if (r["method"], r["task"], r["perturbation"], float(r["scale"]), int(r["seed"])) in keys]

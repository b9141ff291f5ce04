"""The package's one pool of worker processes for CPU worlds.

:class:`Workers` starts ``spawn`` processes (safe with the threads of JAX and BLAS in the parent), each
holding one object that it builds itself from a picklable ``factory(*args)`` (its worlds, or an
evaluation runner that caches envs), and calls that object's methods on request. Evaluation
(:func:`mskbench.eval.executors.run_local`) hands units to whichever worker is free; DAgger
(:class:`mskbench.agents.bc.worlds.WorldPool`) steps every worker's worlds at once. Either way a
worker:

- runs one BLAS / OpenMP thread (the workers are the parallelism: with a thread pool per worker, two
  DAgger workers on two cores measured 20.9 ms per student action against 3.4 ms single-threaded);
- ends when the process that started it dies (kill -9 or SIGTERM of a sweep), instead of running on
  re-parented to init (:func:`exit_with_parent`);
- sends back an exception its object raised; the caller re-raises it.
"""

from __future__ import annotations

import ctypes
import os
import signal
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

_PR_SET_PDEATHSIG = 1  # <linux/prctl.h>

#: The environment a worker starts with, set in this process around the spawn (a child reads BLAS's
#: thread count when it first imports NumPy, which happens while it unpickles its task).
ONE_THREAD = {"OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}


def exit_with_parent(parent: int) -> None:
    """End this process when process ``parent`` dies: Linux sends SIGTERM at once
    (``PR_SET_PDEATHSIG``); a thread polling ``getppid()`` every second covers other systems and a
    parent that died before that."""
    try:
        ctypes.CDLL(None, use_errno=True).prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM))
    except (OSError, AttributeError):  # not Linux
        pass

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


@contextmanager
def _one_thread_env() -> Iterator[None]:
    saved = {k: os.environ.get(k) for k in ONE_THREAD}
    os.environ.update(ONE_THREAD)
    try:
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _serve(conn: Any, parent: int, factory: Callable[..., Any], args: tuple) -> None:
    """A worker: build the object, then answer ``(method, args)`` until ``None``."""
    exit_with_parent(parent)
    try:
        obj = factory(*args)
    except Exception as e:  # the caller re-raises it
        conn.send(("error", e))
        conn.close()
        return
    conn.send(("ok", None))
    try:
        while True:
            msg = conn.recv()
            if msg is None:
                break
            method, call_args = msg
            try:
                conn.send(("ok", getattr(obj, method)(*call_args)))
            except Exception as e:
                conn.send(("error", e))
    finally:
        close = getattr(obj, "close", None)
        if callable(close):
            close()
        conn.close()


class Workers:
    """One worker process per entry of ``args``: worker ``i`` holds ``factory(*args[i])``.

    :meth:`send` asks worker ``i`` to call a method (calls queue up per worker and are answered in
    order); :meth:`recv` takes its next answer; :meth:`answered` says which of some workers have one
    waiting; :meth:`call_all` asks every worker and gathers the answers in worker order.
    """

    def __init__(self, factory: Callable[..., Any], args: Sequence[tuple]):
        import multiprocessing as mp

        ctx = mp.get_context("spawn")
        self.conns: list[Any] = []
        self.procs: list[Any] = []
        try:
            with _one_thread_env():
                for a in args:
                    parent, child = ctx.Pipe()
                    p = ctx.Process(target=_serve, args=(child, os.getpid(), factory, tuple(a)), daemon=True)
                    p.start()
                    child.close()
                    self.conns.append(parent)
                    self.procs.append(p)
            for i in range(len(self.conns)):
                self.recv(i)  # built, or its error raised here
        except BaseException:
            self.close()
            raise

    def __len__(self) -> int:
        return len(self.conns)

    def send(self, i: int, method: str, *args: Any) -> None:
        self.conns[i].send((method, args))

    def recv(self, i: int) -> Any:
        try:
            status, value = self.conns[i].recv()
        except EOFError:
            raise RuntimeError(f"worker process {i} ended (exit code {self.procs[i].exitcode})") from None
        if status == "error":
            raise value
        return value

    def answered(self, workers: Sequence[int], timeout: float | None = None) -> list[int]:
        """Those of ``workers`` with an answer waiting (blocks until at least one, or ``timeout``)."""
        from multiprocessing.connection import wait

        ready = {id(c) for c in wait([self.conns[i] for i in workers], timeout)}
        return [i for i in workers if id(self.conns[i]) in ready]

    def call_all(self, method: str, *args: Any) -> list[Any]:
        for i in range(len(self)):
            self.send(i, method, *args)
        return [self.recv(i) for i in range(len(self))]

    def close(self) -> None:
        for c in self.conns:
            try:
                c.send(None)
            except (BrokenPipeError, OSError):
                pass
        for p in self.procs:
            p.join(timeout=10)
            if p.is_alive():
                p.terminate()
        for c in self.conns:
            c.close()
        self.conns, self.procs = [], []

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

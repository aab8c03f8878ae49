"""Where Monte Carlo chunks run: a local thread pool or a Dask distributed cluster.

A *task* is self-contained (parameters, root seed, chunk index, size); its result depends on
nothing else, so every backend returns the same results in chunk order: local with 1 or many
threads, a Dask ``LocalCluster`` (``workers=N``) or an existing scheduler
(``scheduler="tcp://host:port"``). The compiled kernels release the GIL (``nogil=True``), so
local threads run chunks in parallel.

Dask is an optional extra (``pip install semi_core[dask]``); it is imported only when used.
**Connect only to a scheduler you trust**: the Dask protocol deserialises (unpickles) the
objects a scheduler sends. Connecting gives up after ``connect_timeout`` seconds (default 10).

With ``reduce=fn`` the results are folded into an accumulator as they arrive (at most a few
chunks' results are held at once), so the memory does not grow with the number of tasks.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

from semi_core._validation import check_int, check_positive

__all__ = ["run_tasks", "run_local", "run_dask", "DEFAULT_CONNECT_TIMEOUT"]

#: Seconds to wait for a Dask scheduler before giving up.
DEFAULT_CONNECT_TIMEOUT = 10.0


class _Collect:
    """Default reducer: results in task order (a list)."""

    def __init__(self, n: int):
        self.out: list = [None] * n

    def __call__(self, acc, i, res):
        self.out[i] = res
        return acc


def _bar(total: int, progress: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, disable=not progress, unit="round", desc="simulate",
                dynamic_ncols=True, leave=False)


def _windowed(submit: Callable, wait_one: Callable, n: int, window: int) -> Iterator:
    """Submit at most ``window`` tasks ahead; yield ``(index, result)`` as they complete."""
    pending: dict = {}
    nxt = 0
    while nxt < n or pending:
        while nxt < n and len(pending) < window:
            pending[submit(nxt)] = nxt
            nxt += 1
        for fut, res in wait_one(list(pending)):
            yield pending.pop(fut), res


def run_local(fn: Callable, tasks: Sequence, *, threads: int = 1, progress: bool = False,
              sizes: Sequence[int] | None = None, reduce: Callable | None = None, init=None):
    """Run ``fn(task)`` for every task on ``threads`` threads.

    Returns the results in task order, or, with ``reduce(acc, index, result) -> acc``, the
    accumulator folded over results as they arrive (starting from ``init``).
    """
    threads = check_int(threads, "threads", minimum=1)
    sizes = list(sizes) if sizes is not None else [1] * len(tasks)
    collect = _Collect(len(tasks)) if reduce is None else None
    red = collect if reduce is None else reduce
    acc = init
    with _bar(sum(sizes), progress) as bar:
        if threads == 1 or len(tasks) <= 1:
            for i, task in enumerate(tasks):
                acc = red(acc, i, fn(task))
                bar.update(sizes[i])
        else:
            with ThreadPoolExecutor(max_workers=threads) as pool:
                def wait_one(futs):
                    done, _ = wait(futs, return_when=FIRST_COMPLETED)
                    return [(f, f.result()) for f in done]

                for i, res in _windowed(lambda i: pool.submit(fn, tasks[i]), wait_one,
                                        len(tasks), 4 * threads):
                    acc = red(acc, i, res)
                    bar.update(sizes[i])
    return collect.out if collect is not None else acc


def _connect(scheduler: str, timeout: float):
    """A ``distributed.Client`` to ``scheduler``, or a clear error within ``timeout`` s."""
    from urllib.parse import urlsplit

    from distributed import Client

    if "://" not in scheduler:
        scheduler = "tcp://" + scheduler
    parts = urlsplit(scheduler)
    if parts.scheme in ("tcp", "tls"):
        try:
            host, port = parts.hostname, parts.port
        except ValueError:
            host, port = None, None
        if not host or port is None:
            raise ValueError(f"scheduler must be an address like tcp://host:8786, got "
                             f"{scheduler!r}")
        if parts.scheme == "tcp":  # (a TLS server waits for the client to speak first)
            _probe_greeting(scheduler, host, port, timeout)
    box: dict = {}

    def make():
        try:
            box["client"] = Client(scheduler, timeout=timeout)
        except BaseException as exc:  # noqa: BLE001 - re-raised below in the caller's thread
            box["error"] = exc

    t = threading.Thread(target=make, daemon=True)
    t.start()
    t.join(timeout + 5.0)
    if t.is_alive():
        raise TimeoutError(f"scheduler {scheduler}: no Dask session within {timeout:g} s "
                           "(--connect-timeout)")
    if "error" in box:
        exc = box["error"]
        if isinstance(exc, TimeoutError | OSError):
            raise TimeoutError(f"scheduler {scheduler}: no Dask handshake within {timeout:g} s "
                               f"(is it a Dask scheduler? --connect-timeout): {exc}") from None
        raise exc
    return box["client"]


#: A Dask scheduler greets first with a small message: 8 bytes of little-endian length.
_MAX_GREETING = 1 << 20


def _probe_greeting(scheduler: str, host: str, port: int, timeout: float) -> None:
    """Connect with a timeout and check the first bytes look like a Dask greeting.

    Refused/unreachable ports fail fast (Dask would retry until its own timeout); a port that
    accepts but never speaks times out here; a service that is not Dask (whose first bytes,
    read as a Dask frame length, would make the client allocate absurd buffers) is refused.
    """
    import socket
    import time

    try:
        sock = socket.create_connection((host, port), timeout=timeout)
    except TimeoutError:
        raise TimeoutError(f"scheduler {scheduler}: no connection within {timeout:g} s "
                           "(--connect-timeout)") from None
    except OSError as exc:
        raise ConnectionError(f"scheduler {scheduler}: cannot connect ({exc})") from None
    try:
        deadline = time.monotonic() + timeout
        head = b""
        while len(head) < 8:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError(f"scheduler {scheduler}: connected but no Dask greeting "
                                   f"within {timeout:g} s (--connect-timeout)")
            sock.settimeout(left)
            try:
                head = sock.recv(8, socket.MSG_PEEK)
            except TimeoutError:
                continue
            if not head:
                raise ConnectionError(f"scheduler {scheduler}: closed the connection without a "
                                      "Dask greeting")
            if len(head) < 8:
                time.sleep(0.01)
        size = int.from_bytes(head[:8], "little")
        if not 0 < size <= _MAX_GREETING:
            raise ConnectionError(f"scheduler {scheduler}: not a Dask scheduler (its greeting "
                                  f"announces {size} bytes)")
    finally:
        sock.close()


def run_dask(fn: Callable, tasks: Sequence, *, workers: int | None = None,
             scheduler: str | None = None, client=None, progress: bool = False,
             sizes: Sequence[int] | None = None, reduce: Callable | None = None, init=None,
             connect_timeout: float = DEFAULT_CONNECT_TIMEOUT):
    """Run ``fn(task)`` on Dask; results in task order (or folded by ``reduce``).

    Parameters
    ----------
    workers : int, optional
        Start a ``LocalCluster`` with this many single-threaded worker processes.
    scheduler : str, optional
        Address of an existing scheduler. Only connect to a scheduler you trust: the Dask
        protocol deserialises (unpickles) the objects it receives.
    client : distributed.Client, optional
        Use this client (neither started nor closed here).
    reduce, init
        Fold ``reduce(acc, index, result)`` over results as they arrive (bounded memory).
    connect_timeout : float
        Seconds to wait for ``scheduler`` before raising ``TimeoutError``/``ConnectionError``.
    """
    try:
        from distributed import Client, LocalCluster
        from distributed import wait as dask_wait
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("the Dask backend needs the optional extra: "
                          "pip install 'semi_core[dask]'") from None
    connect_timeout = check_positive(connect_timeout, "connect_timeout")
    sizes = list(sizes) if sizes is not None else [1] * len(tasks)
    cluster = None
    own = client is None
    if own:
        if scheduler is not None:
            client = _connect(scheduler, connect_timeout)
        else:
            workers = check_int(workers, "workers", minimum=1)
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
            client = Client(cluster)
    try:
        collect = _Collect(len(tasks)) if reduce is None else None
        red = collect if reduce is None else reduce
        acc = init
        try:
            n_workers = max(1, len(client.scheduler_info().get("workers", {})))
        except Exception:  # noqa: BLE001 - only sizes the submission window
            n_workers = 1
        window = max(8, 4 * n_workers) if reduce is not None else max(len(tasks), 1)

        def wait_one(futs):
            done = dask_wait(futs, return_when="FIRST_COMPLETED").done
            return [(f, f.result()) for f in done]

        with _bar(sum(sizes), progress) as bar:
            for i, res in _windowed(lambda i: client.submit(fn, tasks[i], pure=False), wait_one,
                                    len(tasks), window):
                acc = red(acc, i, res)
                bar.update(sizes[i])
        return collect.out if collect is not None else acc
    finally:
        if own:
            client.close()
            if cluster is not None:
                cluster.close()


def run_tasks(fn: Callable, tasks: Sequence, *, threads: int = 1, workers: int | None = None,
              scheduler: str | None = None, client=None, progress: bool = False,
              sizes: Sequence[int] | None = None, reduce: Callable | None = None, init=None,
              connect_timeout: float = DEFAULT_CONNECT_TIMEOUT):
    """Dispatch to :func:`run_dask` (if ``workers``/``scheduler``/``client``) or :func:`run_local`.

    Returns ``(results, backend_name)`` (``results`` is the accumulator when ``reduce`` is given).
    """
    if scheduler is not None and workers is not None:
        raise ValueError("give either workers (start a LocalCluster) or scheduler (connect), "
                         "not both")
    if scheduler is not None and (not isinstance(scheduler, str) or not scheduler.strip()):
        raise TypeError(f"scheduler must be a non-empty address string, got {scheduler!r}")
    if not (isinstance(connect_timeout, int | float) and math.isfinite(connect_timeout)
            and connect_timeout > 0):
        raise ValueError(f"connect_timeout must be finite and > 0 seconds, got "
                         f"{connect_timeout!r}")
    if client is not None or scheduler is not None or workers is not None:
        name = "dask-client" if client is not None else (
            f"dask:{scheduler}" if scheduler is not None else f"dask-local:{workers}")
        return run_dask(fn, tasks, workers=workers, scheduler=scheduler, client=client,
                        progress=progress, sizes=sizes, reduce=reduce, init=init,
                        connect_timeout=connect_timeout), name
    return run_local(fn, tasks, threads=threads, progress=progress, sizes=sizes, reduce=reduce,
                     init=init), f"threads:{threads}"

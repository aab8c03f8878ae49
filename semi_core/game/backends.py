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

Cancellation. A ``KeyboardInterrupt`` (SIGINT; the CLI turns SIGTERM into one too) while tasks
run stops submitting, cancels what has not started, lets running tasks finish (a task is never
cut in half) and raises :class:`Interrupted`, a ``KeyboardInterrupt`` that carries the results
finished so far; the game runner turns them into a result flagged partial, or re-raises.

An :class:`Executor` names where tasks run; it is the one option every game takes.
"""

from __future__ import annotations

import contextlib
import functools
import math
import os
import socket
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from semi_core._progress import as_reporter
from semi_core._validation import check_int, check_positive

__all__ = ["Executor", "Interrupted", "run_tasks", "run_local", "run_dask", "cluster_start_cpu",
           "plan_batch", "CLUSTER_START_CPU_S", "WORKER_START_CPU_S", "CLUSTER_CPU_OVERHEAD",
           "CLUSTER_RUN_CPU_FRACTION",
           "DASK_TASK_CPU_S", "SMALL_JOBS",
           "DEFAULT_CONNECT_TIMEOUT", "DEFAULT_WORKER_TIMEOUT"]

#: Dashboard address of a local Dask cluster: a free port chosen by the system. (``None`` still
#: asks for the default :8787 and warns when another user's cluster holds it, as on a shared
#: machine.)
LOCAL_DASHBOARD = ":0"
#: Seconds to wait for a Dask scheduler before giving up.
DEFAULT_CONNECT_TIMEOUT = 10.0
#: Seconds to wait for a connected Dask scheduler to have at least one worker.
DEFAULT_WORKER_TIMEOUT = 60.0

#: CPU seconds a Dask ``LocalCluster`` costs before its first task (scheduler, client, the
#: ``distributed`` import), and each worker process on top (start, imports of NumPy, Dask and
#: semi_core, loading the compiled kernels). Measured with ``simulate`` on 1, 2 and 4 workers
#: (all processes' CPU, ``benchmarks/bench_engine.py``): about 1.3 + 1.9 w s.
CLUSTER_START_CPU_S = 1.3
WORKER_START_CPU_S = 1.9
#: CPU the cluster's own processes (scheduler, nannies, workers: heartbeats, event loops) spend
#: per second of the job's CPU while it runs, on top of the job: about 0.05 (a 2-worker
#: cluster ran a 30 s job with 0.06-0.1 CPU s per wall s beyond the start and the work).
CLUSTER_RUN_CPU_FRACTION = 0.05
#: Most CPU a cluster may add to a job, as a fraction of the job's in-process CPU: a job whose
#: pilot estimate is below ``start cost / CLUSTER_CPU_OVERHEAD`` runs in-process.
CLUSTER_CPU_OVERHEAD = 0.2
#: CPU seconds of work one Dask task carries at least: consecutive chunks are sent together
#: (each keeps its own seed stream, so the results do not change), so the per-task cost of
#: scheduling and transfer (milliseconds) stays small against the work.
DASK_TASK_CPU_S = 1.0
#: What a Dask executor does with a job too small to pay for its cluster.
SMALL_JOBS = ("in-process", "cluster")


class Interrupted(KeyboardInterrupt):
    """A run stopped by an interrupt: ``done`` maps task index -> result for the tasks that
    finished (or, with ``reduce``, ``acc`` is the accumulator over them)."""

    def __init__(self, done: dict | None = None, acc: Any = None, total: int = 0,
                 sizes: Sequence[int] | None = None, unit: str = "round"):
        # counted in the progress's units (rounds) where the sizes are known, tasks otherwise
        n_done = len(done or {})
        if sizes is not None and len(sizes) == total:
            k = sum(int(sizes[i]) for i in (done or {}))
            msg = (f"interrupted after {k} of {sum(int(z) for z in sizes)} {unit}s "
                   f"({n_done} of {total} chunks)")
        else:
            msg = f"interrupted after {n_done} of {total} tasks"
        super().__init__(msg)
        self.done = dict(done or {})
        self.acc = acc
        self.total = int(total)


#: Most threads or local Dask worker processes one machine is asked to run: 8 per core (at
#: least 64). More gives no speed and exhausts memory or process limits; a larger cluster is
#: reached through ``scheduler``.
MAX_LOCAL_PARALLELISM = max(64, 8 * (os.cpu_count() or 1))


@dataclass(frozen=True)
class Executor:
    """Where the chunks of a game run; the result never depends on it.

    Parameters
    ----------
    threads : int
        Local threads (``1``: in-process, sequential), at most :data:`MAX_LOCAL_PARALLELISM`.
    workers : int, optional
        Start a Dask ``LocalCluster`` with this many single-threaded worker processes, at most
        :data:`MAX_LOCAL_PARALLELISM`.
    scheduler : str, optional
        Address of an existing Dask scheduler (``tcp://host:port``). Only connect to a
        scheduler you trust: the Dask protocol deserialises (unpickles) what it receives.
    client : distributed.Client, optional
        An existing client (neither started nor closed here).
    connect_timeout : float
        Seconds to wait for ``scheduler`` to answer.
    worker_timeout : float
        Seconds to wait for a connected scheduler to have a worker.
    small_jobs : {"in-process", "cluster"}, optional
        ``"in-process"`` (the default with ``workers`` or ``scheduler``, whose start or
        connection this run would pay): with Dask, the first chunks run in-process as a pilot; when
        the rest would take less CPU than ``start cost / CLUSTER_CPU_OVERHEAD`` (the cost of
        starting and loading the workers, :data:`CLUSTER_START_CPU_S` and
        :data:`WORKER_START_CPU_S`) the whole job runs in-process, and the run's report says
        why. ``"cluster"`` (the default with ``client``: a cluster already running, chosen by
        the caller): always send the chunks to Dask.
    """

    threads: int = 1
    workers: int | None = None
    scheduler: str | None = None
    client: Any = field(default=None, compare=False, repr=False)
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    worker_timeout: float = DEFAULT_WORKER_TIMEOUT
    small_jobs: str | None = None

    def __post_init__(self):
        if self.small_jobs is not None and self.small_jobs not in SMALL_JOBS:
            raise ValueError(f"small_jobs must be one of {SMALL_JOBS}, got {self.small_jobs!r}")
        check_int(self.threads, "threads", minimum=1, maximum=MAX_LOCAL_PARALLELISM)
        if self.workers is not None:
            check_int(self.workers, "workers", minimum=1)
            if self.workers > MAX_LOCAL_PARALLELISM:
                raise ValueError(f"workers must be in 1..{MAX_LOCAL_PARALLELISM} for a local "
                                 f"cluster (8 per CPU, at least 64), got {self.workers}; for "
                                 "more, start a Dask cluster and give its scheduler "
                                 "(--scheduler)")
        if self.scheduler is not None and self.workers is not None:
            raise ValueError("give either workers (start a LocalCluster) or scheduler (connect), "
                             "not both")
        if self.scheduler is not None and (not isinstance(self.scheduler, str)
                                           or not self.scheduler.strip()):
            raise TypeError(f"scheduler must be a non-empty address string, got "
                            f"{self.scheduler!r}")
        if self.scheduler is not None:
            # a malformed address is refused from the arguments alone, also for a job small
            # enough to run in-process (which never connects)
            _scheduler_address(self.scheduler)
        for name in ("connect_timeout", "worker_timeout"):
            v = getattr(self, name)
            if isinstance(v, bool) or not (isinstance(v, int | float) and math.isfinite(v)
                                           and v > 0):
                raise ValueError(f"{name} must be finite and > 0 seconds, got {v!r}")

    @classmethod
    def coerce(cls, executor) -> Executor:
        """``None`` -> in-process; an ``int`` -> that many threads; an :class:`Executor` as is.

        Parameters
        ----------
        executor : None, int or Executor
            What the caller passed.

        Returns
        -------
        Executor
            The executor.
        """
        if executor is None:
            return cls()
        if isinstance(executor, cls):
            return executor
        if isinstance(executor, int) and not isinstance(executor, bool):
            return cls(threads=executor)
        raise TypeError(f"executor must be an Executor, a thread count or None, got "
                        f"{type(executor).__name__}")

    @property
    def parallelism(self) -> int:
        """Tasks that may run at once (for memory estimates; 1 for an unknown cluster)."""
        return self.workers or self.threads if self.scheduler is None and self.client is None \
            else max(self.threads, 1)

    @property
    def name(self) -> str:
        """``threads:N``, ``dask-local:N``, ``dask:ADDRESS`` or ``dask-client``."""
        if self.client is not None:
            return "dask-client"
        if self.scheduler is not None:
            return f"dask:{self.scheduler}"
        if self.workers is not None:
            return f"dask-local:{self.workers}"
        return f"threads:{self.threads}"

    def run(self, fn: Callable, tasks: Sequence, *, progress: bool = False,
            sizes: Sequence[int] | None = None, reduce: Callable | None = None, init=None,
            desc: str = "play", report: dict | None = None):
        """``fn(task)`` for every task, results in task order (or folded by ``reduce``).

        Parameters
        ----------
        fn : callable
            ``fn(task)``; picklable for Dask workers.
        tasks : sequence
            The tasks.
        progress : bool
            Report progress.
        sizes : sequence of int, optional
            Weight of each task in the progress (default 1 each).
        reduce : callable, optional
            ``reduce(acc, index, result) -> acc``, folded as results arrive.
        init : object
            Initial accumulator of ``reduce``.
        desc : str
            Label of the progress line.
        report : dict, optional
            Filled with how the tasks ran (:func:`run_tasks`): ``backend`` (what ran them),
            ``note`` (why a Dask job ran in-process, else ``None``), ``tasks_per_dask_task``.

        Returns
        -------
        list or object
            The results in task order, or the folded accumulator.
        """
        out, _ = run_tasks(fn, tasks, threads=self.threads, workers=self.workers,
                           scheduler=self.scheduler, client=self.client, progress=progress,
                           sizes=sizes, reduce=reduce, init=init,
                           connect_timeout=self.connect_timeout,
                           worker_timeout=self.worker_timeout, desc=desc,
                           small_jobs=self.small_jobs, report=report)
        return out


def _bar(total: int, progress, desc: str = "simulate"):
    """A counted progress stage (:mod:`semi_core._progress`): a bar on a terminal, a line every
    few seconds otherwise, nothing when ``progress`` is off."""
    return as_reporter(progress).stage(desc, total=total, unit="round")


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


class _Fold:
    """Task results by index (``reduce`` None), or a running reduction with ``None`` kept per
    task index; called as ``fold(i, result)`` by every runner."""

    def __init__(self, reduce: Callable | None, init):
        self.reduce, self.acc, self.done = reduce, init, {}

    def __call__(self, i: int, res) -> None:
        if self.reduce is None:
            self.done[i] = res
        else:
            self.acc = self.reduce(self.acc, i, res)
            self.done[i] = None


def run_local(fn: Callable, tasks: Sequence, *, threads: int = 1, progress: bool = False,
              sizes: Sequence[int] | None = None, reduce: Callable | None = None, init=None,
              desc: str = "simulate"):
    """Run ``fn(task)`` for every task on ``threads`` threads.

    Returns the results in task order, or, with ``reduce(acc, index, result) -> acc``, the
    accumulator folded over results as they arrive (starting from ``init``). An interrupt
    raises :class:`Interrupted` with what finished.

    Parameters
    ----------
    fn : callable
        ``fn(task)``.
    tasks : sequence
        The tasks.
    threads : int
        Number of threads, >= 1.
    progress : bool
        Report progress.
    sizes : sequence of int, optional
        Weight of each task in the progress.
    reduce : callable, optional
        ``reduce(acc, index, result) -> acc``.
    init : object
        Initial accumulator.
    desc : str
        Label of the progress line.

    Returns
    -------
    list or object
        The results in task order, or the accumulator.
    """
    threads = check_int(threads, "threads", minimum=1)
    sizes = list(sizes) if sizes is not None else [1] * len(tasks)
    fold = _Fold(reduce, init)

    with _bar(sum(sizes), progress, desc) as bar:
        try:
            if threads == 1 or len(tasks) <= 1:
                for i, task in enumerate(tasks):
                    fold(i, fn(task))
                    bar.update(sizes[i])
            else:
                pool = ThreadPoolExecutor(max_workers=threads)
                # the futures submitted and not yet folded (at most the window): a future holds
                # its result, so one kept after its fold would keep every chunk's result alive
                started: dict = {}

                def submit(i):
                    fut = pool.submit(fn, tasks[i])
                    started[i] = fut
                    return fut

                def wait_one(futs):
                    finished, _ = wait(futs, return_when=FIRST_COMPLETED)
                    return [(f, f.result()) for f in finished]

                try:
                    for i, res in _windowed(submit, wait_one, len(tasks), 4 * threads):
                        fold(i, res)
                        del started[i], res
                        bar.update(sizes[i])
                except KeyboardInterrupt:
                    # cancel what has not started, let running tasks finish, keep their results
                    pool.shutdown(wait=True, cancel_futures=True)
                    for i, fut in started.items():
                        if i not in fold.done and fut.done() and not fut.cancelled() \
                                and fut.exception() is None:
                            fold(i, fut.result())
                    raise
                finally:
                    pool.shutdown(wait=True, cancel_futures=True)
        except KeyboardInterrupt:
            raise Interrupted(fold.done if reduce is None else {i: None for i in fold.done},
                              fold.acc, len(tasks), sizes) from None
    return [fold.done[i] for i in range(len(tasks))] if reduce is None else fold.acc


def _scheduler_address(scheduler: str) -> tuple[str, str, str | None, int | None]:
    """``(address, scheme, host, port)`` of a scheduler address (``tcp://`` when none is given);
    a TCP or TLS address without a host or a port is a ``ValueError``."""
    if "://" not in scheduler:
        scheduler = "tcp://" + scheduler
    parts = urlsplit(scheduler)
    host = port = None
    if parts.scheme in ("tcp", "tls"):
        try:
            host, port = parts.hostname, parts.port
        except ValueError:
            host, port = None, None
        if not host or port is None:
            raise ValueError(f"scheduler must be an address like tcp://host:8786, got "
                             f"{scheduler!r}")
    return scheduler, parts.scheme, host, port


def _connect(scheduler: str, timeout: float, worker_timeout: float = DEFAULT_WORKER_TIMEOUT):
    """A ``distributed.Client`` to ``scheduler`` that has at least one worker, or a clear error
    within ``timeout`` s (connecting) plus ``worker_timeout`` s (waiting for a worker)."""
    # lazy: dask is a heavy import, loaded only when this runs
    from distributed import Client

    scheduler, scheme, host, port = _scheduler_address(scheduler)
    if scheme == "tcp":  # (a TLS server waits for the client to speak first)
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
    client = box["client"]
    try:
        client.wait_for_workers(1, timeout=worker_timeout)
    except (TimeoutError, OSError) as exc:
        client.close()
        raise TimeoutError(f"scheduler {scheduler}: connected, but it has no worker after "
                           f"{worker_timeout:g} s (start workers with `dask worker "
                           f"{scheduler}`, or raise --worker-timeout): {exc}") from None
    return client


#: A Dask scheduler greets first with a small message: 8 bytes of little-endian length.
_MAX_GREETING = 1 << 20


def _probe_greeting(scheduler: str, host: str, port: int, timeout: float) -> None:
    """Connect with a timeout and check the first bytes look like a Dask greeting.

    Refused/unreachable ports fail fast (Dask would retry until its own timeout); a port that
    accepts but never speaks times out here; a service that is not Dask (whose first bytes,
    read as a Dask frame length, would make the client allocate absurd buffers) is refused.
    """
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


@contextlib.contextmanager
def shared(executor):
    """``executor`` for several games in a row: a ``workers=N`` executor starts its Dask
    ``LocalCluster`` once here (closed on exit) instead of once per game; any other executor
    is yielded as is. Results do not depend on it.

    Parameters
    ----------
    executor : None, int or Executor
        The executor to share.

    Yields
    ------
    Executor
        The executor to pass to every game.

    Examples
    --------
    >>> with shared(Executor(threads=2)) as ex:   # doctest: +SKIP
    ...     a = play(mech_a, 1000, executor=ex); b = play(mech_b, 1000, executor=ex)
    """
    ex = Executor.coerce(executor)
    if ex.workers is None:
        yield ex
        return
    # lazy: dask is a heavy import, loaded only when this runs
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=ex.workers, threads_per_worker=1, processes=True,
                           dashboard_address=LOCAL_DASHBOARD)
    try:
        with Client(cluster) as client:
            yield Executor(threads=ex.threads, client=client,
                           worker_timeout=ex.worker_timeout)
    finally:
        cluster.close()


def _load_on_worker(payload: bytes) -> str:
    """Unpickle ``payload`` on a worker: ``""`` when it loads, else the error (a probe)."""
    try:
        import cloudpickle  # lazy: comes with Dask, used on workers only

        cloudpickle.loads(payload)
    except Exception as exc:  # noqa: BLE001 - reported to the caller with a clear message
        return f"{type(exc).__name__}: {exc}"
    return ""


def _probe_workers(client, fn: Callable, task, timeout: float) -> None:
    """Refuse, with a clear error, a task the workers could not load.

    A worker that cannot unpickle a task (its function lives in a module only the client can
    import, e.g. a test module or a notebook cell saved under a private name) dies and is
    restarted, and the run would wait for ever; one small probe task finds out first.
    """
    import cloudpickle  # lazy: comes with Dask

    name = getattr(fn, "__qualname__", type(fn).__name__)
    hint = ("define the function, the mechanism and the scorers in a module the workers can "
            "import (installed, or on their PYTHONPATH)")
    try:
        payload = cloudpickle.dumps((fn, task))
    except Exception:  # noqa: BLE001 - not picklable by cloudpickle alone
        # Dask's own serialisation (e.g. its torch serialiser) may still send it, and refuses
        # with its own TypeError when it cannot: nothing to probe here
        return
    err = client.submit(_load_on_worker, payload, pure=False).result(timeout=timeout)
    if err:
        raise RuntimeError(f"the Dask workers cannot load the task of {name} ({err}); {hint}")


def run_dask(fn: Callable, tasks: Sequence, *, workers: int | None = None,
             scheduler: str | None = None, client=None, progress: bool = False,
             sizes: Sequence[int] | None = None, reduce: Callable | None = None, init=None,
             connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
             worker_timeout: float = DEFAULT_WORKER_TIMEOUT, desc: str = "simulate"):
    """Run ``fn(task)`` on Dask; results in task order (or folded by ``reduce``).

    Parameters
    ----------
    fn : callable
        ``fn(task)``; picklable.
    tasks : sequence
        The tasks.
    workers : int, optional
        Start a ``LocalCluster`` with this many single-threaded worker processes.
    scheduler : str, optional
        Address of an existing scheduler. Only connect to a scheduler you trust: the Dask
        protocol deserialises (unpickles) the objects it receives.
    client : distributed.Client, optional
        Use this client (neither started nor closed here).
    progress : bool
        Report progress.
    sizes : sequence of int, optional
        Weight of each task in the progress.
    reduce, init
        Fold ``reduce(acc, index, result)`` over results as they arrive (bounded memory).
    connect_timeout : float
        Seconds to wait for ``scheduler`` before raising ``TimeoutError``/``ConnectionError``.
    worker_timeout : float
        Seconds to wait for ``scheduler`` to have a worker before raising ``TimeoutError``.
    desc : str
        Label of the progress line.

    Returns
    -------
    list or object
        The results in task order, or the accumulator.
    """
    try:
        # lazy: dask is a heavy import, loaded only when this runs
        from distributed import Client, LocalCluster
        from distributed import wait as dask_wait
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("the Dask backend needs the optional extra: "
                          "pip install 'semi_core[dask]'") from None
    connect_timeout = check_positive(connect_timeout, "connect_timeout")
    worker_timeout = check_positive(worker_timeout, "worker_timeout")
    sizes = list(sizes) if sizes is not None else [1] * len(tasks)
    cluster = None
    own = client is None
    if own:
        if scheduler is not None:
            client = _connect(scheduler, connect_timeout, worker_timeout)
        else:
            workers = check_int(workers, "workers", minimum=1)
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   dashboard_address=LOCAL_DASHBOARD)
            client = Client(cluster)
    fold = _Fold(reduce, init)
    # the futures not yet folded: a Dask future keeps its result alive on a worker, so one kept
    # after its fold would hold every task's result in the cluster's memory
    futures: dict = {}
    try:
        try:
            n_workers = max(1, len(client.scheduler_info().get("workers", {})))
        except Exception:  # noqa: BLE001 - only sizes the submission window
            n_workers = 1
        window = max(8, 4 * n_workers) if reduce is not None else max(len(tasks), 1)
        if len(tasks):
            _probe_workers(client, fn, tasks[0], worker_timeout)

        def submit(i):
            fut = client.submit(fn, tasks[i], pure=False)
            futures[i] = fut
            return fut

        def wait_one(futs):
            finished = dask_wait(futs, return_when="FIRST_COMPLETED").done
            return [(f, f.result()) for f in finished]

        with _bar(sum(sizes), progress, desc) as bar:
            for i, res in _windowed(submit, wait_one, len(tasks), window):
                fold(i, res)
                del futures[i], res
                bar.update(sizes[i])
        return [fold.done[i] for i in range(len(tasks))] if reduce is None else fold.acc
    except KeyboardInterrupt:
        for f in futures.values():
            f.cancel()
        raise Interrupted(fold.done, fold.acc, len(tasks), sizes) from None
    finally:
        if own:
            client.close()
            if cluster is not None:
                cluster.close()


class _Slice:
    """Tasks ``start..start + n`` of a task sequence (lazy: a task list may be a view)."""

    def __init__(self, tasks: Sequence, start: int, stop: int):
        self.tasks, self.start, self.stop = tasks, start, stop

    def __len__(self) -> int:
        return self.stop - self.start

    def __getitem__(self, i: int):
        if not 0 <= i < len(self):
            raise IndexError(i)
        return self.tasks[self.start + i]


class _Batches:
    """Consecutive tasks grouped ``batch`` at a time: one Dask task runs a group in order."""

    def __init__(self, tasks: Sequence, batch: int):
        self.tasks, self.batch = tasks, batch

    def __len__(self) -> int:
        return -(-len(self.tasks) // self.batch)

    def bounds(self, j: int) -> tuple[int, int]:
        return j * self.batch, min((j + 1) * self.batch, len(self.tasks))

    def __getitem__(self, j: int):
        if not 0 <= j < len(self):
            raise IndexError(j)
        lo, hi = self.bounds(j)
        return [self.tasks[i] for i in range(lo, hi)]


def _run_batch(fn: Callable, tasks: list) -> list:
    """Run a group of tasks in order on one worker (top level: picklable)."""
    return [fn(t) for t in tasks]


def cluster_start_cpu(workers: int | None) -> float:
    r"""CPU seconds a Dask executor costs before its work: a local cluster's start plus each
    worker's start (``workers`` given), or loading the code on one worker of an existing
    cluster (``workers=None``: the least it can cost).

    .. math::

        O = [\text{local}]\,C_s + W\,C_w

    with :data:`CLUSTER_START_CPU_S` :math:`C_s` and :data:`WORKER_START_CPU_S` :math:`C_w`.

    Parameters
    ----------
    workers : int or None
        Local worker processes to start, or ``None`` for a cluster that is already running.

    Returns
    -------
    float
        Estimated CPU seconds.
    """
    if workers is None:
        return WORKER_START_CPU_S
    return CLUSTER_START_CPU_S + WORKER_START_CPU_S * int(workers)


def plan_batch(cpu_per_task: float, n_tasks: int, n_workers: int) -> int:
    r"""Tasks per Dask task: enough that each carries :data:`DASK_TASK_CPU_S` of CPU, while
    leaving at least 4 Dask tasks per worker (load balance) where the job has that many.

    .. math::

        b = \min\bigl(\lceil t_{\min} / t \rceil,\ \max(1, \lfloor N / 4W \rfloor)\bigr)

    Parameters
    ----------
    cpu_per_task : float
        Pilot CPU seconds of one task t.
    n_tasks : int
        Tasks N left.
    n_workers : int
        Workers W.

    Returns
    -------
    int
        The batch size b >= 1.
    """
    want = math.ceil(DASK_TASK_CPU_S / cpu_per_task) if cpu_per_task > 0 else n_tasks
    return int(max(1, min(want, max(1, n_tasks // (4 * max(1, n_workers))))))


def run_tasks(fn: Callable, tasks: Sequence, *, threads: int = 1, workers: int | None = None,
              scheduler: str | None = None, client=None, progress: bool = False,
              sizes: Sequence[int] | None = None, reduce: Callable | None = None, init=None,
              connect_timeout: float = DEFAULT_CONNECT_TIMEOUT,
              worker_timeout: float = DEFAULT_WORKER_TIMEOUT, desc: str = "simulate",
              small_jobs: str | None = None, report: dict | None = None):
    r"""Dispatch to :func:`run_dask` (if ``workers``/``scheduler``/``client``) or :func:`run_local`.

    Returns ``(results, backend_name)`` (``results`` is the accumulator when ``reduce`` is given).

    With Dask and ``small_jobs="in-process"`` the first task (two where three or more are left:
    the first call may include loading compiled code) runs in-process as a pilot, timed
    in CPU seconds; with :math:`t` the pilot's CPU per unit of ``sizes`` and :math:`S` the size
    left, the rest runs on Dask only when

    .. math::

        O \le (\rho - \kappa)\, t\, S

    (:math:`O` from :func:`cluster_start_cpu`, :math:`\rho` = :data:`CLUSTER_CPU_OVERHEAD`,
    :math:`\kappa` = :data:`CLUSTER_RUN_CPU_FRACTION` the cluster's own CPU while it runs),
    so a cluster never adds more than that fraction to a job's CPU; otherwise it runs
    in-process and ``report["note"]`` says why. On Dask, consecutive tasks go together
    (:func:`plan_batch`). Every task is the same call whatever runs it: the results do not
    change.

    Parameters
    ----------
    fn : callable
        ``fn(task)``.
    tasks : sequence
        The tasks.
    threads : int
        Local threads, >= 1.
    workers, scheduler, client, connect_timeout, worker_timeout
        As in :func:`run_dask`.
    progress : bool
        Report progress.
    sizes : sequence of int, optional
        Weight of each task in the progress (and in the pilot's estimate).
    reduce : callable, optional
        ``reduce(acc, index, result) -> acc``.
    init : object
        Initial accumulator.
    desc : str
        Label of the progress line.
    small_jobs : {"in-process", "cluster"}, optional
        Run a job too small for the cluster in-process, or always on Dask (default: in-process
        with ``workers``/``scheduler``, on Dask with a given ``client``).
    report : dict, optional
        Filled with ``backend`` (what ran the tasks), ``requested`` (the executor asked for),
        ``note`` (why it differs, else ``None``), ``pilot_tasks`` and ``tasks_per_dask_task``.

    Returns
    -------
    results : list or object
        The results or the accumulator.
    backend : str
        Name of the backend that ran them.
    """
    ex = Executor(threads=threads, workers=workers, scheduler=scheduler, client=client,
                  connect_timeout=connect_timeout, worker_timeout=worker_timeout,
                  small_jobs=small_jobs)
    info = report if report is not None else {}
    info.update(backend=ex.name, requested=ex.name, note=None, pilot_tasks=0,
                tasks_per_dask_task=None)
    dask = client is not None or scheduler is not None or workers is not None
    if not dask:
        return run_local(fn, tasks, threads=threads, progress=progress, sizes=sizes,
                         reduce=reduce, init=init, desc=desc), ex.name
    dask_kw = dict(workers=workers, scheduler=scheduler, client=client,
                   connect_timeout=connect_timeout, worker_timeout=worker_timeout)
    if (small_jobs or ("cluster" if client is not None else "in-process")) == "cluster":
        info["tasks_per_dask_task"] = 1
        return run_dask(fn, tasks, progress=progress, sizes=sizes, reduce=reduce, init=init,
                        desc=desc, **dask_kw), ex.name
    return _run_piloted(fn, tasks, ex, sizes, reduce, init, progress, desc, info, dask_kw)


def _run_piloted(fn, tasks, ex: Executor, sizes, reduce, init, progress, desc, info: dict,
                 dask_kw: dict):
    """The pilot, then the rest in-process or on Dask (see :func:`run_tasks`)."""
    n = len(tasks)
    sizes = list(sizes) if sizes is not None else [1] * n
    overhead = cluster_start_cpu(ex.workers if ex.scheduler is None and ex.client is None
                                 else None)
    fold = _Fold(reduce, init)

    rate = math.inf  # pilot CPU per unit of size
    k = 0
    left_cpu = 0.0
    pays = False
    with _bar(sum(sizes[:2]), progress, desc) as bar:
        try:
            while k < n:
                t0 = time.process_time()
                res = fn(tasks[k])
                cpu = time.process_time() - t0
                fold(k, res)
                del res
                bar.update(sizes[k])
                rate = min(rate, cpu / max(sizes[k], 1))
                k += 1
                left_cpu = rate * sum(sizes[k:])
                pays = overhead <= (CLUSTER_CPU_OVERHEAD - CLUSTER_RUN_CPU_FRACTION) * left_cpu
                # a second pilot task times a warm call (the first may load compiled code)
                if k >= 2 or n - k < 2:
                    break
        except KeyboardInterrupt:
            raise Interrupted(fold.done, fold.acc, n, sizes) from None
    info["pilot_tasks"] = k
    rest = _Slice(tasks, k, n)

    def shifted(a, i, res):
        return reduce(a, k + i, res)

    if k < n and pays:
        n_workers = max(1, ex.workers or 2)
        batch = plan_batch(left_cpu / max(len(rest), 1), len(rest), n_workers)
        info["tasks_per_dask_task"] = batch
        return _run_batched(fn, rest, k, batch, sizes, fold, progress, desc, dask_kw), ex.name
    if k < n or n:
        why = ("one task: nothing to spread over workers" if n == 1 else
               f"the pilot ({k} of {n} tasks, {rate * sum(sizes):.3g} s CPU estimated for the "
               f"job) is below {overhead / (CLUSTER_CPU_OVERHEAD - CLUSTER_RUN_CPU_FRACTION):.3g}"
               f" s, where starting "
               f"{ex.name} (about {overhead:.2g} s CPU) would add more than "
               f"{CLUSTER_CPU_OVERHEAD:.0%} to its CPU")
        info.update(backend=f"threads:{ex.threads}", note=f"ran in-process instead of {ex.name}: {why}; "
                    "small_jobs='cluster' (CLI: --small-jobs cluster) uses the cluster anyway")
    try:
        out = run_local(fn, rest, threads=ex.threads, progress=progress, sizes=sizes[k:],
                        reduce=None if reduce is None else shifted, init=fold.acc, desc=desc)
    except Interrupted as exc:
        raise _merge_interrupt(exc, k, fold.done, n, sizes, reduce) from None
    if reduce is None:
        return [fold.done[i] for i in range(k)] + list(out), info["backend"]
    return out, info["backend"]


def _merge_interrupt(exc: Interrupted, k: int, done: dict, n: int, sizes, reduce):
    """An interrupt of the tasks after the pilot, as one of the whole job."""
    merged = dict(done)
    merged.update({k + i: v for i, v in exc.done.items()})
    return Interrupted(merged if reduce is None else {i: None for i in merged}, exc.acc, n,
                       sizes)


def _run_batched(fn, rest: _Slice, k: int, batch: int, sizes, fold: _Fold, progress, desc,
                 dask_kw: dict):
    """The tasks after the pilot on Dask, ``batch`` consecutive ones per Dask task, folded by
    the pilot's ``fold`` task by task."""
    groups = _Batches(rest, batch)
    n = k + len(rest)

    def fold_group(_, j, results):
        lo, _ = groups.bounds(j)
        for off, res in enumerate(results):
            fold(k + lo + off, res)

    gsizes = [sum(sizes[k + lo:k + hi]) for lo, hi in map(groups.bounds, range(len(groups)))]
    try:
        run_dask(functools.partial(_run_batch, fn), groups, progress=progress, sizes=gsizes,
                 reduce=fold_group, init=None, desc=desc, **dask_kw)
    except Interrupted:
        raise Interrupted(fold.done, fold.acc, n, sizes) from None
    return [fold.done[i] for i in range(n)] if fold.reduce is None else fold.acc

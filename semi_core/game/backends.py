"""Where Monte Carlo chunks run: a local thread pool or a Dask distributed cluster.

A *task* is self-contained (parameters, root seed, chunk index, size); its result depends on
nothing else, so every backend returns the same results in chunk order: local with 1 or many
threads, a Dask ``LocalCluster`` (``workers=N``) or an existing scheduler
(``scheduler="tcp://host:port"``). The compiled kernels release the GIL (``nogil=True``), so
local threads run chunks in parallel.

Dask is an optional extra (``pip install semi_core[dask]``); it is imported only when used.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor, as_completed

from semi_core._validation import check_int

__all__ = ["run_tasks", "run_local", "run_dask"]


def _bar(total: int, progress: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, disable=not progress, unit="round", desc="simulate",
                dynamic_ncols=True, leave=False)


def run_local(fn: Callable, tasks: Sequence, *, threads: int = 1, progress: bool = False,
              sizes: Sequence[int] | None = None) -> list:
    """Run ``fn(task)`` for every task on ``threads`` threads; results in task order."""
    threads = check_int(threads, "threads", minimum=1)
    sizes = list(sizes) if sizes is not None else [1] * len(tasks)
    out: list = [None] * len(tasks)
    with _bar(sum(sizes), progress) as bar:
        if threads == 1 or len(tasks) <= 1:
            for i, task in enumerate(tasks):
                out[i] = fn(task)
                bar.update(sizes[i])
            return out
        with ThreadPoolExecutor(max_workers=threads) as pool:
            futs = {pool.submit(fn, task): i for i, task in enumerate(tasks)}
            for fut in as_completed(futs):
                i = futs[fut]
                out[i] = fut.result()
                bar.update(sizes[i])
    return out


def run_dask(fn: Callable, tasks: Sequence, *, workers: int | None = None,
             scheduler: str | None = None, client=None, progress: bool = False,
             sizes: Sequence[int] | None = None) -> list:
    """Run ``fn(task)`` on Dask; results in task order.

    Parameters
    ----------
    workers : int, optional
        Start a ``LocalCluster`` with this many single-threaded worker processes.
    scheduler : str, optional
        Address of an existing scheduler.
    client : distributed.Client, optional
        Use this client (neither started nor closed here).
    """
    try:
        from distributed import Client, LocalCluster
        from distributed import as_completed as dask_completed
    except ImportError:  # pragma: no cover - depends on the environment
        raise ImportError("the Dask backend needs the optional extra: "
                          "pip install 'semi_core[dask]'") from None
    sizes = list(sizes) if sizes is not None else [1] * len(tasks)
    cluster = None
    own = client is None
    if own:
        if scheduler is not None:
            client = Client(scheduler)
        else:
            workers = check_int(workers, "workers", minimum=1)
            cluster = LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                   dashboard_address=None)
            client = Client(cluster)
    try:
        futs = [client.submit(fn, task, pure=False) for task in tasks]
        index = {f.key: i for i, f in enumerate(futs)}
        out: list = [None] * len(tasks)
        with _bar(sum(sizes), progress) as bar:
            for fut in dask_completed(futs):
                i = index[fut.key]
                out[i] = fut.result()
                bar.update(sizes[i])
        return out
    finally:
        if own:
            client.close()
            if cluster is not None:
                cluster.close()


def run_tasks(fn: Callable, tasks: Sequence, *, threads: int = 1, workers: int | None = None,
              scheduler: str | None = None, client=None, progress: bool = False,
              sizes: Sequence[int] | None = None) -> tuple[list, str]:
    """Dispatch to :func:`run_dask` (if ``workers``/``scheduler``/``client``) or :func:`run_local`.

    Returns ``(results, backend_name)``.
    """
    if scheduler is not None and workers is not None:
        raise ValueError("give either workers (start a LocalCluster) or scheduler (connect), "
                         "not both")
    if scheduler is not None and not isinstance(scheduler, str):
        raise TypeError(f"scheduler must be an address string, got {type(scheduler).__name__}")
    if client is not None or scheduler is not None or workers is not None:
        name = "dask-client" if client is not None else (
            f"dask:{scheduler}" if scheduler is not None else f"dask-local:{workers}")
        return run_dask(fn, tasks, workers=workers, scheduler=scheduler, client=client,
                        progress=progress, sizes=sizes), name
    return run_local(fn, tasks, threads=threads, progress=progress, sizes=sizes), (
        f"threads:{threads}")

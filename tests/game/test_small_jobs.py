"""Dask executors: a job too small to pay for its cluster runs in-process (and says so); a large
one goes to the cluster with consecutive chunks grouped per Dask task; results never change."""

from __future__ import annotations

import json

import numpy as np
import pytest

from semi_core.game import backends
from semi_core.game.backends import Executor, Interrupted, plan_batch, run_tasks
from semi_core.game.engine import simulate
from semi_core.mechanisms.empirical_mean import EmpiricalMean


def _no_dask(*args, **kwargs):
    raise AssertionError("run_dask was called for a job the pilot found too small")


def _fake_dask(calls):
    """run_dask stand-in running the (grouped) tasks in-process, recording what it was sent."""

    def run(fn, tasks, *, reduce=None, init=None, sizes=None, **kw):
        calls.append({"n": len(tasks), "groups": [len(tasks[j]) for j in range(len(tasks))],
                      "sizes": list(sizes)})
        acc = init
        out = []
        for j in range(len(tasks)):
            res = fn(tasks[j])
            if reduce is None:
                out.append(res)
            else:
                acc = reduce(acc, j, res)
        return out if reduce is None else acc

    return run


def test_small_job_runs_in_process_and_says_why(monkeypatch):
    """A 10^4-game job with workers=2 (milliseconds of work against seconds of CPU to start
    two worker processes) never reaches Dask; the result is the in-process one, bit for bit,
    and names the executor it ran on and why."""
    monkeypatch.setattr(backends, "run_dask", _no_dask)
    mech = EmpiricalMean.isotropic(10, 5, distance=3.0)
    kw = dict(tau="uniform", chunk_size=2000)
    a = simulate(mech, 10_000, 3, **kw)
    b = simulate(mech, 10_000, 3, executor=Executor(workers=2), **kw)
    for k in a.stats:
        np.testing.assert_array_equal(a.stats[k], b.stats[k])
    np.testing.assert_array_equal(a.member, b.member)
    assert b.backend == "threads:1"
    note = b.info["executor_note"]
    assert "dask-local:2" in note and "in-process" in note and "small_jobs" in note
    one = simulate(mech, 1000, 3, executor=Executor(workers=2), chunk_size=2000)
    assert "one task" in one.info["executor_note"]


def test_large_job_goes_to_the_cluster_in_groups(monkeypatch):
    """With the start cost at 0 every job pays: after the in-process pilot (two tasks) the rest
    goes to Dask, consecutive tasks grouped, folded at their own indices."""
    calls: list = []
    monkeypatch.setattr(backends, "run_dask", _fake_dask(calls))
    monkeypatch.setattr(backends, "WORKER_START_CPU_S", 0.0)
    monkeypatch.setattr(backends, "CLUSTER_START_CPU_S", 0.0)
    monkeypatch.setattr(backends, "DASK_TASK_CPU_S", 1e9)  # group as much as balance allows
    tasks = list(range(42))
    report: dict = {}
    out, name = run_tasks(lambda t: t * t, tasks, workers=2, report=report)
    assert out == [t * t for t in tasks] and name == "dask-local:2"
    assert report["note"] is None and report["pilot_tasks"] == 2
    # 40 left, 2 workers: groups of 40 // 8 = 5 (4 Dask tasks per worker)
    assert calls[0]["groups"] == [5] * 8 and report["tasks_per_dask_task"] == 5
    seen: list = []
    acc = run_tasks(lambda t: -t, tasks, workers=2, reduce=lambda a, i, r: a + [(i, r)],
                    init=[], sizes=[3] * 42)[0]
    seen = sorted(acc)
    assert seen == [(i, -i) for i in tasks]
    assert calls[1]["sizes"] == [15] * 8  # progress weights summed per group


def test_interrupt_after_the_pilot_keeps_the_pilot(monkeypatch):
    monkeypatch.setattr(backends, "run_dask", _no_dask)

    def fn(t):
        if t == 3:
            raise KeyboardInterrupt
        return t

    with pytest.raises(Interrupted) as exc:
        run_tasks(fn, list(range(6)), workers=2)
    assert exc.value.done == {0: 0, 1: 1, 2: 2}


def test_plan_batch():
    assert plan_batch(0.01, 1000, 2) == 100       # 1 s of work per Dask task
    assert plan_batch(0.01, 100, 2) == 12          # but 4 Dask tasks per worker: 100 // 8
    assert plan_batch(5.0, 1000, 2) == 1           # long tasks go one by one
    assert plan_batch(0.0, 10, 4) == 1


def test_small_jobs_is_validated():
    with pytest.raises(ValueError, match="small_jobs"):
        Executor(workers=2, small_jobs="always")


def test_cli_small_job_note(capsys):
    from semi_core.cli import main

    rc = main(["simulate", "--rounds", "2000", "--chunk-size", "500", "--workers", "2",
               "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["backend"] == "threads:1"
    assert "in-process instead of dask-local:2" in out["executor_note"]
    rc = main(["simulate", "--rounds", "2000", "--small-jobs", "sometimes", "--json"])
    assert rc == 2 and "small-jobs" in json.loads(capsys.readouterr().out)["error"]


def test_pilot_then_real_cluster_identical(dask_client, monkeypatch):
    """Through a real 2-worker cluster: pilot in-process, the rest grouped on Dask, bit for bit
    the in-process result."""
    monkeypatch.setattr(backends, "WORKER_START_CPU_S", 0.0)
    monkeypatch.setattr(backends, "DASK_TASK_CPU_S", 1e9)
    mech = EmpiricalMean(10, 6, mu=0.0, cov=1.0, target=3.0)
    kw = dict(tau="uniform", chunk_size=250, data="laplace")
    a = simulate(mech, 6000, 31, **kw)
    b = simulate(mech, 6000, 31, executor=Executor(client=dask_client, small_jobs="in-process"),
                 **kw)
    assert b.backend == "dask-client" and b.info["tasks_per_dask_task"] == 2  # 22 // 8
    for k in a.stats:
        np.testing.assert_array_equal(a.stats[k], b.stats[k])
    np.testing.assert_array_equal(a.tau, b.tau)


@pytest.mark.parametrize("twin", [False, True])
def test_chunk_written_into_result_views_equals_fresh_buffers(twin):
    """``play_chunk(out=...)`` (the local path of ``simulate``: chunks write into column slices
    of the run's arrays) gives the same bits as the chunk's own buffers, compiled and twin."""
    from semi_core._rng import as_seed_sequence, child_seed
    from semi_core.game.engine import build_params, play_chunk

    for d, mode in ((1, "sufficient"), (1, "exact"), (3, "exact")):
        params = build_params(EmpiricalMean.isotropic(10, 4, distance=2.0, d=d), mode=mode,
                              tau="uniform")
        ss = child_seed(as_seed_sequence(5), 1)
        m, t, s = play_chunk(params, ss, 300, twin=twin)
        big = (np.zeros(1000, dtype=bool), np.zeros(1000, dtype=np.int64), np.zeros((4, 1000)))
        play_chunk(params, ss, 300, twin=twin,
                   out=(big[0][200:500], big[1][200:500], big[2][:, 200:500]))
        np.testing.assert_array_equal(big[0][200:500], m)
        np.testing.assert_array_equal(big[1][200:500], t)
        np.testing.assert_array_equal(big[2][:, 200:500], s)
        assert not big[2][:, :200].any() and not big[2][:, 500:].any()


def test_threads_write_in_place_identical_to_one_thread():
    mech = EmpiricalMean.isotropic(10, 5, distance=3.0)
    a = simulate(mech, 5000, 9, chunk_size=700)
    b = simulate(mech, 5000, 9, chunk_size=700, executor=2)
    for k in a.stats:
        np.testing.assert_array_equal(a.stats[k], b.stats[k])
    np.testing.assert_array_equal(a.tau, b.tau)

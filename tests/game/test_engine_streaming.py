"""Bounded-memory ``simulate_streaming``: exact TPR at FPR equal to the in-memory run, AUC within
its stated bin error, the same result on Dask and threads; up-front resource refusals."""

from __future__ import annotations

import numpy as np
import pytest

from semi_core._validation import ResourceLimitError
from semi_core.audit.roc import summarize
from semi_core.game.backends import Executor
from semi_core.game.engine import estimate_resources, simulate, simulate_streaming
from semi_core.mechanisms.empirical_mean import EmpiricalMean

FPRS = (0.1, 0.01, 0.001)


@pytest.mark.parametrize("kw", [
    dict(mode="sufficient", tau=5),
    dict(mode="exact", tau="uniform", data="bernoulli:0.3"),  # ties: discrete data
])
def test_streaming_equals_in_memory(kw):
    mech = EmpiricalMean.isotropic(10, 10)
    full = simulate(mech, 30_000, 7, chunk_size=4096, **kw)
    ref = summarize(full, FPRS)
    # few bins and a small collect limit force refinement passes
    st = simulate_streaming(mech, 30_000, 7, chunk_size=4096, fprs=FPRS, bins=16,
                            collect_limit=1000, **kw)
    assert st["passes"] >= 3
    assert st["n_members"] == int(full.member.sum())
    for test, r in ref.items():
        s = st["tests"][test]
        for f, row in r["tpr_at_fpr"].items():
            for key in ("tpr", "fpr_achieved", "threshold"):
                assert s["tpr_at_fpr"][f][key] == row[key], (test, f, key)
            for key in ("se", "se_binomial"):
                assert s["tpr_at_fpr"][f][key] == pytest.approx(row[key], rel=1e-9, abs=1e-15)
        assert abs(s["auc"] - r["auc"]) <= s["auc_bin_error"] + 1e-12
        assert s["auc_se"] == pytest.approx(r["auc_se"], rel=0.25)


def test_streaming_threads_and_chunks_do_not_change_the_result():
    mech = EmpiricalMean.isotropic(10, 5)
    a = simulate_streaming(mech, 20_000, 3, mode="sufficient", chunk_size=2048, tau=3)
    b = simulate_streaming(mech, 20_000, 3, mode="sufficient", chunk_size=2048, tau=3,
                           executor=2)
    assert a["tests"] == b["tests"]


def test_resource_estimates_and_refusals():
    mech = EmpiricalMean.isotropic(10, 10)
    from semi_core.game.engine import build_params

    p = build_params(mech, mode="sufficient")
    est = estimate_resources(p, 10**9, 16384)
    assert est["variates"] == pytest.approx(10**9 * 13)
    assert est["bytes_scores"] > 10**11  # 1e9 rounds cannot be kept: streaming needed
    with pytest.raises(ResourceLimitError, match="simulate_streaming"):
        simulate(mech, 10**9, 0, mode="sufficient")
    with pytest.raises(ResourceLimitError, match="variates"):
        simulate_streaming(mech, 10**12, 0, mode="exact")
    with pytest.raises(ValueError, match="bins"):
        simulate_streaming(mech, 100, 0, bins=4)


@pytest.mark.slow
def test_streaming_on_dask_equals_local():
    pytest.importorskip("distributed")
    mech = EmpiricalMean.isotropic(10, 5)
    a = simulate_streaming(mech, 20_000, 5, mode="sufficient", chunk_size=4096, tau=2,
                           bins=64)
    b = simulate_streaming(mech, 20_000, 5, mode="sufficient", chunk_size=4096, tau=2,
                           bins=64, executor=Executor(workers=2, small_jobs="cluster"))
    assert a["tests"] == b["tests"] and b["backend"].startswith("dask")


@pytest.mark.slow
@pytest.mark.parametrize("kernel, rounds", [("numba", 200_000), ("numpy-twin", 20_000)])
def test_streaming_memory_is_bounded(kernel, rounds):
    """Peak memory does not grow with rounds (10x the rounds, same peak within 30 MB), on
    either kernel (forced: the size rule would pick the twin for the smaller job only). A warm
    call first, so that loading Numba and its cached kernels is not traced as the job's."""
    import tracemalloc

    mech = EmpiricalMean.isotropic(10, 10)
    simulate_streaming(mech, 1000, 0, mode="sufficient", chunk_size=16384, tau=5, kernel=kernel)

    def peak(r):
        tracemalloc.start()
        simulate_streaming(mech, r, 0, mode="sufficient", chunk_size=16384, tau=5,
                           kernel=kernel)
        _, pk = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return pk

    small, big = peak(rounds), peak(10 * rounds)
    assert big - small < 30e6 and np.isfinite(big)


# -- memory does not grow with the number of chunks -------------------------------------------
class _Buf:
    """A chunk result whose liveness is counted (a weak set sees only the ones still held)."""

    def __init__(self, live):
        live.add(self)


def test_threads_hold_at_most_the_window_of_chunk_results():
    """With ``reduce``, a folded result is dropped: at most the submission window (4 per
    thread) of results is alive at once, however many tasks run. Kept futures held every
    result before (the live count grew with the number of tasks: 21 bytes per game of
    ``simulate --bounded-memory --threads 2``)."""
    import weakref

    from semi_core.game.backends import run_local

    live: weakref.WeakSet = weakref.WeakSet()
    seen = []

    def fold(acc, _i, _res):
        seen.append(len(live))
        return acc + 1

    threads, n = 2, 300
    assert run_local(lambda _t: _Buf(live), range(n), threads=threads, reduce=fold,
                     init=0) == n
    # the window's results plus the one being folded; without the fix max(seen) ~ n
    assert max(seen) <= 4 * threads + 1, max(seen)
    assert len(live) == 0


def test_streaming_keeps_a_bounded_number_of_chunk_histograms(monkeypatch):
    """``simulate_streaming`` on 2 threads: the chunk results alive when a chunk finishes stay
    within the window whatever the number of chunks (here 120 per pass), in the histogram
    passes and in the collecting pass (whose fold copies the scores into arrays allocated once:
    it kept every chunk's arrays before)."""
    import threading
    import weakref

    from semi_core.game import engine

    alive = [0]
    counts = []
    lock = threading.Lock()
    real = engine._hist_task

    def gone():
        with lock:
            alive[0] -= 1

    def counted(task):
        out = real(task)
        token = out[0][0]  # the first query's non-member histogram or scores (an array)
        with lock:
            alive[0] += 1
            counts.append(alive[0])
        weakref.finalize(token, gone)
        return out

    monkeypatch.setattr(engine, "_hist_task", counted)
    mech = EmpiricalMean.isotropic(10, 4)
    res = simulate_streaming(mech, 120 * 256, 3, mode="sufficient", tau=2, chunk_size=256,
                             bins=16, collect_limit=1000, executor=Executor(threads=2))
    assert res["passes"] >= 3 and len(counts) == 120 * res["passes"]  # a collecting pass ran
    # 4 tasks per thread submitted + the one being folded + the first, kept by the
    # accumulator of a histogram pass; without the fix the count reaches the 120 chunks
    assert max(counts) <= 4 * 2 + 2, max(counts)


def test_collected_scores_are_charged_for_every_fpr_level(monkeypatch):
    """The collecting pass may keep ``collect_limit`` scores for each statistic and each of the
    three FPR levels of a target (f and f -+ h): 8 * 1e7 * (3 * 3 * 4 + 1) B = 2.96 GB here,
    refused under a 2.5 GB limit (counting one level per target, 1.92 GB, passed)."""
    monkeypatch.setenv("SEMI_CORE_MAX_MEMORY", "2500000000")
    mech = EmpiricalMean.isotropic(10, 4)
    with pytest.raises(ResourceLimitError, match="collected scores"):
        simulate_streaming(mech, 1000, 0, mode="sufficient", collect_limit=10_000_000,
                           fprs=FPRS)

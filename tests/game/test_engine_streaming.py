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
                           bins=64, executor=Executor(workers=2))
    assert a["tests"] == b["tests"] and b["backend"].startswith("dask")


@pytest.mark.slow
def test_streaming_memory_is_bounded():
    """Peak memory does not grow with rounds (10x the rounds, same peak within 30 MB)."""
    import tracemalloc

    mech = EmpiricalMean.isotropic(10, 10)

    def peak(rounds):
        tracemalloc.start()
        simulate_streaming(mech, rounds, 0, mode="sufficient", chunk_size=16384, tau=5)
        _, pk = tracemalloc.get_traced_memory()
        tracemalloc.stop()
        return pk

    small, big = peak(200_000), peak(2_000_000)
    assert big - small < 30e6 and np.isfinite(big)

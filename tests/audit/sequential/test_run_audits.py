"""Repeated audits have one loop (:func:`semi_core.audit.sequential.tester.run_audits`) and one
summary (:func:`~semi_core.audit.sequential.tester.rejection_summary`): each caller gives what it
gave before on fixed seeds (the loops they replace are written out here as the reference)."""

from __future__ import annotations

import numpy as np
import pytest

from semi_core._rng import as_seed_sequence
from semi_core.audit.bounds import audit_batch
from semi_core.audit.sequential import experiments as E
from semi_core.audit.sequential.semi_stream import fixed_r_rejection_rate, semi_stream_audit
from semi_core.audit.sequential.tester import (
    rejection_summary,
    run_audits,
    sampler_source,
    sequential_test,
    summarize,
)
from semi_core.game.play import play
from semi_core.mechanisms.zoo import RandomizedResponse


def _src():
    return sampler_source(lambda n, r: r.normal(0.0, 1.0, (n, 1)),
                          lambda n, r: r.normal(0.37, 1.0, (n, 1)))


def test_run_i_gets_the_ith_child_of_the_seed_whatever_the_audit():
    got = run_audits(audit=lambda ss: ss.spawn_key, runs=5, seed=7, summary=None).runs
    assert got == [c.spawn_key for c in np.random.SeedSequence(7).spawn(5)]
    ticks = []
    run_audits(audit=lambda ss: 0, runs=3, seed=0, summary=None,
               progress=lambda i, n: ticks.append((i, n)))
    assert ticks == [(1, 3), (2, 3), (3, 3)]
    with pytest.raises(TypeError, match="make_source"):
        run_audits(runs=2)
    with pytest.raises(TypeError, match="not both"):
        run_audits(_src, audit=lambda ss: 0, runs=2)
    with pytest.raises(ValueError, match="runs"):
        run_audits(audit=lambda ss: 0, runs=0)


def test_sequential_runs_and_summary_are_the_previous_loop():
    kw = dict(epsilon=0.0, delta=0.0, failure_prob=0.1, max_obs=300)
    res = run_audits(_src, runs=6, seed=5, **kw)
    ref = [sequential_test(_src(), seed=ss, **kw) for ss in np.random.SeedSequence(5).spawn(6)]
    assert [(r.rejected, r.stopped_at) for r in res.runs] == [(r.rejected, r.stopped_at)
                                                              for r in ref]
    rej = np.array([r.rejected for r in ref], dtype=float)
    stops = np.array([r.stopped_at for r in ref if r.rejected], dtype=float)
    rate = float(rej.mean())
    assert 0 < rate < 1 and stops.size > 1          # the input exercises every field
    want = {"runs": 6, "rejections": int(rej.sum()), "rejection_rate": rate,
            "rejection_rate_se": float(np.sqrt(rate * (1 - rate) / 6)),
            "mean_stop": float(stops.mean()),
            "mean_stop_se": float(stops.std(ddof=1) / np.sqrt(stops.size))}
    assert {k: res.summary[k] for k in want} == want
    assert res.summary == summarize(ref)


def test_rejection_summary_per_claim_is_the_previous_cli_summary():
    rng = np.random.default_rng(2)
    rej = rng.random((9, 3)) < [0.2, 0.5, 1.0]
    stops = [list(rng.integers(1, 500, int(c))) for c in rej.sum(0)]
    out = rejection_summary(rej, stops)
    r = rej.astype(float)
    assert out["rejection_rate"] == r.mean(axis=0).tolist()
    assert out["rejection_rate_se"] == np.sqrt(r.mean(0) * (1 - r.mean(0)) / 9).tolist()
    assert out["mean_stop"] == [float(np.mean(s)) if s else None for s in stops]
    assert out["rejections"] == rej.sum(0).tolist()
    empty = rejection_summary(np.zeros(0, bool))
    assert empty["runs"] == 0 and np.isnan(empty["rejection_rate"])
    with pytest.raises(ValueError, match="rejected"):
        rejection_summary(np.zeros((2, 2, 2)))


def test_stream_summary_of_boundary_type1_is_the_previous_loop():
    out = E.boundary_type1(runs=5, max_obs=60, seed=3)["semi_stream"]
    rr = RandomizedResponse(0.8, 1e-4)
    rej = [semi_stream_audit(rr, 0.8, delta=1e-4, failure_prob=0.1, max_rounds=240,
                             seed=ss).rejected[0] for ss in as_seed_sequence(3).spawn(5)]
    rate = float(np.mean(rej))
    assert (out["runs"], out["rejection_rate"]) == (5, rate)
    assert out["rejection_rate_se"] == float(np.sqrt(rate * (1 - rate) / 5))


def test_fixed_r_audits_play_through_the_runner_on_the_run_audits_children():
    """Audit i: the runner's games on child i of the seed, the CP bound at threshold 0; the
    rate counts the bounds above the claim. Same seed, same result."""
    rr = RandomizedResponse(3.0)
    out = fixed_r_rejection_rate(rr, 60, epsilon=1.0, delta=0.0, method="cp", audits=6,
                                 seed=4)
    lbs = []
    for ss in np.random.SeedSequence(4).spawn(6):
        s_in, s_out = play(rr, 60, ss, tau=1, tests=("semi-star",)).scores("semi-star")
        lbs.append(float(audit_batch(s_in[None, :], s_out[None, :], delta=0.0,
                                     failure_prob=0.05, method="cp", thresholds=[0.0])[0]))
    rate = float(np.mean(np.asarray(lbs) > 1.0))
    assert out["rejection_rate"] == rate and out["median_eps_lb"] == float(np.median(lbs))
    assert out == fixed_r_rejection_rate(rr, 60, epsilon=1.0, delta=0.0, method="cp",
                                         audits=6, seed=4)


def test_cli_stream_summary_is_the_rejection_summary_of_its_runs(capsys):
    """``seq-audit --stream semi``: the per-claim rates, SEs and mean stops are those of the
    previous inline summary, computed here from the runs the command returns."""
    import json

    from semi_core.cli import main

    main(["seq-audit", "--json", "--stream", "semi", "--mechanism", "randomized-response",
          "--mech-epsilon", "2", "--epsilon-grid", "0.5,1,3", "--runs", "4", "--max-obs",
          "300", "--seed", "6", "--no-progress"])
    out = json.loads(capsys.readouterr().out)
    runs, summ = out["runs"], out["summary"]
    rej = np.array([r["rejected"] for r in runs], dtype=float)
    stops = [[r["stopped_at"][j] for r in runs if r["stopped_at"][j] is not None]
             for j in range(3)]
    assert summ["rejection_rate"] == rej.mean(axis=0).tolist()
    assert summ["rejection_rate_se"] == np.sqrt(rej.mean(0) * (1 - rej.mean(0)) / 4).tolist()
    assert summ["mean_stop"] == [float(np.mean(s)) if s else None for s in stops]
    assert 0 < rej.sum() < rej.size


def test_grid_reading_claim_runs_are_the_previous_loop(monkeypatch):
    """The claim sec4.2.lower_bound_reading reads its runs through run_audits: the rate it
    reports is the one of the loop it replaced (same children of the same seed)."""
    import sympy as sp

    import semi_core.claims.sequential_dp_auditing.system as M
    from semi_core.audit.sequential import sequential_grid
    from semi_core.claims._core import CheckContext

    seen = []
    monkeypatch.setattr(M, "mc_outcome", lambda cases, **kw: seen.append(cases[0][2]))
    monkeypatch.setattr(M, "max", lambda a, b: a, raising=False)   # the raw rate
    M._check_grid_reading({"offset": sp.Integer(1)}, CheckContext(quick=True, seed=4))
    p = np.exp(1.0) / (1 + np.exp(1.0))
    grid, over = [0.0, 0.25, 1.5, 3.0], 0
    src = sampler_source(lambda n, r: (r.random((n, 1)) < p).astype(float),
                         lambda n, r: (r.random((n, 1)) < 1 - p).astype(float))
    for ss in np.random.SeedSequence([4, 77]).spawn(60):
        g = sequential_grid(src, grid, delta=0.0, failure_prob=0.1, max_obs=400,
                            bandwidth=0.05, seed=ss)
        n_rej = int(np.sum(np.isfinite(np.maximum.accumulate(
            [np.inf if r.stopped_at is None else r.stopped_at for r in g.results]))))
        over += (grid[n_rej] if n_rej < len(grid) else np.inf) >= 1.0
    assert seen == [over / 60]

"""The ceiling of the MMD audit: tau^{-1}(MMD) three ways (SymPy inverse, the closed form and
bisection, Monte Carlo of the witness statistic and of the grid's lower bound)."""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from semi_core.audit.sequential import sampler_source, sequential_grid, sequential_test
from semi_core.audit.sequential.ceiling import (
    epsilon_ceiling,
    gaussian_shift_ceiling,
    mechanism_ceiling,
    mmd_linear_estimate,
)
from semi_core.audit.sequential.conventions import tau_notebook
from semi_core.audit.sequential.rbf import mmd_gaussian_shift
from semi_core.audit.sequential.tau import tau_auditorium, tau_mmd
from semi_core.mechanisms.zoo import gaussian_sigma


def _canary(sigma):
    return sampler_source(lambda n, r: r.normal(0, sigma, (n, 1)),
                          lambda n, r: r.normal(1, sigma, (n, 1)))


def test_closed_form_is_the_sympy_inverse_of_tau():
    e, d, M = sp.symbols("epsilon delta M", positive=True)
    sol = sp.solve(sp.Eq(sp.sqrt(2) * (1 - 2 * (1 - d) / (1 + sp.exp(e))), M), e)
    assert len(sol) == 1
    f = sp.lambdify((M, d), sol[0])
    rng = np.random.default_rng(0)
    for _ in range(50):
        dd = float(10 ** rng.uniform(-8, -1))
        mm = float(rng.uniform(math.sqrt(2) * dd * 1.01, 1.4))
        assert epsilon_ceiling(mm, dd) == pytest.approx(float(f(mm, dd)), rel=1e-10)


def test_round_trip_and_edges():
    for mm in (0.01, 0.287, 1.0, 1.41):
        for dd in (0.0, 1e-5, 0.01):
            c = epsilon_ceiling(mm, dd)
            if c > 0:
                assert tau_mmd(c, dd) == pytest.approx(mm, rel=1e-12)
            a = epsilon_ceiling(mm, dd, bound="auditorium")
            if a > 0:
                assert tau_auditorium(a, dd) == pytest.approx(mm, rel=1e-9)
            nb = epsilon_ceiling(mm, dd, tau=tau_notebook, radius=0.5)
            if nb > 0:
                assert tau_notebook(nb, dd) == pytest.approx(0.5 * mm, rel=1e-9)
    assert epsilon_ceiling(math.sqrt(2) * 1e-5, 1e-5) == 0.0  # tau(0, delta) = sqrt 2 delta
    assert epsilon_ceiling(math.sqrt(2), 0.0) == math.inf
    with pytest.raises(ValueError, match="mmd"):
        epsilon_ceiling(1.5, 0.0)
    with pytest.raises(ValueError, match="radius"):
        epsilon_ceiling(0.5, 0.0, radius=0.0)


def test_fig8_canary_ceiling():
    """App. G: eps_canary = 2.75, delta = 1e-5 (sigma 1.50): ceiling 0.41 at the best (and the
    median-heuristic) bandwidth, 0.53 for every kernel in [0, 1]."""
    s = gaussian_sigma(2.75, 1e-5)
    c = gaussian_shift_ceiling(1.0, s, 1e-5, bandwidth=1.5)
    assert c["best_kernel_ceiling"] == pytest.approx(0.4114, abs=5e-4)
    assert c["at_bandwidth"]["epsilon_ceiling"] <= c["best_kernel_ceiling"] + 1e-12
    assert c["any_kernel_ceiling"] == pytest.approx(0.534, abs=1e-3)
    assert c["best_kernel_ceiling"] < c["any_kernel_ceiling"] < 2.75


def test_linear_estimate_matches_the_closed_form():
    """Monte Carlo: the unbiased linear-time MMD^2 within 4 of its SEs of the exact value."""
    s = gaussian_sigma(2.75, 1e-5)
    est, se = mmd_linear_estimate(_canary(s), 1.5, 40_000, seed=3)
    assert abs(est - mmd_gaussian_shift([1.0], s, 1.5) ** 2) < 4 * se
    res = mechanism_ceiling(_canary(s), 1.5, 1e-5, n_pairs=40_000, seed=3)
    lo, hi = res["epsilon_ceiling_range"]
    assert lo <= 0.4113 <= hi


def test_witness_statistic_converges_to_the_mmd():
    """The running mean of v_t over the second half of a 4,000-pair run is within 4 batch-mean
    SEs (20 batches) of MMD_h: the population value the ceiling is computed from."""
    s = gaussian_sigma(2.75, 1e-5)
    r = sequential_test(_canary(s), epsilon=10.0, delta=1e-5, max_obs=4000, bandwidth=1.5,
                        keep_witness=True, seed=5)
    v = r.witness[2000:]
    b = v.reshape(20, -1).mean(axis=1)
    se = b.std(ddof=1) / math.sqrt(b.size)
    assert abs(v.mean() - mmd_gaussian_shift([1.0], s, 1.5)) < 4 * se


@pytest.mark.slow
def test_lower_bound_stays_below_the_ceiling():
    """Monte Carlo: 100 runs of 3,000 pairs (bandwidth 1.5, alpha 0.05); the grid point 0.5
    above the ceiling 0.41 is rejected in at most alpha + 4 binomial SE of the runs, and 0.3
    below it in most runs."""
    s = gaussian_sigma(2.75, 1e-5)
    R, hits, below = 100, 0, 0
    for ss in np.random.SeedSequence(11).spawn(R):
        g = sequential_grid(_canary(s), [0.3, 0.5], delta=1e-5, max_obs=3000, bandwidth=1.5,
                            seed=ss)
        hits += g.results[1].rejected
        below += g.results[0].rejected
    assert hits / R <= 0.05 + 4 * math.sqrt(0.05 * 0.95 / R)
    assert below / R > 0.5


def test_seq_audit_json_carries_the_ceiling(capsys):
    import json

    from semi_core.cli import main

    rc = main(["seq-audit", "--mechanism", "nondp-gaussian-1", "--epsilon-grid", "0,0.2,0.6",
               "--mech-epsilon", "0.1", "--max-obs", "300", "--runs", "2", "--json",
               "--no-progress"])
    d = json.loads(capsys.readouterr().out)
    assert rc == 0
    c = d["epsilon_ceiling"]
    assert 0.3 < c["epsilon_ceiling"] < 0.5 and c["radius"] == 1.0
    assert all(lb <= c["epsilon_ceiling_range"][1] for lb in d["epsilon_lower_bound"])
    rc = main(["seq-audit", "--mechanism", "nondp-gaussian-1", "--claimed-epsilon", "0.1",
               "--max-obs", "300", "--runs", "1", "--conventions", "ons,oga", "--json",
               "--no-progress"])
    d = json.loads(capsys.readouterr().out)
    assert rc == 0 and d["summary"]["epsilon_ceiling"]["radius"] == 0.5


def test_grid_result_carries_the_ceiling():
    """sequential_grid(ceiling_pairs=n): the run is unchanged (same seed, same lower bound and
    stops) and the result carries the ceiling at the run's bandwidth; refused on a recorded
    stream."""
    from semi_core.audit.sequential import stream_source

    s = gaussian_sigma(2.75, 1e-5)
    a = sequential_grid(_canary(s), [0.1, 0.3, 0.6], delta=1e-5, max_obs=600, seed=2)
    b = sequential_grid(_canary(s), [0.1, 0.3, 0.6], delta=1e-5, max_obs=600, seed=2,
                        ceiling_pairs=20_000)
    assert a.epsilon_ceiling is None and a.to_dict()["epsilon_ceiling"] is None
    assert [r.stopped_at for r in a.results] == [r.stopped_at for r in b.results]
    c = b.epsilon_ceiling
    exact = gaussian_shift_ceiling(1.0, s, 1e-5, bandwidth=b.bandwidth)["at_bandwidth"]
    lo, hi = c["epsilon_ceiling_range"]
    assert c["bandwidth"] == b.bandwidth and lo <= exact["epsilon_ceiling"] <= hi
    assert b.epsilon_lower_bound <= hi
    x = np.zeros((50, 1))
    with pytest.raises(ValueError, match="ceiling_pairs"):
        sequential_grid(stream_source(x, x + 1), [0.1], delta=1e-5, max_obs=10, warmup=2,
                        ceiling_pairs=100)
    with pytest.raises(ValueError, match="ceiling_pairs"):
        sequential_grid(_canary(s), [0.1], delta=1e-5, max_obs=10, ceiling_pairs=2)

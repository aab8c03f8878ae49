"""Alg. 1 / Alg. 2: validity (Type I at the boundary and below tau), power, the exact UP mixture,
the epsilon-grid reading and the batch baseline."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate

from semi_core.audit.sequential import (
    batch_mmd_test,
    mechanism_source,
    mmd_gaussian_shift,
    run_audits,
    sampler_source,
    sequential_grid,
    sequential_test,
    tau_mmd,
)
from semi_core.mechanisms.zoo import SEED_PAIR, NonDPGaussian1, NonDPLaplace1

ALPHA = 0.1


def _binary_boundary(eps):
    """Outputs in {0, 1} with P(1) = p on S and 1 - p on S', p = e^eps/(1+e^eps): exactly
    eps-DP, and with bandwidth 0.05 its MMD is sqrt(2) TV (1 - e^-200)^(1/2) = tau(eps, 0)."""
    p = np.exp(eps) / (1 + np.exp(eps))
    return sampler_source(lambda n, r: (r.random((n, 1)) < p).astype(float),
                          lambda n, r: (r.random((n, 1)) < 1 - p).astype(float))


def _type1(make_source, runs, **kw):
    res = run_audits(make_source, runs=runs, seed=12, **kw)
    return res.summary["rejection_rate"]


@pytest.mark.parametrize("algorithm,evalue", [(1, "max"), (2, "max"), (2, "mixture")])
def test_type1_at_the_boundary(algorithm, evalue):
    """An exactly eps-DP mechanism whose MMD equals tau: rejected in <= alpha of the runs.

    400 runs: binomial SE at alpha = 0.1 is 0.015; tolerance 4.5 SE above alpha."""
    R = 400
    rate = _type1(lambda: _binary_boundary(0.5), R, epsilon=0.5, delta=0.0, failure_prob=ALPHA,
                  max_obs=300, algorithm=algorithm, evalue=evalue, bandwidth=0.05)
    assert rate <= ALPHA + 4.5 * np.sqrt(ALPHA * (1 - ALPHA) / R)


@pytest.mark.parametrize("algorithm", [1, 2])
def test_gaussian_pair_below_tau_not_rejected(algorithm):
    """N(0,1) vs N(1,1) is only ~4.4-DP at delta=1e-5, but its MMD (~0.41 for the median
    bandwidth) is below tau(1, 1e-5) = 0.65: the MMD null holds at eps = 1 and must be rejected
    in <= alpha of the runs (150 runs, SE 0.024, tolerance 4.5 SE)."""
    R = 150
    assert mmd_gaussian_shift(1.0, 1.0, 2.0) < tau_mmd(1.0, 1e-5)  # even for a wide bandwidth
    src = lambda: sampler_source(lambda n, r: r.normal(0, 1, (n, 1)),  # noqa: E731
                                 lambda n, r: r.normal(1, 1, (n, 1)))
    rate = _type1(src, R, epsilon=1.0, delta=1e-5, failure_prob=ALPHA, max_obs=600,
                  algorithm=algorithm)
    assert rate <= ALPHA + 4.5 * np.sqrt(ALPHA * (1 - ALPHA) / R)


@pytest.mark.parametrize("algorithm", [1, 2])
@pytest.mark.parametrize("make", [NonDPLaplace1, NonDPGaussian1])
def test_non_dp_mechanisms_are_rejected(make, algorithm):
    res = run_audits(lambda: mechanism_source(make(0.01), *SEED_PAIR), runs=4, seed=3,
                     epsilon=0.01, delta=1e-5, max_obs=2000, algorithm=algorithm)
    assert res.summary["rejection_rate"] == 1.0
    assert res.summary["mean_stop"] < 1000


def test_ville_path_and_mixture_dominance():
    """log W~_t <= log W^UP_t at every step; Alg. 1 wealth factors >= 1/2."""
    src = _binary_boundary(1.5)
    r2 = sequential_test(src, epsilon=0.2, delta=0.0, max_obs=400, algorithm=2,
                         bandwidth=0.05, seed=1, evalue="mixture")
    assert np.all(r2.log_wealth <= r2.log_mixture + 1e-9)
    r1 = sequential_test(_binary_boundary(1.5), epsilon=0.2, delta=0.0, max_obs=400,
                         algorithm=1, bandwidth=0.05, seed=1)
    assert np.all(np.diff(np.r_[0.0, r1.log_wealth]) >= np.log(0.5) - 1e-12)
    assert r1.rejected and r2.rejected


def test_node_average_is_the_universal_portfolio():
    """The Gauss-Chebyshev node average equals Cover's UP wealth computed by quadrature."""
    from semi_core.audit.sequential.tester import _EBettor

    rng = np.random.default_rng(2)
    v = rng.uniform(-1.2, 1.4, 7)
    tau = 0.3
    bet = _EBettor(tau, 0.05, n_max=7, rule="mixture")
    bet.feed(v, 0)
    E = (2 + v) / (2 + tau)
    dens = lambda b: 1 / (np.pi * np.sqrt(b * (1 - b)))  # noqa: E731 - Beta(1/2, 1/2)
    wealth = 1.0
    for t in range(E.size):  # UP: bet the posterior-mean fraction each round
        def w(b, t=t):
            return np.prod(1 + b * (E[:t] - 1))
        num = integrate.quad(lambda b: b * w(b) * dens(b), 0, 1, limit=200)[0]
        den = integrate.quad(lambda b: w(b) * dens(b), 0, 1, limit=200)[0]
        beta_t = num / den
        wealth *= beta_t * E[t] + 1 - beta_t
    assert np.exp(bet.mix[-1]) == pytest.approx(wealth, rel=1e-7)


def test_epsilon_grid_fixed_sequence_reading():
    g = sequential_grid(_binary_boundary(1.0), [0.0, 0.25, 1.5, 3.0], delta=0.0,
                        failure_prob=0.05, max_obs=500, bandwidth=0.05, seed=4)
    assert g.epsilon_lower_bound == 0.25
    assert g.seed_reading == 1.5  # the seed's reading exceeds the true eps = 1
    assert np.all(np.diff(g.lower_bound_path) >= 0)
    assert g.lower_bound_path[-1] == g.epsilon_lower_bound
    assert [r.rejected for r in g.results] == [True, True, False, False]


def test_witness_shared_by_all_grid_points_and_median_warmup_discarded():
    src = mechanism_source(NonDPLaplace1(0.1), *SEED_PAIR)
    g = sequential_grid(src, [0.05, 0.1], delta=1e-5, max_obs=300, seed=5, keep_witness=True)
    w = [r.witness for r in g.results]
    np.testing.assert_array_equal(w[0], w[1])
    r = sequential_test(mechanism_source(NonDPLaplace1(0.1), *SEED_PAIR), epsilon=0.05,
                        delta=1e-5, max_obs=300, seed=5)
    assert r.bandwidth == g.bandwidth and r.bandwidth_note == "median"


def test_batch_tester():
    res = [batch_mmd_test(_binary_boundary(0.5), epsilon=0.5, delta=0.0, failure_prob=ALPHA,
                          n=400, bandwidth=0.05, seed=s)["rejected"] for s in range(60)]
    assert np.mean(res) <= ALPHA + 4.5 * np.sqrt(ALPHA * (1 - ALPHA) / 60)
    r = batch_mmd_test(mechanism_source(NonDPGaussian1(0.01), *SEED_PAIR), epsilon=0.01,
                       delta=1e-5, n=2000, bandwidth="median", seed=0)
    assert r["rejected"] and r["mmd_lower"] > r["tau"]


def test_callable_mechanism_without_subclassing():
    def mech(dataset, rng):
        return float(np.mean(dataset)) + rng.laplace(0, 0.5 / len(dataset))

    r = sequential_test(mechanism_source(mech, [0.0], [0.0, 1.0]), epsilon=0.01, delta=1e-5,
                        max_obs=1000, seed=0)
    assert r.rejected

    def vec(dataset, rng):
        return np.array([np.sum(dataset), len(dataset)]) + rng.normal(0, 1, 2)

    r = sequential_test(mechanism_source(vec, [0.0], [0.0, 1.0]), epsilon=0.1, delta=1e-5,
                        max_obs=500, seed=0)
    assert r.rejected


@pytest.mark.slow
@pytest.mark.parametrize("algorithm", [1, 2])
def test_type1_boundary_many_runs(algorithm):
    """1000 runs (SE 0.0095 at alpha = 0.1), tolerance 4.5 SE."""
    R = 1000
    rate = _type1(lambda: _binary_boundary(0.8), R, epsilon=0.8, delta=0.0, failure_prob=ALPHA,
                  max_obs=500, algorithm=algorithm, bandwidth=0.05)
    assert rate <= ALPHA + 4.5 * np.sqrt(ALPHA * (1 - ALPHA) / R)

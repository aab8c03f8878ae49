"""Epsilon lower bounds: external reference values, derivations, edge cases, bad inputs."""

import math

import numpy as np
import pytest
import sympy as sp
from hypothesis import given, settings
from hypothesis import strategies as st

from semi_core.audit import (
    audit_batch,
    clopper_pearson_lower,
    clopper_pearson_upper,
    dkw_margin,
    epsilon_lower_bound,
    epsilon_lower_bound_from_counts,
    gdp_epsilon,
)

# --------------------------------------------------------------------------- external values


def test_external_clopper_pearson_perfect_separation():
    # tensorflow/privacy research/audit_2020/audit_test.py (Jagielski et al. 2020),
    # test_compute_epsilon_and_acc 'Test0': 500 poisoned scores 1, 500 clean scores 0,
    # threshold 0.5, alpha 0.01 -> eps 4.541915810224092 (also 4.54 in tensorflow_privacy/
    # privacy/privacy_tests/epsilon_lower_bound_test.py, test_bound_scalar_clopper_pearson).
    # Convention reproduced: one-sided 1 - alpha/2 Clopper-Pearson bounds on TPR and FPR,
    # delta = 0, eps = log(TPR_lower / FPR_upper).
    r = epsilon_lower_bound(np.ones(500), np.zeros(500), delta=0.0, failure_prob=0.01,
                            method="cp", thresholds=0.5)
    assert r.epsilon_lower_bound == pytest.approx(4.541915810224092, rel=1e-12)
    assert r.tpr_lower == pytest.approx(0.9894593118113243, rel=1e-12)  # their "acc"
    rc = epsilon_lower_bound_from_counts(500, 0, 0, 500, delta=0.0, failure_prob=0.01)
    assert rc.epsilon_lower_bound == pytest.approx(4.541915810224092, rel=1e-12)
    # same file, 'Test2': identical scores -> 0
    r0 = epsilon_lower_bound(np.ones(500), np.ones(500), delta=0.0, failure_prob=0.01,
                             method="cp", thresholds=0.5)
    assert r0.epsilon_lower_bound == 0.0


@pytest.mark.parametrize("mu", [0.3, 1.0, 1.5])
def test_external_gaussian_scores_within_5_percent(mu):
    # Reference case: members ~ N(mu,1), non-members ~ N(0,1), 200,000 each, failure
    # probability 0.1, delta 0.05 -> eps_LB within 5% of the exact eps(delta) (gdp method with
    # the Gaussian score fit; a lower bound, so also <= eps up to the 10% failure event, which
    # the fixed seed does not hit).
    rng = np.random.default_rng(np.random.SeedSequence([2026, int(mu * 10)]))
    m, n = rng.normal(mu, 1.0, 200_000), rng.normal(0.0, 1.0, 200_000)
    truth = gdp_epsilon(mu, 0.05)
    r = epsilon_lower_bound(m, n, delta=0.05, failure_prob=0.1, method="gdp", gdp_fit="gaussian")
    assert abs(r.epsilon_lower_bound - truth) <= 0.05 * truth


@pytest.mark.slow
@pytest.mark.parametrize("mu", [0.3, 1.0, 1.5])
def test_external_gaussian_scores_distribution_free(mu):
    # Same data as above. The distribution-free methods pay for their margins (measured
    # ratios eps_LB / eps: dkw 0.86-0.92, cp 0.88-0.98) and stay below the truth.
    rng = np.random.default_rng(np.random.SeedSequence([2026, int(mu * 10)]))
    m, n = rng.normal(mu, 1.0, 200_000), rng.normal(0.0, 1.0, 200_000)
    truth = gdp_epsilon(mu, 0.05)
    for method in ("dkw", "cp"):
        lb = epsilon_lower_bound(m, n, delta=0.05, failure_prob=0.1, method=method)
        assert 0.8 * truth < lb.epsilon_lower_bound <= truth


# --------------------------------------------------------------------------- derivations


def test_dkw_margin_derivation_and_seed_typo():
    n, lam, p = sp.symbols("N lambda p", positive=True)
    sol = sp.solve(sp.Eq(sp.exp(-2 * n * lam**2), p), lam)
    expr = [s for s in sol if s.is_positive is not False][0]
    for N, q in [(100, 0.025), (2000, 0.005)]:
        assert float(dkw_margin(N, q)) == pytest.approx(float(expr.subs({n: N, p: q})), rel=1e-14)
    # SeMI seed §5.1 prints sqrt(log(xi/4) / (2N)): not a real number for xi < 4
    with np.errstate(invalid="ignore"):
        assert np.isnan(np.sqrt(np.log(0.05 / 4) / (2 * 1000)))
    # ours (one-sided, xi/2 per CDF) is tighter than the corrected two-sided sqrt(log(4/xi)/2N)
    assert float(dkw_margin(1000, 0.025)) < math.sqrt(math.log(4 / 0.05) / 2000)


def test_clopper_pearson_is_exact_binomial_inversion():
    from scipy.stats import binom

    for k, n in [(0, 10), (3, 10), (10, 10), (17, 200)]:
        u = float(clopper_pearson_upper(k, n, 0.05))
        if k < n:
            assert binom.cdf(k, n, u) == pytest.approx(0.05, rel=1e-9)
        else:
            assert u == 1.0
        lo = float(clopper_pearson_lower(k, n, 0.05))
        if k > 0:
            assert binom.sf(k - 1, n, lo) == pytest.approx(0.05, rel=1e-9)
        else:
            assert lo == 0.0


def test_dkw_matches_bruteforce_over_thresholds(rng):
    m, n = rng.normal(1.0, 1.0, 60), rng.normal(0.0, 1.0, 45)
    m[:5] = n[:5]  # ties across classes
    delta, xi = 1e-3, 0.05
    e1 = math.sqrt(math.log(2 / xi) / (2 * m.size))
    e0 = math.sqrt(math.log(2 / xi) / (2 * n.size))
    best = 0.0
    for g in np.unique(np.concatenate([m, n])):
        a = min(1.0, np.mean(n > g) + e0)
        b = min(1.0, np.mean(m <= g) + e1)
        for num, den in [(1 - delta - a, b), (1 - delta - b, a)]:
            if num > 0:
                best = max(best, math.log(num / den))
    r = epsilon_lower_bound(m, n, delta=delta, failure_prob=xi, method="dkw")
    assert r.epsilon_lower_bound == pytest.approx(best, rel=1e-12)
    assert r.margin_member == pytest.approx(e1) and r.margin_nonmember == pytest.approx(e0)


def test_rank_invariance_and_sides(rng):
    m, n = rng.normal(2.0, 1.0, 300), rng.normal(0.0, 1.0, 300)
    a = epsilon_lower_bound(m, n, delta=1e-5, method="dkw")
    b = epsilon_lower_bound(np.exp(m), np.exp(n), delta=1e-5, method="dkw")
    assert a.epsilon_lower_bound == pytest.approx(b.epsilon_lower_bound, rel=1e-12)
    one = epsilon_lower_bound(m, n, delta=1e-5, method="dkw", sides="one")
    assert one.epsilon_lower_bound <= a.epsilon_lower_bound
    assert one.direction == "tpr/fpr"


def test_batch_equals_single(rng):
    M, N = rng.normal(1.0, 1.0, (4, 80)), rng.normal(0.0, 1.0, (4, 70))
    for method in ("dkw", "gdp"):
        eps = audit_batch(M, N, delta=1e-3, failure_prob=0.1, method=method)
        single = [epsilon_lower_bound(M[i], N[i], delta=1e-3, failure_prob=0.1,
                                      method=method).epsilon_lower_bound for i in range(4)]
        np.testing.assert_allclose(eps, single, rtol=1e-12)


def test_cp_bonferroni_grid_and_split(rng):
    m, n = rng.normal(3.0, 1.0, 2000), rng.normal(0.0, 1.0, 2000)
    grid = np.linspace(0.0, 4.0, 9)
    r = epsilon_lower_bound(m, n, delta=1e-5, failure_prob=0.05, method="cp", thresholds=grid)
    assert r.n_thresholds == 9 and r.threshold in grid
    # the certified bounds at the chosen threshold use xi / (2 K)
    k_fp = int(np.sum(n > r.threshold))
    assert r.fpr_upper == pytest.approx(float(clopper_pearson_upper(k_fp, 2000, 0.05 / 18)))
    s = epsilon_lower_bound(m, n, delta=1e-5, failure_prob=0.05, method="cp", seed=3)
    assert s.n_member == 1000 and s.n_nonmember == 1000  # certified on the held-out half
    assert s.epsilon_lower_bound > 0
    s2 = epsilon_lower_bound(m, n, delta=1e-5, failure_prob=0.05, method="cp", seed=3)
    assert s2 == s  # the split is reproducible from the seed


def test_gdp_fit_reports_mu(rng):
    m, n = rng.normal(1.0, 1.0, 5000), rng.normal(0.0, 1.0, 5000)
    for fit in ("tradeoff", "gaussian"):
        r = epsilon_lower_bound(m, n, delta=1e-5, method="gdp", gdp_fit=fit)
        assert 0 < r.mu_lower < 1.0 + 0.1
        # SE of the mean-difference fit ~ sqrt(2/5000) = 0.02: 4.5 SE tolerance
        assert abs(r.mu_hat - 1.0) < 4.5 * math.sqrt(2 / 5000) * 1.5
        assert r.epsilon_lower_bound == pytest.approx(gdp_epsilon(r.mu_lower, 1e-5))


def test_gdp_overclaims_for_non_gaussian_mechanism():
    # Documented limitation: randomised response with eps = 1 is (1, 0)-DP but its trade-off
    # point mapped onto a GDP curve gives mu = 2 Phi^{-1}(e/(1+e)) = 1.23 and eps(1e-5) ~ 5.
    p = math.e / (1 + math.e)
    N = 100_000
    m = np.r_[np.ones(int(p * N)), np.zeros(N - int(p * N))]
    n = np.r_[np.ones(N - int(p * N)), np.zeros(int(p * N))]
    gdp = epsilon_lower_bound(m, n, delta=1e-5, method="gdp").epsilon_lower_bound
    cp = epsilon_lower_bound(m, n, delta=1e-5, method="cp", thresholds=0.5).epsilon_lower_bound
    assert cp <= 1.0 < gdp  # cp stays sound, gdp (assumption violated) over-claims


def test_counts_methods():
    r = epsilon_lower_bound_from_counts(900, 100, 50, 950, delta=1e-5, failure_prob=0.05,
                                        method="dkw")
    e = math.sqrt(math.log(2 / 0.05) / 2000)
    assert r.fpr_upper == pytest.approx(0.05 + e)
    assert r.epsilon_lower_bound == pytest.approx(
        max(math.log((1 - 1e-5 - 0.1 - e) / (0.05 + e)), math.log((1 - 1e-5 - 0.05 - e) / (0.1 + e))))
    g = epsilon_lower_bound_from_counts(900, 100, 50, 950, delta=1e-5, method="gdp")
    assert g.mu_lower > 0 and g.epsilon_lower_bound == pytest.approx(gdp_epsilon(g.mu_lower, 1e-5))


def test_no_signal_gives_zero(rng):
    x = rng.normal(size=3000)
    y = rng.normal(size=3000)
    for method in ("dkw", "cp", "gdp"):
        assert epsilon_lower_bound(x, y, delta=1e-5, method=method).epsilon_lower_bound == 0.0
    c = np.zeros(100)
    assert epsilon_lower_bound(c, c, delta=0.0, method="dkw").epsilon_lower_bound == 0.0


# --------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"member_scores": []}, ValueError, "member_scores is empty"),
        ({"nonmember_scores": []}, ValueError, "nonmember_scores is empty"),
        ({"member_scores": [1.0, float("nan")]}, ValueError, "member_scores contains NaN"),
        ({"nonmember_scores": [[1.0]]}, ValueError, "1-D"),
        ({"delta": 1.0}, ValueError, r"delta must be in \[0, 1\)"),
        ({"delta": -1e-9}, ValueError, r"delta must be in \[0, 1\)"),
        ({"failure_prob": 0.0}, ValueError, r"failure_prob must be in \(0, 0.5\]"),
        ({"failure_prob": 0.6}, ValueError, r"failure_prob must be in \(0, 0.5\]"),
        ({"failure_prob": "x"}, TypeError, "failure_prob"),
        ({"method": "best"}, ValueError, "method must be one of"),
        ({"sides": "both"}, ValueError, "sides must be one of"),
        ({"thresholds": [0.5]}, ValueError, "only used by method='cp'"),
        ({"method": "cp", "thresholds": [float("nan")]}, ValueError, "thresholds"),
        ({"method": "gdp", "gdp_fit": "normal"}, ValueError, "gdp_fit"),
    ],
)
def test_bad_inputs(kwargs, exc, match):
    args = {"member_scores": [1.0, 2.0, 3.0], "nonmember_scores": [0.0, 1.0, 0.5],
            "delta": 1e-5, "failure_prob": 0.05}
    args.update(kwargs)
    with pytest.raises(exc, match=match):
        epsilon_lower_bound(args.pop("member_scores"), args.pop("nonmember_scores"), **args)


def test_bad_counts_and_split():
    with pytest.raises(ValueError, match="at least one member"):
        epsilon_lower_bound_from_counts(0, 0, 5, 5, delta=0.0)
    with pytest.raises(ValueError, match="tp"):
        epsilon_lower_bound_from_counts(-1, 0, 5, 5, delta=0.0)
    with pytest.raises(ValueError, match="split mode"):
        epsilon_lower_bound([1.0], [0.0], delta=0.0, method="cp")


# --------------------------------------------------------------------------- properties

_scores_st = st.lists(st.floats(-5, 5, allow_nan=False), min_size=1, max_size=40)


@settings(max_examples=60, deadline=None)
@given(_scores_st, _scores_st, st.sampled_from(["dkw", "gdp"]))
def test_monotone_in_delta_and_failure_prob(m, n, method):
    kw = {"method": method}
    base = epsilon_lower_bound(m, n, delta=1e-3, failure_prob=0.05, **kw).epsilon_lower_bound
    assert base >= 0.0
    # more delta or less confidence can only loosen the requirement
    assert epsilon_lower_bound(m, n, delta=0.1, failure_prob=0.05,
                               **kw).epsilon_lower_bound <= base + 1e-12
    assert epsilon_lower_bound(m, n, delta=1e-3, failure_prob=0.5,
                               **kw).epsilon_lower_bound >= base - 1e-12
    if method == "dkw":
        assert epsilon_lower_bound(m, n, delta=1e-3, sides="one",
                                   **kw).epsilon_lower_bound <= base + 1e-12

"""Closed-form errors: Phi form <-> ncx2 form <-> quadrature <-> Monte Carlo; seed invariances."""

import numpy as np
import pytest
from scipy import optimize
from scipy.stats import norm

from semi_core._params import POWER_CASES
from semi_core.game.play import play
from semi_core.mechanisms.empirical_mean import EmpiricalMean
from semi_core.stats import errors as E
from tests.conftest import MC_SIGMAS, binomial_se


def test_phi_form_equals_ncx2_form_at_random_points(rng):
    """Seed Lemmas 3.5-3.6 (Phi form) == the noncentral chi^2 form for d = 1, 200 points.

    scipy's ncx2 carries ~1e-9 relative error and underflows below ~1e-300 where the log_ndtr
    Phi form does not, so the comparison uses rtol 1e-8 on values above 1e-250.
    """
    n = rng.integers(2, 200, size=200).astype(float)
    m = rng.uniform(0, 25, size=200)
    gam = E.gamma_max(n, m) - rng.exponential(3.0, size=200)
    K = E.gamma_max(n, m) - gam
    a_chi = E._ncx2_cdf(2 * (n - 1) * K, 1, n * m)
    b_chi = E._ncx2_sf(2 * n * K, 1, (n - 1) * m)
    ok = a_chi > 1e-250
    assert ok.sum() > 100
    np.testing.assert_allclose(E.alpha_1d(gam, n, m)[ok], a_chi[ok], rtol=1e-8)
    okb = b_chi > 1e-250
    np.testing.assert_allclose(E.beta_1d(gam, n, m)[okb], b_chi[okb], rtol=1e-8)


def test_alpha_beta_against_numerical_acceptance_interval(rng):
    """alpha/beta from the acceptance interval {log LR >= gamma} found numerically (brentq on the
    mechanism's own log-LR, no closed form), then Gaussian masses of Xbar (d = 1)."""
    for _ in range(40):
        n = int(rng.integers(2, 40))
        z = float(rng.uniform(0.2, 4))
        mech = EmpiricalMean(n, 1, mu=0.0, cov=1.0, target=z)
        g = float(E.gamma_max(n, z * z) - rng.exponential(2.0))
        q = mech.quadratic_form(1)
        f = lambda x, q=q, g=g: float(q(np.array([x]))) - g  # noqa: E731
        r1 = optimize.brentq(f, z - 100, z, xtol=1e-14)  # log-LR peaks at Xbar = z*
        r2 = optimize.brentq(f, z, z + 100, xtol=1e-14)
        s0, s1 = 1 / np.sqrt(n), np.sqrt(n - 1) / n
        a = norm.cdf(r2, 0, s0) - norm.cdf(r1, 0, s0)
        b = norm.cdf(r1, z / n, s1) + norm.sf(r2, z / n, s1)
        assert float(E.alpha_quadratic(g, n, z * z)) == pytest.approx(a, rel=1e-7, abs=1e-13)
        assert float(E.beta_quadratic(g, n, z * z)) == pytest.approx(b, rel=1e-7, abs=1e-13)


def test_threshold_inverts_alpha(rng):
    for d in (1, 4):
        n, m = 10, 9.0
        f = rng.uniform(1e-6, 0.9, size=50)
        np.testing.assert_allclose(E.alpha_quadratic(E.threshold_quadratic(f, n, m, d), n, m, d), f,
                                   rtol=1e-8)
        np.testing.assert_allclose(E.tpr_quadratic(f, n, m, d),
                                   1 - E.beta_quadratic(E.threshold_quadratic(f, n, m, d), n, m, d),
                                   rtol=1e-10)


def test_above_gamma_max_no_rejection():
    g = E.gamma_max(10, 9.0) + 1e-9
    assert E.alpha_quadratic(g, 10, 9.0) == 0.0 and E.beta_quadratic(g, 10, 9.0) == 1.0


@pytest.mark.parametrize("case", POWER_CASES[:5], ids=lambda c: c.name)
def test_closed_form_matches_monte_carlo(case):
    """alpha and TPR at the closed-form threshold vs the SeMI game, MC_SIGMAS binomial SE."""
    mech = case.mechanism()
    res = play(mech, 40_000, seed=hash(case.name) % 2**32, tau=case.tau)
    for test in ("semi-star", "final", "semi-max"):
        s1, s0 = res.scores(test)
        for fpr in (0.1, 0.01):
            g = float(E.threshold(mech, fpr, test, tau=case.tau))
            a_hat, tpr_hat = float((s0 >= g).mean()), float((s1 >= g).mean())
            a = float(E.alpha(mech, g, test, tau=case.tau))
            tpr = 1 - float(E.beta(mech, g, test, tau=case.tau))
            assert a == pytest.approx(fpr, rel=1e-7)
            assert abs(a_hat - a) <= MC_SIGMAS * binomial_se(a, s0.size), (test, fpr, a_hat, a)
            assert abs(tpr_hat - tpr) <= MC_SIGMAS * binomial_se(tpr, s1.size), (test, fpr, tpr_hat, tpr)


def test_per_step_parameters_monte_carlo():
    """Non-stationary (mu_t, Sigma_t, n_t) with a random tau: SeMI* and SeMI-max (E.2/E.3
    generalised) closed forms vs the game, MC_SIGMAS binomial SE."""
    mech = EmpiricalMean([4, 10, 25], 3, mu=[[0.0], [0.5], [-0.5]],
                         cov=np.array([[[1.0]], [[2.0]], [[0.5]]]), target=2.5)
    pmf = [0.2, 0.5, 0.3]
    res = play(mech, 60_000, seed=7, tau=pmf)
    for test in ("semi-star", "semi-max"):
        s1, s0 = res.scores(test)
        g = float(E.threshold(mech, 0.05, test, tau=pmf))
        tpr = 1 - float(E.beta(mech, g, test, tau=pmf))
        assert abs((s0 >= g).mean() - 0.05) <= MC_SIGMAS * binomial_se(0.05, s0.size)
        assert abs((s1 >= g).mean() - tpr) <= MC_SIGMAS * binomial_se(tpr, s1.size)


def test_semi_star_invariant_in_tau_and_T():
    """Seed §3.1: SeMI* power depends on n and m* only (isolation)."""
    vals = [float(E.tpr_at_fpr(EmpiricalMean.isotropic(10, T, distance=3.0), 0.01, "semi-star",
                               tau=tau)) for T, tau in [(1, 1), (5, 2), (10, 10), (40, 17)]]
    np.testing.assert_allclose(vals, vals[0], rtol=1e-12)


def test_final_observation_power_falls_with_T():
    tprs = [float(E.tpr_at_fpr(EmpiricalMean.isotropic(10, T, distance=3.0), 0.01, "final"))
            for T in (1, 2, 5, 10, 20, 50)]
    assert all(a > b for a, b in zip(tprs, tprs[1:]))
    star = float(E.tpr_at_fpr(EmpiricalMean.isotropic(10, 1, distance=3.0), 0.01, "semi-star"))
    assert tprs[0] == pytest.approx(star, rel=1e-12)  # T = 1: the two tests coincide


def test_power_depends_on_sigma_and_target_only_through_mahalanobis(rng):
    d = 4
    base = float(E.tpr_at_fpr(EmpiricalMean.isotropic(10, 3, distance=2.0, d=d), 0.01))
    for _ in range(10):
        M = rng.standard_normal((d, d))
        S = M @ M.T + 0.1 * np.eye(d)
        v = rng.standard_normal(d)
        z = 2.0 * v / np.sqrt(v @ np.linalg.solve(S, v))
        mu = rng.standard_normal(d)
        mech = EmpiricalMean(10, 3, mu=mu, cov=S, target=mu + z)
        assert float(E.tpr_at_fpr(mech, 0.01)) == pytest.approx(base, rel=1e-10)


def test_semi_max_threshold_bonferroni_like():
    """Cor. E.2: alpha_0(gamma*) = 1 - (1 - alpha)^(1/T)."""
    mech = EmpiricalMean.isotropic(10, 8, distance=3.0)
    g = float(E.threshold(mech, 0.01, "semi-max"))
    assert float(E.alpha_quadratic(g, 10, 9.0)) == pytest.approx(1 - 0.99 ** (1 / 8), rel=1e-9)


def test_auc_matches_monte_carlo():
    mech = EmpiricalMean.isotropic(10, 5, distance=2.0)
    res = play(mech, 20_000, seed=3, tau=2)
    for test in ("semi-star", "final"):
        s1, s0 = res.scores(test)
        ranks = np.argsort(np.argsort(np.concatenate([s1, s0])))
        auc_hat = (ranks[: s1.size].sum() - s1.size * (s1.size - 1) / 2) / (s1.size * s0.size)
        a = E.auc(mech, test, tau=2)
        # Hanley-McNeil-style bound: SE(AUC) <= sqrt(A(1-A)/min(n1,n0))
        se = np.sqrt(a * (1 - a) / min(s1.size, s0.size))
        assert abs(auc_hat - a) <= MC_SIGMAS * se


@pytest.mark.parametrize(
    "call, match",
    [
        (lambda m: E.threshold(m, 0.0), r"fpr must lie in \(0, 1\)"),
        (lambda m: E.threshold(m, 1.0), r"fpr must lie in \(0, 1\)"),
        (lambda m: E.threshold(m, np.nan), "fpr contains NaN"),
        (lambda m: E.tpr_at_fpr(m, 0.01, "semi-unif"), "no closed-form"),
        (lambda m: E.tpr_at_fpr(m, 0.01, "bogus"), "test must be one of"),
        (lambda m: E.alpha(m, 0.0, tau=7), "tau must be in 1..5"),
        (lambda m: E.alpha(m, 0.0, tau=[0.5, 0.5]), "must have 5 entries"),
        (lambda m: E.alpha_quadratic(0.0, 1, 1.0), "n must be >= 2"),
    ],
)
def test_bad_inputs(call, match):
    with pytest.raises(ValueError, match=match):
        call(EmpiricalMean.isotropic(10, 5))

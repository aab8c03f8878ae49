"""The independent reference computations of the claim checks (``semi_core.claims._reference``
and the exact moments of the per-datum checks) against Monte Carlo and the numeric core."""

from __future__ import annotations

import numpy as np
import pytest

from semi_core.claims import _reference as ref


def test_error_references_match_monte_carlo():
    """The chi-square error forms used as references agree with simulated log LRs."""
    rng = np.random.default_rng(11)
    R = 40000
    for n, d in ((6, 2), (15, 3)):
        u = rng.normal(size=d)
        m = float(u @ u)
        gamma = m / 2 - d / 2 * np.log((n - 1) / n) - 1.0
        w0 = rng.standard_normal((R, d)) / np.sqrt(n)
        w1 = u / n + rng.standard_normal((R, d)) * np.sqrt(n - 1) / n
        a_mc = (ref.loglr_batch(w0, u, n) >= gamma).mean()
        b_mc = (ref.loglr_batch(w1, u, n) < gamma).mean()
        # 4 binomial SE
        assert abs(a_mc - ref.alpha_lr(gamma, n, m, d)) <= 4 * np.sqrt(a_mc * (1 - a_mc) / R)
        assert abs(b_mc - ref.beta_lr(gamma, n, m, d)) <= 4 * np.sqrt(b_mc * (1 - b_mc) / R)


def test_releases_joint_matches_simulation():
    rng = np.random.default_rng(5)
    n_t, mu_t, var_t, z, tau, R = np.array([3, 5, 4]), np.array([0.0, 1.0, -1.0]), \
        np.array([1.0, 2.0, 0.5]), 4.0, 2, 40000
    rel = np.empty((R, 3))
    tot, cnt = np.zeros(R), 0
    for t in range(3):
        x = mu_t[t] + np.sqrt(var_t[t]) * rng.standard_normal((R, n_t[t]))
        if t == tau - 1:
            x[:, 0] = z
        tot += x.sum(axis=1)
        cnt += n_t[t]
        rel[:, t] = tot / cnt
    mean, cov = ref.releases_joint(n_t, mu_t, var_t, tau, z)
    se_mean = np.sqrt(np.diag(cov) / R)
    assert np.all(np.abs(rel.mean(axis=0) - mean) <= 4 * se_mean)  # 4 SE
    emp = np.cov(rel.T)
    se_cov = np.sqrt((np.diag(cov)[:, None] * np.diag(cov)[None, :] + cov**2) / R)
    assert np.all(np.abs(emp - cov) <= 4 * se_cov)  # 4 SE of a sample covariance (Gaussian)


def test_subsampled_moments_match_monte_carlo():
    """Quadrature moments of the sub-sampled LR (Theorem 4.3 check) vs simulating the mechanism."""
    from semi_core.claims.per_datum_leakage.formulas import _exact_sub

    rng = np.random.default_rng(3)
    n, tau, m, rho, R = 400, 0.5, 2.0, 0.5, 4000
    d, k = int(tau * n), int(rho * n)
    a = np.sqrt(m * n / d)
    s1, v1 = a / np.sqrt(k), (k - 1) / k

    def stat(x):
        logr = -0.5 * np.log(v1) - (x - s1) ** 2 / (2 * v1) + x**2 / 2
        return np.log1p(rho * np.expm1(logr)).sum(axis=1)

    x0 = rng.standard_normal((R, d))
    inc = rng.random(R) < rho  # the target is in the sub-sample with probability k/n
    x1 = np.where(inc[:, None], s1 + np.sqrt(v1) * rng.standard_normal((R, d)),
                  rng.standard_normal((R, d)))
    ex = _exact_sub(n, tau, m, rho)
    for key, sample in (("0", stat(x0)), ("1", stat(x1))):
        mean_se = sample.std() / np.sqrt(R)
        assert abs(sample.mean() - ex["mean" + key]) <= 4 * mean_se  # 4 SE
        c = (sample - sample.mean()) ** 2
        assert abs(sample.var() - ex["var" + key]) <= 4 * c.std() / np.sqrt(R)  # 4 SE


def test_core_error_functions_agree_with_registry_reference():
    """Cross-check: the numeric core's closed forms equal the registry's reference forms."""
    errors = pytest.importorskip("semi_core.stats.errors")
    if not hasattr(errors, "alpha_quadratic"):
        pytest.skip("semi_core.stats.errors.alpha_quadratic not available")
    rng = np.random.default_rng(2)
    for _ in range(20):
        n, d, m = int(rng.integers(2, 50)), int(rng.integers(1, 5)), rng.uniform(0.1, 9)
        gamma = m / 2 - d / 2 * np.log((n - 1) / n) - rng.exponential(2)
        assert np.isclose(errors.alpha_quadratic(gamma, n, m, d), ref.alpha_lr(gamma, n, m, d),
                          rtol=1e-9, atol=1e-12)
        assert np.isclose(errors.beta_quadratic(gamma, n, m, d), ref.beta_lr(gamma, n, m, d),
                          rtol=1e-9, atol=1e-12)


def test_reference_errors_are_the_symbolic_lambdified_forms():
    from semi_core.symbolic import get_derivation

    f = get_derivation("em_alpha").lambdify()
    assert ref.alpha_lr(-0.5, 7, 1.5, 2) == pytest.approx(float(f(-0.5, 1.5, 7, 2)), rel=1e-15)
    w, u = np.array([[0.3, -0.2]]), np.array([1.0, 0.5])
    q, ell, mm = float(w[0] @ w[0]), float(w[0] @ u), float(u @ u)
    ours = -np.log(6 / 7) - 7 / 12 * q + 7 / 6 * ell - mm / 12   # Thm 3.1 at n = 7, d = 2
    assert ref.loglr_batch(w, u, 7)[0] == pytest.approx(ours, rel=1e-12)

"""Error formulas vs independent numerics: quadrature, root finding, scipy ncx2, Monte Carlo."""

import numpy as np
import pytest
import sympy as sp
from scipy import integrate
from scipy.optimize import brentq
from scipy.special import gammainc
from scipy.stats import multivariate_normal, ncx2, norm

from semi_core.symbolic import NcChi2CDF, Phi, get_derivation, is_zero
from semi_core.symbolic import _symbols as S
from semi_core.symbolic.errors import complete_square

RTOL = 1e-10


def test_complete_square_symbolic():
    k, gmax = complete_square()
    llr = get_derivation("em_log_lr").expr
    assert is_zero(llr - (gmax - k * (S.q - 2 * S.ell + S.m)))
    assert sp.simplify(k - S.n / (2 * (S.n - 1))) == 0


def test_seed_R2_is_wrong_at_gamma_max():
    """The seed's R^2 is not 0 at its own gamma_max; the derived one is."""
    R2 = get_derivation("em_R2")
    gmax = get_derivation("em_gamma_max").expr
    assert sp.simplify(R2.expr.subs(S.gamma, gmax)) == 0
    assert sp.simplify(R2.seed_form.subs(S.gamma, gmax)) != 0


def _random_spd(rng, d):
    A = rng.normal(size=(d, d))
    return A @ A.T + 0.3 * np.eye(d)


def test_R2_is_the_acceptance_ellipsoid(rng):
    """At random N: R^2(log LR(N)) equals (N-delta)' Sigma^-1 (N-delta) (log LR from scipy)."""
    R2 = get_derivation("em_R2").lambdify()
    for _ in range(100):
        d, n = int(rng.integers(1, 5)), int(rng.integers(2, 40))
        Sigma, delta = _random_spd(rng, d), rng.normal(size=d) * 2
        N = rng.normal(size=d) / np.sqrt(n) * 2
        llr = (multivariate_normal(delta / n, (n - 1) / n**2 * Sigma).logpdf(N)
               - multivariate_normal(np.zeros(d), Sigma / n).logpdf(N))
        L = np.linalg.cholesky(Sigma)
        r = np.linalg.solve(L, N - delta)
        m = float(np.sum(np.linalg.solve(L, delta) ** 2))
        assert R2(llr, m, n, d) == pytest.approx(r @ r, rel=1e-9, abs=1e-11)


def _ball_mass(r, c, d):
    """P(|w|^2 <= r), w ~ N(-c e1, I_d), by 1-D quadrature (independent of ncx2).

    Integrate over the first coordinate; the other d-1 are a central chi^2_{d-1}
    (CDF = regularized lower incomplete gamma).
    """
    if r <= 0:
        return 0.0
    s = np.sqrt(r)

    def f(x):
        dens = np.exp(-0.5 * (x + c) ** 2) / np.sqrt(2 * np.pi)
        return dens if d == 1 else dens * gammainc((d - 1) / 2, max(r - x * x, 0.0) / 2)

    val, _ = integrate.quad(f, -s, s, epsabs=1e-15, epsrel=1e-13, limit=200,
                            points=[-c] if -s < -c < s else None)
    return val


def _error_points(rng, count):
    out = []
    while len(out) < count:
        d, n, m = int(rng.integers(1, 5)), int(rng.integers(2, 60)), rng.uniform(0.2, 9.0)
        gmax = 0.5 * (m - d * np.log1p(-1.0 / n))
        out.append((gmax - rng.uniform(0.05, 6.0), n, m, d))
    return out


def test_alpha_beta_vs_quadrature(rng):
    alpha = get_derivation("em_alpha").lambdify()
    beta = get_derivation("em_beta").lambdify()
    R2 = get_derivation("em_R2").lambdify()
    for gamma, n, m, d in _error_points(rng, 100):
        r = R2(gamma, m, n, d)
        a_ref = _ball_mass(n * r, np.sqrt(n * m), d)
        inside1 = _ball_mass(n**2 * r / (n - 1), np.sqrt((n - 1) * m), d)
        assert alpha(gamma, m, n, d) == pytest.approx(a_ref, rel=RTOL, abs=1e-13)
        assert beta(gamma, m, n, d) == pytest.approx(1.0 - inside1, rel=RTOL, abs=1e-13)


def test_alpha_beta_vs_scipy_ncx2_direct(rng):
    """Same quantities straight from scipy.stats.ncx2 with the Lemma B.4 laws."""
    alpha = get_derivation("em_alpha").lambdify()
    beta = get_derivation("em_beta").lambdify()
    for gamma, n, m, d in _error_points(rng, 100):
        K = 0.5 * (m - d * np.log1p(-1.0 / n)) - gamma          # gamma_max - gamma
        u = 2 * (n - 1) / n * K                                  # radius^2 in Sigma^-1 metric
        assert alpha(gamma, m, n, d) == pytest.approx(ncx2.cdf(n * u, d, n * m), rel=RTOL)
        assert beta(gamma, m, n, d) == pytest.approx(
            ncx2.sf(n**2 * u / (n - 1), d, (n - 1) * m), rel=RTOL)


def test_threshold_inverts_alpha(rng):
    thr = get_derivation("em_threshold").lambdify()
    alpha = get_derivation("em_alpha").lambdify()
    for _ in range(100):
        p, n = rng.uniform(1e-3, 0.9), int(rng.integers(2, 60))
        m, d = rng.uniform(0.2, 9.0), int(rng.integers(1, 5))
        assert alpha(thr(p, m, n, d), m, n, d) == pytest.approx(p, rel=1e-9)


def _numeric_llr_1d(n, mu, sigma, z):
    def f(x):
        return (norm.logpdf(x, ((n - 1) * mu + z) / n, sigma * np.sqrt(n - 1) / n)
                - norm.logpdf(x, mu, sigma / np.sqrt(n)))
    return f


def _points_1d(rng, count, nmax=60):
    out = []
    for _ in range(count):
        n = int(rng.integers(2, nmax))
        mu, sigma = rng.normal(), rng.uniform(0.3, 3.0)
        z = mu + sigma * rng.choice([-1, 1]) * rng.uniform(0.3, 4.0)
        gmax = 0.5 * ((z - mu) ** 2 / sigma**2 - np.log1p(-1.0 / n))
        out.append((gmax - rng.uniform(0.05, 5.0), n, mu, sigma, z))
    return out


def test_roots_and_phi_form_1d(rng):
    lo, hi = (get_derivation(k).lambdify() for k in ("em_root_lo_1d", "em_root_hi_1d"))
    a1, b1 = (get_derivation(k).lambdify() for k in ("em_alpha_1d", "em_beta_1d"))
    for gamma, n, mu, sigma, z in _points_1d(rng, 100):
        f = _numeric_llr_1d(n, mu, sigma, z)
        vertex = mu + (z - mu)
        span = 50 * sigma
        def root_fn(x, f=f, gamma=gamma):
            return f(x) - gamma

        r_lo = brentq(root_fn, vertex - span, vertex, xtol=1e-14, rtol=1e-15)
        r_hi = brentq(root_fn, vertex, vertex + span, xtol=1e-14, rtol=1e-15)
        assert lo(gamma, n, mu, sigma, z) + mu == pytest.approx(r_lo, rel=1e-10, abs=1e-10)
        assert hi(gamma, n, mu, sigma, z) + mu == pytest.approx(r_hi, rel=1e-10, abs=1e-10)
        sd0, sd1 = sigma / np.sqrt(n), sigma * np.sqrt(n - 1) / n
        m1 = ((n - 1) * mu + z) / n
        a_ref = integrate.quad(norm.pdf, r_lo, r_hi, args=(mu, sd0),
                               epsabs=1e-15, epsrel=1e-13)[0]
        b_ref = norm.cdf(r_lo, m1, sd1) + norm.sf(r_hi, m1, sd1)
        assert a1(gamma, n, mu, sigma, z) == pytest.approx(a_ref, rel=1e-9, abs=1e-13)
        assert b1(gamma, n, mu, sigma, z) == pytest.approx(b_ref, rel=1e-9, abs=1e-13)


def test_phi_form_equals_chi2_form_1d(rng):
    """Lemma 3.5/3.6 (Phi) == Cor B.6 (ncx2) at d = 1, numerically and symbolically."""
    a1, b1 = (get_derivation(k).lambdify() for k in ("em_alpha_1d", "em_beta_1d"))
    ad, bd = (get_derivation(k).lambdify() for k in ("em_alpha", "em_beta"))
    for gamma, n, mu, sigma, z in _points_1d(rng, 100):
        m = (z - mu) ** 2 / sigma**2
        assert a1(gamma, n, mu, sigma, z) == pytest.approx(ad(gamma, m, n, 1), rel=RTOL)
        assert b1(gamma, n, mu, sigma, z) == pytest.approx(bd(gamma, m, n, 1), rel=RTOL)
    x, lam = sp.symbols("x lam", positive=True)
    assert is_zero(NcChi2CDF(x, 1, lam).rewrite(Phi)
                   - (Phi(sp.sqrt(x) - sp.sqrt(lam)) - Phi(-sp.sqrt(x) - sp.sqrt(lam))))


def test_final_observation_errors_1d(rng):
    """Lemmas 3.7/3.8 are Lemmas 3.5/3.6 with n -> N_T; roots vs brentq."""
    fa, fb = (get_derivation(k).lambdify() for k in ("fo_alpha_1d", "fo_beta_1d"))
    a1, b1 = (get_derivation(k).lambdify() for k in ("em_alpha_1d", "em_beta_1d"))
    flo = get_derivation("fo_root_lo_1d").lambdify()
    for gamma, NT, mu, sigma, z in _points_1d(rng, 100, nmax=400):
        assert fa(gamma, NT, mu, sigma, z) == pytest.approx(a1(gamma, NT, mu, sigma, z),
                                                            rel=RTOL)
        assert fb(gamma, NT, mu, sigma, z) == pytest.approx(b1(gamma, NT, mu, sigma, z),
                                                            rel=RTOL)
        f = _numeric_llr_1d(NT, mu, sigma, z)
        def root_fn(x, f=f, gamma=gamma):
            return f(x) - gamma

        r_lo = brentq(root_fn, z - 60 * sigma, z, xtol=1e-14, rtol=1e-15)
        assert flo(gamma, NT, mu, sigma, z) + mu == pytest.approx(r_lo, rel=1e-10, abs=1e-10)


def test_alpha_beta_monte_carlo(rng):
    """Three ways: the closed form vs simulation of N under H0/H1 (d = 3, full Sigma)."""
    d, n, R = 3, 10, 40_000
    Sigma = _random_spd(rng, d)
    delta = np.linalg.cholesky(Sigma) @ np.array([1.5, 0.0, 0.0])  # m* = 2.25
    m = 2.25
    gamma = float(get_derivation("em_threshold").lambdify()(0.05, m, n, d))
    L = np.linalg.cholesky(Sigma)

    def llr(N):
        return (multivariate_normal(delta / n, (n - 1) / n**2 * Sigma).logpdf(N)
                - multivariate_normal(np.zeros(d), Sigma / n).logpdf(N))

    N0 = rng.normal(size=(R, d)) @ L.T / np.sqrt(n)
    N1 = delta / n + rng.normal(size=(R, d)) @ L.T * np.sqrt(n - 1) / n
    a_mc, b_mc = np.mean(llr(N0) >= gamma), np.mean(llr(N1) < gamma)
    a_th = float(get_derivation("em_alpha").lambdify()(gamma, m, n, d))
    b_th = float(get_derivation("em_beta").lambdify()(gamma, m, n, d))
    # 4.5 binomial standard errors (see tests/conftest.py MC_SIGMAS).
    assert abs(a_mc - a_th) < 4.5 * np.sqrt(a_th * (1 - a_th) / R)
    assert abs(b_mc - b_th) < 4.5 * np.sqrt(b_th * (1 - b_th) / R)


def test_phi_form_deep_tail_relative_accuracy(rng):
    """alpha down to ~1e-40: the stable lambdify (PhiDiff, log_ndtr) keeps relative accuracy.

    Reference: scipy's ncx2 CDF with one degree of freedom (the chi-squared form, Cor B.6).
    """
    a1 = get_derivation("em_alpha_1d").lambdify()
    naive = get_derivation("em_alpha_1d").lambdify(stable=False)
    worst_naive = 0.0
    for _ in range(100):
        n, m = int(rng.integers(10, 80)), rng.uniform(4.0, 9.0)
        gamma = 0.5 * (m - np.log1p(-1.0 / n)) - rng.uniform(0.01, 1.0)
        ref = ncx2.cdf((n - 1) * (m - np.log1p(-1.0 / n) - 2 * gamma), 1, n * m)
        got = a1(gamma, n, 0.0, 1.0, np.sqrt(m))
        assert got == pytest.approx(ref, rel=1e-10)
        worst_naive = max(worst_naive, abs(naive(gamma, n, 0.0, 1.0, np.sqrt(m)) / ref - 1))
    assert worst_naive > 1e-6  # the naive Phi(a+b) - Phi(a-b) does cancel here

"""The numeric core (stats.errors, mechanisms.empirical_mean) equals the symbolic layer.

>= 100 random points each, rtol 1e-10.
"""

import numpy as np
import pytest

from semi_core.symbolic import get_derivation

errors = pytest.importorskip("semi_core.stats.errors")
em_mod = pytest.importorskip("semi_core.mechanisms.empirical_mean")

RTOL = 1e-10


def _points(rng, count, dmin=1):
    out = []
    for _ in range(count):
        d, n, m = int(rng.integers(dmin, 5)), int(rng.integers(2, 80)), rng.uniform(0.2, 9.0)
        gmax = 0.5 * (m - d * np.log1p(-1.0 / n))
        out.append((gmax - rng.uniform(0.05, 6.0), n, m, d))
    return out


def test_alpha_beta_quadratic_d_dim(rng):
    alpha = get_derivation("em_alpha").lambdify()
    beta = get_derivation("em_beta").lambdify()
    for gamma, n, m, d in _points(rng, 120, dmin=2):
        assert float(errors.alpha_quadratic(gamma, n, m, d)) == pytest.approx(
            alpha(gamma, m, n, d), rel=RTOL, abs=1e-14)
        assert float(errors.beta_quadratic(gamma, n, m, d)) == pytest.approx(
            beta(gamma, m, n, d), rel=RTOL, abs=1e-14)


def test_alpha_beta_quadratic_1d_phi_form(rng):
    a1 = get_derivation("em_alpha_1d").lambdify()
    b1 = get_derivation("em_beta_1d").lambdify()
    for gamma, n, m, _ in _points(rng, 120):
        z = np.sqrt(m)  # mu = 0, sigma = 1
        # No absolute floor: both sides must keep relative accuracy in the tails.
        assert float(errors.alpha_quadratic(gamma, n, m, 1)) == pytest.approx(
            a1(gamma, n, 0.0, 1.0, z), rel=RTOL)
        assert float(errors.beta_quadratic(gamma, n, m, 1)) == pytest.approx(
            b1(gamma, n, 0.0, 1.0, z), rel=RTOL)


def test_gamma_max_and_threshold(rng):
    gm = get_derivation("em_gamma_max").lambdify()
    thr = get_derivation("em_threshold").lambdify()
    for _, n, m, d in _points(rng, 100):
        assert float(errors.gamma_max(n, m, d)) == pytest.approx(gm(m, n, d), rel=RTOL)
        if hasattr(errors, "threshold_quadratic"):
            p = 0.01 + 0.9 * (m / 9.0)
            assert float(errors.threshold_quadratic(p, n, m, d)) == pytest.approx(
                thr(p, m, n, d), rel=1e-9, abs=1e-12)


def _random_spd(rng, d):
    A = rng.normal(size=(d, d))
    return A @ A.T + 0.3 * np.eye(d)


def test_log_lr_steps_per_step_parameters(rng):
    """Varying n_t, mu_t, Sigma_t: every step equals the derived per-step Thm 3.1."""
    f = get_derivation("em_log_lr_step").lambdify()
    checked = 0
    while checked < 120:
        T, d = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        n_t = rng.integers(2, 30, T)
        mu_t = rng.normal(size=(T, d))
        cov_t = np.stack([_random_spd(rng, d) for _ in range(T)])
        z = rng.normal(size=d) * 2
        mech = em_mod.EmpiricalMean(n_t, T, mu=mu_t, cov=cov_t, target=z)
        xb = mu_t + rng.normal(size=(T, d)) / np.sqrt(n_t)[:, None]
        got = mech.batch_log_lr_steps(xb)
        for t in range(T):
            L = np.linalg.cholesky(cov_t[t])
            a = np.linalg.solve(L, xb[t] - mu_t[t])
            b = np.linalg.solve(L, z - mu_t[t])
            assert got[t] == pytest.approx(f(a @ a, a @ b, b @ b, n_t[t], d), rel=RTOL,
                                           abs=1e-11)
            checked += 1


def test_final_log_lr_stationary(rng):
    f = get_derivation("em_final_log_lr").lambdify()
    for _ in range(100):
        T, d = int(rng.integers(1, 5)), int(rng.integers(1, 4))
        n_t = rng.integers(2, 30, T)
        mu, Sigma, z = rng.normal(size=d), _random_spd(rng, d), rng.normal(size=d) * 2
        mech = em_mod.EmpiricalMean(n_t, T, mu=mu, cov=Sigma, target=z)
        NT = int(n_t.sum())
        W = mu + rng.normal(size=d) / np.sqrt(NT)
        L = np.linalg.cholesky(Sigma)
        a, b = np.linalg.solve(L, W - mu), np.linalg.solve(L, z - mu)
        got = float(np.asarray(mech.final_release_log_lr(W)).reshape(-1)[0])
        assert got == pytest.approx(f(a @ a, a @ b, b @ b, NT, d), rel=RTOL, abs=1e-11)


def test_final_log_lr_nonstationary_1d(rng):
    f = get_derivation("em_final_log_lr_nonstationary_1d").lambdify()
    for _ in range(100):
        T = int(rng.integers(2, 6))
        n_t = rng.integers(2, 20, T)
        mu_t, sig_t = rng.normal(size=T), rng.uniform(0.5, 2.0, T)
        z, tau = rng.normal() * 2, int(rng.integers(1, T + 1))
        mech = em_mod.EmpiricalMean(n_t, T, mu=mu_t[:, None], cov=(sig_t**2)[:, None, None],
                                    target=z)
        NT = int(n_t.sum())
        W = float((n_t * mu_t).sum() / NT + rng.normal() * 0.3)
        other = np.arange(T) != tau - 1
        A = float((n_t * mu_t)[other].sum())
        B = float((n_t * sig_t**2)[other].sum())
        t = tau - 1
        ref = f(W, A, B, n_t[t], mu_t[t], sig_t[t], z, NT)
        got = float(np.asarray(mech.final_release_log_lr(np.array([W]), tau=tau)).reshape(-1)[0])
        assert got == pytest.approx(ref, rel=RTOL, abs=1e-11)

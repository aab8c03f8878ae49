"""Generic Gaussian log-LR: symbolic forms vs scipy log-densities at >= 100 random points."""

import numpy as np
import pytest
from scipy.stats import multivariate_normal, norm

from semi_core.symbolic import get_derivation
from semi_core.symbolic.gaussian import gaussian_log_lr

RTOL = 1e-10


def _random_spd(rng, d):
    A = rng.normal(size=(d, d))
    return A @ A.T + 0.3 * np.eye(d)


def test_scalar_vs_scipy(rng):
    f = get_derivation("gaussian_log_lr_scalar").lambdify()
    x, m0, m1 = rng.normal(size=(3, 200))
    v0, v1 = rng.uniform(0.2, 3.0, size=(2, 200))
    ref = norm.logpdf(x, m1, np.sqrt(v1)) - norm.logpdf(x, m0, np.sqrt(v0))
    np.testing.assert_allclose(f(x, m0, v0, m1, v1), ref, rtol=RTOL, atol=1e-12)


def test_2d_explicit_vs_scipy(rng):
    f = get_derivation("gaussian_log_lr_2d").lambdify()
    for _ in range(100):
        P, Q = _random_spd(rng, 2), _random_spd(rng, 2)
        x, a, b = rng.normal(size=(3, 2))
        ref = multivariate_normal(b, Q).logpdf(x) - multivariate_normal(a, P).logpdf(x)
        got = f(*x, *a, P[0, 0], P[0, 1], P[1, 1], *b, Q[0, 0], Q[0, 1], Q[1, 1])
        assert got == pytest.approx(ref, rel=RTOL, abs=1e-12)


def test_proportional_general_d_vs_scipy(rng):
    f = get_derivation("gaussian_log_lr_proportional").lambdify()
    for _ in range(100):
        d = int(rng.integers(1, 6))
        V0, rho = _random_spd(rng, d), rng.uniform(0.3, 2.0)
        x, m0, m1 = rng.normal(size=(3, d))
        L = np.linalg.cholesky(V0)
        wl, wd = np.linalg.solve(L, x - m0), np.linalg.solve(L, m1 - m0)
        got = f(wl @ wl, wl @ wd, wd @ wd, rho, d)
        ref = (multivariate_normal(m1, rho * V0).logpdf(x)
               - multivariate_normal(m0, V0).logpdf(x))
        assert got == pytest.approx(ref, rel=RTOL, abs=1e-12)


def test_numeric_gaussian_log_lr_vs_scipy(rng):
    d = 3
    V0, V1 = _random_spd(rng, d), _random_spd(rng, d)
    m0, m1 = rng.normal(size=(2, d))
    x = rng.normal(size=(120, d))
    ref = multivariate_normal(m1, V1).logpdf(x) - multivariate_normal(m0, V0).logpdf(x)
    np.testing.assert_allclose(gaussian_log_lr(x, m0, V0, m1, V1), ref, rtol=RTOL, atol=1e-12)
    # d = 1 accepts a trailing axis or not.
    np.testing.assert_allclose(gaussian_log_lr(x[:, 0], 0.0, 2.0, 1.0, 1.5),
                               norm.logpdf(x[:, 0], 1.0, np.sqrt(1.5))
                               - norm.logpdf(x[:, 0], 0.0, np.sqrt(2.0)), rtol=RTOL)


def test_numeric_gaussian_log_lr_validation():
    with pytest.raises(ValueError, match="cov0 must be positive definite"):
        gaussian_log_lr([0.0, 0.0], [0, 0], [[1, 2], [2, 1]], [0, 0], np.eye(2))
    with pytest.raises(ValueError, match="mean1 must have shape"):
        gaussian_log_lr([0.0, 0.0], [0, 0], np.eye(2), [0, 0, 0], np.eye(2))
    with pytest.raises(ValueError, match="x must have last dimension 2"):
        gaussian_log_lr(np.zeros((4, 3)), [0, 0], np.eye(2), [0, 0], np.eye(2))

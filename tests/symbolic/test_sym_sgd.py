"""SGD (Thm 4.1) and DP-SGD log-LRs: symbolic vs scipy at >= 100 points, reduction at sigma=0."""

import numpy as np
import pytest
import sympy as sp
from scipy.stats import multivariate_normal

from semi_core.symbolic import _symbols as S
from semi_core.symbolic import get_derivation, is_zero, sgd

RTOL = 1e-10


def _random_spd(rng, d):
    A = rng.normal(size=(d, d))
    return A @ A.T + 0.3 * np.eye(d)


def _reference(N, delta, Sg, n, eta, s=0.0, C=1.0):
    d = delta.size
    noise = s**2 * C**2 / n**2 * np.eye(d)
    V0 = eta**2 * (Sg / n + noise)
    V1 = eta**2 * ((n - 1) * Sg / n**2 + noise)
    return (multivariate_normal(-eta * delta / n, V1).logpdf(N)
            - multivariate_normal(np.zeros(d), V0).logpdf(N))


def _case(rng):
    d, n = int(rng.integers(1, 6)), int(rng.integers(2, 64))
    Sg, delta = _random_spd(rng, d), rng.normal(size=d) * 2
    eta = rng.uniform(0.01, 1.0)
    N = -eta * (rng.normal(size=d) / np.sqrt(n))
    return d, n, Sg, delta, eta, N


def test_thm41_symbolic_vs_scipy(rng):
    f = get_derivation("sgd_log_lr").lambdify()
    for _ in range(120):
        d, n, Sg, delta, eta, N = _case(rng)
        L = np.linalg.cholesky(Sg)
        a, b = np.linalg.solve(L, N), np.linalg.solve(L, delta)
        got = f(a @ a, a @ b, b @ b, n, eta, d)
        assert got == pytest.approx(_reference(N, delta, Sg, n, eta), rel=RTOL, abs=1e-11)


def test_numeric_entry_points_vs_scipy(rng):
    for _ in range(120):
        d, n, Sg, delta, eta, N = _case(rng)
        s, C = rng.uniform(0.1, 3.0), rng.uniform(0.1, 5.0)
        ref0 = _reference(N, delta, Sg, n, eta)
        refs = _reference(N, delta, Sg, n, eta, s, C)
        assert sgd.sgd_log_lr(N, delta, Sg, n, eta) == pytest.approx(ref0, rel=RTOL, abs=1e-11)
        assert sgd.dp_sgd_log_lr(N, delta, Sg, n, eta, 0.0, C) == pytest.approx(
            ref0, rel=RTOL, abs=1e-10)
        assert sgd.dp_sgd_log_lr(N, delta, Sg, n, eta, s, C) == pytest.approx(
            refs, rel=RTOL, abs=1e-11)


def test_dp_reduces_to_thm41_symbolically():
    """Per eigen-direction at sigma_DP = 0 the DP form is Thm 4.1 with d = 1, Sigma_g = lam."""
    coord = get_derivation("dp_sgd_log_lr_coord").expr.subs(sgd.sigma_dp, 0)
    thm = get_derivation("sgd_log_lr").expr.subs({
        sgd.q_g: sgd.w**2 / sgd.lam, sgd.ell_g: sgd.w * sgd.dg / sgd.lam,
        sgd.m_g: sgd.dg**2 / sgd.lam, S.d: 1})
    assert is_zero(coord - thm)
    # With noise, or with a perturbed term, the two differ (numeric witness: the check can fail).
    point = {sgd.w: 0.3, sgd.dg: -1.2, sgd.lam: 0.7, S.n: 9, sgd.eta: 0.4, sgd.sigma_dp: 1.5,
             sgd.clip: 2.0}
    noisy = get_derivation("dp_sgd_log_lr_coord").expr
    assert abs(float((noisy - thm).subs(point))) > 1e-3
    assert abs(float((coord - thm.subs(sgd.eta, sgd.eta * sp.Rational(11, 10))).subs(point))) > 1e-3


def test_batched_and_singular_sigma_with_noise(rng):
    d, n, eta, s, C = 4, 16, 0.2, 1.3, 1.0
    B = rng.normal(size=(d, 2))
    Sg = B @ B.T                                  # rank 2: singular
    delta = rng.normal(size=d)
    N = rng.normal(size=(7, 3, d)) * 0.1
    got = sgd.dp_sgd_log_lr(N, delta, Sg, n, eta, s, C)
    assert got.shape == (7, 3)
    ref = _reference(N.reshape(-1, d), delta, Sg, n, eta, s, C).reshape(7, 3)
    np.testing.assert_allclose(got, ref, rtol=1e-9, atol=1e-10)
    with pytest.raises(ValueError, match="positive definite when sigma_dp = 0"):
        sgd.dp_sgd_log_lr(N, delta, Sg, n, eta, 0.0, C)


def test_coefficients_reconstruct_log_lr(rng):
    lam = rng.uniform(0.1, 3, 5)
    c = sgd.dp_sgd_coefficients(lam, 10, 0.5, 0.8, 2.0)
    w, dg = rng.normal(size=5), rng.normal(size=5)
    f = get_derivation("dp_sgd_log_lr_coord").lambdify()
    np.testing.assert_allclose(c["quad"] * w**2 + c["cross"] * w * dg + c["target"] * dg**2
                               + c["const"], f(w, dg, lam, 10, 0.5, 0.8, 2.0), rtol=RTOL)


def test_validation():
    Sg = np.eye(2)
    with pytest.raises(ValueError, match="n must be in 2"):
        sgd.sgd_log_lr(np.zeros(2), np.zeros(2), Sg, 1, 0.1)
    with pytest.raises(ValueError, match="eta must be finite and > 0"):
        sgd.sgd_log_lr(np.zeros(2), np.zeros(2), Sg, 4, -0.1)
    with pytest.raises(ValueError, match="Sigma_g must have shape"):
        sgd.dp_sgd_log_lr(np.zeros(2), np.zeros(2), np.eye(3), 4, 0.1, 1.0, 1.0)
    with pytest.raises(ValueError, match="N must have last dimension 2"):
        sgd.dp_sgd_log_lr(np.zeros(3), np.zeros(2), Sg, 4, 0.1, 1.0, 1.0)
    with pytest.raises(ValueError, match="sigma_dp must be finite and >= 0"):
        sgd.dp_sgd_log_lr(np.zeros(2), np.zeros(2), Sg, 4, 0.1, -1.0, 1.0)
    with pytest.raises(TypeError, match="sigma_dp must be a real number"):
        sgd.dp_sgd_log_lr(np.zeros(2), np.zeros(2), Sg, 4, 0.1, "1", 1.0)
    with pytest.raises(ValueError, match="positive semi-definite"):
        sgd.dp_sgd_log_lr(np.zeros(2), np.zeros(2), -np.eye(2), 4, 0.1, 1.0, 1.0)

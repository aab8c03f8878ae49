"""SGD's stationary law (Thm 2.2 / Eq. 4) and the IHA derivation (``iha_parameters_vs_loss``):
SymPy vs numeric twins vs the exact Lyapunov solution vs simulated SGD."""

from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

from semi_core.symbolic import get_derivation
from semi_core.symbolic import iha as D

#: Monte Carlo tolerance in standard errors (per-entry false alarm < 1e-5 under normality).
K_SE = 4.5


def _commuting(rng, d, spread=(0.3, 3.0)):
    Q, _ = np.linalg.qr(rng.normal(size=(d, d)))
    h = rng.uniform(*spread, d)
    c = rng.uniform(0.1, 1.0, d)
    return Q @ np.diag(h) @ Q.T, Q @ np.diag(c) @ Q.T, Q, h, c


def test_thm22_closed_form_equals_lyapunov_and_sympy():
    rng = np.random.default_rng(0)
    H, C, Q, h, c = _commuting(rng, 4)
    kw = dict(lr=0.2, momentum=0.7, weight_decay=0.05)
    S1 = D.stationary_covariance(H, C, **kw)
    S2 = D.lyapunov_covariance(H, C, **kw)
    np.testing.assert_allclose(S1, S2, rtol=1e-10, atol=1e-14)
    f = sp.lambdify([D.lam, D.mu, D.al, D.sig, D.Cs], D.thm22_sigma())
    np.testing.assert_allclose(np.diag(Q.T @ S1 @ Q), f(0.2, 0.7, 0.05, h, c), rtol=1e-10)
    # Eq. 4 (leading noise term C = 2 L H / S) equals Thm 2.2 with that C, and the SymPy form
    L, S = 0.4, 16
    E4 = D.eq4_covariance(H, np.zeros(4), loss=L, batch_size=S, **kw)
    np.testing.assert_allclose(E4, D.stationary_covariance(H, 2 * L * H / S, **kw), rtol=1e-10)
    g = sp.lambdify([D.lam, D.mu, D.al, D.S, D.Ls, D.sig], D.eq4_sigma())
    np.testing.assert_allclose(np.diag(Q.T @ E4 @ Q), g(0.2, 0.7, 0.05, S, L, h), rtol=1e-10)


def test_iha_derivations_match_seed_forms():
    for name in ("iha_eq4_sigma", "iha_precision_eq12", "iha_thm32_log_lr"):
        der = get_derivation(name)
        assert der.matches_seed() is True, name
        assert der.source.startswith("iha_parameters_vs_loss ")
    e = D.logdet_term() - (-sp.log(D.eq4_sigma()) / 2 + sp.log(2 * D.lam / (D.S * (1 - D.mu))) / 2)
    f = sp.lambdify(sorted(e.free_symbols, key=str), e)
    rng = np.random.default_rng(1)
    for _ in range(5):
        assert abs(f(*rng.uniform(0.05, 0.5, len(e.free_symbols)))) < 1e-12


def test_thm22_against_simulated_linear_recursion():
    """Eq. 2 on a quadratic loss with additive Gaussian noise of covariance C (commuting with H):
    20 000 independent chains, covariance of w_T after burn-in vs Thm 2.2 (4.5 SE)."""
    rng = np.random.default_rng(2)
    H, C, *_ = _commuting(rng, 2, spread=(0.5, 2.0))
    lr, mom, wd = 0.3, 0.5, 0.1
    R, T = 20_000, 250
    Lc = np.linalg.cholesky(C)
    K = H + wd * np.eye(2)
    w = np.zeros((R, 2))
    h = np.zeros((R, 2))
    for _ in range(T):
        eta = rng.standard_normal((R, 2)) @ Lc.T
        h = mom * h + w @ K + eta
        w = w - lr * h
    emp = np.cov(w.T)
    pred = D.stationary_covariance(H, C, lr=lr, momentum=mom, weight_decay=wd)
    # SE of a Gaussian sample covariance entry: sqrt((S_ii S_jj + S_ij^2) / R)
    se = np.sqrt((np.outer(np.diag(pred), np.diag(pred)) + pred**2) / R)
    assert np.all(np.abs(emp - pred) <= K_SE * se), (emp, pred)


def test_linear_regression_hessian_closed_form():
    torch = pytest.importorskip("torch")
    from torch import nn

    from semi_core.sgd.grads import FunctionalModel
    from semi_core.sgd.hessian import mean_loss_hessian

    rng = np.random.default_rng(3)
    X = rng.normal(size=(50, 3))
    y = X @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.normal(size=50)
    fm = FunctionalModel(nn.Linear(3, 1).double(), loss="mse")
    theta = torch.as_tensor(rng.normal(size=4))
    H = mean_loss_hessian(fm, theta, torch.as_tensor(X), torch.as_tensor(y)).numpy()
    Xt = np.column_stack([X, np.ones(50)])        # flat order: weight (3), bias
    np.testing.assert_allclose(H, Xt.T @ Xt / 50, rtol=1e-12, atol=1e-14)


@pytest.mark.slow
def test_eq4_against_long_minibatch_sgd_on_linear_regression():
    """Heavy-ball SGD with real mini-batch noise on linear regression (n = 400, S = 8, no weight
    decay), 4000 chains x 3000 steps: the stationary covariance vs the exact stationary law of
    the recursion with additive noise of the gradient covariance at the optimum (Lyapunov; equal
    to Thm 2.2 when that covariance commutes with H) (4.5 SE + 3 % for the state-dependent part of the noise,
    which is O(lambda) relative) and vs Eq. 4 (leading term 2 L_* H; + 10 % for the
    finite-sample decoupling error of Thm 2.3)."""
    rng = np.random.default_rng(4)
    n, d, S = 400, 2, 8
    X = rng.normal(size=(n, d)) @ np.array([[1.0, 0.3], [0.0, 0.7]])
    y = X @ np.array([0.5, -1.0]) + 0.8 * rng.normal(size=n)
    H = X.T @ X / n
    w_star = np.linalg.solve(H, X.T @ y / n)
    r = X @ w_star - y
    L_star = 0.5 * np.mean(r**2)
    G = X * r[:, None]
    C = (G.T @ G / n) / S                          # sampling with replacement
    lr, mom = 0.05, 0.5
    R, T = 4000, 3000
    w = np.tile(w_star, (R, 1))
    h = np.zeros((R, d))
    for _ in range(T):
        idx = rng.integers(0, n, (R, S))
        xb, yb = X[idx], y[idx]
        g = np.einsum("rsi,rs->ri", xb, np.einsum("rsi,ri->rs", xb, w) - yb) / S
        h = mom * h + g
        w = w - lr * h
    emp = np.cov((w - w_star).T)
    pred = D.lyapunov_covariance(H, 0.5 * (C + C.T), lr=lr, momentum=mom)
    se = np.sqrt((np.outer(np.diag(emp), np.diag(emp)) + emp**2) / R)
    assert np.all(np.abs(emp - pred) <= K_SE * se + 0.03 * np.abs(pred).max()), (emp, pred)
    e4 = D.eq4_covariance(H, w_star, loss=L_star, batch_size=S, lr=lr, momentum=mom)
    assert np.all(np.abs(emp - e4) <= K_SE * se + 0.10 * np.abs(e4).max()), (emp, e4)


@pytest.mark.parametrize("call, match", [
    (lambda: D.stationary_covariance(np.eye(2), np.array([[1.0, 2.0], [0.0, 1.0]]),
                                     lr=0.1, momentum=0.5), "symmetric"),
    (lambda: D.stationary_covariance(np.diag([1.0, 2.0]), np.array([[1.0, 0.5], [0.5, 1.0]]),
                                     lr=0.1, momentum=0.5), "must commute"),
    (lambda: D.stationary_covariance(np.eye(2), np.eye(2), lr=5.0, momentum=0.0), "(0, 2)"),
    (lambda: D.stationary_covariance(np.eye(2), np.eye(2), lr=0.1, momentum=1.0),
     "momentum must be in"),
    (lambda: D.lyapunov_covariance(np.eye(2), np.eye(2), lr=5.0, momentum=0.0), "unstable"),
    (lambda: D.eq4_covariance(np.eye(2), np.zeros(3), loss=1.0, batch_size=4, lr=0.1,
                              momentum=0.5), "w_star must have shape"),
    (lambda: D.eq4_covariance(np.eye(2), np.zeros(2), loss=-1.0, batch_size=4, lr=0.1,
                              momentum=0.5), "loss must be finite and > 0"),
])
def test_bad_inputs(call, match):
    with pytest.raises(ValueError, match=match):
        call()

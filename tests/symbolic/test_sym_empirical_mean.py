"""Empirical-mean derivations vs independent data-level computations (>= 100 random points).

The references never use the derived conditionals: each release is written as an explicit
linear functional of all data points (weights per point, the target at a fixed slot), and the
Gaussian log-densities come from scipy.
"""

import numpy as np
import pytest
import sympy as sp
from scipy.stats import multivariate_normal, norm

from semi_core.symbolic import _symbols as S
from semi_core.symbolic import get_derivation, is_zero

RTOL = 1e-10


def _release_moments(weights, means, variances, target_slot=None, z=None):
    """Mean/variance of sum_i w_i X_i (+ const) with independent X_i; slot target_slot fixed at z."""
    w = np.asarray(weights, float)
    mu = np.asarray(means, float).copy()
    var = np.asarray(variances, float).copy()
    if target_slot is not None:
        mu[target_slot], var[target_slot] = z, 0.0
    return float(w @ mu), float(w**2 @ var)


def _step_case(rng):
    """Random per-step setting: earlier points N_prev, batch n, release at tau."""
    n = int(rng.integers(2, 40))
    N_prev = int(rng.integers(0, 200))
    mu, sigma, z = rng.normal(), rng.uniform(0.3, 3.0), rng.normal(scale=3.0)
    muhat_prev = rng.normal()
    xbar = mu + sigma / np.sqrt(n) * rng.normal() * 2
    Nt = N_prev + n
    release = (N_prev * muhat_prev + n * xbar) / Nt
    # Conditionally on the past, the release is const + sum over the n new points of X_i / Nt.
    const = N_prev * muhat_prev / Nt
    w = np.full(n, 1.0 / Nt)
    m0, v0 = _release_moments(w, np.full(n, mu), np.full(n, sigma**2))
    m1, v1 = _release_moments(w, np.full(n, mu), np.full(n, sigma**2), target_slot=0, z=z)
    ref = norm.logpdf(release, const + m1, np.sqrt(v1)) - norm.logpdf(release, const + m0,
                                                                       np.sqrt(v0))
    return (xbar, n, mu, sigma, z), ref, (n, N_prev, muhat_prev)


@pytest.mark.parametrize("name", ["em_log_lr_1d", "em_log_lr_step_1d"])
def test_step_log_lr_1d(rng, name):
    f = get_derivation(name).lambdify()
    for _ in range(150):
        args, ref, _ = _step_case(rng)
        assert f(*args) == pytest.approx(ref, rel=RTOL, abs=1e-11)


def test_isolation_symbols():
    """N_{tau-1}, mu_hat_{tau-1} and tau do not appear in the step log-LR."""
    for name in ("em_log_lr_1d", "em_log_lr_step_1d", "em_log_lr", "em_log_lr_step"):
        fs = get_derivation(name).expr.free_symbols
        assert not fs & {S.N_prev, S.muhat_prev, S.tau}


def test_conditionals_vs_data_level(rng):
    names = ["em_cond_mean_h0", "em_cond_var_h0", "em_cond_mean_h1", "em_cond_var_h1"]
    fns = {k: get_derivation(k) for k in names}
    for _ in range(100):
        n, tau = int(rng.integers(2, 30)), int(rng.integers(1, 20))
        mu, sigma, z, mp = rng.normal(), rng.uniform(0.3, 3), rng.normal(scale=3), rng.normal()
        const = (tau - 1) / tau * mp
        w = np.full(n, 1.0 / (n * tau))
        m0, v0 = _release_moments(w, np.full(n, mu), np.full(n, sigma**2))
        m1, v1 = _release_moments(w, np.full(n, mu), np.full(n, sigma**2), 0, z)
        vals = {"muhat_prev": mp, "tau": tau, "n": n, "mu": mu, "sigma": sigma, "z": z}
        for key, ref in zip(names, (const + m0, v0, const + m1, v1)):
            der = fns[key]
            got = der.lambdify()(*[vals[s.name] for s in der.symbols])
            assert got == pytest.approx(ref, rel=RTOL, abs=1e-12)


def _random_spd(rng, d):
    A = rng.normal(size=(d, d))
    return A @ A.T + 0.3 * np.eye(d)


def _invariants(N, delta, Sigma):
    L = np.linalg.cholesky(Sigma)
    a, b = np.linalg.solve(L, N), np.linalg.solve(L, delta)
    return a @ a, a @ b, b @ b


@pytest.mark.parametrize("name", ["em_log_lr", "em_log_lr_step"])
def test_step_log_lr_d_dim(rng, name):
    f = get_derivation(name).lambdify()
    for _ in range(120):
        d = int(rng.integers(1, 5))
        n = int(rng.integers(2, 30))
        N_prev = 0 if name == "em_log_lr" else int(rng.integers(0, 100))
        Sigma, mu, z = _random_spd(rng, d), rng.normal(size=d), rng.normal(size=d) * 2
        prev = rng.normal(size=d)
        xbar = mu + rng.normal(size=d) / np.sqrt(n)
        Nt = N_prev + n
        release = (N_prev * prev + n * xbar) / Nt
        base = N_prev * prev / Nt
        # Data level: n points with weight 1/Nt; covariance scales as sum of squared weights.
        c = n / Nt**2
        ref = (multivariate_normal(base + ((n - 1) * mu + z) / Nt, (n - 1) / Nt**2 * Sigma)
               .logpdf(release)
               - multivariate_normal(base + n * mu / Nt, c * Sigma).logpdf(release))
        q, ell, m = _invariants(xbar - mu, z - mu, Sigma)
        assert f(q, ell, m, n, d) == pytest.approx(ref, rel=RTOL, abs=1e-11)


def test_coefficients_c0_c1_C2(rng):
    """Cor B.3: log LR = c0 + k1 ell + k2 q, at 100 random points."""
    full = get_derivation("em_log_lr").lambdify()
    c0, k1, k2 = (get_derivation(k).lambdify() for k in ("em_c0", "em_c1", "em_C2"))
    q, ell, m = rng.uniform(0, 5, 100), rng.normal(size=100), rng.uniform(0, 5, 100)
    n, d = rng.integers(2, 100, 100).astype(float), rng.integers(1, 6, 100).astype(float)
    np.testing.assert_allclose(c0(m, n, d) + k1(n) * ell + k2(n) * q, full(q, ell, m, n, d),
                               rtol=RTOL, atol=1e-12)


def _final_case(rng, stationary):
    T = int(rng.integers(2, 6))
    n_t = rng.integers(2, 12, T)
    tau = int(rng.integers(1, T + 1))
    if stationary:
        mu_t, sig_t = np.full(T, rng.normal()), np.full(T, rng.uniform(0.5, 2))
    else:
        mu_t, sig_t = rng.normal(size=T), rng.uniform(0.5, 2, T)
    z = rng.normal(scale=3)
    NT = int(n_t.sum())
    pt_mu, pt_var = np.repeat(mu_t, n_t), np.repeat(sig_t**2, n_t)
    slot = int(n_t[: tau - 1].sum())  # first point of batch tau
    w = np.full(NT, 1.0 / NT)
    m0, v0 = _release_moments(w, pt_mu, pt_var)
    m1, v1 = _release_moments(w, pt_mu, pt_var, slot, z)
    W = m0 + np.sqrt(v0) * rng.normal() * 1.5
    ref = norm.logpdf(W, m1, np.sqrt(v1)) - norm.logpdf(W, m0, np.sqrt(v0))
    return dict(T=T, n_t=n_t, tau=tau, mu_t=mu_t, sig_t=sig_t, z=z, NT=NT, W=W, ref=ref)


def test_final_log_lr_1d_stationary(rng):
    f = get_derivation("em_final_log_lr_1d").lambdify()
    for _ in range(120):
        c = _final_case(rng, stationary=True)
        got = f(c["W"], c["NT"], c["mu_t"][0], c["sig_t"][0], c["z"])
        assert got == pytest.approx(c["ref"], rel=RTOL, abs=1e-11)


def test_final_log_lr_1d_nonstationary(rng):
    f = get_derivation("em_final_log_lr_nonstationary_1d").lambdify()
    for _ in range(120):
        c = _final_case(rng, stationary=False)
        other = np.arange(c["T"]) != c["tau"] - 1
        A = float((c["n_t"] * c["mu_t"])[other].sum())
        B = float((c["n_t"] * c["sig_t"] ** 2)[other].sum())
        t = c["tau"] - 1
        got = f(c["W"], A, B, c["n_t"][t], c["mu_t"][t], c["sig_t"][t], c["z"], c["NT"])
        assert got == pytest.approx(c["ref"], rel=RTOL, abs=1e-11)


def test_final_log_lr_d_dim(rng):
    f = get_derivation("em_final_log_lr").lambdify()
    for _ in range(100):
        d = int(rng.integers(1, 5))
        NT = int(rng.integers(4, 300))
        Sigma, mu, z = _random_spd(rng, d), rng.normal(size=d), rng.normal(size=d) * 2
        W = mu + rng.normal(size=d) / np.sqrt(NT)
        ref = (multivariate_normal(mu + (z - mu) / NT, (NT - 1) / NT**2 * Sigma).logpdf(W)
               - multivariate_normal(mu, Sigma / NT).logpdf(W))
        q, ell, m = _invariants(W - mu, z - mu, Sigma)
        assert f(q, ell, m, NT, d) == pytest.approx(ref, rel=RTOL, abs=1e-11)


def test_final_is_step_with_n_to_NT():
    """Seed §3.1: Final Observation = Thm 3.1 with n -> N_T (stationary)."""
    step = get_derivation("em_log_lr").expr
    final = get_derivation("em_final_log_lr").expr
    assert is_zero(step.subs(S.n, S.N_T) - final)
    assert not is_zero(step - final.subs(S.N_T, 2 * S.n))
    assert sp.simplify(final.diff(S.q) + S.N_T / (2 * (S.N_T - 1))) == 0

"""The DP-SGD log-LR across a k-step gap: SymPy laws, the numeric forms, Monte Carlo."""

import numpy as np
import pytest
import sympy as sp

torch = pytest.importorskip("torch")

from semi_core.sgd.batched import batched_dpsgd_log_lr, dense_reference_stats  # noqa: E402
from semi_core.sgd.stride_lr import (  # noqa: E402
    DenseMoments,
    streamed_moments,
    stride_coefficients,
    stride_log_lr_dense,
    stride_log_lr_lowrank,
)

KW = dict(eta=0.3, n=8, sigma_dp=1.2, clip=1.0)


def _data(G=5, m=7, d=4, seed=0):
    g = torch.Generator().manual_seed(seed)
    ref = torch.randn(G, m, d, dtype=torch.float64, generator=g)
    tgt = torch.randn(G, d, dtype=torch.float64, generator=g)
    upd = 0.1 * torch.randn(G, d, dtype=torch.float64, generator=g)
    return ref, tgt, upd


def test_k1_is_the_per_step_statistic():
    """All steps saved (k = 1): both forms equal the per-step DP-SGD log-LR."""
    ref, tgt, upd = _data()
    want = batched_dpsgd_log_lr(upd, ref, tgt, **KW)
    low = stride_log_lr_lowrank(upd, tgt, dense_reference_stats(ref), k=1, **KW)
    dense = stride_log_lr_dense(upd, tgt, streamed_moments(lambda a, b: ref[:, a:b], 7, 3),
                                k=1, **KW)
    torch.testing.assert_close(low, want, rtol=1e-10, atol=1e-10)
    torch.testing.assert_close(dense, want, rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("k", [2, 10, 4_000_000_000])
def test_dense_and_lowrank_forms_agree(k):
    ref, tgt, upd0 = _data(m=6, d=9)
    upd = -KW["eta"] * k * ref.mean(1) + k**0.5 * upd0    # a gap's update: drift + O(sqrt k)
    low = stride_log_lr_lowrank(upd, tgt, dense_reference_stats(ref), k=k, **KW)
    dense = stride_log_lr_dense(upd, tgt, streamed_moments(lambda a, b: ref[:, a:b], 6, 4),
                                k=k, **KW)
    torch.testing.assert_close(low, dense, rtol=1e-8, atol=1e-8)
    # one point shared by every game (P = 1) is the point repeated
    one = dense_reference_stats(ref[:1])
    upd = -KW["eta"] * k * ref[:1].mean(1) + k**0.5 * upd0
    shared = stride_log_lr_lowrank(upd, tgt, one, k=k, **KW)
    rep = stride_log_lr_lowrank(upd, tgt, dense_reference_stats(ref[:1].expand(5, -1, -1)),
                                k=k, **KW)
    torch.testing.assert_close(shared, rep, rtol=1e-10, atol=1e-10)


def test_streamed_moments_equal_the_one_shot_moments():
    ref, _, _ = _data(G=3, m=23, d=5)
    for chunk in (1, 4, 23, 100):
        mo = streamed_moments(lambda a, b: ref[:, a:b], 23, chunk)
        torch.testing.assert_close(mo.mean, ref.mean(1), rtol=1e-12, atol=1e-12)
        want = torch.stack([torch.cov(r.T) for r in ref])
        torch.testing.assert_close(mo.cov, want, rtol=1e-11, atol=1e-12)


def test_coefficients_and_argument_errors():
    assert stride_coefficients(1, 8, 1.0, 2.0) == (1 / 8, 7 / 64, 1 / 16)
    a0, a1, s = stride_coefficients(4_000_000_000, 8, 1.0, 1.0)
    assert a0 == 4e9 / 8 and s == 4e9 / 64
    with pytest.raises(ValueError, match="k"):
        stride_coefficients(0, 8, 1.0, 1.0)
    with pytest.raises(ValueError, match="n"):
        stride_coefficients(1, 1, 1.0, 1.0)


# ------------------------------------------------------------------------- symbolic layer
def test_symbolic_laws_are_the_sum_of_k_steps():
    """The symbolic-k laws equal k separate steps summed, wherever the target is."""
    from semi_core.symbolic import is_zero
    from semi_core.symbolic import sgd_stride as M

    g0, g1 = M.gap_laws()
    for k in (1, 2, 3, 5):
        for step in {1, k}:
            e0, e1 = M.gap_laws_explicit(k, step)
            for a, b in zip(e0 + e1, g0 + g1, strict=True):
                assert is_zero(a - b.subs(M.k_steps, k)), (k, step)


def test_symbolic_k1_is_the_per_step_coordinate_log_lr():
    from semi_core.symbolic import get_derivation, is_zero
    from semi_core.symbolic import sgd_stride as M

    gap = get_derivation("dp_sgd_stride_log_lr_coord").expr
    assert is_zero(gap.subs(M.k_steps, 1) - get_derivation("dp_sgd_log_lr_coord").expr)


@pytest.mark.parametrize("k", [1, 3, 50])
def test_numeric_equals_the_symbolic_sum_over_eigen_directions(k):
    """stride_log_lr_dense == sum_j of the SymPy coordinate log-LR on the eigenbasis of the
    shrunk covariance (1e-9)."""
    from semi_core.symbolic import get_derivation

    f = get_derivation("dp_sgd_stride_log_lr_coord").lambdify()
    ref, tgt, upd = _data(G=4, m=11, d=3, seed=k)
    shrink, ridge = 0.2, 1e-3
    mo = streamed_moments(lambda a, b: ref[:, a:b], 11, 5)
    got = stride_log_lr_dense(upd, tgt, mo, k=k, shrinkage=shrink, ridge=ridge, **KW).numpy()
    eta, n = KW["eta"], KW["n"]
    for i in range(4):
        cov = mo.cov[i].numpy()
        sig = (1 - shrink) * cov + (shrink + ridge) * np.trace(cov) / 3 * np.eye(3)
        lam, U = np.linalg.eigh(sig)
        mu = mo.mean[i].numpy()
        N = upd[i].numpy() + k * eta * mu                   # theta_b - theta_a + k eta mu_g
        w, dg = U.T @ N, U.T @ (tgt[i].numpy() - mu)
        want = sum(f(w[j], dg[j], lam[j], n, eta, KW["sigma_dp"], KW["clip"], k)
                   for j in range(3))
        assert got[i] == pytest.approx(float(want), rel=1e-9, abs=1e-9)


# ------------------------------------------------------------------------- Monte Carlo
def _kl(m_p, V_p, m_q, V_q):
    """KL(N(m_p, V_p) || N(m_q, V_q)) by Cholesky solves."""
    Lq = np.linalg.cholesky(V_q)
    A = np.linalg.solve(Lq, np.linalg.cholesky(V_p))
    z = np.linalg.solve(Lq, m_p - m_q)
    d = len(m_p)
    return 0.5 * ((A * A).sum() + z @ z - d
                  + 2 * (np.log(np.diag(Lq)).sum() - np.log(np.diag(np.linalg.cholesky(V_p))).sum()))


def _simulate(k, member, reps, rng, mu, Sig, gstar, n, eta, sdp, C):
    """k DP-SGD steps with theta-independent Gaussian per-sample gradients (the model where
    the composed LR is exact); the target replaces one gradient at a random step of the gap."""
    d = mu.size
    L = np.linalg.cholesky(Sig)
    g = mu + rng.standard_normal((reps, k, n, d)) @ L.T
    if member:
        at = rng.integers(0, k, reps)
        g[np.arange(reps), at, 0] = gstar
    noise = rng.standard_normal((reps, k, d)) * (sdp * C / n)
    return -eta * (g.mean(2) + noise).sum(1)


@pytest.mark.parametrize("k", [1, 5])
def test_monte_carlo_mean_log_lr_is_the_kl(k):
    """Where the composed law is exact, E_H1[log LR] = KL(P1||P0) and E_H0[log LR] =
    -KL(P0||P1); 20,000 simulated gaps per hypothesis, tolerance 4 Monte Carlo SE. The naive
    alternative (the per-step statistic applied to the gap) misses the H1 mean by > 4 SE."""
    rng = np.random.default_rng(np.random.SeedSequence([2024, k]))
    d, n, eta, sdp, C = 3, 6, 0.5, 0.8, 1.0
    mu = np.array([0.3, -0.2, 0.1])
    A = rng.standard_normal((d, d))
    Sig = A @ A.T / d + 0.2 * np.eye(d)
    gstar = np.array([1.5, 1.0, -1.0])
    mo = DenseMoments(mean=torch.as_tensor(mu)[None], cov=torch.as_tensor(Sig)[None], m=2)
    kw = dict(eta=eta, n=n, sigma_dp=sdp, clip=C, shrinkage=0.0, ridge=0.0)
    a0, a1, s = stride_coefficients(k, n, sdp, C)
    V0, V1 = a0 * Sig + s * np.eye(d), a1 * Sig + s * np.eye(d)
    m1 = -(gstar - mu) / n                     # mean of x0 = Delta/eta + k mu under H1
    kl10, kl01 = _kl(m1, V1, np.zeros(d), V0), _kl(np.zeros(d), V0, m1, V1)
    reps = 20_000
    tg = torch.as_tensor(np.broadcast_to(gstar, (reps, d)).copy())
    for member, want in ((True, kl10), (False, -kl01)):
        upd = torch.as_tensor(_simulate(k, member, reps, rng, mu, Sig, gstar, n, eta, sdp, C))
        llr = stride_log_lr_dense(upd, tg, mo, k=k, **kw).numpy()
        se = llr.std(ddof=1) / np.sqrt(reps)
        assert abs(llr.mean() - want) < 4 * se, (member, llr.mean(), want, se)
        if member and k > 1:
            naive = stride_log_lr_dense(upd / k, tg, mo, k=1, **kw).numpy()
            assert abs(naive.mean() - want) > 4 * naive.std(ddof=1) / np.sqrt(reps)


def test_sympy_symbols_are_positive_k():
    from semi_core.symbolic import sgd_stride as M

    assert M.k_steps.is_positive and M.k_steps.is_integer
    assert isinstance(M.k_steps, sp.Symbol)

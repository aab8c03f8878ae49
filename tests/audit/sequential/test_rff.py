"""Random-Fourier-feature witness: kernel, recursion (Numba vs NumPy twin vs kernel-space
reference), validity of the kernel for Theorem 3.1, and its use in the sequential test."""

from __future__ import annotations

import math

import numpy as np
import pytest

from semi_core.audit.sequential import sampler_source, sequential_grid, sequential_test
from semi_core.audit.sequential.rbf import rbf
from semi_core.audit.sequential.rff import (
    new_rff_state,
    rff_base_features,
    rff_feature_differences,
    rff_feature_dim,
    rff_features,
    rff_frequencies,
    rff_kernel,
    rff_witness_values,
)
from semi_core.audit.sequential.tau import tau_mmd
from semi_core.kernels.rff_witness import rff_block


def _kernel_space_oga(G: np.ndarray, n: int) -> np.ndarray:
    """Reference: the OGA witness in kernel space, f_t = sum_{i<t} a_i (K(X_i,.) - K(Y_i,.)),
    with explicit coefficients and norms from the Gram matrix G of the pooled points
    [X_0..X_{n-1}, Y_0..Y_{n-1}] (no feature map, no running scale): O(n^2), slow, plain."""
    a = np.zeros(n)
    v = np.zeros(n)
    M = 0.0
    for t in range(n):
        x, y = t, n + t
        # f_t(X_t) - f_t(Y_t)
        v[t] = sum(a[i] * (G[i, x] - G[n + i, x] - G[i, y] + G[n + i, y]) for i in range(t))
        k = G[x, x] + G[y, y] - 2 * G[x, y]
        M += k
        if M <= 0:
            continue
        a[t] = 2.0 / math.sqrt(M)
        idx = np.r_[np.arange(t + 1), n + np.arange(t + 1)]
        c = np.r_[a[:t + 1], -a[:t + 1]]
        norm2 = float(c @ G[np.ix_(idx, idx)] @ c)
        if norm2 > 1.0:
            a[:t + 1] /= math.sqrt(norm2)
    return v


@pytest.mark.parametrize("d", [1, 3])
def test_feature_recursion_equals_kernel_space_oga(d):
    """The feature-space recursion (running scale, ||f||^2 bookkeeping) gives the same witness
    values as OGA written directly with the kernel's Gram matrix (to rounding)."""
    rng = np.random.default_rng(d)
    n = 60
    X, Y = rng.normal(0, 1, (n, d)), rng.normal(0.7, 1, (n, d))
    Y[5] = X[5]  # a step with Delta_t = 0
    W = rff_frequencies(d, 6, 1.3, seed=3)
    Z = np.vstack([X, Y])
    v_ref = _kernel_space_oga(rff_kernel(Z, Z, W), n)
    for backend in ("numba", "numpy"):
        buf = new_rff_state(n, 6)
        rff_block(rff_base_features(X, W), rff_base_features(Y, W), 0, buf, backend=backend)
        np.testing.assert_allclose(buf["v"], v_ref, rtol=1e-10, atol=1e-12)


def test_numba_kernel_equals_numpy_twin_in_blocks():
    rng = np.random.default_rng(0)
    n, d = 700, 2
    X, Y = rng.standard_t(2, (n, d)), rng.standard_t(2, (n, d)) + 0.2
    X[:3] = Y[:3]  # M = 0 at the start: the steps are skipped, never 0/0
    W = rff_frequencies(d, 8, 0.8, seed=1)
    ZX, ZY = rff_base_features(X, W), rff_base_features(Y, W)
    out = {}
    for backend in ("numba", "numpy"):
        buf = new_rff_state(n, 8)
        for t0 in range(0, n, 128):  # blocks as the tester feeds them
            rff_block(ZX[t0:t0 + 128], ZY[t0:t0 + 128], t0, buf, backend=backend)
        out[backend] = buf
    np.testing.assert_allclose(out["numba"]["v"], out["numpy"]["v"], rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(out["numba"]["k"], out["numpy"]["k"], rtol=1e-13, atol=1e-15)
    np.testing.assert_allclose(out["numba"]["state"], out["numpy"]["state"], rtol=1e-12)
    assert np.all(out["numba"]["v"][:3] == 0.0)


def test_features_and_kernels():
    rng = np.random.default_rng(1)
    X, Y = rng.normal(size=(40, 3)), rng.normal(size=(40, 3))
    W = rff_frequencies(3, 5, 1.0, seed=0)
    np.testing.assert_allclose(rff_feature_differences(X, Y, W),
                               rff_features(X, W) - rff_features(Y, W), atol=0)
    assert rff_features(X, W).shape == (40, rff_feature_dim(5)) == (40, 55)
    # K_D(x, y) = mean_j cos(w_j (x - y)); phi(x).phi(y) = K_D(x, y)^2
    KD = rff_kernel(X, Y, W, squared=False)
    direct = np.cos((X[:, None, :] - Y[None, :, :]) @ W.T).mean(axis=2)
    np.testing.assert_allclose(KD, direct, atol=1e-14)
    np.testing.assert_allclose(rff_features(X, W) @ rff_features(Y, W).T, KD ** 2, atol=1e-14)
    K2 = rff_kernel(X, Y, W)
    assert K2.min() >= 0 and K2.max() <= 1
    np.testing.assert_allclose(np.linalg.norm(rff_features(X, W), axis=1), 1.0, atol=1e-15)
    np.testing.assert_allclose(np.linalg.norm(rff_base_features(X, W), axis=1), 1.0,
                               atol=1e-15)


def test_rff_kernel_approximates_the_gaussian_kernel():
    """E_w K_D = RBF(h); with D = 128 each entry has SD <= 1/sqrt(2D) = 0.0625: tolerance 0.35
    over 100 entries (> 5 SD); K_D^2 -> RBF(h)^2 = RBF(h / sqrt 2) (within 2x that + the O(1/D)
    bias)."""
    rng = np.random.default_rng(2)
    X, Y = rng.normal(size=(10, 2)), rng.normal(size=(10, 2))
    W = rff_frequencies(2, 128, 1.5, seed=7)
    assert np.abs(rff_kernel(X, Y, W, squared=False) - rbf(X, Y, 1.5)).max() < 0.35
    assert np.abs(rff_kernel(X, Y, W) - rbf(X, Y, 1.5 / np.sqrt(2))).max() < 0.7
    Wbig = rff_frequencies(2, 128, 1.5, seed=8)
    both = 0.5 * (rff_kernel(X, Y, W, squared=False) + rff_kernel(X, Y, Wbig, squared=False))
    assert np.abs(both - rbf(X, Y, 1.5)).max() < 0.25


def test_plain_rff_kernel_breaks_theorem_3_1_the_squared_one_does_not():
    r"""Why K_D^2 and not K_D: the (0, delta)-DP pair P = (1-delta) nu + delta point(0),
    Q = (1-delta) nu + delta point(u) has MMD_K = delta ||K(0,.) - K(u,.)||. For u with
    K_D(0, u) < 0 the plain RFF kernel exceeds tau(0, delta) = sqrt(2) delta (the test would
    reject a DP mechanism); K_D^2 in [0, 1] never does."""
    W = rff_frequencies(1, 4, 1.0, seed=0)
    u = np.linspace(-50, 50, 20001)[:, None]
    kd = rff_kernel(np.zeros((1, 1)), u, W, squared=False)[0]
    u_star = u[np.argmin(kd)][None]
    assert kd.min() < -0.5
    delta = 1e-3
    zero = np.zeros((1, 1))
    for squared, expect_valid in ((False, False), (True, True)):
        K = lambda a, b, sq=squared: rff_kernel(a, b, W, squared=sq)[0, 0]  # noqa: E731
        mmd = delta * math.sqrt(K(zero, zero) + K(u_star, u_star) - 2 * K(zero, u_star))
        assert (mmd <= tau_mmd(0.0, delta) + 1e-15) is expect_valid, (squared, mmd)


def test_rff_witness_is_bounded_and_predictable():
    rng = np.random.default_rng(4)
    X, Y = rng.normal(0, 5, 500), rng.normal(3, 5, 500)
    v, k = rff_witness_values(X, Y, 2.0, features=8, seed=1)
    assert np.all(np.abs(v) <= 2.0 + 1e-12) and np.all((k >= 0) & (k <= 2.0 + 1e-12))
    assert v[0] == 0.0
    v2, _ = rff_witness_values(np.r_[X[:200], -X[200:]], Y, 2.0, features=8, seed=1)
    np.testing.assert_array_equal(v[:200], v2[:200])  # v_t: f_t (pairs < t) at pair t
    assert v[200] != v2[200]


def _shift(mu):
    return sampler_source(lambda n, r: r.normal(0, 1, (n, 1)),
                          lambda n, r: r.normal(mu, 1, (n, 1)))


def test_sequential_test_with_rff_witness():
    r = sequential_test(_shift(1.0), epsilon=0.05, delta=0.0, max_obs=3000, seed=2,
                        witness="rff", features=12)
    assert r.rejected and r.witness_kind == "rff" and r.features == 12
    d = r.to_dict(paths=False)
    assert d["witness"] == "rff" and d["features"] == 12
    # same seed: bit-identical; and the same pairs (same bandwidth) as the exact witness
    r2 = sequential_test(_shift(1.0), epsilon=0.05, delta=0.0, max_obs=3000, seed=2,
                         witness="rff", features=12, backend="numpy")
    assert r2.stopped_at == r.stopped_at
    np.testing.assert_allclose(r2.log_wealth, r.log_wealth, rtol=1e-9)
    ex = sequential_test(_shift(1.0), epsilon=0.05, delta=0.0, max_obs=300, seed=2)
    assert ex.bandwidth == r.bandwidth and ex.witness_kind == "exact"


def test_rff_type1_under_identical_distributions():
    """H0 (same law, MMD = 0 <= tau): 40 runs at alpha = 0.2 reject at most 14 (binomial
    P(X >= 15 | p = 0.2) < 0.01; the rate is in fact far below alpha)."""
    g = [sequential_grid(_shift(0.0), [0.0], delta=0.0, failure_prob=0.2, max_obs=400,
                         seed=s, witness="rff", features=8).results[0].rejected
         for s in range(40)]
    assert sum(g) <= 14


@pytest.mark.parametrize("kw, match", [
    ({"witness": "rbf"}, "witness must be one of"),
    ({"witness": "rff", "features": 0}, "features"),
    ({"witness": "rff", "features": 2.5}, "features"),
    ({"witness": "rff", "features": 129}, "features"),
    ({"witness": "rff", "backend": "python"}, "backend"),
])
def test_bad_witness_arguments(kw, match):
    with pytest.raises((ValueError, TypeError), match=match):
        sequential_test(_shift(0.5), epsilon=0.1, delta=0.0, max_obs=10, seed=0, **kw)


def test_frequencies_are_seeded_apart_from_the_pairs():
    a = rff_frequencies(2, 8, 1.0, seed=np.random.SeedSequence(5))
    b = rff_frequencies(2, 8, 1.0, seed=5)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, rff_frequencies(2, 8, 1.0, seed=6))
    np.testing.assert_allclose(rff_frequencies(2, 8, 2.0, seed=5), a / 2.0)
    with pytest.raises(ValueError, match="bandwidth"):
        rff_frequencies(2, 8, 0.0, seed=5)


def test_seq_audit_cli_witness(capsys):
    import json

    from semi_core.cli import main

    rc = main(["seq-audit", "--epsilon", "0.01", "--max-obs", "400", "--witness", "rff",
               "--features", "8", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["runs"][0]["witness"] == "rff" and out["runs"][0]["features"] == 8
    for argv, flag in ((["--features", "32"], "--features"),
                       (["--witness", "rff", "--features", "0"], "--features"),
                       (["--stream", "semi", "--mechanism", "noisy-mean", "--witness", "rff"],
                        "--witness")):
        rc = main(["seq-audit", "--epsilon", "0.01", "--max-obs", "10", *argv, "--json"])
        err = json.loads(capsys.readouterr().out)
        assert rc == 2 and err["kind"] == "invalid_argument" and flag in err["error"], err

"""Witness kernel (OGA in the RKHS): compiled kernel == NumPy twin == Python loop == brute force.

The brute-force oracle keeps f as explicit coefficients over all points and projects with the
Gram matrix (seed Alg. 4 literally); the kernels use the O(t) recursion with a running ||f||^2.
"""

from __future__ import annotations

import numpy as np
import pytest

from semi_core.kernels.witness import new_state, witness_block, witness_values

BACKENDS = ["numba", "numpy", "python"]


def _oracle(X, Y, h):
    X = X.reshape(len(X), -1)
    Y = Y.reshape(len(Y), -1)
    N = X.shape[0]
    Z = np.vstack([X, Y])

    def K(A, B):
        return np.exp(-np.sum((A[:, None] - B[None]) ** 2, -1) / (2 * h * h))

    G = K(Z, Z)
    c = np.zeros(2 * N)
    M = 0.0
    v = np.zeros(N)
    for t in range(N):
        kz = K(Z, X[t:t + 1])[:, 0] - K(Z, Y[t:t + 1])[:, 0]
        v[t] = c @ kz
        M += 2 - 2 * K(X[t:t + 1], Y[t:t + 1])[0, 0]
        if M <= 0:
            continue
        g = c.copy()
        g[t] += 2 / np.sqrt(M)
        g[N + t] -= 2 / np.sqrt(M)
        nrm = np.sqrt(max(g @ G @ g, 0.0))
        c = g * min(1.0, 1.0 / nrm) if nrm > 0 else g
    return v


@pytest.mark.twin
@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("case", ["d1", "d3", "ties", "equal_pairs", "float32_noncontig", "n1"])
def test_matches_brute_force(backend, case):
    rng = np.random.default_rng(7)
    h = 0.9
    if case == "d1":
        X, Y = rng.normal(size=40), rng.normal(1, 1, 40)
    elif case == "d3":
        X, Y = rng.normal(size=(30, 3)), rng.normal(0.5, 1, (30, 3))
    elif case == "ties":  # discrete outputs: many identical points
        X, Y = rng.integers(0, 2, 40).astype(float), rng.integers(0, 2, 40).astype(float)
    elif case == "equal_pairs":  # X_t = Y_t for the first 10 steps: M_t = 0, no update
        X = rng.integers(0, 3, 30).astype(float)
        Y = X.copy()
        Y[10:] = rng.integers(0, 3, 20)
    elif case == "float32_noncontig":
        A = rng.normal(size=(40, 4)).astype(np.float32)
        X, Y = A[:, ::2], A[:, 1::2] + 1
    else:
        X, Y = rng.normal(size=1), rng.normal(size=1)
    v, k = witness_values(X, Y, h, backend=backend)
    ref = _oracle(np.asarray(X, float), np.asarray(Y, float), h)
    np.testing.assert_allclose(v, ref, rtol=1e-10, atol=1e-12)
    assert np.all(np.abs(v) <= np.sqrt(2) + 1e-12)  # |<f, Delta>| <= ||f|| ||Delta|| <= sqrt 2
    assert np.all((k >= 0) & (k <= 2))
    if case == "equal_pairs":
        assert np.all(v[:11] == 0.0)


@pytest.mark.twin
def test_backends_equal_on_long_heavy_tailed_stream():
    """Heavy tails and huge values (zoo mechanisms at eps = 0.01): all backends agree."""
    rng = np.random.default_rng(3)
    X = rng.laplace(0, 200, 600) / np.maximum(1e-12, 1 + rng.laplace(0, 200, 600))
    Y = rng.laplace(0, 200, 600) / np.maximum(1e-12, 2 + rng.laplace(0, 200, 600))
    out = [witness_values(X, Y, 50.0, backend=b)[0] for b in ("numba", "numpy")]
    np.testing.assert_allclose(out[0], out[1], rtol=1e-11, atol=1e-13)


@pytest.mark.twin
def test_blocks_equal_one_pass_and_rescaling():
    """Advancing in blocks equals one pass; the coefficient renormalisation is exact."""
    rng = np.random.default_rng(4)
    X, Y = rng.normal(size=(300, 2)), rng.normal(2, 0.3, (300, 2))
    v1, _ = witness_values(X, Y, 0.2)
    buf = new_state(300, 2)
    Xc, Yc = np.ascontiguousarray(X), np.ascontiguousarray(Y)
    for s in range(0, 300, 37):
        witness_block(Xc, Yc, s, min(s + 37, 300), 0.2, buf)
    np.testing.assert_allclose(buf["v"], v1, rtol=1e-12, atol=1e-14)
    assert 0 < buf["state"][1] <= 1


def test_empty_and_bad_input():
    v, k = witness_values(np.empty(0), np.empty(0), 1.0)
    assert v.size == 0 and k.size == 0
    with pytest.raises(ValueError, match="bandwidth"):
        witness_values([1.0], [2.0], 0.0)
    with pytest.raises(ValueError, match="same shape"):
        witness_values([1.0, 2.0], [2.0], 1.0)
    with pytest.raises(ValueError, match="backend"):
        witness_values([1.0], [2.0], 1.0, backend="fortran")


def test_force_twin_dispatch(monkeypatch):
    import semi_core.kernels.witness as w

    called = {}
    monkeypatch.setenv("SEMI_CORE_FORCE_TWIN", "1")
    orig = w.witness_block_twin
    monkeypatch.setattr(w, "witness_block_twin",
                        lambda *a: (called.setdefault("twin", True), orig(*a)))
    w.witness_values([0.0, 1.0], [1.0, 0.0], 1.0)
    assert called.get("twin")


def test_oga_step_is_the_projected_gradient_step(rng):
    # g = f + 2 Delta / sqrt(M) in an explicit feature space (R^5), projected on the unit
    # ball: the helper's scalars must reproduce ||f_next||^2 and the weight of Delta.
    from semi_core.kernels._witness_const import oga_step

    for _ in range(200):
        f = rng.normal(0, 0.5, 5)
        f *= min(1.0, 1.0 / np.linalg.norm(f))  # a witness in the unit ball
        delta = rng.normal(0, rng.choice([0.1, 1.0, 5.0]), 5)
        k = float(delta @ delta)
        M = k + float(rng.exponential(3.0))
        step, gam, fn2 = oga_step(M, float(f @ delta), k, float(f @ f))
        g = f + 2.0 * delta / np.sqrt(M)
        f_next = g / max(1.0, np.linalg.norm(g))
        assert step == 2.0 / np.sqrt(M)
        np.testing.assert_allclose(gam * g, f_next, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(fn2, f_next @ f_next, rtol=1e-12)
        assert fn2 <= 1.0 + 1e-12
    # rounding below zero is read as 0, not as a NaN from sqrt of a negative number
    assert 1.0 + 4.0 * (-0.25 - 1e-16) < 0.0
    assert oga_step(1.0, -0.25 - 1e-16, 0.0, 1.0) == (2.0, 1.0, 0.0)

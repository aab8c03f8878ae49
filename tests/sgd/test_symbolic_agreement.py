"""Numeric SeMI-SGD log-LRs (semi_core.sgd) against the symbolic layer (semi_core.symbolic.sgd)
at random points."""

import numpy as np
import pytest

from semi_core.sgd.gradstats import gradient_statistics
from semi_core.sgd.lr import dpsgd_log_lr, semi_sgd_log_lr

sym = pytest.importorskip("semi_core.symbolic.sgd")


def _random_point(rng):
    d = int(rng.integers(2, 8))
    a = rng.normal(size=(d, d))
    return dict(d=d, sigma=a @ a.T / d + 0.2 * np.eye(d), mu=rng.normal(size=d),
                g=rng.normal(size=d) * 2, upd=rng.normal(size=(5, d)) * 0.3,
                n=int(rng.integers(2, 100)), eta=float(rng.uniform(0.01, 2.0)))


def test_theorem_4_1_numeric_equals_symbolic(rng):
    for _ in range(10):
        p = _random_point(rng)
        N = p["upd"] + p["eta"] * p["mu"]
        np.testing.assert_allclose(
            semi_sgd_log_lr(p["upd"], p["eta"], p["mu"], p["sigma"], p["g"], p["n"]),
            sym.sgd_log_lr(N, p["g"] - p["mu"], p["sigma"], p["n"], p["eta"]),
            rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("sigma_dp", [0.0, 0.3, 2.0, 10.0])
def test_dp_sgd_numeric_equals_symbolic(sigma_dp, rng):
    for _ in range(8):
        p = _random_point(rng)
        clip = float(rng.uniform(0.1, 3.0))
        N = p["upd"] + p["eta"] * p["mu"]
        np.testing.assert_allclose(
            dpsgd_log_lr(p["upd"], p["eta"], p["mu"], p["sigma"], p["g"], p["n"],
                         sigma_dp=sigma_dp, clip=clip),
            sym.dp_sgd_log_lr(N, p["g"] - p["mu"], p["sigma"], p["n"], p["eta"], sigma_dp,
                              clip),
            rtol=1e-8, atol=1e-8)


def test_lowrank_woodbury_equals_symbolic_eigen_form(rng):
    """Low-rank-plus-identity covariance (d > m) through Woodbury vs the eigen form."""
    g = rng.normal(size=(8, 20))
    st = gradient_statistics(g, form="lowrank", shrinkage=0.1, ridge=1e-3)
    upd, t = rng.normal(size=(3, 20)) * 0.2, rng.normal(size=20)
    N = upd + 0.4 * st.mean
    np.testing.assert_allclose(
        dpsgd_log_lr(upd, 0.4, st.mean, st.cov, t, 16, sigma_dp=1.2, clip=0.7),
        sym.dp_sgd_log_lr(N, t - st.mean, st.cov.dense(), 16, 0.4, 1.2, 0.7),
        rtol=1e-8, atol=1e-8)

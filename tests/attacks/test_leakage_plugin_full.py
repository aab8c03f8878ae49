"""The full-covariance plug-in solves through the one Woodbury home
(:class:`semi_core.sgd.gradstats.LowRankPlusDiagonal`): same values as the inline Woodbury it
replaced and as a dense Cholesky solve, on fixed inputs."""

import math

import numpy as np
from scipy.linalg import cho_factor, cho_solve

from semi_core.attacks import leakage as A
from semi_core.mechanisms.per_datum import PerDatumMean, ProductLaw


def _previous(mech, rel, X, s, dense=False):
    """The inline Woodbury solve that stood in ``plugin_lr_full`` (or a dense Cholesky)."""
    o = mech._flat(rel)
    n0, d = X.shape
    mu0 = X.mean(axis=0)
    Xc = X - mu0
    a = s * np.sum(Xc**2, axis=0) / (n0 - 1) + mech.q * mech.noise_std**2
    W = Xc.T * math.sqrt((1 - s) / (n0 - 1))
    dl = mech.target - mu0
    if dense:
        c = cho_solve(cho_factor(np.diag(a) + W @ W.T, lower=True), dl)
    else:
        cf = cho_factor(np.eye(n0) + (W / a[:, None]).T @ W, lower=True)
        av = dl[None, :] / a
        c = (av - (W @ cho_solve(cf, W.T @ av.T)).T / a)[0]
    return mech._mix((o - mu0) @ c - dl @ c / (2 * mech.k))


def test_plugin_full_equals_the_previous_woodbury_and_a_dense_solve():
    rng = np.random.default_rng(11)
    d, n = 40, 30
    law = ProductLaw.bernoulli(rng.uniform(0.2, 0.8, d))
    mech = PerDatumMean(law, n, (rng.random(d) < 0.5).astype(float), noise_std=0.05, rho=0.5)
    rel = mech.release(rng.random(200) < 0.5, None, rng)
    for n0 in (12, 80):                      # n0 < d (Woodbury needed) and n0 > d
        X = law.sample(rng, n0)
        s = d / (n0 + d)
        got = A.plugin_lr_full(mech, rel, X)
        # reassociated products: agreement to rounding (1e-10 relative, values of order 10)
        np.testing.assert_allclose(got, _previous(mech, rel, X, s), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(got, _previous(mech, rel, X, s, dense=True), rtol=1e-9,
                                   atol=1e-9)

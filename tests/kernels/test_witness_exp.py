"""The vectorisable exp(-x) of the compiled witness kernel against NumPy's exp."""

from __future__ import annotations

import numpy as np

from semi_core.kernels.witness import _XCUT, _vexp_neg


def test_vexp_neg_matches_numpy_exp_to_a_few_ulp():
    rng = np.random.default_rng(0)
    x = np.r_[0.0, 1e-300, 1e-12, np.log(2) / 2, np.log(2) * np.arange(1, 40), 699.999,
              _XCUT, 700.5, 1e4, 1e308, rng.exponential(3.0, 20000), rng.uniform(0, 700, 20000)]
    q = x.copy()
    _vexp_neg(q, x.size, 1.0)
    ref = np.where(x < _XCUT, np.exp(-np.minimum(x, _XCUT)), 0.0)
    assert np.all(q[x >= _XCUT] == 0.0)
    ok = x < _XCUT
    rel = np.abs(q[ok] - ref[ok]) / ref[ok]
    assert rel.max() <= 4 * np.finfo(float).eps, rel.max()
    # the scale argument multiplies first (the kernel passes 1 / (2 h^2))
    q2 = x[:50].copy()
    _vexp_neg(q2, 50, 0.25)
    np.testing.assert_allclose(q2, np.exp(-0.25 * x[:50]), rtol=4e-16, atol=0)

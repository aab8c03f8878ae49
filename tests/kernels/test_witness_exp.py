"""The vectorisable exp(-x) of the compiled witness kernel against NumPy's exp."""

from __future__ import annotations

import numpy as np
import pytest

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


def test_vexp_neg_within_two_ulp_of_an_extended_precision_exp():
    """The documented bound (2 ulp) against an exp carrying 11 more bits than float64."""
    if np.finfo(np.longdouble).nmant < 60:
        pytest.skip("no extended-precision long double on this platform")
    rng = np.random.default_rng(1)
    x = np.r_[np.linspace(0.0, 3.0, 100_001), rng.exponential(3.0, 100_000),
              rng.uniform(0.0, 699.0, 100_000)]
    q = x.copy()
    _vexp_neg(q, x.size, 1.0)
    ref = np.exp(-x.astype(np.longdouble))
    ulps = np.abs(q.astype(np.longdouble) - ref) / np.spacing(ref.astype(np.float64))
    assert float(ulps.max()) <= 2.0, float(ulps.max())

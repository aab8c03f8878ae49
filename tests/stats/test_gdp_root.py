"""``gdp_epsilon``'s own root finder against SciPy's ``brentq`` (the solver it replaced)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import brentq

from semi_core.stats.gdp import decreasing_root, gdp_epsilon, gdp_log_delta

_RTOL = 4 * np.finfo(float).eps


@pytest.mark.parametrize("mu", [1e-3, 0.05, 0.5, 1.0, 2.0, 8.0, 60.0, 1e3, 1e6])
@pytest.mark.parametrize("delta", [1e-300, 1e-60, 1e-10, 1e-5, 1e-2, 0.2])
def test_gdp_epsilon_matches_brentq_and_is_from_below(mu, delta):
    """Both roots lie within the stated tolerance of the true root r, so they differ by at most
    twice it; ours is the lower end of a bracket: delta(eps) > delta there (eps < r)."""
    eps = gdp_epsilon(mu, delta)
    if eps == 0.0:  # delta >= delta(0): no root to compare
        assert delta >= math.erf(mu / 2 / math.sqrt(2))
        return
    log_d = math.log(delta)

    def f(e):
        return float(gdp_log_delta(e, mu)) - log_d

    hi = max(1.0, mu * mu)
    while f(hi) > 0:
        hi *= 2.0
    ref = brentq(f, 0.0, hi, xtol=1e-14, rtol=_RTOL, maxiter=500)
    tol = 1e-14 + _RTOL * max(eps, ref)
    assert abs(eps - ref) <= 2 * tol, (eps, ref)
    assert f(eps) > 0  # strictly below the root: never an over-statement of epsilon


def test_decreasing_root_on_a_known_root():
    """A root known in closed form, at both ends of the float range and in between."""
    for r in (1e-300, 1e-8, 0.3, 1.0, 7.25, 1e6):
        got = decreasing_root(lambda x, r=r: r - np.asarray(x), 0.0, 2 * r + 1.0,
                              xtol=1e-300, rtol=_RTOL)
        assert got < r  # from below
        assert r - got <= 1e-300 + _RTOL * 2 * r  # within the tolerance (hi <= 2 r)


def test_decreasing_root_refuses_a_bad_bracket():
    with pytest.raises(ValueError, match="lo < hi"):
        decreasing_root(lambda x: -np.asarray(x), 1.0, 1.0)
    with pytest.raises(ValueError, match="change sign"):
        decreasing_root(lambda x: 1.0 + np.asarray(x), 0.0, 1.0)
    with pytest.raises(ArithmeticError, match="NaN"):
        decreasing_root(lambda x: np.where(np.asarray(x) > 0.5, np.nan, 1.0)
                        if np.ndim(x) else (1.0 if x < 0.5 else -1.0), 0.0, 1.0)


@pytest.mark.parametrize("mu", [1e3, 1e5, 432119006.1152043, 1e9])
def test_profile_is_finite_for_huge_mu(mu):
    """Near eps = mu^2/2 the direct b = eps + log Phi(-x2) cancels two numbers of size mu^2/2
    (an audit's GDP fit on separated scores gave mu = 4.3e8 and a NaN); the erfcx form does not.
    Checked against mpmath at 50 digits where delta is representable."""
    import mpmath

    from semi_core.stats.gdp import gdp_epsilon, gdp_log_delta

    eps = np.concatenate([[0.0], np.geomspace(1e-6, 2 * mu * mu, 300)])
    out = gdp_log_delta(eps, mu)
    assert not np.isnan(out).any()
    assert np.all(np.diff(out) <= 1e-9 * np.abs(out[1:]) + 1e-300)  # delta(eps) decreases
    mpmath.mp.dps = 50
    for e in (0.25 * mu * mu, 0.5 * mu * mu - mu, 0.5 * mu * mu):
        m = mpmath.mpf(mu)
        x1, x2 = mpmath.mpf(e) / m - m / 2, mpmath.mpf(e) / m + m / 2
        ref = mpmath.log(mpmath.ncdf(-x1) - mpmath.exp(e) * mpmath.ncdf(-x2))
        # eps ~ mu^2 carries its own rounding (ulp ~ 1e-16 mu^2), which moves x1 = eps/mu - mu/2
        # by ~1e-16 mu: the value is determined only to that (times a slope of order 1 here)
        tol = 1e-9 + 1e-14 * mu
        assert float(gdp_log_delta(e, mu)) == pytest.approx(float(ref), rel=tol, abs=tol)
    assert np.isfinite(gdp_epsilon(mu, 1e-5))

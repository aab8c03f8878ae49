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

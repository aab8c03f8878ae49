"""The per-datum GDP profile is the project's one GDP profile, accurate against mpmath."""

import numpy as np
import pytest

mp = pytest.importorskip("mpmath")

from semi_core.stats import gdp  # noqa: E402
from semi_core.stats import leakage as L  # noqa: E402


def _ref(e, m):
    with mp.workdps(80):
        mu, e = mp.sqrt(m), mp.mpf(e)
        return mp.ncdf(-e / mu + mu / 2) - mp.e**e * mp.ncdf(-e / mu - mu / 2)


@pytest.mark.parametrize("m", [1e-6, 0.01, 1.0, 4.0, 25.0, 100.0])
def test_gdp_delta_matches_80_digit_reference(m):
    eps = np.array([0.0, 0.1, 1.0, 3.0, 10.0, 30.0])
    got = L.gdp_delta(eps, m)
    for e, g in zip(eps, got, strict=True):
        r = float(_ref(e, m))
        if r > 1e-300:  # the earlier copy had relative error 1e-8 in the tail
            assert abs(g - r) <= 1e-11 * r, (e, m, g, r)


def test_broadcast_equals_the_gdp_module():
    eps, m = np.array([[0.5], [2.0]]), np.array([0.25, 1.0, 9.0])
    got = L.gdp_delta(eps, m)
    assert got.shape == (2, 3)
    for i in range(2):
        for j in range(3):
            assert got[i, j] == gdp.gdp_delta(eps[i, 0], np.sqrt(m[j]))

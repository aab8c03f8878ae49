"""The chi-square laws of semi_core.stats.errors are scipy.stats' chi2 / ncx2, bit for bit.

errors.py evaluates them through scipy.special (the functions scipy.stats calls, with its
conventions off the support) so that ``semi-core power`` does not import scipy.stats; this test
pins every value to the public distributions, edges (0, negative, tiny, inf, NaN, q in {0, 1})
and raised errors included, so a SciPy release that changes either side fails here.
"""

import numpy as np
import pytest
from scipy.stats import chi2, ncx2

from semi_core.stats import errors as E

X = np.concatenate([[-1.0, 0.0, 1e-300, 1e-10, np.inf, np.nan], np.logspace(-6, 4, 400)])
Q = np.concatenate([[0.0, 1e-300, 1e-12, 0.5, 1 - 1e-12, 1.0], np.linspace(1e-6, 1 - 1e-6, 300)])


def _call(f, *args):
    try:
        return f(*args)
    except (OverflowError, ValueError, FloatingPointError) as exc:
        return type(exc).__name__


@pytest.mark.parametrize("df", [1, 2, 5, 10, 50])
@pytest.mark.parametrize("nc", [1e-3, 0.5, 3.0, 40.0, 900.0])
def test_noncentral_equals_scipy_stats(df, nc):
    for mine, ref, arg in ((E._nc_cdf, ncx2.cdf, X), (E._nc_sf, ncx2.sf, X),
                           (E._nc_ppf, ncx2.ppf, Q)):
        got, want = _call(mine, arg, df, nc), _call(ref, arg, df, nc)
        if isinstance(want, str) or isinstance(got, str):
            assert got == want
        else:
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("df", [1, 2, 5, 10, 50])
def test_central_equals_scipy_stats(df):
    np.testing.assert_array_equal(E._chi2_cdf(X, df), chi2.cdf(X, df))
    np.testing.assert_array_equal(E._chi2_sf(X, df), chi2.sf(X, df))
    np.testing.assert_array_equal(E._chi2_ppf(Q, df), chi2.ppf(Q, df))

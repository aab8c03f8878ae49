"""SeMI-Unif / SeMI-max / SeMI* statistics (seed Thm 3.10, Cor D.1, Prop D.2)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from semi_core.stats.statistics import semi_max, semi_star, semi_unif

finite = st.floats(min_value=-700, max_value=700, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(arrays(np.float64, st.tuples(st.integers(1, 5), st.integers(1, 12)), elements=finite))
def test_proposition_d2_bounds(lr):
    """max_t log LR_t - log T <= log LR_Unif <= max_t log LR_t."""
    T = lr.shape[-1]
    u, mx = semi_unif(lr), semi_max(lr)
    assert np.all(u <= mx + 1e-9)
    assert np.all(u >= mx - np.log(T) - 1e-9)


def test_unif_is_log_of_mean_lr(rng):
    lr = rng.normal(size=(50, 6))
    np.testing.assert_allclose(semi_unif(lr), np.log(np.exp(lr).mean(-1)), rtol=1e-12)
    p = rng.dirichlet(np.ones(6))
    np.testing.assert_allclose(semi_unif(lr, p), np.log(np.exp(lr) @ p), rtol=1e-12)


def test_unif_stable_for_huge_values():
    lr = np.array([[1000.0, 1000.0, -1000.0]])
    assert semi_unif(lr)[0] == pytest.approx(1000.0 + np.log(2 / 3))


def test_semi_star_picks_tau(rng):
    lr = rng.normal(size=(4, 5))
    tau = np.array([1, 5, 3, 2])
    np.testing.assert_array_equal(semi_star(lr, tau), lr[np.arange(4), tau - 1])
    with pytest.raises(ValueError, match="tau must be integers in 1..5"):
        semi_star(lr, 6)
    with pytest.raises(ValueError, match="NaN"):
        semi_max([[np.nan]])
    with pytest.raises(ValueError, match="sum to 1"):
        semi_unif(lr, [0.5, 0.5, 0.5, 0.0, 0.0])

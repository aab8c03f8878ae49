"""Tail-adaptive bands (method ``band``): grid, calibration three ways, candidate thresholds.

Calibration is checked three ways: the exact count-process recursion
(``band_crossing_probability``), the Rényi-representation simulation used in production
(``simulate_min_crossing_level``) and brute force (sorted uniforms). Tolerances are 4.5
binomial standard errors of the Monte Carlo estimate.
"""

import math

import numpy as np
import pytest

from semi_core.audit import epsilon_lower_bound
from semi_core.audit.bands import (
    BAND_DENSE,
    band_at_counts,
    band_candidates,
    band_crossing_probability,
    band_values,
    calibrate_band,
    count_grid,
    simulate_min_crossing_level,
)
from semi_core.audit.bounds import _log_ratio_bound, clopper_pearson_upper
from semi_core.stats.ranking import pooled_threshold_counts as _threshold_counts


def _se(p, n):
    return math.sqrt(max(p * (1 - p), 1e-4) / n)


@pytest.mark.parametrize("n", [1, 2, 3, 10, 129, 130, 1000, 10**6])
def test_count_grid_is_symmetric_and_dense_in_the_tails(n):
    g = count_grid(n)
    assert g[0] == 0 and g[-1] == n - 1
    assert np.all(np.diff(g) > 0)
    np.testing.assert_array_equal(np.sort(n - 1 - g), g)  # mirrored: both tails
    assert set(range(min(n, BAND_DENSE + 1))) <= set(g.tolist())
    if n > 1000:
        # geometric beyond the dense part: a few hundred points, not n
        assert g.size <= 2 * (BAND_DENSE + 2 + math.log(n / BAND_DENSE) / math.log(1.03))


def test_count_grid_bad_inputs():
    with pytest.raises(ValueError, match="n"):
        count_grid(0)
    with pytest.raises(ValueError, match="ratio"):
        count_grid(10, ratio=1.0)
    with pytest.raises(ValueError, match="dense"):
        count_grid(10, dense=-1)


def test_band_values_are_clopper_pearson_bounds():
    g = np.array([0, 3, 7])
    np.testing.assert_allclose(band_values(20, g, 0.01), clopper_pearson_upper(g, 20, 0.01),
                               rtol=1e-13)
    two = band_values(20, g, np.array([0.01, 0.1]))
    assert two.shape == (3, 2) and np.all(two[:, 0] > two[:, 1])


def test_exact_recursion_against_closed_forms():
    # one point g = 0: P(min U > b) = (1 - b)^n; one point g = n - 1: P(max U > b) = 1 - b^n
    n, b = 7, 0.2
    assert band_crossing_probability(n, [0], [b]) == pytest.approx((1 - b) ** n, rel=1e-12)
    assert band_crossing_probability(n, [n - 1], [b]) == pytest.approx(1 - b ** n, rel=1e-12)
    # pointwise exactness: one grid point at the CP level x crosses with probability x
    x = 0.03
    bv = band_values(n, np.array([3]), x)
    assert band_crossing_probability(n, [3], bv) == pytest.approx(x, rel=1e-10)


@pytest.mark.parametrize("n", [5, 20])
def test_three_ways_crossing_probability(n):
    rng = np.random.default_rng(3)
    grid = count_grid(n)
    levels = np.array([0.002, 0.01, 0.05])
    bands = band_values(n, grid, levels)
    reps = 40_000
    first = simulate_min_crossing_level(n, grid, bands, reps, rng)
    u = np.sort(rng.random((reps, n)), axis=1)[:, grid]
    for ell in range(levels.size):
        exact = band_crossing_probability(n, grid, bands[:, ell])
        sim = float(np.mean(first <= ell))
        brute = float(np.mean((u > bands[None, :, ell]).any(axis=1)))
        assert abs(sim - exact) < 4.5 * _se(exact, reps), (ell, sim, exact)
        assert abs(brute - exact) < 4.5 * _se(exact, reps), (ell, brute, exact)
        assert exact >= levels[ell] - 1e-12  # a union is at least its largest part


@pytest.mark.parametrize("n", [1, 2, 5, 30, 80])
def test_calibrated_band_is_valid_exactly(n):
    # small n: the exact crossing probability of the chosen band is <= q
    q = 0.025
    cal = calibrate_band(n, q)
    exact = band_crossing_probability(n, cal.grid, cal.values)
    assert exact <= q + 1e-12
    # and not wastefully small (the calibration spends most of q): >= q/2
    assert exact >= 0.5 * q
    if cal.source == "simulation":
        assert abs(cal.crossing_estimate - exact) < 4.5 * _se(exact, cal.reps)


def test_calibration_is_cached_and_reproducible():
    a = calibrate_band(500, 0.05)
    assert calibrate_band(500, 0.05) is a
    from semi_core.audit.bands import _calibrate_cached

    b = _calibrate_cached.__wrapped__(500, 0.05, a.reps)
    assert b.local_level == a.local_level
    np.testing.assert_array_equal(a.values, b.values)
    # tail-adaptive: at the ends the local level is far above the Bonferroni level q/G
    assert a.local_level > 3 * 0.05 / a.grid.size


def test_calibration_bad_inputs():
    with pytest.raises(ValueError, match="failure_prob"):
        calibrate_band(10, 0.0)
    with pytest.raises(ValueError, match="reps"):
        calibrate_band(10, 0.05, reps=10)


def test_band_at_counts_rounds_up_to_the_grid():
    cal = calibrate_band(1000, 0.025)
    g = cal.grid
    j = np.nonzero(np.diff(g) > 1)[0][0]  # first gap in the grid
    k = g[j] + 1  # not on the grid
    assert band_at_counts(cal, k) == cal.values[j + 1]
    assert band_at_counts(cal, g[j]) == cal.values[j]
    assert band_at_counts(cal, 1000) == 1.0


@pytest.mark.parametrize("sides", ["two", "one"])
@pytest.mark.parametrize("ties", [False, True])
def test_candidates_attain_the_max_over_all_thresholds(sides, ties):
    rng = np.random.default_rng(7)
    m, n = rng.normal(1.5, 1.0, (3, 300)), rng.normal(0.0, 1.0, (3, 250))
    if ties:
        m, n = np.round(m * 2) / 2, np.round(n * 2) / 2
    c = band_candidates(m, n, 0.05)
    crit, _ = _log_ratio_bound(c["alpha_up"], c["beta_up"], 1e-5, sides)
    best = crit.max(axis=1)
    # brute force: every pooled value as the threshold, the band at its counts
    vals, mem_le, non_le, valid = _threshold_counts(m, n)
    a = band_at_counts(c["cal0"], 250 - non_le)
    b = band_at_counts(c["cal1"], mem_le)
    brute, _ = _log_ratio_bound(a, b, 1e-5, sides)
    brute = np.where(valid, brute, -np.inf).max(axis=1)
    np.testing.assert_allclose(best, brute, rtol=1e-12)
    single = [epsilon_lower_bound(m[i], n[i], delta=1e-5, method="band",
                                  sides=sides).epsilon_lower_bound for i in range(3)]
    np.testing.assert_allclose(np.maximum(best, 0), single, rtol=1e-12)


def test_band_result_fields_and_rank_invariance():
    rng = np.random.default_rng(1)
    m, n = rng.normal(1.0, 1.0, 2000), rng.normal(0.0, 1.0, 2000)
    r = epsilon_lower_bound(m, n, delta=1e-5, method="band")
    assert r.method == "band" and r.epsilon_lower_bound > 0
    assert 0 < r.local_level_nonmember < 0.025 and r.local_level_member == r.local_level_nonmember
    # the reported bounds hold at the reported threshold and reproduce the bound
    assert r.fpr == np.mean(n > r.threshold) and r.tpr == np.mean(m > r.threshold)
    assert r.fpr_upper >= r.fpr and r.tpr_lower <= r.tpr
    assert r.epsilon_lower_bound == pytest.approx(
        math.log((1 - 1e-5 - r.fnr_upper) / r.fpr_upper), rel=1e-12)
    # monotone transforms of the scores change nothing but the threshold
    r2 = epsilon_lower_bound(np.exp(m), np.exp(n), delta=1e-5, method="band")
    assert r2.epsilon_lower_bound == r.epsilon_lower_bound
    # tighter than DKW on the same scores (tails)
    assert r.epsilon_lower_bound > epsilon_lower_bound(m, n, delta=1e-5,
                                                       method="dkw").epsilon_lower_bound


def test_band_degenerate_inputs():
    r = epsilon_lower_bound([1.0], [0.0], delta=0.0, method="band")
    assert r.epsilon_lower_bound >= 0.0
    same = epsilon_lower_bound(np.ones(50), np.ones(50), delta=1e-5, method="band")
    assert same.epsilon_lower_bound == 0.0
    inf = epsilon_lower_bound(np.full(100, np.inf), np.full(100, -np.inf), delta=1e-5,
                              method="band")
    assert math.isfinite(inf.epsilon_lower_bound) and inf.epsilon_lower_bound > 0

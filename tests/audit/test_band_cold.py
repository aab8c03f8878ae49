"""Off-table band sizes: the Poisson-embedded band (no simulation at audit time) is valid.

The band's failure probability is checked against the exact law of the uniform order
statistics: exactly (``band_crossing_probability``) at small N, by exact simulation of the grid
order statistics (Rényi) at large N, where the tolerance is 4 binomial standard errors of the
simulated crossing rate. The checker is shown to catch a band that is not conservative.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from semi_core.audit import bands
from semi_core.audit._band_poisson import POISSON_TABLE
from semi_core.audit.bands import (
    BAND_REPS,
    POISSON_K,
    band_crossing_probability,
    calibrate_band,
    count_grid,
    poisson_band,
    poisson_band_values,
    simulate_min_crossing_level,
    simulate_poisson_calibration,
)

REPS = 20_000


def _levels(k, q):
    return POISSON_TABLE[(k, int(round(q * 1e12)), BAND_REPS)]


def _simulated_crossings(n, grid, values, seed):
    """Crossings of the band in REPS exact draws of (V_(g+1))_g (Rényi, any N)."""
    first = simulate_min_crossing_level(n, grid, np.asarray(values)[:, None], REPS,
                                        np.random.default_rng(seed))
    return int(np.count_nonzero(first == 0))


def _assert_within(crossings, q):
    # valid band: P(crossing) <= q; allowed: q R + 4 binomial standard errors
    assert crossings <= q * REPS + 4 * math.sqrt(q * (1 - q) * REPS), (crossings, q * REPS)


@pytest.mark.parametrize("n", [2_000, 12_345, 1_234_567, 9_999_999])
@pytest.mark.parametrize("q", [0.005, 0.025, 0.05])
def test_off_table_band_is_valid_by_exact_simulation(n, q):
    cal = poisson_band(n, q)
    assert cal is not None and cal.source == "poisson-embedding"
    assert np.array_equal(cal.grid, count_grid(n))
    assert np.all(np.diff(cal.values) >= 0) and np.all(cal.values <= 1)
    _assert_within(_simulated_crossings(n, cal.grid, cal.values, [35, n, int(q * 1e4)]), q)


@pytest.mark.parametrize("n", [3, 30, 101])
def test_embedding_is_valid_exactly_at_small_n(n):
    """The construction holds at any N (the size threshold is a tightness choice): the exact
    crossing probability at small N, where the total's allowance is widest."""
    for q in (0.025, 0.05):
        grid = count_grid(n)
        vals = poisson_band_values(n, q, POISSON_K[0], *_levels(POISSON_K[0], q), grid=grid)
        assert band_crossing_probability(n, grid, vals) <= q


def test_the_checker_catches_a_band_that_is_not_conservative():
    """Local levels too large (100 times the calibrated ones at N = 101, where the total's
    allowance is wide; 20 times at 12,345): the same checks fail, exactly and simulated."""
    q = 0.025
    xu, xl = _levels(POISSON_K[0], q)
    grid = count_grid(101)
    bad = poisson_band_values(101, q, POISSON_K[0], 100 * xu, 100 * xl, grid=grid)
    assert band_crossing_probability(101, grid, bad) > q
    n = 12_345
    grid = count_grid(n)
    bad = poisson_band_values(n, q, POISSON_K[1], 20 * xu, 20 * xl, grid=grid)
    with pytest.raises(AssertionError):
        _assert_within(_simulated_crossings(n, grid, bad, 7), q)


def test_shipped_entry_equals_a_fresh_calibration():
    k, q = POISSON_K[0], 0.025
    assert simulate_poisson_calibration(k, q, BAND_REPS) == _levels(k, q)


def test_table_covers_the_ladder():
    for k in POISSON_K:
        for q in (0.005, 0.025, 0.05):
            xu, xl = _levels(k, q)
            assert 0 < xu <= 0.45 * q and 0 < xl <= 0.45 * q


def test_off_table_calibration_does_not_simulate(monkeypatch):
    """An off-table size from 2,000 on reads the shipped Gamma-process levels (a first call
    costs what a second does); below it (or on the table) the band is what it was."""
    def boom(*a, **k):
        raise AssertionError("simulated")

    bands._calibrate_cached.cache_clear()
    monkeypatch.setattr(bands, "simulate_calibration", boom)
    try:
        for n in (1_234_567, 12_345, 2_345, bands.EMBEDDED_FROM_N + 1):  # every covered size
            assert calibrate_band(n, 0.025).source == "poisson-embedding", n
        assert calibrate_band(10_000, 0.025).source == "simulation"  # shipped table
        for n in (1_234, bands.EMBEDDED_FROM_N - 1):  # the allowance too wide: simulated
            with pytest.raises(AssertionError, match="simulated"):
                calibrate_band(n, 0.025)
        # beyond the largest truncation or at an unshipped level: the simulation, as before
        assert poisson_band(2 * POISSON_K[-1] + 10, 0.025) is None
        assert poisson_band(12_345, 0.03) is None
    finally:
        bands._calibrate_cached.cache_clear()


def test_shipped_quantiles_are_the_computed_ones(monkeypatch, tmp_path):
    """``_band_poisson.f8`` holds S_K and the Gamma quantiles at the shipped levels (equal to
    this host's to 16 ulps: special functions differ in the last place between hosts); without
    the file the same band is computed."""
    from semi_core.audit._band_poisson import POISSON_BLOCKS

    assert POISSON_BLOCKS.keys() == POISSON_TABLE.keys()
    for key, (xu, xl) in POISSON_TABLE.items():
        s, a, a_low = bands._shipped_poisson_quantiles(key)
        fresh = bands.poisson_quantiles(key[0], xu, xl)
        G = s.size
        assert np.array_equal(s, bands.poisson_grid(key[0]))
        for got, want in ((a, fresh[G:2 * G]), (a_low, fresh[2 * G:])):
            assert np.all(np.abs(got - want) <= 16 * np.spacing(want))
    shipped = poisson_band(12_345, 0.025).values
    monkeypatch.setattr(bands, "POISSON_VALUES_FILE", tmp_path / "absent.f8")
    computed = poisson_band(12_345, 0.025).values
    assert np.all(np.abs(shipped - computed) <= 64 * np.spacing(computed))


def test_grid_read_from_the_shipped_counts_is_count_grid():
    """The off-table grid is built from S_K (no loop): equal to count_grid at every size tried,
    odd and even, at each truncation's ends."""
    sizes = list(range(2_000, 2_064)) + [9_999, 10_000, 10_001, 99_999, 100_001, 999_999,
                                         1_000_001, 10_000_000]
    for n in sizes:
        cal = poisson_band(n, 0.05)
        assert cal is not None and np.array_equal(cal.grid, count_grid(n)), n
    assert poisson_band(10_000_001, 0.05) is None  # (N-1)/2 beyond the largest truncation

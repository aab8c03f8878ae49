"""Shipped band calibrations (semi_core/audit/_band_table.py) equal fresh ones, bit for bit."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from semi_core.audit import bands
from semi_core.audit._band_table import BAND_BLOCKS, BAND_TABLE
from semi_core.audit.bands import (
    BAND_REPS,
    _calibration,
    calibrate_band,
    count_grid,
    simulate_calibration,
    table_key,
)


@pytest.mark.parametrize("n, q", [(100, 0.025), (1000, 0.005), (2000, 0.05)])
def test_table_entry_equals_a_fresh_simulation(n, q):
    key = table_key(n, q, BAND_REPS)
    assert key in BAND_TABLE
    assert simulate_calibration(n, q, BAND_REPS) == BAND_TABLE[key]


def test_table_hit_gives_the_fresh_calibration(monkeypatch):
    """A hit rebuilds exactly the calibration the simulation gives (values bit for bit)."""
    n, q = 500, 0.025
    bands._calibrate_cached.cache_clear()
    from_table = calibrate_band(n, q)
    ell, crossings = simulate_calibration(n, q, BAND_REPS)
    fresh = _calibration(n, q, BAND_REPS, count_grid(n), ell, crossings)
    np.testing.assert_array_equal(from_table.values, fresh.values)
    assert (from_table.local_level, from_table.crossing_estimate, from_table.source) == \
        (fresh.local_level, fresh.crossing_estimate, fresh.source)
    # and the values are those of the candidate level as the simulation evaluates them
    levels = bands._levels(q, count_grid(n).size)
    np.testing.assert_array_equal(
        fresh.values, bands.band_values(n, count_grid(n), levels)[:, ell])
    # a size off the table is simulated (not looked up)
    monkeypatch.setattr(bands, "simulate_calibration",
                        lambda *a: (_ for _ in ()).throw(AssertionError("simulated")))
    bands._calibrate_cached.cache_clear()
    calibrate_band(n, q)  # in the table: no simulation
    with pytest.raises(AssertionError, match="simulated"):
        calibrate_band(n + 1, q)
    bands._calibrate_cached.cache_clear()


def _generator():
    import importlib.util

    path = Path(__file__).resolve().parents[2] / "analysis" / "band_calibration.py"
    spec = importlib.util.spec_from_file_location("band_calibration", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_table_covers_the_ladder_and_is_well_formed():
    gen = _generator()
    LEVELS, SIZES = gen.LEVELS, gen.SIZES

    assert {table_key(n, q, BAND_REPS) for n in SIZES for q in LEVELS} == set(BAND_TABLE)
    for (_n, qk, reps), (ell, crossings) in BAND_TABLE.items():
        assert -1 <= ell < bands._N_LEVELS and 0 <= crossings <= reps
        # the chosen level's crossing rate passed the CP check: below q - q/10
        assert crossings / reps <= qk / 1e12
    # the file is what the generator renders (nobody edited it by hand)
    from semi_core.audit import _band_table

    assert Path(_band_table.__file__).read_text() == gen.render(BAND_TABLE, BAND_BLOCKS)


def test_shipped_grids_and_values_are_the_computed_ones_bit_for_bit():
    """Every shipped block is count_grid(n) and band_values at the entry's chosen level, and
    the shipped local level is the candidate level the simulation chose."""
    blob, blocks = bands.band_values_blob(BAND_TABLE)
    assert blocks == BAND_BLOCKS
    np.testing.assert_array_equal(np.fromfile(bands.BAND_VALUES_FILE, dtype="<f8"), blob)
    for key in [(100, 25_000_000_000, BAND_REPS), (10_000, 5_000_000_000, BAND_REPS),
                (1_000_000, 50_000_000_000, BAND_REPS)]:
        n, qk, _ = key
        grid, values, level = bands.shipped_band(key)
        ell, _c = BAND_TABLE[key]
        np.testing.assert_array_equal(grid, count_grid(n))
        assert level == bands._levels(qk / 1e12, grid.size)[ell]
        np.testing.assert_array_equal(values, bands.band_values(n, grid, level))


def test_without_the_values_file_the_same_band_is_computed(monkeypatch, tmp_path):
    n, q = 300, 0.05
    bands._calibrate_cached.cache_clear()
    shipped = calibrate_band(n, q)
    real = bands.BAND_VALUES_FILE
    monkeypatch.setattr(bands, "BAND_VALUES_FILE", tmp_path / "absent.f8")
    bands._calibrate_cached.cache_clear()
    computed = calibrate_band(n, q)
    np.testing.assert_array_equal(shipped.values, computed.values)
    np.testing.assert_array_equal(shipped.grid, computed.grid)
    assert shipped.local_level == computed.local_level
    # a truncated file is an error, never a short band
    short = tmp_path / "short.f8"
    short.write_bytes(real.read_bytes()[:64])
    monkeypatch.setattr(bands, "BAND_VALUES_FILE", short)
    bands._calibrate_cached.cache_clear()
    with pytest.raises(ValueError, match="truncated"):
        calibrate_band(n, q)
    bands._calibrate_cached.cache_clear()

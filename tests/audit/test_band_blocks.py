"""Both shipped calibration files are read by one helper (``bands._read_block``): every block
is the slice of the file the previous reads returned, and a short file is refused for both."""

import numpy as np
import pytest

from semi_core.audit import bands
from semi_core.audit._band_poisson import POISSON_BLOCKS
from semi_core.audit._band_table import BAND_BLOCKS


def test_every_block_is_its_slice_of_the_file():
    vals = np.fromfile(bands.BAND_VALUES_FILE, dtype="<f8")
    for key, (off, G, level) in BAND_BLOCKS.items():
        grid, values, lv = bands.shipped_band(key)
        np.testing.assert_array_equal(grid, vals[off:off + G].astype(np.int64))
        np.testing.assert_array_equal(values, vals[off + G:off + 2 * G])
        assert lv == level and grid.dtype == np.int64
    pois = np.fromfile(bands.POISSON_VALUES_FILE, dtype="<f8")
    for key, (off, G) in POISSON_BLOCKS.items():
        s, a, b = bands._shipped_poisson_quantiles(key)
        np.testing.assert_array_equal(s, pois[off:off + G].astype(np.int64))
        np.testing.assert_array_equal(a, pois[off + G:off + 2 * G])
        np.testing.assert_array_equal(b, pois[off + 2 * G:off + 3 * G])
    assert bands.shipped_band((-1, 0, 0)) is None
    assert bands._shipped_poisson_quantiles((-1, 0)) is None


def test_absent_and_short_poisson_file(monkeypatch, tmp_path):
    key = next(iter(POISSON_BLOCKS))
    monkeypatch.setattr(bands, "POISSON_VALUES_FILE", tmp_path / "absent.f8")
    assert bands._shipped_poisson_quantiles(key) is None
    short = tmp_path / "short.f8"
    short.write_bytes(b"\0" * 16)
    monkeypatch.setattr(bands, "POISSON_VALUES_FILE", short)
    with pytest.raises(ValueError, match="truncated: regenerate it with analysis/band_poisson"):
        bands._shipped_poisson_quantiles(key)

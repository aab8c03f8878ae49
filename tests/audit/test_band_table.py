"""Shipped band calibrations (semi_core/audit/_band_table.py): valid, and the ones this host
computes.

What the product needs of a shipped band is validity: the band fails with probability at most
its level. That is checked on every shipped entry with computations whose error is far below
what they decide (``_validity_problems``), never by comparing the last digit of a special
function. Equality with a fresh computation is then checked to ``ULPS`` units in the last place:
the band values are Boost's ``ibeta_inv`` (Halley steps on ``ibeta``, built from ``exp``,
``log``, ``pow`` and ``lgamma``), and those differ by an ulp between hosts (libm versions, SIMD
paths: an AMD EPYC host gave 1-ulp differences in three shipped values); anything a real change
makes (another level, grid, N or formula) moves the values by millions of ulps. The simulated
integers (level index, crossings) are compared exactly: a host's ulp could flip one crossing only
if a simulated order statistic fell within an ulp of a band value (probability about
``reps * G * 1e-16``).
"""

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
from semi_core.stats.binomial import clopper_pearson_upper

#: Largest difference, in units in the last place, between a shipped band value and the one
#: this host computes (see the module docstring: hosts differ by an ulp; real changes by far
#: more); the local levels (``numpy.geomspace``: ``log``/``exp``) likewise.
ULPS = 16
#: Relative error allowed to the level a shipped value attains. The band values come from
#: ``betaincinv`` at ``1 - x`` and are judged by ``betaincc`` (the upper tail computed directly,
#: never 1 - I; it agrees with an exact mpmath binomial sum to about 1e-15 relative at N = 3e5);
#: at N up to 1e6 the two together are off by up to 2.0e-9 of the level beyond one ulp of the
#: value (measured over the whole table). 1e-7 leaves a margin of 50 and is still 1e4 times
#: finer than the spacing of the candidate levels (a value computed at another level, or 0.1 %
#: off, fails); what validity needs is the simultaneous check, which has far more room.
LEVEL_RTOL = 1e-7


def _within_ulps(a, b, ulps=ULPS):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return bool(np.all(np.abs(a - b) <= ulps * np.spacing(np.maximum(np.abs(a), np.abs(b)))))


def _validity_problems(key, grid, values, level) -> list[str]:
    r"""Why a shipped band would not be valid (empty: valid). Host-independent checks.

    With :math:`P_g=P(\mathrm{Beta}(g+1,N-g)>b_g)` (``betaincc``: the upper tail computed
    directly, relative error about 1e-15) at the shipped values and :math:`x` the local level:

    1. pointwise, each value is the exact bound at :math:`x`, or below it by at most one ulp (a
       float cannot be nearer; near 1, where the floats are sparse, one ulp is up to 1e-5 of
       :math:`x` at N = 1e6) and ``LEVEL_RTOL`` of the level (the special functions' error):
       :math:`P_g\le x(1+\text{LEVEL\_RTOL})+f_g(b_g)\,\mathrm{ulp}(b_g)`,
       :math:`f_g` the Beta density;
    2. simultaneously, the band fails with probability :math:`\le q` even judged against the
       exact bounds at :math:`x`: failing the shipped band but not the exact one needs
       :math:`V_{(g+1)}\in(b_g, b^*_g]` for some :math:`g`, probability
       :math:`\le\sum_g(P_g-x)^+`, which the calibration's unused slack
       :math:`q-\eta-\mathrm{CP}_{\mathrm{upper}}(c,R,\eta)` must cover; for the Bonferroni
       fallback, the exact crossing probability (:func:`band_crossing_probability`, small N)
       is :math:`\le q`.
    """
    from scipy.special import betaincc
    from scipy.stats import beta

    n, qk, reps = key
    q = qk / 1e12
    ell, crossings = BAND_TABLE[key]
    g = np.asarray(grid, dtype=float)
    b = np.asarray(values, dtype=float)
    p = betaincc(g + 1.0, n - g, b)
    one_ulp = beta.pdf(b, g + 1.0, n - g) * np.spacing(b)
    problems = []
    bad = np.flatnonzero(p > level * (1 + LEVEL_RTOL) + one_ulp)
    if bad.size:
        j = int(bad[0])
        problems.append(f"{key}: {bad.size} values below their bound at level {level:.6g} by "
                        f"more than an ulp and {LEVEL_RTOL:g} of the level (count "
                        f"{int(grid[j])}: P = {p[j]:.17g})")
    excess = float(np.clip(p - level, 0.0, None).sum())
    if ell >= 0:
        eta = q / 10.0
        slack = q - eta - float(clopper_pearson_upper(crossings, reps, eta))
        if not excess <= slack:
            problems.append(f"{key}: the shipped values add {excess:.3g} to the failure "
                            f"probability, over the calibration's slack {slack:.3g}")
    else:
        exact = bands.band_crossing_probability(n, grid, values)
        if not exact <= q:
            problems.append(f"{key}: Bonferroni band fails with probability {exact:.6g} > {q}")
    return problems



@pytest.mark.parametrize("n, q", [(100, 0.025), (1000, 0.005), (2000, 0.05)])
def test_table_entry_equals_a_fresh_simulation(n, q):
    key = table_key(n, q, BAND_REPS)
    assert key in BAND_TABLE
    assert simulate_calibration(n, q, BAND_REPS) == BAND_TABLE[key]


def test_table_hit_gives_the_fresh_calibration(monkeypatch):
    """A hit rebuilds the calibration the simulation gives (values to ``ULPS``)."""
    n, q = 500, 0.025
    bands._calibrate_cached.cache_clear()
    from_table = calibrate_band(n, q)
    ell, crossings = simulate_calibration(n, q, BAND_REPS)
    fresh = _calibration(n, q, BAND_REPS, count_grid(n), ell, crossings)
    assert _within_ulps(from_table.values, fresh.values)
    assert _within_ulps(from_table.local_level, fresh.local_level)
    assert (from_table.crossing_estimate, from_table.source) == \
        (fresh.crossing_estimate, fresh.source)
    # and the values are those of the candidate level as the simulation evaluates them
    levels = bands._levels(q, count_grid(n).size)
    assert _within_ulps(fresh.values, bands.band_values(n, count_grid(n), levels)[:, ell])
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


def test_every_shipped_band_is_valid():
    """Each of the shipped calibrations: its band fails with probability <= its level (see
    ``_validity_problems``; host-independent, no last-ulp comparison)."""
    problems = []
    for key in sorted(BAND_TABLE):
        grid, values, level = bands.shipped_band(key)
        problems += _validity_problems(key, grid, values, level)
    assert not problems, problems


@pytest.mark.parametrize("key", [(100, 25_000_000_000, BAND_REPS),
                                 (1_000_000, 5_000_000_000, BAND_REPS),
                                 (20, 5_000_000_000, BAND_REPS)])
def test_a_value_that_is_not_conservative_is_caught(key):
    """The validity check fails on a band with one value lowered: to its bound at level
    1.001 x (a value that is not conservative), and, for a simulated entry, to a bound that
    alone spends the calibration's slack (for the Bonferroni fallback: a band whose exact
    crossing probability is over q)."""
    from scipy.special import betainccinv

    grid, values, level = bands.shipped_band(key)
    assert not _validity_problems(key, grid, values, level)
    n, j = key[0], grid.size // 3
    low = values.copy()
    low[j] = betainccinv(grid[j] + 1.0, n - grid[j], 1.001 * level)
    assert low[j] < values[j]
    assert any("below their bound" in p for p in _validity_problems(key, grid, low, level))
    if BAND_TABLE[key][0] < 0:  # Bonferroni (exact crossing 0.0031 at q = 0.005, n = 20): all
        # values at level 2x make it 0.0060
        low[:] = betainccinv(grid + 1.0, n - grid, 2.0 * level)
        assert any("Bonferroni" in p for p in _validity_problems(key, grid, low, level))
        return
    q, (_ell, c) = key[1] / 1e12, BAND_TABLE[key]
    slack = q - q / 10 - float(clopper_pearson_upper(c, key[2], q / 10))
    low = values.copy()
    low[j] = betainccinv(grid[j] + 1.0, n - grid[j], level + 1.5 * slack)
    assert any("slack" in p for p in _validity_problems(key, grid, low, level))


def test_shipped_grids_and_values_are_the_computed_ones():
    """Every shipped block is count_grid(n) (exactly: integers) and band_values at the entry's
    chosen level (to ``ULPS``: a host's special functions differ in the last place), and the
    shipped local level is the candidate level the simulation chose (to ``ULPS``)."""
    blob, blocks = bands.band_values_blob(BAND_TABLE)
    assert blocks.keys() == BAND_BLOCKS.keys()
    for key, (off, G, level) in blocks.items():
        s_off, s_G, s_level = BAND_BLOCKS[key]
        assert (s_off, s_G) == (off, G) and _within_ulps(s_level, level), key
    shipped = np.fromfile(bands.BAND_VALUES_FILE, dtype="<f8")
    assert shipped.shape == blob.shape
    assert _within_ulps(shipped, blob)
    for key in [(100, 25_000_000_000, BAND_REPS), (10_000, 5_000_000_000, BAND_REPS),
                (1_000_000, 50_000_000_000, BAND_REPS)]:
        n, qk, _ = key
        grid, values, level = bands.shipped_band(key)
        ell, _c = BAND_TABLE[key]
        np.testing.assert_array_equal(grid, count_grid(n))
        assert _within_ulps(level, bands._levels(qk / 1e12, grid.size)[ell])
        assert _within_ulps(values, bands.band_values(n, grid, level))
    # the tolerance is an ulp tolerance, not a loose one: 1e-12 relative off fails
    assert not _within_ulps(values * (1 + 1e-12), values)


def test_without_the_values_file_the_same_band_is_computed(monkeypatch, tmp_path):
    n, q = 300, 0.05
    bands._calibrate_cached.cache_clear()
    shipped = calibrate_band(n, q)
    real = bands.BAND_VALUES_FILE
    monkeypatch.setattr(bands, "BAND_VALUES_FILE", tmp_path / "absent.f8")
    bands._calibrate_cached.cache_clear()
    computed = calibrate_band(n, q)
    assert _within_ulps(shipped.values, computed.values)
    np.testing.assert_array_equal(shipped.grid, computed.grid)
    assert _within_ulps(shipped.local_level, computed.local_level)
    # a truncated file is an error, never a short band
    short = tmp_path / "short.f8"
    short.write_bytes(real.read_bytes()[:64])
    monkeypatch.setattr(bands, "BAND_VALUES_FILE", short)
    bands._calibrate_cached.cache_clear()
    with pytest.raises(ValueError, match="truncated"):
        calibrate_band(n, q)
    bands._calibrate_cached.cache_clear()

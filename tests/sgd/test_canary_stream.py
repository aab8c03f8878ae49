"""DP-SGD white-box canary stream: the Dirac canary adds exactly 1; dead coordinate is exact."""

from __future__ import annotations

import numpy as np
import pytest

from semi_core.sgd.canary_stream import canary_stream, private_sigma
from semi_core.stats.gdp import gdp_delta


def test_dead_coordinate_is_exactly_gaussian():
    s = canary_stream(80, sigma=2.0, coordinate="dead", seed=1)
    R = s["x"].size
    for z in (s["x"] / 2.0, (s["y"] - 1.0) / 2.0):  # N(0, 1) each; 4.5 SE on mean and var
        assert abs(z.mean()) <= 4.5 / np.sqrt(R)
        assert abs(z.var() - 1) <= 4.5 * np.sqrt(2 / R)
    s0 = canary_stream(20, sigma=0.0, coordinate="dead", seed=1)
    assert np.all(s0["x"] == 0) and np.all(s0["y"] == 1)


def test_live_coordinate_nonprivate_shift_is_one():
    s = canary_stream(40, sigma=0.0, coordinate="live", seed=2)
    np.testing.assert_allclose(s["y"] - s["x"], 1.0, atol=1e-12)
    assert s["x"].std() > 0  # natural gradients move the live coordinate
    assert np.all(s["batch_sizes"] >= 0)


def test_private_sigma_is_exact():
    sig = private_sigma(0.5, 1e-5)
    assert float(gdp_delta(0.5, 1 / sig)) == pytest.approx(1e-5, rel=1e-7)


def test_bad_input():
    with pytest.raises(ValueError, match="sigma"):
        canary_stream(5, sigma=-1.0)
    with pytest.raises(ValueError, match="steps"):
        canary_stream(0, sigma=1.0)
    with pytest.raises(ValueError, match="coordinate"):
        canary_stream(5, sigma=1.0, coordinate="other")


def test_trainer_as_pair_source_stops_training_early():
    """A non-private run is rejected after a few dozen steps: training stops there."""
    from semi_core.audit.sequential import sequential_test
    from semi_core.sgd.canary_stream import CanaryTrainer

    tr = CanaryTrainer(sigma=0.0, coordinate="live", seed=3)
    r = sequential_test(tr.pair_source(), epsilon=0.1, delta=1e-5, max_obs=1000, block=8,
                        seed=0)
    assert r.rejected and tr.steps_done < 300
    # same observations as the eager stream with the same seed
    s = canary_stream(30, sigma=0.0, coordinate="live", seed=3)
    tr2 = CanaryTrainer(sigma=0.0, coordinate="live", seed=3)
    x, y, _ = tr2.advance(30)
    np.testing.assert_array_equal(x, s["x"])
    np.testing.assert_array_equal(y, s["y"])

"""stats.ranking.average_ranks equals scipy.stats.rankdata (method 'average'), ties included."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.stats import rankdata

from semi_core.stats.ranking import average_ranks


@pytest.mark.parametrize("case", ["continuous", "ties", "all_equal", "one", "empty", "inf"])
def test_average_ranks_equal_rankdata(case):
    rng = np.random.default_rng(0)
    x = {"continuous": rng.normal(size=1001),
         "ties": rng.integers(0, 7, 500).astype(float),
         "all_equal": np.full(9, 2.5),
         "one": np.array([3.0]),
         "empty": np.zeros(0),
         "inf": np.array([np.inf, -np.inf, 0.0, np.inf, 1.0])}[case]
    np.testing.assert_array_equal(average_ranks(x), rankdata(x))

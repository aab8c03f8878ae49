"""The one threshold-counting home (stats.ranking) against a brute-force count."""

import numpy as np
import pytest

from semi_core.stats.ranking import count_at_or_below, pooled_threshold_counts


@pytest.mark.parametrize("ties", [False, True])
def test_count_at_or_below_matches_brute_force(ties):
    rng = np.random.default_rng(3)
    a = rng.normal(size=(4, 50))
    if ties:
        a = np.round(a, 1)
    a.sort(axis=1)
    th1 = np.concatenate([a[0, ::7], [-np.inf, np.inf]])
    th2 = a[:, ::5] + 0.0
    for r in range(4):
        assert np.array_equal(count_at_or_below(a[r], th1), (a[r][None, :] <= th1[:, None]).sum(1))
        assert np.array_equal(count_at_or_below(a, th1)[r], (a[r][None, :] <= th1[:, None]).sum(1))
        assert np.array_equal(count_at_or_below(a, th2)[r],
                              (a[r][None, :] <= th2[r][:, None]).sum(1))


def test_pooled_counts_match_brute_force():
    rng = np.random.default_rng(4)
    m = np.round(rng.normal(1, size=(2, 30)), 1)
    n = np.round(rng.normal(0, size=(2, 40)), 1)
    vals, mem_le, non_le, valid = pooled_threshold_counts(m, n)
    for b in range(2):
        for k in np.flatnonzero(valid[b]):
            v = vals[b, k]
            assert mem_le[b, k] == (m[b] <= v).sum() and non_le[b, k] == (n[b] <= v).sum()
        assert len(np.unique(vals[b])) == valid[b].sum()

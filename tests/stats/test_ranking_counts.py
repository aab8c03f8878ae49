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


@pytest.mark.parametrize("case", ["continuous", "ties", "infinite", "one_each"])
def test_mann_whitney_sorted_exact_against_brute_force(case):
    """The AUC is the exact pair count (one rounding: equal to the brute-force fraction bit for
    bit); the DeLong s.e. equals its brute-force structural components to rounding."""
    from semi_core.stats.ranking import mann_whitney_auc, mann_whitney_sorted

    rng = np.random.default_rng(11)
    n1, n0 = (1, 1) if case == "one_each" else (37, 53)
    s1, s0 = rng.normal(0.5, 1, n1), rng.normal(0, 1, n0)
    if case == "ties":
        s1, s0 = np.round(s1), np.round(s0)
    if case == "infinite":
        s1[:3], s0[:2] = np.inf, -np.inf
        s0[2] = np.inf  # a tie at +inf
    psi = (s1[:, None] > s0[None, :]) + 0.5 * (s1[:, None] == s0[None, :])
    a, se = mann_whitney_sorted(np.sort(s1), np.sort(s0))
    assert a == (2 * psi).sum() / (2 * n1 * n0)
    var = ((psi.mean(1).var(ddof=1) / n1 if n1 > 1 else 0.0)
           + (psi.mean(0).var(ddof=1) / n0 if n0 > 1 else 0.0))
    assert se == pytest.approx(np.sqrt(var), rel=1e-12, abs=1e-15)
    # the unsorted entry point: same numbers whatever the input order
    assert mann_whitney_auc(s1[::-1], rng.permutation(s0)) == (a, se)
    with pytest.raises(ValueError, match="both members and non-members"):
        mann_whitney_sorted(np.sort(s1), np.empty(0))

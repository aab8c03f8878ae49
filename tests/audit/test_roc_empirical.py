"""Empirical TPR at FPR and AUC with standard errors (semi_core.audit.roc)."""

import math

import numpy as np
import pytest
from scipy.stats import norm

from semi_core.audit.roc import auc as _auc
from semi_core.audit.roc import (
    empirical_threshold,
    roc_curve,
    split_scores,
    summarize,
    tpr_at_fpr_se,
)
from semi_core.game.result import GameResult


def tpr_at_fpr(scores, member, fpr):
    return tpr_at_fpr_se(*split_scores(scores, member), fpr)


def auc(scores, member):
    return _auc(*split_scores(scores, member), se=True)


def test_threshold_and_tie_rule():
    s0 = np.arange(1.0, 11.0)  # 1..10
    g, a = empirical_threshold(s0, [0.2, 0.25, 0.05, 0.999])
    # k = floor(f N0) = 2, 2, 0, 9 -> gamma = (k+1)-th largest = 8, 8, 10, 1
    np.testing.assert_array_equal(g, [8.0, 8.0, 10.0, 1.0])
    np.testing.assert_allclose(a, [0.2, 0.2, 0.0, 0.9])
    # ties at the threshold are non-members: achieved FPR drops below k/N0
    tied = np.array([1, 2, 3, 5, 5, 5, 5, 9, 9, 10.0])
    g, a = empirical_threshold(tied, 0.4)  # k = 4 -> 5th largest = 5; #>5 = 3
    assert g[0] == 5.0 and a[0] == pytest.approx(0.3)


def test_tpr_counts_strictly_greater():
    member = np.array([0] * 10 + [1] * 4, bool)
    scores = np.concatenate([np.arange(1.0, 11.0), [8.0, 8.5, 11.0, 2.0]])
    r = tpr_at_fpr(scores, member, 0.2)  # gamma = 8: members > 8 are 8.5 and 11
    assert r["tpr"][0] == pytest.approx(0.5)
    assert r["se_binomial"][0] == pytest.approx(math.sqrt(0.25 / 4))
    assert r["n0"] == 10 and r["n1"] == 4


def _auc_brute(s1, s0):
    diff = s1[:, None] - s0[None, :]
    psi = (diff > 0) + 0.5 * (diff == 0)
    a = psi.mean()
    v10, v01 = psi.mean(1), psi.mean(0)
    return a, math.sqrt(v10.var(ddof=1) / s1.size + v01.var(ddof=1) / s0.size)


def test_auc_matches_bruteforce_with_ties(rng):
    s1 = np.round(rng.normal(0.7, 1.0, 300), 1)  # rounding creates many ties
    s0 = np.round(rng.normal(0.0, 1.0, 400), 1)
    scores = np.concatenate([s1, s0])
    member = np.r_[np.ones(300, bool), np.zeros(400, bool)]
    a, se = auc(scores, member)
    ab, seb = _auc_brute(s1, s0)
    assert a == pytest.approx(ab, abs=1e-12)
    assert se == pytest.approx(seb, rel=1e-10)


def test_standard_errors_match_replication_spread():
    """Binormal ROC (shift 1): the delta-method TPR s.e. and DeLong s.e. match the spread of
    300 replications. The sample s.d. of 300 replications has relative s.e. ~ 1/sqrt(600)
    = 4%; we allow 20% (5 of those s.e.)."""
    rng = np.random.default_rng(7)
    n = 4000
    reps = 300
    tprs, aucs, ses, auc_ses = [], [], [], []
    member = np.r_[np.ones(n, bool), np.zeros(n, bool)]
    for _ in range(reps):
        s = np.concatenate([rng.normal(1.0, 1.0, n), rng.normal(0.0, 1.0, n)])
        r = tpr_at_fpr(s, member, 0.05)
        a, ase = auc(s, member)
        tprs.append(r["tpr"][0])
        ses.append(r["se"][0])
        aucs.append(a)
        auc_ses.append(ase)
    true_tpr = norm.sf(norm.isf(0.05) - 1.0)
    assert abs(np.mean(tprs) - true_tpr) < 5 * np.std(tprs) / math.sqrt(reps)
    assert np.std(tprs, ddof=1) == pytest.approx(np.mean(ses), rel=0.2)
    assert np.std(aucs, ddof=1) == pytest.approx(np.mean(auc_ses), rel=0.2)
    # the binomial-only s.e. is too small here (threshold noise is ignored)
    r = tpr_at_fpr(s, member, 0.05)
    assert r["se_binomial"][0] < 0.8 * np.std(tprs, ddof=1)


def test_roc_curve_monotone(rng):
    s = np.concatenate([rng.normal(1, 1, 500), rng.normal(0, 1, 500)])
    m = np.r_[np.ones(500, bool), np.zeros(500, bool)]
    f, t, _ = roc_curve(*split_scores(s, m))
    assert np.all(np.diff(f) >= 0) and np.all(np.diff(t) >= 0)


def test_summarize_shape():
    out = summarize(GameResult(np.r_[np.ones(50, bool), np.zeros(50, bool)], 1,
                               {"x": np.linspace(0, 1, 100)[::-1]}))
    assert set(out["x"]["tpr_at_fpr"]) == {"0.1", "0.01", "0.001"}
    assert out["x"]["auc"] == pytest.approx(1.0)


@pytest.mark.parametrize("scores,member,fpr,match", [
    ([1.0, np.nan], [True, False], 0.1, "NaN"),
    ([1.0, 2.0], [True, True], 0.1, "both members and non-members"),
    ([1.0, 2.0], [True], 0.1, "equal length"),
    ([1.0, 2.0], [True, False], 0.0, r"fpr must lie in \(0, 1\)"),
    ([1.0, 2.0], [True, False], 1.5, r"fpr must lie in \(0, 1\)"),
    ([1.0, 2.0], [2, 0], 0.1, "boolean"),
])
def test_bad_inputs(scores, member, fpr, match):
    with pytest.raises(ValueError, match=match):
        tpr_at_fpr(scores, member, fpr)


def test_summarize_threads_identical_and_equal_to_the_public_functions(rng):
    """summarize reads every figure from each class sorted once; on 2 threads the same dict,
    and each figure equals tpr_at_fpr_se / auc on the split scores (ties included)."""
    member = rng.random(3000) < 0.4
    stats = {"a": np.round(rng.normal(member * 0.8, 1.0), 1), "b": rng.normal(0, 1, 3000),
             "c": np.where(member, np.inf, rng.normal(0, 1, 3000))}
    res = GameResult(member, 1, stats)
    one = summarize(res, (0.1, 0.01))
    assert summarize(res, (0.1, 0.01), threads=2) == one
    for name in stats:
        m, nm = res.scores(name)
        t = tpr_at_fpr_se(m, nm, (0.1, 0.01))
        a, a_se = _auc(m, nm, se=True)
        assert one[name]["auc"] == a and one[name]["auc_se"] == a_se
        for i, f in enumerate(("0.1", "0.01")):
            for k in ("tpr", "se", "threshold", "fpr_achieved"):
                assert one[name]["tpr_at_fpr"][f][k] == t[k][i]
    with pytest.raises(ValueError, match="test must be one of"):
        summarize(res, tests=["nope"])
    with pytest.raises(ValueError, match="threads"):
        summarize(res, threads=0)

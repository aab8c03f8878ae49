"""ROC metrics: AUC, advantage, TPR at FPR (step and hull), intervals."""

import math

import numpy as np
import pytest
from scipy.stats import norm

from semi_core.audit import advantage, auc, roc_curve, roc_metrics, tpr_at_fpr


def test_auc_matches_bruteforce_with_ties(rng):
    m = rng.integers(0, 5, 70).astype(float)
    n = rng.integers(0, 4, 50).astype(float)
    brute = np.mean((m[:, None] > n[None, :]) + 0.5 * (m[:, None] == n[None, :]))
    assert auc(m, n) == pytest.approx(brute, rel=1e-12)


def test_auc_gaussian_closed_form(rng):
    # AUC of N(mu,1) vs N(0,1) is Phi(mu / sqrt 2); Mann-Whitney variance <= AUC(1-AUC)/min(N)
    # bounds the SE (Hanley-McNeil), tolerance 4.5 SE.
    mu, N = 1.0, 20_000
    a = auc(rng.normal(mu, 1, N), rng.normal(0, 1, N))
    truth = norm.cdf(mu / math.sqrt(2))
    assert abs(a - truth) < 4.5 * math.sqrt(truth * (1 - truth) / N)


def test_step_rule_and_advantage_bruteforce(rng):
    m, n = rng.normal(1, 1, 300), rng.normal(0, 1, 200)
    ths = np.r_[np.unique(np.r_[m, n]), -np.inf]
    tpr = np.array([np.mean(m > g) for g in ths])
    fpr = np.array([np.mean(n > g) for g in ths])
    for f in (0.0, 0.005, 0.01, 0.1, 0.5, 1.0):
        assert float(tpr_at_fpr(m, n, f)) == pytest.approx(tpr[fpr <= f].max())
    assert advantage(m, n) == pytest.approx(np.max(tpr - fpr))


def test_hull_dominates_step_and_is_concave(rng):
    m, n = rng.normal(1, 1, 200), rng.normal(0, 1, 200)
    f = np.linspace(0, 1, 101)
    step = tpr_at_fpr(m, n, f, rule="step")
    hull = tpr_at_fpr(m, n, f, rule="hull")
    assert np.all(hull >= step - 1e-12)
    assert np.all(np.diff(hull, 2) <= 1e-12)  # concave
    x, y, _ = roc_curve(m, n)
    assert x[0] == 0 and y[-1] == 1 and np.all(np.diff(x) >= 0) and np.all(np.diff(y) >= 0)


def test_roc_metrics_intervals(rng):
    m, n = rng.normal(1.5, 1, 2000), rng.normal(0, 1, 2000)
    boot = roc_metrics(m, n, fpr=(0.01, 0.1), n_bootstrap=50, seed=1)
    assert boot.auc_interval[0] <= boot.auc <= boot.auc_interval[1]
    lo, hi = boot.tpr_at_fpr_interval[1]
    assert lo <= boot.tpr_at_fpr[1] <= hi
    binom = roc_metrics(m, n, fpr=(0.01, 0.1), interval="binomial")
    assert binom.auc_interval is None
    for (lo, hi), t in zip(binom.tpr_at_fpr_interval, binom.tpr_at_fpr, strict=True):
        assert lo <= t <= hi
    assert binom.advantage_interval[0] <= binom.advantage <= binom.advantage_interval[1]
    # exact TPR at FPR 0.1 of the Gaussian pair: 1 - Phi(Phi^{-1}(0.9) - 1.5) ~ 0.64, inside
    truth = 1 - norm.cdf(norm.ppf(0.9) - 1.5)
    lo, hi = binom.tpr_at_fpr_interval[1]
    assert lo - 0.03 < truth < hi + 0.03  # + FPR granularity 1/2000 and threshold noise


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [({"fpr": (1.5,)}, "fpr"), ({"rule": "linear"}, "rule"), ({"interval": "wald"}, "interval"),
     ({"confidence": 1.0}, "confidence"), ({"n_bootstrap": 3}, "n_bootstrap"),
     ({"rule": "hull", "interval": "binomial"}, "binomial")],
)
def test_bad_inputs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        roc_metrics([1.0, 2.0], [0.0, 1.0], **kwargs)


def test_bad_scores():
    with pytest.raises(ValueError, match="member_scores is empty"):
        auc([], [1.0])
    with pytest.raises(ValueError, match="NaN"):
        roc_curve([1.0], [float("nan")])

"""SeMI stream audit: the mixture wealth, predictable thresholds, validity at the boundary."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate

from semi_core.audit.sequential.semi_stream import (
    fixed_r_rejection_rate,
    learned_threshold,
    log_mixture_wealth,
    semi_stream_audit,
)
from semi_core.mechanisms.noisy_mean import NoisyMean
from semi_core.mechanisms.zoo import RandomizedResponse

ALPHA = 0.1


@pytest.mark.parametrize("k,n,p", [(0, 1, 0.6), (7, 10, 0.55), (80, 100, 0.7), (3, 40, 0.9)])
def test_mixture_wealth_matches_quadrature(k, n, p):
    f = lambda q: (q / p) ** k * ((1 - q) / (1 - p)) ** (n - k) / (1 - p)  # noqa: E731
    ref = integrate.quad(f, p, 1, limit=200, epsabs=0, epsrel=1e-12)[0]
    assert np.exp(log_mixture_wealth(k, n, p)) == pytest.approx(ref, rel=1e-9)


def test_learned_threshold_maximises_past_accuracy():
    s = np.array([0.1, 0.4, 0.35, 0.8, 0.9, -1.0])
    b = np.array([0, 0, 1, 1, 1, 0], dtype=bool)
    th = learned_threshold(s, b, 0.0)
    acc = np.mean((s > th) == b)
    for c in np.r_[s - 1e-9, s + 1e-9]:
        assert acc >= np.mean((s > c) == b)
    assert learned_threshold(np.empty(0), np.empty(0, bool), 0.3) == 0.3


def test_thresholds_are_predictable():
    r = semi_stream_audit(NoisyMean(10, 1, noise=0.1, data_mean=-1.0, data_std=0.1), [0.5],
                          delta=1e-5, max_rounds=400, seed=0, refit_every=1,
                          stop_when_all_rejected=False)
    # round r's threshold is reproduced from rounds < r only
    for t in (5, 50, 399):
        assert r.thresholds[t] == pytest.approx(learned_threshold(
            r.scores[:t], r.members[:t], 0.0))
    np.testing.assert_array_equal(r.correct, (r.scores > r.thresholds) == r.members)


@pytest.mark.parametrize("eps,delta", [(1.0, 1e-3), (0.3, 0.0)])
def test_boundary_mechanism_rejected_at_most_alpha(eps, delta):
    """Randomized response is exactly (eps, delta)-DP and attains p*: <= alpha rejections
    (200 runs, SE 0.021; tolerance 4.5 SE)."""
    R = 200
    rr = RandomizedResponse(eps, delta)
    rej = [semi_stream_audit(rr, eps, delta=delta, failure_prob=ALPHA, max_rounds=1500,
                             seed=s).rejected[0] for s in range(R)]
    assert np.mean(rej) <= ALPHA + 4.5 * np.sqrt(ALPHA * (1 - ALPHA) / R)


def test_power_and_lower_bound():
    rr = RandomizedResponse(3.0)
    r = semi_stream_audit(rr, [0.5, 1.0, 2.0, 5.0], delta=0.0, max_rounds=3000, seed=1)
    assert r.rejected[:3] == [True, True, True] and not r.rejected[3]
    assert r.epsilon_lower_bound == 2.0
    assert r.stopped_at[0] < r.stopped_at[2]


def test_fixed_r_audit_runs():
    rr = RandomizedResponse(3.0)
    out = fixed_r_rejection_rate(rr, 200, epsilon=1.0, delta=0.0, failure_prob=0.05,
                                 method="cp", audits=20, seed=0)
    assert out["rejection_rate"] >= 0.9


@pytest.mark.slow
def test_boundary_many_runs():
    """1000 streams (SE 0.0095 at alpha = 0.1), tolerance 4.5 SE."""
    R = 1000
    rr = RandomizedResponse(0.7, 1e-4)
    rej = [semi_stream_audit(rr, 0.7, delta=1e-4, failure_prob=ALPHA, max_rounds=2000,
                             seed=s).rejected[0] for s in range(R)]
    assert np.mean(rej) <= ALPHA + 4.5 * np.sqrt(ALPHA * (1 - ALPHA) / R)

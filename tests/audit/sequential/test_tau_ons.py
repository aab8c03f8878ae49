"""tau(eps, delta), the success bound, the batch bound and ONS against brute-force oracles."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate

from semi_core.audit.sequential import (
    OnlineNewtonStep,
    mmd_gaussian_shift,
    success_bound,
    tau_auditorium,
    tau_mmd,
    tv_bound,
)


def _tv_bruteforce(eps, delta):
    """max over alpha of 1 - alpha - f(alpha) on the (eps, delta)-DP trade-off curve."""
    a = np.linspace(0, 1, 200_001)
    f = np.maximum.reduce([np.zeros_like(a), 1 - delta - np.exp(eps) * a,
                           np.exp(-eps) * (1 - delta - a)])
    return float(np.max(1 - a - f))


@pytest.mark.parametrize("eps,delta", [(0.0, 0.0), (0.01, 1e-5), (0.1, 1e-5), (1.0, 0.01),
                                       (3.0, 0.2), (0.5, 0.0)])
def test_tau_matches_tradeoff_bruteforce(eps, delta):
    tv = _tv_bruteforce(eps, delta)
    assert tv_bound(eps, delta) == pytest.approx(tv, abs=2e-5)
    assert tau_mmd(eps, delta) == pytest.approx(np.sqrt(2) * tv, abs=3e-5)
    # the seed's printed form
    assert tau_mmd(eps, delta) == pytest.approx(
        np.sqrt(2) * (1 - 2 * (1 - delta) / (1 + np.exp(eps))), rel=1e-12, abs=1e-15)
    # balanced guessing: success probability (1 + TV)/2 = (e^eps + delta)/(1 + e^eps)
    assert success_bound(eps, delta) == pytest.approx((np.exp(eps) + delta) / (1 + np.exp(eps)))


def test_new_bound_below_auditorium():
    """Remark A.1 conclusion (holds; its intermediate step does not, see the claims)."""
    for eps in (0.0, 0.01, 0.1, 1.0, 3.0):
        for delta in (1e-6, 1e-3, 0.3):
            assert tau_mmd(eps, delta) < tau_auditorium(eps, delta)


def test_gaussian_shift_mmd_matches_quadrature():
    h, mu = 1.3, 1.0

    def ek(m1, m2):  # E K(X, Y), X ~ N(m1, 1), Y ~ N(m2, 1), by 2-D quadrature
        f = lambda y, x: (np.exp(-(x - y) ** 2 / (2 * h * h)) * np.exp(-(x - m1) ** 2 / 2)  # noqa: E731
                          * np.exp(-(y - m2) ** 2 / 2) / (2 * np.pi))
        return integrate.dblquad(f, -12, 12, -12, 12, epsabs=1e-11)[0]

    mmd2 = ek(0, 0) + ek(mu, mu) - 2 * ek(0, mu)
    assert mmd_gaussian_shift(mu, 1.0, h) == pytest.approx(np.sqrt(mmd2), rel=1e-6)


def test_ons_stays_in_interval_and_regret_within_bound():
    """Alg. 3 with the Alg. 1 domain: iterates in [0, 1/(4+2 tau)], regret <= 10 log t."""
    rng = np.random.default_rng(1)
    for tau in (0.0, 0.2, 1.0):
        b = 1 / (4 + 2 * tau)
        ons = OnlineNewtonStep(0.0, b, 4 + 2 * tau)
        a = np.clip(rng.normal(0.3, 0.6, 3000), -2 - tau, 2 - tau)
        alg = 0.0
        for at in a:
            lam = ons.lam
            assert 0.0 <= lam <= b
            alg += -np.log1p(lam * at)
            ons.update(-at / (1 + lam * at))
        grid = np.linspace(0, b, 4001)
        best = np.min(-np.sum(np.log1p(grid[:, None] * a[None, :]), axis=1))
        assert alg - best <= 10 * np.log(a.size)
        assert alg - best >= -1e-9  # the comparator grid includes the best constant bet


def test_ons_bad_input():
    with pytest.raises(ValueError, match="interval"):
        OnlineNewtonStep(1.0, 0.5, 1.0)
    with pytest.raises(ValueError, match="lipschitz"):
        OnlineNewtonStep(0.0, 0.5, 0.0)

"""Sequential-audit derivations three ways: SymPy == vectorised numeric == Monte Carlo."""

from __future__ import annotations

import numpy as np
import pytest

from semi_core.audit.sequential import success_bound, tau_mmd
from semi_core.symbolic import get_derivation


def test_tau_and_success_bound_match_numeric():
    tau = get_derivation("seqaudit_tau").lambdify()
    p = get_derivation("semi_success_bound").lambdify()
    for e in (0.0, 0.01, 0.3, 2.0, 6.0):
        for d in (0.0, 1e-5, 0.1):
            assert float(tau(e, d)) == pytest.approx(tau_mmd(e, d), rel=1e-12, abs=1e-15)
            assert float(p(e, d)) == pytest.approx(success_bound(e, d), rel=1e-12)


def test_seed_flags():
    assert get_derivation("seqaudit_tau").matches_seed() is True
    assert get_derivation("seqaudit_tv_max").matches_seed() is True
    assert get_derivation("seqaudit_oga_norm").matches_seed() is True
    assert get_derivation("seqaudit_beta_map").matches_seed() is False
    assert get_derivation("seqaudit_up_log_wealth").matches_seed() is False


def test_success_bound_monte_carlo():
    """Randomized response attains p*; a Gaussian mechanism at its exact (eps, delta) stays
    below p* at every threshold (200k rounds, 4.5 binomial SE)."""
    from semi_core.mechanisms.zoo import RandomizedResponse
    from semi_core.stats.gdp import gdp_epsilon

    rng = np.random.default_rng(0)
    R = 200_000
    rr = RandomizedResponse(0.8, 0.01)
    b = rng.random(R) < 0.5
    o = rr.release(b, 1, rng)[:, 0, 0]
    acc = np.mean((o > 0.5) == b)
    p = success_bound(0.8, 0.01)
    assert abs(acc - p) <= 4.5 * np.sqrt(p * (1 - p) / R)
    mu, d = 1.5, 1e-3
    e = gdp_epsilon(mu, d)
    s = np.where(b, mu, 0.0) + rng.standard_normal(R)
    best = max(np.mean((s > th) == b) for th in np.linspace(-1, 2.5, 36))
    assert best <= success_bound(e, d) + 4.5 * np.sqrt(0.25 / R)

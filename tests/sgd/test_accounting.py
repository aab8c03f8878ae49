"""Ground-truth epsilon of the audited DP-SGD run: mu = 2 / sigma_DP, cross-checked."""

import numpy as np
import pytest
from scipy.stats import norm

from semi_core.sgd.accounting import (
    calibrate_sigma,
    dp_accounting_epsilon,
    dpsgd_epsilon,
    gdp_delta,
    gdp_epsilon,
    gdp_mu_from_sigma,
)


@pytest.mark.parametrize("sigma", [1.5, 4.0, 12.0])
def test_epsilon_matches_dp_accounting_and_audit_module(sigma):
    from semi_core.audit import gdp_epsilon as audit_gdp_epsilon

    eps = dpsgd_epsilon(sigma, 1e-4)
    assert eps == pytest.approx(dp_accounting_epsilon(sigma, 1e-4), rel=1e-4, abs=1e-6)
    assert eps == pytest.approx(audit_gdp_epsilon(2.0 / sigma, 1e-4), rel=1e-9)
    assert gdp_mu_from_sigma(sigma) == pytest.approx(2.0 / sigma)


def test_replace_one_sensitivity_is_two_c_by_simulation(rng):
    """Privacy loss of N(2C, (sigma C)^2) vs N(0, (sigma C)^2): the tight delta(eps) equals
    P0[L > eps] - e^eps P1[L > eps]; Monte Carlo within 4 binomial SE."""
    sigma, c, eps, n = 1.7, 1.3, 0.8, 400_000
    mu = 2.0 / sigma
    x1 = rng.normal(2 * c, sigma * c, n)
    x0 = rng.normal(0.0, sigma * c, n)

    def loss(x):  # log p1(x)/p0(x) with sensitivity 2C
        return norm.logpdf(x, 2 * c, sigma * c) - norm.logpdf(x, 0, sigma * c)

    p1 = (loss(x1) > eps).mean()
    p0 = (loss(x0) > eps).mean()
    est = p1 - np.exp(eps) * p0
    se = np.sqrt(p1 * (1 - p1) / n + np.exp(2 * eps) * p0 * (1 - p0) / n)
    assert abs(est - float(gdp_delta(eps, mu))) < 4 * se  # 4 binomial SE


def test_calibration_round_trip():
    for eps in (0.25, 1.0, 4.0, 10.0):
        s = calibrate_sigma(eps, 1e-4)
        assert dpsgd_epsilon(s, 1e-4) == pytest.approx(eps, rel=1e-9)
    assert dpsgd_epsilon(0, 1e-4) == float("inf")
    assert gdp_epsilon(1e-3, 0.5) == 0.0


def test_accounting_bad_inputs():
    with pytest.raises(ValueError, match="sigma_dp"):
        gdp_mu_from_sigma(-1.0)
    with pytest.raises(ValueError, match="delta"):
        dpsgd_epsilon(1.0, 1.5)
    with pytest.raises(ValueError, match="epsilon"):
        calibrate_sigma(0.0, 1e-5)

"""PerDatumMean: one threshold scale, inclusion models, the average-datum game.

Monte Carlo tolerances: ``MC_SIGMAS`` standard errors, each SE stated at its check.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from semi_core.mechanisms.per_datum import THRESHOLD_SCALE, PerDatumMean, ProductLaw

MC_SIGMAS = 4.5


def _gauss(d, seed=0):
    law = ProductLaw.gaussian(np.zeros(d), 1.0)
    z = law.sample(np.random.default_rng(seed), 1)[0]
    return law, z


@pytest.mark.parametrize("rho", [1.0, 0.5])
def test_threshold_is_on_the_exact_log_lr_scale(rho):
    # one scale: the H0 rate of exact_log_lr > threshold is the FPR (limit experiment; n = d =
    # 2000 Gaussian data, so the finite-n error is far below the MC SE sqrt(a(1-a)/R) = .0021)
    law, z = _gauss(2000)
    mech = PerDatumMean(law, 2000, z, rho=rho)
    th = mech.theory(0.1)
    assert th["threshold_scale"] == THRESHOLD_SCALE == "log_lr"
    R = 20000
    rel = mech.release(np.zeros(R, bool), np.ones(R, int), np.random.default_rng(1))
    fpr = float(np.mean(mech.exact_log_lr(rel) > th["threshold"]))
    se = math.sqrt(0.1 * 0.9 / R)
    assert abs(fpr - 0.1) < MC_SIGMAS * se + 0.005, (fpr, th)

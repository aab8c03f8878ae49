"""The seed's RDP column: orders beyond Opacus' default 63, no floor read as an answer."""

import math

import numpy as np
import pytest
from scipy.optimize import minimize_scalar

from semi_core.attacks.updates.dp import RDP_MAX_ORDER, paper_rdp_epsilon, rdp_orders
from semi_core.attacks.updates.experiment import UpdateConfig

pytest.importorskip("opacus")


def _conversion(alpha, rdp, delta):
    # Opacus' RDP -> (eps, delta) conversion (Balle et al. 2020, Thm. 21)
    return rdp - (math.log(delta) + math.log(alpha)) / (alpha - 1) + math.log((alpha - 1) / alpha)


def test_full_batch_matches_the_continuous_optimum():
    # SGD-New with n_up = 10 <= batch 32: q = 1, RDP(alpha) = alpha * steps / (2 sigma^2) in
    # closed form; the optimum order sigma = 64 is ~140, beyond Opacus' default 63
    cfg = UpdateConfig(sigma_dp=64.0, clip=0.5, n_up=10)
    steps, sigma, delta = cfg.update_cfg.epochs, 64.0, 1e-4
    res = minimize_scalar(lambda a: _conversion(a, a * steps / (2 * sigma**2), delta),
                          bounds=(1.01, 1e5), method="bounded", options={"xatol": 1e-6})
    eps, order = paper_rdp_epsilon(cfg, delta, return_order=True)
    assert order > 63
    # the grid is ~5 % apart near the optimum: eps is within the curvature of one step
    assert res.fun <= eps <= res.fun * (1 + 1e-3)
    assert abs(order - res.x) / res.x < 0.05


def test_sgd_full_large_sigma_is_not_floored_at_order_63():
    from opacus.accountants import RDPAccountant

    cfg = UpdateConfig(update="sgd-full", sigma_dp=128.0, clip=0.5)
    eps, order = paper_rdp_epsilon(cfg, 1e-4, return_order=True)
    n = cfg.n0 + cfg.n_up
    acc = RDPAccountant()
    acc.history = [(128.0, cfg.update_cfg.batch_size / n,
                    cfg.update_cfg.epochs * math.ceil(n / cfg.update_cfg.batch_size))]
    with pytest.warns(UserWarning, match="largest alpha"):
        floored = acc.get_epsilon(delta=1e-4)  # Opacus' default orders: the optimum at 63
    assert floored == pytest.approx(0.0663, abs=5e-4)
    assert 63 < order < 1024 and 0.0085 < eps < 0.0090
    # the reported optimum is interior: the orders beside it give no less
    grid = np.array(rdp_orders(1024))
    assert grid[0] < order < grid[-1]


def test_optimum_beyond_the_largest_order_raises():
    # q = 1, tiny RDP: the conversion's -log(delta * alpha) / (alpha - 1) term alone puts the
    # optimum near e / delta, far beyond the largest order at delta = 1e-40
    cfg = UpdateConfig(sigma_dp=1e5, clip=0.5, n_up=10)
    with pytest.raises(ValueError, match=f"beyond order {RDP_MAX_ORDER}"):
        paper_rdp_epsilon(cfg, 1e-40)
    with pytest.raises(ValueError, match="max_order"):
        rdp_orders(10)

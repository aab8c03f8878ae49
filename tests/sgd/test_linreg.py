"""Linear-regression closed forms (seed App. F.3) against torch Monte Carlo; H.2 validation."""

import numpy as np
import pytest

from semi_core.sgd.linreg import (
    H2Config,
    linreg_grad_cov,
    linreg_grad_mean,
    linreg_mahalanobis_at_optimum,
    simulate_h2,
)

torch = pytest.importorskip("torch")


def _mc_grads(rng, theta, theta_star, sigma_x, sigma_eps, m):
    from torch import nn

    from semi_core.sgd.grads import FunctionalModel

    d = theta.size
    fm = FunctionalModel(nn.Linear(d, 1, bias=False).double(), loss="mse")
    x = rng.multivariate_normal(np.zeros(d), sigma_x, size=m)
    y = x @ theta_star + sigma_eps * rng.standard_normal(m)
    return fm.per_sample_grads(torch.as_tensor(theta), torch.as_tensor(x),
                               torch.as_tensor(y)).numpy()


def test_gradient_mean_and_covariance_match_torch_monte_carlo(rng):
    d, m = 3, 200_000
    a = rng.normal(size=(d, d))
    sigma_x = a @ a.T / d + 0.5 * np.eye(d)
    theta_star, theta = rng.normal(size=d), rng.normal(size=d)
    g = _mc_grads(rng, theta, theta_star, sigma_x, 0.7, m)
    mu = linreg_grad_mean(theta, theta_star, sigma_x)
    cov = linreg_grad_cov(theta, theta_star, sigma_x, 0.7)
    # mean: 4.5 SE per coordinate (SE = sqrt(diag(cov)/m))
    assert np.all(np.abs(g.mean(0) - mu) < 4.5 * np.sqrt(np.diag(cov) / m))
    # covariance entries: SE of a sample covariance from the MC fourth moments
    gc = g - g.mean(0)
    prod = gc[:, :, None] * gc[:, None, :]
    se = prod.std(0) / np.sqrt(m)
    assert np.all(np.abs(prod.mean(0) - cov) < 4.5 * se + 1e-12)
    # power check: the uncentred second moment (cov + mu mu^T) is rejected by the same test
    wrong = cov + np.outer(mu, mu)
    assert np.any(np.abs(prod.mean(0) - wrong) > 6 * se)


def test_statistics_at_the_optimum(rng):
    d = 4
    sigma_x = np.diag(rng.uniform(0.5, 2, d))
    theta_star = rng.normal(size=d)
    np.testing.assert_allclose(linreg_grad_mean(theta_star, theta_star, sigma_x), 0)
    np.testing.assert_allclose(linreg_grad_cov(theta_star, theta_star, sigma_x, 1.3),
                               1.3**2 * sigma_x)
    x_t, eps_t = rng.normal(size=d), 2.5
    delta_g = -eps_t * x_t
    direct = delta_g @ np.linalg.solve(1.3**2 * sigma_x, delta_g)
    assert linreg_mahalanobis_at_optimum(x_t, eps_t, sigma_x, 1.3) == pytest.approx(direct)


def test_h2_semi_sgd_beats_baselines_at_tau_5():
    from semi_core.audit import auc

    res = simulate_h2(H2Config(), tau=5, rounds=3000, seed=11)
    aucs = {k: auc(*res.scores(k)) for k in res.stats}
    # AUC SE <= sqrt(1/(12 n0) + 1/(12 n1)) ~ 0.0105 for 1500/1500 (Hanley-McNeil upper bound
    # at AUC = 0.5); require a margin of 4 such SE (both AUCs move, so sqrt(2) * 4 SE ~ 0.06).
    margin = 4 * np.sqrt(2) * np.sqrt(1 / (12 * 1500) * 2)
    for name in ("delta_diff", "delta_ratio", "back_front_diff", "back_front_ratio"):
        assert aucs["semi_sgd"] > aucs[name] + margin, (name, aucs)


def test_h2_bad_inputs():
    with pytest.raises(ValueError, match="tau"):
        simulate_h2(H2Config(), tau=11, rounds=10, seed=0)
    with pytest.raises(ValueError, match="n must"):
        simulate_h2(H2Config(n=1), tau=1, rounds=10, seed=0)

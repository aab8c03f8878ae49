"""Linear regression at the optimum (SeMI App. F.3): derivations, display goldens, numerics, MC."""

import numpy as np
import pytest

from semi_core.symbolic import get_derivation

GOLDEN = {
    "linreg_delta_g": r"\delta_{g,j} = - \varepsilon^{*} x^{*}_{j}",
    "linreg_m_star": (r"m^{*} = \frac{\left(\varepsilon^{*}\right)^{2}}{\sigma_{\varepsilon}^{2}} "
                      r"\mathbf{x}^{*\top}\boldsymbol{\Sigma}_{x}^{-1}\mathbf{x}^{*}"),
}


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_golden_display_and_seed(name):
    der = get_derivation(name)
    assert der.to_latex() == GOLDEN[name]
    assert der.display_matches()
    assert der.matches_seed() is True


def test_m_star_numeric_and_monte_carlo():
    """m* three ways: the lambdified derivation, a Cholesky solve with the gradient covariance
    estimated by simulation at the optimum (tolerance 4.5 SE of the estimate, delta method),
    and the exact covariance sigma_eps^2 Sigma_x."""
    rng = np.random.default_rng(4)
    A = rng.normal(size=(3, 3))
    Sx = A @ A.T + 0.5 * np.eye(3)
    se, eps_s, xs = 0.8, 1.3, rng.normal(size=3)
    L = np.linalg.cholesky(Sx)
    w = np.linalg.solve(L, xs)
    m_sym = float(get_derivation("linreg_m_star").lambdify()(eps_s, se, w @ w))
    dg = float(get_derivation("linreg_delta_g").lambdify()(eps_s, 1.0)) * xs
    Lg = np.linalg.cholesky(se**2 * Sx)
    u = np.linalg.solve(Lg, dg)
    assert m_sym == pytest.approx(float(u @ u), rel=1e-12)
    # Monte Carlo: per-sample gradients at the optimum are -eps x.
    R = 200_000
    x = rng.standard_normal((R, 3)) @ L.T
    g = -rng.normal(0, se, R)[:, None] * x
    Sg = g.T @ g / R
    v = np.linalg.solve(Sg, dg)
    m_mc = float(dg @ v)
    # delta method: d(m) = -v' dS v; Var(v' g g' v) / R per draw
    se_m = float(np.std((g @ v) ** 2) / np.sqrt(R))
    assert abs(m_mc - m_sym) <= 4.5 * se_m

"""Ground truth: mu-GDP privacy profile delta(eps), its inverse, and dp-accounting's PLD."""

import math

import numpy as np
import pytest
import sympy as sp
from scipy import integrate
from scipy.stats import norm

from semi_core.audit import gaussian_mechanism_epsilon, gdp_delta, gdp_epsilon, gdp_log_delta


def _sympy_profile():
    """Derive delta(eps) = P1(L > eps) - e^eps P0(L > eps) for N(mu,1) vs N(0,1) with SymPy."""
    x, mu, eps = sp.symbols("x mu epsilon", positive=True)
    p0 = sp.exp(-x**2 / 2) / sp.sqrt(2 * sp.pi)
    p1 = sp.exp(-(x - mu) ** 2 / 2) / sp.sqrt(2 * sp.pi)
    loss = sp.simplify(sp.log(p1 / p0))  # privacy loss mu x - mu^2/2, increasing in x
    x_star = sp.solve(sp.Eq(sp.expand(loss), eps), x)[0]
    Phi = lambda z: (1 + sp.erf(z / sp.sqrt(2))) / 2  # noqa: E731
    delta = (1 - Phi(x_star - mu)) - sp.exp(eps) * (1 - Phi(x_star))
    return sp.lambdify((eps, mu), delta, "mpmath"), sp.simplify(x_star - (eps / mu + mu / 2))


def test_sympy_derivation_matches_closed_form():
    import mpmath as mp

    mp.mp.dps = 150  # the SymPy form cancels catastrophically in double precision
    f, residual = _sympy_profile()
    assert residual == 0  # the LR region is x > eps/mu + mu/2
    for mu in (0.3, 1.0, 2.5):
        for e in (0.0, 0.5, 2.0, 5.0):
            assert float(gdp_delta(e, mu)) == pytest.approx(
                float(f(mp.mpf(e), mp.mpf(mu))), rel=1e-10, abs=1e-300)


def test_quadrature_hockey_stick():
    # delta(eps) = int max(0, p1 - e^eps p0) dx, by adaptive quadrature (error ~1e-10)
    for mu in (0.5, 1.0, 3.0):
        for e in (0.1, 1.0, 4.0):
            val, err = integrate.quad(
                lambda x, mu=mu, e=e: max(0.0, norm.pdf(x, mu) - math.exp(e) * norm.pdf(x)),
                -20, 20 + mu, points=[e / mu + mu / 2], limit=200)
            assert float(gdp_delta(e, mu)) == pytest.approx(val, abs=10 * err + 1e-12)


def test_monte_carlo_profile(rng):
    # delta(eps) = E_{x~N(mu,1)} [(1 - e^{eps - L(x)})_+], L = mu x - mu^2/2; 4.5 SE tolerance
    mu, e, n = 1.5, 1.0, 400_000
    x = rng.normal(mu, 1.0, n)
    h = np.maximum(0.0, 1.0 - np.exp(e - (mu * x - mu**2 / 2)))
    se = h.std(ddof=1) / math.sqrt(n)
    assert abs(h.mean() - float(gdp_delta(e, mu))) < 4.5 * se


@pytest.mark.parametrize("mu", [0.05, 0.3, 1.0, 1.5, 4.0, 20.0])
@pytest.mark.parametrize("delta", [0.2, 0.05, 1e-5, 1e-12, 1e-100])
def test_epsilon_inverts_delta(mu, delta):
    e = gdp_epsilon(mu, delta)
    if delta >= 2 * norm.cdf(mu / 2) - 1:
        assert e == 0.0
    else:
        assert e > 0
        # relative accuracy in log space (log delta is resolved to ~1e-12 by the root finder)
        assert float(gdp_log_delta(e, mu)) == pytest.approx(math.log(delta), rel=1e-9, abs=1e-9)


def test_log_space_tail_matches_mpmath():
    import mpmath as mp

    mp.mp.dps = 60
    mu, e = 1.0, 30.0
    ref = (mp.ncdf(-e / mu + mu / 2) - mp.e**e * mp.ncdf(-e / mu - mu / 2))
    assert float(gdp_log_delta(e, mu)) == pytest.approx(float(mp.log(ref)), rel=1e-10)
    # naive evaluation underflows/cancels here; ours does not
    assert np.isfinite(gdp_log_delta(e, mu))


def test_edge_cases():
    assert gdp_epsilon(0.0, 1e-5) == 0.0
    assert gdp_epsilon(1.0, 0.0) == math.inf
    assert gdp_epsilon(1.0, 0.5) == 0.0  # delta(0) = 2 Phi(1/2) - 1 = 0.383 < 0.5
    assert gaussian_mechanism_epsilon(2.0, 1.0, 1e-5) == gdp_epsilon(0.5, 1e-5)
    assert float(gdp_delta(1.0, 0.0)) == 0.0


@pytest.mark.parametrize(("mu", "delta"), [(0.3, 1e-3), (1.0, 1e-5), (2.0, 1e-8)])
def test_against_dp_accounting_pld(mu, delta):
    pld_mod = pytest.importorskip("dp_accounting.pld.privacy_loss_distribution")
    interval = 1e-4
    pld = pld_mod.from_gaussian_mechanism(standard_deviation=1.0 / mu, sensitivity=1.0,
                                          value_discretization_interval=interval)
    eps_pld = pld.get_epsilon_for_delta(delta)
    eps = gdp_epsilon(mu, delta)
    # The PLD is discretised pessimistically with step 1e-4 in the privacy loss, so it may only
    # over-estimate, by at most one step (observed: < 2e-8).
    assert eps - 1e-9 <= eps_pld <= eps + interval
    d_pld = pld.get_delta_for_epsilon(eps)
    assert d_pld == pytest.approx(delta, rel=1e-3)


@pytest.mark.parametrize("bad", [-0.1, 1.0, 1.5, float("nan")])
def test_bad_delta(bad):
    with pytest.raises(ValueError, match="delta"):
        gdp_epsilon(1.0, bad)


def test_bad_mu_and_types():
    with pytest.raises(ValueError, match="mu"):
        gdp_epsilon(-1.0, 1e-5)
    with pytest.raises(TypeError, match="delta"):
        gdp_epsilon(1.0, "0.1")
    with pytest.raises(ValueError, match="eps"):
        gdp_delta(-1.0, 1.0)
    with pytest.raises(ValueError, match="sigma"):
        gaussian_mechanism_epsilon(0.0, 1.0, 1e-5)


@pytest.mark.parametrize("mu", [1e-9, 1e-7, 2e-5, 1e-3, 0.1, 3.0, 40.0])
def test_log_delta_tail_against_mpmath(mu):
    """Tail eps/mu >> mu: the log_ndtr difference cancels (it returned NaN at mu = 2e-5, eps = 1;
    the erfcx difference itself cancelled at mu = 1e-9, eps = 0.00686: midpoint form there);
    the erfcx form must match 60-digit mpmath to 1e-10 relative."""
    import mpmath as mp

    mp.mp.dps = 60
    for e in (1e-6, 0.00686, 0.5, 1.0, 20.0, 200.0):
        em, mm = mp.mpf(e), mp.mpf(mu)
        want = float(mp.log(mp.ncdf(-em / mm + mm / 2) - mp.exp(em) * mp.ncdf(-em / mm - mm / 2)))
        got = float(gdp_log_delta(e, mu))
        assert got == pytest.approx(want, rel=1e-10, abs=1e-10), (mu, e)

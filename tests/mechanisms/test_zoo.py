"""The seed's mean mechanisms (eq. 5-7), their Gaussian calibration and user callables."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import integrate

from semi_core.mechanisms.base import GroundTruthUnknown, is_mechanism
from semi_core.mechanisms.zoo import (
    SEED_PAIR,
    ZOO,
    CallableMechanism,
    DPGaussian,
    DPLaplace,
    NonDPLaplace1,
    RandomizedResponse,
    gaussian_sigma,
    make_zoo_mechanism,
)
from semi_core.stats.gdp import gdp_delta


def test_gaussian_calibration_is_exact():
    for eps, delta in ((0.01, 1e-5), (0.1, 1e-5), (1.0, 1e-3)):
        sigma = gaussian_sigma(eps / 2, delta / 2)
        assert float(gdp_delta(eps / 2, 1 / sigma)) == pytest.approx(delta / 2, rel=1e-8)
        assert DPGaussian(eps, delta).scale == pytest.approx(sigma)


@pytest.mark.parametrize("name", sorted(ZOO))
def test_outputs_shape_and_protocol(name, rng):
    m = make_zoo_mechanism(name, 0.1)
    out = m.sample(SEED_PAIR[1], 50, rng)
    assert out.shape == (50, 1) and np.all(np.isfinite(out))
    assert isinstance(m(SEED_PAIR[0], rng), float)
    assert is_mechanism(m)
    rel = m.release(np.array([0, 1, 1, 0]), 1, rng)
    assert rel.shape == (4, 1, 1) and m.log_lr_steps(rel).shape == (4, 1)
    with pytest.raises(GroundTruthUnknown):
        m.epsilon(1e-5)


@pytest.mark.parametrize("make,lo,hi", [(NonDPLaplace1, -300, 50), (DPLaplace, -5, 5),
                                        (DPLaplace, 20, 400)])
def test_logpdf_matches_monte_carlo(make, lo, hi, rng):
    """P(lo < o < hi) from the (quadrature) density vs 200k draws, 4.5 binomial SE."""
    m = make(0.01)
    R = 200_000
    for data in SEED_PAIR:
        o = m.sample(data, R, rng)[:, 0]
        p_mc = np.mean((o > lo) & (o < hi))
        p = integrate.quad(lambda x, d=data: np.exp(m.logpdf(np.array([x]), d)[0]), lo, hi,
                           limit=400, points=[0.0, 0.5, 1.0])[0]
        assert abs(p - p_mc) <= 4.5 * np.sqrt(max(p * (1 - p), 1 / R) / R)


def test_dataset_validation():
    m = DPLaplace(0.1)
    with pytest.raises(ValueError, match="records"):
        m.sample([2.0], 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="at least one"):
        m.sample([], 3, np.random.default_rng(0))
    with pytest.raises(ValueError, match="mechanism must be one of"):
        make_zoo_mechanism("nope", 0.1)


def test_callable_wrapper_validates_outputs(rng):
    calls = {"n": 0}

    def shape_changer(dataset, rng):
        calls["n"] += 1
        return np.zeros(1 if calls["n"] < 3 else 2)

    with pytest.raises(ValueError, match="changed its output shape"):
        CallableMechanism(shape_changer).sample([0.0], 5, rng)
    with pytest.raises(ValueError, match="NaN"):
        CallableMechanism(lambda d, r: float("nan")).sample([0.0], 1, rng)
    with pytest.raises(ValueError, match="numeric"):
        CallableMechanism(lambda d, r: "x").sample([0.0], 1, rng)
    with pytest.raises(TypeError, match="callable"):
        CallableMechanism(3)
    out = CallableMechanism(lambda d, r: [1.0, 2.0]).sample([0.0], 4, rng)
    assert out.shape == (4, 2)


def test_randomized_response_is_exactly_dp():
    rr = RandomizedResponse(1.0, 1e-3)
    p = rr.p
    assert p == pytest.approx(np.exp(1.0) * (1 - p) + 1e-3)  # equality on the event {1}
    assert rr.epsilon(1e-3) == pytest.approx(1.0)


@pytest.mark.parametrize("eps", [1.0, 700.0, 710.0, 1000.0, 1e6])
@pytest.mark.parametrize("delta", [0.0, 1e-5, 0.5])
def test_randomized_response_ground_truth_is_stable(eps, delta):
    """Past eps ~ 709.8 e^eps overflows: p*, the log-LR and eps(delta) come from log q."""
    rr = RandomizedResponse(eps, delta)
    assert 0.5 <= rr.p <= 1.0 and np.isfinite(rr.log_q)
    # log q = log(1 - delta) - log(1 + e^eps): checked against the direct formula where exact
    direct = np.log1p(-delta) - (eps + np.log1p(np.exp(-eps)))
    assert rr.log_q == pytest.approx(direct, rel=1e-14)
    # the ground truth at the design delta is eps itself (relative 1e-12), never 0 or NaN
    assert rr.epsilon(delta) == pytest.approx(eps, rel=1e-12)
    assert rr.epsilon(0.0) >= rr.epsilon(delta)
    llr = rr.log_lr_steps(np.array([[[1.0]], [[0.0]]]))[:, 0]
    assert np.all(np.isfinite(llr)) and llr[0] == -llr[1] >= eps * (1 - 1e-12)
    params = rr.params()
    assert all(np.isfinite(v) for v in (params["p"], params["log_flip_probability"]))
    member = np.arange(2000) % 2 == 0
    rel = rr.release(member, np.ones(2000, int), np.random.default_rng(0))
    flips = np.mean((rel[:, 0, 0] > 0.5) != member)
    # flips ~ Binomial(2000, q): q = (1-delta)/(1+e^eps); 5 SE (+1/2000) tolerance
    q = rr.q
    assert abs(flips - q) <= 5 * np.sqrt(q * (1 - q) / 2000) + 1 / 2000


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -1.0, "1", True, None])
def test_randomized_response_refuses_bad_epsilon(bad):
    with pytest.raises((TypeError, ValueError), match="epsilon"):
        RandomizedResponse(bad)


@pytest.mark.parametrize("name", sorted(ZOO))
@pytest.mark.parametrize("eps", [1e-300, 1e-7, 2e6, 1e300, float("nan"), float("inf"), 0.0])
def test_zoo_refuses_epsilon_outside_range(name, eps):
    with pytest.raises(ValueError, match="epsilon"):
        make_zoo_mechanism(name, eps)


@pytest.mark.parametrize("name", sorted(ZOO))
@pytest.mark.parametrize("eps", [1e-6, 1e6])
def test_zoo_extreme_epsilons_are_finite(name, eps, rng):
    m = make_zoo_mechanism(name, eps)
    rel = m.release(np.array([0, 1, 1, 0]), 1, rng)
    assert np.all(np.isfinite(rel)) and np.all(np.isfinite(m.log_lr_steps(rel)))

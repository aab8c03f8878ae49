"""Soundness of the default method on every score family: over-claims within the binomial interval.

An audit over-claims when its eps_LB exceeds the exact eps(delta) of the mechanism that drew the
scores. At failure probability ``xi`` a valid method over-claims in at most a fraction ``xi`` of
independent audits; allowed: the upper end of the binomial interval at 1e-3,
``binom.ppf(1 - 1e-3, audits, xi)`` (for 5,000 audits at xi = .05: 299 of an expected <= 250).

Families: Gaussian (mu = 1: GDP), null scores (eps = 0: the boundary, where the joint test spends
its level), Laplace (eps0 = 1: pure DP, not GDP), randomized response (two score values),
two-sided geometric noise (integer scores, heavy ties) and Binomial(6, .75) vs (6, .25) (seven
values). The slow tier runs 5,000 audits per family, the tie families at three fixed seeds; the
fast tier 300 audits per family.
"""

import math

import numpy as np
import pytest
from scipy.optimize import brentq
from scipy.stats import binom

from semi_core.audit import audit_batch, gdp_epsilon
from semi_core.audit.bounds import DEFAULT_METHOD
from semi_core.mechanisms.zoo import RandomizedResponse

DELTA, XI = 1e-5, 0.05
RR = RandomizedResponse(1.0)
_A = math.exp(-1.0)  # two-sided geometric: P(z) proportional to a^|z|, eps0 = 1


def _geometric(rng, shape):
    # the difference of two i.i.d. geometric laws is the two-sided geometric law
    return (rng.geometric(1.0 - _A, shape) - rng.geometric(1.0 - _A, shape)).astype(float)


def _geometric_eps(delta):
    r"""Shift by 1: the likelihood ratio is :math:`e^{\pm1}` (:math:`e` from 1 up), so
    :math:`\delta(\varepsilon)=P(Z\ge0)-e^\varepsilon P(Z\ge1)=(1-e^\varepsilon a)/(1+a)` and
    :math:`\varepsilon(\delta)=\log((1-\delta(1+a))/a)`."""
    return math.log((1.0 - delta * (1.0 + _A)) / _A)


def _binom6_eps(delta):
    k = np.arange(7)
    p1, p0 = binom.pmf(k, 6, 0.75), binom.pmf(k, 6, 0.25)

    def d(e):
        return max(np.maximum(p1 - math.exp(e) * p0, 0).sum(),
                   np.maximum(p0 - math.exp(e) * p1, 0).sum())
    return brentq(lambda e: d(e) - delta, 0.0, 50.0, xtol=1e-13)


FAMILIES = {
    "gaussian": (lambda r, s: (r.normal(1, 1, s), r.normal(0, 1, s)),
                 lambda: gdp_epsilon(1.0, DELTA)),
    "null": (lambda r, s: (r.normal(0, 1, s), r.normal(0, 1, s)), lambda: 0.0),
    # Laplace(b = 1), shift 1: delta(eps) = 1 - e^{(eps - 1)/2}
    "laplace": (lambda r, s: (r.laplace(1, 1, s), r.laplace(0, 1, s)),
                lambda: 1.0 + 2.0 * math.log1p(-DELTA)),
    "randomized response": (lambda r, s: ((r.random(s) >= RR.q).astype(float),
                                          (r.random(s) < RR.q).astype(float)),
                            lambda: RR.epsilon(DELTA)),
    "geometric": (lambda r, s: (1.0 + _geometric(r, s), _geometric(r, s)),
                  lambda: _geometric_eps(DELTA)),
    "binomial(6)": (lambda r, s: (r.binomial(6, .75, s).astype(float),
                                  r.binomial(6, .25, s).astype(float)),
                    lambda: _binom6_eps(DELTA)),
}
TIES = ("randomized response", "geometric", "binomial(6)")


def _over_claims(family, audits, n, seed):
    sample, truth = FAMILIES[family]
    m, x = sample(np.random.default_rng(np.random.SeedSequence([35, seed, len(family)])),
                  (audits, n))
    eps = audit_batch(m, x, delta=DELTA, failure_prob=XI)  # the default method
    return int(np.sum(eps > truth() + 1e-9)), eps


def _allowed(audits):
    return int(binom.ppf(1.0 - 1e-3, audits, XI))


def test_the_default_is_joint_and_the_exact_epsilons_are_right():
    assert DEFAULT_METHOD == "joint"
    # the geometric closed form against the privacy profile summed over the support
    z = np.arange(-80, 81)
    p0 = (1 - _A) / (1 + _A) * _A ** np.abs(z)
    p1 = (1 - _A) / (1 + _A) * _A ** np.abs(z - 1)
    e = _geometric_eps(DELTA)
    assert abs(np.maximum(p1 - math.exp(e) * p0, 0).sum() - DELTA) < 1e-15
    # randomized response: the bit's two probabilities attain delta at eps(delta)
    p = 1.0 - RR.q
    assert abs(p - math.exp(RR.epsilon(DELTA)) * (1 - p) - DELTA) < 1e-12


@pytest.mark.parametrize("family", list(FAMILIES))
def test_default_sound_fast(family):
    over, eps = _over_claims(family, audits=300, n=200, seed=1)
    assert over <= _allowed(300), (family, over)
    if family != "null":  # and not vacuous
        assert np.median(eps) > 0.2, family


@pytest.mark.slow
@pytest.mark.parametrize("family", list(FAMILIES))
def test_default_sound_5000_audits(family):
    seeds = (2, 3, 4) if family in TIES else (2,)
    for seed in seeds:
        over, _ = _over_claims(family, audits=5000, n=500, seed=seed)
        assert over <= _allowed(5000), (family, seed, over)

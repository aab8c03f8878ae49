"""Property tests of every certifying method (the registry :data:`semi_core.audit.bounds.METHODS`).

1. Any input, valid or not (hypothesis: lengths 0..60, NaN, infinities, huge values, ties,
   out-of-range delta and failure probabilities, method options): a clean ``ValueError`` /
   ``TypeError``, or an :class:`AuditResult` whose every number is not NaN and whose bound is
   ``>= 0``.
2. Soundness against a known ground truth: scores of a mu-GDP mechanism (member
   ``N(mu, 1)``, non-member ``N(0, 1)``: the Gaussian mechanism's likelihood ratio is monotone in
   the score), so :math:`\\varepsilon(\\delta)` = ``gdp_epsilon(mu, delta)`` exactly. Hypothesis
   draws the configuration (mu, class sizes -- unbalanced and n <= 20 included --, delta, xi,
   method); each configuration runs ``K`` independent audits and the number of bounds above the
   truth must stay within the binomial(K, xi) quantile at level 1e-6 (a sound method fails this
   with probability < 1e-6 per configuration; an unsound one is caught when it over-claims
   often).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy import stats

from semi_core.audit.bounds import METHODS, audit_batch, epsilon_lower_bound
from semi_core.stats.gdp import gdp_epsilon

#: (method, options) pairs: every method of the registry and its certifying variants.
VARIANTS = [
    ("band", {}), ("joint", {}), ("joint", {"sides": "one"}), ("dkw", {}), ("cp", {}), ("cp", {"thresholds": "ranks"}),
    ("cp", {"thresholds": 0.5}), ("gdp", {}), ("gdp", {"gdp_fit": "gaussian"}),
    ("one-run", {}), ("one-run-fdp", {}), ("one-run-fdp", {"tradeoff": "gdp"}),
]
ONE_RUN = ("one-run", "one-run-fdp")
_ONE_RUN_NA = {"tpr_lower", "fpr_upper", "fnr_upper", "tnr_lower"}


def test_every_registered_method_is_covered():
    assert {m for m, _ in VARIANTS} == set(METHODS)


_floats = st.floats(allow_nan=True, allow_infinity=True, width=64)
_scores = st.one_of(
    st.lists(_floats, min_size=0, max_size=60),
    st.lists(st.floats(-5, 5), min_size=1, max_size=60),
    st.lists(st.sampled_from([0.0, 1.0]), min_size=1, max_size=60),
)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=_scores, nm=_scores, variant=st.sampled_from(VARIANTS),
       delta=st.one_of(st.sampled_from([0.0, 1e-5, 0.5, 1.0, -1e-9]), _floats),
       xi=st.one_of(st.sampled_from([1e-12, 0.05, 0.5, 0.6, 0.0]), _floats))
def test_any_input_is_a_clean_error_or_a_number(m, nm, variant, delta, xi):
    method, opts = variant
    try:
        r = epsilon_lower_bound(m, nm, delta=delta, failure_prob=xi, method=method, **opts)
    except (ValueError, TypeError) as exc:
        assert str(exc).strip()
        return
    assert r.epsilon_lower_bound >= 0 and not math.isnan(r.epsilon_lower_bound)
    # one-run bounds no error rate: its four rate bounds are NaN as "not applicable"
    na = _ONE_RUN_NA if method in ONE_RUN else set()
    for f in dataclasses.fields(r):
        v = getattr(r, f.name)
        if isinstance(v, float) and f.name not in na:
            assert not math.isnan(v), (f.name, r)


def _one_run(member, nonmember, delta, xi, method, opts):
    """One-run bound, or None where the run is refused: an empty class, or the balance check
    (level 0.001) refusing a Bernoulli(1/2) draw -- a refusal is never a certificate."""
    if member.size == 0 or nonmember.size == 0:
        return None
    try:
        return epsilon_lower_bound(member, nonmember, delta=delta, failure_prob=xi,
                                   method=method, **opts).epsilon_lower_bound
    except ValueError as exc:
        assert "probability 1/2" in str(exc)
        return None


def _draw(rng, mu, n1, n0, K):
    return rng.normal(mu, 1.0, (K, n1)), rng.normal(0.0, 1.0, (K, n0))


#: Audits per hypothesis configuration.
K = 40


@pytest.mark.slow
@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(variant=st.sampled_from(VARIANTS), mu=st.sampled_from([0.0, 0.5, 1.0, 2.0, 4.0]),
       n1=st.integers(2, 150), n0=st.integers(2, 150),
       delta=st.sampled_from([0.0, 1e-5, 1e-2]), xi=st.sampled_from([0.05, 0.2, 0.5]),
       seed=st.integers(0, 2**32 - 1))
def test_never_above_the_ground_truth_beyond_xi(variant, mu, n1, n0, delta, xi, seed):
    method, opts = variant
    if delta == 0.0 and (method == "gdp" or opts.get("tradeoff") == "gdp"):
        delta = 1e-5  # these need delta > 0 (refused otherwise: property 1)
    truth = gdp_epsilon(mu, delta)
    rng = np.random.default_rng(seed)
    if method in ONE_RUN:
        eps = []
        m_total = n1 + n0
        for _ in range(K):
            b = rng.random(m_total) < 0.5  # Bernoulli(1/2) inclusion (the theorem's premise)
            s = rng.normal(0.0, 1.0, m_total) + mu * b
            eps.append(_one_run(s[b], s[~b], delta, xi, method, opts))
        eps = np.asarray([e for e in eps if e is not None])
    else:
        mem, non = _draw(rng, mu, n1, n0, K)
        eps = audit_batch(mem, non, delta=delta, failure_prob=xi, method=method,
                          seed=int(rng.integers(2**31)), **opts)
    assert not np.isnan(eps).any() and (eps >= 0).all()
    over = int(np.sum(eps > truth * (1 + 1e-9) + 1e-12))
    allowed = int(stats.binom.ppf(1 - 1e-6, max(eps.size, 1), xi))
    assert over <= allowed, (method, opts, mu, n1, n0, delta, xi, truth, np.sort(eps)[-5:])


@pytest.mark.parametrize("method, opts", VARIANTS)
def test_null_data_never_certify_much(method, opts):
    """mu = 0 (no leakage): the truth is 0, every bound above 0 is an over-claim; over 200
    audits at xi = 0.05 the count stays within the binomial quantile at level 1e-6."""
    rng = np.random.default_rng(7)
    delta = 1e-5 if method in ("gdp", "one-run-fdp") else 0.0
    if method in ONE_RUN:
        eps = []
        for _ in range(200):
            b = rng.random(40) < 0.5
            s = rng.normal(size=40)
            eps.append(_one_run(s[b], s[~b], delta, 0.05, method, opts))
        eps = np.asarray([e for e in eps if e is not None])
    else:
        mem, non = _draw(rng, 0.0, 15, 20, 200)
        eps = audit_batch(mem, non, delta=delta, failure_prob=0.05, method=method, **opts)
    assert int(np.sum(eps > 0)) <= int(stats.binom.ppf(1 - 1e-6, eps.size, 0.05))

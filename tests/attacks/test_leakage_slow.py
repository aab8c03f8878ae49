"""Seed-size Monte Carlo checks (n = 1000, d = 5000 Bernoulli, seed §5 / App. E): theory vs
simulation within 4.5 standard errors (``tpr_at_fpr_se`` delta-method SEs, binomial SEs for the
Bayes advantage)."""

from __future__ import annotations

import pytest

from semi_core.attacks.leakage import simulate_leakage, summarize_leakage
from semi_core.mechanisms.per_datum import PerDatumMean, seed_bernoulli, seed_targets

pytestmark = pytest.mark.slow
K = 4.5


@pytest.fixture(scope="module")
def seed_setup():
    law = seed_bernoulli(5000, seed=0)
    return law, seed_targets(law, seed=0)


@pytest.mark.parametrize("name", ["easy", "medium", "hard"])
def test_seed_targets_power_and_leakage(seed_setup, name):
    law, tg = seed_setup
    mech = PerDatumMean(law, 1000, tg[name])
    res = simulate_leakage(mech, 10000, 100 + len(name), attacks=("exact", "approx"))
    s = summarize_leakage(res, (0.01, 0.1))
    for a in (0.01, 0.1):
        th = mech.theory(a)
        for att in ("exact", "approx"):
            got, se = s[att]["tpr_at_fpr"][str(a)], s[att]["tpr_se"][str(a)]
            assert abs(got - th["power"]) < K * se, (name, att, a, got, th["power"], se)
    adv, se = s["exact"]["bayes_advantage"], s["exact"]["bayes_advantage_se"]
    assert abs(adv - mech.theory()["leakage"]) < K * se


@pytest.mark.parametrize("rho", [0.1, 0.25, 0.5, 0.75])
def test_seed_subsampling_corrected_not_paper(seed_setup, rho):
    law, tg = seed_setup
    mech = PerDatumMean(law, 1000, tg["easy"], rho=rho)
    res = simulate_leakage(mech, 8000, int(rho * 100), attacks=("exact",))
    s = summarize_leakage(res, (0.1,))["exact"]
    th = mech.theory(0.1)
    got, se = s["tpr_at_fpr"]["0.1"], s["tpr_se"]["0.1"]
    assert abs(got - th["power"]) < K * se
    assert abs(s["bayes_advantage"] - th["leakage"]) < K * s["bayes_advantage_se"]
    if rho <= 0.5:
        assert abs(s["bayes_advantage"] - th["paper"]["leakage"]) > 8 * s["bayes_advantage_se"]

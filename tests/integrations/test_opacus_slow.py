"""Slow tier: repeated audits of the correct implementation (false alarms) and detection of
every bug of the zoo through Opacus' real optimizer."""

import pytest

pytest.importorskip("opacus")
torch = pytest.importorskip("torch")

from semi_core.integrations.opacus import audit_opacus  # noqa: E402
from semi_core.sgd.bugs import BUGS  # noqa: E402

pytestmark = pytest.mark.slow


def test_correct_implementation_false_alarms(problem):
    """40 audits (400 runs, 4 Dirac canaries each): the nonparametric refutation never fires;
    the GDP route (valid here: exactly Gaussian scores) fires at most at its nominal rate
    (each audit <= failure_prob = 0.05; 40 audits: P(>= 7 flags) < 0.01 at rate 0.05)."""
    model_fn, data = problem
    flags = flags_gdp = 0
    for seed in range(40):
        rep = audit_opacus(model_fn, data, noise_multiplier=1.5, max_grad_norm=1.0,
                           batch_size=16, steps=3, tau=2, rounds=400, delta=1e-5,
                           canaries_per_run=4, engine="batched", semi=False, seed=100 + seed)
        flags += rep.claim_refuted
        flags_gdp += rep.claim_refuted_gdp
    assert flags == 0
    assert flags_gdp <= 6


def test_correct_opacus_path_not_flagged(problem):
    model_fn, data = problem
    for seed in range(3):
        rep = audit_opacus(model_fn, data, noise_multiplier=1.0, max_grad_norm=1.0,
                           batch_size=16, steps=3, tau=2, rounds=300, delta=1e-5, semi=False,
                           seed=200 + seed)
        assert not rep.claim_refuted


@pytest.mark.parametrize("bug", list(BUGS))
def test_every_bug_detected_through_opacus(problem, bug):
    model_fn, data = problem
    clip = 2.0 if bug in ("noise_unscaled", "batch_clip") else 1.0
    sigma = 6.0 if bug == "noise_reused" else 2.0   # a claim (eps ~ 1.3) that 400 runs can refute
    rep = audit_opacus(model_fn, data, noise_multiplier=sigma, max_grad_norm=clip, batch_size=16,
                       steps=3, tau=2, rounds=400, delta=1e-5, bug=bug, semi=False, seed=7)
    assert rep.epsilon_true > rep.epsilon_claimed
    assert rep.claim_refuted_gdp
    if bug in ("noise_reused", "sampling_rate_misreport"):
        assert rep.claim_refuted

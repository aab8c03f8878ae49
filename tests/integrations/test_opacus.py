"""The Opacus adapter: agreement with the batched trainer, bug drop-ins, refutation, accounting.

Monte Carlo tolerances: 4.5 standard errors (mean: sd/sqrt(N); sd: sd/sqrt(2(N-1))).
"""

import json
import math

import numpy as np
import pytest

pytest.importorskip("opacus")
torch = pytest.importorskip("torch")

from semi_core.integrations.opacus import (  # noqa: E402
    OpacusMechanism,
    audit_opacus,
    opacus_accountant_epsilon,
    poisson_pld_epsilon,
    prepare_opacus_setup,
)
from semi_core.sgd.bugs import BUGS, get_bug  # noqa: E402
from semi_core.sgd.dirac import WhiteBoxMechanism, draw_runs  # noqa: E402

from .conftest import dpsgd_cfg as cfg  # noqa: E402

MC = 4.5


def plan_runs(setup, *, rounds, tau, seed):
    """The Crafter's draws of ``rounds`` runs (bits i.i.d. Bernoulli(1/2))."""
    rng = np.random.default_rng(seed)
    return draw_runs(setup, rng.random(rounds * setup.k) < 0.5, tau, rng)


def train_white_box(setup, runs, *, bug=None):
    return WhiteBoxMechanism(setup, bug=bug).train_runs(runs)


def train_opacus(ctx, runs, *, bug=None):
    return OpacusMechanism(ctx, bug=bug).train_runs(runs)


def s_tau(ctx, traj, tau):
    c = ctx.setup.cfg
    j = int(ctx.setup.coords[0])
    return (-c.batch_size / (c.lr * c.clip) * (traj[:, tau, j] - traj[:, tau - 1, j])).numpy()


@pytest.mark.parametrize("canary,bug", [("dirac", None), ("dirac", "batch_clip"),
                                        ("dirac", "clip_mismatch"),
                                        ("gradient-mahalanobis", None), ("input", None)])
def test_noiseless_runs_are_identical(problem, canary, bug):
    """sigma = 0: Opacus' real clipping/aggregation path and our trainer give the same
    trajectories on the same plan (the drop-in bugs included)."""
    model_fn, data = problem
    ctx = prepare_opacus_setup(model_fn, data, cfg=cfg(0.0, clip=0.5), canary=canary, seed=0)
    plan = plan_runs(ctx.setup, rounds=6, tau=2, seed=2)
    ours = train_white_box(ctx.setup, plan, bug=get_bug(bug))
    theirs = train_opacus(ctx, plan, bug=get_bug(bug))
    # Opacus clips with C/(|g| + 1e-6): agreement to ~1e-6 relative
    torch.testing.assert_close(theirs, ours, rtol=0, atol=2e-6)


def test_adapter_and_batched_agree_in_distribution(problem):
    from scipy import stats

    model_fn, data = problem
    sigma = 1.5
    ctx = prepare_opacus_setup(model_fn, data, cfg=cfg(sigma), canary="dirac", seed=0)
    plan_o = plan_runs(ctx.setup, rounds=160, tau=2, seed=21)
    plan_b = plan_runs(ctx.setup, rounds=600, tau=2, seed=22)
    t_o = train_opacus(ctx, plan_o)
    t_b = train_white_box(ctx.setup, plan_b)
    so, sb = s_tau(ctx, t_o, 2), s_tau(ctx, t_b, 2)
    for mem in (True, False):
        a, b = so[plan_o.member[:, 0] == mem], sb[plan_b.member[:, 0] == mem]
        assert abs(a.mean() - b.mean()) < MC * sigma * math.sqrt(1 / a.size + 1 / b.size)
        assert abs(a.std() - b.std()) < MC * sigma * math.sqrt(1 / (2 * a.size) + 1 / (2 * b.size))
        assert stats.ks_2samp(a, b).pvalue > 1e-4
    # a natural coordinate of the final model
    assert stats.ks_2samp(t_o[:, -1, 0].numpy(), t_b[:, -1, 0].numpy()).pvalue > 1e-4


@pytest.mark.parametrize("bug,clip,sd", [
    ("noise_unscaled", 2.0, lambda s, c: s / c),
    ("wrong_batch_size", 1.0, lambda s, c: s / BUGS["wrong_batch_size"].factor),
])
def test_opacus_noise_bugs_change_the_noise_as_stated(problem, bug, clip, sd):
    model_fn, data = problem
    sigma = 2.0
    ctx = prepare_opacus_setup(model_fn, data, cfg=cfg(sigma, clip=clip), canary="dirac", seed=0)
    plan = plan_runs(ctx.setup, rounds=100, tau=2, seed=4)
    s = s_tau(ctx, train_opacus(ctx, plan, bug=get_bug(bug)), 2)
    centred = s - np.where(plan.member[:, 0], 1.0, -1.0)
    want = sd(sigma, clip)
    assert abs(centred.std(ddof=1) - want) < MC * want / math.sqrt(2 * (s.size - 1))


def test_opacus_noise_reused_is_exact(problem):
    model_fn, data = problem
    ctx = prepare_opacus_setup(model_fn, data, cfg=cfg(3.0), canary="dirac", seed=0)
    plan = plan_runs(ctx.setup, rounds=10, tau=2, seed=4)
    traj = train_opacus(ctx, plan, bug=get_bug("noise_reused"))
    c = ctx.setup.cfg
    j = int(ctx.setup.coords[0])
    s = (-c.batch_size / (c.lr * c.clip) * (traj[:, 1:, j] - traj[:, :-1, j])).numpy()
    contrast = s[:, 1] - s[:, [0, 2]].mean(1)
    np.testing.assert_allclose(contrast, np.where(plan.member[:, 0], 1.0, -1.0), atol=1e-5)


@pytest.mark.parametrize("canary,bug", [("dirac", None), ("dirac", "noise_reused"),
                                        ("dirac", "clip_mismatch"), ("input", None)])
def test_one_make_private_per_chunk_is_bit_identical(problem, canary, bug):
    """Fixed batches: the runs of a chunk share one ``make_private`` (reset between runs);
    every run's trajectory equals, bit for bit, the run trained alone (its own
    ``make_private``, a fresh model and generator) -- noise, clipping and the bug zoo's per-run
    state (``noise_reused``'s cached noise) included."""
    model_fn, data = problem
    ctx = prepare_opacus_setup(model_fn, data, cfg=cfg(1.5), canary=canary, seed=0)
    plan = plan_runs(ctx.setup, rounds=5, tau=2, seed=7)
    together = train_opacus(ctx, plan, bug=get_bug(bug))
    alone = torch.cat([train_opacus(ctx, plan.take(slice(r, r + 1)), bug=get_bug(bug))
                       for r in range(5)])
    assert torch.equal(together, alone)
    assert not torch.equal(together[0], together[1])  # the runs differ (noise re-seeded)


def test_correct_implementation_is_never_flagged(problem):
    """Repeated audits of the correct implementation: the nonparametric refutation never fires
    (its false-alarm probability is at most failure_prob per audit and in practice tiny)."""
    model_fn, data = problem
    for seed in range(4):
        rep = audit_opacus(model_fn, data, noise_multiplier=1.0, max_grad_norm=1.0,
                           batch_size=16, steps=3, tau=2, rounds=300, delta=1e-5,
                           engine="batched", semi=False, seed=seed)
        assert not rep.claim_refuted
        assert rep.refutation["nonparametric"]["epsilon_lower_bound"] <= rep.epsilon_true
    rep = audit_opacus(model_fn, data, noise_multiplier=1.0, max_grad_norm=1.0, batch_size=16,
                       steps=3, tau=2, rounds=100, delta=1e-5, semi=False, seed=9)
    assert not rep.claim_refuted


@pytest.mark.parametrize("bug,epsilon_sigma,clip,rounds", [
    ("noise_reused", 8.0, 1.0, 200),
    ("clip_mismatch", 2.0, 1.0, 200),
    ("batch_clip", 2.0, 2.0, 200),
])
def test_opacus_bugs_are_detected(problem, bug, epsilon_sigma, clip, rounds):
    model_fn, data = problem
    rep = audit_opacus(model_fn, data, noise_multiplier=epsilon_sigma, max_grad_norm=clip,
                       batch_size=16, steps=3, tau=2, rounds=rounds, delta=1e-5, bug=bug,
                       semi=False, seed=1)
    assert rep.claim_refuted_gdp
    assert rep.epsilon_true > rep.epsilon_claimed
    if bug == "noise_reused":
        assert rep.claim_refuted          # nonparametric too: the contrast separates exactly


def test_sampling_rate_misreport_is_refuted(problem):
    model_fn, data = problem
    rep = audit_opacus(model_fn, data, noise_multiplier=1.0, max_grad_norm=1.0, batch_size=16,
                       steps=3, tau=2, rounds=300, delta=1e-5, bug="sampling_rate_misreport",
                       engine="batched", semi=False, seed=0)
    assert rep.epsilon_claimed < rep.epsilon_true
    assert rep.claim_refuted


def test_report_fields_and_warnings(problem):
    model_fn, data = problem
    rep = audit_opacus(model_fn, data, noise_multiplier=2.0, max_grad_norm=1.0, batch_size=16,
                       steps=3, tau=2, rounds=20, delta=1e-5, semi=True, seed=0)
    assert any("secure RNG is off" in w for w in rep.warnings)
    assert any("Secure RNG turned off" in w for w in rep.warnings)     # Opacus' own, kept
    assert set(rep.epsilon_accountant) == {"rdp", "prv"}
    assert {"dirac", "dirac_contrast", "semi_sgd", "semi_max"} <= set(rep.tests)
    assert "replace-one" in rep.neighbouring_relation
    # the result type's display: one line, a tidy summary (one row per test and method)
    line = repr(rep)
    assert line.startswith("OpacusAuditReport(epsilon_claimed=") and "\n" not in line
    tab = rep.summary()
    rows = list(tab)
    assert len(rows) == sum(len(v) for v in rep.bounds.values())
    assert {r["test"] for r in rows} == set(rep.tests)
    assert all(r["refutes"] == (r["epsilon_lower_bound"] > rep.epsilon_claimed) for r in rows)
    # "private" and "too few runs" told apart: the ceiling of each bound at these 20 games
    assert all(r["largest_certifiable"] is not None and r["largest_certifiable"] > 0
               for r in rows)
    assert "rdp" in str(tab) and "<table" in rep._repr_html_()
    json.dumps(rep.to_dict(), default=float)  # still the JSON payload
    d = rep.to_dict()
    assert d["game"]["rounds"] == 20 and "bounds" in d


def test_poisson_sampler_truth_matches_accountant(problem):
    model_fn, data = problem
    rep = audit_opacus(model_fn, data, noise_multiplier=1.0, max_grad_norm=1.0, batch_size=32,
                       steps=3, rounds=20, delta=1e-5, sampler="poisson", seed=0)
    assert "add/remove" in rep.neighbouring_relation
    assert {"dirac_mixture", "dirac_sum"} <= set(rep.tests)
    assert rep.claim_refuted_gdp is None          # mixture scores: the Gaussian route is invalid
    assert rep.refutation["gdp"]["not_applicable"]
    # PLD (dp_accounting) and Opacus' PRV agree on the same add/remove Poisson composition
    assert rep.epsilon_true == pytest.approx(rep.epsilon_claimed, rel=0.05)


def test_accountants_cross_check():
    acc = opacus_accountant_epsilon(1.0, 0.1, 10, 1e-5)
    pld = poisson_pld_epsilon(1.0, 0.1, 10, 1e-5)
    assert acc["prv"] == pytest.approx(pld, rel=0.05)
    assert acc["rdp"] >= pld * 0.99         # RDP is an upper bound
    # no sub-sampling, replace-one: the mu = 2/sigma GDP truth
    from semi_core.sgd.accounting import dpsgd_epsilon

    assert poisson_pld_epsilon(2.0, 1.0, 1, 1e-5, relation="replace_one") == pytest.approx(
        dpsgd_epsilon(2.0, 1e-5), rel=0.01)


def test_same_seed_same_result(problem):
    """Opacus' noise and sampler generators are seeded per run from the audit's SeedSequence."""
    model_fn, data = problem
    kw = dict(noise_multiplier=2.0, max_grad_norm=1.0, batch_size=16, steps=3, tau=2,
              rounds=12, delta=1e-5, semi=False)
    a = audit_opacus(model_fn, data, seed=3, **kw)
    b = audit_opacus(model_fn, data, seed=3, **kw)
    c = audit_opacus(model_fn, data, seed=4, **kw)
    np.testing.assert_array_equal(a.game.stats["dirac"], b.game.stats["dirac"])
    assert not np.array_equal(a.game.stats["dirac"], c.game.stats["dirac"])
    p = dict(kw, sampler="poisson", batch_size=32, rounds=16)
    a = audit_opacus(model_fn, data, seed=3, **p)
    b = audit_opacus(model_fn, data, seed=3, **p)
    np.testing.assert_array_equal(a.game.stats["dirac_mixture"], b.game.stats["dirac_mixture"])


def test_mlp_noiseless_identical_and_dirac_isolated(problem):
    """A two-layer MLP: the Dirac coordinates are first-layer weights of the always-zero
    features (isolated), and Opacus' path equals ours without noise."""
    _, data = problem
    gen = torch.Generator().manual_seed(0)
    base = torch.nn.Sequential(torch.nn.Linear(8, 6), torch.nn.ReLU(),
                               torch.nn.Linear(6, 3)).double()
    with torch.no_grad():
        for p in base.parameters():
            p.copy_(0.3 * torch.randn(p.shape, generator=gen, dtype=p.dtype))
    state = {k: v.clone() for k, v in base.state_dict().items()}

    def model_fn():
        m = torch.nn.Sequential(torch.nn.Linear(8, 6), torch.nn.ReLU(),
                                torch.nn.Linear(6, 3)).double()
        m.load_state_dict(state)
        return m

    ctx = prepare_opacus_setup(model_fn, data, cfg=cfg(0.0), canary="dirac", seed=0,
                               canaries_per_run=3)
    assert ctx.setup.info["dirac_isolated"]
    assert all(int(c) < 48 and int(c) % 8 in (6, 7) for c in ctx.setup.coords)
    plan = plan_runs(ctx.setup, rounds=4, tau=2, seed=2)
    torch.testing.assert_close(train_opacus(ctx, plan), train_white_box(ctx.setup, plan),
                               rtol=0, atol=2e-6)


def test_time_engines_takes_the_audit_configuration(problem):
    """``time_engines`` reads one validated :class:`OpacusAuditConfig` (or its fields as
    keywords, the old call): bad values are refused naming the field, and settings it does not
    time are refused instead of being ignored. Timings vary, so only the payload is checked."""
    from semi_core.integrations.opacus import OpacusAuditConfig, time_engines

    model_fn, data = problem
    small = dict(noise_multiplier=1.0, batch_size=16, steps=2, tau=1, rounds=4,
                 runs_per_chunk=2, semi=False)
    out = time_engines(model_fn, data, opacus_rounds=2, **small)
    assert out["rounds"] == 4 and out["opacus_rounds_timed"] == 2 and out["semi"] is False
    assert out["points"] == 4 * (2 - 1) + 2            # (run, step) pairs + theta_0 per chunk
    assert set(out["scoring_by_semi"]) == {"False", "True", "tau"}
    conf = OpacusAuditConfig(max_grad_norm=1.0, **small)
    assert time_engines(model_fn, data, conf, opacus_rounds=2)["rounds"] == 4
    for bad, name in (({"noise_multiplier": 0.0}, "noise_multiplier"), ({"tau": 3}, "tau"),
                      ({"canary": "input"}, "canary"), ({"bug": "noise_unscaled"}, "bug")):
        with pytest.raises(ValueError, match=name):
            time_engines(model_fn, data, **{**small, **bad})

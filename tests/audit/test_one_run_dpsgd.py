"""One-run DP-SGD audits (semi_core.sgd.one_run): m canaries with Bernoulli(1/2) inclusion in
ONE training run, white-box (Dirac canaries at chosen steps, per-step log-LR) and black-box
(input canaries, final model's loss), certified by one-run and one-run-fdp."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from scipy.stats import binom  # noqa: E402

from semi_core.audit.one_run_fdp import one_run_fdp_p_value  # noqa: E402
from semi_core.sgd.accounting import calibrate_sigma, dpsgd_epsilon  # noqa: E402
from semi_core.sgd.dirac import WhiteBoxMechanism  # noqa: E402
from semi_core.sgd.one_run import (  # noqa: E402
    ONE_RUN_METHODS,
    min_certifying_canaries,
    one_run_black_box,
    one_run_white_box,
    spread_steps,
    synthetic_setup,
)

DELTA = 1e-5
NAMES = [n for n, _, _ in ONE_RUN_METHODS]


@pytest.fixture(scope="module")
def small():
    """m = 60 canaries, 3 steps, eps = 4."""
    torch.set_num_threads(1)
    sigma = calibrate_sigma(4.0, DELTA)
    return synthetic_setup(60, sigma, steps=3, seed=0)


def test_white_box_end_to_end(small):
    res = one_run_white_box(small, seed=1, delta=DELTA)
    assert res.kind == "white-box" and res.m == 60 and res.scores.shape == (60,)
    assert set(res.by_method()) == set(NAMES)
    assert all(np.isfinite(v) and v >= 0 for v in res.by_method().values())
    assert res.epsilon_true == pytest.approx(4.0, rel=1e-6)
    np.testing.assert_array_equal(res.tau, spread_steps(60, 3))
    assert set(res.tau.tolist()) == {1, 2, 3}           # spread over the whole run
    # white-box Dirac scores: members' scores are shifted up by 4/sigma^2 on average
    assert res.scores[res.member].mean() > res.scores[~res.member].mean()
    assert res.to_dict()["m"] == 60


def test_white_box_semi_sgd_score(small):
    res = one_run_white_box(small, seed=1, delta=DELTA, score="semi_sgd")
    base = one_run_white_box(small, seed=1, delta=DELTA)
    np.testing.assert_array_equal(res.member, base.member)
    # SeMI-SGD's log-LR ranks the canaries like the optimal Dirac LR (same update, same step)
    rho = np.corrcoef(res.scores, base.scores)[0, 1]
    assert rho > 0.9


def test_black_box_end_to_end(small):
    res = one_run_black_box(small, m=60, seed=2, delta=DELTA)
    assert res.kind == "black-box" and res.scores.shape == (60,)
    assert np.all(res.scores <= 0)                      # negative losses
    assert all(np.isfinite(v) and v >= 0 for v in res.by_method().values())
    assert res.epsilon_true == pytest.approx(dpsgd_epsilon(small.cfg.sigma_dp, DELTA))


def test_same_seed_same_result(small):
    a = one_run_white_box(small, seed=7, delta=DELTA)
    b = one_run_white_box(small, seed=7, delta=DELTA)
    np.testing.assert_array_equal(a.scores, b.scores)
    np.testing.assert_array_equal(a.member, b.member)
    assert a.by_method() == b.by_method()
    c = one_run_white_box(small, seed=8, delta=DELTA)
    assert not np.array_equal(a.scores, c.scores)
    x = one_run_black_box(small, m=60, seed=7, delta=DELTA)
    y = one_run_black_box(small, m=60, seed=7, delta=DELTA)
    np.testing.assert_array_equal(x.scores, y.scores)
    assert x.by_method() == y.by_method()


def test_white_box_never_overclaims_over_seeds(small):
    """eps_LB <= eps_true for 10 seeds: each bound over-claims with probability <= 0.05 per
    run, so more than binom.isf(1e-3, 10, .05) = 3 over-claims of one method would refute it
    at level 1e-3 (a correct implementation fails this with probability < 1e-3)."""
    allowed = int(binom.isf(1e-3, 10, 0.05))
    over = dict.fromkeys(NAMES, 0)
    for seed in range(10):
        res = one_run_white_box(small, seed=seed, delta=DELTA)
        for k, v in res.by_method().items():
            over[k] += v > res.epsilon_true
    assert all(c <= allowed for c in over.values()), over


@pytest.mark.slow
def test_white_box_overclaim_rate_slow():
    """200 one-run audits at eps = 8, m = 200 (power: eps_LB > 0 in most runs); over-claims per
    method within the binomial(200, 0.05) upper 1e-3 quantile."""
    torch.set_num_threads(1)
    setup = synthetic_setup(200, calibrate_sigma(8.0, DELTA), steps=2, seed=3)
    mech = WhiteBoxMechanism(setup)
    over = dict.fromkeys(NAMES, 0)
    positive = 0
    refused = 0
    for seed in range(200):
        try:
            res = one_run_white_box(mech, seed=seed, delta=DELTA)
        except ValueError as err:   # unbalanced drawn bits: probability < 1e-3 per seed
            assert "use another seed" in str(err)
            refused += 1
            continue
        positive += res.by_method()["one-run-fdp (gdp)"] > 0
        for k, v in res.by_method().items():
            over[k] += v > res.epsilon_true
    assert refused <= 2 and positive > 150
    assert all(c <= binom.isf(1e-3, 200, 0.05) for c in over.values()), over


# ----------------------------------------------------------------------------- bad input
def test_unbalanced_inclusion_refused(small):
    member = np.zeros(60, bool)
    member[:50] = True                                  # 50 of 60 included: p ~ 1e-7
    with pytest.raises(ValueError, match="probability 1/2"):
        one_run_white_box(small, member=member, delta=DELTA)
    with pytest.raises(ValueError, match="probability 1/2"):
        one_run_black_box(small, m=60, member=member, delta=DELTA)
    ok = np.arange(60) % 2 == 0                         # balanced bits are accepted
    assert one_run_white_box(small, member=ok, delta=DELTA).member.sum() == 30


def test_member_shape_and_steps_refused(small):
    with pytest.raises(ValueError, match="member must be a bool array"):
        one_run_white_box(small, member=np.ones(59, bool), delta=DELTA)
    with pytest.raises(ValueError, match="member must be a bool array"):
        one_run_white_box(small, member=np.ones(60), delta=DELTA)
    with pytest.raises(ValueError, match=r"taus must be insertion steps in 1\.\.3"):
        one_run_white_box(small, taus=4, delta=DELTA)
    with pytest.raises(ValueError, match="score must be"):
        one_run_white_box(small, score="loss", delta=DELTA)


def test_too_few_canaries_refused():
    need = min_certifying_canaries(DELTA, 0.05, "one-run")
    assert 4 <= need <= 12
    setup = synthetic_setup(need - 1, 1.0, steps=2, seed=0)
    with pytest.raises(ValueError, match=f"use m >= {need}"):
        one_run_white_box(setup, delta=DELTA)
    with pytest.raises(ValueError, match=f"use m >= {need}"):
        one_run_black_box(setup, m=need - 1, delta=DELTA)


def test_min_certifying_canaries_is_the_boundary():
    """At the returned m a perfect run certifies eps > 0; one canary fewer cannot."""
    from semi_core.audit import epsilon_lower_bound

    for method, kw in (("one-run", {}), ("one-run-fdp", {"tradeoff": "gdp"})):
        m = min_certifying_canaries(DELTA, 0.05, method, kw.get("tradeoff"))
        for mm, positive in ((m, True), (m - 1, False)):
            n1 = (mm + 1) // 2
            e = epsilon_lower_bound(np.arange(n1) + 100.0, -np.arange(mm - n1) - 1.0,
                                    delta=DELTA, method=method, **kw).epsilon_lower_bound
            assert (e > 0) == positive, (method, mm, e)


def test_claimed_curve_not_a_tradeoff_function_refused():
    with pytest.raises(ValueError, match="not a trade-off function"):
        one_run_fdp_p_value(1000, 100, 90, tradeoff=lambda a: np.maximum(0, 1 - a) ** 0.5)
    with pytest.raises(ValueError, match="not a trade-off function"):  # above 1 - alpha
        one_run_fdp_p_value(1000, 100, 90, tradeoff=lambda a: np.minimum(1, 1.2 - a))


def test_input_setup_refused_for_white_box(small):
    import dataclasses

    inp = dataclasses.replace(small, kind="input", canary_x=small.ref_x[0],
                              canary_y=small.ref_y[0])
    with pytest.raises(ValueError, match="needs Dirac canaries"):
        one_run_white_box(inp, delta=DELTA)


def test_opacus_one_run_white_box():
    """The Opacus adapter's mechanism (Opacus' own optimizer) with m Dirac canaries per run
    plays the same one-run audit; the run's ground truth is the same."""
    pytest.importorskip("opacus")
    from semi_core.integrations.opacus import OpacusMechanism, prepare_opacus_setup
    from semi_core.sgd.dpsgd import DPSGDConfig

    sigma = calibrate_sigma(4.0, DELTA)
    st = synthetic_setup(40, sigma, steps=2, seed=0)
    X, Y = torch.cat([st.ref_x, st.pool_x]), torch.cat([st.ref_y, st.pool_y])

    def model_fn():
        torch.manual_seed(0)
        return torch.nn.Linear(X.shape[1], 3, bias=False).double()

    cfg = DPSGDConfig(batch_size=64, steps=2, lr=0.5, clip=1.0, sigma_dp=sigma)
    ctx = prepare_opacus_setup(model_fn, (X, Y), cfg=cfg, canary="dirac", canaries_per_run=40,
                               seed=0)
    assert ctx.setup.info["dirac_isolated"]
    a = one_run_white_box(OpacusMechanism(ctx), seed=1, delta=DELTA)
    b = one_run_white_box(OpacusMechanism(ctx), seed=1, delta=DELTA)
    assert a.m == 40 and a.epsilon_true == pytest.approx(4.0, rel=1e-6)
    np.testing.assert_array_equal(a.scores, b.scores)     # Opacus' noise seeded per run
    assert all(np.isfinite(v) and v >= 0 for v in a.by_method().values())
    assert a.scores[a.member].mean() > a.scores[~a.member].mean()


def test_tightness_table_small():
    from semi_core.sgd.one_run import format_tightness, tightness_table

    rows = tightness_table((4.0,), (30,), reps=1, steps=2)
    assert len(rows) == 1 and set(rows[0]["wb"]) == set(NAMES)
    assert set(rows[0]["runs"]) == {"gdp", "band"}
    assert all(np.isfinite(v) and v >= 0 for v in rows[0]["wb"].values())
    assert "| 4 | 30 |" in format_tightness(rows)


def test_gaussian_ceiling_below_goal_at_m1000():
    """The oracle ceiling of one-run-fdp (gdp) at eps = 4, m = 1000 is ~0.57 eps (< 0.7), grows
    with m, and is at most the exact eps."""
    from semi_core.audit.one_run_fdp import gaussian_ceiling

    mu = 2.0 / calibrate_sigma(4.0, DELTA)
    c1 = gaussian_ceiling(mu, 1000, delta=DELTA)["epsilon"] / 4.0
    c5 = gaussian_ceiling(mu, 5000, delta=DELTA)["epsilon"] / 4.0
    assert 0.5 < c1 < 0.7 and c1 < c5 < 1.0


def test_report_section_registered():
    from semi_core.report import SECTION_MODULES

    assert "semi_core.report.one_run_section" in SECTION_MODULES
    order = [m.rsplit(".", 1)[1] for m in SECTION_MODULES]
    assert order.index("one_run_section") > order.index("dpsgd_section")


@pytest.mark.slow
def test_report_section_quick(tmp_path):
    """The section in quick mode (about 40 s on one core): the table and the ceiling."""
    from semi_core.report import ReportContext
    from semi_core.report.one_run_section import build

    sec = build(ReportContext(out_dir=tmp_path, quick=True))
    assert "| 4 | 1000 |" in sec.markdown and "ceiling" in sec.markdown
    rows = sec.data["rows"]
    assert len(rows) == 8 and all(r["reps"] == 2 for r in rows)
    # 24 medians of 2 bounds that each over-claim with probability <= 0.05: a median above 1
    # needs an over-claim; more than 3 of 24 would be a binomial(24, 0.05) event below 1e-2
    vals = [v for r in rows for v in r["wb"].values()]
    assert all(v >= 0 for v in vals) and sum(v > 1 for v in vals) <= 3


def test_step_unknown_reads_the_same_run(small):
    """The Final Observation bounds come from the same run; over 10 seeds knowing each
    canary's step certifies at least as much in total (mu vs mu / sqrt(T))."""
    known = unknown = 0.0
    for seed in range(10):
        res = one_run_white_box(small, seed=seed, delta=DELTA)
        assert set(res.bounds_step_unknown) == set(NAMES)
        known += res.by_method()["one-run-fdp (gdp)"]
        unknown += res.bounds_step_unknown["one-run-fdp (gdp)"]
    assert known >= unknown
    assert one_run_white_box(small, seed=0, delta=DELTA,
                             score="semi_sgd").bounds_step_unknown == {}


def test_drawn_bits_refused_before_training(small, monkeypatch):
    """Drawn bits that the class-size check refuses (probability < 1e-3) stop the audit before
    training with the seed named."""
    import semi_core.sgd.one_run as one_run

    monkeypatch.setattr(one_run, "draw_inclusion", lambda m, seed: np.arange(m) < 50)
    monkeypatch.setattr(WhiteBoxMechanism, "release", lambda *a: pytest.fail("trained"))
    with pytest.raises(ValueError, match="use another seed"):
        one_run_white_box(small, seed=5, delta=DELTA)


def test_one_run_audit_is_the_audit_report():
    """The white-box run's bounds per test (its score and the Final Observation score) and
    method are AuditResults; the float views and the JSON are read from them."""
    from semi_core.audit.report import AuditReport

    setup = synthetic_setup(40, 1.0, steps=3, zero_features=14, seed=1)
    res = one_run_white_box(setup, seed=1, delta=DELTA)
    assert isinstance(res, AuditReport) and res.tests == ["dirac", "final"]
    assert res.methods == list(NAMES)
    for k in NAMES:
        assert res.by_method()[k] == res.epsilon_lower_bound("dirac", k)
        assert res.bounds_step_unknown[k] == res.epsilon_lower_bound("final", k)
        assert res.result("dirac", k).n_guesses is not None
    d = res.to_dict()
    assert d["bounds"] == res.by_method() and d["bounds_step_unknown"] == res.bounds_step_unknown
    assert res.best() == max(v for t in res.tests for m, v in res.by_method(t).items()
                             if res.result(t, m).assumption == "one-run-bernoulli-half")

"""The DP-SGD audit: soundness, batched == loop, fast statistics == generic, canary selection."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from semi_core.sgd.accounting import calibrate_sigma, dpsgd_epsilon  # noqa: E402
from semi_core.sgd.audit import (  # noqa: E402
    ATTACKS,
    AuditSetup,
    audit_bounds,
    audit_games,
    run_audit,
    select_canary,
)
from semi_core.sgd.dpsgd import DPSGDConfig, draw_game, train_dpsgd  # noqa: E402
from semi_core.sgd.mechanism import DPSGDMechanism  # noqa: E402


def _with_cfg(setup, **kw):
    return AuditSetup(**{**setup.__dict__, "cfg": DPSGDConfig(**{**setup.cfg.__dict__, **kw})})


def test_batched_release_equals_per_run_loop_and_fast_stats_equal_generic(small_setup):
    """The mechanism trains a chunk as replicas: each run equals the per-run trainer on the
    same draw, and the ghost statistics equal the generic per-sample-gradient ones."""
    s = small_setup
    mech = DPSGDMechanism(s)
    member = np.array([True, False, True, False, True])
    tau = np.array([2, 1, 4, 3, 1])
    rel = mech.release(member, tau, np.random.default_rng(9))
    keys = np.random.default_rng(9).integers(0, 2**63 - 1, size=(5, 2))
    for r in range(5):
        dr = draw_game(np.random.SeedSequence(keys[r].tolist()), pool_size=s.pool_x.shape[0],
                       cfg=s.cfg, d=s.fm.d, tau=int(tau[r]) if member[r] else None)
        with torch.no_grad():
            one = train_dpsgd(s.fm, s.theta0, dr, s.pool_x, s.pool_y, (s.canary_x, s.canary_y),
                              s.cfg).numpy()
        np.testing.assert_allclose(rel[r], one[1:], rtol=1e-10, atol=1e-12)
    generic = DPSGDMechanism(s, fast_stats=False)
    np.testing.assert_allclose(generic.log_lr_steps(rel), mech.log_lr_steps(rel), rtol=1e-8,
                               atol=1e-8)
    losses = mech.canary_losses(rel)
    assert losses.shape == (5, s.cfg.steps + 1)
    np.testing.assert_allclose(losses[:, 0], losses[0, 0])  # theta_0 is common


def test_h0_runs_are_shared_across_tau_and_members_use_their_tau(small_setup):
    games = audit_games(small_setup, rounds=6, taus=[1, 3], seed=2, chunk_size=16)
    assert sorted(games) == [1, 3]
    for tau, res in games.items():
        assert list(res.stats) == list(ATTACKS) and res.member.shape == (6,)
        assert np.all(res.tau == tau)
    # non-member game h of every tau is H0 run h: its tau-free scores agree across taus
    a, b = games[1], games[3]
    n0 = min(int((~a.member).sum()), int((~b.member).sum()))
    for name in ("semi_max", "delta_diff", "back_front_ratio"):
        np.testing.assert_array_equal(a.stats[name][~a.member][:n0],
                                      b.stats[name][~b.member][:n0])
    assert a.metadata["rounds_released"] == max(int((~a.member).sum()),
                                                int((~b.member).sum())) \
        + int(a.member.sum()) + int(b.member.sum())


def test_audit_is_sound_in_a_small_simulation(small_setup):
    """eps_LB <= exact eps for every attack, tau and method. Each bound may fail with
    probability <= failure_prob = 0.05; the seed is fixed, and an inflated bound (wrong
    confidence margin, wrong direction of the ratio, scores leaking B) would exceed 0.5."""
    s = small_setup
    delta = 1e-4
    sigma = calibrate_sigma(0.5, delta)
    games = audit_games(_with_cfg(s, sigma_dp=sigma), rounds=120, taus=[1, 4], seed=4,
                        chunk_size=64)
    out = audit_bounds(games, delta=delta)
    eps_true = dpsgd_epsilon(sigma, delta)
    for tau, per in out["per_tau"].items():
        for name, entry in per.items():
            for meth in ("dkw", "cp"):
                assert entry[f"eps_lb_{meth}"] <= eps_true, (tau, name, meth)


def test_no_noise_audit_detects_the_canary(small_setup):
    """Without DP noise SeMI-SGD separates members (seed H.4: AUC ~ 1)."""
    res = audit_games(_with_cfg(small_setup, sigma_dp=0.0), rounds=40, taus=[2], seed=6)[2]
    from semi_core.audit import auc

    assert auc(*res.scores("semi_sgd")) > 0.9


def test_canary_has_the_largest_mahalanobis_distance(small_setup):
    s = small_setup
    cand_x = s.pool_x[:20]
    cand_y = s.pool_y[:20]
    k, dist = select_canary(s.fm, s.theta0, cand_x, cand_y, s.ref_x, s.ref_y, clip=1.0)
    assert dist.shape == (20,) and k == int(np.argmax(dist)) and np.all(dist > 0)


def test_run_audit_payload_and_bad_inputs(small_setup):
    out = run_audit(epsilon=2.0, rounds=8, taus=[1], steps=4, batch_size=16,
                    setup=small_setup, seed=1)
    assert out["epsilon_true"] == pytest.approx(2.0, rel=1e-9)
    assert out["epsilon_dp_accounting"] == pytest.approx(2.0, rel=1e-3)
    for name in ATTACKS:
        a = out["attacks"][name]
        assert set(a["epsilon_lower_bound"]) == {"dkw", "cp"}
        assert 0 <= a["auc"] <= 1 and set(a["tpr_at_fpr"]) == {"0.01", "0.1"}
    with pytest.raises(ValueError, match="tau"):
        audit_games(small_setup, rounds=4, taus=[5], seed=0)
    with pytest.raises(ValueError, match="rounds"):
        audit_games(small_setup, rounds=1, taus=[1], seed=0)
    with pytest.raises(ValueError, match="games"):
        audit_bounds({}, delta=1e-4)


def test_run_audit_returns_the_audit_report(small_setup):
    """The DP-SGD sweep's report: per ``attack@tau`` and method the bound at
    ``failure_prob / len(taus)`` (so its best is valid at ``failure_prob``), the same numbers
    as the table, checked against the run's exact epsilon; ``to_dict()`` is the JSON."""
    import json

    from semi_core.audit.report import AuditReport
    from semi_core.sgd.audit import DPSGDAuditReport

    rep = run_audit(epsilon=2.0, rounds=8, taus=[1, 2], steps=4, batch_size=16,
                    setup=small_setup, seed=1)
    assert isinstance(rep, DPSGDAuditReport) and isinstance(rep, AuditReport)
    assert rep.tests == [f"{a}@tau={t}" for t in (1, 2) for a in ATTACKS]
    assert rep.methods == ["dkw", "cp"] and rep.against == pytest.approx(2.0, rel=1e-9)
    table = rep["per_tau"]
    for t in (1, 2):
        for a in ATTACKS:
            for m in ("dkw", "cp"):
                assert rep.epsilon_lower_bound(f"{a}@tau={t}", m) == \
                    table[t][a][f"eps_lb_{m}_bonferroni"]
                r = rep.result(f"{a}@tau={t}", m)
                assert r.failure_prob == pytest.approx(0.05 / 2)
    assert rep.best() == max(a["epsilon_lower_bound_best_tau_bonferroni"][m]
                             for a in rep["attacks"].values() for m in ("dkw", "cp"))
    d = rep.to_dict()
    assert set(d) >= {"epsilon_true", "attacks", "per_tau", "taus"} and "refuted" not in d
    json.dumps({k: v for k, v in d.items() if k != "per_tau"})
    one = run_audit(epsilon=2.0, rounds=8, taus=[1], steps=4, batch_size=16,
                    setup=small_setup, seed=1)
    for a in ATTACKS:
        assert one.epsilon_lower_bound(f"{a}@tau=1", "cp") == one["per_tau"][1][a]["eps_lb_cp"]

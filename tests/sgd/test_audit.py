"""The DP-SGD audit: soundness, batched == loop, fast statistics == generic, canary selection."""

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from semi_core.sgd.accounting import calibrate_sigma, dpsgd_epsilon  # noqa: E402
from semi_core.sgd.audit import (  # noqa: E402
    ATTACKS,
    AuditSetup,
    audit_bounds,
    run_audit,
    run_games,
    score_games,
    select_canary,
)
from semi_core.sgd.dpsgd import DPSGDConfig  # noqa: E402


def _with_cfg(setup, **kw):
    return AuditSetup(**{**setup.__dict__, "cfg": DPSGDConfig(**{**setup.cfg.__dict__, **kw})})


def test_batched_games_equal_per_run_loop_and_fast_stats_equal_generic(small_setup):
    s = small_setup
    a = run_games(s, rounds=4, taus=[2], seed=9, chunk_size=8)
    b = run_games(s, rounds=4, taus=[2], seed=9, batched=False)
    c = run_games(s, rounds=4, taus=[2], seed=9, chunk_size=3, fast_stats=False)
    np.testing.assert_allclose(a.losses, b.losses, rtol=1e-10)
    np.testing.assert_allclose(a.log_lrs, b.log_lrs, rtol=1e-8, atol=1e-8)
    np.testing.assert_allclose(a.log_lrs, c.log_lrs, rtol=1e-8, atol=1e-8)
    assert a.losses.shape[1] == s.cfg.steps + 1 and a.log_lrs.shape[1] == s.cfg.steps


def test_h0_runs_are_shared_across_tau_and_members_use_their_tau(small_setup):
    rec = run_games(small_setup, rounds=6, taus=[1, 3], seed=2, chunk_size=16)
    for tau in (1, 3):
        res = score_games(rec, tau)
        b, scores = res.member, res.stats
        assert set(scores) == set(ATTACKS) and b.shape == (6,)
        np.testing.assert_array_equal(scores["semi_sgd"],
                                      rec.log_lrs[rec.run_index[tau], tau - 1])
        h0 = rec.run_index[tau][b == 0]
        np.testing.assert_array_equal(h0, np.arange(h0.size))  # the first N0 H0 runs


def test_audit_is_sound_in_a_small_simulation(small_setup):
    """eps_LB <= exact eps for every attack, tau and method. Each bound may fail with
    probability <= failure_prob = 0.05; the seed is fixed, and an inflated bound (wrong
    confidence margin, wrong direction of the ratio, scores leaking B) would exceed 0.5."""
    s = small_setup
    delta = 1e-4
    sigma = calibrate_sigma(0.5, delta)
    rec = run_games(_with_cfg(s, sigma_dp=sigma), rounds=120, taus=[1, 4], seed=4,
                    chunk_size=64)
    out = audit_bounds(rec, delta=delta)
    eps_true = dpsgd_epsilon(sigma, delta)
    for tau, per in out["per_tau"].items():
        for name, entry in per.items():
            for meth in ("dkw", "cp"):
                assert entry[f"eps_lb_{meth}"] <= eps_true, (tau, name, meth)


def test_no_noise_audit_detects_the_canary(small_setup):
    """Without DP noise SeMI-SGD separates members (seed H.4: AUC ~ 1)."""
    rec = run_games(_with_cfg(small_setup, sigma_dp=0.0), rounds=40, taus=[2], seed=6)
    res = score_games(rec, 2)
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
        run_games(small_setup, rounds=4, taus=[5], seed=0)
    with pytest.raises(ValueError, match="rounds"):
        run_games(small_setup, rounds=1, taus=[1], seed=0)

"""Long runs of the torch layer (``-m slow``): soundness over several seeds, report section."""

import math

import numpy as np
import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("eps", [0.5, 2.0, 8.0])
def test_soundness_over_seeds(small_setup, eps):
    """Across 5 seeds x 2 taus x 6 attacks x 2 methods, every eps_LB <= exact eps. Each bound
    fails w.p. <= 0.05 only in the worst case; at these sizes the bounds are far from tight,
    so a violation indicates a bug (e.g. an uncorrected threshold search)."""
    from semi_core.sgd.accounting import calibrate_sigma, dpsgd_epsilon
    from semi_core.sgd.audit import AuditSetup, audit_bounds, audit_games
    from semi_core.sgd.dpsgd import DPSGDConfig

    delta = 1e-4
    sigma = calibrate_sigma(eps, delta)
    cfg = DPSGDConfig(**{**small_setup.cfg.__dict__, "sigma_dp": sigma})
    setup = AuditSetup(**{**small_setup.__dict__, "cfg": cfg})
    truth = dpsgd_epsilon(sigma, delta)
    worst = 0.0
    for seed in range(5):
        games = audit_games(setup, rounds=400, taus=[1, 4], seed=100 + seed)
        out = audit_bounds(games, delta=delta)
        for per in out["per_tau"].values():
            for entry in per.values():
                worst = max(worst, entry["eps_lb_dkw"], entry["eps_lb_cp"])
    assert worst <= truth


def test_no_noise_auc_ordering_like_seed_h4(small_setup):
    """Seed H.4 (no noise): SeMI-SGD AUC ~ 1, above every loss baseline."""
    from semi_core.audit import auc
    from semi_core.sgd.audit import AuditSetup, audit_games
    from semi_core.sgd.dpsgd import DPSGDConfig

    cfg = DPSGDConfig(**{**small_setup.cfg.__dict__, "sigma_dp": 0.0})
    res = audit_games(AuditSetup(**{**small_setup.__dict__, "cfg": cfg}), rounds=400, taus=[2],
                      seed=1)[2]
    a = {k: auc(*res.scores(k)) for k in res.stats}
    # AUC SE <= sqrt((1/(12*200))*2) ~ 0.03 at AUC 0.5; margin 4 SE
    for name in ("delta_diff", "delta_ratio", "back_front_diff", "back_front_ratio"):
        assert a["semi_sgd"] > a[name] + 4 * 0.03, a


def test_report_section_quick(tmp_path):
    from semi_core.report import ReportContext
    from semi_core.report.dpsgd_section import build

    sec = build(ReportContext(out_dir=tmp_path, quick=True, seed=0))
    assert "Quick mode" in sec.markdown
    for f in sec.figures:
        assert (tmp_path / f).stat().st_size > 0
    rows = sec.data["rows"]
    assert [r["epsilon_target"] for r in rows] == [0.5, 1.0, 2.0]
    for r in rows:
        assert r["eps_max"] > r["epsilon_true"]  # every eps shown is certifiable in principle
        for a in r["attacks"].values():
            assert a["eps_lb_mean"] <= r["epsilon_true"] + 1e-12
            assert a["pilot_certify"]["eps_lb"] <= r["epsilon_true"] + 1e-12
    assert math.isfinite(sec.data["roc_auc"]["inf"]["semi_sgd"])


def test_benchmark_runs_quick():
    import importlib

    rows = importlib.import_module("benchmarks.bench_dpsgd").main(quick=True)
    assert {r["workload"] for r in rows} == {"train", "train=", "game", "game=", "stats"}
    assert all(np.isfinite(r["speedup"]) and r["speedup"] > 0 for r in rows)

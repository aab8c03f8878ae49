"""Time and memory of the exact and CG iHVPs (semi_core.attacks.whitebox.costs): the scaling fit,
the stand-in data, the measurement on a small MLP (the same code path as the paper-size
benchmark, benchmarks/bench_hessian.py), and the resource estimate at the seed's sizes."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from semi_core.attacks._budget import attack_budget, model_shape  # noqa: E402
from semi_core.attacks.whitebox.costs import (  # noqa: E402
    PAPER_SETTINGS,
    _reference_shape,
    fit_power_law,
    measure_ihvp,
    measure_in_subprocess,
    mlp_parameters,
    purchase_standin,
    resource_study,
)
from semi_core.attacks.whitebox.tables import SEED, markdown_resources  # noqa: E402
from semi_core.sgd.reference_models import build_attack_model  # noqa: E402


def test_fit_power_law_recovers_an_exact_law_and_its_scatter():
    d = np.array([800.0, 1500, 2200, 2900, 3600])
    f = fit_power_law(d, 3e-9 * d ** 2.7)
    assert f["p"] == pytest.approx(2.7, abs=1e-12) and f["c"] == pytest.approx(3e-9, rel=1e-9)
    assert f["p_se"] == pytest.approx(0.0, abs=1e-10) and f["r2"] == pytest.approx(1.0)
    # log-normal scatter of sd 0.1: the fitted se(p) is the textbook one, recomputed here
    rng = np.random.default_rng(1)
    e = rng.normal(0, 0.1, d.size)
    g = fit_power_law(d, 2.0 * d ** 2 * np.exp(e))
    lx = np.log(d)
    X = np.c_[np.ones_like(lx), lx]
    beta, res, *_ = np.linalg.lstsq(X, np.log(2.0) + 2 * lx + e, rcond=None)
    assert g["p"] == pytest.approx(beta[1], rel=1e-10)
    s2 = float(res[0]) / (d.size - 2)
    assert g["p_se"] == pytest.approx(np.sqrt(s2 / ((lx - lx.mean()) ** 2).sum()), rel=1e-10)


@pytest.mark.parametrize("x, y, match", [
    ([1, 2, 3, 4], [1, 2, 3, 4], "at least 5"),
    ([1, 2, 3, 4, 5], [1, 2, 0, 4, 5], "> 0"),
    ([2, 2, 2, 2, 2], [1, 2, 3, 4, 5], "distinct"),
    ([1, 2, 3, 4, 5], [1, 2, 3, 4], "equal length"),
])
def test_fit_power_law_refuses(x, y, match):
    with pytest.raises(ValueError, match=match):
        fit_power_law(x, y)


def test_paper_sizes():
    assert mlp_parameters(600, (32,), 100) == 22_532
    assert mlp_parameters(600, (512, 256, 128, 64), 100) == 486_692
    for s in PAPER_SETTINGS.values():
        fm = build_attack_model("mlp", s["features"], s["classes"], hidden=s["hidden"])
        assert fm.d == mlp_parameters(s["features"], s["hidden"], s["classes"])
        assert model_shape("mlp", s["features"], s["classes"], s["hidden"])[0] == fm.d


def test_purchase_standin_shape_and_seed():
    x, y = purchase_standin(400, seed=3)
    assert x.shape == (400, 600) and y.shape == (400,)
    assert set(np.unique(x.numpy())) <= {0.0, 1.0} and 0 <= int(y.min()) <= int(y.max()) < 100
    assert 0.05 < float(x.mean()) < 0.15            # density 0.1 up to the Beta draws
    x2, y2 = purchase_standin(400, seed=3)
    assert torch.equal(x, x2) and torch.equal(y, y2)
    assert not torch.equal(x, purchase_standin(400, seed=4)[0])
    with pytest.raises(ValueError, match="density"):
        purchase_standin(10, density=1.0)
    with pytest.raises(ValueError, match="n"):
        purchase_standin(1)


# damping 1: the briefly trained small MLP's Hessian has eigenvalues below -0.2
SMALL = dict(features=20, hidden=(3,), classes=4, n_train=60, targets=2, epochs=1.0,
             train_batch=16, threads=1, damping=1.0)


def test_measure_exact_and_cg_small():
    ex = measure_ihvp("exact", **SMALL)
    cg = measure_ihvp("cg", **SMALL)
    d = mlp_parameters(20, (3,), 4)
    assert ex["d"] == cg["d"] == d
    assert ex["build"] == "measured" and ex["eigh_s"] > 0 and ex["damped_positive_definite"]
    assert cg["cg_converged"] and 1 <= cg["cg_iterations"] <= 2 * d
    assert cg["damped_positive_definite"]
    bad = measure_ihvp("cg", **{**SMALL, "damping": 0.0})   # indefinite: recorded, no raise
    assert bad["damped_positive_definite"] is False and bad["cg_converged"] is False
    for r in (ex, cg):
        assert r["wall_s"] > 0 and r["cpu_s"] >= 0 and r["reference_s"] > 0
        assert r["peak_rss_bytes"] > 0 and r["method_rss_bytes"] == (
            r["peak_rss_bytes"] - r["baseline_rss_bytes"])
    part = measure_ihvp("exact", build_columns=5, **SMALL)
    assert "eigh_s" not in part and part["build"].startswith("measured on 5 of")


def test_measure_bad_input():
    with pytest.raises(ValueError, match="method"):
        measure_ihvp("lissa", **SMALL)
    with pytest.raises(ValueError, match="build_columns"):
        measure_ihvp("exact", build_columns=10**6, **SMALL)
    with pytest.raises(ValueError, match="targets"):
        measure_ihvp("cg", **{**SMALL, "targets": 1000})
    with pytest.raises(ValueError, match="reference"):
        measure_ihvp("cg", reference="cube", **SMALL)
    with pytest.raises(ValueError, match="at least 5 distinct"):
        resource_study(quick=True, widths=(1, 2, 3, 3, 4))


@pytest.mark.slow
def test_subprocess_memory_grows_with_the_dense_hessian():
    """The exact path holds d x d floats: its own peak (the kernel's peak reset before it) is at
    least the Hessian's 8 d^2 bytes, and CG's stays far below it; a failing child is reported."""
    with pytest.raises(RuntimeError, match="cg measurement failed"):
        measure_in_subprocess("cg", **{**SMALL, "targets": 1000})
    kw = dict(SMALL, features=300, hidden=(4,), classes=10)
    d = mlp_parameters(300, (4,), 10)                 # 1254: 12.6 MB of Hessian
    ex = measure_in_subprocess("exact", build_columns=64, **kw)
    cg = measure_in_subprocess("cg", **kw)
    if not ex.get("peak_reset"):
        pytest.skip("no /proc/self/clear_refs: the peak cannot be reset per method")
    assert ex["method_rss_bytes"] >= 8 * d * d * 0.95
    assert cg["method_rss_bytes"] < 8 * d * d / 4


def test_resource_estimate_at_the_seed_sizes_charges_d2_only_for_exact():
    """The estimate checked before any training: CG at the seed's 4-layer MLP (d = 486,692)
    fits in a few GB, the exact path needs the d x d Hessian (~1.9 TB per target model)."""
    s = PAPER_SETTINGS["purchase100s-mlp4"]
    d, act = model_shape("mlp", s["features"], s["classes"], s["hidden"])
    kw = dict(n_models=128, n_records=25_000, n_targets=100, d=d, act=act, steps=1,
              batch_size=256)
    b_cg, *_ = attack_budget(("iha",), hessian="cg", **kw)
    b_ex, *_ = attack_budget(("iha",), hessian="exact", **kw)
    b_loss, *_ = attack_budget(("loss", "lira-online"), hessian="exact", **kw)
    assert b_ex >= 8.0 * d * d
    assert b_cg < 8.0 * d * d / 100 and b_loss < 8.0 * d * d / 100


@pytest.mark.parametrize("isolate", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_quick_study_and_its_table(isolate):
    study = resource_study(quick=True, widths=(1, 2, 3, 4, 5), targets=2, epochs=1.0,
                           threads=1, isolate=isolate, damping=1.0)
    assert len(study["rows"]) == 10 and "purchase" not in study
    assert all(f.get("points", 5) == 5 for f in study["fits"].values() if "error" not in f)
    md = markdown_resources(study)
    assert "fitted law" in md and "exact_wall_s" in md
    fake = {**study, "purchase": {
        "d": 22532, "n_train": 500, "exact_build_s": 100.0, "exact_build": "measured",
        "exact_eigh_s": 1000.0, "exact_eigh": "fit", "exact_precompute_s": 1100.0,
        "exact_hessian_resident_bytes": 4.06e9, "exact_rss_fit_bytes": 1.2e10,
        "cg_s_per_target": 10.0, "cg_iterations": 30, "cg_converged": True,
        "cg_cpu_s_per_target": 9.0, "cg_rss_bytes": 2e7, "reference": "r", "reference_s": 0.1,
        "ratio_cg_per_target_over_reference": 100.0,
        "ratio_exact_precompute_over_cg_per_target": 110.0}}
    md = markdown_resources(fake)
    assert f"{SEED['table6']['iha']['precompute_s']:.0f} s" in md and "| 110 |" in md


@pytest.mark.slow
def test_paper_size_purchase_point():
    """The seed's Purchase MLP (d = 22,532) on stand-in records: CG to tolerance for one target,
    the exact path's full d x d Hessian resident (8 d^2 bytes) with 64 columns built (minutes;
    the benchmark measures more)."""
    s = PAPER_SETTINGS["purchase100-mlp2"]
    kw = dict(features=s["features"], hidden=s["hidden"], classes=s["classes"], n_train=500,
              targets=1, epochs=1.0, threads=2, reference="panel")
    cg = measure_in_subprocess("cg", **kw)
    assert cg["d"] == 22_532 and cg["cg_converged"]
    ex = measure_in_subprocess("exact", build_columns=64, **kw)
    if ex.get("peak_reset"):
        assert ex["method_rss_bytes"] >= 0.95 * 8 * 22_532**2
        assert cg["method_rss_bytes"] < 0.05 * 8 * 22_532**2


def test_panel_reference_never_allocates_d_by_d():
    """At the seed's 4-layer MLP the floor product must not hold a d x d matrix (it did:
    1.9 TB requested)."""
    d = mlp_parameters(600, (512, 256, 128, 64), 100)
    k, m = _reference_shape(d, "panel")
    assert 8 * d * k < 20e9 and m == 64
    assert _reference_shape(1000, "panel") == (1000, 64)
    assert _reference_shape(1000, "square") == (1000, 1000)

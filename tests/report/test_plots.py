"""The report's plotting module: log-log ROC axes floored at 1/N0, chance line, bands from
audit.roc, figure files."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("matplotlib")

from semi_core.audit.roc import roc_curve, roc_metrics, tpr_at_fpr  # noqa: E402
from semi_core.report import _plots as P  # noqa: E402


@pytest.fixture
def scores():
    rng = np.random.default_rng(np.random.SeedSequence(2025))
    return rng.normal(1.0, 1.0, 400), rng.normal(0.0, 1.0, 500)  # members, non-members


@pytest.fixture
def ax():
    plt = P.pyplot()
    fig, ax = plt.subplots()
    yield ax
    plt.close(fig)


def test_roc_axes_log_log_floored_at_resolution_with_chance_line(ax):
    xf, yf = P.roc_axes(ax, n0=500, n1=400)
    assert ax.get_xscale() == "log" and ax.get_yscale() == "log"
    assert xf == ax.get_xlim()[0] == 1 / 500
    assert yf == ax.get_ylim()[0] == 1 / 500  # min(1/N1, 1/N0)
    assert ax.get_xlim()[1] == 1.0
    chance = [ln for ln in ax.get_lines() if ln.get_label() == P.CHANCE_LABEL]
    assert len(chance) == 1
    x, y = chance[0].get_data()
    np.testing.assert_array_equal(x, y)
    assert x[-1] == 1.0 and x[0] <= xf
    assert "FPR" in ax.get_xlabel() and "TPR" in ax.get_ylabel()


def test_roc_axes_tpr_floor_and_refusals(ax):
    _, yf = P.roc_axes(ax, n0=100, n1=50, tpr_floor=0.01)
    assert yf == ax.get_ylim()[0] == 0.01
    for bad in (dict(n0=0), dict(n0=1), dict(n0=2.5), dict(n0=True), dict(n0=10, n1=0)):
        with pytest.raises((ValueError, TypeError), match="n0|n1"):
            P.roc_axes(ax, **bad)
    with pytest.raises(ValueError, match="tpr_floor"):
        P.roc_axes(ax, n0=100, n1=50, tpr_floor=1e-4)  # below the resolution 1/100
    with pytest.raises(ValueError, match="tpr_floor"):
        P.roc_axes(ax, n0=100, n1=50, tpr_floor=1.0)


def test_empirical_roc_is_the_step_curve_of_audit_roc_from_the_floor(ax, scores):
    m, n = scores
    xf, _ = P.roc_axes(ax, n0=n.size, n1=m.size)
    line = P.plot_empirical_roc(ax, m, n, label="test", band=False)
    x, y = line.get_data()
    assert x.min() == xf  # nothing left of the floor (no clipping to an arbitrary 1e-4)
    assert line.get_drawstyle() == "steps-post"
    # every drawn vertex is an operating point of audit.roc (the one at the floor carries the
    # step-rule TPR there)
    fx, fy, _ = roc_curve(m, n)
    pts = set(zip(fx.tolist(), fy.tolist(), strict=True))
    assert all((a, b) in pts for a, b in zip(x[1:], y[1:], strict=True) if b > 0)
    assert y[0] == tpr_at_fpr(m, n, xf)
    # the step curve read at any level equals the step rule
    for f in (0.01, 0.05, 0.3):
        assert y[np.searchsorted(x, f, side="right") - 1] == tpr_at_fpr(m, n, f)


def test_band_is_roc_metrics_binomial_interval_and_is_drawn(ax, scores):
    m, n = scores
    f, lo, hi = P.roc_band(m, n, confidence=0.9, levels=20)
    assert f[0] == 1 / n.size and f[-1] == 1.0
    met = roc_metrics(m, n, fpr=f, interval="binomial", confidence=0.9)
    np.testing.assert_array_equal(np.c_[lo, hi], np.asarray(met.tpr_at_fpr_interval))
    assert (lo <= tpr_at_fpr(m, n, f)).all() and (tpr_at_fpr(m, n, f) <= hi).all()
    P.roc_axes(ax, n0=n.size, n1=m.size)
    before = len(ax.collections)
    P.plot_empirical_roc(ax, m, n, label="with band")
    assert len(ax.collections) == before + 1  # the shaded band


def test_band_from_stored_points_equals_band_from_scores(scores):
    m, n = scores
    fpr, tpr, _ = roc_curve(m, n)
    assert P.class_sizes(fpr, tpr, m.size + n.size) == (n.size, m.size)
    f, lo, hi = P.roc_band(m, n)
    g, lo2, hi2 = P.roc_band_from_points(fpr, tpr, n1=m.size, floor=1 / n.size)
    np.testing.assert_array_equal(f, g)
    np.testing.assert_allclose(lo2, lo, rtol=0, atol=1e-12)
    np.testing.assert_allclose(hi2, hi, rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match="n1"):
        P.roc_band_from_points(fpr, tpr, n1=m.size + 1, floor=1 / n.size)


def test_tradeoff_axes_and_curve(ax):
    P.tradeoff_axes(ax)
    a = np.linspace(0, 1, 11)
    P.plot_tradeoff(ax, a, 1 - a, label="no privacy", band=(a, 0.9 * (1 - a), 1 - a))
    assert ax.get_xlim() == (0, 1) and ax.get_ylim() == (0, 1)
    assert len(ax.collections) == 1
    assert "α" in ax.get_xlabel() and "β" in ax.get_ylabel()


def test_save_writes_a_png_and_closes(tmp_path, scores):
    m, n = scores
    with P.style() as plt:
        fig, ax = plt.subplots()
        P.roc_axes(ax, n0=n.size, n1=m.size)
        P.plot_empirical_roc(ax, m, n, label="x")
        P.figure_legend(fig, ax)
        path = P.save(fig, tmp_path / "roc.png")
        assert not plt.fignum_exists(fig.number)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert path.stat().st_size > 5_000


def test_curve_starts_where_tpr_is_positive(ax):
    """On a log TPR axis a curve is drawn from its first FPR with TPR > 0, never dropped to
    the axis's edge (which would read as a measured TPR there)."""
    rng = np.random.default_rng(np.random.SeedSequence(7))
    m = rng.normal(0.0, 1.0, 400)
    n = np.concatenate([rng.normal(0.0, 1.0, 495), np.full(5, 50.0)])  # 5 non-members on top
    P.roc_axes(ax, n0=n.size, n1=m.size)
    x, y = P.plot_empirical_roc(ax, m, n, label="weak", band=False).get_data()
    fx, fy, _ = roc_curve(m, n)
    assert y.min() > 0
    assert x[0] == fx[fy > 0].min() > 5 / 500 * (1 - 1e-12)
    assert y[x == x[0]].max() == tpr_at_fpr(m, n, x[0])  # the step rule there

"""The ROC convex hull: its TPR at FPR and AUC, three ways, and the jax_privacy names mapped to
them (``jax_privacy.auditing.CanaryScoreAuditor.tpr_at_given_fpr`` / ``attack_auroc`` report
the hull's quantities).

* exact: SymPy's convex hull of the ROC points (with the corner (1, 0) added, the polygon's
  area is the area under the upper envelope) and the circular-arc ROC derived symbolically;
* brute force: the best two-threshold mixture at each FPR, over every pair of ROC points;
* Monte Carlo: the randomised test that the hull promises, run on resampled canaries, attains
  the hull's (FPR, TPR) within 4 binomial standard errors;
* jax_privacy's published test cases (tests/auditing_test.py), reached through
  :data:`semi_core.audit.score_auditor.JAX_PRIVACY_NAMES`.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import sympy as sp

from semi_core.audit import ScoreAuditor
from semi_core.audit import score_auditor as sa
from semi_core.audit.roc import auc, roc_curve, roc_hull, roc_metrics, tpr_at_fpr


def _jax(auditor: ScoreAuditor, name: str, *args):
    """Call the semi_core quantity the migration table gives for jax_privacy's ``name``."""
    target, kwargs = sa.JAX_PRIVACY_NAMES[name]
    return getattr(auditor, target)(*args, **kwargs)


def _circular(n_in, n_out):
    """jax_privacy's scores whose ROC is the arc TPR = sqrt(FPR (2 - FPR))."""
    return np.sqrt(1 - np.linspace(0, 1, n_in) ** 2), np.linspace(0, 1, n_out)


# -- jax_privacy's published test cases ----------------------------------------------------------
def test_jax_simple_cases():
    a = ScoreAuditor([1, 3], [0, 2])
    np.testing.assert_allclose(_jax(a, "tpr_at_given_fpr", [0, 0.25, 0.5, 0.75, 1.0]),
                               [0.5, 0.75, 1.0, 1.0, 1.0])
    b = ScoreAuditor([0, 4, 6, 7], [1, 2, 3, 5])
    assert _jax(b, "attack_auroc") == pytest.approx(13 / 16, abs=1e-15)
    # the empirical-curve quantities the table used to give: 0.5 and 0.6875
    assert a.tpr_at_fpr(0.25) == 0.5 and b.auc() == 11 / 16


@pytest.mark.parametrize("ratio", [0.5, 1.0, 1.5])
def test_jax_worst_and_best_cases(ratio):
    n_out = int(30 * ratio)
    f = np.linspace(0, 1, 10)
    worst = ScoreAuditor(np.zeros(30), np.ones(n_out))
    np.testing.assert_allclose(_jax(worst, "tpr_at_given_fpr", f), f, atol=1e-15)
    assert _jax(worst, "attack_auroc") == pytest.approx(0.5, abs=1e-15)
    assert worst.auc() == 0.0  # Mann-Whitney: every member below every non-member
    best = ScoreAuditor(np.ones(30), np.zeros(n_out))
    np.testing.assert_array_equal(_jax(best, "tpr_at_given_fpr", f), np.ones_like(f))
    assert _jax(best, "attack_auroc") == 1.0


@pytest.mark.parametrize("ratio", [0.5, 1.0, 1.5])
def test_jax_circular_roc(ratio):
    a = ScoreAuditor(*_circular(10_000, int(10_000 * ratio)))
    f = np.linspace(0, 1, 10)
    np.testing.assert_allclose(_jax(a, "tpr_at_given_fpr", f), np.sqrt(f * (2 - f)), rtol=1e-3)
    assert abs(_jax(a, "attack_auroc") - math.pi / 4) < 5e-4  # jax: places=3


@pytest.mark.parametrize("ratio", [0.5, 1.0, 1.5])
def test_jax_random_uniform(ratio):
    rng = np.random.default_rng(seed=0xBAD5EED)
    n_in = 100_000
    a = ScoreAuditor(rng.uniform(0, 1, n_in), rng.uniform(0, 1, int(n_in * ratio)))
    f = np.linspace(0, 1, 10)
    np.testing.assert_allclose(_jax(a, "tpr_at_given_fpr", f), f, rtol=0.05, atol=1e-3)
    np.testing.assert_allclose(_jax(a, "attack_auroc"), 0.5, rtol=0.05)


def test_the_docstring_table_says_what_the_mapping_does():
    doc = " ".join(sa.__doc__.split())
    for name, (target, kwargs) in sa.JAX_PRIVACY_NAMES.items():
        args = "fpr, " if name == "tpr_at_given_fpr" else ""
        kw = ", ".join(f'{k}="{v}"' for k, v in kwargs.items())
        assert f"``{name}({'fpr' if args else ''})`` ``{target}({args}{kw})``" in doc


# -- exact: SymPy ---------------------------------------------------------------------------------
def test_circular_arc_derived_symbolically():
    """Out ~ U(0, 1), in = sqrt(1 - U^2): FPR(g) = 1 - g, TPR(g) = P(U < sqrt(1 - g^2))
    = sqrt(1 - g^2); with f = 1 - g, TPR = sqrt(f (2 - f)), concave (its own hull), area pi/4."""
    f, g = sp.symbols("f g", positive=True)
    tpr = sp.sqrt(1 - g**2).subs(g, 1 - f)
    assert sp.expand(tpr**2 - f * (2 - f)) == 0
    # TPR'' = -1 / (f (2 - f))^(3/2) < 0 on (0, 1)
    assert sp.simplify(sp.diff(sp.sqrt(f * (2 - f)), f, 2) + (f * (2 - f))**sp.Rational(-3, 2)) == 0
    # area: substitute back g = 1 - f (df = -dg), a quarter disc
    assert sp.integrate(sp.sqrt(1 - g**2), (g, 0, 1)) == sp.pi / 4


def _exact_hull_auc(m, n):
    """Area of the convex hull of the ROC points and (1, 0), in exact rationals."""
    m, n = [int(v) for v in m], [int(v) for v in n]
    pts = {(sp.Integer(0), sp.Integer(0)), (sp.Integer(1), sp.Integer(1)),
           (sp.Integer(1), sp.Integer(0))}
    for t in sorted(set(m) | set(n)):
        pts.add((sp.Rational(sum(v > t for v in n), len(n)),
                 sp.Rational(sum(v > t for v in m), len(m))))
    hull = sp.convex_hull(*[sp.Point(*p) for p in pts])
    return abs(hull.area)


@pytest.mark.parametrize("seed", range(6))
def test_hull_auc_equals_the_exact_rational(seed):
    rng = np.random.default_rng(seed)
    m = rng.integers(0, 6 + seed, 7 + 3 * seed) + rng.integers(0, 3)
    n = rng.integers(0, 5 + seed, 5 + 4 * seed)
    exact = _exact_hull_auc(m, n)
    assert auc(m, n, rule="hull") == pytest.approx(float(exact), abs=1e-14)
    assert auc(m, n, rule="hull") >= max(auc(m, n), 0.5) - 1e-15


# -- brute force ----------------------------------------------------------------------------------
def _brute_hull_tpr(x, y, f):
    best = 0.0
    for i in range(x.size):
        for j in range(x.size):
            if x[i] <= f <= x[j]:
                lam = 0.0 if x[j] == x[i] else (f - x[i]) / (x[j] - x[i])
                best = max(best, (1 - lam) * y[i] + lam * y[j])
    return best


@pytest.mark.parametrize("seed", range(4))
def test_hull_tpr_is_the_best_two_threshold_mixture(seed):
    rng = np.random.default_rng(10 + seed)
    m = np.round(rng.normal(0.8, 1, 40), 1)  # rounded: ties inside and across the classes
    n = np.round(rng.normal(0, 1, 30), 1)
    x, y, _ = roc_curve(m, n)
    f = np.r_[np.linspace(0, 1, 23), x]
    got = tpr_at_fpr(m, n, f, rule="hull")
    want = np.array([_brute_hull_tpr(x, y, v) for v in f])
    np.testing.assert_allclose(got, want, atol=1e-14)
    assert np.all(got >= tpr_at_fpr(m, n, f) - 1e-15)
    hx, hy = roc_hull(m, n)
    assert hx[0] == 0 and hx[-1] == 1 and hy[-1] == 1 and np.all(np.diff(hx) > 0)
    assert np.all(np.diff(np.diff(hy) / np.diff(hx)) < 0)  # strictly concave: vertices only
    # the hull's area is the integral of the brute envelope (piecewise linear between x's)
    xs = np.unique(x)
    env = np.array([_brute_hull_tpr(x, y, v) for v in xs])
    assert auc(m, n, rule="hull") == pytest.approx(np.sum(np.diff(xs) * (env[1:] + env[:-1]))
                                                   / 2, abs=1e-14)


# -- Monte Carlo: the hull is attained by randomising between two thresholds ---------------------
def test_the_randomised_test_attains_the_hull():
    """At FPR f between hull vertices i < j: use the threshold of j with probability
    lam = (f - x_i) / (x_j - x_i), else that of i. Run on R canaries resampled from each class;
    the MC rates match (f, hull(f)) within 4 binomial standard errors sqrt(p (1 - p) / R)."""
    rng = np.random.default_rng(7)
    m = np.round(rng.normal(1.0, 1, 300), 1)
    n = np.round(rng.normal(0, 1, 250), 1)
    x, y, th = roc_curve(m, n)
    hx, hy = roc_hull(m, n)
    f = 0.3
    j = int(np.searchsorted(hx, f))
    i = j - 1
    lam = (f - hx[i]) / (hx[j] - hx[i])
    assert 0 < lam < 1

    def thr(k):  # a threshold whose test has the vertex's rates
        idx = np.flatnonzero((x == hx[k]) & (y == hy[k]))
        return th[idx[0]]

    gi, gj = thr(i), thr(j)
    R = 400_000
    for scores, target in ((n, f), (m, float(np.interp(f, hx, hy)))):
        s = scores[rng.integers(0, scores.size, R)]
        use_j = rng.random(R) < lam
        rate = float(np.mean(np.where(use_j, s > gj, s > gi)))
        se = math.sqrt(target * (1 - target) / R)
        assert abs(rate - target) < 4 * se, (rate, target, se)


# -- the other entry points ------------------------------------------------------------------------
def test_roc_metrics_and_auditor_report_the_hull_auc_with_rule_hull():
    rng = np.random.default_rng(3)
    m, n = np.round(rng.normal(1, 1, 400), 1), np.round(rng.normal(0, 1, 400), 1)
    h = auc(m, n, rule="hull")
    assert h > auc(m, n)
    met = roc_metrics(m, n, rule="hull", n_bootstrap=20, seed=0)
    assert met.auc == h and met.rule == "hull"
    assert met.advantage == roc_metrics(m, n, rule="step", n_bootstrap=20, seed=0).advantage
    assert ScoreAuditor(m, n).auc(rule="hull") == h
    with pytest.raises(ValueError, match="se=True needs rule='step'"):
        auc(m, n, rule="hull", se=True)
    with pytest.raises(ValueError, match="rule must be one of"):
        auc(m, n, rule="convex")

"""Per-datum leakage (``per_datum_leakage`` seed): symbolic <-> numeric <-> Monte Carlo.

Monte Carlo tolerances: 4.5 standard errors (``MC_SIGMAS``), SEs stated per check.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import integrate, stats
from scipy.special import ndtri

from semi_core.attacks import leakage as A
from semi_core.mechanisms.per_datum import PerDatumMean, seed_bernoulli, seed_targets
from semi_core.stats import leakage as L
from semi_core.symbolic import leakage as S

MC_SIGMAS = 4.5


# ---------------------------------------------------------------- symbolic <-> numeric


def test_seed_forms_match_where_the_paper_is_right():
    for name in ("pdl_leakage", "pdl_power", "pdl_threshold", "pdl_gdp_delta",
                 "pdl_sub_paper_power", "pdl_miss_advantage"):
        assert getattr(S, name)().matches_seed() is True, name
    for name in ("pdl_sub_leakage", "pdl_sub_power", "pdl_eq10_var1"):
        assert getattr(S, name)().matches_seed() is False, name


def test_limit_forms_against_independent_numerics():
    ms = np.array([0.05, 0.5, 3.1, 8.9, 20.0])
    for m in ms:
        tv = integrate.quad(lambda t, m=m: 0.5 * abs(stats.norm.pdf(t, m / 2, math.sqrt(m))
                                                      - stats.norm.pdf(t, -m / 2, math.sqrt(m))),
                            -40, 40, points=[0.0], limit=200)[0]
        assert L.leakage(m) == pytest.approx(tv, abs=1e-9)
        for a in (1e-3, 0.01, 0.3):
            t = stats.norm.isf(a, -m / 2, math.sqrt(m))
            assert L.threshold(a, m) == pytest.approx(t, rel=1e-9)
            assert L.power(a, m) == pytest.approx(stats.norm.sf(t, m / 2, math.sqrt(m)),
                                                  rel=1e-9)


def test_gdp_delta_log_space_equals_derivation_and_quadrature():
    f = S.pdl_gdp_delta().lambdify()
    for m, e in [(0.3, 0.0), (1.0, 1.0), (4.0, 2.5), (9.0, 0.5)]:
        mu = math.sqrt(m)
        hs = integrate.quad(lambda t, mu=mu, e=e: max(
            stats.norm.pdf(t, mu) - math.exp(e) * stats.norm.pdf(t), 0.0), -20, 30, limit=200)[0]
        assert L.gdp_delta(e, m) == pytest.approx(float(f(e, m)), rel=1e-9)
        assert L.gdp_delta(e, m) == pytest.approx(hs, rel=1e-6, abs=1e-12)


@pytest.mark.parametrize("m,rho", [(1.0, 0.1), (3.1, 0.25), (8.9, 0.5), (4.9, 0.75)])
def test_subsampling_closed_forms_against_the_limit_experiment(m, rho):
    s = math.sqrt(m / rho)
    tv = integrate.quad(lambda t: 0.5 * rho * abs(stats.norm.pdf(t - s) - stats.norm.pdf(t)),
                        -20, s + 20, points=[s / 2], limit=200)[0]
    assert L.sub_leakage(m, rho) == pytest.approx(tv, abs=1e-9)
    assert L.sub_leakage(m, rho) <= rho
    a = 0.01
    xa = -ndtri(a)
    assert L.sub_power(a, m, rho) == pytest.approx(rho * stats.norm.sf(xa - s) + (1 - rho) * a)
    # threshold: logaddexp rewrite == lambdified derivation, and P0(l > t) = alpha
    fth = S.pdl_sub_threshold().lambdify()
    assert L.sub_threshold(a, m, rho) == pytest.approx(float(fth(a, m, rho)), rel=1e-10)
    lr = S.pdl_sub_log_lr().lambdify()
    assert L.sub_log_lr(0.7, m, rho) == pytest.approx(float(lr(0.7, m, rho)), rel=1e-10)
    # GDP curve: both hockey-stick divergences by quadrature
    for e in (0.0, 0.5, 2.0):
        p0 = stats.norm.pdf
        p1 = lambda t: rho * stats.norm.pdf(t - s) + (1 - rho) * stats.norm.pdf(t)  # noqa: E731
        hs = max(integrate.quad(lambda t, fa=fa, fb=fb, e=e: max(fa(t) - math.exp(e) * fb(t), 0.0),
                                -20, s + 20, points=[0.0, s / 2, s], limit=400)[0]
                 for fa, fb in ((p1, p0), (p0, p1)))
        assert L.sub_gdp_delta(e, m, rho) == pytest.approx(hs, rel=1e-5, abs=1e-10)


def test_misspecified_and_plugin_forms():
    ms, mt = 1.3, 2.2
    mid = L.miss_threshold_adv(ms, mt)
    m0, m1, sd = -mt / 2, ms - mt / 2, math.sqrt(mt)
    adv = stats.norm.sf(mid, m1, sd) - stats.norm.sf(mid, m0, sd)
    assert L.miss_advantage(ms, mt) == pytest.approx(adv, rel=1e-10)
    # the midpoint maximises TPR - FPR
    for t in (mid - 0.3, mid + 0.3):
        assert stats.norm.sf(t, m1, sd) - stats.norm.sf(t, m0, sd) < adv
    assert L.miss_power(0.01, mt, mt) == pytest.approx(L.power(0.01, mt))
    assert L.plugin_effective_score(4.0, 500, 1000) == pytest.approx(4.0 * 0.5 / 1.5)


def test_edgeworth_cdf_and_cornish_fisher_are_inverse_to_first_order():
    F = S.pdl_edgeworth_cdf().lambdify()
    q = S.pdl_cornish_fisher().lambdify()
    for z in (-2.3, 0.4, 2.33):
        for lam in (0.01, 0.05):
            gap = abs(F(q(z, lam), lam) - stats.norm.cdf(z))
            assert gap < 0.5 * lam**2, (z, lam, gap)   # second order only
    # the Edgeworth CDF of a standardised Gamma(k) beats Phi (skewness 2/sqrt(k))
    for k in (5, 20):
        lam = 2 / math.sqrt(k)
        xs = np.linspace(-2, 2, 41)
        exact = stats.gamma.cdf(k + math.sqrt(k) * xs, k)
        assert np.max(np.abs(F(xs, lam) - exact)) < 0.4 * np.max(np.abs(stats.norm.cdf(xs)
                                                                           - exact))


def test_bernoulli_k3_and_plugin_moments():
    p = np.array([0.1, 0.3, 0.5])
    assert np.allclose(L.bernoulli_k3(p), p * (1 - p) * (1 - 2 * p))
    assert str(S.pdl_plugin_effective_score().expr) == "lambda_ref*m/(lambda_ref + 1)"


# ---------------------------------------------------------------- numeric <-> Monte Carlo


def _small(d=400, n=80, seed=3):
    law = seed_bernoulli(d, seed=seed)
    return law, seed_targets(law, seed=seed), n


def test_sufficient_and_exact_modes_give_the_same_law():
    """Mean/var of the exact log-LR under both simulation modes (4.5 SE of the difference)."""
    law, tg, n = _small(d=60, n=20)
    for rho in (1.0, 0.5):
        stats_ = []
        for mode in ("sufficient", "exact"):
            mech = PerDatumMean(law, n, tg["easy"], rho=rho, mode=mode)
            r = A.simulate_leakage(mech, 3000, 11, attacks=("exact",))
            stats_.append({h: r.scores("exact")[1 - h] for h in (0, 1)})
        for h in (0, 1):
            a, b = stats_[0][h], stats_[1][h]
            a, b = a[np.isfinite(a)], b[np.isfinite(b)]
            se = math.sqrt(a.var() / a.size + b.var() / b.size)
            assert abs(a.mean() - b.mean()) < MC_SIGMAS * se, (rho, h)


def test_eq10_cumulants_exact_at_finite_n():
    """The Eq. (10) statistic's mean/variance equal the summed derivations (4.5 SE)."""
    law, tg, n = _small(d=200, n=15)
    mech = PerDatumMean(law, n, tg["medium"], test="approx")
    cum = L.eq10_cumulants(tg["medium"], law.mean, law.var, n, k3=law.k3)
    r = A.simulate_leakage(mech, 20000, 5, attacks=("approx",))
    for h in (0, 1):
        s = r.scores("approx")[1 - h]
        k1, k2 = cum[f"k1_{h}"], cum[f"k2_{h}"]
        assert abs(s.mean() - k1) < MC_SIGMAS * math.sqrt(k2 / s.size)
        # SE of a sample variance ~ k2 sqrt(2/N) (near-Gaussian)
        assert abs(s.var() - k2) < MC_SIGMAS * k2 * math.sqrt(2 / s.size)


def test_power_at_fpr_matches_theory_seed_like_ratio():
    """tau = d/n = 5 as in the seed, smaller n: exact LR power at 10% FPR within 4.5 SE."""
    law, tg, n = _small(d=1000, n=200)
    for name in ("easy", "hard"):
        mech = PerDatumMean(law, n, tg[name])
        r = A.simulate_leakage(mech, 6000, 7, attacks=("exact", "approx"))
        s = A.summarize_leakage(r, (0.1,))
        th = mech.theory(0.1)
        for att in ("exact", "approx"):
            got, se = s[att]["tpr_at_fpr"]["0.1"], s[att]["tpr_se"]["0.1"]
            assert abs(got - th["power"]) < MC_SIGMAS * se + 0.01, (name, att, got, th)
        adv, se = s["exact"]["bayes_advantage"], s["exact"]["bayes_advantage_se"]
        assert abs(adv - th["leakage"]) < MC_SIGMAS * se + 0.01


def test_shared_inclusion_subsampling_corrected_form_and_not_the_paper():
    """rho = 0.25: the corrected power matches, the paper's sqrt(rho m*) form does not."""
    law, tg, n = _small(d=1000, n=200)
    mech = PerDatumMean(law, n, tg["easy"], rho=0.25)
    r = A.simulate_leakage(mech, 6000, 9, attacks=("exact", "paper-sub"))
    s = A.summarize_leakage(r, (0.1,))
    th = mech.theory(0.1)
    got, se = s["exact"]["tpr_at_fpr"]["0.1"], s["exact"]["tpr_se"]["0.1"]
    assert abs(got - th["power"]) < MC_SIGMAS * se + 0.01
    assert abs(got - th["paper"]["power"]) > 6 * se
    # the paper's per-coordinate statistic is a worse test than the exact mixture
    assert s["paper-sub"]["auc"] <= s["exact"]["auc"] + 3 * s["exact"]["auc_se"]


def test_noise_reduces_leakage_as_m_tilde():
    law, tg, n = _small(d=1000, n=200)
    mech = PerDatumMean(law, n, tg["easy"], noise_std=0.5)
    assert mech.test == "approx"
    m_t = L.leakage_score(tg["easy"], law.mean, law.var, n, noise_var=0.25)
    assert mech.m_star == pytest.approx(float(m_t))
    r = A.simulate_leakage(mech, 6000, 4, attacks=("approx",))
    s = A.summarize_leakage(r, (0.1,))
    got, se = s["approx"]["tpr_at_fpr"]["0.1"], s["approx"]["tpr_se"]["0.1"]
    assert abs(got - L.power(0.1, m_t)) < MC_SIGMAS * se + 0.01


@pytest.mark.parametrize("rounds", [
    2000,  # the fast tier's check (SE ~0.011 at power 0.5)
    pytest.param(6000, marks=pytest.mark.slow),  # the tighter one (SE ~0.006)
])
def test_plugin_power_loss_matches_lambda_over_one_plus_lambda(rounds):
    law, tg, n = _small(d=1000, n=200)
    mech = PerDatumMean(law, n, tg["easy"])
    rows = A.power_loss_curve(mech, [0.25, 2.0], rounds, seed=1, alpha=0.1)
    for row in rows:
        got, se = row["plugin-known-var_power"], row["plugin-known-var_se"]
        assert abs(got - row["theory_power"]) < MC_SIGMAS * se + 0.015, row
    assert rows[0]["theory_power"] < rows[1]["theory_power"] < rows[1]["oracle_theory_power"]


def test_misspecified_power_and_plugin_full_covariance():
    law, tg, n = _small(d=300, n=60)
    rng = np.random.default_rng(0)
    z = tg["easy"]
    zt = np.where(rng.random(z.size) < 0.2, 1 - z, z)     # 20% of coordinates flipped
    mech = PerDatumMean(law, n, z)
    r = A.simulate_leakage(mech, 6000, 2, attacks=("misspecified",), z_targ=zt)
    ms = L.misspecified_scores(zt, z, law.mean, law.var, n)
    s = A.summarize_leakage(r, (0.1,))
    got, se = s["misspecified"]["tpr_at_fpr"]["0.1"], s["misspecified"]["tpr_se"]["0.1"]
    assert abs(got - L.miss_power(0.1, ms["m_scal"], ms["m_targ"])) < MC_SIGMAS * se + 0.015
    # full-covariance plug-in (n0 < d, Woodbury) agrees with the diagonal one on product data
    ref = law.sample(rng, 100)
    b = rng.random(400) < 0.5
    rel = mech.release(b, None, rng)
    full = A.plugin_lr_full(mech, rel, ref)
    assert np.all(np.isfinite(full))
    assert np.corrcoef(full, mech.approx_log_lr(rel))[0, 1] > 0.5


def test_mechanism_protocol_play_and_audit():
    from semi_core.audit.games import audit_mechanism
    from semi_core.game.play import play
    from semi_core.mechanisms.base import GroundTruthUnknown, is_mechanism

    law, tg, n = _small(d=200, n=40)
    mech = PerDatumMean(law, n, tg["easy"])
    assert is_mechanism(mech)
    res = play(mech, 400, seed=1, tau=1)
    assert res.rounds == 400 and "semi-star" in res.stats
    with pytest.raises(GroundTruthUnknown):
        mech.epsilon(1e-5)
    out = audit_mechanism(mech, 400, 1, delta=1e-3)
    assert out["epsilon_true"] is None and out["tests"]


def test_most_exposed_ranks_by_mahalanobis():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 10))
    X[17] = 6.0
    out = A.most_exposed(X, rank=3)
    assert out["index"][0] == 17 and out["m_star"][0] > out["m_star"][1]


def test_same_seed_same_result():
    law, tg, n = _small(d=100, n=30)
    mech = PerDatumMean(law, n, tg["medium"])
    a = A.simulate_leakage(mech, 500, 3, attacks=("exact",), chunk_size=100)
    b = A.simulate_leakage(mech, 500, 3, attacks=("exact",), chunk_size=100)
    assert np.array_equal(a.stats["exact"], b.stats["exact"])

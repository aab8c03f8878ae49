"""PerDatumMean: one threshold scale, inclusion models, the average-datum game.

Monte Carlo tolerances: ``MC_SIGMAS`` standard errors, each SE stated at its check.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from semi_core.mechanisms.per_datum import THRESHOLD_SCALE, PerDatumMean, ProductLaw

MC_SIGMAS = 4.5


def _gauss(d, seed=0):
    law = ProductLaw.gaussian(np.zeros(d), 1.0)
    z = law.sample(np.random.default_rng(seed), 1)[0]
    return law, z


@pytest.mark.parametrize("rho", [1.0, 0.5])
def test_threshold_is_on_the_exact_log_lr_scale(rho):
    # one scale: the H0 rate of exact_log_lr > threshold is the FPR (limit experiment; n = d =
    # 2000 Gaussian data, so the finite-n error is far below the MC SE sqrt(a(1-a)/R) = .0021)
    law, z = _gauss(2000)
    mech = PerDatumMean(law, 2000, z, rho=rho)
    th = mech.theory(0.1)
    assert th["threshold_scale"] == THRESHOLD_SCALE == "log_lr"
    R = 20000
    rel = mech.release(np.zeros(R, bool), np.ones(R, int), np.random.default_rng(1))
    fpr = float(np.mean(mech.exact_log_lr(rel) > th["threshold"]))
    se = math.sqrt(0.1 * 0.9 / R)
    assert abs(fpr - 0.1) < MC_SIGMAS * se + 0.005, (fpr, th)


# ---------------------------------------------------------------- inclusion models


def test_inclusion_argument_is_validated():
    law, z = _gauss(5)
    with pytest.raises(ValueError, match="inclusion must be one of"):
        PerDatumMean(law, 30, z, rho=0.5, inclusion="row")


def test_per_coordinate_inclusion_is_independent_across_coordinates():
    # exact mode (row by row, one k-subset per coordinate) against the sufficient shortcut:
    # under H1 with z = mu + 10 on every coordinate, the number of coordinates that hold the
    # target is Bin(d, q) per-coordinate, and 0 or d with the shared event. q = 1/2, d = 20.
    law = ProductLaw.gaussian(np.zeros(20), 0.01)
    z = np.full(20, 10.0)
    R = 400
    for mode in ("sufficient", "exact"):
        counts = {}
        for inc in ("shared", "per-coordinate"):
            m = PerDatumMean(law, 20, z, rho=0.5, mode=mode, inclusion=inc)
            o = m.release(np.ones(R, bool), np.ones(R, int), np.random.default_rng(3))[:, 0]
            counts[inc] = np.sum(o > 0.5, axis=1)          # 10/k = 1 vs ~0 when excluded
        assert set(np.unique(counts["shared"])) <= {0, 20}
        # Bin(20, 1/2): mean 10, SE of the mean over R rounds sqrt(5 / 400) = .11
        c = counts["per-coordinate"]
        assert abs(c.mean() - 10) < MC_SIGMAS * math.sqrt(5 / R)
        assert abs(c.var() - 5) < 1.5                      # var of Bin(20, .5) = 5


@pytest.mark.parametrize("inclusion", ["shared", "per-coordinate"])
def test_subsampled_power_matches_each_inclusions_closed_form(inclusion):
    # shared: rho Phi(z_a + sqrt(m/rho)) + (1 - rho) a (corrected); per-coordinate: Eq. (16)
    # Phi(z_a + sqrt(rho m*)). Gaussian data n = d = 2000, m* = 6.25, rho = 1/2, alpha = .01,
    # R = 6000: delta-method SE of the TPR (about .01-.03), plus .02 for the finite-n limit.
    from semi_core.attacks.leakage import simulate_leakage, summarize_leakage

    law = ProductLaw.gaussian(np.zeros(2000), 1.0)
    z = np.full(2000, 2.5)
    mech = PerDatumMean(law, 2000, z, rho=0.5, inclusion=inclusion)
    th = mech.theory(0.01)
    s = summarize_leakage(simulate_leakage(mech, 6000, 5, attacks=("exact",)), (0.01,))["exact"]
    tpr, se = s["tpr_at_fpr"]["0.01"], s["tpr_se"]["0.01"]
    assert abs(tpr - th["power"]) < MC_SIGMAS * se + 0.02, (tpr, se, th)
    other = th["paper"]["power"]
    if inclusion == "per-coordinate":
        assert other == pytest.approx(th["power"], rel=1e-9)
    else:
        assert abs(tpr - other) > MC_SIGMAS * se, (tpr, other)   # Eq. 16 misses the shared law


# ---------------------------------------------------------------- average-datum game


def test_average_datum_refusals():
    from semi_core.mechanisms.per_datum import AverageDatumMean, seed_bernoulli

    with pytest.raises(ValueError, match="average-datum LR needs"):
        AverageDatumMean(seed_bernoulli(10), 20, noise_std=0.5)
    with pytest.raises(ValueError, match="n"):
        AverageDatumMean(seed_bernoulli(10), 1)


@pytest.mark.parametrize("sd,gamma", [(1.0, 0.0), (2.0, 1.5)])
def test_average_datum_log_lr_moments_match_the_derived_closed_form(sd, gamma):
    # exact finite-n moments (symbolic.leakage.avg_moments) vs the runner's games, n = 100,
    # d = 300. Tolerance MC_SIGMAS SEs: mean SE sqrt(var/R_b), variance SE from the sample's
    # fourth central moment sqrt((m4 - var^2)/R_b).
    from semi_core.attacks.leakage import simulate_average_datum
    from semi_core.mechanisms.per_datum import AverageDatumMean

    law = ProductLaw.gaussian(np.zeros(300), sd)
    mech = AverageDatumMean(law, 100, noise_std=gamma)
    ex = mech.theory()["exact_moments"]
    res = simulate_average_datum(mech, 16000, 7)
    mem, non = res.scores("exact")
    for x, mk, vk in ((non, "mean0", "var0"), (mem, "mean1", "var1")):
        R, v = x.size, x.var()
        m4 = np.mean((x - x.mean()) ** 4)
        assert abs(x.mean() - ex[mk]) < MC_SIGMAS * math.sqrt(v / R), (mk, x.mean(), ex[mk])
        assert abs(v - ex[vk]) < MC_SIGMAS * math.sqrt((m4 - v**2) / R), (vk, v, ex[vk])
    # the exact moments differ from the limit N(-+M/2, M) at O(M r^2) (Var_1 = M exactly)
    M = ex["M"]
    assert ex["mean0"] < -M / 2 and ex["var0"] > M and ex["var1"] == pytest.approx(M)


def test_average_datum_bernoulli_limit_and_runner_identity():
    # Bernoulli (seed App. E.1 law): the limit N(-+tau/2, tau), tau = d/n (Remark 3.3,
    # Sankararaman et al.): power at alpha = .1 within MC_SIGMAS SEs + .03 (finite n = 200).
    from semi_core.attacks.leakage import simulate_average_datum, summarize_leakage
    from semi_core.game.backends import Executor
    from semi_core.mechanisms.per_datum import AverageDatumMean, seed_bernoulli

    mech = AverageDatumMean(seed_bernoulli(400), 200)
    th = mech.theory(0.1)
    assert th["M"] == pytest.approx(2.0)
    res = simulate_average_datum(mech, 6000, 11, chunk_size=1500)
    s = summarize_leakage(res, (0.1,))["exact"]
    assert abs(s["tpr_at_fpr"]["0.1"] - th["power"]) < MC_SIGMAS * s["tpr_se"]["0.1"] + 0.03
    assert abs(s["bayes_advantage"] - th["advantage"]) < (MC_SIGMAS * s["bayes_advantage_se"]
                                                         + 0.03)
    res2 = simulate_average_datum(mech, 6000, 11, chunk_size=1500, executor=Executor(threads=2))
    assert np.array_equal(res.stats["exact"], res2.stats["exact"])

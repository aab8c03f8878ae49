"""One-run f-DP audit (Mahloujifar, Melis & Chaudhuri 2024): recursion, peer values, validity.

Checked three ways: (1) the vectorised recursion against a plain-Python transcription of the
derivation in :mod:`semi_core.audit.one_run_fdp` and against closed forms (pure DP: never above
Steinke et al.'s exact binomial test, equal to it when every guess is correct); (2) against the
peer (jax_privacy ``epsilon_one_run_fdp``) on hand-computed cases; (3) Monte Carlo: a mechanism
that is exactly f-DP is refuted in at most xi of the runs (Clopper-Pearson interval on the
over-claim rate), with a power check so that the test can fail both ways.
"""

import math
from statistics import NormalDist

import numpy as np
import pytest
from scipy.special import expit, logit, ndtr, ndtri

from semi_core.audit import (
    ScoreAuditor,
    audit_batch,
    epsilon_lower_bound,
    gdp_delta,
    gdp_epsilon,
)
from semi_core.audit.one_run import guess_family, one_run_epsilon
from semi_core.audit.one_run_fdp import (
    _rejects,
    blowup_inverse,
    check_tradeoff,
    one_run_fdp_bound,
    one_run_fdp_epsilon,
    one_run_fdp_p_value,
    one_run_fdp_rejects,
    profile_blowup_inverse,
)
from semi_core.stats.binomial import clopper_pearson_lower, clopper_pearson_upper

_N = NormalDist()


def _scalar_rejects(m, r, v, xi, theta, tradeoff, delta=0.0):
    """Plain-Python transcription of the recursion (no early exit, no numpy)."""
    def ginv(y):
        if tradeoff == "gdp":
            if y <= 0.0:
                return 0.0
            return _N.cdf(_N.inv_cdf(min(y, 1 - 1e-16)) - theta)
        return max(0.0, (y - delta) * math.exp(-theta),
                   1 - delta - math.exp(min(theta, 700)) * (1 - y))
    a, b = xi * v / m, xi * (r - v) / m
    for i in range(v - 1, -1, -1):
        nb = max(b, ginv(min(a, 1.0)))
        a, b = a + i / (r - i) * (nb - b), nb
    return a + b > r / m * (1 + 1e-12)


def _scalar_bound(m, r, v, xi, tradeoff, delta=0.0):
    if not _scalar_rejects(m, r, v, xi, 0.0, tradeoff, delta):
        return 0.0
    lo, hi = 0.0, 1.0
    while _scalar_rejects(m, r, v, xi, hi, tradeoff, delta):
        lo, hi = hi, 2 * hi
    for _ in range(45):
        mid = 0.5 * (lo + hi)
        lo, hi = (mid, hi) if _scalar_rejects(m, r, v, xi, mid, tradeoff, delta) else (lo, mid)
    return lo


@pytest.mark.parametrize(("m", "r", "v", "xi", "tradeoff", "delta"), [
    (1000, 100, 90, 0.05, "gdp", 0.0), (200, 40, 35, 0.1, "gdp", 0.0),
    (1000, 50, 50, 0.05, "gdp", 0.0), (500, 200, 150, 0.01, "eps-delta", 1e-5),
    (1000, 100, 90, 0.05, "eps-delta", 0.0), (60, 60, 45, 0.05, "eps-delta", 1e-3),
])
def test_vectorised_recursion_matches_the_scalar_transcription(m, r, v, xi, tradeoff, delta):
    want = _scalar_bound(m, r, v, xi, tradeoff, delta)
    got = one_run_fdp_bound(m, r, v, tradeoff=tradeoff, delta=delta, failure_prob=xi)
    assert got == pytest.approx(want, rel=1e-7, abs=1e-9)
    assert got > 0


def test_rejections_form_an_interval_in_the_parameter():
    # f_theta weakens as theta grows: rejected exactly on [0, theta*) (validity of the search)
    for tradeoff in ("gdp", "eps-delta"):
        th = np.linspace(0.0, 4.0, 401)
        rej = _rejects(1000, 300, 240, 0.05, th, tradeoff, 1e-5)
        k = int(rej.sum())
        assert k > 0 and rej[:k].all() and not rej[k:].any()
        b = one_run_fdp_bound(1000, 300, 240, tradeoff=tradeoff, delta=1e-5)
        assert th[k - 1] <= b < th[k]


@pytest.mark.parametrize(("m", "r", "v"), [(1000, 100, 90), (1000, 1000, 800), (200, 200, 150),
                                           (5000, 1000, 900), (1000, 200, 170), (100, 30, 27)])
def test_pure_dp_never_beats_the_exact_binomial_test(m, r, v):
    # delta = 0: Steinke et al.'s test is the exact tail of eps-randomised response, which IS an
    # eps-DP mechanism; a valid f-DP test cannot reject more (measured: 1-2 % below it).
    fdp = one_run_fdp_epsilon(m, r, v, delta=0.0, tradeoff="eps-delta")
    exact = one_run_epsilon(m, r, v, delta=0.0)
    assert 0.95 * exact < fdp <= exact + 1e-8


@pytest.mark.parametrize(("r", "xi"), [(10, 0.05), (100, 0.05), (100, 0.01), (400, 0.1)])
def test_all_guesses_correct_pure_dp_closed_form(r, xi):
    # v = r: the recursion reaches Steinke's closed form logit(xi^(1/r)) (both tight here)
    got = one_run_fdp_epsilon(1000, r, r, delta=0.0, tradeoff="eps-delta", failure_prob=xi)
    assert got == pytest.approx(float(logit(xi ** (1 / r))), abs=1e-6)


# Peer values: jax_privacy.auditing._epsilon_one_run_fdp(0, m, n_guess, n_correct, significance,
# delta) (the recursion of Mahloujifar et al. with the Gaussian curve whose sigma is
# dp_accounting.get_sigma_gaussian(eps, delta), brentq on eps to 1e-6). jax is not installed
# here: the numbers were computed once by an independent scalar script written from the paper's
# recursion in mpmath at 50 digits, parametrised exactly like the peer (eps -> sigma via
# dp_accounting, mu = 1/sigma; bisection on eps to 1e-12), not from our code. Ours certifies
# mu, then eps = eps_GDP(mu_lower, delta): the same monotone map, so agreement to the peer's
# tolerance (1e-6) plus dp_accounting's sigma tolerance is expected.
PEER = [  # (m, n_guess, n_correct, significance, delta) -> eps
    ((1000, 100, 90, 0.05, 1e-5), 2.456405),
    ((1000, 500, 400, 0.05, 1e-5), 2.076807),
    ((100, 100, 100, 0.05, 1e-5), 8.216186),
    ((5000, 1000, 900, 0.01, 1e-6), 2.891148),
    ((1000, 50, 50, 0.05, 1e-5), 4.061915),
]


@pytest.mark.parametrize(("case", "peer"), PEER)
def test_agrees_with_the_peer_on_hand_computed_cases(case, peer):
    m, k, v, xi, delta = case
    ours = one_run_fdp_epsilon(m, k, v, delta=delta, failure_prob=xi, tradeoff="gdp")
    assert ours == pytest.approx(peer, abs=2e-5)


def test_blowup_inverse_is_the_inverse_of_one_minus_f():
    x = np.array([1e-12, 1e-6, 0.01, 0.3, 0.7, 0.999])
    mu = 1.7
    g = 1 - np.array([_N.cdf(_N.inv_cdf(1 - a) - mu) for a in x])  # g = 1 - f_mu
    assert np.allclose(blowup_inverse(g, mu, tradeoff="gdp"), x, rtol=1e-8)
    eps, delta = 1.3, 1e-3
    f = np.maximum(0, np.maximum(1 - delta - np.exp(eps) * x, np.exp(-eps) * (1 - delta - x)))
    y = 1 - f
    assert np.allclose(blowup_inverse(y, eps, tradeoff="eps-delta", delta=delta), x, rtol=1e-9)
    # log-space: tiny probabilities are resolved, not rounded to 0
    assert 0 < float(blowup_inverse(1e-10, 8.0, tradeoff="gdp")) < 1e-30


# --------------------------------------------------------------------------- Monte Carlo
def _cp_interval(k, n, level=1e-3):
    return float(clopper_pearson_lower(k, n, level)), float(clopper_pearson_upper(k, n, level))


def _rr_overclaim(runs, seed, eps0=1.0, m=1000, r=200, xi=0.05):
    # eps0-randomised response per canary is exactly f_{eps0,0}-DP and the extremal mechanism:
    # each guess is correct w.p. expit(eps0), so W ~ Bin(r, expit(eps0)).
    v = np.random.default_rng(seed).binomial(r, expit(eps0), size=runs)
    return int(_rejects(m, np.full(runs, r), v, xi, eps0, "eps-delta", 0.0).sum())


def test_validity_randomised_response_at_the_boundary():
    # over-claim rate <= xi (its CP lower end at 1e-3), and near xi: the test is tight on the
    # extremal mechanism, so a recursion that were too bold would show up here
    runs, xi = 3000, 0.05
    k = _rr_overclaim(runs, seed=11)
    lo, hi = _cp_interval(k, runs)
    assert lo <= xi
    assert hi >= 0.5 * xi  # measured 0.043 over 4000 runs


def _gaussian_counts(runs, m, mu, k, seed):
    rng = np.random.default_rng(seed)
    s = rng.random((runs, m)) < 0.5
    x = rng.standard_normal((runs, m)) + mu * s
    lab = np.take_along_axis(s, np.argsort(x, axis=1), axis=1)
    return lab[:, m - k:].sum(axis=1) + (~lab[:, :k]).sum(axis=1)


def test_validity_and_power_gaussian_mechanism():
    # canary scores N(mu S_i, 1): releasing them is exactly mu-GDP per canary (flipping S_i shifts
    # one coordinate by mu). mu-GDP refuted in <= xi of runs; a half-size mu is refuted often.
    runs, m, mu, k, xi = 1000, 1000, 2.0, 100, 0.05
    v = _gaussian_counts(runs, m, mu, k, seed=12)
    over = int(_rejects(m, np.full(runs, 2 * k), v, xi, mu, "gdp", 0.0).sum())
    assert _cp_interval(over, runs)[0] <= xi
    power = _rejects(m, np.full(runs, 2 * k), v, xi, 0.5 * mu, "gdp", 0.0).mean()
    assert power > 0.5
    # the search and the decision agree: mu_lower > mu exactly when mu is refuted
    for vi in v[:5]:
        b = one_run_fdp_bound(m, 2 * k, int(vi), failure_prob=xi, tradeoff="gdp")
        assert (b > mu) == one_run_fdp_rejects(m, 2 * k, int(vi), mu, failure_prob=xi,
                                               tradeoff="gdp")


@pytest.mark.slow
def test_validity_many_runs():
    # >= 1000 runs at the boundary: RR (eps-delta family) and the Gaussian mechanism through the
    # full method (family of guesses, Bonferroni), eps_LB > eps_true at most at rate xi.
    runs, xi = 20000, 0.05
    k = _rr_overclaim(runs, seed=21, eps0=2.0, r=300)
    assert _cp_interval(k, runs)[0] <= xi
    rng = np.random.default_rng(22)
    m, mu, delta, runs = 500, 1.5, 1e-5, 1000
    truth = gdp_epsilon(mu, delta)
    s = rng.random((runs, m)) < 0.5
    x = rng.standard_normal((runs, m)) + mu * s
    over = 0
    for i in range(runs):
        try:
            e = epsilon_lower_bound(x[i, s[i]], x[i, ~s[i]], delta=delta, method="one-run-fdp",
                                    failure_prob=xi, tradeoff="gdp").epsilon_lower_bound
        except ValueError:  # class sizes refused (rate <= 1e-3 by design)
            continue
        over += e > truth
    assert _cp_interval(over, runs)[0] <= xi


# --------------------------------------------------------------------------- entry points
def _canaries(m=2000, mu=3.0, seed=5):
    rng = np.random.default_rng(seed)
    s = rng.random(m) < 0.5
    x = rng.standard_normal(m) + mu * s
    return x[s], x[~s]


def test_entry_points_reach_the_method():
    mem, non = _canaries()
    res = epsilon_lower_bound(mem, non, delta=1e-5, method="one-run-fdp", tradeoff="gdp")
    truth = gdp_epsilon(3.0, 1e-5)
    assert 0 < res.epsilon_lower_bound < truth
    assert res.assumption == "one-run-bernoulli-half+mu-gdp" and res.mu_lower > 0
    assert res.epsilon_lower_bound == pytest.approx(gdp_epsilon(res.mu_lower, 1e-5))
    assert res.n_thresholds == len(guess_family(mem.size + non.size))
    assert res.n_guesses >= res.n_correct > res.n_guesses / 2
    ed = epsilon_lower_bound(mem, non, delta=1e-5, method="one-run-fdp", tradeoff="eps-delta")
    assert ed.assumption == "one-run-bernoulli-half" and ed.mu_lower is None
    # the default is the (eps, delta) curve: no assumption on the mechanism's curve
    dflt = epsilon_lower_bound(mem, non, delta=1e-5, method="one-run-fdp")
    assert dflt.assumption == "one-run-bernoulli-half" and dflt.mu_lower is None
    assert dflt.epsilon_lower_bound == ed.epsilon_lower_bound
    one = epsilon_lower_bound(mem, non, delta=1e-5, method="one-run")
    # the Gaussian curve is read in full: tighter than the (eps, delta) counting bounds
    assert res.epsilon_lower_bound > one.epsilon_lower_bound > 0
    assert ed.epsilon_lower_bound == pytest.approx(one.epsilon_lower_bound, rel=0.05)
    sa = ScoreAuditor(mem, non).epsilon_lower_bound(delta=1e-5, method="one-run-fdp",
                                                    tradeoff="gdp")
    assert sa.epsilon_lower_bound == res.epsilon_lower_bound
    batch = audit_batch(np.stack([mem, mem]), np.stack([non, non]), delta=1e-5,
                        method="one-run-fdp", tradeoff="gdp")
    assert np.all(batch == res.epsilon_lower_bound)
    assert "one-run-fdp" not in [r["method"] for r in ScoreAuditor(mem, non).summary().rows]


def test_cli_reaches_the_method(tmp_path, capsys):
    import json

    from semi_core.cli import main

    mem, non = _canaries(m=400)
    p = tmp_path / "s.csv"
    rows = [f"{x},1" for x in mem] + [f"{x},0" for x in non]
    p.write_text("score,member\n" + "\n".join(rows) + "\n")
    rc = main(["audit", "--scores", str(p), "--delta", "1e-5", "--method", "one-run-fdp",
               "--json"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["method"] == "one-run-fdp" and out["epsilon_lower_bound"] > 0
    assert out["assumption"] == "one-run-bernoulli-half" and out["mu_lower"] is None
    rc = main(["audit", "--scores", str(p), "--delta", "1e-5", "--method", "one-run-fdp",
               "--tradeoff", "gdp", "--json"])
    assert rc == 0
    gdp = json.loads(capsys.readouterr().out)
    assert gdp["assumption"] == "one-run-bernoulli-half+mu-gdp" and gdp["mu_lower"] > 0
    # the delta-free default works at delta = 0; the Gaussian curve is refused there
    assert main(["audit", "--scores", str(p), "--delta", "0", "--method", "one-run-fdp",
                 "--json"]) == 0
    capsys.readouterr()
    assert main(["audit", "--scores", str(p), "--delta", "0", "--method", "one-run-fdp",
                 "--tradeoff", "gdp", "--json"]) != 0
    assert "delta must be > 0" in json.loads(capsys.readouterr().out)["error"]
    # --tradeoff belongs to one-run-fdp; --seed draws nothing for one-run (ties abstained)
    for extra in (["--method", "band", "--tradeoff", "gdp"],
                  ["--method", "one-run", "--seed", "3"]):
        assert main(["audit", "--scores", str(p), "--delta", "1e-5", *extra, "--json"]) != 0
        assert "error" in json.loads(capsys.readouterr().out)


@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    ({"delta": 0.0, "tradeoff": "gdp"}, ValueError, "delta must be > 0"),
    ({"delta": 1e-5, "tradeoff": "pld"}, ValueError, "tradeoff must be one of"),
    ({"delta": 1e-5, "guesses": (3000, 0)}, ValueError, "guesses must be"),
    ({"delta": 1.0}, ValueError, "delta"),
    ({"delta": 1e-5, "failure_prob": 0.7}, ValueError, "failure_prob"),
])
def test_bad_inputs_through_the_entry_point(kwargs, exc, match):
    mem, non = _canaries(m=400)
    with pytest.raises(exc, match=match):
        epsilon_lower_bound(mem, non, method="one-run-fdp", **kwargs)


def test_refusals():
    # unbalanced classes: not Bernoulli(1/2) inclusion, refused with the method named
    with pytest.raises(ValueError, match="method='one-run-fdp' needs canaries included"):
        epsilon_lower_bound(np.ones(900), np.zeros(100), delta=1e-5, method="one-run-fdp")
    with pytest.raises(ValueError, match="tradeoff is only used by method='one-run-fdp'"):
        epsilon_lower_bound(np.ones(50), np.zeros(50), delta=1e-5, method="band",
                            tradeoff="gdp")
    with pytest.raises(ValueError, match="v <= r"):
        one_run_fdp_bound(10, 5, 6, tradeoff="gdp")
    with pytest.raises(ValueError, match="theta"):
        one_run_fdp_rejects(10, 5, 3, -1.0, tradeoff="gdp")
    with pytest.raises(ValueError, match="probabilities"):
        blowup_inverse(1.5, 1.0, tradeoff="gdp")
    # the family is named wherever it changes what is returned (mu or eps): no default
    with pytest.raises(TypeError, match="tradeoff"):
        one_run_fdp_bound(10, 5, 3)
    # m too small to certify anything: the bound is 0, and max_certifiable says so
    assert ScoreAuditor(np.ones(2), np.zeros(2)).max_certifiable_epsilon(
        delta=1e-5, method="one-run-fdp") == 0.0


def test_log_space_large_mu_is_finite():
    # every guess right on many canaries: mu_lower large; the recursion stays finite (no NaN)
    mu = one_run_fdp_bound(100_000, 20_000, 20_000, failure_prob=0.05, tradeoff="gdp")
    assert math.isfinite(mu) and mu > 2.5  # measured 2.635 (all 20,000 guesses right)
    assert math.isfinite(gdp_epsilon(mu, 1e-5))


# --------------------------------------------------------------------------- any claimed curve
def _gdp_f(mu):
    return lambda a: ndtr(ndtri(1 - a) - mu)


def test_claimed_curves_agree_with_the_families():
    # a callable f and a privacy profile give the p-value whose xi-crossing is the family bound
    m, r, v = 1000, 200, 170
    mu_lb = one_run_fdp_bound(m, r, v, tradeoff="gdp")
    eg = np.linspace(0.0, 12.0, 400)
    for mu, below in ((0.999 * mu_lb, True), (1.001 * mu_lb, False)):
        p_f = one_run_fdp_p_value(m, r, v, tradeoff=_gdp_f(mu))
        p_prof = one_run_fdp_p_value(m, r, v, profile=(eg, gdp_delta(eg, mu)))
        assert (p_f <= 0.05) == below and (p_prof <= 0.05) == below
        assert p_prof == pytest.approx(p_f, rel=0.01)  # both conservative, measured 0.1 %
    # the (eps, delta) curve as a callable reproduces the eps-delta family's decision
    e_lb = one_run_fdp_bound(m, r, v, tradeoff="eps-delta", delta=1e-5)
    for e, below in ((0.995 * e_lb, True), (1.005 * e_lb, False)):
        def f(a, e=e):
            return np.maximum(0, np.maximum(1 - 1e-5 - np.exp(e) * a,
                                            np.exp(-e) * (1 - 1e-5 - a)))

        assert (one_run_fdp_p_value(m, r, v, tradeoff=f) <= 0.05) == below


def _not_convex(a):
    return np.where(a <= 0.5, 0.5 - 0.3 * a, 0.35 * (1 - a) / 0.5)


@pytest.mark.parametrize(("f", "match"), [
    (lambda a: 1 - a / 2, "f\\(alpha\\) > 1 - alpha"),
    (lambda a: np.minimum(0.1 * a, 1 - a), "increases"),
    (_not_convex, "not convex"),
    (lambda a: np.full(a.shape, np.nan), "values in \\[0, 1\\]"),
    (lambda a: 0.5, "one value per alpha"),
])
def test_a_claimed_curve_that_is_not_a_tradeoff_function_is_refused(f, match):
    with pytest.raises(ValueError, match=match):
        one_run_fdp_p_value(100, 20, 15, tradeoff=f)


def test_claimed_curve_input_errors():
    with pytest.raises(TypeError, match="callable"):
        check_tradeoff(0.5)
    with pytest.raises(ValueError, match="exactly one"):
        one_run_fdp_p_value(100, 20, 15)
    with pytest.raises(ValueError, match="deltas must lie"):
        one_run_fdp_p_value(100, 20, 15, profile=([1.0], [1.5]))
    with pytest.raises(ValueError, match="same length"):
        one_run_fdp_p_value(100, 20, 15, profile=([1.0, 2.0], [0.1]))
    alpha, fa = check_tradeoff(_gdp_f(1.0))
    assert alpha[0] == 0.0 and alpha[-1] == 1.0 and fa[-1] == pytest.approx(0.0)


def test_subsampled_gaussian_pld_curve_validity():
    # per canary x_i = S_i * Bern(q) + N(0, sigma^2): one Poisson-subsampled Gaussian step
    # (add/remove), whose curve comes from dp_accounting's PLD accountant as a profile. The
    # claimed curve is refuted in <= xi of runs; a 4x weaker noise claim is refuted often.
    pytest.importorskip("dp_accounting")
    from dp_accounting.pld import privacy_loss_distribution as pld

    q, sigma, m, k, xi, runs = 0.5, 0.5, 1000, 50, 0.05, 300

    def profile(s):  # add/remove, pessimistic discretisation (an upper bound on delta)
        dist = pld.from_gaussian_mechanism(s, sampling_prob=q, value_discretization_interval=1e-3)
        eg = np.linspace(0.0, 12.0, 120)
        return eg, np.asarray(dist.get_delta_for_epsilon(eg), dtype=float)

    rng = np.random.default_rng(31)
    s = rng.random((runs, m)) < 0.5
    x = (s & (rng.random((runs, m)) < q)) + sigma * rng.standard_normal((runs, m))
    lab = np.take_along_axis(s, np.argsort(x, axis=1), axis=1)
    v = lab[:, m - k:].sum(axis=1) + (~lab[:, :k]).sum(axis=1)
    true_ginv = profile_blowup_inverse(*profile(sigma))
    over = int(_rejects(m, np.full(runs, 2 * k), v, xi, 0.0, true_ginv, 0.0).sum())
    assert _cp_interval(over, runs)[0] <= xi
    weak_ginv = profile_blowup_inverse(*profile(4 * sigma))
    assert _rejects(m, np.full(runs, 2 * k), v, xi, 0.0, weak_ginv, 0.0).mean() > 0.5

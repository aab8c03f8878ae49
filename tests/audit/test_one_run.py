"""One-run audits (Steinke, Nasr & Jagielski 2023): p-value, epsilon bound, guesses, validity.

Three ways: the vectorised p-value against a direct transcription of the theorem's loop and
against closed forms (delta = 0: binomial tail; all guesses correct: logit(xi^(1/r))); Monte
Carlo validity on randomised response (the extremal epsilon-DP mechanism, where the bound is
tight) and on Gaussian canaries, with the over-claim rate <= xi + 3 binomial SE.
"""

import math

import numpy as np
import pytest
from scipy.special import expit, logit
from scipy.stats import binom

from semi_core.audit import epsilon_lower_bound, gdp_epsilon
from semi_core.audit.one_run import (
    guess_family,
    one_run_counts,
    one_run_epsilon,
    one_run_gdp_mu,
    one_run_p_value,
)


def _p_loop(m, r, v, eps, delta):
    # direct transcription of the theorem: beta + 2 m delta max_i (1/i) P[v-i <= Bin < v]
    q = math.exp(eps) / (1 + math.exp(eps))
    beta = sum(math.comb(r, j) * q**j * (1 - q) ** (r - j) for j in range(v, r + 1))
    best, acc = 0.0, 0.0
    for i in range(1, v + 1):
        j = v - i
        acc += math.comb(r, j) * q**j * (1 - q) ** (r - j)
        best = max(best, acc / i)
    return min(1.0, beta + 2 * m * delta * best)


@pytest.mark.parametrize(("m", "r", "v", "eps", "delta"), [
    (100, 40, 30, 0.5, 1e-5), (100, 40, 40, 2.0, 1e-3), (50, 50, 20, 0.0, 0.01),
    (1000, 60, 55, 1.3, 1e-6), (10, 1, 1, 0.1, 0.0),
])
def test_p_value_matches_the_theorem_loop(m, r, v, eps, delta):
    assert one_run_p_value(m, r, v, eps, delta) == pytest.approx(_p_loop(m, r, v, eps, delta),
                                                                 rel=1e-10, abs=1e-300)


def test_delta_zero_is_the_binomial_tail_and_perfect_guesses_closed_form():
    assert one_run_p_value(200, 80, 60, 1.0, 0.0) == pytest.approx(
        binom.sf(59, 80, expit(1.0)), rel=1e-12)
    for r, xi in ((10, 0.05), (100, 0.05), (1000, 0.05), (1000, 0.01)):
        # P[Bin(r, q) >= r] = q^r = xi  =>  eps = logit(xi^(1/r))
        assert one_run_epsilon(5000, r, r, delta=0.0, failure_prob=xi) == pytest.approx(
            float(logit(xi ** (1 / r))), abs=1e-8)
    # e.g. 1000 correct guesses of 1000 at 95 %: eps >= 5.809 (the delta = 0 ceiling)
    assert one_run_epsilon(1000, 1000, 1000, delta=0.0, failure_prob=0.05) == pytest.approx(
        5.8091, abs=1e-3)


def test_epsilon_is_monotone_and_delta_costs():
    e0 = one_run_epsilon(1000, 200, 170, delta=0.0, failure_prob=0.05)
    e1 = one_run_epsilon(1000, 200, 170, delta=1e-5, failure_prob=0.05)
    e2 = one_run_epsilon(1000, 200, 180, delta=1e-5, failure_prob=0.05)
    assert 0 < e1 <= e0 and e2 > e1
    assert one_run_p_value(1000, 200, 170, e1, 1e-5) == pytest.approx(0.05, rel=1e-6)
    assert one_run_epsilon(1000, 200, 100, delta=1e-5, failure_prob=0.05) == 0.0  # chance level


def test_guesses_top_and_bottom():
    mem = np.array([5.0, 4.0, 0.5, -1.0])
    non = np.array([3.0, 0.0, -2.0, -3.0])
    # pooled order: 5 4 | 3 .5 0 -1 | -2 -3 ; top 2 in (both members), bottom 2 out (both non)
    r, v, cut = one_run_counts(mem, non, 2, 2)
    assert (r, v, cut) == (4, 4, 4.0)
    r, v, _ = one_run_counts(mem, non, 3, 0)
    assert (r, v) == (3, 2)
    assert guess_family(1000)[0] == (5, 5) and guess_family(1000)[-1] == (500, 500)


def test_randomised_response_validity_and_tightness():
    # eps0-randomised response per canary: a guess is correct w.p. expit(eps0), so W ~ Bin(r, q)
    # exactly; the delta = 0 bound over-claims in <= xi of runs and is tight on the median.
    rng = np.random.default_rng(4)
    eps0, m, xi, runs = 1.0, 400, 0.1, 1000
    v = rng.binomial(m, expit(eps0), size=runs)
    lbs = np.array([one_run_epsilon(m, m, int(k), delta=0.0, failure_prob=xi) for k in v])
    over = float(np.mean(lbs > eps0))
    assert over <= xi + 3 * math.sqrt(xi * (1 - xi) / runs)
    assert over >= xi - 3 * math.sqrt(xi * (1 - xi) / runs)  # exact test: the level is attained
    assert np.median(lbs) > 0.6 * eps0


def test_gaussian_canaries_one_run_against_many_run():
    # m canaries, score = mu * S_i + N(0, 1): per canary a mu-GDP Gaussian mechanism. Both the
    # one-run bound and the band audit of the same scores stay below eps(delta) and agree within
    # a factor 2 (measured: see benchmarks/bench_audit.py).
    rng = np.random.default_rng(8)
    mu, m, delta = 2.0, 4000, 1e-5
    truth = gdp_epsilon(mu, delta)
    s = rng.random(m) < 0.5
    score = mu * s + rng.normal(0, 1, m)
    one = epsilon_lower_bound(score[s], score[~s], delta=delta, method="one-run")
    many = epsilon_lower_bound(score[s], score[~s], delta=delta, method="band")
    assert 0 < one.epsilon_lower_bound < truth and 0 < many.epsilon_lower_bound < truth
    assert 0.5 < one.epsilon_lower_bound / many.epsilon_lower_bound < 2.0
    assert one.n_guesses >= one.n_correct > one.n_guesses / 2 and one.n_thresholds == 7


def test_gdp_profile_version():
    # all of 400 guesses correct: mu_lower > 0 and its eps(delta) is below the delta = 0 ceiling
    mu = one_run_gdp_mu(1000, 400, 400, failure_prob=0.05)
    assert mu > 0
    assert gdp_epsilon(mu, 1e-5) > one_run_epsilon(1000, 400, 400, delta=1e-5,
                                                   failure_prob=0.05) * 0.5
    assert one_run_gdp_mu(1000, 400, 200, failure_prob=0.05) == 0.0
    # regression: stats.gdp.gdp_delta returns NaN at tiny mu; treated as delta = 1 (conservative)
    # instead of poisoning the minimum (was 0.0 here; measured 0.4956, eps(1e-5) = 1.97)
    assert one_run_gdp_mu(10_000, 1000, 871, failure_prob=0.05) > 0.4
    # validity on Gaussian canaries (mu = 1, 200 runs): mu_lower > mu in <= xi + 3 SE
    rng = np.random.default_rng(9)
    xi, runs, m = 0.1, 200, 200
    over = 0
    for _ in range(runs):
        s = rng.random(m) < 0.5
        score = s + rng.normal(0, 1, m)
        r, v, _ = one_run_counts(score[s], score[~s], 20, 20)
        over += one_run_gdp_mu(m, r, v, failure_prob=xi, n_eps=32) > 1.0
    assert over / runs <= xi + 3 * math.sqrt(xi * (1 - xi) / runs)


@pytest.mark.parametrize(("args", "match"), [
    ((10, 5, 6, 1.0, 0.0), "v <= r"),
    ((10, 11, 6, 1.0, 0.0), "r <= m"),
    ((0, 0, 0, 1.0, 0.0), "m"),
    ((10, 5, 3, -1.0, 0.0), "epsilon"),
    ((10, 5, 3, 1.0, 1.0), "delta"),
])
def test_bad_inputs(args, match):
    with pytest.raises(ValueError, match=match):
        one_run_p_value(*args)


def test_noisy_mean_game_one_run_against_many_run():
    # The SeMI game draws membership Bernoulli(1/2) independently per round, so its rounds are
    # exactly the one-run protocol (m = rounds canaries). Both bounds stay below the mechanism's
    # eps(delta) and agree within a factor 2 (measured 0.52 one-run vs 0.60 joint, the default
    # many-run method, 4,000 rounds; band at these off-table sizes is the embedded one, 0.25).
    from semi_core.audit.games import audit_game_result
    from semi_core.game.play import play
    from semi_core.mechanisms.noisy_mean import NoisyMean

    mech = NoisyMean(n=10, T=5, noise=0.2, clip=1.0)
    truth = mech.epsilon(1e-5, 1)
    res = play(mech, 4000, seed=1, tau=1)
    one = audit_game_result(res, delta=1e-5, method="one-run", tests=["semi-star"])
    many = audit_game_result(res, delta=1e-5, method="joint", tests=["semi-star"])
    e1 = one["semi-star"]["epsilon_lower_bound"]
    e2 = many["semi-star"]["epsilon_lower_bound"]
    assert 0 < e1 < truth and 0 < e2 < truth
    assert 0.5 < e1 / e2 < 2.0


@pytest.mark.parametrize("delta", [0.0, 1e-5, 1e-2])
def test_batch_bound_is_the_scalar_bound_bit_for_bit(delta):
    # the vectorised bisection (one_run_epsilon_batch) makes the scalar one's floating-point
    # steps element by element: equal, not merely close; and the one-run engine of
    # audit_batch is the scan over the guess family with the scalar bound
    from semi_core.audit.bounds import audit_batch
    from semi_core.audit.one_run import one_run_epsilon_batch

    rng = np.random.default_rng(4)
    m = 300
    r = rng.integers(0, m + 1, 200)
    v = np.minimum(r, (rng.random(200) ** 0.3 * (r + 1)).astype(int))
    xi = rng.choice([0.05, 0.05 / 7, 0.2], 200)
    got = one_run_epsilon_batch(m, r, v, delta=delta, failure_prob=xi)
    want = [one_run_epsilon(m, int(a), int(b), delta=delta, failure_prob=float(x))
            for a, b, x in zip(r, v, xi, strict=True)]
    assert np.array_equal(got, want) and (got > 0).sum() > 50
    s = rng.random((6, 120)) < 0.5
    x = rng.normal(size=(6, 120)) + 1.5 * s
    keep = s.sum(axis=1) == s[0].sum()
    mem = np.stack([x[i][s[i]] for i in np.flatnonzero(keep)])
    non = np.stack([x[i][~s[i]] for i in np.flatnonzero(keep)])
    e = audit_batch(mem, non, delta=delta, method="one-run")
    fam = guess_family(120)
    for i in range(mem.shape[0]):
        scan = max(one_run_epsilon(120, *one_run_counts(mem[i], non[i], kp, km)[:2],
                                   delta=delta, failure_prob=0.05 / len(fam)) for kp, km in fam)
        assert e[i] == scan
    with pytest.raises(ValueError, match="v <= r"):
        one_run_epsilon_batch(10, [5], [6], delta=0.0, failure_prob=0.05)
    with pytest.raises(ValueError, match="failure_prob"):
        one_run_epsilon_batch(10, [5], [3], delta=0.0, failure_prob=0.7)

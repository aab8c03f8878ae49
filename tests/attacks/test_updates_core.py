"""Combiners, thresholds, top-n_up assignment and entry inference (Jagielski et al. §4.1, §4.3),
the Gaussian-mean derivations of App. B, and ScoreDiff/ScoreRatio vs the optimal test on the
empirical-mean game (closed form vs Monte Carlo, 4.5 SE)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import sympy as sp

from semi_core.stats.update_combination import (
    assign_top_n,
    back_front_scores,
    batch_threshold,
    combine,
    decision_metrics,
    entry_accuracy,
    entry_baselines,
    pair_scores,
    rank_threshold,
)

K_SE = 4.5


def test_combiners_orientation_and_values():
    before, after = np.array([2.0, 1.0]), np.array([0.5, 1.2])   # point 0: loss drops
    d = combine(before, after, "diff")
    r = combine(before, after, "ratio", c=0.1)
    assert d == pytest.approx([1.5, -0.2])
    assert r == pytest.approx(np.log([2.1 / 0.6, 1.1 / 1.3]))
    assert d[0] > d[1] and r[0] > r[1]          # the update point scores higher
    losses = np.array([[3.0, 2.0, 0.5], [1.0, 1.1, 1.0]])
    assert back_front_scores(losses) == pytest.approx([2.5, 0.0])
    assert np.allclose(pair_scores(losses), [[1.0, 1.5], [-0.1, 0.1]])
    with pytest.raises(ValueError, match="combiner"):
        combine(before, after, "max")
    with pytest.raises(ValueError, match="c must"):
        combine(before, after, "ratio", c=0.0)
    with pytest.raises(ValueError, match="scores \\+ c > 0"):
        combine([-1.0], [1.0], "ratio", c=0.5)
    with pytest.raises(ValueError, match="same shape"):
        combine([1.0, 2.0], [1.0], "diff")


def _assign_reference(s, n_up):
    """Slow reference: repeatedly take the best remaining (point, update) pair."""
    s = s.astype(float).copy()
    N, k = s.shape
    out = np.zeros(N, int)
    load = np.zeros(k, int)
    for _ in range(k * n_up):
        masked = s.copy()
        masked[out > 0, :] = -np.inf
        masked[:, load >= n_up] = -np.inf
        i, j = np.unravel_index(np.argmax(masked), s.shape)
        out[i], load[j] = j + 1, load[j] + 1
    return out


def test_assign_top_n_matches_reference_and_constraints(rng):
    for N, k, n_up in ((12, 3, 2), (30, 4, 5), (8, 1, 4)):
        s = rng.normal(size=(N, k))
        a = assign_top_n(s, n_up)
        assert np.array_equal(a, _assign_reference(s, n_up))
        assert np.bincount(a, minlength=k + 1)[1:].tolist() == [n_up] * k   # no repetition
    # a clear signal is recovered exactly
    s = np.full((6, 2), -1.0)
    s[0, 0] = s[1, 0] = s[2, 1] = s[3, 1] = 5.0
    assert assign_top_n(s, 2).tolist() == [1, 1, 2, 2, 0, 0]
    with pytest.raises(ValueError, match="exceeds"):
        assign_top_n(s, 4)
    with pytest.raises(ValueError, match="n_up"):
        assign_top_n(s, 0)


def test_thresholds_and_decision_metrics(rng):
    pool = rng.normal(size=1001)
    thr = batch_threshold(pool, 0.5)
    assert np.mean(pool > thr) == pytest.approx(0.5, abs=1e-3)
    thr10 = batch_threshold(pool, 0.1)
    assert np.mean(pool > thr10) == pytest.approx(0.1, abs=2e-3)
    out = rng.normal(size=2000)
    assert np.mean(out > rank_threshold(out, 0.1)) == pytest.approx(0.1, abs=1e-3)
    m = decision_metrics([3.0, 2.0, -1.0], [0.5, -2.0], 1.0)
    assert m["recall"] == pytest.approx(2 / 3) and m["fpr"] == 0.0
    assert m["precision"] == 1.0 and m["accuracy"] == pytest.approx(0.5 * (2 / 3 + 1))
    assert decision_metrics([0.0], [0.0], 5.0)["precision"] is None   # nobody called IN
    with pytest.raises(ValueError, match="fraction_in"):
        batch_threshold(pool, 1.0)
    with pytest.raises(ValueError, match="fpr"):
        rank_threshold(out, 0.0)


def test_entry_baselines_by_simulation(rng):
    """A random guesser (IN w.p. 1/2, uniform index) scores 1/(2k) (4.5 binomial SE)."""
    k, n = 5, 200000
    true = rng.integers(1, k + 1, size=n)
    guess = np.where(rng.random(n) < 0.5, rng.integers(1, k + 1, size=n), 0)
    acc = entry_accuracy(guess, true)
    base = entry_baselines(k, 0.8)
    assert abs(acc - base["random"]) <= K_SE * np.sqrt(base["random"] * (1 - base["random"]) / n)
    assert base["generic"] == pytest.approx(0.8 / k)
    with pytest.raises(ValueError, match="k must"):
        entry_baselines(0, 0.5)
    with pytest.raises(ValueError, match="no update point"):
        entry_accuracy([0, 1], [0, 0])


# ----------------------------------------------------------------------------- App. B, Thm 4.1

def test_gaussian_expectation_and_b3_laws():
    from semi_core.symbolic import updates as U

    z = sp.Symbol("Z")
    assert U.gaussian_expectation(z**4 + 3 * z, [z]) == 3
    laws = U.b3_laws()
    a, s, n1 = U.a, U.sigma, U.n1
    assert sp.simplify(laws["var_out"] - a**2 * s**2 / n1) == 0       # as printed
    assert sp.simplify(laws["var_in"] - a**2 * s**2 * (n1 - 1) / n1**2) == 0
    acc = U.b3_accuracies()
    assert sp.simplify(acc["var_ratio_in_out"] - (n1 - 1) / n1) == 0   # IN is narrower
    assert U.upd_b3_bound().matches_seed() is False
    assert U.upd_b5_eta_equiv().matches_seed() is True
    assert U.upd_b4_mean_gap().matches_seed() is True
    assert U.upd_dp_epsilon_from_precision().matches_seed() is False


def test_thm41_needs_its_assumption():
    """With assumption 2 violated (f1 says IN *less* often on update points in one row), both
    binary outputs beat f1's alone -- the check of the theorem can tell the difference."""
    from semi_core.symbolic.updates import thm41_optimal_accuracy

    pt = np.array([[0.3, 0.2], [0.2, 0.3]])
    pu = np.array([[0.4, 0.1], [0.1, 0.4]])       # row A(f0)=OUT: f1-IN rarer on updates
    both, one = thm41_optimal_accuracy(pu, pt)
    assert both > one + 0.05
    # with the assumptions: equal
    pu = np.array([[0.2, 0.3], [0.1, 0.4]])
    both, one = thm41_optimal_accuracy(pu, pt)
    assert both == pytest.approx(one) == pytest.approx(0.5 * (0.4 + 0.3 + 0.2 + 0.3))


# ----------------------------------------------------------------------------- the gap

@pytest.fixture(scope="module")
def game():
    from semi_core.attacks.updates.gap import UpdateMeanGame

    return UpdateMeanGame(n0=50, n1=5, d=10, sigma=1.0, distance=4.0, c=0.05)


def test_generalised_chi_square_reduction(game):
    """P(Q_t <= x) from the two-term generalised chi-square vs simulating Q_t directly."""
    from semi_core.attacks.updates.gap import heuristic_cdf

    rng = np.random.default_rng(4)
    R, g = 200000, game
    s = g.sigma
    z = np.zeros(g.d)
    z[0] = g.distance
    for member in (False, True):
        f0 = rng.standard_normal((R, g.d)) * s / np.sqrt(g.n0)
        if member:
            xb = z / g.n1 + rng.standard_normal((R, g.d)) * s * np.sqrt(g.n1 - 1) / g.n1
        else:
            xb = rng.standard_normal((R, g.d)) * s / np.sqrt(g.n1)
        f1 = (g.n0 * f0 + g.n1 * xb) / (g.n0 + g.n1)
        l0, l1 = ((f0 - z) ** 2).sum(1), ((f1 - z) ** 2).sum(1)
        for t in (1.0, 0.7):
            q = l1 - t * l0
            for x in np.quantile(q, [0.05, 0.5, 0.9]):
                p_mc = np.mean(q <= x)
                p_cf = heuristic_cdf(g, t, x, member)
                assert abs(p_cf - p_mc) <= K_SE * np.sqrt(p_mc * (1 - p_mc) / R)


def test_gap_closed_form_vs_monte_carlo(game):
    """Every test's TPR at FPR 0.1: closed form within 4.5 delta-method SE of Monte Carlo; the
    optimal test dominates every heuristic (closed form)."""
    from semi_core.attacks.updates.gap import TESTS, gap_table

    tab = gap_table(game, rounds=30000, seed=1, fpr=(0.1,))
    for t in TESTS:
        row = tab["rows"][t]
        cf, mc, se = row["closed_form"]["0.1"], row["monte_carlo"]["0.1"], row["mc_se"]["0.1"]
        assert abs(cf - mc) <= K_SE * se, (t, cf, mc, se)
        assert tab["rows"]["optimal"]["closed_form"]["0.1"] >= cf - 1e-9
    # the update helps: every update-aware test beats the final-model (no update) test
    for t in ("b3-linear", "score-diff", "score-ratio"):
        assert tab["rows"][t]["closed_form"]["0.1"] > tab["rows"]["final"]["closed_form"]["0.1"]


def test_multi_update_game_runs_and_orders(game):
    from semi_core.attacks.updates.gap import multi_update_game

    out = multi_update_game(n0=50, n_up=5, k=3, d=10, distance=4.0, rounds=6000, seed=2)
    mem = out["membership"]
    assert set(mem) == {"semi-max", "semi-unif", "back-front-diff", "back-front-ratio",
                        "delta-diff"}
    assert mem["semi-unif"]["auc"] > mem["back-front-diff"]["auc"]
    assert out["entry_among_members"]["lr-argmax"] > out["entry_among_members"]["random"]
    assert out["result"].rounds == 6000


def test_score_ratio_grid_is_monotone(game):
    """FPR and TPR of ScoreRatio decrease in the threshold (the root search relies on it)."""
    from semi_core.attacks.updates.gap import heuristic_cdf

    vals = []
    for sv in (-0.2, 0.0, 0.2, 0.5):
        tt = np.exp(-sv)
        vals.append([heuristic_cdf(game, tt, game.c * (tt - 1), m) for m in (False, True)])
    vals = np.array(vals)
    assert np.all(np.diff(vals, axis=0) <= 1e-9)


def test_all_decision_rules_enumerated():
    from semi_core.symbolic.updates import thm41_optimal_accuracy

    pu = np.array([[0.25, 0.25], [0.25, 0.25]])
    both, one = thm41_optimal_accuracy(pu, pu)     # no information: accuracy 1/2
    assert both == pytest.approx(0.5) and one == pytest.approx(0.5)
    assert len(list(itertools.product((0, 1), repeat=4))) == 16


def test_b4_in_variance_by_simulation():
    """Var[d_IN | x] (used for Thm B.4's C_IN) vs simulation, 4.5 SE."""
    from semi_core.symbolic import updates as U

    rng = np.random.default_rng(9)
    n0_, n1_, d_, eta_, s_, a_ = 30, 4, 6, 0.2, 0.8, 2.0
    R = 200000
    x = np.zeros(d_)
    x[0] = a_
    f0 = rng.standard_normal((R, d_)) * s_ / np.sqrt(n0_)
    mu_up = x / n1_ + rng.standard_normal((R, d_)) * s_ * np.sqrt(n1_ - 1) / n1_
    dd = -4 * eta_ * np.einsum("ij,ij->i", mu_up - f0, x - f0)
    pred = float(U.b4_in_var().subs({U.n0: n0_, U.n1: n1_, U.d: d_, U.eta: eta_, U.sigma: s_,
                                     U.a: a_}))
    se = ((dd - dd.mean()) ** 2).std() / np.sqrt(R)
    assert abs(dd.var() - pred) <= K_SE * se
    mean_pred = float(U.b4_in_mean().subs({U.n0: n0_, U.n1: n1_, U.d: d_, U.eta: eta_,
                                           U.sigma: s_, U.a: a_}))
    assert abs(dd.mean() - mean_pred) <= K_SE * dd.std() / np.sqrt(R)

"""Valid choice of the insertion time: pilot/certify, Bonferroni, and the certifiable maximum."""

import math

import numpy as np
import pytest

from semi_core.audit.bounds import dkw_margin, epsilon_lower_bound
from semi_core.audit.selection import certifiable_epsilon_max, select_and_certify
from semi_core.game.play import play
from semi_core.game.result import GameResult
from semi_core.mechanisms.noisy_mean import NoisyMean


def test_certifiable_max_matches_the_dkw_closed_form():
    n, xi, delta = 500, 0.05, 1e-5
    lam = float(dkw_margin(n, xi / 2))
    want = math.log((1 - delta - lam) / lam)
    assert certifiable_epsilon_max(n, n, delta=delta, failure_prob=xi,
                                   method="dkw") == pytest.approx(want)
    # every actual audit with that many games is below it
    rng = np.random.default_rng(0)
    got = epsilon_lower_bound(rng.normal(3, 1, n), rng.normal(0, 1, n), delta=delta,
                              failure_prob=xi, method="dkw").epsilon_lower_bound
    assert got <= want
    assert certifiable_epsilon_max(n, n, delta=delta, failure_prob=xi, method="cp") > want
    # the default (band) can certify more than DKW from the same games
    assert certifiable_epsilon_max(n, n, delta=delta, failure_prob=xi) > want


def _null(rounds, seed):
    rng = np.random.default_rng(seed)
    return GameResult(rng.random(rounds) < 0.5, 1, {"a": rng.normal(size=rounds),
                                                    "b": rng.normal(size=rounds)})


def test_valid_workflows_do_not_over_claim_on_null_games_but_post_hoc_inflates():
    """Under H0-indistinguishable scores (true eps = 0, delta = 0), K = 20 choices: post-hoc
    picks the luckiest of 20 bounds each failing w.p. <= xi; Bonferroni and pilot/certify must
    stay at 0 in >= (1 - xi) of repetitions. 40 repetitions, xi = 0.2: a valid method has
    P(> 14 positives) < 1e-3 (binomial(40, 0.2) tail)."""
    xi, reps, pos = 0.2, 40, {"post_hoc": 0, "bonferroni": 0, "pilot_certify": 0}
    for r in range(reps):
        res = {t: _null(400, 1000 * r + t) for t in range(1, 11)}
        out = select_and_certify(res, delta=0.0, failure_prob=xi, method="dkw", seed=r)
        for k in pos:
            pos[k] += out[k]["epsilon_lower_bound"] > 0
        assert out["choices"] == 20
    assert pos["bonferroni"] <= 14 and pos["pilot_certify"] <= 14
    assert pos["post_hoc"] >= pos["bonferroni"]


def test_on_the_noisy_mean_the_valid_choice_finds_the_best_tau():
    mech = NoisyMean(10, 4, noise=0.1, clip=1.0, data_mean=-1.0, data_std=0.1)
    res = {t: play(mech, 1500, 10 + t, tau=t, tests=("semi-star", "final")) for t in (1, 4)}
    out = select_and_certify(res, delta=1e-5, failure_prob=0.05, seed=1)
    assert out["pilot_certify"]["choice"].startswith("1:")  # early insertion leaks most (§5)
    truth = mech.epsilon(1e-5, 1)
    for k in ("bonferroni", "pilot_certify"):
        assert 0 < out[k]["epsilon_lower_bound"] <= truth
    assert out["pilot_certify"]["epsilon_lower_bound"] <= out["certifiable_max"]


def test_bad_inputs():
    with pytest.raises(ValueError, match="at least one"):
        select_and_certify({}, delta=0.0)
    with pytest.raises(TypeError, match="GameResult"):
        select_and_certify({1: object()}, delta=0.0)
    with pytest.raises(ValueError, match="pilot_fraction"):
        select_and_certify({1: _null(10, 0)}, delta=0.0, pilot_fraction=1.0)
    with pytest.raises(ValueError, match="n_member"):
        certifiable_epsilon_max(0, 5, delta=0.0)


def test_every_audit_table_states_what_it_could_certify():
    from semi_core.audit.games import audit_game_result

    rng = np.random.default_rng(3)
    b = rng.random(800) < 0.5
    res = GameResult(b, 1, {"s": rng.normal(2.0 * b, 1.0)})
    out = audit_game_result(res, delta=1e-5, failure_prob=0.05)["s"]
    want = certifiable_epsilon_max(int(b.sum()), int((~b).sum()), delta=1e-5, failure_prob=0.05)
    assert out["epsilon_max_certifiable"] == pytest.approx(want)
    assert 0 < out["epsilon_lower_bound"] <= out["epsilon_max_certifiable"]

"""Fig. 8's median threshold on the balanced pool the seed's protocol has."""

import numpy as np
import pytest

from semi_core.attacks.updates.gap import balanced_median_accuracy, fig8_sweep


def test_perfectly_separated_scores_score_one_on_an_unbalanced_draw():
    rng = np.random.default_rng(0)
    member = rng.random(1001) < 0.5          # the runner's Bernoulli(1/2) draw
    assert member.sum() != (~member).sum()
    s = np.where(member, 1.0, 0.0) + 0.01 * rng.random(member.size)
    out = balanced_median_accuracy(s, member)
    assert out["accuracy"] == 1.0 and out["se"] == 0.0
    assert out["pool"] == 2 * min(member.sum(), (~member).sum())
    # the median of the whole, unbalanced pool misclassifies |n1 - n0| / 2 of them
    med = np.median(s)
    assert 0.5 * (np.mean(s[member] > med) + np.mean(s[~member] <= med)) < 1.0


def test_balanced_accuracy_of_an_uninformative_score_is_one_half():
    # pure noise: accuracy 1/2 within 4 binomial SE of the pool (SE = 0.5 / sqrt(2k))
    rng = np.random.default_rng(1)
    member = rng.random(20_000) < 0.5
    out = balanced_median_accuracy(rng.normal(size=member.size), member)
    assert abs(out["accuracy"] - 0.5) <= 4 * 0.5 / np.sqrt(out["pool"])


def test_bad_inputs_name_the_argument():
    with pytest.raises(ValueError, match="member"):
        balanced_median_accuracy(np.zeros(4), np.ones(4, bool))
    with pytest.raises(ValueError, match="same length"):
        balanced_median_accuracy(np.zeros(4), np.ones(3, bool))


def test_fig8_at_n1_2_separated_heuristics_give_exactly_one():
    # n1 = 2: the target is half of the update's batch and ScoreDiff separates every game;
    # the median of the unbalanced Bernoulli pool gave 0.9956 here
    row = fig8_sweep((2,), rounds=4000, seed=0)["rows"][0]
    assert row["score-diff"]["accuracy"] == 1.0
    assert row["score-ratio"]["accuracy"] == 1.0

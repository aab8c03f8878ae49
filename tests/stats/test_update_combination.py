"""Delta / Back-Front baselines (seed §5.2 definitions)."""

import numpy as np
import pytest

from semi_core.stats.update_combination import (
    back_front_diff,
    back_front_ratio,
    baseline_scores,
    delta_diff,
    delta_ratio,
)


def test_definitions_against_explicit_loops(rng):
    losses = rng.uniform(0.1, 3.0, size=(20, 11))
    for r in range(20):
        l_ = losses[r]
        assert delta_diff(losses)[r] == pytest.approx(max(l_[t - 1] - l_[t] for t in range(1, 11)))
        assert delta_ratio(losses)[r] == pytest.approx(max(l_[t - 1] / l_[t]
                                                           for t in range(1, 11)))
        assert back_front_diff(losses)[r] == pytest.approx(l_[0] - l_[-1])
        assert back_front_ratio(losses)[r] == pytest.approx(l_[0] / l_[-1])
    scores = baseline_scores(losses)
    assert set(scores) == {"delta_diff", "delta_ratio", "back_front_diff", "back_front_ratio"}
    # Jagielski et al.'s offset c
    assert back_front_ratio([1.0, 0.0], offset=0.5) == pytest.approx(3.0)


def test_baselines_are_tau_oblivious_and_reject_bad_losses():
    with pytest.raises(ValueError, match="T\\+1"):
        delta_diff([1.0])
    with pytest.raises(ValueError, match="losses"):
        delta_ratio([1.0, 0.0])
    with pytest.raises(ValueError, match="NaN"):
        back_front_diff([1.0, np.nan])

"""Chen et al.'s SortedDiff baseline and its improved form (Q7) beside ScoreDiff / ScoreRatio."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("sklearn")

from semi_core.attacks.updates import UpdateConfig  # noqa: E402
from semi_core.attacks.updates.chen import chen_comparison, sorted_diff_features  # noqa: E402

TINY = dict(n0=60, trials=2, base_epochs=4, new_epochs=2, full_epochs=1, n_up=6)


def test_sorted_diff_formula():
    b = np.array([[0.2, 0.7, 0.1], [0.5, 0.25, 0.25]])
    a = np.array([[0.1, 0.8, 0.1], [0.25, 0.25, 0.5]])
    np.testing.assert_allclose(sorted_diff_features(b, a), [[0.1, -0.1, 0.0], [0, 0, 0]])
    with pytest.raises(ValueError, match="p_before and p_after"):
        sorted_diff_features(b, a[:1])


def test_comparison_runs_reproducibly_with_every_attack():
    cfg = UpdateConfig(**TINY)
    a = chen_comparison(cfg, n_shadow=3)
    b = chen_comparison(cfg, n_shadow=3)
    names = {"sorted-diff/logreg", "sorted-diff/decision-tree", "sorted-diff/random-forest",
             "sorted-diff/best", "improved-chen/logreg", "score-diff/transfer-1-shadow",
             "score-ratio/transfer-1-shadow"}
    assert names <= set(a["attacks"])
    for k in names:
        assert a["attacks"][k]["accuracy"] == b["attacks"][k]["accuracy"]
        assert 0 <= a["attacks"][k]["accuracy"]["mean"] <= 1
    assert a["attacks"]["improved_weights"]["ours_mean_abs"] >= 0
    with pytest.raises(ValueError, match="n_shadow"):
        chen_comparison(cfg, n_shadow=1)

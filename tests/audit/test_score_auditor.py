"""ScoreAuditor: the same numbers as the functions it fronts, losses, validation, tables."""

import numpy as np
import pytest

from semi_core.audit import ScoreAuditor, epsilon_lower_bound, roc_metrics, tpr_at_fpr


def _scores(seed=0, n=3000, mu=1.0):
    rng = np.random.default_rng(seed)
    return rng.normal(mu, 1, n), rng.normal(0, 1, n)


@pytest.mark.parametrize("method", ["band", "dkw", "cp", "gdp"])
def test_bounds_equal_the_entry_point(method):
    m, n = _scores()
    a = ScoreAuditor(m, n)
    got = a.epsilon_lower_bound(delta=1e-5, method=method).epsilon_lower_bound
    want = epsilon_lower_bound(m, n, delta=1e-5, method=method).epsilon_lower_bound
    assert got == want and got > 0
    assert a.max_certifiable_epsilon(delta=1e-5, method=method) >= got


def test_losses_are_negated_and_roc_matches():
    m, n = _scores(1)
    a, b = ScoreAuditor(m, n), ScoreAuditor.from_losses(-m, -n)
    assert a.auc() == b.auc() > 0.7
    assert a.tpr_at_fpr(0.01) == tpr_at_fpr(m, n, 0.01)
    assert a.roc().tpr_at_fpr == roc_metrics(m, n, interval="binomial").tpr_at_fpr
    # the direction matters: losses read as scores certify nothing
    wrong = ScoreAuditor(-m, -n).epsilon_lower_bound(delta=1e-5).epsilon_lower_bound
    assert wrong < a.epsilon_lower_bound(delta=1e-5).epsilon_lower_bound


def test_validation_and_forms():
    m, n = _scores(2, 500)
    with pytest.raises(ValueError, match="member_scores"):
        ScoreAuditor([np.nan, 1.0], n)
    with pytest.raises(TypeError, match="masked"):
        ScoreAuditor(np.ma.array(m, mask=np.r_[True, np.zeros(m.size - 1, bool)]), n)
    a = ScoreAuditor(m, n)
    tab = a.summary()
    assert [r["method"] for r in tab] == ["band", "joint", "dkw", "cp", "gdp"]
    assert all(r["assumption"] for r in tab)
    assert repr(a) == "ScoreAuditor(members=500, non_members=500)"
    assert a._repr_html_().startswith("<table>") and a.to_dict()["members"] == 500

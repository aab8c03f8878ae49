"""FPR resolution: a TPR "at" an FPR below 1/N0 is the TPR at FPR 0, and every output says so."""

import numpy as np
import pytest

from semi_core.audit.roc import (
    fpr_resolution,
    mark_unresolved,
    resolution_fields,
    resolvable,
    roc_metrics,
    tpr_at_fpr,
    tpr_at_fpr_se,
)


def test_resolvable_boundary():
    # 1/N0 itself is resolvable (k = 1), just below is not; 0.001 * 1000 is not 0.999...
    assert resolvable([0.001, 0.0009999, 0.01], 1000).tolist() == [True, False, True]
    assert resolvable(0.001, 999).tolist() == [False]
    assert fpr_resolution(250) == pytest.approx(0.004)
    with pytest.raises(ValueError, match="n_nonmember"):
        resolvable(0.1, 0)
    with pytest.raises(ValueError, match="fpr"):
        resolvable(1.5, 10)


def test_unresolved_level_is_tpr_at_fpr_zero():
    rng = np.random.default_rng(3)
    m, n = rng.normal(1, 1, 400), rng.normal(0, 1, 200)    # 1/N0 = 0.005
    t = tpr_at_fpr_se(m, n, (0.001, 0.01))
    assert t["resolvable"].tolist() == [False, True]
    assert t["fpr_resolution"] == pytest.approx(1 / 200)
    # the unresolved cell equals TPR at FPR 0 exactly and its achieved FPR is 0
    assert t["tpr"][0] == tpr_at_fpr(m, n, 0.0)
    assert t["fpr_achieved"][0] == 0.0


def test_roc_metrics_and_fields_carry_the_flag():
    rng = np.random.default_rng(4)
    m, n = rng.normal(1, 1, 300), rng.normal(0, 1, 300)
    r = roc_metrics(m, n, fpr=(0.001, 0.01), n_bootstrap=10, seed=0)
    assert r.resolvable == (False, True)
    assert r.fpr_resolution == pytest.approx(1 / 300)
    rows = r.summary().rows if hasattr(r.summary(), "rows") else None
    if rows is not None:
        tpr_rows = [row for row in rows if row["metric"] == "tpr"]
        assert [row["resolvable"] for row in tpr_rows] == [False, True]
    f = resolution_fields((0.001, 0.01), 300)
    assert f["resolvable"] == {"0.001": False, "0.01": True}
    assert f["unresolved_fpr"] == [0.001]
    assert mark_unresolved("0.5", False) == "0.5*" and mark_unresolved("0.5", True) == "0.5"

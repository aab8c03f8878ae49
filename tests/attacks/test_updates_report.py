"""The update-attack outputs name their baselines and say when a mean covers fewer trials."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from semi_core.attacks.updates.experiment import NO_UPDATE_RULES, fewer_trials_notes  # noqa: E402
from semi_core.report.updates_section import _ms, _table2_md  # noqa: E402


def _cell(mean, n):
    return {"mean": mean, "se": 0.01, "n": n}


def test_fewer_trials_notes_name_the_metric_and_counts():
    out = {"config": {"x": _cell(1, 1)}, "mi_accuracy": _cell(0.6, 30),
           "precision_at_10pct": _cell(0.8, 23), "no_update": {"loss_precision_at_10pct":
                                                              _cell(0.5, 30)}}
    notes = fewer_trials_notes(out, 30)
    assert notes == ["precision_at_10pct is averaged over 23 of 30 trials (undefined in the "
                     "others: no candidate called IN)"]
    assert fewer_trials_notes(out, 23) == []


def test_loss_is_named_a_median_threshold():
    assert "median threshold" in NO_UPDATE_RULES["loss"]
    assert "not Yeom" in NO_UPDATE_RULES["loss"]


def test_report_marks_precision_over_fewer_trials():
    assert _ms(_cell(0.8, 23), 30) == "0.800 ± 0.010 [23/30]"
    assert _ms(_cell(0.8, 30), 30) == "0.800 ± 0.010"
    assert _ms({"mean": None, "se": None, "n": 0}, 30) == "- [0/30]"
    cell = {"accuracy": _cell(0.6, 30), "precision_10": _cell(0.7, 26),
            "recall_10": _cell(0.1, 30)}
    row = {"gap": _cell(0.5, 30), "loss": _cell(0.52, 30),
           "loss_prec_rec_10": {"precision_10": _cell(0.55, 30), "recall_10": _cell(0.1, 30)},
           **{f"{c}_{t}": cell for c in ("diff", "ratio") for t in ("batch", "transfer", "rank")}}
    md = _table2_md({"rows": {"sgd-full": row}, "trials": 30},
                    {"sgd-full": {"gap": 0.52, "loss": 0.51}})
    assert "Loss (median thr.)" in md and "[26/30]" in md and "not Yeom" in md
    assert "0.550 ± 0.010 / 0.100 ± 0.010" in md


def test_delta_collision_rules():
    from semi_core.stats.update_combination import assign_top_n

    # point 0 tops both updates (a collision); point 1 is second in both
    s = np.array([[5.0, 4.0], [3.0, 2.5], [0.0, 2.0], [-1.0, -1.0]])
    ex = assign_top_n(s, 1)
    assert ex.tolist() == [1, 2, 0, 0]        # exactly n_up per update: the next point fills 2
    am = assign_top_n(s, 1, collisions="argmax")
    assert am.tolist() == [1, 0, 0, 0]        # each update's own top 1; the collision -> best
    rng = np.random.default_rng(0)
    big = rng.normal(size=(40, 4))
    for rule in ("exclusive", "argmax"):
        a = assign_top_n(big, 5, collisions=rule)
        counts = np.bincount(a, minlength=5)[1:]
        assert (counts <= 5).all()
        if rule == "exclusive":
            assert (counts == 5).all()
        else:                                 # each IN point is in its update's own top 5
            for j in range(4):
                top5 = set(np.argsort(-big[:, j], kind="stable")[:5])
                assert set(np.flatnonzero(a == j + 1)) <= top5
    with pytest.raises(ValueError, match="collisions"):
        assign_top_n(big, 5, collisions="first")


def test_improvement_test_is_the_paired_one_sided_t_test():
    from scipy import stats

    from semi_core.attacks.updates.studies import improvement_test

    a = [0.7, 0.65, 0.72, 0.68, 0.7]
    b = [0.6, 0.62, 0.61, 0.66, 0.58]
    out = improvement_test(a, b)
    assert out["p"] == pytest.approx(stats.ttest_rel(a, b, alternative="greater").pvalue)
    assert out["mark"] == "*"                 # p = 0.0114
    assert improvement_test(b, a)["mark"] == ""
    assert improvement_test([0.6, 0.7], [0.5, 0.6]) == {"p": 0.0, "mark": "**"}  # no spread
    with pytest.raises(ValueError, match=">= 2 trials"):
        improvement_test([0.5], [0.5])


@pytest.mark.slow
def test_precision_tables_complete():
    from semi_core.attacks.updates.studies import precision_tables

    out = precision_tables(trials=3)
    for upd in ("sgd-full", "sgd-new"):
        rows = out["tables"][upd]["rows"]
        assert set(rows) == {"0.01", "0.08"}
        for r in rows.values():
            assert {"loss", "batch", "transfer", "rank"} <= set(r)
            for t in ("batch", "transfer", "rank"):
                assert 0 <= r[t]["vs_no_update"]["p"] <= 1


def test_tables37_markdown_marks_and_seed_row():
    from semi_core.attacks.updates.studies import SEED_NUMBERS
    from semi_core.report.updates_section import _tables37_md

    cell = {"precision_10": _cell(0.8, 22), "recall_10": _cell(0.2, 30),
            "accuracy": _cell(0.61, 30), "vs_no_update": {"p": 0.004, "mark": "**"}}
    row = {"n_up": 3, "loss": {"precision_10": _cell(0.5, 30), "recall_10": _cell(0.1, 30)},
           "batch": cell, "transfer": cell, "rank": cell}
    pt = {"trials": 30, "combiner": "ratio",
          "tables": {"sgd-new": {"table": "table7", "rows": {"0.01": row}}}}
    md = _tables37_md(pt, SEED_NUMBERS)
    assert "[22/30]" in md and "(acc 0.610**)" in md and "0.90/0.18" in md

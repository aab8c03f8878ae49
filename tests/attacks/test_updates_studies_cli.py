"""The seed's single-update studies from the CLI (``semi-core updates --study``) and in the
report (shift tables, Chen et al., the DP protocol, Table 2's significance marks)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

from semi_core.attacks.updates.studies import SHIFT_KINDS, shift_tables  # noqa: E402
from semi_core.report.updates_section import (  # noqa: E402
    _chen_md,
    _dp_md,
    _shift_md,
    _table2_md,
)


def _cell(mean, n=4, se=0.01):
    return {"mean": mean, "se": se, "n": n}


def _run(capsys, *argv):
    from semi_core.cli import main

    code = main(["updates", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("argv, msg", [
    (["--alphas", "0.5"], "--alphas applies only to --study shift"),
    (["--n-shadow", "3"], "--n-shadow applies only to --study chen"),
    (["--sigmas", "2"], "--sigmas applies only to --study dp-protocol"),
    (["--study", "chen", "--k", "2"], "--k would be ignored"),
    (["--study", "shift", "--combiner", "ratio", "--score", "lira"], "--score, --combiner"),
    (["--study", "dp-protocol", "--sigma-dp", "1"], "--sigma-dp would be ignored"),
    (["--study", "chen", "--n-shadow", "1001"], "--n-shadow must be in 2..1000"),
    (["--study", "dp-protocol", "--sigmas", "2", "inf"], "--sigmas must be finite"),
    (["--study", "shift", "--alphas", "0"], "--alphas must be in (0, 1]"),
    (["--study", "shift", "--clip", "1"], "--clip applies to"),
])
def test_study_options_are_refused_where_they_would_be_ignored(capsys, argv, msg):
    code, out = _run(capsys, *argv)
    assert code == 2 and msg in out["error"]


def test_shift_tables_rows_and_pairs():
    res = shift_tables(updates=("sgd-new",), shifts=("subpop-hard", "covariate-easy"),
                       alphas=(1.0,), trials=2, n0=40, n_up=4, seed=1)
    assert [(r["shift"], r["alpha"]) for r in res["rows"]] == [("subpop-hard", 1.0),
                                                               ("covariate-easy", 1.0)]
    for r in res["rows"]:
        for comb in ("diff", "ratio"):
            assert 0 <= r[comb]["mi_accuracy"]["mean"] <= 1 and r[comb]["mi_accuracy"]["n"] == 2
    assert res["pairs"] == {"subpop-hard": {"sources": [0, 1], "targets": [7, 6]}}
    again = shift_tables(updates=("sgd-new",), shifts=("subpop-hard",), alphas=(1.0,),
                         trials=2, n0=40, n_up=4, seed=1)
    assert again["rows"][0] == res["rows"][0]               # same seed, same numbers
    with pytest.raises(ValueError, match="shifts must be among"):
        shift_tables(shifts=("subpopulation",))
    with pytest.raises(ValueError, match="alphas"):
        shift_tables(alphas=(0.0,))
    assert set(SHIFT_KINDS) == {"subpop-hard", "subpop-easy", "covariate-hard",
                                "covariate-easy"}


def test_cli_shift_study_runs(capsys):
    code, out = _run(capsys, "--study", "shift", "--trials", "2", "--n0", "40", "--n-up", "4",
                     "--alphas", "1")
    assert code == 0 and out["study"] == "shift" and len(out["rows"]) == len(SHIFT_KINDS)


def test_report_blocks_put_the_seed_beside_ours():
    from semi_core.attacks.updates.studies import SEED_NUMBERS

    acc = {"mi_accuracy": _cell(0.6), "precision_at_10pct": _cell(0.8, 3),
           "recall_at_10pct": _cell(0.16)}
    sh = {"n0": 60, "n_up": 10, "trials": 4, "pairs": {"subpop-hard": {"sources": [0, 1],
                                                                      "targets": [7, 6]}},
          "rows": [{"update": "sgd-new", "shift": "subpop-hard", "alpha": 0.2, "diff": acc,
                    "ratio": acc, "final_model_accuracy": 0.9}]}
    md = _shift_md(sh, SEED_NUMBERS)
    assert "| sgd-new | subpop-hard | 0.2 |" in md and "0.551, 0.559" in md
    assert "0.800 ± 0.010 [3/4]" in md and "[0, 1] -> [7, 6]" in md
    a = {"accuracy": _cell(0.6)}
    ch = {"n_shadow": 10, "trials": 4, "rows": [{"update": "sgd-new", "n_up": 10, "attacks": {
        "sorted-diff/best": {**a, "model": "logreg"}, "improved-chen/logreg": a,
        "score-diff/transfer-1-shadow": a, "score-ratio/transfer-1-shadow": a,
        "improved_weights": {"ratio": 3.57}}}]}
    md = _chen_md(ch)
    assert "3.6x" in md and "7.5x is the seed's figure" in md and "(logreg)" in md
    assert "Skipped: no sklearn" in _chen_md({"skipped": "no sklearn"})
    att = {"precision": 0.7, "epsilon_lower_bound": 0.5}
    dp = {"n_up": 20, "delta": 1e-4, "confidence": 0.98, "updates": {"sgd-new": {"rows": [
        {"sigma_dp": 2.0, "epsilon_paper_rdp": 7.2, "epsilon_ours_gdp": 16.1,
         "final_model_accuracy": 0.9, "attacks": {"update-diff": att, "update-ratio": att,
                                                  "no-update-loss": {"precision": None,
                                                                     "epsilon_lower_bound": 0}}}]}}}
    md = _dp_md(dp)
    assert "| sgd-new | 2 | 7.200 | 16.100 |" in md and "14.4x" in md and "- -> 0.000" in md


def test_table2_block_shows_the_marks_and_names_the_test():
    cell = {"accuracy": _cell(0.7, 30), "precision_10": _cell(0.8, 30),
            "recall_10": _cell(0.2, 30), "vs_no_update": {"p": 0.001, "mark": "**"}}
    row = {"gap": _cell(0.5, 30), "loss": _cell(0.52, 30),
           **{f"{c}_{t}": cell for c in ("diff", "ratio") for t in ("batch", "transfer", "rank")}}
    md = _table2_md({"rows": {"sgd-new": row}, "trials": 30}, {"sgd-new": {"gap": 0.51}})
    assert "0.700 ± 0.010**" in md and "paired t-test" in md.replace("paired\n", "paired ")


def test_disparate_impact_blocks():
    from semi_core.attacks.updates.studies import SEED_NUMBERS
    from semi_core.report.updates_section import _groups_md

    c = _cell(0.6)
    md = _groups_md({"trials": 4, "n_up": 10, "rows": {"sgd-new": {"per_class": {
        "0": c, "1": _cell(1.0, 3, 0.0)}}}},
        {"rows": {"sgd-full": [{"k": 2, "diff": {"per_entry": {"1": c, "2": _cell(0.7)}}}]}})
    assert "| sgd-new | 0.600 ± 0.010 | 1.000 ± 0.000 [3/4] |" in md
    assert "| sgd-full | 2 | 0.600 ± 0.010 | 0.700 ± 0.010 |" in md
    acc = {"mi_accuracy": c, "precision_at_10pct": c, "recall_at_10pct": c,
           "new_old": {"new": _cell(0.78), "old": _cell(0.42, 3)}}
    sh = {"n0": 60, "n_up": 10, "trials": 4, "pairs": {},
          "rows": [{"update": "sgd-new", "shift": "subpop-easy", "alpha": 0.2, "diff": acc,
                    "ratio": acc, "final_model_accuracy": 0.9}]}
    assert "0.780 ± 0.010 / 0.420 ± 0.010 [3/4]" in _shift_md(sh, SEED_NUMBERS)


def test_user_pairs_reproduce_the_builtin_hard_pairs():
    """Table 9 from the user's labels: the pairs the Hard setting picks on digits (0 -> 7,
    1 -> 6), given by hand, give the same runs and numbers."""
    from semi_core.attacks.updates import UpdateConfig, run_experiment, summarize

    kw = dict(trials=2, n0=40, n_up=4, shift_alpha=0.4, seed=2)
    a = run_experiment(UpdateConfig(shift="subpop-hard", **kw))
    b = run_experiment(UpdateConfig(shift="subpop-pairs", shift_pairs=((0, 7), (1, 6)), **kw))
    assert (a.scores["loss"] == b.scores["loss"]).all()
    assert summarize(a)["mi_accuracy"] == summarize(b)["mi_accuracy"]
    res = shift_tables(updates=("sgd-new",), shifts=(), alphas=(0.4,), trials=2, n0=40,
                       n_up=4, seed=2, pair_sets={"hard": ((0, 7), (1, 6))})
    assert res["rows"][0]["shift"] == "pairs:hard"
    assert res["pairs"] == {"pairs:hard": {"sources": [0, 1], "targets": [7, 6]}}


@pytest.mark.parametrize("pairs, msg", [
    (((0, 1),), "at least 2"), (((0, 1), (1, 2)), "appear once"), (((0, -1), (2, 3)), ">= 0"),
    (((0, 1.5), (2, 3)), "integers"), ("ab", "label pairs"),
])
def test_shift_pairs_are_validated(pairs, msg):
    from semi_core.attacks.updates import UpdateConfig

    with pytest.raises(ValueError, match=msg):
        UpdateConfig(shift="subpop-pairs", shift_pairs=pairs, shift_alpha=0.5)
    with pytest.raises(ValueError, match="exactly with shift 'subpop-pairs'"):
        UpdateConfig(shift="subpop-hard", shift_pairs=((0, 1), (2, 3)))


@pytest.mark.parametrize("argv, msg", [
    (["--shift-pairs", "0:1,2:3"], "goes with --shift-kind subpop-pairs"),
    (["--shift-kind", "subpop-pairs", "--shift-pairs", "0:1,2:3"], "--shift-alpha > 0"),
    (["--shift-kind", "subpop-pairs", "--shift-pairs", "a=0:1,2:3", "--shift-alpha", "0.5"],
     "one unnamed set"),
    (["--study", "shift", "--shift-pairs", "x=0:1,2:3", "x=0:2,1:3"], "distinct names"),
    (["--study", "shift", "--shift-pairs", "0:1,0:3"], "--shift-pairs: every label"),
    (["--study", "chen", "--shift-pairs", "0:1,2:3"], "applies to --shift-kind"),
    (["--shift-kind", "subpop-pairs", "--shift-pairs", "0:1,2:30", "--shift-alpha", "0.5",
      "--trials", "2"], "not among the data's 10 classes"),
])
def test_cli_shift_pairs_errors(capsys, argv, msg):
    code, out = _run(capsys, *argv)
    assert code == 2 and msg in out["error"]


def test_small_dataset_curve_and_its_block():
    from semi_core.attacks.updates.studies import small_dataset_curve
    from semi_core.report.updates_section import _small_md

    res = small_dataset_curve((6,), updates=("sgd-new",), trials=2, seed=1)
    row = res["rows"][0]
    assert row["n"] == 6 and row["standalone_loss"]["n"] == 2
    assert 0 <= row["standalone_loss"]["mean"] <= 1 and 0 <= row["sgd-new"]["accuracy"]["mean"] <= 1
    again = small_dataset_curve((6,), updates=("sgd-new",), trials=2, seed=1)
    assert again["rows"][0]["standalone_loss"] == row["standalone_loss"]
    md = _small_md(res)
    assert "| 6 |" in md and "updated with n (sgd-new)" in md
    with pytest.raises(ValueError, match="sizes must be integers >= 2"):
        small_dataset_curve((1,))


@pytest.mark.parametrize("argv, msg", [
    (["--sizes", "10"], "--sizes applies only to --study small-data"),
    (["--study", "small-data", "--n-up", "5"], "leave --n-up and --n0 out"),
    (["--study", "small-data", "--sizes", "1"], "--sizes must be >= 2"),
])
def test_cli_small_data_errors(capsys, argv, msg):
    code, out = _run(capsys, *argv)
    assert code == 2 and msg in out["error"]

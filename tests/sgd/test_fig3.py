"""Seed Fig. 3 (DP-SGD audit) pieces: row seeds, paired bootstrap, ranking, merging, the figure,
and the audit on Fashion-MNIST read from IDX files the test writes itself."""

import math

import numpy as np
import pytest

from semi_core.game.result import GameResult
from semi_core.sgd.experiments import _row as fig3_row
from semi_core.sgd.experiments import (
    bootstrap_attacks,
    fig3_markdown,
    fig3_ranking,
    fig3_row_seed,
    merge_fig3,
    ranking_text,
)

ATT = ("strong", "weak", "none")


def _games(rng, n=400, taus=(1, 2)):
    """Synthetic games: 'strong' separates members by 3 sd, 'weak' by 0.5 sd, 'none' not."""
    out = {}
    for t in taus:
        member = rng.random(n) < 0.5
        stats = {"strong": rng.normal(size=n) + 3.0 * member,
                 "weak": rng.normal(size=n) + 0.5 * member, "none": rng.normal(size=n)}
        out[t] = GameResult(member, np.full(n, t), stats)
    return out


def test_row_seed_is_keyed_by_the_value():
    a, b = fig3_row_seed(0, 1.0), fig3_row_seed(0, 1.0)
    assert a.spawn_key == b.spawn_key and a.entropy == b.entropy
    assert fig3_row_seed(0, 1.0).spawn_key != fig3_row_seed(0, 2.0).spawn_key
    assert fig3_row_seed(0, math.inf).spawn_key != fig3_row_seed(0, 1.0).spawn_key
    for bad in (0.0, -1.0, math.nan, -math.inf):
        with pytest.raises(ValueError, match="epsilon"):
            fig3_row_seed(0, bad)


def test_bootstrap_is_paired_seeded_and_separates_a_real_gap():
    games = _games(np.random.default_rng(1))
    kw = dict(delta=1e-4, n_bootstrap=40, seed=5)
    b1 = bootstrap_attacks(games, ATT, **kw)
    assert b1 == bootstrap_attacks(games, ATT, **kw)  # same seed, same intervals
    lo, hi = b1["diff"]["strong>none"]
    assert lo > 0  # 3-sd separation vs none: certified eps ~2 vs 0, far beyond resampling noise
    assert b1["eps_lb_mean"]["none"][0] == 0.0  # no signal: the bound is 0 in most replicates
    for a in ATT:
        lo, hi = b1["auc_mean"][a]
        assert 0 <= lo <= hi <= 1
    # paired: the gap a>b is the negative of b>a in every replicate
    assert b1["diff"]["weak>strong"] == pytest.approx(tuple(-v for v in
                                                            b1["diff"]["strong>weak"][::-1]))
    with pytest.raises(ValueError, match="n_bootstrap"):
        bootstrap_attacks(games, ATT, delta=1e-4, n_bootstrap=1)
    with pytest.raises(ValueError, match="level"):
        bootstrap_attacks(games, ATT, delta=1e-4, level=1.0)


def test_row_ranking_pilot_certify_and_cap():
    games = _games(np.random.default_rng(2), n=600, taus=(1, 2, 3))
    row = fig3_row(games, ATT, delta=1e-4, failure_prob=0.05, method="band", pilot_fraction=0.3,
                   n_bootstrap=30, fpr_levels=(0.01,), seed=0)
    assert [e["attack"] for e in row["ranking"]][0] == "strong"
    assert row["ranking"][0]["separated_from_next"]
    s = row["attacks"]["strong"]
    # no bound exceeds what the games can certify (perfectly separated scores)
    assert s["eps_lb_mean"] <= row["eps_max"] + 1e-12
    assert s["pilot_certify"]["eps_lb"] <= row["eps_max_certify"] + 1e-12
    assert row["eps_max_certify"] < row["eps_max"]  # fewer games on the certification split
    assert s["eps_lb_best_post_hoc"] >= s["eps_lb_mean"]
    assert s["pilot_certify"]["tau"] in (1, 2, 3)
    text = ranking_text(row)
    assert text.startswith("strong") and ">" in text
    # without a bootstrap the ranking still orders, with no separation claim
    row0 = fig3_row(games, ATT, delta=1e-4, failure_prob=0.05, method="band",
                    pilot_fraction=0.3, n_bootstrap=0, fpr_levels=(0.01,), seed=0)
    assert "separated_from_next" not in row0["ranking"][0]
    assert fig3_ranking(row0)[0]["attack"] == "strong"


def _res(rows, **kw):
    base = {"dataset": "digits", "model": "logreg", "rounds_per_tau": 600, "taus": [1, 2, 3],
            "delta": 1e-4, "method": "band", "failure_prob": 0.05, "pilot_fraction": 0.3,
            "n_bootstrap": 30, "seed": 0, "lr": 0.5, "n_reference": 128, "sizes": None,
            "rows": rows, "roc": {}, "seconds_games": 1.0, "runs_trained": 10, "setup": {}}
    base.update(kw)
    return base


def _named_row(eps, seed):
    from semi_core.sgd.experiments import LABELS

    rng = np.random.default_rng(seed)
    games = {}
    for t in (1, 2):
        member = rng.random(300) < 0.5
        games[t] = GameResult(member, np.full(300, t),
                              {a: rng.normal(size=300) + k * 0.5 * member
                               for k, a in enumerate(LABELS)})
    row = fig3_row(games, list(LABELS), delta=1e-4, failure_prob=0.05, method="band",
                   pilot_fraction=0.3, n_bootstrap=10, fpr_levels=(0.01,), seed=0)
    row.update({"epsilon_target": eps, "epsilon_true": eps, "sigma_dp": 1.0})
    return row


def test_merge_markdown_and_figure(tmp_path):
    from semi_core.report.dpsgd_section import plot_fig3
    from semi_core.sgd.experiments import LABELS

    r1, r2 = _named_row(1.0, 3), _named_row(2.0, 4)
    merged = merge_fig3([_res([r2]), _res([r1])])
    assert [r["epsilon_target"] for r in merged["rows"]] == [1.0, 2.0]
    assert merged["seconds_games"] == 2.0 and merged["runs_trained"] == 20
    with pytest.raises(ValueError, match="overlap"):
        merge_fig3([_res([r1]), _res([r1])])
    with pytest.raises(ValueError, match="rounds_per_tau"):
        merge_fig3([_res([r1]), _res([r2], rounds_per_tau=10)])
    with pytest.raises(ValueError, match="at least one"):
        merge_fig3([])
    md = fig3_markdown(merged)
    assert "largest certifiable" in md and "SeMI-SGD" in md and "exact eps 2" in md
    plot_fig3(merged, tmp_path / "f.png", labels=LABELS)
    assert (tmp_path / "f.png").stat().st_size > 0


def _write_idx(path, arr):
    codes = {np.dtype(np.uint8): 0x08}
    head = bytes([0, 0, codes[arr.dtype], arr.ndim])
    dims = np.asarray(arr.shape, dtype=">u4").tobytes()
    path.write_bytes(head + dims + arr.tobytes())


@pytest.mark.slow
def test_fig3_on_fashion_mnist_idx_files(tmp_path):
    """The audit reads Fashion-MNIST from the user's IDX files (written here: 860 random 28x28
    images); nothing is downloaded."""
    pytest.importorskip("torch")
    from semi_core.sgd.experiments import fig3_experiment

    rng = np.random.default_rng(0)
    n = 860
    _write_idx(tmp_path / "train-images-idx3-ubyte",
               rng.integers(0, 256, size=(n, 28, 28)).astype(np.uint8))
    _write_idx(tmp_path / "train-labels-idx1-ubyte", rng.integers(0, 10, n).astype(np.uint8))
    res = fig3_experiment(dataset="fashion-mnist", data_dir=tmp_path, epsilons=(4.0,),
                          rounds=8, taus=(1,), roc_epsilons=(), n_reference=16,
                          sizes=(100, 640, 60, 60), n_bootstrap=2)
    assert res["setup"]["dataset"] == "fashion-mnist" and res["setup"]["d"] == 785 * 10
    assert res["rows"][0]["games_per_tau"][0][0] + res["rows"][0]["games_per_tau"][0][1] == 8
    with pytest.raises(ValueError, match="data_dir"):
        fig3_experiment(dataset="fashion-mnist", epsilons=(1.0,), rounds=4)


@pytest.mark.slow
def test_rows_do_not_depend_on_other_rows_or_processes():
    """A row's games come from a stream keyed by its eps: running it alone, with other rows or
    split over 2 processes (tau groups) gives the same row."""
    pytest.importorskip("torch")
    from semi_core.sgd.experiments import fig3_experiment

    kw = dict(rounds=30, taus=(1, 2, 3), roc_epsilons=(), n_bootstrap=5, n_reference=32)
    both = fig3_experiment(epsilons=(1.0, 2.0), **kw)
    alone = fig3_experiment(epsilons=(2.0,), processes=2, **kw)
    assert alone["rows"][0]["attacks"] == both["rows"][1]["attacks"]
    assert alone["rows"][0]["per_tau"] == both["rows"][1]["per_tau"]

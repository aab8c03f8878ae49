"""Robustness table of the model-update entry points: each bad input gives a clear error naming
the argument; under ``--json`` one JSON object with an ``error`` key and exit code 2."""

from __future__ import annotations

import json

import numpy as np
import pytest

from semi_core.stats.update_combination import (
    assign_top_n,
    batch_threshold,
    combine,
    entry_accuracy,
    rank_threshold,
)

CLI_CASES = [
    (["--k", "0"], "--k"),
    (["--k", "51"], "--k"),
    (["--trials", "1"], "--trials"),
    (["--n-up", "1"], "--n-up"),
    (["--n-ref", "1", "--score", "lira"], "--n-ref"),
    (["--shift-alpha", "2"], "--shift-alpha"),
    (["--shift-alpha", "x"], "--shift-alpha"),
    (["--sigma-dp", "-1"], "--sigma-dp"),
    (["--sigma-dp", "1", "--clip", "0"], "--clip"),
    (["--score", "gap"], "--score"),
    (["--combiner", "max"], "--combiner"),
    (["--threshold", "median"], "--threshold"),
    (["--update", "sgd"], "--update"),
    (["--n0", "5"], "n0"),
    (["--n-up", "200"], "k * n_up"),
]


@pytest.mark.parametrize("argv,needle", CLI_CASES)
def test_cli_bad_inputs(argv, needle, capsys):
    pytest.importorskip("torch")
    from semi_core.cli import main

    code = main(["updates", *argv, "--json"])
    out = capsys.readouterr().out.strip().splitlines()
    assert code == 2
    assert len(out) == 1
    obj = json.loads(out[0])
    assert needle in obj["error"], obj


LIB_CASES = [
    (lambda: combine([1.0], [1.0], "mean"), ValueError, "combiner"),
    (lambda: combine([1.0, np.nan], [1.0, 1.0]), ValueError, "before"),
    (lambda: combine([1.0], [-2.0], "ratio", c=1.0), ValueError, "c > 0"),
    (lambda: assign_top_n([1.0, 2.0], 1), ValueError, "scores"),
    (lambda: assign_top_n(np.zeros((3, 2)), 2), ValueError, "n_up"),
    (lambda: batch_threshold([], 0.5), ValueError, "pool_scores"),
    (lambda: rank_threshold([1.0], 1.5), ValueError, "fpr"),
    (lambda: entry_accuracy([1, 2], [1]), ValueError, "same shape"),
]


@pytest.mark.parametrize("call,exc,needle", LIB_CASES)
def test_library_bad_inputs(call, exc, needle):
    with pytest.raises(exc, match=needle):
        call()


def test_config_bad_inputs():
    pytest.importorskip("torch")
    from semi_core.attacks.updates import TrainConfig, UpdateConfig
    from semi_core.attacks.updates.gap import UpdateMeanGame, closed_form_tpr

    for kw, needle in ((dict(model="cnn"), "model"), (dict(k=0), "k"), (dict(trials=1), "trials"),
                       (dict(shift_alpha=-0.1), "shift_alpha"), (dict(new_lr=0.0), "new_lr"),
                       (dict(sigma_dp=1.0), "clip"), (dict(dataset="cifar"), "dataset")):
        with pytest.raises((ValueError, TypeError), match=needle):
            UpdateConfig(**kw)
    with pytest.raises(ValueError, match="sigma_dp"):
        TrainConfig(1, 0.1, sigma_dp=-1.0)
    with pytest.raises(ValueError, match="n1"):
        UpdateMeanGame(n1=1)
    with pytest.raises(ValueError, match="fpr"):
        closed_form_tpr(UpdateMeanGame(), 0.0, "optimal")
    with pytest.raises(ValueError, match="test must be"):
        closed_form_tpr(UpdateMeanGame(), 0.1, "oracle")

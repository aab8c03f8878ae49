"""``semi-core attack``: one JSON object, ROC file, and the bad-input table (issue 11)."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

from semi_core.cli import main  # noqa: E402

SMALL = ["attack", "--dataset", "breast-cancer", "--model", "logreg", "--models", "6",
         "--targets", "40", "--epochs", "2", "--bootstrap", "10"]


def _run(capsys, argv):
    rc = main(argv)
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out
    return rc, json.loads(out)


def test_attack_json_and_roc(capsys, tmp_path):
    roc = tmp_path / "roc.png"
    rc, out = _run(capsys, SMALL + ["--attacks", "iha,loss", "--roc", str(roc),
                                    "--json"])
    assert rc == 0
    assert set(out["attacks"]) == {"iha", "loss"}
    for m in out["attacks"].values():
        assert set(m["tpr_at_fpr"]) == {"0.01", "0.001"} and len(m["auc_interval"]) == 2
        assert m["n_member"] + m["n_nonmember"] == 40 and m["seconds"] is not None
    assert roc.stat().st_size > 1000
    assert out["config"]["sgd"]["momentum"] == 0.9


@pytest.mark.parametrize("extra, msg", [
    (["--dataset", "mnist"], "--dataset must be one of"),
    (["--model", "cnn"], "--model must be one of"),
    (["--hessian", "lissa"], "--hessian must be"),
    (["--models", "3"], "--models must be >= 5"),
    (["--target-models", "9"], "--target-models must be in"),
    (["--damping", "-0.1"], "--damping must be finite and >= 0"),
    (["--targets", "x"], "--targets must be an integer"),
    (["--targets", "1"], "--targets must be >= 2"),
    (["--epochs", "0"], "--epochs must be finite and > 0"),
    (["--attacks", "iha,foo"], "attacks must be drawn from"),
    (["--roc", "out.pdf"], "--roc must name a .png file"),
    (["--roc", "/no/such/dir/r.png"], "does not exist"),
    (["--bootstrap", "3"], "--bootstrap must be >= 10"),
    (["--loo-models", "1"], "--loo-targets and --loo-models must be >= 2"),
    (["--dataset", "file"], "--data-path is needed exactly"),
    (["--data-path", "x.csv"], "--data-path is needed exactly"),
    (["--pool-size", "2"], "--pool-size must be >= 4"),
    (["--dataset", "file", "--data-path", "/no/such.csv"], "no such data file"),
])
def test_attack_bad_inputs(capsys, extra, msg):
    rc, out = _run(capsys, SMALL + extra + ["--json"])
    assert rc == 2 and msg in out["error"], out


@pytest.mark.parametrize("extra", [["--models", "100000"], ["--epochs", "1e9"]])
def test_attack_refuses_what_does_not_fit(capsys, extra):
    rc, out = _run(capsys, ["attack", *extra, "--json"])
    assert rc == 2 and out["kind"] == "resource" and "would need" in out["error"]

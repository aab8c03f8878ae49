"""``semi-core attack``: one JSON object, ROC file, executor flags, the bad-input table and
every value flag at its extremes (a clear error naming the flag, never a traceback, never a
silently clipped value)."""

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


@pytest.mark.parametrize("extra", [["--models", "100000"], ["--epochs", "1e9"],
                                   ["--models", str(10**400)], ["--epochs", "1e300"],
                                   ["--bootstrap", str(10**30)],
                                   ["--attacks", "loss,l-attack", "--loo-targets", "10",
                                    "--loo-models", str(10**30)]])
def test_attack_refuses_what_does_not_fit(capsys, extra):
    rc, out = _run(capsys, ["attack", *extra, "--json"])
    assert rc == 2 and out["kind"] == "resource" and "would " in out["error"]


def test_attack_on_threads_same_payload(capsys):
    """--threads 2 (the runner's executor) gives the same scores as in-process."""
    base = SMALL + ["--attacks", "iha,loss", "--json"]
    _, a = _run(capsys, base)
    _, b = _run(capsys, base + ["--threads", "2"])
    assert b["executor"] == "threads:2" and a["executor"] == "threads:1"
    for name in ("iha", "loss"):
        assert a["attacks"][name]["auc"] == b["attacks"][name]["auc"]


# Every value flag at its extremes: (flag, value) -> a piece of the error. Flags whose range
# depends on the pool (--targets, --pool-size, --loo-targets) are refused, not clipped.
EXTREMES = [
    ("--pool-size", "0", "--pool-size"), ("--pool-size", "-1", "--pool-size"),
    ("--pool-size", "1e300", "--pool-size must be in 4..569"),
    ("--pool-size", "570", "--pool-size must be in 4..569, got 570"),
    ("--pool-size", str(10**30), "--pool-size must be in 4..569"),
    ("--pool-size", "nan", "--pool-size"), ("--pool-size", "inf", "--pool-size"),
    ("--models", "0", "--models must be >= 5"), ("--models", "-1", "--models must be >= 5"),
    ("--models", "1e300", "--models"), ("--models", "nan", "--models"),
    ("--models", "inf", "--models"),
    ("--targets", "0", "--targets must be >= 2"), ("--targets", "-5", "--targets must be >= 2"),
    ("--targets", "1e300", "--targets must be an integer"),
    ("--targets", "nan", "--targets must be an integer"),
    ("--targets", "inf", "--targets must be an integer"),
    ("--targets", "570", "--targets must be in 2..569, got 570"),
    ("--targets", str(10**30), "--targets must be in 2..569"),
    ("--target-models", "0", "--target-models must be in 1..2"),
    ("--target-models", "-1", "--target-models must be in"),
    ("--target-models", str(10**30), "--target-models must be in"),
    ("--target-models", "nan", "--target-models"), ("--target-models", "1e300", "--target-models"),
    ("--damping", "-1", "--damping must be finite and >= 0"),
    ("--damping", "nan", "--damping must be finite"), ("--damping", "inf", "--damping must be"),
    ("--damping", "-inf", "--damping must be"),
    ("--damping", "1e-300", "--damping = 1e-300 leaves eigenvalue"),
    ("--epochs", "0", "--epochs must be finite and > 0"), ("--epochs", "-1", "--epochs must be"),
    ("--epochs", "nan", "--epochs must be"), ("--epochs", "inf", "--epochs must be"),
    ("--loo-targets", "0", "--loo-targets and --loo-models must be >= 2"),
    ("--loo-targets", "nan", "--loo-targets"), ("--loo-targets", "1e300", "--loo-targets"),
    ("--loo-models", "-1", "--loo-targets and --loo-models must be >= 2"),
    ("--loo-models", "inf", "--loo-models"),
    ("--loo-targets", "10", "--loo-targets apply only to the leave-one-out attacks"),
    ("--loo-models", "3", "--loo-models apply only to the leave-one-out attacks"),
    ("--bootstrap", "0", "--bootstrap must be >= 10"), ("--bootstrap", "-1", "--bootstrap"),
    ("--bootstrap", "1e300", "--bootstrap"), ("--bootstrap", "nan", "--bootstrap"),
    ("--seed", "-1", "--seed"), ("--seed", "nan", "--seed"), ("--seed", "1e300", "--seed"),
    ("--threads", "0", "--threads"), ("--threads", "nan", "--threads"),
    ("--workers", "0", "--workers"), ("--workers", "-1", "--workers"),
    ("--connect-timeout", "0", "--connect-timeout must be finite and > 0"),
    ("--connect-timeout", "nan", "--connect-timeout must be"),
    ("--connect-timeout", "inf", "--connect-timeout must be"),
    ("--worker-timeout", "-1", "--worker-timeout must be finite and > 0"),
    ("--worker-timeout", "inf", "--worker-timeout must be"),
    ("--threads", "1e300", "--threads must be in 1.."),
]


@pytest.mark.parametrize("flag, value, msg", EXTREMES)
def test_attack_value_flags_at_extremes(capsys, flag, value, msg):
    rc, out = _run(capsys, SMALL + ["--attacks", "iha,loss", flag, value, "--json"])
    assert rc == 2 and out["kind"] in ("usage", "invalid_argument"), out
    assert msg in out["error"], out


def test_loo_targets_refused_above_targets(capsys):
    rc, out = _run(capsys, SMALL + ["--attacks", "loss,l-attack", "--loo-targets", "41",
                                    "--json"])
    assert rc == 2 and "--loo-targets must be in 2..40, got 41" in out["error"], out


def test_loo_subset_of_one_class_refused_before_training_loo_models(capsys):
    """Seed 0: the first 2 records of target model 0 are of one class; refused, named."""
    rc, out = _run(capsys, SMALL + ["--attacks", "loss,l-attack", "--loo-targets", "2",
                                    "--loo-models", "2", "--json"])
    assert rc == 2 and "--loo-targets: the 2 leave-one-out records" in out["error"], out


@pytest.mark.parametrize("flag, value", [("--damping", "1e300"), ("--epochs", "1e-300"),
                                         ("--seed", str(10**30)), ("--threads", "2"),
                                         ("--connect-timeout", "1e300")])
def test_attack_extreme_but_valid_values_run(capsys, flag, value):
    """Values at the edge of their range are legal and give finite results."""
    rc, out = _run(capsys, SMALL + ["--attacks", "iha,loss", flag, value, "--json"])
    assert rc == 0, out
    assert all(0 <= m["auc"] <= 1 for m in out["attacks"].values())

"""CLI: ``semi-core audit``, ``epsilon``, ``audit-game`` (handlers, --json, errors)."""

import argparse
import importlib
import json

import numpy as np
import pytest

from semi_core.cli import COMMAND_MODULES, main
from semi_core.cli._common import emit

MINE = ("audit", "epsilon", "audit_game")


def _run(argv, capsys):
    """Parse with our subcommands only (other modules may be mid-development) and emit."""
    p = argparse.ArgumentParser()
    sub = p.add_subparsers(dest="command", required=True)
    for name in MINE:
        importlib.import_module(f"semi_core.cli.{name}").register(sub)
    args = p.parse_args(argv)
    emit(args.func(args), as_json=args.json)
    out = capsys.readouterr().out
    return json.loads(out) if args.json else out


def test_registered():
    assert all(name in COMMAND_MODULES for name in MINE)


@pytest.fixture
def scores_csv(tmp_path):
    rng = np.random.default_rng(3)
    path = tmp_path / "scores.csv"
    lines = ["score,member"] + [f"{s},1" for s in rng.normal(2, 1, 800)]
    lines += [f"{s},0" for s in rng.normal(0, 1, 800)]
    path.write_text("\n".join(lines) + "\n")
    return path


@pytest.mark.parametrize("method", ["dkw", "cp", "gdp"])
def test_audit_json(scores_csv, capsys, method):
    out = _run(["audit", "--scores", str(scores_csv), "--delta", "1e-5", "--failure-prob",
                "0.05", "--method", method, "--json"], capsys)
    for key in ("epsilon_lower_bound", "threshold", "tpr", "fpr", "tpr_lower", "fpr_upper"):
        assert key in out
    assert 0 < out["epsilon_lower_bound"] < 20 and out["method"] == method


def test_audit_joint_text_and_json(scores_csv, capsys):
    text = _run(["audit", "--scores", str(scores_csv), "--delta", "1e-5", "--method", "joint"],
                capsys)
    assert "method joint" in text and "one exact test of both rates" in text
    assert "None" not in text  # no rate bounds and no guesses to print
    out = _run(["audit", "--scores", str(scores_csv), "--delta", "1e-5", "--method", "joint",
                "--sides", "one", "--json"], capsys)
    assert out["tpr_lower"] is None and out["fpr_upper"] is None
    assert out["direction"] == "tpr/fpr" and out["epsilon_lower_bound"] > 1.0
    assert out["n_thresholds"] > 0


def test_audit_text_and_threshold(scores_csv, capsys):
    text = _run(["audit", "--scores", str(scores_csv), "--delta", "0", "--method", "cp",
                 "--threshold", "1.0", "--threshold", "2.0"], capsys)
    assert "epsilon >=" in text


def test_epsilon_json(capsys):
    out = _run(["epsilon", "--mu", "1", "--delta", "1e-5", "--json"], capsys)
    assert out["epsilon"] == pytest.approx(4.377178095681224, rel=1e-10)
    out = _run(["epsilon", "--sigma", "2", "--sensitivity", "2", "--delta", "1e-5", "--json"],
               capsys)
    assert out["epsilon"] == pytest.approx(4.377178095681224, rel=1e-10)


def test_audit_game_json(capsys):
    out = _run(["audit-game", "--rounds", "600", "--mu-levels", "2", "--json"], capsys)
    row = out["rows"][0]
    assert row["mu"] == pytest.approx(2.0)
    assert set(row["tests"]) == {"semi-star", "semi-max", "final"}
    assert row["tests"]["semi-star"]["epsilon_lower_bound"] <= row["epsilon_true"]


@pytest.mark.parametrize(
    ("rows", "match"),
    [(["score,member"], "member_scores is empty"),
     (["score,member", "1.0,1", "2.0,1"], "nonmember_scores is empty"),
     (["score,member", "nan,1", "0.0,0"], "NaN"),
     (["score,member", "x,1"], "line 2"),
     (["score,member", "1.0,maybe"], "member must be"),
     (["score,label", "1.0,1"], "header")],
)
def test_audit_bad_csv(tmp_path, capsys, rows, match):
    path = tmp_path / "bad.csv"
    path.write_text("\n".join(rows) + "\n")
    with pytest.raises(ValueError, match=match):
        _run(["audit", "--scores", str(path), "--delta", "1e-5", "--json"], capsys)


def test_main_reports_errors_as_one_json_object(scores_csv, capsys):
    try:
        rc = main(["audit", "--scores", str(scores_csv), "--delta", "1.5", "--json"])
    except ModuleNotFoundError:  # another subcommand module not written yet
        pytest.skip("full CLI not assembled yet")
    out = capsys.readouterr().out
    assert rc == 2 and "delta must be in [0, 1)" in json.loads(out)["error"]


@pytest.mark.parametrize(
    ("argv", "match"),
    [(["epsilon", "--mu", "1", "--delta", "1"], "delta"),
     (["epsilon", "--delta", "0.1"], "exactly one"),
     (["audit-game", "--mu-levels", "-1", "--rounds", "100"], "mu-levels"),
     (["audit-game", "--alpha", "0.7", "--rounds", "100"], "failure-prob"),
     (["audit-game", "--failure-prob", "0.7", "--rounds", "100"], "failure-prob")],
)
def test_bad_args(capsys, argv, match):
    with pytest.raises(ValueError, match=match):
        _run(argv, capsys)


# ---- inputs a user already has: named columns, npy / npz / parquet, losses ------------------
def _scores(n=300, seed=5):
    rng = np.random.default_rng(seed)
    return np.r_[rng.normal(1.5, 1, n), rng.normal(0, 1, n)], np.r_[np.ones(n), np.zeros(n)]


def _audit(path, capsys, *extra):
    return _run(["audit", "--scores", str(path), "--delta", "1e-5", "--method", "dkw", "--json",
                 *extra], capsys)


def test_audit_named_columns_and_array_formats_agree(tmp_path, capsys):
    s, m = _scores()
    csv_path = tmp_path / "s.csv"
    csv_path.write_text("id,logit,is_member\n" + "".join(
        f"{i},{float(a)!r},{'true' if b else 'false'}\n" for i, (a, b) in enumerate(zip(s, m))))
    ref = _audit(csv_path, capsys, "--score-col", "logit", "--label-col", "is_member")
    np.savez(tmp_path / "s.npz", logit=s, is_member=m.astype(bool))
    rec = np.zeros(s.size, dtype=[("logit", "f8"), ("is_member", "i8")])
    rec["logit"], rec["is_member"] = s, m
    np.save(tmp_path / "rec.npy", rec)
    np.save(tmp_path / "plain.npy", np.c_[s, m])
    cols = ("--score-col", "logit", "--label-col", "is_member")
    for out in (_audit(tmp_path / "s.npz", capsys, *cols), _audit(tmp_path / "rec.npy", capsys,
                                                                   *cols),
                _audit(tmp_path / "plain.npy", capsys)):
        assert out["epsilon_lower_bound"] == ref["epsilon_lower_bound"]
        assert out["n_member"] == out["n_nonmember"] == 300


def test_audit_losses_lower_is_member(tmp_path, capsys):
    s, m = _scores()
    np.savez(tmp_path / "l.npz", score=-s, member=m)
    high = _audit(tmp_path / "l.npz", capsys)
    low = _audit(tmp_path / "l.npz", capsys, "--lower-is-member")
    same = _audit(tmp_path / "l.npz", capsys, "--higher-is", "nonmember")
    assert high["epsilon_lower_bound"] == 0.0 < low["epsilon_lower_bound"]
    assert low == same and low["higher_is"] == "nonmember"


def test_audit_reports_tpr_intervals_and_max_certifiable(tmp_path, capsys):
    s, m = _scores()
    np.savez(tmp_path / "s.npz", score=s, member=m)
    out = _audit(tmp_path / "s.npz", capsys)
    assert [r["fpr"] for r in out["tpr_at_fpr"]] == [0.01, 0.001]
    for r in out["tpr_at_fpr"]:
        lo, hi = r["interval"]
        assert 0 <= lo <= r["tpr"] <= hi <= 1
    assert out["epsilon_lower_bound"] <= out["epsilon_max_certifiable"] < 10
    text = _run(["audit", "--scores", str(tmp_path / "s.npz"), "--delta", "1e-5"], capsys)
    assert "largest epsilon they could certify" in text
    assert "TPR at FPR 0.1%" in text and "Clopper-Pearson" in text


def test_audit_parquet(tmp_path, capsys):
    pd = pytest.importorskip("pandas")
    s, m = _scores()
    path = tmp_path / "s.parquet"
    try:
        pd.DataFrame({"score": s, "member": m.astype(int)}).to_parquet(path)
    except ImportError:  # no parquet engine: the audit must say what to install
        path.write_bytes(b"PAR1")
        with pytest.raises(ImportError, match="pandas and pyarrow"):
            _audit(path, capsys)
        return
    ref = _audit(path, capsys)
    assert ref["n_member"] == 300


def test_audit_input_errors_name_the_problem(tmp_path, capsys):
    s, m = _scores(10)
    np.savez(tmp_path / "s.npz", score=s, member=m)
    with pytest.raises(ValueError, match="no array 'loss'"):
        _audit(tmp_path / "s.npz", capsys, "--score-col", "loss")
    np.savez(tmp_path / "bad.npz", score=s, member=m * 2)
    with pytest.raises(ValueError, match="0/1"):
        _audit(tmp_path / "bad.npz", capsys)
    (tmp_path / "c.csv").write_text("score,member\n1,1\n0,0\n")
    with pytest.raises(ValueError, match="'logit'"):
        _audit(tmp_path / "c.csv", capsys, "--score-col", "logit")
    np.save(tmp_path / "three.npy", np.zeros((4, 3)))
    with pytest.raises(ValueError, match=r"\(n, 2\)"):
        _audit(tmp_path / "three.npy", capsys)
    with pytest.raises(SystemExit):
        _audit(tmp_path / "s.npz", capsys, "--higher-is", "nonmember", "--lower-is-member")

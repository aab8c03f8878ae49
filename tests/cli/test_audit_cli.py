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

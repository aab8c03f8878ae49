"""CLI: every listed subcommand registers; power/reproduce contracts (one JSON object)."""

import json

import numpy as np
import pytest

from semi_core.cli import COMMAND_MODULES, build_parser, main


def run_json(capsys, argv):
    rc = main(argv)
    out = capsys.readouterr().out
    assert out.count("\n") == 1, out  # exactly one JSON object on one line
    return rc, json.loads(out)


def test_every_command_registers():
    parser = build_parser()
    sub = next(a for a in parser._actions if a.dest == "command")
    assert {m.replace('_', '-') for m in COMMAND_MODULES} == set(sub.choices)


def test_power_json(capsys):
    rc, out = run_json(capsys, ["power", "--n", "10", "--T", "10", "--mu", "0", "--sigma", "1",
                                "--target", "3", "--fpr", "0.01", "--test", "semi-star", "--json"])
    assert rc == 0
    assert {"tpr", "threshold", "alpha", "beta"} <= set(out)
    assert out["alpha"] == pytest.approx(0.01, rel=1e-8)
    assert out["tpr"] == pytest.approx(1 - out["beta"])
    _, fo = run_json(capsys, ["power", "--T", "10", "--test", "final", "--json"])
    assert fo["tpr"] < out["tpr"]


def test_power_multivariate_files(tmp_path, capsys):
    S = np.array([[2.0, 0.3], [0.3, 1.0]])
    z = np.array([1.0, 2.0])
    np.save(tmp_path / "cov.npy", S)
    np.save(tmp_path / "z.npy", z)
    _, out = run_json(capsys, ["power", "--cov", str(tmp_path / "cov.npy"), "--target-file",
                               str(tmp_path / "z.npy"), "--test", "max", "--json"])
    assert out["d"] == 2
    assert out["mahalanobis"] == pytest.approx(np.sqrt(z @ np.linalg.solve(S, z)))


@pytest.mark.parametrize("argv, msg", [
    (["power", "--n", "1", "--json"], "n must be in 2"),
    (["power", "--fpr", "1.5", "--json"], "fpr must lie in (0, 1)"),
    (["power", "--sigma", "0", "--json"], "--sigma must be finite and > 0"),
    (["power", "--tau", "11", "--T", "10", "--json"], "tau must be in 1..10"),
])
def test_power_bad_input_is_a_clear_error(capsys, argv, msg):
    rc, out = run_json(capsys, argv)
    assert rc == 2 and msg in out["error"]


def test_reproduce_power_section(tmp_path, capsys, monkeypatch):
    import semi_core.report.power_section as ps

    monkeypatch.setattr(ps, "FIG2_T_GRID", (1, 3))
    monkeypatch.setattr(ps, "FIG2_DISTANCE_GRID", (1.0, 3.0))
    rc, out = run_json(capsys, ["reproduce", "--quick", "--out", str(tmp_path), "--section",
                                "semi_core.report.power_section", "--json"])
    assert rc == 0
    assert (tmp_path / "report.md").exists() and (tmp_path / "fig2_power.png").stat().st_size > 1000
    data = json.loads((tmp_path / "report.json").read_text())
    sec = next(iter(data.values()))["data"]
    row = sec["power_vs_T"]["1"]
    # T = 1: all four tests coincide, in closed form and in Monte Carlo
    assert row["final"]["closed_form"] == pytest.approx(row["semi-star"]["closed_form"])
    assert row["semi-unif"]["mc"] == pytest.approx(row["semi-star"]["mc"])

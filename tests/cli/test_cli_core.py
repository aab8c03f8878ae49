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


@pytest.mark.parametrize("argv, flag", [
    (["--mu-levels", "1e300"], "--mu-levels"),
    (["--mu-levels", "1e-300"], "--mu-levels"),
    (["--noise", "1e-300"], "--noise"),
    (["--noise", "1e300"], "--noise"),
    (["--noise", "1", "1e-300"], "--noise"),
    (["--clip", "1e-300"], "--clip"),
    (["--data-std", "1e300"], "--data-std"),
    (["--data-mean", "1e300"], "--data-mean"),
    (["--target", "nan"], "--target"),
    (["--T", "100000000"], "--T"),
])
def test_audit_game_extremes_are_clean_errors(capsys, argv, flag):
    """Extremes never reach the GDP solver or the game: one JSON error naming the flag."""
    rc, out = run_json(capsys, ["audit-game", "--rounds", "40", "--T", "2", *argv, "--json"])
    assert rc == 2 and out["kind"] in ("invalid_argument", "resource") and flag in out["error"]


@pytest.mark.parametrize("mu", ["1e-6", "1e6"])
def test_audit_game_range_ends_compute(capsys, mu):
    """The ends of the accepted mu range give a finite result, each bound below the truth."""
    rc, out = run_json(capsys, ["audit-game", "--rounds", "60", "--T", "2", "--mu-levels", mu,
                                "--json"])
    assert rc == 0
    row = out["rows"][0]
    assert np.isfinite(row["epsilon_true"])
    for r in row["tests"].values():
        assert 0 <= r["epsilon_lower_bound"] <= row["epsilon_true_tau"]


def test_epsilon_sensitivity_needs_noise(capsys):
    rc, out = run_json(capsys, ["epsilon", "--gdp-mu", "1", "--sensitivity", "2", "--delta",
                                "1e-5", "--json"])
    assert rc == 2 and "--sensitivity" in out["error"]
    rc, out = run_json(capsys, ["epsilon", "--noise", "1e-300", "--delta", "1e-5", "--json"])
    assert rc == 2 and "--noise" in out["error"] and "1e+06" in out["error"]


def test_simulate_time_estimate_and_one_class(capsys, monkeypatch):
    """simulate estimates its time from the arguments (variates drawn) and refuses past
    SEMI_CORE_MAX_SECONDS; games that drew one class only are an error naming --p-member."""
    monkeypatch.setenv("SEMI_CORE_MAX_SECONDS", "5")
    rc, out = run_json(capsys, ["simulate", "--rounds", "40", "--n", "1000000000", "--json"])
    assert rc == 2 and out["kind"] == "resource" and "--n 1000000000" in out["error"]
    rc, out = run_json(capsys, ["simulate", "--rounds", "40", "--p-member", "1e-300", "--json"])
    assert rc == 2 and "--p-member" in out["error"]


@pytest.mark.parametrize("extra, flag", [
    (["--method", "gdp", "--sides", "one"], "--sides"),
    (["--method", "one-run", "--sides", "two"], "--sides"),
    (["--method", "band", "--seed", "3"], "--seed"),
    (["--method", "cp", "--threshold", "0.2", "--seed", "3"], "--seed"),
    (["--method", "cp", "--threshold", "nan"], "--threshold"),
])
def test_audit_refuses_options_that_do_not_apply(tmp_path, capsys, extra, flag):
    f = tmp_path / "s.csv"
    f.write_text("score,member\n0.1,1\n0.5,0\n0.3,1\n0.2,0\n")
    rc, out = run_json(capsys, ["audit", "--scores", str(f), "--delta", "1e-5", *extra,
                                "--json"])
    assert rc == 2 and out["error"].startswith(f"ValueError: {flag} ")


@pytest.mark.parametrize("argv, flag", [
    (["verify", "--list", "--seed", "0"], "--seed"),
    (["verify", "--list", "--errata", "x.md"], "--errata"),
    (["verify", "--list", "--full"], "--full"),
    (["verify", "--rng-seed", "-1", "--list"], "--rng-seed"),
    (["derive", "--name", "nope"], "--name"),
    (["audit-checkpoints", "--model", "m.pt", "--reference", "r.npz", "--target-index", "0",
      "--lr", "-1", "--batch-size", "4", "--runs", "a"], "--lr"),
    (["audit-checkpoints", "--model", "m.pt", "--reference", "r.npz", "--target-index", "0",
      "--lr", "0.1", "--batch-size", "4", "--runs", "a", "--noise-multiplier", "-1"],
     "--noise-multiplier"),
    (["audit-checkpoints", "--model", "m.pt", "--reference", "r.npz", "--target-index", "0",
      "--lr", "0.1", "--batch-size", "4", "--runs", "a", "--delta", "nan"], "--delta"),
])
def test_flags_named_before_work(tmp_path, monkeypatch, capsys, argv, flag):
    """Options that do not apply are refused; numbers are checked (by flag) before files."""
    monkeypatch.chdir(tmp_path)
    rc, out = run_json(capsys, [*argv, "--json"])
    assert rc == 2 and flag in out["error"], out

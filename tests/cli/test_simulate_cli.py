"""``semi-core simulate`` (semi_core/cli/simulate.py)."""

import argparse
import json
import math

import numpy as np
import pytest

from semi_core.cli import simulate as sim_cli
from semi_core.cli._common import emit

SIGMAS = 4.5


def _run(argv, capsys):
    """Parse with only this subcommand registered and print like ``semi-core`` does."""
    p = argparse.ArgumentParser(prog="semi-core")
    sim_cli.register(p.add_subparsers(dest="command"))
    args = p.parse_args(["simulate", *argv])
    emit(args.func(args), as_json=args.json)
    return capsys.readouterr().out


def test_base_form_json(capsys):
    out = _run("--n 10 --T 10 --tau 5 --mu 0 --sigma 1 --target 3 --rounds 20000 --seed 0 "
               "--json --no-progress".split(), capsys)
    assert out.count("\n") == 1  # exactly one JSON object
    payload = json.loads(out)
    assert set(payload["tests"]) == {"semi-star", "semi-unif", "semi-max", "final"}
    for t in payload["tests"].values():
        assert set(t["tpr_at_fpr"]) == {"0.1", "0.01", "0.001"}
        for v in t["tpr_at_fpr"].values():
            assert 0 <= v["tpr"] <= 1 and v["se"] > 0
        assert 0.5 < t["auc"] < 1 and t["auc_se"] > 0
    # SeMI* dominates Final Observation at T = 10 (seed §3.3): gap >> combined s.e.
    s, f = payload["tests"]["semi-star"], payload["tests"]["final"]
    gap_se = math.hypot(s["auc_se"], f["auc_se"])
    assert s["auc"] - f["auc"] > SIGMAS * gap_se
    assert payload["params"]["m_star"] == pytest.approx(9.0)
    # same seed, same numbers
    again = json.loads(_run("--n 10 --T 10 --tau 5 --mu 0 --sigma 1 --target 3 --rounds 20000 "
                            "--seed 0 --json --threads 2 --no-progress".split(), capsys))
    assert again["tests"] == payload["tests"]


def test_text_and_multivariate_files(tmp_path, capsys):
    cov = np.array([[1.0, 0.5, 0.0], [0.5, 2.0, 0.1], [0.0, 0.1, 0.5]])
    tgt = np.array([2.0, -1.0, 0.5])
    np.save(tmp_path / "cov.npy", cov)
    np.save(tmp_path / "t.npy", tgt)
    out = _run(["--cov", str(tmp_path / "cov.npy"), "--target-file", str(tmp_path / "t.npy"),
                "--tau", "uniform", "--rounds", "3000", "--data", "student-t:5", "--T", "4"],
               capsys)
    assert "semi-star" in out and "d=3" in out and "student-t:5" in out
    out = _run("--dim 4 --mode sufficient --rounds 3000 --json".split(), capsys)
    assert json.loads(out)["params"]["d"] == 4


@pytest.mark.parametrize("argv,exc,match", [
    ("--data bernoulli:1.5", ValueError, r"p must be in \(0, 1\)"),
    ("--data student-t:2", ValueError, "nu must be > 2"),
    ("--data gamma", ValueError, "unknown distribution"),
    ("--tau soon", ValueError, "--tau must be an integer in 1..10 or 'uniform'"),
    ("--tau 11", ValueError, "tau"),
    ("--sigma 0", ValueError, "--sigma"),
    ("--mode sufficient --data laplace", ValueError, "needs data 'gaussian'"),
    ("--cov /nonexistent/c.npy", FileNotFoundError, "--cov"),
    ("--dim 0", ValueError, "--dim"),
])
def test_errors(argv, exc, match, capsys):
    with pytest.raises(exc, match=match):
        _run([*argv.split(), "--rounds", "50"], capsys)


def test_file_shape_errors(tmp_path, capsys):
    np.save(tmp_path / "c.npy", np.eye(2))
    np.save(tmp_path / "t.npy", np.ones(3))
    with pytest.raises(ValueError, match="expected d = 2"):
        _run(["--cov", str(tmp_path / "c.npy"), "--target-file", str(tmp_path / "t.npy")],
             capsys)
    np.save(tmp_path / "obj.npy", np.array([{"a": 1}], dtype=object), allow_pickle=True)
    with pytest.raises(ValueError, match="pickle"):
        _run(["--target-file", str(tmp_path / "obj.npy")], capsys)

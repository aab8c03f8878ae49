"""`semi-core example-data` writes the tour's files; the tour's lines that read them run; a
closed pipe ends a command quietly (exit 141, no traceback)."""

from __future__ import annotations

import contextlib
import io
import json
import subprocess
import sys

import numpy as np

from semi_core.cli import main


def _run(argv):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(argv)
    return code, json.loads(out.getvalue())


def test_writes_files_and_refuses_to_overwrite(tmp_path):
    code, payload = _run(["example-data", str(tmp_path), "--json"])
    assert code == 0 and len(payload["written"]) == 3
    sigma = np.load(tmp_path / "SIGMA.npy", allow_pickle=False)
    z = np.load(tmp_path / "Z.npy", allow_pickle=False)
    assert sigma.shape == (5, 5) and np.all(np.linalg.eigvalsh(sigma) > 0)
    assert np.isclose(z @ np.linalg.solve(sigma, z), 9.0)  # Mahalanobis distance 3
    code, payload = _run(["example-data", str(tmp_path), "--json"])
    assert code == 2 and "--force" in payload["error"]
    assert _run(["example-data", str(tmp_path), "--force", "--json"])[0] == 0


def test_tour_lines_run_on_the_files(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert _run(["example-data", "--json"])[0] == 0
    code, power = _run(["power", "--dim", "5", "--cov", "SIGMA.npy", "--target-file", "Z.npy",
                        "--test", "max", "--json"])
    assert code == 0 and abs(power["mahalanobis"] - 3.0) < 1e-9
    code, audit = _run(["audit", "--scores", "scores.csv", "--delta", "1e-5", "--method", "band",
                        "--json"])
    assert code == 0 and audit["epsilon_lower_bound"] > 0


def test_closed_pipe_exits_quietly(tmp_path):
    assert _run(["example-data", str(tmp_path), "--json"])[0] == 0
    proc = subprocess.run(
        f"{sys.executable} -c 'import sys; from semi_core.cli import main; sys.exit(main())' "
        f"audit --scores {tmp_path / 'scores.csv'} "
        f"--delta 1e-5 --json | head -c 5", shell=True, capture_output=True, text=True,
        executable="/bin/bash")
    assert proc.stdout == '{"eps'
    assert "Traceback" not in proc.stderr and "BrokenPipe" not in proc.stderr


def test_version(capsys):
    import pytest

    import semi_core

    with pytest.raises(SystemExit) as e:
        main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"semi-core {semi_core.__version__}"

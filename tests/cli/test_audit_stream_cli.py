"""``semi-core audit-stream``: whole files, following a growing file, bad input."""

import argparse
import json
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

from semi_core.audit import AnytimeOneRun
from semi_core.audit.anytime_one_run import simulate_canaries
from semi_core.cli import audit_stream
from semi_core.cli._common import emit


def _run(argv, capsys):
    p = argparse.ArgumentParser()
    audit_stream.register(p.add_subparsers(dest="command", required=True))
    args = p.parse_args(["audit-stream", *argv])
    emit(args.func(args), as_json=args.json)
    out = capsys.readouterr().out
    return json.loads(out) if args.json else out


def _write_csv(path, s, m, *, mode="w", header=True):
    with open(path, mode) as f:
        if header:
            f.write("score,member\n")
        for a, b in zip(s, m, strict=True):
            f.write(f"{a},{int(b)}\n")


@pytest.fixture
def stream():
    return simulate_canaries("rr", 400, 8.0, 0.0, np.random.default_rng(0))


def test_whole_file_matches_the_library(tmp_path, capsys, stream):
    s, m = stream
    _write_csv(tmp_path / "c.csv", s, m)
    np.savez(tmp_path / "c.npz", score=s, member=m)
    ref = AnytimeOneRun(2.0).update(s, m)
    for name in ("c.csv", "c.npz"):
        out = _run(["--scores", str(tmp_path / name), "--claimed-epsilon", "2", "--json"], capsys)
        assert out["refuted"] and out["refuted_at"] == ref.refuted_at
        assert out["epsilon_lower_bound"] == ref.epsilon_lower_bound
        assert out["canaries_seen"] == 400 and out["stop_reason"] == "refuted"
    text = _run(["--scores", str(tmp_path / "c.csv"), "--claimed-epsilon", "2"], capsys)
    assert "REFUTED after" in text


def test_partial_last_line_waits(tmp_path, capsys, stream):
    s, m = stream
    path = tmp_path / "c.csv"
    _write_csv(path, s[:50], m[:50])
    with open(path, "a") as f:
        f.write("1.0,")                                      # a row still being written
    out = _run(["--scores", str(path), "--claimed-epsilon", "20", "--json"], capsys)
    assert out["canaries_seen"] == 50


def test_follow_stops_at_refutation(tmp_path, capsys, stream):
    s, m = stream
    path = tmp_path / "c.csv"
    _write_csv(path, s[:10], m[:10])

    def writer():
        for i in range(10, 400, 10):
            time.sleep(0.02)
            _write_csv(path, s[i:i + 10], m[i:i + 10], mode="a", header=False)

    th = threading.Thread(target=writer)
    th.start()
    out = _run(["--scores", str(path), "--claimed-epsilon", "2", "--follow", "--poll-seconds",
                "0.01", "--max-wait", "5", "--json"], capsys)
    th.join()
    assert out["refuted"] and out["stop_reason"] == "refuted"
    assert out["refuted_at"] == AnytimeOneRun(2.0).update(s, m).refuted_at   # batching-free
    assert out["reads"] > 1


def test_follow_is_bounded(tmp_path, capsys, stream):
    s, m = stream
    _write_csv(tmp_path / "c.csv", s[:30], m[:30])
    t0 = time.monotonic()
    out = _run(["--scores", str(tmp_path / "c.csv"), "--claimed-epsilon", "20", "--follow",
                "--poll-seconds", "0.05", "--max-wait", "0.3", "--json"], capsys)
    assert out["stop_reason"].startswith("no new row") and time.monotonic() - t0 < 5


@pytest.mark.parametrize("extra,match", [
    (["--threshold", "1"], "--threshold"),
    (["--poll-seconds", "0"], "--poll-seconds"),
    (["--claimed-epsilon", "-1"], "claimed_epsilon"),
    (["--delta", "1e-5"], "n_canaries"),
    (["--score-col", "loss"], "columns named 'loss'"),
])
def test_bad_input(tmp_path, stream, extra, match):
    s, m = stream
    _write_csv(tmp_path / "c.csv", s[:30], m[:30])
    argv = ["--scores", str(tmp_path / "c.csv"), "--claimed-epsilon", "2", *extra]
    p = argparse.ArgumentParser()
    audit_stream.register(p.add_subparsers(dest="command", required=True))
    args = p.parse_args(["audit-stream", *argv])
    with pytest.raises((ValueError, TypeError), match=match):
        args.func(args)


def test_json_error_is_one_object(tmp_path):
    code = "import sys; from semi_core.cli import main; sys.exit(main(sys.argv[1:]))"
    proc = subprocess.run([sys.executable, "-c", code, "audit-stream", "--scores",
                           str(tmp_path / "none.csv"), "--claimed-epsilon", "2", "--json"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode != 0
    assert "error" in json.loads(proc.stdout)


def test_damaged_files_are_user_errors(tmp_path, stream):
    """A truncated archive and a field over the csv module's limit are errors naming the file
    and line (the score readers' rule), not internal errors of the zip or csv modules."""
    s, m = stream
    full = tmp_path / "c.npz"
    np.savez(full, score=s, member=m)
    cut = tmp_path / "cut.npz"
    cut.write_bytes(full.read_bytes()[: full.stat().st_size // 2])
    with pytest.raises(ValueError, match="not a readable .npz"):
        audit_stream.read_stream(cut)
    wide = tmp_path / "wide.csv"
    wide.write_text("score,member,note\n0.5,1,x\n0.1,0,\"" + "y" * 200_000 + "\"\n")
    with pytest.raises(ValueError, match="line 3: a field longer than"):
        audit_stream.read_stream(wide)

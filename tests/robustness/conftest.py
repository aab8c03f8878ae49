"""Shared helpers of the bad-input suite: run ``semi-core`` in-process under a hang guard."""

from __future__ import annotations

import json
import signal
import threading

import pytest

from semi_core.cli import main

#: Seconds one bad input may take before it counts as a hang (they must fail up front).
HANG_SECONDS = 60


class Hang(Exception):
    """Raised by the alarm when a call runs past HANG_SECONDS."""


@pytest.fixture
def no_hang():
    """Fail (not hang) when the test body runs past HANG_SECONDS (main thread only)."""
    if threading.current_thread() is not threading.main_thread():  # pragma: no cover
        yield
        return

    def _alarm(signum, frame):
        raise Hang(f"no answer within {HANG_SECONDS} s")

    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(HANG_SECONDS)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)


def run_cli(capsys, argv):
    """``(rc, stdout, stderr)`` of ``semi-core argv`` run in-process."""
    capsys.readouterr()
    rc = main(list(argv))
    cap = capsys.readouterr()
    return rc, cap.out, cap.err


def assert_json_error(capsys, argv, kinds=None):
    """The contract under --json: exit 2, exactly one JSON object with error and kind."""
    rc, out, err = run_cli(capsys, [*argv, "--json"] if "--json" not in argv else argv)
    assert out.count("\n") == 1 and out.endswith("\n"), (argv, out, err)
    obj = json.loads(out)
    assert set(obj) >= {"error", "kind"}, obj
    assert obj["kind"] != "internal", (argv, obj)
    assert rc == 2, (argv, rc, obj)
    assert obj["error"].strip(), obj
    if kinds is not None:
        assert obj["kind"] in kinds, (argv, obj)
    assert "Traceback" not in out + err
    return obj

"""The suite's guard (tests/conftest.py): a ``KeyboardInterrupt`` a test raises itself is that
test's failure and the run goes on; a real SIGINT still stops the run."""

from __future__ import annotations

import shutil
import signal
import subprocess
import sys
from pathlib import Path

CASES = '''
import signal, threading, time
from concurrent.futures import ThreadPoolExecutor

def test_raises_itself():
    raise KeyboardInterrupt("from the test body")

def test_raised_in_a_worker_thread():
    def work():
        raise KeyboardInterrupt
    with ThreadPoolExecutor(1) as pool:
        pool.submit(work).result()

def test_runs_after():
    pass
'''

REAL = '''
import signal, time

def test_ctrl_c():
    signal.raise_signal(signal.SIGINT)
    time.sleep(5)

def test_never_reached():
    pass
'''


def _default_signals():
    # a suite started in the background inherits an ignored SIGINT: give the child the defaults
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)


def _run(tmp_path: Path, body: str) -> subprocess.CompletedProcess:
    shutil.copy(Path(__file__).with_name("conftest.py"), tmp_path / "conftest.py")
    (tmp_path / "test_cases.py").write_text(body)
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                           "-rA", str(tmp_path)], cwd=tmp_path, capture_output=True, text=True,
                          timeout=120, preexec_fn=_default_signals)


def test_a_tests_own_keyboard_interrupt_fails_that_test_only(tmp_path):
    res = _run(tmp_path, CASES)
    out = res.stdout
    assert "2 failed, 1 passed" in out, out[-3000:]
    assert "PASSED test_cases.py::test_runs_after" in out
    assert "escaped the test's body" in out
    assert res.returncode == 1


def test_a_real_sigint_still_stops_the_run(tmp_path):
    res = _run(tmp_path, REAL)
    out = res.stdout + res.stderr
    assert res.returncode == 2, out[-3000:]  # pytest's "interrupted"
    assert "KeyboardInterrupt" in out
    assert "PASSED test_cases.py::test_never_reached" not in out

"""The twin pass of ``make test`` re-runs the tests that reach a kernel: the trace that finds them.

``semi_core.kernels._trace.note_kernel_use`` creates the file named by
``SEMI_CORE_KERNEL_TRACE`` when a dispatcher runs; ``tests/conftest.py`` records, with
``--record-kernel-tests``, the tests whose body, fixtures or subprocesses did, and
``--only-kernel-tests`` selects them (plus the tests marked ``twin``).
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from semi_core.kernels import _trace, quadform_whitened

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def fresh_trace(monkeypatch, tmp_path):
    monkeypatch.setattr(_trace, "_traced", None)
    path = tmp_path / "hit"
    monkeypatch.setenv("SEMI_CORE_KERNEL_TRACE", str(path))
    return path


def test_a_dispatch_creates_the_trace_file(fresh_trace):
    assert not fresh_trace.exists()
    quadform_whitened(np.ones((3, 2)), np.eye(2), np.zeros(2), 0.0, 1.0)
    assert fresh_trace.exists() and fresh_trace.stat().st_size == 0


def test_numba_dispatchers_note_their_use(fresh_trace):
    from semi_core.kernels.witness import witness_values

    witness_values(np.zeros(4), np.ones(4), 1.0)
    assert fresh_trace.exists()


def test_the_trace_never_follows_a_link(fresh_trace, tmp_path):
    target = tmp_path / "elsewhere"
    fresh_trace.symlink_to(target)
    quadform_whitened(np.ones((3, 2)), np.eye(2), np.zeros(2), 0.0, 1.0)  # no error either
    assert not target.exists()


def test_a_subprocess_inherits_the_trace(fresh_trace):
    code = ("import numpy as np; from semi_core.kernels import quadform_whitened; "
            "quadform_whitened(np.ones((2, 1)), np.eye(1), np.zeros(1), 0.0, 1.0)")
    subprocess.run([sys.executable, "-c", code], check=True, env=dict(os.environ))
    assert fresh_trace.exists()


def test_record_then_select_runs_just_the_kernel_tests(tmp_path):
    kernel = "tests/kernels/test_quadform.py::test_empty_and_nan"
    other = "tests/test_result_display.py::test_mixin_defaults_for_a_new_result_type"
    listing = tmp_path / "kernel-tests.txt"
    env = {k: v for k, v in os.environ.items() if k != "SEMI_CORE_KERNEL_TRACE"}
    base = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", kernel, other]
    # FILE joined with "=", as the Makefile passes it: given apart, pytest reads an existing
    # FILE as a test path before the option is known, and the run stops with a usage error
    rec = subprocess.run([*base, f"--record-kernel-tests={listing}"], cwd=ROOT, env=env,
                         capture_output=True, text=True)
    assert rec.returncode == 0, rec.stdout + rec.stderr
    assert listing.read_text().split() == [kernel]
    sel = subprocess.run([*base, f"--only-kernel-tests={listing}"], cwd=ROOT,
                         env=dict(env, SEMI_CORE_FORCE_TWIN="1"), capture_output=True, text=True)
    assert sel.returncode == 0, sel.stdout + sel.stderr
    assert "1 passed, 1 deselected" in sel.stdout
    missing = subprocess.run([*base, f"--only-kernel-tests={tmp_path / 'none.txt'}"],
                             cwd=ROOT, env=env, capture_output=True, text=True)
    assert missing.returncode != 0 and "--only-kernel-tests" in missing.stdout + missing.stderr


def test_the_makefile_passes_the_lists_joined():
    """``make test`` runs twice in a row in one checkout: the list exists then, and an option
    value given apart would be read as a test path (a usage error)."""
    text = (ROOT / "Makefile").read_text()
    assert "--record-kernel-tests=$(KERNEL_TESTS)" in text
    assert "--only-kernel-tests=$(KERNEL_TESTS)" in text

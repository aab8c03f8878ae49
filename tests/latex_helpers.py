"""Compile a LaTeX document with pdflatex and check its log (shared by the LaTeX tests).

Without ``pdflatex`` the compile tests skip, unless ``SEMI_CORE_REQUIRE_LATEX=1`` (set by
``.ci/run``, which installs TeX Live): then a missing compiler is a failure.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from semi_core._latex import MAX_OVERFULL_PT, overfull_boxes


def compile_latex(tex: str, workdir: Path, name: str = "doc") -> str:
    """Compile ``tex``; fail on any LaTeX error or an overfull box over MAX_OVERFULL_PT.
    Returns the log."""
    if shutil.which("pdflatex") is None:
        if os.environ.get("SEMI_CORE_REQUIRE_LATEX", "") not in ("", "0"):
            pytest.fail("pdflatex is required (SEMI_CORE_REQUIRE_LATEX is set) but not installed")
        pytest.skip("pdflatex not installed")
    (workdir / f"{name}.tex").write_text(tex)
    proc = subprocess.run(["pdflatex", "-interaction=nonstopmode", "-halt-on-error",
                           f"{name}.tex"], cwd=workdir, capture_output=True, timeout=300)
    log = (workdir / f"{name}.log").read_text(errors="replace")
    assert proc.returncode == 0, log[-3000:]
    assert (workdir / f"{name}.pdf").is_file()
    wide = [w for w in overfull_boxes(log) if w > MAX_OVERFULL_PT]
    assert not wide, f"overfull boxes wider than {MAX_OVERFULL_PT} pt: {sorted(wide)}"
    return log

"""Source files hold printable text only: a control character in a docstring (a ``\\t`` or
``\\b`` turned into TAB or BACKSPACE when a LaTeX docstring lost its ``r`` prefix) breaks the
formula it sits in and the documentation build."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def test_no_control_characters_in_sources():
    bad = []
    for folder in ("semi_core", "tests", "analysis", "benchmarks", "docs"):
        for path in sorted((ROOT / folder).rglob("*")):
            if path.suffix not in (".py", ".pyx", ".md", ".rst") or "_build" in path.parts:
                continue
            for i, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                if CONTROL.search(line):
                    bad.append(f"{path.relative_to(ROOT)}:{i}")
    assert not bad, f"control characters at {bad}"


def test_no_control_characters_in_evaluated_docstrings():
    # The escape itself is printable source text: ``:math:`\varepsilon``` in a docstring
    # without its ``r`` prefix reads as a vertical tab only once Python evaluates it.
    import ast

    bad = []
    for folder in ("semi_core", "analysis", "benchmarks"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            tree = ast.parse(path.read_text(), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef
                              | ast.AsyncFunctionDef):
                    doc = ast.get_docstring(node, clean=False)
                    if doc and re.search(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]", doc):
                        bad.append(f"{path.relative_to(ROOT)}:{getattr(node, 'lineno', 1)}")
    assert not bad, f"docstrings that evaluate to control characters (missing r prefix?): {bad}"

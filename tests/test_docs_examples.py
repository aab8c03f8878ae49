"""The Python examples of the documentation run as printed (docs/*.rst code blocks)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[1] / "docs"
BLOCK = re.compile(r"\.\. code-block:: python\n\n((?:    .*\n|[ \t]*\n)+)")


def _blocks():
    for path in sorted(DOCS.rglob("*.rst")):
        for k, m in enumerate(BLOCK.finditer(path.read_text())):
            code = "\n".join(line[4:] for line in m.group(1).splitlines())
            yield pytest.param(code, id=f"{path.relative_to(DOCS)}:{k}")


@pytest.mark.parametrize("code", list(_blocks()))
def test_docs_example_runs(code, capsys):
    exec(compile(code, "<docs>", "exec"), {})
    assert capsys.readouterr().out.strip(), "the example prints its result"

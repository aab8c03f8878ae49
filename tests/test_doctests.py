"""The examples in the package's docstrings run as doctests (fast tier).

Every module of ``semi_core`` whose source holds a ``>>>`` example is collected; its examples
run with :mod:`doctest` (``ELLIPSIS`` and ``NORMALIZE_WHITESPACE``), in a fresh namespace per
docstring. Examples print rounded numbers from fixed seeds, so they do not depend on the
platform or on the compiled kernel vs its NumPy twin; an example that cannot be run quickly
is marked ``# doctest: +SKIP`` in its docstring.
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

import semi_core

PACKAGE = Path(semi_core.__file__).resolve().parent

#: Optional dependencies: a module that needs a missing one is skipped, not failed.
OPTIONAL = {"torch", "opacus", "dask", "distributed", "sklearn", "matplotlib", "pandas",
            "dp_accounting"}

FLAGS = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE


def modules_with_examples() -> list[str]:
    """Dotted names of the package's modules whose source holds a ``>>>`` example."""
    out = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if ">>>" not in path.read_text(encoding="utf-8"):
            continue
        parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        out.append(".".join(parts))
    return out


MODULES = modules_with_examples()


def _import(name: str):
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as exc:  # an optional extra that is not installed
        if (exc.name or "").split(".")[0] in OPTIONAL:
            pytest.skip(f"{name} needs {exc.name}")
        raise


def _tests(name: str) -> list[doctest.DocTest]:
    mod = _import(name)
    return [t for t in doctest.DocTestFinder(exclude_empty=True).find(mod, name) if t.examples]


def test_examples_are_collected():
    """The collection finds the examples (a walk that finds nothing would pass vacuously)."""
    assert "semi_core.audit.bounds" in MODULES and "semi_core.game.engine" in MODULES
    assert sum(len(t.examples) for t in _tests("semi_core.audit.bounds")) >= 5


def test_a_wrong_example_fails():
    """The runner reports a wrong expected output (the check below can fail)."""
    bad = doctest.DocTestParser().get_doctest(">>> 1 + 1\n3\n", {}, "bad", None, 0)
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    runner.run(bad, out=lambda s: None)
    assert runner.failures == 1


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    tests = _tests(name)
    assert tests, f"{name} has '>>>' in its source but no docstring example was found"
    runner = doctest.DocTestRunner(optionflags=FLAGS)
    report: list[str] = []
    for t in tests:
        runner.run(t, out=report.append)
    result = runner.summarize(verbose=False)
    assert result.failed == 0, "".join(report)

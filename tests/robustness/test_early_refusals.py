"""Bounded work is refused from the arguments alone, before the heavy imports.

Each case runs the CLI in a fresh interpreter whose import system records (and blocks) every
attempt to import torch, SymPy or the claims registry: the refusal must come back as one JSON
error without any such attempt (no timing assertion: the import is what took the time).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

_CHILD = r"""
import sys, io, contextlib, json, importlib.abc
ATTEMPTS = []
HEAVY = ("torch", "sympy", "semi_core.claims", "semi_core.sgd.audit",
         "semi_core.attacks.whitebox")
class _Block(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if any(name == h or name.startswith(h + ".") for h in HEAVY):
            ATTEMPTS.append(name)
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
        return None
sys.meta_path.insert(0, _Block())
from semi_core.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
    try:
        rc = main(json.loads(sys.argv[1]))
    except SystemExit as exc:
        rc = exc.code
print(json.dumps({"rc": rc, "out": out.getvalue(), "attempts": ATTEMPTS}))
"""


def _run(argv):
    proc = subprocess.run([sys.executable, "-c", _CHILD, json.dumps(argv)], capture_output=True,
                          text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    return res["rc"], json.loads(res["out"]), res["attempts"]


@pytest.mark.parametrize("argv, kind, match", [
    (["audit-dpsgd", "--tau", "all", "--steps", "1000000"], "invalid_argument",
     "--steps * --batch-size must be at most 700"),
    (["audit-dpsgd", "--tau", "all", "--rounds", "100000000000"], "resource", "audit-dpsgd"),
    (["attack", "--models", "10000000"], "resource", "attack experiment"),
    (["attack", "--attacks", "iha,nope"], "invalid_argument", "--attacks must be drawn"),
    (["leakage", "--simulate", "1000000000000"], "resource", "leakage --simulate"),
])
def test_refused_before_heavy_imports(argv, kind, match):
    rc, out, attempts = _run([*argv, "--json"])
    assert rc == 2 and out["kind"] == kind and match in out["error"]
    assert attempts == []


def test_verify_refuses_a_fifo_before_the_claims_registry(tmp_path):
    fifo = tmp_path / "errata.md"
    os.mkfifo(fifo)
    rc, out, attempts = _run(["verify", "--errata", str(fifo), "--json"])
    assert rc == 2 and out["kind"] == "bad_path" and "FIFO" in out["error"]
    assert attempts == []


def test_verify_paper_choices_without_the_registry():
    """``verify --paper`` lists the seeds read from the sources: the same as the registry's."""
    from semi_core._seeds import claim_modules
    from semi_core.claims import SEED_MODULES

    assert claim_modules() == SEED_MODULES

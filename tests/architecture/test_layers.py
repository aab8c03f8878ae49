"""The house's structure: layer contracts (import-linter) and no import circles.

Both checks can fail: a lower layer importing a higher one breaks the contract in
``pyproject.toml`` (``[tool.importlinter]``); two modules importing each other (directly or
through a chain, at module level or inside a function) form a circle.
"""

from __future__ import annotations

import pytest

grimp = pytest.importorskip("grimp")


def _graph():
    return grimp.build_graph("semi_core", include_external_packages=False)


def _cycles(graph) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    mods = sorted(graph.modules)
    succ = {m: sorted(graph.find_modules_directly_imported_by(m)) for m in mods}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on, stack, out = set(), [], []
    counter = 0
    for root in mods:
        if root in index:
            continue
        work = [(root, iter(succ[root]))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            node, it = work[-1]
            nxt = next(it, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = counter
                    counter += 1
                    stack.append(nxt)
                    on.add(nxt)
                    work.append((nxt, iter(succ.get(nxt, []))))
                elif nxt in on:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == node:
                        break
                if len(comp) > 1:
                    out.append(sorted(comp))
    return out


def test_no_import_circles():
    """No strongly connected component with more than one module (a package's ``__init__``
    that a submodule imports back counts too)."""
    bad = _cycles(_graph())
    assert not bad, f"import circles: {bad}"


def test_cycle_finder_can_fail():
    class Fake:
        modules = {"a", "b", "c"}

        @staticmethod
        def find_modules_directly_imported_by(m):
            return {"a": {"b"}, "b": {"a"}, "c": set()}[m]

    assert _cycles(Fake()) == [["a", "b"]]


def test_layer_contracts_kept():
    import shutil
    import subprocess
    import sys
    from pathlib import Path

    exe = Path(sys.executable).with_name("lint-imports")
    exe = str(exe) if exe.exists() else shutil.which("lint-imports")
    if exe is None:
        pytest.skip("import-linter is not installed")
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run([exe, "--no-cache"], cwd=root, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]

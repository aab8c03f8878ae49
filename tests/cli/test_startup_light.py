"""What the light commands must not import (their start-up is the import floor's business).

Each command runs in a fresh interpreter (``sys.modules`` of the test process already holds
everything); the child lists which of the heavy modules it loaded. A later eager import in one
of the packages these commands touch (``semi_core.audit``, ``semi_core.audit.sequential``,
``semi_core.mechanisms.zoo``, the kernels' twins, the audit report section) fails here, naming
the module. A small ``seq-audit`` runs the witness on its NumPy twin (the size rule of
:func:`semi_core.kernels.witness.choose_witness_backend`), so it loads no Numba either.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Heavy modules a light command has no use for (import CPU on the 2-core CI machine: numba
# ~0.2-0.3 s, sympy ~0.45 s, scipy.optimize ~0.15 s, scipy.linalg ~0.06 s, scipy.stats ~1 s).
_HEAVY = ("numba", "sympy", "torch", "scipy.optimize", "scipy.stats", "scipy.linalg",
          "scipy.integrate", "dask", "pandas", "matplotlib")

_CHILD = r"""
import contextlib, io, json, sys
from semi_core.cli import main
out, err = io.StringIO(), io.StringIO()
with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
    try:
        rc = main(ARGV)
    except SystemExit as exc:
        rc = exc.code
print(json.dumps({"rc": rc, "err": err.getvalue()[-800:],
                  "loaded": sorted(m for m in HEAVY if m in sys.modules),
                  "semi": sorted(m for m in sys.modules if m.startswith("semi_core."))}))
"""


def _loaded(argv: list[str]) -> dict:
    code = _CHILD.replace("ARGV", repr(argv)).replace("HEAVY", repr(_HEAVY))
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["rc"] == 0, res["err"]
    return res


@pytest.mark.parametrize("argv, allowed", [
    (["audit-game", "--help"], ()),
    (["audit-game", "--rounds", "200", "--no-progress", "--json"], ()),
    (["power", "--T", "10", "--json"], ()),
    # 100 steps: the witness's NumPy twin (choose_witness_backend), no Numba
    (["seq-audit", "--claimed-epsilon", "0.01", "--max-obs", "100", "--no-progress",
      "--json"], ()),
], ids=["audit-game --help", "audit-game --rounds 200", "power --T 10", "seq-audit"])
def test_light_command_loads_no_heavy_module(argv, allowed):
    from semi_core.kernels._jit import use_twins

    if use_twins() and argv[:2] == ["audit-game", "--rounds"]:
        # the kernel's NumPy twin (the twin pass of the suite) solves its triangular systems
        # with scipy.linalg; the compiled kernel does not
        allowed = (*allowed, "scipy.linalg")
    res = _loaded(argv)
    extra = [m for m in res["loaded"] if m not in allowed]
    assert extra == [], f"`semi-core {' '.join(argv)}` imported {extra}"


def test_audit_game_help_loads_no_auditor():
    """``audit-game --help`` reads the method names from ``semi_core.audit._methods``: no
    bounds, and the package ``semi_core.audit`` stays lazy (no one-run, ROC, score auditor or
    report modules)."""
    res = _loaded(["audit-game", "--help"])
    eager = [m for m in res["semi"] if m in (
        "semi_core.audit.bounds", "semi_core.audit.anytime_one_run", "semi_core.audit.roc",
        "semi_core.audit.score_auditor",
        "semi_core.audit.report", "semi_core.audit.one_run", "semi_core.audit.one_run_fdp",
        "semi_core.audit.games", "semi_core.game.play")]
    assert eager == [], f"audit-game --help imported {eager}"


def test_seq_audit_loads_only_the_submodules_it_runs():
    """The MMD audit loads neither SciPy's optimiser (the zoo solves its one root lazily) nor
    the bounds or ROC modules (``semi_core.audit`` no longer imports them eagerly)."""
    res = _loaded(["seq-audit", "--claimed-epsilon", "0.01", "--max-obs", "100",
                   "--no-progress", "--json"])
    assert "scipy.optimize" not in res["loaded"]
    assert "semi_core.audit.bounds" not in res["semi"]  # the package is not eager any more
    assert "semi_core.audit.roc" not in res["semi"]


def test_lazy_packages_keep_their_public_names():
    """``semi_core.audit`` and ``semi_core.audit.sequential`` resolve every name of ``__all__``
    (PEP 562) to the object of its defining module; unknown names raise AttributeError; the
    ``rbf`` function (not the submodule of the same name) is the package's ``rbf``."""
    import importlib

    import semi_core.audit as audit
    import semi_core.audit.sequential as seq

    for pkg in (audit, seq):
        for name in pkg.__all__:
            obj = getattr(pkg, name)
            home = pkg._HOMES.get(name)
            if home is not None:
                mod = importlib.import_module(home, pkg.__name__)  # relative: ".tester"
                assert obj is getattr(mod, name), (pkg.__name__, name)
        assert set(pkg.__all__) <= set(dir(pkg))
        with pytest.raises(AttributeError, match="no attribute 'no_such_name'"):
            pkg.no_such_name  # noqa: B018
    from semi_core.audit.sequential import rbf
    from semi_core.audit.sequential.rbf import rbf as rbf_fn

    assert rbf is rbf_fn and callable(rbf)
    assert audit.roc.__name__ == "semi_core.audit.roc"  # a submodule, as when it was eager

"""The generated NumPy forms of the per-datum leakage derivations (semi_core/stats/_leakage_forms.py).

Three legs, as for every formula: the SymPy derivation (semi_core/symbolic/leakage.py), its
printed NumPy form (checked here: regeneration gives the checked-in text, and the printed form
equals the lambdified derivation on a grid including extreme arguments), and the Monte Carlo
tests of the leakage functions (tests/attacks/test_leakage*.py, tests/mechanisms/test_per_datum.py).
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from semi_core.stats import _leakage_forms as F
from semi_core.symbolic import _leakage_codegen as G
from semi_core.symbolic import leakage as S

# Admissible values of each derivation symbol (its SymPy assumptions), extremes included:
# scores up to 1e6 (Phi arguments ~500), FPR down to 1e-300, probabilities 1e-9 from the ends.
GRID = {
    "m": [0.0, 1e-12, 1e-3, 0.5, 1.0, 4.0, 30.0, 1e3, 1e6],
    "alpha": [1e-300, 1e-12, 1e-3, 0.05, 0.5, 0.95, 1 - 1e-12],
    "rho": [1e-6, 0.01, 0.3, 1.0],
    "m_scal": [-30.0, -1.0, 0.0, 1e-8, 2.0, 30.0, 1e6],
    "m_targ": [1e-12, 0.1, 1.0, 40.0, 1e6],
    "lambda_ref": [1e-6, 0.1, 1.0, 10.0, 1e6],
    "p_j": [1e-9, 0.1, 0.5, 0.9, 1 - 1e-9],
    "delta_j": [-1e3, -1.0, 0.0, 0.3, 50.0],
    "sigma_j2": [1e-6, 1.0, 1e4],
    "gamma_j2": [0.0, 0.5, 1e3],
    "kappa_3j": [-2.0, 0.0, 1.5],
    "n": [2.0, 50.0, 1e6],
    "z_q": [-8.0, -1.0, 0.0, 2.3, 8.0],
    "lambda_3": [-1.0, 0.0, 0.3],
    "u": [-40.0, -3.0, 0.0, 1.0, 40.0],
    "r_j2": [1e-12, 1e-3, 0.5, 1 - 1e-9],
}

#: Relative tolerance between the printed form and the lambdified derivation. Both evaluate the
#: same stable expression with the same NumPy/SciPy functions, so they agree to rounding.
RTOL = 1e-12


@pytest.fixture(scope="module")
def derivations():
    return {name: getattr(S, name)() for name in G.FORMS}


def test_generated_module_is_current():
    """A changed derivation that was not regenerated fails here: the printer's text must equal
    the checked-in module byte for byte (fix: ``python -m semi_core.symbolic._leakage_codegen``)."""
    assert Path(F.__file__).read_text() == G.render(), (
        f"semi_core/stats/_leakage_forms.py is stale: run `{G.COMMAND}`")


def test_every_form_is_generated_and_exported():
    assert list(F.__all__) == list(G.FORMS)
    assert all(callable(getattr(F, name)) for name in G.FORMS)


@pytest.mark.parametrize("name", G.FORMS)
def test_form_equals_lambdified_derivation(name, derivations):
    """Each printed form equals ``Derivation.lambdify()`` on the grid (relative ``RTOL``), is
    finite wherever the derivation is, and raises no overflow (the printed code keeps the
    stable rewrites: tail differences of Phi through log_ndtr, log1p)."""
    der = derivations[name]
    args = [s.name for s in der.symbols]
    assert args == list(F.__dict__[name].__code__.co_varnames[:len(args)])
    pts = np.array(list(itertools.product(*(GRID[a] for a in args))), dtype=float).T
    ref = np.broadcast_to(np.asarray(der.lambdify()(*pts), dtype=float), pts.shape[1:])
    with np.errstate(over="raise"):
        got = np.broadcast_to(np.asarray(getattr(F, name)(*pts), dtype=float), pts.shape[1:])
    assert np.isfinite(ref).all(), f"{name}: the derivation is not finite on the grid"
    np.testing.assert_allclose(got, ref, rtol=RTOL, atol=0.0, err_msg=name)


def test_extreme_leakage_tails_keep_relative_accuracy():
    """Deep in the tail the printed leakage keeps relative accuracy (no 1 - Phi cancellation):
    at m = 1e-20 the leakage is sqrt(m) phi(0) to first order."""
    m = 1e-20
    want = np.sqrt(m) / np.sqrt(2 * np.pi)
    assert float(F.pdl_leakage(m)) == pytest.approx(want, rel=1e-9)
    # sub-sampled: rho [2 Phi(s/2) - 1] with s = sqrt(m / rho)
    assert float(F.pdl_sub_leakage(m, 0.25)) == pytest.approx(0.25 * 2 * want, rel=1e-9)


_CHILD = r"""
import io, contextlib, json, sys
import semi_core.stats.leakage
after_import = "sympy" in sys.modules
from semi_core.cli import main
out = io.StringIO()
with contextlib.redirect_stdout(out):
    rc = main(ARGV)
print(json.dumps({"rc": rc, "import": after_import, "run": "sympy" in sys.modules,
                  "payload": json.loads(out.getvalue())}))
"""


@pytest.mark.parametrize("argv", [
    ["leakage", "--d", "100", "--n", "50", "--json"],
    ["leakage", "--d", "60", "--n", "40", "--subsample", "0.5", "--noise", "0.3", "--json"],
    ["leakage", "--d", "60", "--n", "40", "--game", "average", "--json"],
])
def test_leakage_command_never_imports_sympy(argv):
    """The numeric layer and the ``leakage`` command's main path run without SymPy."""
    proc = subprocess.run([sys.executable, "-c", _CHILD.replace("ARGV", repr(argv))],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    res = json.loads(proc.stdout.strip().splitlines()[-1])
    assert res["rc"] == 0
    assert not res["import"], "importing semi_core.stats.leakage imported sympy"
    assert not res["run"], f"semi-core {' '.join(argv)} imported sympy"
    assert 0.0 < res["payload"]["leakage"] < 1.0

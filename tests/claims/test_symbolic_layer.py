"""One SymPy stack: the claims take Phi/Phinv, lambdify and their derived forms from the
symbolic layer (``semi_core.symbolic``), never from a second copy."""

from __future__ import annotations

import ast
from pathlib import Path

import sympy as sp

from semi_core.claims import get_claim

ROOT = Path(__file__).resolve().parents[2]


CLAIMS_DIR = ROOT / "semi_core" / "claims"

#: Claim modules that still call ``sympy.lambdify`` directly on forms without Phi/Phinv (plain
#: NumPy arithmetic: both give the same function; ``appendix_c.py`` evaluates Lemma C.8's
#: polynomial remainders with mpmath at 50 digits, which the NumPy layer cannot); every other
#: module goes through ``semi_core.claims._core.lambdify`` (the symbolic layer's
#: ``numeric_lambdify``).
OWN_LAMBDIFY = {"semi_sequential_mi/qualitative.py", "sequential_dp_auditing/algorithms.py",
                "sequential_dp_auditing/system.py", "per_datum_leakage/appendix_c.py"}


def test_claims_use_the_symbolic_layer():
    """Phi/Phinv and lambdify are the symbolic layer's; no second SymPy stack in claims/."""
    import semi_core.claims._core as core
    import semi_core.symbolic as symbolic

    assert core.Phi is symbolic.Phi and core.Phinv is symbolic.Phinv
    paths = sorted(CLAIMS_DIR.rglob("*.py"))
    assert len(paths) > 15 and (CLAIMS_DIR / "per_datum_leakage" / "formulas.py") in paths
    for path in paths:
        name = path.relative_to(CLAIMS_DIR).as_posix()
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef):
                bases = {ast.unparse(b) for b in node.bases}
                assert not bases & {"sp.Function", "Function"}, f"{name}: own {node.name}"
            if (isinstance(node, ast.Attribute) and node.attr == "lambdify"
                    and name not in OWN_LAMBDIFY):
                assert ast.unparse(node.value) not in {"sp", "sympy"}, f"{name}: sp.lambdify"


def test_derived_forms_are_the_symbolic_derivations():
    """The derived/corrected forms of the SeMI claims are the symbolic layer's derivations."""
    from semi_core.claims._core import derived_form
    from semi_core.claims.semi_sequential_mi.formulas import X, _derived_loglr_1d
    from semi_core.symbolic import get_derivation
    from semi_core.symbolic._display import plain

    assert _derived_loglr_1d() == get_derivation("em_log_lr_1d").expr.subs(
        get_derivation("em_log_lr_1d").symbols[0], X)
    lem = get_claim("semi_sequential_mi:lemB.5")
    n, m, d = (sp.Symbol(k, positive=True) for k in ("n", "m", "d"))
    g = sp.Symbol("gamma", real=True)
    ours = derived_form("em_R2", {"m": m, "d": d})
    assert sp.simplify(plain(lem.corrected["R2"]) - ours) == 0
    assert lem.corrected["R2"].free_symbols == {n, m, d, g}
    roots = get_claim("semi_sequential_mi:appA.5.roots").corrected
    T = sp.Symbol("T", positive=True)
    assert sp.simplify(plain(roots["W_hi"]) - get_derivation("fo_root_hi_1d").expr.subs(
        sp.Symbol("N_T", positive=True), n * T)) == 0

r"""Display forms: how a person writes a derived formula, kept as an unevaluated SymPy tree.

SymPy's canonical trees print expanded and lexically ordered (``- \mu + \bar{X}_{\tau}``,
unfactored sums). A display form is built by hand from the pieces below with
``evaluate=False`` so that its structure (collected terms, factored coefficients, deviations
``\bar X_\tau - \mu``) survives, and it is printed by :class:`DisplayPrinter`, which keeps the
order of every deliberately built sum and product. Its *value* is still an ordinary SymPy
expression: :meth:`semi_core.symbolic._core.Derivation.display_matches` proves
``display - expr == 0`` symbolically, so the printed form cannot drift from the derivation.
"""

from __future__ import annotations

import sympy as sp
from sympy.printing.latex import LatexPrinter

__all__ = ["DisplayPrinter", "dev", "add", "mul", "frac", "half", "sq", "root", "neg",
           "display_latex"]

_U = {"evaluate": False}

# Sums and products built here, printed in the order given (compared by structure; SymPy's
# canonical order of ``x - mu`` may equal the hand-built one yet print as ``- mu + x``).
_ORDERED: set[sp.Basic] = set()


def _keep(expr: sp.Expr) -> sp.Expr:
    if isinstance(expr, sp.Add | sp.Mul):
        _ORDERED.add(expr)
    return expr


def dev(a, b) -> sp.Expr:
    r"""The deviation :math:`a - b`, printed in that order (e.g. ``\bar{X}_{\tau} - \mu``)."""
    return _keep(sp.Add(a, neg(b), **_U))


def add(*terms) -> sp.Expr:
    """A sum printed in the given order."""
    return _keep(sp.Add(*terms, **_U))


def mul(*factors) -> sp.Expr:
    """A product printed in the given order."""
    return _keep(sp.Mul(*factors, **_U))


def neg(x) -> sp.Expr:
    """``-x`` without distributing the sign."""
    return _keep(sp.Mul(sp.Integer(-1), x, **_U))


def frac(num, den) -> sp.Expr:
    r"""``\frac{num}{den}`` with ``num`` and ``den`` kept as written."""
    if num == 1:
        return sp.Pow(den, -1, **_U)
    return _keep(sp.Mul(num, sp.Pow(den, -1, **_U), **_U))


def half() -> sp.Expr:
    r""":math:`\tfrac12` as a coefficient."""
    return sp.Rational(1, 2)


def sq(x) -> sp.Expr:
    """``x**2`` unevaluated (keeps a deviation squared, not expanded)."""
    return sp.Pow(x, 2, **_U)


def root(x) -> sp.Expr:
    r"""``\sqrt{x}`` unevaluated (no splitting of products under the root)."""
    return sp.Pow(x, sp.Rational(1, 2), **_U)


def _canonical(expr) -> bool:
    """Whether an Add/Mul was not built here (then print it the usual way)."""
    return expr not in _ORDERED


class DisplayPrinter(LatexPrinter):
    """LaTeX printer that keeps the order of hand-built (non-canonical) sums and products.

    Canonical sub-expressions (e.g. ``n - 1`` inside a coefficient) print as SymPy prints them.
    """

    def _print_Add(self, expr, order=None):
        return self._with_order(expr, lambda: super(DisplayPrinter, self)._print_Add(expr))

    def _print_Mul(self, expr):
        return self._with_order(expr, lambda: super(DisplayPrinter, self)._print_Mul(expr))

    def _with_order(self, expr, fn):
        saved = self._settings["order"]
        self._settings["order"] = None if _canonical(expr) else "none"
        try:
            return fn()
        finally:
            self._settings["order"] = saved


def display_latex(expr, symbol_names: dict | None = None) -> str:
    """LaTeX of a display form (deterministic)."""
    return DisplayPrinter({"symbol_names": symbol_names or {}}).doprint(expr)

r"""Display forms: how a person writes a derived formula, kept as an unevaluated SymPy tree.

SymPy's canonical trees print expanded and lexically ordered (``- \mu + \bar{X}_{\tau}``,
unfactored sums). A display form is built by hand from the pieces below with
``evaluate=False`` so that its structure (collected terms, factored coefficients, deviations
``\bar X_\tau - \mu``) survives, and it is printed by :class:`DisplayPrinter`, which keeps the
order of every hand-built sum and product (:class:`OrderedAdd`, :class:`OrderedMul`: types
of their own, so they never alias a canonical node). :func:`plain` gives the ordinary SymPy
tree of the same value: :meth:`semi_core.symbolic._core.Derivation.display_matches` proves
``plain(display) - expr == 0`` symbolically, so the printed form cannot drift from the
derivation.
"""

from __future__ import annotations

import sympy as sp
from sympy.printing.latex import LatexPrinter

__all__ = ["DisplayPrinter", "OrderedAdd", "OrderedMul", "plain", "replace_symbols", "dev", "add", "mul", "frac",
           "half", "sq", "root", "neg", "display_latex"]

_U = {"evaluate": False}


class OrderedAdd(sp.Add):
    """A hand-built sum: printed in the order its terms were given."""


class OrderedMul(sp.Mul):
    """A hand-built product: printed in the order its factors were given."""


def plain(expr):
    """The same value as an ordinary (canonical, evaluated) SymPy tree: for proofs and numerics."""
    if not getattr(expr, "args", ()):
        return expr
    args = [plain(a) for a in expr.args]
    if isinstance(expr, sp.Add):
        return sp.Add(*args)
    if isinstance(expr, sp.Mul):
        return sp.Mul(*args)
    return expr.func(*args)


def replace_symbols(expr, table):
    """``expr.xreplace(table)`` that keeps a display form's structure (no re-evaluation)."""
    if expr in table:
        return table[expr]
    if not getattr(expr, "args", ()) or isinstance(expr, sp.Symbol):
        return expr
    args = [replace_symbols(a, table) for a in expr.args]
    if isinstance(expr, sp.Add | sp.Mul | sp.Pow):
        return type(expr)(*args, evaluate=False)
    return expr.func(*args)


def dev(a, b) -> sp.Expr:
    r"""The deviation :math:`a - b`, printed in that order (e.g. ``\bar{X}_{\tau} - \mu``)."""
    return OrderedAdd(a, neg(b), **_U)


def add(*terms) -> sp.Expr:
    """A sum printed in the given order."""
    return OrderedAdd(*terms, **_U)


def mul(*factors) -> sp.Expr:
    """A product printed in the given order."""
    return OrderedMul(*factors, **_U)


def neg(x) -> sp.Expr:
    """``-x`` without distributing the sign."""
    return OrderedMul(sp.Integer(-1), x, **_U)


def frac(num, den) -> sp.Expr:
    r"""``\frac{num}{den}`` with ``num`` and ``den`` kept as written."""
    if num == 1:
        return sp.Pow(den, -1, **_U)
    return OrderedMul(num, sp.Pow(den, -1, **_U), **_U)


def half() -> sp.Expr:
    r""":math:`\tfrac12` as a coefficient."""
    return sp.Rational(1, 2)


def sq(x) -> sp.Expr:
    """``x**2`` unevaluated (keeps a deviation squared, not expanded)."""
    return sp.Pow(x, 2, **_U)


def root(x) -> sp.Expr:
    r"""``\sqrt{x}`` unevaluated (no splitting of products under the root)."""
    return sp.Pow(x, sp.Rational(1, 2), **_U)


class DisplayPrinter(LatexPrinter):
    """LaTeX printer that keeps the order of hand-built sums and products.

    :class:`OrderedAdd` / :class:`OrderedMul` print in the order given; every other node
    (e.g. ``n - 1`` inside a coefficient) prints exactly as :func:`sympy.latex` prints it.
    """

    def _print_OrderedAdd(self, expr, order=None):
        return self._with_order("none", super()._print_Add, expr)

    def _print_OrderedMul(self, expr):
        return self._with_order("none", super()._print_Mul, expr)

    def _print_Add(self, expr, order=None):
        return self._with_order(None, super()._print_Add, expr)

    def _print_Mul(self, expr):
        return self._with_order(None, super()._print_Mul, expr)

    def _with_order(self, order, fn, expr):
        saved = self._settings["order"]
        self._settings["order"] = order
        try:
            return fn(expr)
        finally:
            self._settings["order"] = saved


def display_latex(expr, symbol_names: dict | None = None) -> str:
    """LaTeX of a display form (deterministic)."""
    return DisplayPrinter({"symbol_names": symbol_names or {}}).doprint(expr)

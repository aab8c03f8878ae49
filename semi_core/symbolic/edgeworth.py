r"""Edgeworth expansion of a standardised mean to :math:`O(1/n)` (per-datum leakage seed, App. C).

For i.i.d. data with standardised cumulants :math:`\lambda_3, \lambda_4`, the cumulant generating
function of :math:`S_n = \sqrt n(\bar X - \mu)/\sigma` is

.. math::

    \log \mathbb E\, e^{itS_n} = -\tfrac{t^2}{2} + \frac{\lambda_3 (it)^3}{6\sqrt n}
        + \frac{\lambda_4 (it)^4}{24 n} + O(n^{-3/2}).

Expanding the exponential to order :math:`1/n` and inverting
:math:`(it)^k e^{-t^2/2} \mapsto (-\mathrm d/\mathrm dx)^k \varphi(x)` gives the density
:math:`\varphi(x)\,[1 + h_1(x)/\sqrt n + h_2(x)/n]`; its logarithm, expanded in
:math:`e = 1/\sqrt n`, is ``edgeworth_log_density``. The Hermite polynomials are derived as
:math:`(-1)^k \varphi^{(k)}/\varphi`, not typed in.
"""

from __future__ import annotations

import functools

import sympy as sp

from ._core import LATEX_NAMES, Derivation, register
from ._display import add, frac, mul, neg, sq

__all__ = ["edgeworth_terms", "edgeworth_h1", "edgeworth_h2", "edgeworth_log_density",
           "EXPECTED_DIFFERENT"]

#: Derivations whose seed form is misprinted (see the claims ``per_datum_leakage:appC.h1`` and
#: ``per_datum_leakage:appC.eq48``).
EXPECTED_DIFFERENT = {"edgeworth_h1", "edgeworth_log_density"}

x = sp.Symbol("x", real=True)
lam3 = sp.Symbol("lambda_3", real=True)
lam4 = sp.Symbol("lambda_4", real=True)
h1 = sp.Symbol("h_1", real=True)
h2 = sp.Symbol("h_2", real=True)
n = sp.Symbol("n", positive=True)
LATEX_NAMES.update({"h_1": r"h_{1}", "h_2": r"h_{2}"})

_SRC = "per_datum_leakage App. C.3, Lemma C.7"


@functools.cache
def edgeworth_terms() -> tuple[sp.Expr, sp.Expr]:
    """``(h1, h2)`` of the density expansion, derived from the cumulant series.

    Returns
    -------
    h1, h2 : sympy.Expr
        First- and second-order correction polynomials in x (times the normal density).
    """
    u, e = sp.symbols("u e")  # u = i t, e = 1/sqrt(n)
    series = sp.series(sp.exp(lam3 * u**3 * e / 6 + lam4 * u**4 * e**2 / 24), e, 0, 3).removeO()
    phi = sp.exp(-x**2 / 2) / sp.sqrt(2 * sp.pi)

    def invert(poly):
        poly = sp.Poly(sp.expand(poly), u)
        out = 0
        for (k,), coef in poly.terms():
            out += coef * (-1) ** k * sp.diff(phi, x, k) / phi
        return sp.expand(sp.simplify(out))

    return invert(series.coeff(e, 1)), invert(series.coeff(e, 2))


def _hermite(k: int) -> sp.Expr:
    """Probabilists' Hermite polynomial He_k as written (display; highest power first)."""
    coeffs = sp.Poly(sp.hermite_prob(k, x), x).all_coeffs()
    terms = []
    for power, c in zip(range(k, -1, -1), coeffs, strict=True):
        if c == 0:
            continue
        mono = x**power if power else sp.Integer(1)
        term = mono if abs(c) == 1 and power else mul(abs(c), mono) if power else abs(c)
        terms.append(term if c > 0 else neg(term))
    return add(*terms)


@register("edgeworth_h1")
def edgeworth_h1() -> Derivation:
    r"""First Edgeworth term :math:`h_1(x) = \lambda_3 \mathrm{He}_3(x)/6`.

    Returns
    -------
    Derivation
        ``edgeworth_h1`` (per_datum_leakage App. C.3, Lemma C.7, Eq. (38)): the expression in
        :math:`x, \lambda_{3}` (the argument order of ``lambdify``); differs from the seed's printed
        form (see its note). Holds when: finite fourth moment; non-lattice data.
    """
    return Derivation(
        name="edgeworth_h1",
        expr=edgeworth_terms()[0],
        symbols=(x, lam3),
        source=f"{_SRC}, Eq. (38)",
        assumptions=("finite fourth moment", "non-lattice data"),
        seed_form=lam3 * (x**3 - 3 * x),
        note="SEED ERRATUM: the seed's h_1 omits the factor 1/6; see claim "
             "per_datum_leakage:appC.h1 (`semi-core verify`).",
        lhs=r"h_{1}(x)",
        display=frac(mul(lam3, _hermite(3)), 6),
    )


@register("edgeworth_h2")
def edgeworth_h2() -> Derivation:
    r"""Second Edgeworth term :math:`\lambda_3^2\mathrm{He}_6/72 + \lambda_4\mathrm{He}_4/24`.

    Returns
    -------
    Derivation
        ``edgeworth_h2`` (per_datum_leakage App. C.3, Lemma C.7, Eq. (38)): the expression in
        :math:`x, \lambda_{3}, \lambda_{4}` (the argument order of ``lambdify``); proven equal to
        the seed's printed form. Holds when: finite fourth moment; non-lattice data.
    """
    He4, He6 = sp.hermite_prob(4, x), sp.hermite_prob(6, x)
    return Derivation(
        name="edgeworth_h2",
        expr=edgeworth_terms()[1],
        symbols=(x, lam3, lam4),
        source=f"{_SRC}, Eq. (38)",
        assumptions=("finite fourth moment", "non-lattice data"),
        seed_form=lam3**2 / 72 * He6 + lam4 / 24 * He4,
        note="Derived from the cumulant series (He_k = (-1)^k phi^(k) / phi).",
        lhs=r"h_{2}(x)",
        display=add(mul(frac(lam3**2, 72), _hermite(6)), mul(frac(lam4, 24), _hermite(4))),
    )


@register("edgeworth_log_density")
def edgeworth_log_density() -> Derivation:
    r""":math:`\log[\varphi(x)(1 + h_1/\sqrt n + h_2/n)]` expanded to :math:`O(1/n)`.

    Returns
    -------
    Derivation
        ``edgeworth_log_density`` (per_datum_leakage App. C.3, Eq. (48)-(49)): the expression in
        :math:`x, h_{1}, h_{2}, n` (the argument order of ``lambdify``); differs from the seed's
        printed form (see its note). Holds when: h_1 / sqrt(n) + h_2 / n = O_p(1 / sqrt(n)).
    """
    e = sp.Symbol("e", positive=True)
    series = sp.series(-sp.log(2 * sp.pi) / 2 - x**2 / 2 + sp.log(1 + h1 * e + h2 * e**2),
                       e, 0, 3).removeO()
    expr = sp.expand(series.subs(e, 1 / sp.sqrt(n)))
    return Derivation(
        name="edgeworth_log_density",
        expr=expr,
        symbols=(x, h1, h2, n),
        source="per_datum_leakage App. C.3, Eq. (48)-(49)",
        assumptions=("h_1 / sqrt(n) + h_2 / n = O_p(1 / sqrt(n))",),
        seed_form=-sp.log(2 * sp.pi) / 2 - x**2 / 2 + h1 / sp.sqrt(n) + (h2 / n - h1**2 / 2) / n,
        note="SEED ERRATUM: Eq. (48)-(49) carry h_2/n inside the 1/n term; see claim "
             "per_datum_leakage:appC.eq48 (`semi-core verify`).",
        lhs=r"\log d_{n}(x)",
        display=add(neg(frac(sp.log(mul(2, sp.pi)), 2)), neg(frac(x**2, 2)),
                    frac(h1, sp.sqrt(n)),
                    frac(add(h2, neg(frac(sq(h1), 2))), n)),
    )

r"""Linear regression under SGD at the optimum (SeMI seed App. F.3): target gradient and m*.

Model: :math:`y = \theta^{*\top}x + \varepsilon`, :math:`x \sim \mathcal N(0, \Sigma_x)`,
:math:`\varepsilon \sim \mathcal N(0, \sigma_\varepsilon^2)`, squared loss
:math:`\ell(\theta) = (y - \theta^\top x)^2/2`. The per-sample gradient is obtained by
differentiating the loss (explicit coordinates, ``d = 2`` shown, the form is coordinate-wise);
at :math:`\theta = \theta^*` the target's deviation is :math:`\delta_g = -\varepsilon^* x^*`
(Lemma F.9). With :math:`\Sigma_g = \sigma_\varepsilon^2\Sigma_x` at the optimum (Cor F.8,
checked by Monte Carlo in the claims registry), the detectability
:math:`m^* = \delta_g^\top\Sigma_g^{-1}\delta_g` is reduced with :class:`~sympy.MatrixSymbol`
algebra to the invariant :math:`x^{*\top}\Sigma_x^{-1}x^*` (Theorem F.10).
"""

from __future__ import annotations

import functools

import sympy as sp

from ._core import LATEX_NAMES, Derivation, register
from ._display import frac, mul, neg, sq
from .gaussian import to_invariants

__all__ = ["linreg_gradient", "linreg_delta_g", "linreg_m_star"]

eps_star = sp.Symbol("eps_star", real=True)       # the target's noise epsilon*
sigma_eps = sp.Symbol("sigma_eps", positive=True)
x_j = sp.Symbol("x_j", real=True)                 # coordinate j of the target's features x*
q_x = sp.Symbol("q_x", nonnegative=True)          # x*^T Sigma_x^{-1} x*
LATEX_NAMES.update({"eps_star": r"\varepsilon^{*}", "sigma_eps": r"\sigma_{\varepsilon}",
                    "x_j": r"x^{*}_{j}",
                    "q_x": r"\mathbf{x}^{*\top}\boldsymbol{\Sigma}_{x}^{-1}\mathbf{x}^{*}"})

_SRC = "semi_sequential_mi App. F.3"


@functools.cache
def linreg_gradient(d: int = 2):
    """Per-sample gradient of the squared loss at theta, as an explicit ``d``-vector.

    Returns ``(grad, theta, theta_star, x)`` with ``y = theta_star' x + eps_star``.

    Parameters
    ----------
    d : int
        Dimension of the features.

    Returns
    -------
    grad : sympy.Matrix, shape (d, 1)
        The gradient.
    theta, theta_star, x : sympy.Matrix, shape (d, 1)
        The symbols it depends on.
    """
    x = sp.Matrix(sp.symbols(f"x1:{d + 1}", real=True))
    th = sp.Matrix(sp.symbols(f"th1:{d + 1}", real=True))
    ths = sp.Matrix(sp.symbols(f"thstar1:{d + 1}", real=True))
    y = (ths.T * x)[0, 0] + eps_star
    loss = (y - (th.T * x)[0, 0]) ** 2 / 2
    grad = sp.Matrix([sp.diff(loss, v) for v in th])
    return grad, th, ths, x


@register("linreg_delta_g")
def linreg_delta_g() -> Derivation:
    r"""Lemma F.9: coordinate :math:`j` of :math:`\delta_g = g^* - \mu_g` at the optimum.

    Returns
    -------
    Derivation
        ``linreg_delta_g`` (semi_sequential_mi App. F.3 Lemma F.9): the expression in
        :math:`eps_{star}, x_{j}` (the argument order of ``lambdify``); proven equal to the seed's
        printed form. Holds when: theta = theta*; mu_g(theta*) = 0.
    """
    grad, th, ths, x = linreg_gradient()
    at_opt = grad.subs(dict(zip(th, ths, strict=True)))
    comps = [sp.simplify(c / xi) for c, xi in zip(at_opt, x, strict=True)]
    if any(sp.simplify(c - comps[0]) != 0 for c in comps) or comps[0].has(*x):
        raise AssertionError("gradient at the optimum is not (common factor) * x_j")
    expr = comps[0] * x_j  # mu_g = 0 at the optimum (E[eps x] = 0), so delta_g = g*
    return Derivation(
        name="linreg_delta_g",
        expr=expr,
        symbols=(eps_star, x_j),
        source=f"{_SRC} Lemma F.9",
        assumptions=("theta = theta*", "mu_g(theta*) = 0"),
        seed_form=-eps_star * x_j,
        note="Differentiated from the squared loss; every coordinate has the same factor.",
        lhs=r"\delta_{g,j}",
        display=neg(mul(eps_star, x_j)),
    )


@register("linreg_m_star")
def linreg_m_star() -> Derivation:
    r"""Theorem F.10: :math:`m^* = (\varepsilon^{*2}/\sigma_\varepsilon^2)\,
    x^{*\top}\Sigma_x^{-1}x^*` (MatrixSymbol algebra, any ``d``).

    Returns
    -------
    Derivation
        ``linreg_m_star`` (semi_sequential_mi App. F.3 Theorem F.10): the expression in
        :math:`eps_{star}, \sigma_{eps}, q_{x}` (the argument order of ``lambdify``); proven equal
        to the seed's printed form. Holds when: theta = theta*; Sigma_g = sigma_eps^2 Sigma_x (Cor
        F.8); q_x = x*' Sigma_x^-1 x*.
    """
    d = sp.Symbol("d", positive=True, integer=True)
    X = sp.MatrixSymbol("X", d, 1)
    Sx = sp.MatrixSymbol("Sigma_x", d, d)
    delta = linreg_delta_g().expr.subs(x_j, 1) * X           # -eps* x*, coordinate-wise
    quad = (delta.T * (sigma_eps**2 * Sx).I * delta)
    expr = to_invariants(sp.expand(quad), {("X", "X"): q_x}, Sx)
    return Derivation(
        name="linreg_m_star",
        expr=sp.factor(expr),
        symbols=(eps_star, sigma_eps, q_x),
        source=f"{_SRC} Theorem F.10",
        assumptions=("theta = theta*", "Sigma_g = sigma_eps^2 Sigma_x (Cor F.8)",
                     "q_x = x*' Sigma_x^-1 x*"),
        seed_form=eps_star**2 / sigma_eps**2 * q_x,
        note="m* = delta_g' Sigma_g^-1 delta_g with delta_g from Lemma F.9.",
        lhs=r"m^{*}",
        display=mul(frac(sq(eps_star), sigma_eps**2), q_x),
    )

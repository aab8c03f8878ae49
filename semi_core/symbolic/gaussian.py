r"""Generic log-likelihood ratio of one Gaussian transition.

For one transition :math:`x \mid H_0 \sim \mathcal N(m_0, V_0)`, :math:`x \mid H_1 \sim
\mathcal N(m_1, V_1)` the log-LR is

.. math::

    \log \mathrm{LR}(x) = -\tfrac12 \log\frac{\det V_1}{\det V_0}
        + \tfrac12 (x-m_0)^\top V_0^{-1}(x-m_0) - \tfrac12 (x-m_1)^\top V_1^{-1}(x-m_1).

It is derived here from the densities of :mod:`sympy.stats` (scalar and explicit 2x2
matrices of symbols) and, for general ``d``, with :class:`sympy.MatrixSymbol` algebra reduced to
scalar invariants (for proportional covariances :math:`V_1 = \rho V_0`, the case of the
empirical mean and of non-private SGD, seed App. A.2, B.2, F.2). Non-proportional covariances
(DP-SGD, non-stationary Final Observation) use the scalar form per eigen-direction or the
numeric :func:`gaussian_log_lr`.
"""

from __future__ import annotations

import numpy as np
import sympy as sp
from scipy.linalg import solve_triangular
from sympy.stats import MultivariateNormal, Normal, density

from .._validation import check_covariance, check_finite_array
from . import _symbols as S
from ._core import LATEX_NAMES, Derivation, register
from ._display import add, dev, frac, mul, neg, sq

__all__ = [
    "scalar_log_lr",
    "matrix_log_lr",
    "matrixsymbol_log_lr",
    "to_invariants",
    "gaussian_log_lr",
    "gaussian_log_lr_scalar",
    "gaussian_log_lr_2d",
    "gaussian_log_lr_proportional",
]

# Invariants of the proportional-covariance form.
qL = sp.Symbol("qL", nonnegative=True)     # L^T V0^{-1} L
lL = sp.Symbol("lL", real=True)            # L^T V0^{-1} Delta
mD = sp.Symbol("mD", nonnegative=True)     # Delta^T V0^{-1} Delta
rho = sp.Symbol("rho", positive=True)      # V1 = rho V0
LATEX_NAMES.update({
    "qL": r"\mathbf{L}^{\top}\mathbf{V}_{0}^{-1}\mathbf{L}",
    "lL": r"\mathbf{L}^{\top}\mathbf{V}_{0}^{-1}\boldsymbol{\Delta}",
    "mD": r"\boldsymbol{\Delta}^{\top}\mathbf{V}_{0}^{-1}\boldsymbol{\Delta}",
    "rho": r"\rho",
})


# ---------------------------------------------------------------------------------------------
# Symbolic constructors
# ---------------------------------------------------------------------------------------------


def scalar_log_lr(x, mean0, var0, mean1, var1) -> sp.Expr:
    r"""log N(x; mean1, var1) - log N(x; mean0, var0), from :func:`sympy.stats.density`.

    Parameters
    ----------
    x, mean0, var0, mean1, var1 : sympy expressions
        Observation, means and (positive) variances under H0 and H1.

    Returns
    -------
    sympy.Expr
        Expanded log-likelihood ratio (logs of the variances expanded).
    """
    p1 = density(Normal("H1", mean1, sp.sqrt(var1)))(x)
    p0 = density(Normal("H0", mean0, sp.sqrt(var0)))(x)
    return sp.expand(sp.expand_log(sp.log(p1) - sp.log(p0), force=True))


def matrix_log_lr(x, mean0, cov0, mean1, cov1) -> sp.Expr:
    """Explicit-matrix log-LR from :class:`sympy.stats.MultivariateNormal` densities.

    ``x``, ``mean0``, ``mean1`` are lists of symbols/expressions (length d), ``cov0``/``cov1``
    symmetric :class:`sympy.Matrix` objects (small d only: the inverse is symbolic).

    Parameters
    ----------
    x : list of sympy.Expr
        The observation.
    mean0, mean1 : list of sympy.Expr
        Means under H0 and H1.
    cov0, cov1 : sympy.Matrix
        Covariances under H0 and H1 (symmetric).

    Returns
    -------
    sympy.Expr
        :math:`\\log p_1(x)-\\log p_0(x)`.
    """
    p1 = density(MultivariateNormal("H1", list(mean1), sp.Matrix(cov1)))(*x)
    p0 = density(MultivariateNormal("H0", list(mean0), sp.Matrix(cov0)))(*x)
    return sp.expand_log(sp.log(p1) - sp.log(p0), force=True)


def to_invariants(expr, table: dict[tuple[str, str], sp.Expr], metric: sp.MatrixSymbol):
    r"""Replace each bilinear term ``c * a^T metric^{-1} b`` of a matrix expression by a scalar.

    ``table`` maps unordered pairs of vector names ``(a, b)`` to the scalar invariant; the metric
    is symmetric, so ``a^T M b = b^T M a``. Every term must be of this form.

    Parameters
    ----------
    expr : sympy.MatrixExpr
        A sum of bilinear terms.
    table : dict of (str, str) to sympy.Expr
        Scalar invariant of each pair of vector names.
    metric : sympy.MatrixSymbol
        The symmetric metric.

    Returns
    -------
    sympy.Expr
        The scalar expression.
    """
    expr = sp.expand(expr)
    terms = expr.args if isinstance(expr, sp.MatAdd) else (expr,)
    total = sp.Integer(0)
    inv = metric.I
    for term in terms:
        coeff, mat = term.as_coeff_mmul()
        factors = list(mat.args)
        if len(factors) != 3 or factors[1] != inv:
            raise ValueError(f"term {term} is not a bilinear form in {metric}")
        left = factors[0].arg.name if isinstance(factors[0], sp.Transpose) else None
        right = factors[2].name if isinstance(factors[2], sp.MatrixSymbol) else None
        key = (left, right) if (left, right) in table else (right, left)
        if key not in table:
            raise ValueError(f"no invariant for the pair {(left, right)}")
        total += coeff * table[key]
    return sp.expand(total)


def matrixsymbol_log_lr(L, Delta, cov0, cov1, *, metric, table) -> sp.Expr:
    r"""General-d log-LR with :class:`~sympy.MatrixSymbol` algebra, reduced to invariants.

    ``L = x - m0`` and ``Delta = m1 - m0`` are ``(d, 1)`` matrix expressions, ``cov0``/``cov1``
    scalar multiples of the symmetric ``metric`` (so the determinant ratio is a power of the
    ratio of the multiples). ``table`` names the bilinear invariants, see :func:`to_invariants`.

    Parameters
    ----------
    L : sympy.MatrixExpr, shape (d, 1)
        ``x - m0``.
    Delta : sympy.MatrixExpr, shape (d, 1)
        ``m1 - m0``.
    cov0, cov1 : sympy.MatrixExpr
        Scalar multiples of ``metric``.
    metric : sympy.MatrixSymbol
        The symmetric metric.
    table : dict of (str, str) to sympy.Expr
        The bilinear invariants.

    Returns
    -------
    sympy.Expr
        The log-LR in the invariants.
    """
    log_det = sp.expand_log(sp.log(sp.simplify(sp.det(cov1) / sp.det(cov0))), force=True)
    quad = (L.T * cov0.I * L) / 2 - ((L - Delta).T * cov1.I * (L - Delta)) / 2
    return sp.expand(-log_det / 2 + to_invariants(quad, table, metric))


# ---------------------------------------------------------------------------------------------
# Numeric twin (Cholesky whitening, no inverses)
# ---------------------------------------------------------------------------------------------


def gaussian_log_lr(x, mean0, cov0, mean1, cov1) -> np.ndarray:
    r"""Numeric log-LR :math:`\log \mathcal N(x; m_1, V_1) - \log \mathcal N(x; m_0, V_0)`.

    .. math::

        \log\mathrm{LR} = \sum_i \log (L_0)_{ii} - \sum_i \log (L_1)_{ii}
            + \tfrac12 \|L_0^{-1}(x-m_0)\|^2 - \tfrac12 \|L_1^{-1}(x-m_1)\|^2,

    with lower Cholesky factors :math:`V_k = L_k L_k^\top` (triangular solves, no inverse).
    Works for any pair of positive-definite covariances (proportional or not), seed App. B.2.

    Parameters
    ----------
    x : array_like, shape (..., d)
    mean0, mean1 : array_like, shape (d,)
    cov0, cov1 : array_like, shape (d, d)
        Symmetric positive definite.

    Returns
    -------
    ndarray, shape (...)
    """

    mean0 = np.atleast_1d(check_finite_array(mean0, "mean0", ndim=(0, 1)))
    d = mean0.size
    mean1 = np.atleast_1d(check_finite_array(mean1, "mean1", ndim=(0, 1)))
    if mean1.shape != (d,):
        raise ValueError(f"mean1 must have shape ({d},) like mean0, got {mean1.shape}")
    _, L0 = check_covariance(np.atleast_2d(cov0), "cov0", d=d)
    _, L1 = check_covariance(np.atleast_2d(cov1), "cov1", d=d)
    x = check_finite_array(x, "x")
    if d == 1 and (x.ndim == 0 or x.shape[-1] != 1):
        x = x[..., None]
    if x.shape[-1] != d:
        raise ValueError(f"x must have last dimension {d}, got shape {x.shape}")
    flat = x.reshape(-1, d)
    w0 = solve_triangular(L0, (flat - mean0).T, lower=True)
    w1 = solve_triangular(L1, (flat - mean1).T, lower=True)
    logdet = np.sum(np.log(np.diag(L0))) - np.sum(np.log(np.diag(L1)))
    out = logdet + 0.5 * np.einsum("ij,ij->j", w0, w0) - 0.5 * np.einsum("ij,ij->j", w1, w1)
    return out.reshape(x.shape[:-1])


# ---------------------------------------------------------------------------------------------
# Registered derivations
# ---------------------------------------------------------------------------------------------


@register("gaussian_log_lr_scalar")
def gaussian_log_lr_scalar() -> Derivation:
    """Scalar log-LR of two Gaussians (the seed's App. A.2 display).

    Returns
    -------
    Derivation
        ``gaussian_log_lr_scalar`` (semi_sequential_mi App. A.2 (proof of Thm 3.4)): the expression
        in :math:`x_{0}, m_{0}, v_{0}, m_{1}, v_{1}` (the argument order of ``lambdify``); proven
        equal to the seed's printed form. Holds when: v0 > 0; v1 > 0.
    """
    x, m0, v0, m1, v1 = S.x0, S.m0, S.v0, S.m1, S.v1
    expr = scalar_log_lr(x, m0, v0, m1, v1)
    N = x - m0
    seed = -sp.log(v1 / v0) / 2 + N**2 / (2 * v0) - (N - (m1 - m0)) ** 2 / (2 * v1)
    return Derivation(
        name="gaussian_log_lr_scalar",
        expr=expr,
        symbols=(x, m0, v0, m1, v1),
        source="semi_sequential_mi App. A.2 (proof of Thm 3.4)",
        assumptions=("v0 > 0", "v1 > 0"),
        seed_form=seed,
        note="Derived from sympy.stats Normal densities.",
        lhs=r"\log \mathrm{LR}",
        display=add(neg(frac(sp.log(frac(v1, v0)), 2)), frac(sq(dev(x, m0)), mul(2, v0)),
                    neg(frac(sq(dev(x, m1)), mul(2, v1)))),
    )


def _quad2_display(xs, c, V):
    """``(x - c)^T V^{-1} (x - c)`` times ``det V`` for a symmetric 2x2 ``V`` (display)."""
    u, v = dev(xs[0], c[0]), dev(xs[1], c[1])
    return add(mul(V[1, 1], sq(u)), neg(mul(2, V[0, 1], u, v)), mul(V[0, 0], sq(v)))


def _det2_display(V):
    return dev(mul(V[0, 0], V[1, 1]), V[0, 1] ** 2)


def _sym2(prefix: str):
    a, b, c = sp.symbols(f"{prefix}11 {prefix}12 {prefix}22", real=True)
    return sp.Matrix([[a, b], [b, c]]), (a, b, c)


@register("gaussian_log_lr_2d")
def gaussian_log_lr_2d() -> Derivation:
    """Explicit 2x2 log-LR with full symmetric covariances (non-proportional allowed).

    Returns
    -------
    Derivation
        ``gaussian_log_lr_2d`` (semi_sequential_mi App. B.2 (proof of Thm B.2)): the expression in
        :math:`x_{1}, x_{2}, a_{1}, a_{2}, P_{11}, P_{12}, P_{22}, b_{1}, b_{2}, Q_{11}, Q_{12},
        Q_{22}` (the argument order of ``lambdify``); proven equal to the seed's printed form. Holds
        when: P = [[P11, P12], [P12, P22]] and Q positive definite.
    """
    xs = sp.symbols("x1 x2", real=True)
    a0 = sp.symbols("a1 a2", real=True)  # H0 mean
    b0 = sp.symbols("b1 b2", real=True)  # H1 mean
    V0, e0 = _sym2("P")
    V1, e1 = _sym2("Q")
    expr = matrix_log_lr(xs, a0, V0, b0, V1)
    L = sp.Matrix(xs) - sp.Matrix(a0)
    Dl = sp.Matrix(b0) - sp.Matrix(a0)
    seed = (-sp.log(V1.det() / V0.det()) / 2
            + (L.T * V0.inv() * L)[0, 0] / 2
            - ((L - Dl).T * V1.inv() * (L - Dl))[0, 0] / 2)
    return Derivation(
        name="gaussian_log_lr_2d",
        expr=expr,
        symbols=(*xs, *a0, *e0, *b0, *e1),
        source="semi_sequential_mi App. B.2 (proof of Thm B.2)",
        assumptions=("P = [[P11, P12], [P12, P22]] and Q positive definite",),
        seed_form=seed,
        note="Derived from sympy.stats MultivariateNormal densities with explicit 2x2 "
             "symmetric covariances; holds for non-proportional covariances.",
        lhs=r"\log \mathrm{LR}",
        display=add(frac(sp.log(frac(_det2_display(V0), _det2_display(V1))), 2),
                    frac(_quad2_display(xs, a0, V0), mul(2, _det2_display(V0))),
                    neg(frac(_quad2_display(xs, b0, V1), mul(2, _det2_display(V1))))),
    )


@register("gaussian_log_lr_proportional")
def gaussian_log_lr_proportional() -> Derivation:
    r"""General-d log-LR for :math:`V_1 = \rho V_0`, via MatrixSymbol algebra.

    Returns
    -------
    Derivation
        ``gaussian_log_lr_proportional`` (semi_sequential_mi App. B.2 / F.2 (proportional
        covariances)): the expression in :math:`qL, lL, mD, \rho, d` (the argument order of
        ``lambdify``); the seed prints no form of it. Holds when: V1 = rho V0, rho > 0; V0 symmetric
        positive definite.
    """
    d = S.d
    L = sp.MatrixSymbol("L", d, 1)
    Dl = sp.MatrixSymbol("Delta", d, 1)
    V0 = sp.MatrixSymbol("V0", d, d)
    table = {("L", "L"): qL, ("L", "Delta"): lL, ("Delta", "Delta"): mD}
    expr = matrixsymbol_log_lr(L, Dl, V0, rho * V0, metric=V0, table=table)
    return Derivation(
        name="gaussian_log_lr_proportional",
        expr=expr,
        symbols=(qL, lL, mD, rho, d),
        source="semi_sequential_mi App. B.2 / F.2 (proportional covariances)",
        assumptions=("V1 = rho V0, rho > 0", "V0 symmetric positive definite"),
        seed_form=None,
        note="L = x - m0, Delta = m1 - m0; the determinant ratio is rho^d.",
        lhs=r"\log \mathrm{LR}",
        display=add(neg(mul(frac(d, 2), sp.log(rho))), mul(frac(dev(rho, 1), mul(2, rho)), qL),
                    mul(frac(1, rho), lL), neg(frac(mD, mul(2, rho)))),
    )

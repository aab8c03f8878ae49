r"""DP-SGD under Poisson sub-sampling: the log-LR of a canary that each step holds with rate q.

Seed ``semi_sequential_mi`` §4.2 derives the per-step log-LR of a step that holds the canary;
with Poisson sampling (Opacus' default) the canary is in the data set under :math:`H_1` and each
step holds it with probability :math:`q`, independently of the other steps. Conditionally on
the past the step's law is then the mixture :math:`(1-q)P_0+qP_1`, so

* ``poisson_step_log_lr``: :math:`\log\frac{(1-q)P_0+qP_1}{P_0}=\log(1-q+q\,e^{\ell})`,
  :math:`\ell=\log(P_1/P_0)` (any step law);
* ``poisson_dirac_step_log_lr``: for a Dirac gradient canary, :math:`P_0=\mathcal N(a,v)`,
  :math:`P_1=\mathcal N(a+1,v)` of the standardised update :math:`s`:
  :math:`\log(1-q+q\exp\frac{2(s-a)-1}{2v})`;
* ``poisson_dirac_final_log_lr``: the sum :math:`S=\sum_t s_t` (Final Observation) under
  :math:`H_1` is the binomial mixture :math:`\sum_k\binom Tk q^k(1-q)^{T-k}\mathcal N(A+k,V)`:
  :math:`\log\sum_k\binom Tk q^k(1-q)^{T-k}\exp\frac{2k(S-A)-k^2}{2V}`.

Each ratio is formed from the Gaussian densities and simplified by SymPy; the numeric twins
are :func:`semi_core.sgd.lr.poisson_dirac_log_lr` and
:func:`semi_core.sgd.lr.poisson_dirac_final_log_lr` (log-space).
"""

from __future__ import annotations

import sympy as sp

from ._core import Derivation, register

__all__ = ["gaussian_density", "dirac_step_ratio", "dirac_final_ratio"]

q = sp.Symbol("q", positive=True)
s, a, S, A = sp.symbols("s a S A", real=True)
v, V = sp.symbols("v V", positive=True)
ell = sp.Symbol("ell", real=True)
k = sp.Symbol("k", integer=True, nonnegative=True)
T = sp.Symbol("T", integer=True, positive=True)


def gaussian_density(x, mean, var) -> sp.Expr:
    """:math:`\\mathcal N(x; \\mathrm{mean}, \\mathrm{var})`.

    Parameters
    ----------
    x : sympy.Expr
        The point.
    mean : sympy.Expr
        The mean.
    var : sympy.Expr
        The variance (positive).

    Returns
    -------
    sympy.Expr
        The density.
    """
    return sp.exp(-(x - mean) ** 2 / (2 * var)) / sp.sqrt(2 * sp.pi * var)


def dirac_step_ratio() -> sp.Expr:
    """:math:`((1-q)\\phi(s;a,v)+q\\phi(s;a+1,v))/\\phi(s;a,v)`, simplified.

    Returns
    -------
    sympy.Expr
        The likelihood ratio of one step.
    """
    p0 = gaussian_density(s, a, v)
    p1 = gaussian_density(s, a + 1, v)
    return sp.simplify(sp.expand(((1 - q) * p0 + q * p1) / p0))


def dirac_final_ratio() -> sp.Expr:
    """:math:`\\sum_k \\binom Tk q^k(1-q)^{T-k}\\phi(S;A+k,V)/\\phi(S;A,V)` (term simplified).

    Returns
    -------
    sympy.Sum
        The likelihood ratio of the final sum.
    """
    term = sp.simplify(gaussian_density(S, A + k, V) / gaussian_density(S, A, V))
    return sp.Sum(sp.binomial(T, k) * q ** k * (1 - q) ** (T - k) * term, (k, 0, T))


@register("poisson_step_log_lr")
def poisson_step_log_lr() -> Derivation:
    r"""Per-step log-LR of DP-SGD with Poisson sub-sampling of the canary.

    Returns
    -------
    Derivation
        ``poisson_step_log_lr`` (semi_sequential_mi §4.2 (with Poisson sub-sampling, beyond the
        seed)): the expression in :math:`\ell, q` (the argument order of ``lambdify``); the seed
        prints no form of it. Holds when: the step holds the canary with probability q,
        independently of the past.
    """
    p0, p1 = sp.symbols("P_0 P_1", positive=True)
    expr = sp.log(sp.expand(((1 - q) * p0 + q * p1) / p0).subs(p1, p0 * sp.exp(ell)))
    return Derivation(
        name="poisson_step_log_lr", expr=sp.simplify(expr), symbols=(ell, q),
        source="semi_sequential_mi §4.2 (with Poisson sub-sampling, beyond the seed)",
        assumptions=("the step holds the canary with probability q, independently of the past",),
        note="Mixture of the step laws with and without the canary over the law without it.",
        lhs=r"\log\mathrm{LR}^{\mathrm{Poisson}}_t")


@register("poisson_dirac_step_log_lr")
def poisson_dirac_step_log_lr() -> Derivation:
    """Per-step log-LR of a Dirac canary under Poisson sub-sampling.

    Returns
    -------
    Derivation
        ``poisson_dirac_step_log_lr`` (semi_sequential_mi §4.2 (Dirac canary, Poisson sub-sampling,
        beyond the seed)): the expression in :math:`s, a, v, q` (the argument order of
        ``lambdify``); the seed prints no form of it. Holds when: s ~ N(a, v) without the canary,
        N(a + 1, v) with it.
    """
    return Derivation(
        name="poisson_dirac_step_log_lr", expr=sp.log(dirac_step_ratio()),
        symbols=(s, a, v, q),
        source="semi_sequential_mi §4.2 (Dirac canary, Poisson sub-sampling, beyond the seed)",
        assumptions=("s ~ N(a, v) without the canary, N(a + 1, v) with it",),
        note="Equals log(1 - q + q exp((2(s - a) - 1)/(2v))).",
        lhs=r"\log\mathrm{LR}(s_t)")


@register("poisson_dirac_final_log_lr")
def poisson_dirac_final_log_lr() -> Derivation:
    """Final Observation log-LR of a Dirac canary under Poisson sub-sampling.

    Returns
    -------
    Derivation
        ``poisson_dirac_final_log_lr`` (semi_sequential_mi §4.2 (Final Observation, Poisson
        sub-sampling, beyond the seed)): the expression in :math:`S, A, V, q, T` (the argument order
        of ``lambdify``); the seed prints no form of it. Holds when: independent inclusion in each
        of T steps; S ~ N(A + K, V) given K.
    """
    return Derivation(
        name="poisson_dirac_final_log_lr", expr=sp.log(dirac_final_ratio()),
        symbols=(S, A, V, q, T),
        source="semi_sequential_mi §4.2 (Final Observation, Poisson sub-sampling, beyond the seed)",
        assumptions=("independent inclusion in each of T steps", "S ~ N(A + K, V) given K"),
        note="Binomial mixture over the number K of steps that hold the canary.",
        lhs=r"\log\mathrm{LR}(S)")


#: No printed seed form (read by tests/symbolic/test_sym_core.py).
EXPECTED_NO_SEED = {"poisson_step_log_lr", "poisson_dirac_step_log_lr",
                    "poisson_dirac_final_log_lr"}

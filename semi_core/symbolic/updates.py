r"""Gaussian-mean results of Jagielski et al. (``combining_mi_updates`` App. B, Thm 4.1), derived.

Setting (App. B.2): data :math:`\mathcal N(\mu, \sigma^2 I_d)`, :math:`\hat\mu_0` the mean of
:math:`D_0` (:math:`n_0` points), :math:`\hat\mu_1` the mean of :math:`D_0\cup D_1`
(:math:`n = n_0 + n_1`), :math:`\hat\mu_\Delta = (n\hat\mu_1 - n_0\hat\mu_0)/n_1` the mean of
:math:`D_1`. Every moment below is computed from the generative model by
:func:`gaussian_expectation` (exact moments of polynomials in independent standard normals,
Isserlis), never copied from the seed.

Derived results and where the seed differs (the claims registry checks each one):

* Lemma B.3's statistic :math:`s = (\hat\mu_\Delta-\mu)\cdot(v-\mu)` has the two normal laws
  :math:`\mathcal N(0, a^2\sigma^2/n_1)` (OUT) and
  :math:`\mathcal N(a^2/n_1, a^2\sigma^2(n_1-1)/n_1^2)` (IN), :math:`a=\|v-\mu\|` -- as printed.
  But the IN variance is the *smaller* one (ratio :math:`(n_1-1)/n_1`), so with the threshold
  :math:`T=a^2/(2n_1)` the IN accuracy :math:`\Phi(a/(2\sigma\sqrt{n_1-1}))` is the *larger*;
  the seed's "Acc_IN <= Acc_OUT because of its higher variance" is backwards and its chain of
  bounds then gives :math:`\Phi(\sqrt{d/(80 n_1)})`, not :math:`\Phi(\sqrt{d/(80(n_1-1))})`.
  (The lemma's statement still holds: on the same event the exact accuracy is at least
  :math:`\Phi(\sqrt{d/(8n_1)})`.)
* Theorem B.1's condition inherits Lemma B.3's right-hand side.
* Lemma B.5 (SGD-Full step = SGD-New step with :math:`\eta' = n_1\eta/(n_0+n_1)`) holds when
  :math:`f_0` is the exact mean of :math:`D_0`.
* Theorem B.4: :math:`\mathrm{Var}[d_{\mathrm{OUT}}] = 16 d\eta^2\sigma^4(1/n_1 + 1/n_0 +
  1/(n_0n_1) + 2/n_0^2)`; the seed's :math:`32d\eta^2\sigma^4(n_1+2n_0^2+2n_0n_1+2n_0)/(n_0^2n_1)`
  writes inner products of independent Gaussians as :math:`\sigma^2 c(X-Y)` with
  :math:`X,Y\sim\chi^2_d` where the right coefficient is :math:`\sigma^2 c/2`, so three of its
  four terms are 4x too large (conservative for Chebyshev; the :math:`O(\cdot)` conclusion stands).
* Theorem 4.1 (binary scores): under its two assumptions the best accuracy from both binary
  outputs is :math:`\tfrac12(p^u_{11}+p^u_{01}+p^t_{10}+p^t_{00})`, the same as from
  :math:`f_1`'s output alone.
* §5.7: precision of an :math:`\varepsilon`-DP membership test (balanced prior) is at most
  :math:`e^\varepsilon/(1+e^\varepsilon)`, so :math:`\varepsilon \ge \log(p/(1-p))`; the seed
  prints :math:`\varepsilon \ge p/(1-p)` (a missing logarithm).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence

import numpy as np
import sympy as sp

from ._core import Derivation, Phi, register
from ._display import add, dev, frac, mul, root, sq

__all__ = [
    "gaussian_expectation",
    "b3_laws",
    "b3_accuracies",
    "b4_out_moments",
    "b4_in_mean",
    "b4_in_var",
    "b4_constants",
    "b5_full_step_coefficient",
    "thm41_optimal_accuracy",
    "precision_epsilon",
]

n0 = sp.Symbol("n0", positive=True)
n1 = sp.Symbol("n1", positive=True)
sigma = sp.Symbol("sigma", positive=True)
a = sp.Symbol("a", positive=True)           # ||v - mu||
eta = sp.Symbol("eta", positive=True)
d = sp.Symbol("d", positive=True)
eps = sp.Symbol("epsilon", positive=True)
prec = sp.Symbol("p", positive=True)


def gaussian_expectation(expr: sp.Expr, normals: Sequence[sp.Symbol]) -> sp.Expr:
    r"""Exact :math:`\mathbb E[\mathrm{expr}]` for a polynomial in independent
    :math:`\mathcal N(0,1)` variables ``normals`` (other symbols are constants).

    Each monomial :math:`\prod_j Z_j^{k_j}` has expectation :math:`\prod_j (k_j-1)!!` for even
    :math:`k_j` and 0 otherwise (Isserlis / Gaussian moments).

    Parameters
    ----------
    expr : sympy.Expr
        A polynomial in ``normals``.
    normals : sequence of sympy.Symbol
        Independent standard normal variables.

    Returns
    -------
    sympy.Expr
        The expectation.
    """
    poly = sp.Poly(sp.expand(expr), *normals)
    total = sp.Integer(0)
    for powers, coeff in poly.terms():
        mom = sp.Integer(1)
        for kpow in powers:
            if kpow % 2:
                mom = sp.Integer(0)
                break
            mom *= sp.factorial2(kpow - 1) if kpow else 1
        total += coeff * mom
    return sp.cancel(total)


def _mean_var(expr, normals):
    mean = gaussian_expectation(expr, normals)
    var = sp.cancel(gaussian_expectation(expr**2, normals) - mean**2)
    return sp.factor(mean), sp.factor(var)


# ---------------------------------------------------------------------------------------------
# Lemma B.3
# ---------------------------------------------------------------------------------------------

@functools.cache
def b3_laws() -> dict[str, sp.Expr]:
    r"""Laws of :math:`s=(\hat\mu_\Delta-\mu)\cdot(v-\mu)` (Lemma B.3), derived.

    Along the unit vector :math:`u=(v-\mu)/a` only one coordinate matters (the others are
    orthogonal to :math:`v-\mu`). OUT: :math:`\hat\mu_\Delta` is the mean of :math:`n_1` fresh
    points, component :math:`\sigma Z_1/\sqrt{n_1}`; IN: one of them is :math:`v` (component
    :math:`a`), the other :math:`n_1-1` give :math:`\sigma\sqrt{n_1-1}\,Z_1`. :math:`D_0`
    cancels in :math:`\hat\mu_\Delta = (n\hat\mu_1-n_0\hat\mu_0)/n_1` (kept in the derivation
    as :math:`Z_0` to show it).

    Returns
    -------
    dict of str to sympy.Expr
        Means and variances of s OUT and IN (``mean_out``, ``var_out``, ``mean_in``, ``var_in``).
    """
    z0, z1 = sp.symbols("Z0 Z1", real=True)
    n = n0 + n1
    s_d0 = sigma * sp.sqrt(n0) * z0                 # sum over D0 (component along u)
    out_sum = sigma * sp.sqrt(n1) * z1               # sum over D1, target absent
    in_sum = a + sigma * sp.sqrt(n1 - 1) * z1        # target present
    res = {}
    for key, s1 in (("out", out_sum), ("in", in_sum)):
        mu0 = s_d0 / n0
        mu1 = (s_d0 + s1) / n
        delta = sp.simplify((n * mu1 - n0 * mu0) / n1)
        stat = delta * a
        m, v = _mean_var(stat, [z0, z1])
        res[f"mean_{key}"], res[f"var_{key}"] = m, v
    return res


@functools.cache
def b3_accuracies() -> dict[str, sp.Expr]:
    r"""Per-class accuracies of the B.3 threshold test :math:`s \gtrless T = a^2/(2n_1)`.

    .. math::

       \mathrm{Acc}_{\mathrm{OUT}} = \Phi\Big(\frac{T}{\sqrt{v_{\mathrm{OUT}}}}\Big)
       = \Phi\Big(\frac{a}{2\sigma\sqrt{n_1}}\Big),\qquad
       \mathrm{Acc}_{\mathrm{IN}} = \Phi\Big(\frac{m_{\mathrm{IN}}-T}{\sqrt{v_{\mathrm{IN}}}}\Big)
       = \Phi\Big(\frac{a}{2\sigma\sqrt{n_1-1}}\Big)

    Returns
    -------
    dict of str to sympy.Expr
        ``acc_out``, ``acc_in`` (per-class accuracies), ``threshold`` (T) and
        ``var_ratio_in_out``.
    """
    laws = b3_laws()
    T = a**2 / (2 * n1)
    acc_out = Phi(sp.simplify(T / sp.sqrt(laws["var_out"])))
    acc_in = Phi(sp.simplify((laws["mean_in"] - T) / sp.sqrt(laws["var_in"])))
    return {"acc_out": acc_out, "acc_in": acc_in, "threshold": T,
            "var_ratio_in_out": sp.simplify(laws["var_in"] / laws["var_out"])}


@register("upd_b3_var_ratio")
def upd_b3_var_ratio() -> Derivation:
    """Lemma B.3: Var_IN / Var_OUT of the update-aware statistic (< 1: IN is the narrower law).

    Returns
    -------
    Derivation
        ``upd_b3_var_ratio`` (combining_mi_updates App. B.2, Lemma B.3): the expression in
        :math:`n_{1}` (the argument order of ``lambdify``); the seed prints no form of it. Holds
        when: N(mu, sigma^2 I) data; n1 >= 2.
    """
    return Derivation(
        name="upd_b3_var_ratio", expr=b3_accuracies()["var_ratio_in_out"], symbols=(n1,),
        source="combining_mi_updates App. B.2, Lemma B.3",
        assumptions=("N(mu, sigma^2 I) data", "n1 >= 2"),
        note="(n1-1)/n1 < 1: the IN law has the smaller variance, so Acc_IN >= Acc_OUT; the "
             "seed says the opposite ('its higher variance').",
        lhs=r"\mathrm{Var}_{\mathrm{IN}}/\mathrm{Var}_{\mathrm{OUT}}",
        display=frac(dev(n1, 1), n1))


def _phi_root_display() -> sp.Expr:
    r"""Display of the corrected Lemma B.3 bound, :math:`\Phi(\sqrt{d/(80 n_1)})` (the seed's
    shape, with :math:`n_1` for its :math:`n_1 - 1`)."""
    return Phi(root(frac(d, mul(80, n1))))


@register("upd_b3_bound")
def upd_b3_bound() -> Derivation:
    r"""Lemma B.3 bound from the proof's own chain with the right minimum (Acc_OUT):
    :math:`T > d\sigma^2/(4n_1)`, :math:`c < 5d\sigma^4` in :math:`\Phi(T\sqrt{n_1/c})`.

    Returns
    -------
    Derivation
        ``upd_b3_bound`` (combining_mi_updates App. B.2, Lemma B.3): the expression in :math:`d,
        n_{1}` (the argument order of ``lambdify``); differs from the seed's printed form (see its
        note). Holds when: ||v-mu||^2 in (d sigma^2/2, 5 d sigma^2); n1 >= 2.
    """
    T_lo = d * sigma**2 / (4 * n1)
    c_hi = 5 * d * sigma**4
    expr = Phi(sp.simplify(T_lo * sp.sqrt(n1 / c_hi)))
    return Derivation(
        name="upd_b3_bound", expr=expr, symbols=(d, n1),
        source="combining_mi_updates App. B.2, Lemma B.3",
        assumptions=("||v-mu||^2 in (d sigma^2/2, 5 d sigma^2)", "n1 >= 2"),
        seed_form=Phi(sp.sqrt(d / (80 * (n1 - 1)))),
        note="The proof bounds Acc by Acc_IN (wrong minimum); with Acc_OUT the same steps give "
             "Phi(sqrt(d/(80 n1))). The statement survives because on the same event the exact "
             "accuracy is >= Phi(sqrt(d/(8 n1))).",
        lhs=r"\underline{\mathrm{Acc}}(\mathcal A)", display=_phi_root_display())


@register("upd_b1_condition_rhs")
def upd_b1_condition_rhs() -> Derivation:
    """Theorem B.1, condition (1): right-hand side from the corrected Lemma B.3 chain.

    Returns
    -------
    Derivation
        ``upd_b1_condition_rhs`` (combining_mi_updates App. B.2, Thm B.1 eq. (1)): the expression in
        :math:`d, n_{1}` (the argument order of ``lambdify``); differs from the seed's printed form
        (see its note). Holds when: n = n0 + n1 >= 4 so that Lemma B.2's bound is <= 1/2 +
        sqrt(2d/(n-1)).
    """
    return Derivation(
        name="upd_b1_condition_rhs", expr=upd_b3_bound().expr, symbols=(d, n1),
        source="combining_mi_updates App. B.2, Thm B.1 eq. (1)",
        assumptions=("n = n0 + n1 >= 4 so that Lemma B.2's bound is <= 1/2 + sqrt(2d/(n-1))",),
        seed_form=Phi(sp.sqrt(d / (80 * (n1 - 1)))),
        note="Condition: 1/2 + sqrt(2d/(n-1)) < RHS. Inherits Lemma B.3's bound; the seed's "
             "(n1-1) form is still sufficient (the lemma's statement holds), the proof's is n1.",
        lhs=r"\mathrm{RHS}_{(1)}", display=_phi_root_display())


# ---------------------------------------------------------------------------------------------
# Lemma B.5 and Theorem B.4
# ---------------------------------------------------------------------------------------------

@functools.cache
def b5_full_step_coefficient() -> sp.Expr:
    r"""Lemma B.5: the SGD-Full step on :math:`D_0\cup D_1` from :math:`f_0 = \hat\mu_0` for the
    loss :math:`\|f-x\|^2` is :math:`2\eta'(\mu_{up}-f_0)` with :math:`\eta'` returned here.

    The mean gradient is :math:`-\tfrac{2}{n_0+n_1}\big(n_0(\hat\mu_0-f_0)+n_1(\mu_{up}-f_0)\big)`;
    at :math:`f_0=\hat\mu_0` the first term vanishes.

    Returns
    -------
    sympy.Expr
        :math:`\eta'`.
    """
    f0, m0_, mup = sp.symbols("f0 mu0hat muup", real=True)
    step = -eta * (-2 * (n0 * (m0_ - f0) + n1 * (mup - f0)) / (n0 + n1))
    step = step.subs(m0_, f0)
    return sp.simplify(step / (2 * (mup - f0)))


@register("upd_b5_eta_equiv")
def upd_b5_eta_equiv() -> Derivation:
    """Lemma B.5: SGD-Full with rate eta == SGD-New with rate eta' (derived).

    Returns
    -------
    Derivation
        ``upd_b5_eta_equiv`` (combining_mi_updates App. B.3, Lemma B.5): the expression in
        :math:`\\eta, n_{0}, n_{1}` (the argument order of ``lambdify``); proven equal to the seed's
        printed form. Holds when: f0 is the exact mean of D0; one full-batch gradient step, l2^2
        loss.
    """
    return Derivation(
        name="upd_b5_eta_equiv", expr=b5_full_step_coefficient(), symbols=(eta, n0, n1),
        source="combining_mi_updates App. B.3, Lemma B.5",
        assumptions=("f0 is the exact mean of D0", "one full-batch gradient step, l2^2 loss"),
        seed_form=n1 * eta / (n0 + n1), note="Matches the seed.", lhs=r"\eta'",
        display=frac(mul(n1, eta), add(n0, n1)))


@functools.cache
def b4_out_moments() -> dict[str, sp.Expr]:
    r"""Mean and variance of :math:`d_{\mathrm{OUT}} = -4\eta\langle\mu_{up}-f_0, x-f_0\rangle`
    (Theorem B.4, SGD-New step), per coordinate times ``d``.

    :math:`\mu_{up}-\mu = \sigma Z_1/\sqrt{n_1}`, :math:`f_0-\mu = \sigma Z_0/\sqrt{n_0}`,
    :math:`x-\mu = \sigma Z_x` (independent, one coordinate; coordinates are i.i.d.).

    Returns
    -------
    dict of str to sympy.Expr
        ``mean_out`` and ``var_out``.
    """
    z0, z1, zx = sp.symbols("Z0 Z1 Zx", real=True)
    aa = sigma * z1 / sp.sqrt(n1)
    bb = sigma * z0 / sp.sqrt(n0)
    ee = sigma * zx
    stat = -4 * eta * (aa - bb) * (ee - bb)
    m, v = _mean_var(stat, [z0, z1, zx])
    return {"mean_out": sp.simplify(d * m), "var_out": sp.factor(d * v)}


@functools.cache
def b4_in_mean() -> sp.Expr:
    r""":math:`\mathbb E[d_{\mathrm{IN}}\mid x]` with :math:`x \in D_1`, :math:`\|x-\mu\|^2 = a^2`:
    :math:`-4\eta(d\sigma^2/n_0 + a^2/n_1)` (one coordinate carries :math:`a`, the rest are
    summed as :math:`d` i.i.d. coordinates with :math:`x` at its mean -- only the mean is used).

    Returns
    -------
    sympy.Expr
        The conditional mean.
    """
    z0, zr = sp.symbols("Z0 Zr", real=True)
    bb = sigma * z0 / sp.sqrt(n0)
    # coordinate along x - mu: mu_up - mu = a/n1 + sigma sqrt(n1-1) Zr / n1
    aa = a / n1 + sigma * sp.sqrt(n1 - 1) * zr / n1
    along = gaussian_expectation(-4 * eta * (aa - bb) * (a - bb), [z0, zr])
    # other coordinates: x - mu = 0 there, mu_up - mu has no target component
    z1 = sp.Symbol("Z1", real=True)
    other = gaussian_expectation(-4 * eta * (sigma * z1 / sp.sqrt(n1) - bb) * (-bb), [z0, z1])
    return sp.simplify(along + (d - 1) * other)


@functools.cache
def b4_in_var() -> sp.Expr:
    r""":math:`\mathrm{Var}[d_{\mathrm{IN}}\mid x]` with :math:`\|x-\mu\| = a` (isotropy: put
    :math:`x-\mu = a e_1`; the other :math:`d-1` coordinates of :math:`x-\mu` are 0).

    Returns
    -------
    sympy.Expr
        The conditional variance.
    """
    z0, zr, z1 = sp.symbols("Z0 Zr Z1", real=True)
    bb = sigma * z0 / sp.sqrt(n0)
    along = -4 * eta * (a / n1 + sigma * sp.sqrt(n1 - 1) * zr / n1 - bb) * (a - bb)
    other = -4 * eta * (sigma * sp.sqrt(n1 - 1) * z1 / n1 - bb) * (-bb)
    v = (_mean_var(along, [z0, zr])[1] + (d - 1) * _mean_var(other, [z0, z1])[1])
    return sp.factor(sp.simplify(v))


@functools.cache
def b4_constants() -> dict[str, sp.Expr]:
    r"""Chebyshev constants of Thm B.4: :math:`C = n_1\mathrm{Var}/(d\eta^2\sigma^4)`;
    ``C_out`` exact, ``C_in`` at the upper end :math:`a^2 = 5d\sigma^2` of the proof's event
    (the variance grows with :math:`a`).

    Returns
    -------
    dict of str to sympy.Expr
        ``C_out`` and ``C_in``.
    """
    c_out = sp.simplify(n1 * b4_out_moments()["var_out"] / (d * eta**2 * sigma**4))
    c_in = sp.simplify((n1 * b4_in_var() / (d * eta**2 * sigma**4)).subs(a**2, 5 * d * sigma**2))
    c_in = sp.simplify(c_in.subs(a, sp.sqrt(5 * d) * sigma))
    return {"C_out": sp.factor(c_out), "C_in": sp.factor(c_in)}


@register("upd_b4_chebyshev")
def upd_b4_chebyshev() -> Derivation:
    r"""Thm B.4: per-class accuracy of the midpoint threshold by Chebyshev,
    :math:`1 - \mathrm{Var}/\delta^2` with :math:`\delta = d\eta\sigma^2/(2n_1)` (half the
    mean gap at :math:`\|x-\mu\|^2 = d\sigma^2/4`) and :math:`\mathrm{Var} = Cd\eta^2\sigma^4/n_1`.

    Returns
    -------
    Derivation
        ``upd_b4_chebyshev`` (combining_mi_updates App. B.3, proof of Thm B.4 (Chebyshev step)): the
        expression in :math:`C, d, n_{1}` (the argument order of ``lambdify``); differs from the
        seed's printed form (see its note). Holds when: Var[d] < C d eta^2 sigma^4 / n1; ||x -
        mu||^2 >= d sigma^2 / 4.
    """
    C = sp.Symbol("C", positive=True)
    delta = d * eta * sigma**2 / (2 * n1)
    expr = sp.simplify(1 - C * d * eta**2 * sigma**4 / n1 / delta**2)
    return Derivation(
        name="upd_b4_chebyshev", expr=expr, symbols=(C, d, n1),
        source="combining_mi_updates App. B.3, proof of Thm B.4 (Chebyshev step)",
        assumptions=("Var[d] < C d eta^2 sigma^4 / n1", "||x - mu||^2 >= d sigma^2 / 4"),
        seed_form=1 - 8 * C * n1 / d,
        note="Chebyshev with k = delta/sd = sqrt(d/(4 C n1)) gives 1 - 4 C n1/d; the seed uses "
             "k = sqrt(d/(8 C n1)), a valid but twice looser bound (its K = 80 max C follows "
             "from its own chain; K = 40 max C suffices).",
        lhs=r"\underline{\mathrm{Acc}}", display=dev(1, frac(mul(4, C, n1), d)))


@register("upd_b4_var_out")
def upd_b4_var_out() -> Derivation:
    """Theorem B.4 proof: Var[d_OUT] (derived; the seed's is larger).

    Returns
    -------
    Derivation
        ``upd_b4_var_out`` (combining_mi_updates App. B.3, proof of Thm B.4): the expression in
        :math:`d, \\eta, \\sigma, n_{0}, n_{1}` (the argument order of ``lambdify``); differs from the
        seed's printed form (see its note). Holds when: f0 = mean of D0; one SGD-New step on the
        l2^2 loss; x OUT of D1.
    """
    seed = 32 * d * eta**2 * sigma**4 * (n1 + 2 * n0**2 + 2 * n1 * n0 + 2 * n0) / (n0**2 * n1)
    return Derivation(
        name="upd_b4_var_out", expr=b4_out_moments()["var_out"], symbols=(d, eta, sigma, n0, n1),
        source="combining_mi_updates App. B.3, proof of Thm B.4",
        assumptions=("f0 = mean of D0", "one SGD-New step on the l2^2 loss", "x OUT of D1"),
        seed_form=seed,
        note="<x, y> of independent N(0, s^2 I), N(0, t^2 I) is st/2 (X - Y) with X, Y ~ chi2_d, "
             "not st (X - Y): the seed's three cross terms are 4x too large (conservative).",
        lhs=r"\mathrm{Var}[d_{\mathrm{OUT}}]",
        display=mul(16, d, sq(eta), sigma**4, add(frac(1, n1), frac(1, n0), frac(1, mul(n0, n1)),
                                                  frac(2, sq(n0)))))


@register("upd_b4_mean_gap")
def upd_b4_mean_gap() -> Derivation:
    """Theorem B.4 proof: E[d_OUT] - E[d_IN | x] = 4 eta ||x - mu||^2 / n1 (derived).

    Returns
    -------
    Derivation
        ``upd_b4_mean_gap`` (combining_mi_updates App. B.3, proof of Thm B.4): the expression in
        :math:`\\eta, a, n_{1}` (the argument order of ``lambdify``); proven equal to the seed's
        printed form. Holds when: f0 = mean of D0; one SGD-New step on the l2^2 loss.
    """
    return Derivation(
        name="upd_b4_mean_gap", expr=sp.simplify(b4_out_moments()["mean_out"] - b4_in_mean()),
        symbols=(eta, a, n1), source="combining_mi_updates App. B.3, proof of Thm B.4",
        assumptions=("f0 = mean of D0", "one SGD-New step on the l2^2 loss"),
        seed_form=4 * eta * a**2 / n1, note="Matches the seed.",
        lhs=r"\mathbb{E}[d_{\mathrm{OUT}}]-\mathbb{E}[d_{\mathrm{IN}}]",
        display=frac(mul(4, eta, sq(a)), n1))


# ---------------------------------------------------------------------------------------------
# Theorem 4.1 and the DP conversion of §5.7
# ---------------------------------------------------------------------------------------------

def thm41_optimal_accuracy(pu, pt) -> tuple[float, float]:
    r"""Best accuracy (balanced prior) from binary attack outputs, exact enumeration.

    ``pu``, ``pt``: 2x2 tables :math:`p_{ij}` = P(:math:`\mathcal A(f_0)=i`,
    :math:`\mathcal A(f_1)=j`) for update and test points (index 1 = IN). Returns
    ``(acc_both, acc_f1_only)``: the maxima over all :math:`2^4` decision rules on
    :math:`(\mathcal A(f_0), \mathcal A(f_1))` and all :math:`2^2` rules on
    :math:`\mathcal A(f_1)`.

    Parameters
    ----------
    pu : array_like, shape (2, 2)
        Joint law of the attack outputs on update points.
    pt : array_like, shape (2, 2)
        The same on test points.

    Returns
    -------
    acc_both, acc_f1_only : float
        The best accuracies.
    """
    pu, pt = np.asarray(pu, float), np.asarray(pt, float)
    best_both = 0.0
    for rule in itertools.product((0, 1), repeat=4):
        r = np.asarray(rule).reshape(2, 2)
        best_both = max(best_both, 0.5 * ((pu * r).sum() + (pt * (1 - r)).sum()))
    cu, ct = pu.sum(0), pt.sum(0)
    best_one = max(0.5 * ((cu * np.asarray(r1)).sum() + (ct * (1 - np.asarray(r1))).sum())
                   for r1 in itertools.product((0, 1), repeat=2))
    return best_both, best_one


@functools.cache
def precision_epsilon() -> dict[str, sp.Expr]:
    r"""§5.7: precision bound of an :math:`\varepsilon`-DP test and its inversion (derived).

    Balanced prior, :math:`P(\hat b=1\mid b=1) \le e^\varepsilon P(\hat b=1\mid b=0)` gives
    :math:`p = \frac{\mathrm{TPR}}{\mathrm{TPR}+\mathrm{FPR}} \le \frac{e^\varepsilon}{1+e^\varepsilon}`;
    solving for :math:`\varepsilon`: :math:`\varepsilon \ge \log\frac{p}{1-p}`.

    Returns
    -------
    dict of str to sympy.Expr
        ``precision_bound`` and ``epsilon_from_precision``.
    """
    bound = sp.exp(eps) / (1 + sp.exp(eps))
    inv = sp.solve(sp.Eq(prec, bound), eps)
    return {"precision_bound": bound, "epsilon_from_precision": sp.simplify(inv[0])}


@register("upd_dp_epsilon_from_precision")
def upd_dp_epsilon_from_precision() -> Derivation:
    """§5.7: epsilon lower bound from a precision p (derived: log(p/(1-p))).

    Returns
    -------
    Derivation
        ``upd_dp_epsilon_from_precision`` (combining_mi_updates §5.7 (auditing DP)): the expression
        in :math:`p` (the argument order of ``lambdify``); differs from the seed's printed form (see
        its note). Holds when: pure epsilon-DP (delta = 0); balanced prior on b.
    """
    return Derivation(
        name="upd_dp_epsilon_from_precision", expr=precision_epsilon()["epsilon_from_precision"],
        symbols=(prec,), source="combining_mi_updates §5.7 (auditing DP)",
        assumptions=("pure epsilon-DP (delta = 0)", "balanced prior on b"),
        seed_form=prec / (1 - prec),
        note="The seed drops the logarithm: 'epsilon is lower bounded by p/(1-p)'.",
        lhs=r"\underline{\varepsilon}", display=sp.log(frac(prec, dev(1, prec))))


#: Derivations whose derived form differs from the seed's printed one (errata), and those the
#: seed prints no formula for; the symbolic tests read these sets.
EXPECTED_DIFFERENT = {"upd_b3_bound", "upd_b1_condition_rhs", "upd_b4_var_out",
                      "upd_b4_chebyshev", "upd_dp_epsilon_from_precision"}
EXPECTED_NO_SEED = {"upd_b3_var_ratio"}

r"""Type I/II errors of the quadratic log-LR tests (SeMI seed Lemmas 3.5-3.8, B.4-B.6).

The acceptance region :math:`\{\log\mathrm{LR} \ge \gamma\}` is solved symbolically:

* **d-dim.** The derived Theorem 3.1 is completed to a square,
  :math:`\log\mathrm{LR} = \gamma_{\max} - k\,(\mathbf N-\boldsymbol\delta)^\top\Sigma^{-1}
  (\mathbf N-\boldsymbol\delta)` with :math:`k = -\partial \log\mathrm{LR}/\partial q`, so the
  region is the ellipsoid :math:`\{u \le R^2(\gamma)\}`, :math:`R^2 = (\gamma_{\max}-\gamma)/k`.
  Under :math:`H_h`, :math:`\mathbf N \sim \mathcal N(a_h\boldsymbol\delta, s_h\Sigma)`
  (:math:`a_0=0, s_0=1/n`; :math:`a_1=1/n, s_1=(n-1)/n^2`, seed Lemma B.4); whitening with the
  Cholesky factor of :math:`\Sigma` gives :math:`u/s_h \sim \chi^2_d((a_h-1)^2 m^*/s_h)` for any
  positive-definite :math:`\Sigma` (see claim ``semi_sequential_mi:corB.6``).
* **1-D.** The two roots of the quadratic in :math:`\bar X_\tau` are solved for and the normal
  probabilities of the interval taken (the seed's :math:`\Phi` form).

Final Observation with stationary :math:`(\mu, \Sigma)` uses the same formulas with
:math:`n \to N_T = \sum_t n_t` (``nT`` for a fixed batch size), see ``fo_*`` and
``em_final_log_lr``; with per-step parameters use ``em_log_lr_step`` (errors depend only on
:math:`(n_\tau, m^*_\tau)`).
"""

from __future__ import annotations

import functools

import sympy as sp

from semi_core.symbolic._core import is_zero, tidy

from . import _symbols as S
from ._core import Derivation, NcChi2CDF, NcChi2PPF, NcChi2SF, Phi, group_log_ratio, register
from ._display import add, dev, frac, mul, neg, root, sq
from .empirical_mean import (
    _batch_mean_laws,
    affine_moments,
    display_log_ratio,
    em_final_log_lr_1d,
    em_log_lr,
    em_log_lr_1d,
    final_conditionals_1d,
)

__all__ = [
    "complete_square",
    "interval_errors_1d",
    "em_gamma_max",
    "em_R2",
    "em_alpha",
    "em_beta",
    "em_threshold",
    "em_alpha_1d",
    "em_beta_1d",
    "em_gamma_max_1d",
    "em_root_lo_1d",
    "em_root_hi_1d",
    "fo_alpha_1d",
    "fo_beta_1d",
    "fo_gamma_max_1d",
    "fo_root_lo_1d",
    "fo_root_hi_1d",
]

_pos = sp.Symbol("s_pos", positive=True)   # |z* - mu| for the sign cases
_n1 = sp.Symbol("n_1", positive=True)       # n = 1 + n_1 (n > 1)
_g = sp.Symbol("g_pos", positive=True)      # gamma = gamma_max - g (below the maximum)


def _cases(nn):
    """Proof cases: sign of z* - mu, n > 1, gamma < gamma_max (nn is n or N_T)."""
    out = []
    for sign in (1, -1):
        gmax = (_pos**2 / S.sigma**2 - sp.log(_n1 / (1 + _n1))) / 2
        out.append({S.z: S.mu + sign * _pos, nn: 1 + _n1, S.gamma: gmax - _g})
    return tuple(out)


SIGN_CASES = _cases(S.n)
FO_CASES = _cases(S.N_T)


# ---------------------------------------------------------------------------------------------
# d-dim: complete the square
# ---------------------------------------------------------------------------------------------


def complete_square(llr=None):
    r"""Return ``(k, gamma_max)`` with ``llr = gamma_max - k * (q - 2 ell + m)``.

    Raises if the remainder still depends on ``q`` or ``ell`` (i.e. the square is not complete).

    Parameters
    ----------
    llr : sympy.Expr, optional
        The log-LR in ``q``, ``ell``, ``m``; None = the empirical-mean log-LR.

    Returns
    -------
    k, gamma_max : sympy.Expr
        The coefficient and the maximum.
    """
    llr = em_log_lr().expr if llr is None else llr
    k = sp.factor(-sp.diff(llr, S.q))
    rest = sp.simplify(llr + k * (S.q - 2 * S.ell + S.m))
    if rest.has(S.q) or rest.has(S.ell):
        raise AssertionError(f"square not complete: remainder {rest}")
    return k, rest


def _hypothesis_laws():
    r"""``(a_h, s_h)`` with :math:`\mathbf N \mid H_h \sim \mathcal N(a_h\delta, s_h\Sigma)`."""
    (x0, law0), (x1, law1) = _batch_mean_laws(S.n, S.mu, sp.Integer(1), S.z)
    out = []
    for x, law in ((x0, law0), (x1, law1)):
        mean, var = affine_moments(x - S.mu, law)
        a = sp.factor(sp.simplify(mean.subs(S.z, S.mu + 1)))  # mean per unit of delta
        out.append((a, var))
    return out


def _slack_display():
    r""":math:`\tfrac{m^*}{2} - \gamma - \tfrac d2\log\tfrac{n-1}{n}` (display)."""
    return add(frac(S.m, 2), neg(S.gamma), neg(mul(frac(S.d, 2), display_log_ratio(S.n))))


def _gamma_max_display():
    return add(frac(S.m, 2), neg(mul(frac(S.d, 2), display_log_ratio(S.n))))


def _gamma_max_expr():
    return _tidy_gmax(complete_square()[1])


def _tidy_gmax(expr):
    return tidy(expr, [S.m])


@register("em_gamma_max")
def em_gamma_max() -> Derivation:
    r""":math:`\gamma_{\max} = \max_{\mathbf N}\log\mathrm{LR}_\tau` (errors vanish above it).

    Returns
    -------
    Derivation
        ``em_gamma_max`` (semi_sequential_mi App. B.3 Lemma B.5 (Lemma 3.5 for d = 1)): the
        expression in :math:`m, n, d` (the argument order of ``lambdify``); proven equal to the
        seed's printed form. Holds when: n >= 2.
    """
    seed = (S.m - S.d * sp.log((S.n - 1) / S.n)) / 2
    return Derivation(
        name="em_gamma_max",
        expr=_gamma_max_expr(),
        symbols=(S.m, S.n, S.d),
        source="semi_sequential_mi App. B.3 Lemma B.5 (Lemma 3.5 for d = 1)",
        assumptions=("n >= 2",),
        seed_form=seed,
        note="Constant left after completing the square in the derived Thm 3.1.",
        lhs=r"\gamma_{\max}",
        display=_gamma_max_display(),
    )


@register("em_R2")
def em_R2() -> Derivation:
    r"""Radius :math:`R^2(\gamma)` of the acceptance ellipsoid in the :math:`\Sigma^{-1}` metric.

    Returns
    -------
    Derivation
        ``em_R2`` (semi_sequential_mi App. B.3 Lemma B.5): the expression in :math:`\gamma, m, n, d`
        (the argument order of ``lambdify``); differs from the seed's printed form (see its note).
        Holds when: gamma <= gamma_max; n >= 2.
    """
    k, gmax = complete_square()
    expr = group_log_ratio((gmax - S.gamma) / k, S.n - 1, S.n)
    expr = sp.collect(expr, [S.gamma, S.m, S.d], func=lambda c: sp.factor(c, deep=False))
    seed = 2 * (S.n - 1) / S.n * (S.n**2 * S.m / 2 - S.gamma - S.d / 2 * sp.log((S.n - 1) / S.n))
    return Derivation(
        name="em_R2",
        expr=expr,
        symbols=(S.gamma, S.m, S.n, S.d),
        source="semi_sequential_mi App. B.3 Lemma B.5",
        assumptions=("gamma <= gamma_max", "n >= 2"),
        seed_form=seed,
        note="SEED ERRATUM: Lemma B.5 prints n^2 m*/2 where completing the square gives m*/2; "
             "see claim semi_sequential_mi:lemB.5 (`semi-core verify`).",
        lhs=r"R^{2}(\gamma)",
        display=mul(frac(mul(2, dev(S.n, 1)), S.n), _slack_display()),
    )


def _alpha_beta_exprs():
    R2 = em_R2().expr
    (a0, s0), (a1, s1) = _hypothesis_laws()
    lam0 = sp.factor((a0 - 1) ** 2 * S.m / s0)
    lam1 = sp.factor((a1 - 1) ** 2 * S.m / s1)
    arg0 = sp.collect(group_log_ratio(R2 / s0, S.n - 1, S.n), [S.gamma, S.m, S.d], func=sp.factor)
    arg1 = sp.collect(group_log_ratio(R2 / s1, S.n - 1, S.n), [S.gamma, S.m, S.d], func=sp.factor)
    alpha = NcChi2CDF(arg0, S.d, lam0)
    beta = NcChi2SF(arg1, S.d, lam1)
    return alpha, beta, (s0, lam0), (s1, lam1)


@register("em_alpha")
def em_alpha() -> Derivation:
    r"""Type I error :math:`\alpha(\gamma) = F_{\chi^2_d(n m^*)}(n R^2(\gamma))`.

    Returns
    -------
    Derivation
        ``em_alpha`` (semi_sequential_mi App. B.3 Lemma B.5 / Cor B.6 (Lemma 3.5 for d = 1)): the
        expression in :math:`\gamma, m, n, d` (the argument order of ``lambdify``); differs from the
        seed's printed form (see its note). Holds when: gamma <= gamma_max (alpha = 0 above); any
        positive-definite Sigma.
    """
    alpha = _alpha_beta_exprs()[0]
    seed_R2 = em_R2().seed_form
    seed = NcChi2CDF(S.n * seed_R2, S.d, S.n * S.m)
    return Derivation(
        name="em_alpha",
        expr=alpha,
        symbols=(S.gamma, S.m, S.n, S.d),
        source="semi_sequential_mi App. B.3 Lemma B.5 / Cor B.6 (Lemma 3.5 for d = 1)",
        assumptions=("gamma <= gamma_max (alpha = 0 above)", "any positive-definite Sigma"),
        seed_form=seed,
        note="Any positive-definite Sigma (Cholesky whitening); differs from the seed through "
             "Lemma B.5's R^2: see claims semi_sequential_mi:lemB.5, semi_sequential_mi:corB.6.",
        lhs=r"\alpha(\gamma)",
        display=NcChi2CDF(mul(2, dev(S.n, 1), _slack_display()), S.d, mul(S.n, S.m)),
    )


@register("em_beta")
def em_beta() -> Derivation:
    r"""Type II error :math:`\beta(\gamma) = 1 - F_{\chi^2_d((n-1)m^*)}(n^2R^2/(n-1))`.

    Returns
    -------
    Derivation
        ``em_beta`` (semi_sequential_mi App. B.3 (Lemma B.4; Lemma 3.6 for d = 1)): the expression
        in :math:`\gamma, m, n, d` (the argument order of ``lambdify``); the seed prints no form of
        it. Holds when: gamma <= gamma_max (beta = 1 above); any positive-definite Sigma.
    """
    beta = _alpha_beta_exprs()[1]
    return Derivation(
        name="em_beta",
        expr=beta,
        symbols=(S.gamma, S.m, S.n, S.d),
        source="semi_sequential_mi App. B.3 (Lemma B.4; Lemma 3.6 for d = 1)",
        assumptions=("gamma <= gamma_max (beta = 1 above)", "any positive-definite Sigma"),
        seed_form=None,
        note="Not stated by the seed for d > 1; derived from Lemma B.4's H1 law of N. "
             "Evaluated as the ncx2 survival function (tail), not 1 - CDF.",
        lhs=r"\beta(\gamma)",
        display=NcChi2SF(mul(2, S.n, _slack_display()), S.d, mul(dev(S.n, 1), S.m)),
    )


@register("em_threshold")
def em_threshold() -> Derivation:
    r"""Threshold :math:`\gamma(p)` with :math:`\alpha(\gamma) = p` (closed form via the quantile).

    Returns
    -------
    Derivation
        ``em_threshold`` (semi_sequential_mi App. B.3 (inverse of Cor B.6)): the expression in
        :math:`p, m, n, d` (the argument order of ``lambdify``); the seed prints no form of it.
        Holds when: 0 < p < 1.
    """
    (a0, s0), _ = _hypothesis_laws()
    R2 = em_R2().expr
    Q = sp.Symbol("Q", nonnegative=True)
    sol = sp.solve(sp.Eq(R2 / s0, Q), S.gamma)
    if len(sol) != 1:
        raise AssertionError(f"expected one threshold, got {sol}")
    lam0 = sp.factor((a0 - 1) ** 2 * S.m / s0)
    solved = sol[0].subs(Q, NcChi2PPF(S.p, S.d, lam0))
    # Display as gamma_max + coef * quantile, proven equal to the solved form.
    coef = sp.factor(sp.diff(sol[0], Q))
    expr = _gamma_max_expr() + coef * NcChi2PPF(S.p, S.d, lam0)

    if not is_zero(expr - solved):
        raise AssertionError("threshold display form differs from the solved threshold")
    return Derivation(
        name="em_threshold",
        expr=expr,
        symbols=(S.p, S.m, S.n, S.d),
        source="semi_sequential_mi App. B.3 (inverse of Cor B.6)",
        assumptions=("0 < p < 1",),
        seed_form=None,
        note="alpha is decreasing in gamma, so alpha(gamma(p)) = p; gamma(p) <= gamma_max.",
        lhs=r"\gamma(p)",
        display=add(*_gamma_max_display().args,
                    neg(frac(NcChi2PPF(S.p, S.d, mul(S.n, S.m)), mul(2, dev(S.n, 1))))),
    )


# ---------------------------------------------------------------------------------------------
# 1-D: roots and Phi form
# ---------------------------------------------------------------------------------------------


def interval_errors_1d(llr, x, center, law0, law1):
    r"""Roots and Phi-form errors of a concave quadratic log-LR in a scalar ``x``.

    Parameters
    ----------
    llr : sympy.Expr
        Quadratic in ``x`` with negative leading coefficient.
    x : sympy.Symbol
    center : sympy.Expr
        Where the deviation is measured from (roots are returned as ``x - center``).
    law0, law1 : tuple
        ``(mean, variance)`` of ``x`` under H0 and H1.

    Returns
    -------
    dict with ``lo``, ``hi`` (roots minus center), ``gamma_max``, ``alpha``, ``beta``.
    """

    t = sp.Symbol("t_dev", real=True)
    poly = sp.Poly(sp.expand(llr.subs(x, center + t)), t)
    c2, c1, c0 = poly.all_coeffs()
    vertex = sp.factor(sp.simplify(-c1 / (2 * c2)))
    gmax = sp.simplify(llr.subs(x, center + vertex))
    roots = sp.solve(sp.Eq(c2 * t**2 + c1 * t + c0, S.gamma), t)
    if len(roots) != 2:
        raise AssertionError(f"expected two roots, got {roots}")
    # Readable half-width sqrt((gamma_max - gamma) / (-c2)), proven equal to the solved one
    # (squares compared, both non-negative), and the midpoint equal to the vertex.
    gmax_tidy = tidy(sp.expand(sp.expand_log(gmax, force=True)), [S.z], center={S.z: S.mu})
    root_k = sp.sqrt(sp.factor(-1 / c2))
    slack = sp.sqrt(gmax_tidy - S.gamma)
    half = root_k * slack
    half_solved = (roots[1] - roots[0]) / 2
    if not is_zero(sp.expand(half**2 - half_solved**2)):
        raise AssertionError("half-width of the acceptance interval does not match the roots")
    if not is_zero(sp.expand((roots[1] + roots[0]) / 2 - vertex)):
        raise AssertionError("midpoint of the roots is not the vertex")
    lo, hi = vertex - half, vertex + half
    (mean0, var0), (mean1, var1) = law0, law1
    sd0, sd1 = sp.sqrt(var0), sp.sqrt(var1)

    def arg(shift, sign, sd):
        # standardized root: (centre + vertex +/- half - mean) / sd, kept in two readable parts
        return sp.factor(sp.simplify(shift / sd)) + sign * sp.simplify(root_k / sd) * slack

    alpha = (Phi(arg(center + vertex - mean0, 1, sd0))
             - Phi(arg(center + vertex - mean0, -1, sd0)))
    beta = (Phi(arg(center + vertex - mean1, -1, sd1))
            + Phi(-arg(center + vertex - mean1, 1, sd1)))
    return {"lo": lo, "hi": hi, "gamma_max": gmax, "alpha": alpha, "beta": beta}


@functools.cache
def _em_1d():
    n, mu, sigma, z = S.n, S.mu, S.sigma, S.z
    (x0, law0), (x1, law1) = _batch_mean_laws(n, mu, sigma, z)
    l0 = affine_moments(x0, law0)
    l1 = affine_moments(x1, law1)
    return interval_errors_1d(em_log_lr_1d().expr, S.xbar, mu, l0, l1)


@functools.cache
def _fo_1d():
    m0, v0, m1, v1 = final_conditionals_1d(stationary=True)
    return interval_errors_1d(em_final_log_lr_1d().expr, S.W, S.mu, (m0, v0), (m1, v1))


def _seed_1d(nn):
    """Seed Lemmas 3.5/3.6 (nn = n) and 3.7/3.8 (nn = nT = N_T), transcribed."""
    m = (S.z - S.mu) ** 2 / S.sigma**2
    a = sp.sqrt(m * nn)
    b = sp.sqrt((nn - 1) * (m - sp.log(1 - 1 / nn) - 2 * S.gamma))
    alpha = Phi(a + b) - Phi(a - b)
    beta = (Phi(a * sp.sqrt((nn - 1) / nn) - b * sp.sqrt(nn / (nn - 1)))
            + Phi(-a * sp.sqrt((nn - 1) / nn) - b * sp.sqrt(nn / (nn - 1))))
    gmax = (m - sp.log((nn - 1) / nn)) / 2
    return alpha, beta, gmax


_SYMS_1D = (S.gamma, S.n, S.mu, S.sigma, S.z)
_SYMS_FO = (S.gamma, S.N_T, S.mu, S.sigma, S.z)


def _display_1d(kind: str, nn):
    r"""Seed-style 1-D forms with :math:`K = \tfrac{(z^*-\mu)^2}{\sigma^2} - \log\tfrac{n-1}{n}
    - 2\gamma` (``nn`` is ``n`` or ``N_T``)."""
    z, mu, sigma = S.z, S.mu, S.sigma
    K = add(frac(sq(dev(z, mu)), sigma**2), neg(display_log_ratio(nn)), neg(mul(2, S.gamma)))
    if kind == "alpha":
        a, b = frac(mul(root(nn), dev(z, mu)), sigma), root(mul(dev(nn, 1), K))
        return add(Phi(add(a, b)), neg(Phi(dev(a, b))))
    if kind == "beta":
        a, b = frac(mul(root(dev(nn, 1)), dev(z, mu)), sigma), mul(root(nn), root(K))
        return add(Phi(dev(a, b)), Phi(add(neg(a), neg(b))))
    if kind == "gamma_max":
        return add(frac(sq(dev(z, mu)), mul(2, sigma**2)), neg(frac(display_log_ratio(nn), 2)))
    half_width = mul(sigma, root(frac(dev(nn, 1), nn)), root(K))
    return add(z, neg(mu), neg(half_width) if kind == "root_lo" else half_width)


def _d1(name, expr, syms, source, seed, note, lhs, assumptions=()):
    cases = FO_CASES if S.N_T in syms else SIGN_CASES
    nn = S.N_T if S.N_T in syms else S.n
    kind = name.removeprefix("em_").removeprefix("fo_").removesuffix("_1d")
    return Derivation(name=name, expr=expr, symbols=tuple(s for s in syms
                                                          if s in expr.free_symbols),
                      source=source, assumptions=("stationary N(mu, sigma^2)", *assumptions),
                      seed_form=seed, note=note, lhs=lhs, cases=cases,
                      display=_display_1d(kind, nn))


@register("em_alpha_1d")
def em_alpha_1d() -> Derivation:
    r"""Lemma 3.5: :math:`\alpha(\gamma) = \Phi(a+b) - \Phi(a-b)` from the roots of Thm 3.4.

    Returns
    -------
    Derivation
        ``em_alpha_1d`` (semi_sequential_mi §3.1 Lemma 3.5): the expression in :math:`\gamma, n,
        \mu, \sigma, z` (the argument order of ``lambdify``); proven equal to the seed's printed
        form. Holds when: stationary N(mu, sigma^2); gamma <= gamma_max.
    """
    return _d1("em_alpha_1d", _em_1d()["alpha"], _SYMS_1D, "semi_sequential_mi §3.1 Lemma 3.5",
               _seed_1d(S.n)[0], "Normal mass of the root interval under H0; equals em_alpha at "
               "d = 1.", r"\alpha(\gamma)", ("gamma <= gamma_max",))


@register("em_beta_1d")
def em_beta_1d() -> Derivation:
    r"""Lemma 3.6: Type II error from the roots of Thm 3.4 under H1.

    Returns
    -------
    Derivation
        ``em_beta_1d`` (semi_sequential_mi §3.1 Lemma 3.6): the expression in :math:`\gamma, n, \mu,
        \sigma, z` (the argument order of ``lambdify``); proven equal to the seed's printed form.
        Holds when: stationary N(mu, sigma^2); gamma <= gamma_max.
    """
    return _d1("em_beta_1d", _em_1d()["beta"], _SYMS_1D, "semi_sequential_mi §3.1 Lemma 3.6",
               _seed_1d(S.n)[1], "Normal mass outside the root interval under H1; equals "
               "em_beta at d = 1.", r"\beta(\gamma)", ("gamma <= gamma_max",))


@register("em_gamma_max_1d")
def em_gamma_max_1d() -> Derivation:
    r"""Lemma 3.5: maximum of the 1-D log-LR over :math:`\bar X_\tau`.

    Returns
    -------
    Derivation
        ``em_gamma_max_1d`` (semi_sequential_mi §3.1 Lemma 3.5): the expression in :math:`n, \mu,
        \sigma, z` (the argument order of ``lambdify``); proven equal to the seed's printed form.
        Holds when: stationary N(mu, sigma^2).
    """
    return _d1("em_gamma_max_1d", _tidy_1d(_em_1d()["gamma_max"]), _SYMS_1D,
               "semi_sequential_mi §3.1 Lemma 3.5", _seed_1d(S.n)[2],
               "Value of Thm 3.4 at its vertex.", r"\gamma_{\max}")


def _tidy_1d(expr):
    return tidy(sp.expand(sp.expand_log(expr, force=True)), [S.z], center={S.z: S.mu})


def _seed_roots(nn, scale_center, scale_half):
    S_ = (S.z - S.mu) ** 2 / S.sigma**2 - sp.log((nn - 1) / nn) - 2 * S.gamma
    return ((S.z - S.mu) * scale_center - scale_half * sp.sqrt(S_),
            (S.z - S.mu) * scale_center + scale_half * sp.sqrt(S_))


@register("em_root_lo_1d")
def em_root_lo_1d() -> Derivation:
    r"""Lower root of :math:`\log\mathrm{LR}_\tau = \gamma` in :math:`\bar X_\tau - \mu`.

    Returns
    -------
    Derivation
        ``em_root_lo_1d`` (semi_sequential_mi App. A.3 (proof of Lemma 3.5)): the expression in
        :math:`\gamma, n, \mu, \sigma, z` (the argument order of ``lambdify``); proven equal to the
        seed's printed form. Holds when: stationary N(mu, sigma^2).
    """
    # Seed App. A.3 gives roots in N = (Xbar - mu)/tau; multiplied by tau here.
    seed = _seed_roots(S.n, 1, S.sigma * sp.sqrt(S.n - 1) / sp.sqrt(S.n))[0]
    return _d1("em_root_lo_1d", _em_1d()["lo"], _SYMS_1D,
               "semi_sequential_mi App. A.3 (proof of Lemma 3.5)", seed,
               "Seed roots N_{1,2} are for N = (Xbar - mu)/tau; compared after multiplying by tau.",
               r"\bar{X}_{\tau}^{(1)} - \mu")


@register("em_root_hi_1d")
def em_root_hi_1d() -> Derivation:
    r"""Upper root of :math:`\log\mathrm{LR}_\tau = \gamma` in :math:`\bar X_\tau - \mu`.

    Returns
    -------
    Derivation
        ``em_root_hi_1d`` (semi_sequential_mi App. A.3 (proof of Lemma 3.5)): the expression in
        :math:`\gamma, n, \mu, \sigma, z` (the argument order of ``lambdify``); proven equal to the
        seed's printed form. Holds when: stationary N(mu, sigma^2).
    """
    seed = _seed_roots(S.n, 1, S.sigma * sp.sqrt(S.n - 1) / sp.sqrt(S.n))[1]
    return _d1("em_root_hi_1d", _em_1d()["hi"], _SYMS_1D,
               "semi_sequential_mi App. A.3 (proof of Lemma 3.5)", seed,
               "Seed roots N_{1,2} are for N = (Xbar - mu)/tau; compared after multiplying by tau.",
               r"\bar{X}_{\tau}^{(2)} - \mu")


@register("fo_alpha_1d")
def fo_alpha_1d() -> Derivation:
    r"""Lemma 3.7: Final Observation Type I error (n -> N_T).

    Returns
    -------
    Derivation
        ``fo_alpha_1d`` (semi_sequential_mi §3.1 Lemma 3.7): the expression in :math:`\gamma, N_{T},
        \mu, \sigma, z` (the argument order of ``lambdify``); proven equal to the seed's printed
        form. Holds when: stationary N(mu, sigma^2); gamma <= gamma_max^(T).
    """
    return _d1("fo_alpha_1d", _fo_1d()["alpha"], _SYMS_FO, "semi_sequential_mi §3.1 Lemma 3.7",
               _seed_1d(S.N_T)[0], "Same as Lemma 3.5 with n -> N_T = sum_t n_t (nT).",
               r"\alpha_{\mathrm{FO}}(\gamma)", ("gamma <= gamma_max^(T)",))


@register("fo_beta_1d")
def fo_beta_1d() -> Derivation:
    r"""Lemma 3.8: Final Observation Type II error (n -> N_T).

    Returns
    -------
    Derivation
        ``fo_beta_1d`` (semi_sequential_mi §3.1 Lemma 3.8): the expression in :math:`\gamma, N_{T},
        \mu, \sigma, z` (the argument order of ``lambdify``); proven equal to the seed's printed
        form. Holds when: stationary N(mu, sigma^2); gamma <= gamma_max^(T).
    """
    return _d1("fo_beta_1d", _fo_1d()["beta"], _SYMS_FO, "semi_sequential_mi §3.1 Lemma 3.8",
               _seed_1d(S.N_T)[1], "Same as Lemma 3.6 with n -> N_T = sum_t n_t (nT).",
               r"\beta_{\mathrm{FO}}(\gamma)", ("gamma <= gamma_max^(T)",))


@register("fo_gamma_max_1d")
def fo_gamma_max_1d() -> Derivation:
    r"""Lemma 3.7: :math:`\gamma_{\max}^{(T)}`.

    Returns
    -------
    Derivation
        ``fo_gamma_max_1d`` (semi_sequential_mi §3.1 Lemma 3.7): the expression in :math:`N_{T},
        \mu, \sigma, z` (the argument order of ``lambdify``); proven equal to the seed's printed
        form. Holds when: stationary N(mu, sigma^2).
    """
    return _d1("fo_gamma_max_1d", _tidy_fo(_fo_1d()["gamma_max"]), _SYMS_FO,
               "semi_sequential_mi §3.1 Lemma 3.7", _seed_1d(S.N_T)[2],
               "Value of the Final Observation log-LR at its vertex.", r"\gamma_{\max}^{(T)}")


def _tidy_fo(expr):
    return tidy(sp.expand(sp.expand_log(expr, force=True)), [S.z], center={S.z: S.mu})


@register("fo_root_lo_1d")
def fo_root_lo_1d() -> Derivation:
    r"""Lower root of the Final Observation quadratic in :math:`W = \hat\mu_T - \mu`.

    Returns
    -------
    Derivation
        ``fo_root_lo_1d`` (semi_sequential_mi App. A.5 (proof of Lemma 3.7)): the expression in
        :math:`\gamma, N_{T}, \mu, \sigma, z` (the argument order of ``lambdify``); differs from the
        seed's printed form (see its note). Holds when: stationary N(mu, sigma^2).
    """
    seed = _seed_roots(S.N_T, 1 / S.N_T, S.sigma * sp.sqrt(S.N_T - 1) / S.N_T)[0]
    return _d1("fo_root_lo_1d", _fo_1d()["lo"], _SYMS_FO,
               "semi_sequential_mi App. A.5 (proof of Lemma 3.7)", seed, _FO_ROOT_NOTE,
               r"W^{(1)}")


@register("fo_root_hi_1d")
def fo_root_hi_1d() -> Derivation:
    r"""Upper root of the Final Observation quadratic in :math:`W = \hat\mu_T - \mu`.

    Returns
    -------
    Derivation
        ``fo_root_hi_1d`` (semi_sequential_mi App. A.5 (proof of Lemma 3.7)): the expression in
        :math:`\gamma, N_{T}, \mu, \sigma, z` (the argument order of ``lambdify``); differs from the
        seed's printed form (see its note). Holds when: stationary N(mu, sigma^2).
    """
    seed = _seed_roots(S.N_T, 1 / S.N_T, S.sigma * sp.sqrt(S.N_T - 1) / S.N_T)[1]
    return _d1("fo_root_hi_1d", _fo_1d()["hi"], _SYMS_FO,
               "semi_sequential_mi App. A.5 (proof of Lemma 3.7)", seed, _FO_ROOT_NOTE,
               r"W^{(2)}")


_FO_ROOT_NOTE = (
    "SEED ERRATUM (proof only): App. A.5's roots W_{1,2} are misprinted (centre and half-width; "
    "Lemma 3.7 holds); see claim semi_sequential_mi:appA.5.roots (`semi-core verify`).")

r"""Per-datum membership leakage (``per_datum_leakage`` seed, Azize & Basu): derivations.

Every closed form of the per-datum leakage of the empirical mean is derived here with SymPy and
registered as a :class:`~semi_core.symbolic._core.Derivation` (names ``pdl_*``); the numeric
layer (:mod:`semi_core.stats.leakage`) calls them printed as NumPy code in
:mod:`semi_core.stats._leakage_forms` (no SymPy at run time). After changing a derivation,
regenerate that module with ``python -m semi_core.symbolic._leakage_codegen`` (a test fails
until it matches).

Set-up (seed §3-4). Product data, coordinate :math:`j` with mean :math:`\mu_j`, variance
:math:`\sigma_j^2` and third cumulant :math:`\kappa_{3,j}`; release
:math:`\tilde\mu = \hat\mu_n + N/\sqrt n`, :math:`N\sim\mathcal N(0, C_\gamma)` (seed §4.1);
:math:`\delta_j = z^*_j-\mu_j`, :math:`v_j=\sigma_j^2+\gamma_j^2`.

* **Eq. (10) statistic, exact finite-n cumulants.** With
  :math:`\ell^{\rm app}=\sum_j c_j(\tilde\mu_j-\mu_j)-\tfrac{1}{2n}\sum_j c_j\delta_j`,
  :math:`c_j=\delta_j/v_j`, the statistic is affine in the release, so its mean and variance
  under :math:`H_0`/:math:`H_1` are exact at every ``n`` (``pdl_eq10_*``), and so is its third
  cumulant :math:`\sum_j c_j^3\kappa_3(\hat\mu_j)` (``pdl_eq10_k3_*``: :math:`\kappa_{3,j}/n^2`
  under :math:`H_0`, :math:`(n-1)\kappa_{3,j}/n^3` under :math:`H_1`; Gaussian noise adds none).
  Summed over :math:`d=\tau n` coordinates the means/variances tend to :math:`\mp m^*/2, m^*`
  (Thm 3.1) with an :math:`O(1/n)` gap, and the standardised skewness is :math:`O(1/\sqrt{n})`
  per unit of :math:`\sqrt{m^*}`.
* **Edgeworth correction** (``pdl_edgeworth_cdf``, ``pdl_cornish_fisher``): the one-term
  expansion :math:`F(x)\approx\Phi(u)-\tfrac{\lambda}{6}(u^2-1)\varphi(u)` of a standardised sum
  with skewness :math:`\lambda=\kappa_3/\kappa_2^{3/2}`, derived by integrating the density term
  :math:`\tfrac{\lambda}{6}He_3(u)\varphi(u)`, and its Cornish-Fisher inverse
  :math:`q\approx z+\tfrac{\lambda}{6}(z^2-1)`. The seed's own density term (App. C, Eq. 38)
  misses the factor 1/6 (registered by ``semi_core.claims.per_datum_leakage``).
* **Bernoulli cumulants** (``pdl_bernoulli_k3``): :math:`\kappa_3=p(1-p)(1-2p)` from the
  cumulant generating function :math:`\log(1-p+pe^t)`.
* **Limit laws** :math:`\ell\sim\mathcal N(\mp m/2, m)` give the leakage (TV, Cor 3.2 Eq. 8),
  the Neyman-Pearson threshold and power (Eq. 9) and the GDP curve (``pdl_leakage``,
  ``pdl_threshold``, ``pdl_power``, ``pdl_gdp_delta``).
* **Sub-sampling with one shared inclusion event** (corrected Thm 4.3): the target is in the
  ``k = rho n`` sub-sample with probability :math:`\rho` *for all coordinates at once*, so the
  limit experiment is :math:`P_0=\mathcal N(0,1)` vs
  :math:`P_1=\rho\mathcal N(s,1)+(1-\rho)\mathcal N(0,1)`, :math:`s=\sqrt{m^*/\rho}`. Derived:
  log-LR :math:`\log(1-\rho+\rho e^{sx-s^2/2})` (increasing in ``x``), leakage
  :math:`\rho[2\Phi(s/2)-1]\le\rho`, power :math:`\rho\Phi(\Phi^{-1}(\alpha)+s)+(1-\rho)\alpha`
  and the threshold on the log-LR scale (``pdl_sub_*``). The paper's per-coordinate form
  :math:`\mathcal N(\mp\rho m^*/2,\rho m^*)` is kept as ``pdl_sub_paper_*`` (its approximation).
* **Misspecified target** (Thm 4.5): laws :math:`\mathcal N(-m_t/2, m_t)` vs
  :math:`\mathcal N(m_s-m_t/2, m_t)`; the advantage-optimal threshold is the midpoint
  :math:`(m_s-m_t)/2` (equal densities), the power at :math:`\alpha` is
  :math:`\Phi(\Phi^{-1}(\alpha)+m_s/\sqrt{m_t})` (``pdl_miss_*``).
* **Plug-in LR with an estimated mean** (``pdl_plugin_*``): with :math:`\hat\mu_0` from
  :math:`n_0=\lambda n` fresh reference points per game, the reference error enters both
  hypotheses equally but adds variance :math:`m^*/\lambda`, so the limit experiment is a shift
  :math:`m^*` with variance :math:`m^*(1+1/\lambda)`: effective leakage score
  :math:`m^*\lambda/(1+\lambda)` (the power loss as a function of :math:`n_0/n`).
"""

from __future__ import annotations

import sympy as sp

from ._core import LATEX_NAMES, Derivation, Phi, Phinv, register
from .empirical_mean import affine_moments

__all__ = [
    "PhiInv",
    "eq10_moments",
    "edgeworth_cdf_expr",
    "cornish_fisher_expr",
]

SRC = "per_datum_leakage"


#: The standard normal quantile is the one of the symbolic core (``Phinv``; lambdifies to
#: ``scipy.special.ndtri``); the name ``PhiInv`` is kept for this module's callers.
PhiInv = Phinv

# Symbols (per coordinate unless stated).
n = sp.Symbol("n", positive=True)
n0 = sp.Symbol("n_0", positive=True)
lam = sp.Symbol("lambda_ref", positive=True)          # n0 / n
delta = sp.Symbol("delta_j", real=True)                # z*_j - mu_j
sig2 = sp.Symbol("sigma_j2", positive=True)            # sigma_j^2
gam2 = sp.Symbol("gamma_j2", nonnegative=True)         # gamma_j^2 (noise scaled by 1/sqrt n)
k3 = sp.Symbol("kappa_3j", real=True)                  # third cumulant of D_j
m = sp.Symbol("m", nonnegative=True)                   # leakage score m*
mt = sp.Symbol("m_targ", positive=True)
ms = sp.Symbol("m_scal", real=True)
rho = sp.Symbol("rho", positive=True)
alpha = sp.Symbol("alpha", positive=True)
eps = sp.Symbol("epsilon", nonnegative=True)
x = sp.Symbol("x", real=True)
u = sp.Symbol("u", real=True)
lam3 = sp.Symbol("lambda_3", real=True)                # standardised skewness
pp = sp.Symbol("p_j", positive=True)
LATEX_NAMES.update({"delta_j": r"\delta_{j}", "sigma_j2": r"\sigma_{j}^{2}",
                    "gamma_j2": r"\gamma_{j}^{2}", "kappa_3j": r"\kappa_{3,j}",
                    "m_targ": r"m^{\mathrm{targ}}", "m_scal": r"m^{\mathrm{scal}}",
                    "lambda_ref": r"\lambda", "n_0": r"n_{0}", "p_j": r"p_{j}"})

_X = sp.Symbol("X_H0", real=True)    # mean of n data points under H0 (centred)
_R = sp.Symbol("R_H1", real=True)    # mean of the n-1 random points under H1 (centred)
_N = sp.Symbol("N_noise", real=True)
_E = sp.Symbol("E_ref", real=True)   # reference-mean error mu_hat_0 - mu


def _phi_pdf(t):
    return sp.exp(-t**2 / 2) / sp.sqrt(2 * sp.pi)


# ------------------------------------------------------------------------ Eq. (10) statistic

def eq10_moments():
    r"""Exact per-coordinate mean/variance of the Eq. (10) statistic under H0 and H1.

    Release coordinate (centred): :math:`H_0: X+N/\sqrt n`, :math:`H_1:
    \delta/n+\tfrac{n-1}{n}R+N/\sqrt n` with :math:`\mathrm{Var}X=\sigma^2/n`,
    :math:`\mathrm{Var}R=\sigma^2/(n-1)`, :math:`\mathrm{Var}N=\gamma^2`. Moments of affine
    functions need only first and second moments, so they are exact for any data law.

    Returns
    -------
    tuple of sympy.Expr
        ``((mean0, var0), (mean1, var1))``.
    """
    v = sig2 + gam2
    c = delta / v
    stat = lambda y: c * y - c * delta / (2 * n)  # noqa: E731
    h0 = affine_moments(stat(_X + _N / sp.sqrt(n)), {_X: (0, sig2 / n), _N: (0, gam2)})
    h1 = affine_moments(stat(delta / n + (n - 1) / n * _R + _N / sp.sqrt(n)),
                        {_R: (0, sig2 / (n - 1)), _N: (0, gam2)})
    return h0, h1


def _eq10(name, idx, hyp, lhs, seed_limit, note):
    h = eq10_moments()[hyp][idx]
    return Derivation(name=name, expr=sp.factor(h), symbols=(delta, sig2, gam2, n),
                      source=f"{SRC} §3 Eq. (10), Thm 3.1 (App. C.2); §4.1 (C_sigma + C_gamma)",
                      assumptions=("coordinates independent", "noise N(0, C_gamma)/sqrt(n)"),
                      seed_form=seed_limit, note=note, lhs=lhs)


@register("pdl_eq10_mean0")
def pdl_eq10_mean0() -> Derivation:
    """Mean of one coordinate's Eq. (10) term under H0 (exact).

    Returns
    -------
    Derivation
        ``pdl_eq10_mean0`` (per_datum_leakage §3 Eq. (10), Thm 3.1 (App. C.2); §4.1 (C_sigma +
        C_gamma)): the expression in :math:`\\delta_{j}, \\sigma_{j2}, \\gamma_{j2}, n` (the argument
        order of ``lambdify``); proven equal to the seed's printed form. Holds when: coordinates
        independent; noise N(0, C_gamma)/sqrt(n).
    """
    return _eq10("pdl_eq10_mean0", 0, 0, r"E_0[\ell^{\rm app}_j]",
                 -delta**2 / (2 * n * (sig2 + gam2)), "Exact; sums to -m~*/2.")


@register("pdl_eq10_var0")
def pdl_eq10_var0() -> Derivation:
    """Variance of one coordinate's Eq. (10) term under H0 (exact).

    Returns
    -------
    Derivation
        ``pdl_eq10_var0`` (per_datum_leakage §3 Eq. (10), Thm 3.1 (App. C.2); §4.1 (C_sigma +
        C_gamma)): the expression in :math:`\\delta_{j}, \\sigma_{j2}, \\gamma_{j2}, n` (the argument
        order of ``lambdify``); proven equal to the seed's printed form. Holds when: coordinates
        independent; noise N(0, C_gamma)/sqrt(n).
    """
    return _eq10("pdl_eq10_var0", 1, 0, r"V_0[\ell^{\rm app}_j]",
                 delta**2 / (n * (sig2 + gam2)), "Exact; sums to m~*.")


@register("pdl_eq10_mean1")
def pdl_eq10_mean1() -> Derivation:
    """Mean of one coordinate's Eq. (10) term under H1 (exact).

    Returns
    -------
    Derivation
        ``pdl_eq10_mean1`` (per_datum_leakage §3 Eq. (10), Thm 3.1 (App. C.2); §4.1 (C_sigma +
        C_gamma)): the expression in :math:`\\delta_{j}, \\sigma_{j2}, \\gamma_{j2}, n` (the argument
        order of ``lambdify``); proven equal to the seed's printed form. Holds when: coordinates
        independent; noise N(0, C_gamma)/sqrt(n).
    """
    return _eq10("pdl_eq10_mean1", 0, 1, r"E_1[\ell^{\rm app}_j]",
                 delta**2 / (2 * n * (sig2 + gam2)), "Exact; sums to +m~*/2.")


@register("pdl_eq10_var1")
def pdl_eq10_var1() -> Derivation:
    """Variance of one coordinate's Eq. (10) term under H1 (exact, finite n).

    Returns
    -------
    Derivation
        ``pdl_eq10_var1`` (per_datum_leakage §3 Eq. (10), Thm 3.1 (App. C.2); §4.1 (C_sigma +
        C_gamma)): the expression in :math:`\\delta_{j}, \\sigma_{j2}, \\gamma_{j2}, n` (the argument
        order of ``lambdify``); differs from the seed's printed form (see its note). Holds when:
        coordinates independent; noise N(0, C_gamma)/sqrt(n).
    """
    return _eq10("pdl_eq10_var1", 1, 1, r"V_1[\ell^{\rm app}_j]",
                 delta**2 / (n * (sig2 + gam2)),
                 "Exact: delta^2/(n v) - delta^2 sigma^2/(n^2 v^2); the limit drops the "
                 "O(1/n^2) term (summed over d = tau n coordinates it is O(1/n)).")


def _k3(hyp):
    c = delta / (sig2 + gam2)
    # kappa_3 of a mean of n iid: kappa_3/n^2; of (n-1)/n * mean of n-1: (n-1) kappa_3 / n^3
    return sp.factor(c**3 * (k3 / n**2 if hyp == 0 else (n - 1) * k3 / n**3))


@register("pdl_eq10_k3_0")
def pdl_eq10_k3_0() -> Derivation:
    """Third cumulant of one coordinate's Eq. (10) term under H0 (Edgeworth constant).

    Returns
    -------
    Derivation
        ``pdl_eq10_k3_0`` (per_datum_leakage App. C.3 (Edgeworth, derived here for Eq. 10)): the
        expression in :math:`\\delta_{j}, \\sigma_{j2}, \\gamma_{j2}, \\kappa_{3j}, n` (the argument
        order of ``lambdify``); the seed prints no form of it. Holds when: cumulants add over
        independent summands; Gaussian noise has none.
    """
    return Derivation("pdl_eq10_k3_0", _k3(0), (delta, sig2, gam2, k3, n),
                      f"{SRC} App. C.3 (Edgeworth, derived here for Eq. 10)",
                      ("cumulants add over independent summands; Gaussian noise has none",),
                      lhs=r"\kappa_{3,0}[\ell^{\rm app}_j]",
                      note="kappa_r(sum of n iid / n) = kappa_r / n^(r-1); zero for the "
                           "Gaussian noise.")


@register("pdl_eq10_k3_1")
def pdl_eq10_k3_1() -> Derivation:
    """Third cumulant of one coordinate's Eq. (10) term under H1 (Edgeworth constant).

    Returns
    -------
    Derivation
        ``pdl_eq10_k3_1`` (per_datum_leakage App. C.3 (Edgeworth, derived here for Eq. 10)): the
        expression in :math:`\\delta_{j}, \\sigma_{j2}, \\gamma_{j2}, \\kappa_{3j}, n` (the argument
        order of ``lambdify``); the seed prints no form of it. Holds when: the target's own
        coordinate is deterministic.
    """
    return Derivation("pdl_eq10_k3_1", _k3(1), (delta, sig2, gam2, k3, n),
                      f"{SRC} App. C.3 (Edgeworth, derived here for Eq. 10)",
                      ("the target's own coordinate is deterministic",),
                      lhs=r"\kappa_{3,1}[\ell^{\rm app}_j]")


@register("pdl_bernoulli_k3")
def pdl_bernoulli_k3() -> Derivation:
    """Third cumulant of Bernoulli(p), from its cumulant generating function.

    Returns
    -------
    Derivation
        ``pdl_bernoulli_k3`` (per_datum_leakage §5 (Bernoulli data)): the expression in
        :math:`p_{j}` (the argument order of ``lambdify``); the seed prints no form of it.
    """
    t = sp.Symbol("t", real=True)
    cgf = sp.log(1 - pp + pp * sp.exp(t))
    expr = sp.factor(sp.simplify(sp.diff(cgf, t, 3).subs(t, 0)))
    return Derivation("pdl_bernoulli_k3", expr, (pp,), f"{SRC} §5 (Bernoulli data)",
                      lhs=r"\kappa_{3}(\mathrm{Bern}(p_j))",
                      note="K'''(0) of K(t) = log(1 - p + p e^t).")


# ------------------------------------------------------------------------ Edgeworth

def edgeworth_cdf_expr():
    r"""One-term Edgeworth CDF of a standardised sum: integrate :math:`\varphi(1+\lambda He_3/6)`.

    Returns
    -------
    sympy.Expr
        :math:`F(u)` in the symbols ``u`` and ``lambda``.
    """
    t = sp.Symbol("t", real=True)
    he3 = t**3 - 3 * t
    corr = sp.integrate(lam3 / 6 * he3 * _phi_pdf(t), (t, -sp.oo, u))
    return Phi(u) + sp.simplify(corr)


def cornish_fisher_expr(z):
    r"""Cornish-Fisher quantile to first order: solve :math:`F(q)=\Phi(z)` for
    :math:`q=z+\lambda a(z)` at first order in :math:`\lambda`.

    Parameters
    ----------
    z : sympy.Expr
        The normal quantile.

    Returns
    -------
    sympy.Expr
        :math:`z+\lambda a(z)`.
    """
    a = sp.Symbol("a")
    F = edgeworth_cdf_expr()
    q = z + lam3 * a
    # d/d lambda at 0 of F(q) must vanish (Phi(z) fixed)
    eq = sp.diff(F.subs(u, q).rewrite(sp.erf), lam3).subs(lam3, 0)
    sol = sp.solve(sp.simplify(eq), a)
    return sp.expand(z + lam3 * sp.simplify(sol[0]))


@register("pdl_edgeworth_cdf")
def pdl_edgeworth_cdf() -> Derivation:
    """One-term Edgeworth CDF (standardised), the finite-n correction of Thm 3.1's limit.

    Returns
    -------
    Derivation
        ``pdl_edgeworth_cdf`` (per_datum_leakage App. C.1 Thm C.5 (Petrov), App. C.3 Eq. (38)): the
        expression in :math:`u, \\lambda_{3}` (the argument order of ``lambdify``); the seed prints
        no form of it. Holds when: lambda_3 = kappa_3 / kappa_2^{3/2} small (O(1/sqrt(n))).
    """
    expr = edgeworth_cdf_expr()
    return Derivation("pdl_edgeworth_cdf", expr, (u, lam3),
                      f"{SRC} App. C.1 Thm C.5 (Petrov), App. C.3 Eq. (38)",
                      ("lambda_3 = kappa_3 / kappa_2^{3/2} small (O(1/sqrt(n)))",),
                      lhs=r"F(u)",
                      note="Integral of phi(t)[1 + lambda He_3(t)/6]; the seed's h_1 omits /6.")


@register("pdl_cornish_fisher")
def pdl_cornish_fisher() -> Derivation:
    """First-order Cornish-Fisher quantile (inverse of the Edgeworth CDF).

    Returns
    -------
    Derivation
        ``pdl_cornish_fisher`` (per_datum_leakage App. C (derived here)): the expression in
        :math:`z_{q}, \\lambda_{3}` (the argument order of ``lambdify``); the seed prints no form of
        it.
    """
    zz = sp.Symbol("z_q", real=True)
    return Derivation("pdl_cornish_fisher", cornish_fisher_expr(zz), (zz, lam3),
                      f"{SRC} App. C (derived here)", lhs=r"q(z)",
                      note="q = z + lambda (z^2 - 1)/6 to first order in lambda.")


# ------------------------------------------------------------------------ limit experiment

def _gauss_laws(mean0, mean1, var):
    """TV, NP threshold and power of N(mean0, var) vs N(mean1, var), mean1 > mean0."""
    sd = sp.sqrt(var)
    t = sp.Symbol("t", real=True)
    # equal densities: solve log N(t; mean1) = log N(t; mean0)
    mid = sp.solve(sp.Eq((t - mean1)**2, (t - mean0)**2), t)[0]
    tv = Phi((mid - mean0) / sd) - Phi((mid - mean1) / sd)
    thr = mean0 - sd * PhiInv(alpha)             # P0(l > thr) = alpha, Phi^{-1}(1-a) = -Phi^{-1}(a)
    power = Phi(-((thr - mean1) / sd))           # 1 - Phi(y) = Phi(-y)
    return sp.simplify(mid), sp.simplify(tv), sp.expand(thr), sp.simplify(power)


@register("pdl_leakage")
def pdl_leakage() -> Derivation:
    """Asymptotic per-datum leakage (Cor 3.2 Eq. 8): TV of N(-m/2, m) and N(m/2, m).

    Returns
    -------
    Derivation
        ``pdl_leakage`` (per_datum_leakage §3 Cor 3.2 Eq. (8)): the expression in :math:`m` (the
        argument order of ``lambdify``); proven equal to the seed's printed form.

    Examples
    --------
    >>> d = pdl_leakage()
    >>> d.symbols
    (m,)
    >>> print(f"{float(d.lambdify()(1.0)):.4f}")      # the numeric form of the derivation
    0.3829
    >>> d.to_latex().startswith(r"\\xi(m^{*}) =")
    True
    >>> d.matches_seed()                              # proven equal to the seed's printed form
    True
    """
    _, tv, _, _ = _gauss_laws(-m / 2, m / 2, m)
    return Derivation("pdl_leakage", tv, (m,), f"{SRC} §3 Cor 3.2 Eq. (8)",
                      seed_form=Phi(sp.sqrt(m) / 2) - Phi(-sp.sqrt(m) / 2), lhs=r"\xi(m^{*})")


@register("pdl_threshold")
def pdl_threshold() -> Derivation:
    """Neyman-Pearson threshold at FPR alpha (Cor 3.2; main-text sign).

    Returns
    -------
    Derivation
        ``pdl_threshold`` (per_datum_leakage §3 Cor 3.2): the expression in :math:`\\alpha, m` (the
        argument order of ``lambdify``); proven equal to the seed's printed form.
    """
    _, _, thr, _ = _gauss_laws(-m / 2, m / 2, m)
    return Derivation("pdl_threshold", thr, (alpha, m), f"{SRC} §3 Cor 3.2",
                      seed_form=-m / 2 - sp.sqrt(m) * PhiInv(alpha), lhs=r"\tau_{\alpha}",
                      note="Phi^{-1}(1 - alpha) written -Phi^{-1}(alpha). App. C.4 Eq. (69) "
                           "prints +m*/2.")


@register("pdl_power")
def pdl_power() -> Derivation:
    """Optimal power at FPR alpha (Cor 3.2 Eq. 9).

    Returns
    -------
    Derivation
        ``pdl_power`` (per_datum_leakage §3 Cor 3.2 Eq. (9)): the expression in :math:`\\alpha, m`
        (the argument order of ``lambdify``); proven equal to the seed's printed form.
    """
    _, _, _, pw = _gauss_laws(-m / 2, m / 2, m)
    return Derivation("pdl_power", pw, (alpha, m), f"{SRC} §3 Cor 3.2 Eq. (9)",
                      seed_form=Phi(PhiInv(alpha) + sp.sqrt(m)), lhs=r"\mathrm{Pow}(\alpha)")


@register("pdl_gdp_delta")
def pdl_gdp_delta() -> Derivation:
    r"""GDP curve of the limit experiment :math:`N(0,1)` vs :math:`N(\sqrt m,1)` (§3).

    Returns
    -------
    Derivation
        ``pdl_gdp_delta`` (per_datum_leakage §3 'Inherent privacy' (Dong et al. Cor 2.13)): the
        expression in :math:`\epsilon, m` (the argument order of ``lambdify``); proven equal to the
        seed's printed form.
    """
    mu_ = sp.sqrt(m)
    # hockey stick E_0[(L - e^eps)_+] with L the LR: region x > eps/mu + mu/2
    xs = eps / mu_ + mu_ / 2
    expr = Phi(-(xs - mu_)) - sp.exp(eps) * Phi(-xs)
    return Derivation("pdl_gdp_delta", sp.expand(expr), (eps, m),
                      f"{SRC} §3 'Inherent privacy' (Dong et al. Cor 2.13)",
                      seed_form=Phi(-eps / mu_ + mu_ / 2) - sp.exp(eps) * Phi(-eps / mu_ - mu_ / 2),
                      lhs=r"\delta(\varepsilon)")


# ------------------------------------------------------------------------ sub-sampling

def _sub_log_lr():
    s = sp.sqrt(m / rho)
    return sp.log(1 - rho + rho * sp.exp(s * x - s**2 / 2)), s


@register("pdl_sub_log_lr")
def pdl_sub_log_lr() -> Derivation:
    r"""Log-LR of the shared-inclusion limit experiment as a function of the whitened projection.

    Returns
    -------
    Derivation
        ``pdl_sub_log_lr`` (per_datum_leakage §4.2 Thm 4.3 (corrected)): the expression in :math:`x,
        m, \rho` (the argument order of ``lambdify``); the seed prints no form of it. Holds when:
        one inclusion event for all coordinates; k = rho n.
    """
    expr, s = _sub_log_lr()
    dx = sp.diff(expr, x)
    assert sp.simplify(dx - rho * s * sp.exp(s * x - s**2 / 2)
                       / (1 - rho + rho * sp.exp(s * x - s**2 / 2))) == 0
    return Derivation("pdl_sub_log_lr", expr, (x, m, rho), f"{SRC} §4.2 Thm 4.3 (corrected)",
                      ("one inclusion event for all coordinates", "k = rho n"),
                      lhs=r"\ell^{\mathrm{sub}}(x)",
                      note="x = (z*-mu)^T C^{-1}(mu_hat-mu) / sqrt(m*/rho) is N(0,1) under H0; "
                           "d/dx > 0, so NP tests threshold x.")


def _sub_forms():
    s = sp.sqrt(m / rho)
    # TV: densities cross at x = s/2; rho * [P(N(s,1) > s/2) - P(N(0,1) > s/2)]
    tv = rho * (Phi(-(s / 2 - s)) - Phi(-(s / 2)))
    x_a = -PhiInv(alpha)
    power = rho * Phi(-(x_a - s)) + (1 - rho) * alpha
    lr, _ = _sub_log_lr()
    thr = lr.subs(x, x_a)
    return sp.simplify(tv), sp.expand(power), thr


@register("pdl_sub_leakage")
def pdl_sub_leakage() -> Derivation:
    """Leakage of the sub-sampled mean with a shared inclusion event (corrected Thm 4.3).

    Returns
    -------
    Derivation
        ``pdl_sub_leakage`` (per_datum_leakage §4.2 Thm 4.3 (corrected)): the expression in
        :math:`m, \\rho` (the argument order of ``lambdify``); differs from the seed's printed form
        (see its note).
    """
    tv, _, _ = _sub_forms()
    return Derivation("pdl_sub_leakage", tv, (m, rho), f"{SRC} §4.2 Thm 4.3 (corrected)",
                      seed_form=Phi(sp.sqrt(rho * m) / 2) - Phi(-sp.sqrt(rho * m) / 2),
                      lhs=r"\xi^{\mathrm{sub}}", note="<= rho; the seed's form is its "
                      "per-coordinate approximation (pdl_sub_paper_leakage).")


@register("pdl_sub_power")
def pdl_sub_power() -> Derivation:
    """Optimal power at FPR alpha of the sub-sampled mean (corrected Thm 4.3).

    Returns
    -------
    Derivation
        ``pdl_sub_power`` (per_datum_leakage §4.2 Eq. (16) (corrected)): the expression in
        :math:`\\alpha, m, \\rho` (the argument order of ``lambdify``); differs from the seed's
        printed form (see its note).
    """
    _, pw, _ = _sub_forms()
    return Derivation("pdl_sub_power", pw, (alpha, m, rho), f"{SRC} §4.2 Eq. (16) (corrected)",
                      seed_form=Phi(PhiInv(alpha) + sp.sqrt(rho * m)),
                      lhs=r"\mathrm{Pow}^{\mathrm{sub}}(\alpha)")


@register("pdl_sub_threshold")
def pdl_sub_threshold() -> Derivation:
    """NP threshold on the log-LR scale for the shared-inclusion mechanism.

    Returns
    -------
    Derivation
        ``pdl_sub_threshold`` (per_datum_leakage §4.2 (corrected)): the expression in :math:`\\alpha,
        m, \\rho` (the argument order of ``lambdify``); differs from the seed's printed form (see its
        note).
    """
    _, _, thr = _sub_forms()
    return Derivation("pdl_sub_threshold", thr, (alpha, m, rho), f"{SRC} §4.2 (corrected)",
                      seed_form=-rho * m / 2 - sp.sqrt(rho * m) * PhiInv(alpha),
                      lhs=r"\tau^{\mathrm{sub}}_{\alpha}")


@register("pdl_sub_paper_leakage")
def pdl_sub_paper_leakage() -> Derivation:
    """The paper's per-coordinate approximation: leakage at score rho m* (labelled approx).

    Returns
    -------
    Derivation
        ``pdl_sub_paper_leakage`` (per_datum_leakage §4.2 Thm 4.3 as printed (per-coordinate
        approximation)): the expression in :math:`m, \\rho` (the argument order of ``lambdify``);
        proven equal to the seed's printed form.
    """
    expr = pdl_leakage().expr.subs(m, rho * m)
    return Derivation("pdl_sub_paper_leakage", expr, (m, rho),
                      f"{SRC} §4.2 Thm 4.3 as printed (per-coordinate approximation)",
                      seed_form=Phi(sp.sqrt(rho * m) / 2) - Phi(-sp.sqrt(rho * m) / 2),
                      lhs=r"\xi^{\mathrm{sub}}_{\mathrm{paper}}")


@register("pdl_sub_paper_power")
def pdl_sub_paper_power() -> Derivation:
    """The paper's per-coordinate approximation of the power (Eq. 16 as printed).

    Returns
    -------
    Derivation
        ``pdl_sub_paper_power`` (per_datum_leakage §4.2 Eq. (16) as printed): the expression in
        :math:`\\alpha, m, \\rho` (the argument order of ``lambdify``); proven equal to the seed's
        printed form.
    """
    expr = pdl_power().expr.subs(m, rho * m)
    return Derivation("pdl_sub_paper_power", expr, (alpha, m, rho),
                      f"{SRC} §4.2 Eq. (16) as printed",
                      seed_form=Phi(PhiInv(alpha) + sp.sqrt(rho * m)),
                      lhs=r"\mathrm{Pow}^{\mathrm{sub}}_{\mathrm{paper}}")


# ------------------------------------------------------------------------ misspecification

def _miss_forms():
    mid, tv, thr, pw = _gauss_laws(-mt / 2, ms - mt / 2, mt)
    return mid, tv, thr, pw


@register("pdl_miss_threshold_adv")
def pdl_miss_threshold_adv() -> Derivation:
    """Advantage-optimal threshold of the misspecified LR (midpoint of the limit laws).

    Returns
    -------
    Derivation
        ``pdl_miss_threshold_adv`` (per_datum_leakage §4.3 Thm 4.5): the expression in
        :math:`m_{\\mathcal{s}}, m_{targ}` (the argument order of ``lambdify``); the seed prints no
        form of it.
    """
    mid, _, _, _ = _miss_forms()
    return Derivation("pdl_miss_threshold_adv", mid, (ms, mt), f"{SRC} §4.3 Thm 4.5",
                      lhs=r"\tau^{\mathrm{miss}}_{\mathrm{adv}}",
                      note="(m_scal - m_targ)/2; the Bayes threshold 0 is optimal only if "
                           "m_scal = m_targ.")


@register("pdl_miss_advantage")
def pdl_miss_advantage() -> Derivation:
    """Advantage of the misspecified LR at its optimal threshold (m_scal > 0).

    Returns
    -------
    Derivation
        ``pdl_miss_advantage`` (per_datum_leakage §4.3 Thm 4.5): the expression in
        :math:`m_{\\mathcal{s}}, m_{targ}` (the argument order of ``lambdify``); proven equal to the
        seed's printed form. Holds when: m_scal > 0 (else the test direction flips).
    """
    _, tv, _, _ = _miss_forms()
    return Derivation("pdl_miss_advantage", tv, (ms, mt), f"{SRC} §4.3 Thm 4.5",
                      ("m_scal > 0 (else the test direction flips)",),
                      seed_form=Phi(ms / (2 * sp.sqrt(mt))) - Phi(-ms / (2 * sp.sqrt(mt))),
                      lhs=r"\mathrm{Adv}(\mathcal A_{\mathrm{miss}})")


@register("pdl_miss_power")
def pdl_miss_power() -> Derivation:
    """Power at FPR alpha of the misspecified LR.

    Returns
    -------
    Derivation
        ``pdl_miss_power`` (per_datum_leakage §4.3 (derived)): the expression in :math:`\\alpha,
        m_{\\mathcal{s}}, m_{targ}` (the argument order of ``lambdify``); the seed prints no form of
        it.
    """
    _, _, _, pw = _miss_forms()
    return Derivation("pdl_miss_power", pw, (alpha, ms, mt), f"{SRC} §4.3 (derived)",
                      lhs=r"\mathrm{Pow}^{\mathrm{miss}}(\alpha)")


@register("pdl_miss_threshold")
def pdl_miss_threshold() -> Derivation:
    """Threshold at FPR alpha of the misspecified LR.

    Returns
    -------
    Derivation
        ``pdl_miss_threshold`` (per_datum_leakage §4.3 (derived)): the expression in :math:`\\alpha,
        m_{targ}` (the argument order of ``lambdify``); the seed prints no form of it.
    """
    _, _, thr, _ = _miss_forms()
    return Derivation("pdl_miss_threshold", thr, (alpha, mt), f"{SRC} §4.3 (derived)",
                      lhs=r"\tau^{\mathrm{miss}}_{\alpha}")


# ------------------------------------------------------------------------ plug-in LR

def _gauss_expect(expr, laws):
    """E[polynomial] under independent Gaussians ``laws = {symbol: (mean, variance)}``."""
    zs = {v: sp.Dummy(f"Z_{v.name}") for v in laws}
    e = sp.expand(expr.subs({v: mv[0] + sp.sqrt(mv[1]) * zs[v] for v, mv in laws.items()}))
    poly = sp.Poly(e, *zs.values())
    out = sp.Integer(0)
    for monom, coef in poly.terms():
        w = sp.Integer(1)
        for k in monom:
            w *= 0 if k % 2 else sp.factorial2(k - 1)
        out += coef * w
    return sp.simplify(out)


def plugin_moments():
    r"""Per-coordinate moments of the plug-in Eq. (10) score with :math:`\hat\mu_0=\mu+E`.

    Score :math:`(\delta-E)(Y-E)/\sigma^2-(\delta-E)^2/(2n\sigma^2)` with :math:`Y` the
    centred release (as in :func:`eq10_moments`, no noise) and :math:`E\sim(0,\sigma^2/n_0)`
    independent of it; Gaussian moments of ``E`` and ``Y`` (higher cumulants only enter at
    :math:`O(1/n^2)`).

    Returns
    -------
    list of (sympy.Expr, sympy.Expr)
        Mean and variance under H0 and under H1.
    """
    out = []
    for hyp in (0, 1):
        mean_y = 0 if hyp == 0 else delta / n
        var_y = sig2 / n if hyp == 0 else (n - 1) * sig2 / n**2
        laws = {_X: (mean_y, var_y), _E: (0, sig2 / n0)}
        s = (delta - _E) * (_X - _E) / sig2 - (delta - _E)**2 / (2 * n * sig2)
        m1 = _gauss_expect(s, laws)
        m2 = _gauss_expect(s**2, laws)
        out.append((m1, sp.simplify(m2 - m1**2)))
    return out


def _plugin_limit(which):
    """Leading terms after summing d = tau n coordinates with n0 = lambda n.

    A coordinate's moment is a polynomial in ``delta``: its ``delta^2`` coefficient times
    ``n sigma^2`` tends to the factor multiplying ``m*`` in the sum; its ``delta``-free part is
    ``o(1/n)`` for the shift and the variances (checked), so it vanishes after summing.
    """
    (e0, v0), (e1, v1) = plugin_moments()
    expr = {"shift": e1 - e0, "var0": v0, "var1": v1}[which]
    poly = sp.Poly(sp.expand(expr.subs(n0, lam * n)), delta)
    c2 = poly.coeff_monomial(delta**2)
    c0 = poly.coeff_monomial(1)
    if sp.limit(c0 * n, n, sp.oo) != 0:
        raise AssertionError(f"{which}: delta-free part does not vanish after summing")
    return sp.simplify(sp.limit(c2 * n * sig2, n, sp.oo) * m)


@register("pdl_plugin_effective_score")
def pdl_plugin_effective_score() -> Derivation:
    r"""Effective leakage score of the plug-in LR: :math:`\mathrm{shift}^2/\mathrm{var}`.

    Returns
    -------
    Derivation
        ``pdl_plugin_effective_score`` (per_datum_leakage §3 'Empirical likelihood ratio test'
        (Sankararaman T4.2.3)): the expression in :math:`m, \lambda_{ref}` (the argument order of
        ``lambdify``); the seed prints no form of it. Holds when: fresh n0 = lambda n reference
        points per game; known variances; d = tau n; the common shift |E|^2_{C^-1} ~ tau/lambda
        cancels.
    """
    shift = _plugin_limit("shift")
    var0 = _plugin_limit("var0")
    expr = sp.simplify(shift**2 / var0)
    return Derivation("pdl_plugin_effective_score", expr, (m, lam),
                      f"{SRC} §3 'Empirical likelihood ratio test' (Sankararaman T4.2.3)",
                      ("fresh n0 = lambda n reference points per game", "known variances",
                       "d = tau n; the common shift |E|^2_{C^-1} ~ tau/lambda cancels"),
                      lhs=r"m^{*}_{\mathrm{plug}}",
                      note="m* lambda/(1+lambda): the reference error adds variance m*/lambda "
                           "to both hypotheses.")


# -- average-datum game (seed App. B, Alg. 3/4) -------------------------------------------------

#: Squared correlation of (z_j, o_j) under H1 in the average-datum game with Gaussian data.
r2 = sp.Symbol("r_j2", positive=True)


def avg_moments():
    r"""Exact per-coordinate mean/variance of the average-datum log-LR, Gaussian data.

    Standardise :math:`x=(z_j-\mu_j)/\sigma_j`, :math:`y=(o_j-\mu_j)/\sqrt{v_0}`,
    :math:`v_0=(\sigma_j^2+\gamma_j^2)/n`. Under :math:`H_0` (Alg. 3, ``b = 0``) ``z`` is drawn
    apart from the data: :math:`(x,y)\sim\mathcal N(0,I_2)`. Under :math:`H_1` ``z`` is a row of
    the data: :math:`\mathrm{Cov}(z_j,o_j)=\sigma_j^2/n`, the marginals unchanged, so
    :math:`(x,y)\sim\mathcal N(0,[[1,r],[r,1]])` with :math:`r^2=\sigma_j^2/(n(\sigma_j^2+
    \gamma_j^2))`. The log-LR (Eq. 22-24) is the quadratic form
    :math:`\ell_j=-\tfrac12\log(1-r^2)-\tfrac{x^2-2rxy+y^2}{2(1-r^2)}+\tfrac{x^2+y^2}2
    =c+w^\top Aw`, whose mean and variance under :math:`w\sim\mathcal N(0,\Sigma)` are
    :math:`c+\mathrm{tr}(A\Sigma)` and :math:`2\,\mathrm{tr}(A\Sigma A\Sigma)`.

    Returns ``((mean0, var0), (mean1, var1))`` as expressions in :math:`r^2` (``r_j2``).

    Returns
    -------
    tuple of sympy.Expr
        ``((mean0, var0), (mean1, var1))``.
    """
    r = sp.sqrt(r2)
    a = -r2 / (2 * (1 - r2))
    b = r / (2 * (1 - r2))
    A = sp.Matrix([[a, b], [b, a]])
    c = -sp.log(1 - r2) / 2
    out = []
    for S in (sp.eye(2), sp.Matrix([[1, r], [r, 1]])):
        AS = A * S
        out.append((sp.simplify(c + AS.trace()), sp.simplify(2 * (AS * AS).trace())))
    return tuple(out)


def _avg(name, idx, hyp, lhs, note):
    expr = avg_moments()[hyp][idx]
    return Derivation(name, expr, (r2,), f"{SRC} App. B (Alg. 3/4, Eq. 22-24), derived",
                      ("Gaussian data, known mean and variance", "rho = 1 (no sub-sampling)",
                       "Gaussian noise allowed: r^2 = sigma^2/(n(sigma^2+gamma^2))"),
                      lhs=lhs, note=note)


@register("pdl_avg_mean0")
def pdl_avg_mean0() -> Derivation:
    """Mean of one coordinate's average-datum log-LR under H0 (= -KL(P0||P1)).

    Returns
    -------
    Derivation
        ``pdl_avg_mean0`` (per_datum_leakage App. B (Alg. 3/4, Eq. 22-24), derived): the expression
        in :math:`r_{j2}` (the argument order of ``lambdify``); the seed prints no form of it. Holds
        when: Gaussian data, known mean and variance; rho = 1 (no sub-sampling); Gaussian noise
        allowed: r^2 = sigma^2/(n(sigma^2+gamma^2)).
    """
    return _avg("pdl_avg_mean0", 0, 0, r"\mathbb E_0[\ell_j]",
                "r^2/(2(1-r^2))-ish terms: -r^2/2 + O(r^4); summed, -M/2 with M = sum r_j^2")


@register("pdl_avg_var0")
def pdl_avg_var0() -> Derivation:
    """Variance of one coordinate's average-datum log-LR under H0.

    Returns
    -------
    Derivation
        ``pdl_avg_var0`` (per_datum_leakage App. B (Alg. 3/4, Eq. 22-24), derived): the expression
        in :math:`r_{j2}` (the argument order of ``lambdify``); the seed prints no form of it. Holds
        when: Gaussian data, known mean and variance; rho = 1 (no sub-sampling); Gaussian noise
        allowed: r^2 = sigma^2/(n(sigma^2+gamma^2)).
    """
    return _avg("pdl_avg_var0", 1, 0, r"\mathrm{Var}_0[\ell_j]", "r^2 + O(r^4)")


@register("pdl_avg_mean1")
def pdl_avg_mean1() -> Derivation:
    """Mean under H1 (= KL(P1||P0) = -log(1-r^2)/2).

    Returns
    -------
    Derivation
        ``pdl_avg_mean1`` (per_datum_leakage App. B (Alg. 3/4, Eq. 22-24), derived): the expression
        in :math:`r_{j2}` (the argument order of ``lambdify``); the seed prints no form of it. Holds
        when: Gaussian data, known mean and variance; rho = 1 (no sub-sampling); Gaussian noise
        allowed: r^2 = sigma^2/(n(sigma^2+gamma^2)).
    """
    return _avg("pdl_avg_mean1", 0, 1, r"\mathbb E_1[\ell_j]", "r^2/2 + O(r^4)")


@register("pdl_avg_var1")
def pdl_avg_var1() -> Derivation:
    """Variance under H1.

    Returns
    -------
    Derivation
        ``pdl_avg_var1`` (per_datum_leakage App. B (Alg. 3/4, Eq. 22-24), derived): the expression
        in :math:`r_{j2}` (the argument order of ``lambdify``); the seed prints no form of it. Holds
        when: Gaussian data, known mean and variance; rho = 1 (no sub-sampling); Gaussian noise
        allowed: r^2 = sigma^2/(n(sigma^2+gamma^2)).
    """
    return _avg("pdl_avg_var1", 1, 1, r"\mathrm{Var}_1[\ell_j]", "r^2 + O(r^4)")

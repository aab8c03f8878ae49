r"""The Gaussian empirical-mean mechanism (SeMI seed §3.1, App. A-C): derived log-LRs.

Per step :math:`t` a batch of :math:`n_t` points from :math:`\mathcal N(\mu_t, \Sigma_t)` is
drawn and the running mean is released,

.. math::

    \hat\mu_t = \frac{N_{t-1}\hat\mu_{t-1} + n_t \bar X_t}{N_t}, \qquad N_t = \sum_{s\le t} n_s .

Under :math:`H_1^\tau` one point of batch :math:`\tau` is the target :math:`z^*`. The derivations
below build the two conditional Gaussians of :math:`\hat\mu_\tau \mid \hat\mu_{\tau-1}` from the
batch-mean distributions (affine maps of independent Gaussians), take the log-ratio of densities,
substitute the recursion and simplify; :math:`N_{\tau-1}` and :math:`\hat\mu_{\tau-1}` drop out
(isolation, seed Remark 3.3). The stationary fixed-``n`` seed case is :math:`N_{\tau-1} =
n(\tau-1)`. Final Observation conditions on nothing and sees :math:`\hat\mu_T` only.
"""

from __future__ import annotations

import sympy as sp

from . import _symbols as S
from ._core import LATEX_NAMES, Derivation, is_zero, register, tidy
from ._display import add, dev, frac, mul, neg, sq
from .gaussian import matrixsymbol_log_lr, scalar_log_lr

__all__ = [
    "affine_moments",
    "conditionals_1d",
    "final_conditionals_1d",
    "em_log_lr_1d",
    "em_log_lr_step_1d",
    "em_log_lr",
    "em_log_lr_step",
    "em_final_log_lr_1d",
    "em_final_log_lr",
    "em_final_log_lr_nonstationary_1d",
]

A_other = sp.Symbol("A_other", real=True)       # sum_{t != tau} n_t mu_t
B_other = sp.Symbol("B_other", positive=True)   # sum_{t != tau} n_t sigma_t^2
K_other = sp.Symbol("K_other", positive=True)   # N_T - n_tau (stationary case)
LATEX_NAMES.update({"K_other": r"N_{T}-n_{\tau}"})


# ---------------------------------------------------------------------------------------------
# Conditional distributions (derived, not typed in)
# ---------------------------------------------------------------------------------------------


def affine_moments(expr, rvs):
    r"""Mean and variance of an affine function of independent Gaussian variables.

    ``rvs`` maps a plain symbol standing for a random variable to its ``(mean, variance)``;
    :math:`\mathbb E[a + \sum_i b_i X_i] = a + \sum_i b_i \mathbb E X_i`,
    :math:`\mathrm{Var} = \sum_i b_i^2 \mathrm{Var} X_i`. Raises if ``expr`` is not affine.

    Parameters
    ----------
    expr : sympy.Expr
        An affine function of the symbols of ``rvs``.
    rvs : dict of sympy.Symbol to (sympy.Expr, sympy.Expr)
        Mean and variance of each independent Gaussian variable.

    Returns
    -------
    mean, var : sympy.Expr
        The moments of ``expr``.
    """
    mean = expr.subs({x: mv[0] for x, mv in rvs.items()})
    var = sp.Integer(0)
    for x, (_, v) in rvs.items():
        coef = sp.diff(expr, x)
        if any(sp.diff(coef, y) != 0 for y in rvs):
            raise ValueError(f"{expr} is not affine in the random variables")
        var += coef**2 * v
    return sp.factor(sp.simplify(mean)), sp.factor(sp.simplify(var))


# Placeholders for random variables (independent Gaussians).
_XBAR = sp.Symbol("XBAR", real=True)     # batch mean under H0
_REST = sp.Symbol("REST", real=True)     # mean of the n-1 random points under H1
_OTHER = sp.Symbol("OTHER", real=True)   # contribution of the other batches (final release)


def _batch_mean_laws(n, mu, sigma, z):
    """Batch mean as an affine function of Gaussian variables under H0 and H1."""
    h0 = (_XBAR, {_XBAR: (mu, sigma**2 / n)})
    h1 = (((n - 1) * _REST + z) / n, {_REST: (mu, sigma**2 / (n - 1))})
    return h0, h1


def conditionals_1d(n=S.n, mu=S.mu, sigma=S.sigma, z=S.z, N_prev=S.N_prev,
                    muhat_prev=S.muhat_prev):
    r"""Means and variances of :math:`\hat\mu_\tau \mid \hat\mu_{\tau-1}` under H0 and H1.

    Parameters
    ----------
    n : sympy.Expr
        Batch size of step :math:`\tau`.
    mu : sympy.Expr
        Data mean.
    sigma : sympy.Expr
        Data standard deviation.
    z : sympy.Expr
        The target :math:`z^*`.
    N_prev : sympy.Expr
        Records before step :math:`\tau`, :math:`N_{\tau-1}`.
    muhat_prev : sympy.Expr
        The previous release :math:`\hat\mu_{\tau-1}`.

    Returns
    -------
    (m0, v0, m1, v1) : tuple of sympy.Expr
        Moments of the recursion
        :math:`\hat\mu_\tau = (N_{\tau-1}\hat\mu_{\tau-1} + n\bar X_\tau)/(N_{\tau-1}+n)`
        with :math:`\bar X_\tau \sim \mathcal N(\mu, \sigma^2/n)` under H0 and
        :math:`\bar X_\tau = ((n-1)\bar X_{\mathrm{rest}} + z^*)/n`,
        :math:`\bar X_{\mathrm{rest}} \sim \mathcal N(\mu, \sigma^2/(n-1))` under H1.
    """
    (x0, law0), (x1, law1) = _batch_mean_laws(n, mu, sigma, z)
    Nt = N_prev + n
    m0, v0 = affine_moments((N_prev * muhat_prev + n * x0) / Nt, law0)
    m1, v1 = affine_moments((N_prev * muhat_prev + n * x1) / Nt, law1)
    return m0, v0, m1, v1


def final_conditionals_1d(n=S.n, mu=S.mu, sigma=S.sigma, z=S.z, *, stationary=True):
    r"""Means and variances of the final release :math:`\hat\mu_T` under H0 and H1.

    Stationary: the other :math:`N_T - n_\tau` points have mean
    :math:`\mathcal N(\mu, \sigma^2/(N_T-n_\tau))`. Non-stationary:
    :math:`\sum_{t\ne\tau} n_t\bar X_t \sim \mathcal N(A_{\neg\tau}, B_{\neg\tau})` with
    :math:`A = \sum n_t\mu_t`, :math:`B = \sum n_t\sigma_t^2` over :math:`t \ne \tau`.

    Parameters
    ----------
    n : sympy.Expr
        Batch size of the insertion step.
    mu : sympy.Expr
        Data mean.
    sigma : sympy.Expr
        Data standard deviation.
    z : sympy.Expr
        The target.
    stationary : bool
        Same law at every step (else the other steps enter through :math:`A, B`).

    Returns
    -------
    m0, v0, m1, v1 : sympy.Expr
        Means and variances of :math:`\hat\mu_T` under H0 and H1.
    """
    (x0, law0), (x1, law1) = _batch_mean_laws(n, mu, sigma, z)
    if stationary:
        total = K_other * _OTHER
        other = {_OTHER: (mu, sigma**2 / K_other)}
        NT = K_other + n
    else:
        total = _OTHER
        other = {_OTHER: (A_other, B_other)}
        NT = S.N_T
    m0, v0 = affine_moments((total + n * x0) / NT, {**law0, **other})
    m1, v1 = affine_moments((total + n * x1) / NT, {**law1, **other})
    out = (m0, v0, m1, v1)
    if stationary:
        out = tuple(sp.factor(sp.simplify(e.subs(K_other, S.N_T - n))) for e in out)
    return out


def _thm34_seed(x, n, mu, sigma, z):
    """Seed Theorem 3.4, transcribed (x = Xbar_tau)."""
    return (-sp.log((n - 1) / n) / 2 - n / (2 * (n - 1) * sigma**2) * (x - mu) ** 2
            + (z - mu) * n / ((n - 1) * sigma**2) * (x - mu)
            - (z - mu) ** 2 / (2 * (n - 1) * sigma**2))


def _thm31_seed(q, ell, m, n, d):
    """Seed Theorem 3.1 / B.2 in the invariants q = N'S^-1 N, ell = N'S^-1 delta, m."""
    return (-d * sp.log((n - 1) / n) / 2 - n / (2 * (n - 1)) * q + n / (n - 1) * ell
            - m / (2 * (n - 1)))


def _llr_in_batch_mean(N_prev_value):
    """Scalar log-LR of the step transition, expressed in the batch mean Xbar_tau."""
    n, mu, sigma, z = S.n, S.mu, S.sigma, S.z
    m0, v0, m1, v1 = conditionals_1d(N_prev=N_prev_value)
    Nt = N_prev_value + n
    release = (N_prev_value * S.muhat_prev + n * S.xbar) / Nt
    llr = scalar_log_lr(release, m0, v0, m1, v1)
    llr = sp.expand(sp.expand_log(sp.simplify(llr), force=True))
    return tidy(llr, [S.xbar], center={S.xbar: mu}), (n, mu, sigma, z)


# ---------------------------------------------------------------------------------------------
# Display forms (how the seed writes them; proven equal to the derived trees in the tests)
# ---------------------------------------------------------------------------------------------


def display_log_ratio(nn):
    r"""``\log\frac{n-1}{n}`` as written (display).

    Parameters
    ----------
    nn : sympy.Expr
        The batch size symbol.

    Returns
    -------
    sympy.Expr
        The unevaluated logarithm.
    """
    return sp.log(frac(dev(nn, 1), nn))


def display_log_lr_1d(x, nn, mu=S.mu, sigma=S.sigma, z=S.z):
    r"""Thm 3.4 as written: :math:`-\tfrac12\log\tfrac{n-1}{n}
    - \tfrac{n}{2(n-1)\sigma^2}(x-\mu)^2 + \tfrac{n}{(n-1)\sigma^2}(z^*-\mu)(x-\mu)
    - \tfrac{(z^*-\mu)^2}{2(n-1)\sigma^2}`.

    Parameters
    ----------
    x : sympy.Expr
        The batch mean.
    nn : sympy.Expr
        Batch size.
    mu : sympy.Expr
        Data mean.
    sigma : sympy.Expr
        Data standard deviation.
    z : sympy.Expr
        The target.

    Returns
    -------
    sympy.Expr
        The unevaluated display form.
    """
    k = dev(nn, 1)
    return add(neg(frac(display_log_ratio(nn), 2)),
               neg(mul(frac(nn, mul(2, k, sigma**2)), sq(dev(x, mu)))),
               mul(frac(nn, mul(k, sigma**2)), dev(z, mu), dev(x, mu)),
               neg(frac(sq(dev(z, mu)), mul(2, k, sigma**2))))


def display_log_lr(nn, q=S.q, ell=S.ell, m=S.m, d=S.d, scale=None, sign=1):
    r"""Thm 3.1 / 4.1 as written: :math:`-\tfrac d2\log\tfrac{n-1}{n} - \tfrac{n}{2(n-1)s^2}q
    \pm \tfrac{n}{(n-1)s}\ell - \tfrac{m^*}{2(n-1)}` (``s`` = ``scale``, e.g. :math:`\eta`).

    Parameters
    ----------
    nn : sympy.Expr
        Batch size.
    q : sympy.Expr
        Squared norm term q.
    ell : sympy.Expr
        Cross term :math:`\ell`.
    m : sympy.Expr
        Mahalanobis distance :math:`m^*`.
    d : sympy.Expr
        Dimension.
    scale : sympy.Expr, optional
        Scale s (e.g. :math:`\eta`); None = 1.
    sign : {1, -1}
        Sign of the cross term.

    Returns
    -------
    sympy.Expr
        The unevaluated display form.
    """
    k = dev(nn, 1)
    if scale is None:
        cq, cl = frac(nn, mul(2, k)), frac(nn, k)
    else:
        cq, cl = frac(nn, mul(2, k, scale**2)), frac(nn, mul(k, scale))
    lin = mul(cl, ell)
    return add(neg(mul(frac(d, 2), display_log_ratio(nn))), neg(mul(cq, q)),
               lin if sign > 0 else neg(lin), neg(frac(m, mul(2, k))))


# ---------------------------------------------------------------------------------------------
# Conditionals as derivations (seed §3.1 displays / Lemma B.1)
# ---------------------------------------------------------------------------------------------


def _stationary_conditionals():
    return conditionals_1d(N_prev=S.n * (S.tau - 1))


def _seed_conditionals():
    n, tau, mu, sigma, z, mp = S.n, S.tau, S.mu, S.sigma, S.z, S.muhat_prev
    return ((tau - 1) / tau * mp + mu / tau, sigma**2 / (tau**2 * n),
            (tau - 1) / tau * mp + ((n - 1) * mu + z) / (tau * n),
            (n - 1) * sigma**2 / (tau**2 * n**2))


def _cond_displays():
    n, tau, mu, sigma, z, mp = S.n, S.tau, S.mu, S.sigma, S.z, S.muhat_prev
    carry = mul(frac(dev(tau, 1), tau), mp)
    return (add(carry, frac(mu, tau)), frac(sigma**2, mul(n, tau**2)),
            add(carry, frac(add(mul(dev(n, 1), mu), z), mul(n, tau))),
            frac(mul(dev(n, 1), sigma**2), mul(n**2, tau**2)))


def _cond_derivation(index: int, name: str, lhs: str) -> Derivation:
    expr = _stationary_conditionals()[index]
    syms = (S.muhat_prev, S.tau, S.n, S.mu, S.sigma, S.z)
    return Derivation(
        name=name,
        expr=expr,
        symbols=tuple(s for s in syms if s in expr.free_symbols),
        source="semi_sequential_mi §3.1 (conditional distributions) / Lemma B.1",
        assumptions=("stationary N(mu, sigma^2)", "fixed batch size n", "N_{tau-1} = n(tau-1)"),
        seed_form=_seed_conditionals()[index],
        note="Moments of the running-mean recursion (affine map of independent Gaussians).",
        lhs=lhs,
        display=_cond_displays()[index],
    )


@register("em_cond_mean_h0")
def em_cond_mean_h0() -> Derivation:
    """Conditional mean of the release at tau under H0.

    Returns
    -------
    Derivation
        ``em_cond_mean_h0`` (semi_sequential_mi §3.1 (conditional distributions) / Lemma B.1): the
        expression in :math:`\\hat{\\mu}_{prev}, \\tau, \\mu` (the argument order of ``lambdify``);
        proven equal to the seed's printed form. Holds when: stationary N(mu, sigma^2); fixed batch
        size n; N_{tau-1} = n(tau-1).
    """
    return _cond_derivation(0, "em_cond_mean_h0",
                            r"\mathbb{E}[\hat{\mu}_{\tau}\mid\hat{\mu}_{\tau-1},H_0]")


@register("em_cond_var_h0")
def em_cond_var_h0() -> Derivation:
    """Conditional variance of the release at tau under H0.

    Returns
    -------
    Derivation
        ``em_cond_var_h0`` (semi_sequential_mi §3.1 (conditional distributions) / Lemma B.1): the
        expression in :math:`\\tau, n, \\sigma` (the argument order of ``lambdify``); proven equal to
        the seed's printed form. Holds when: stationary N(mu, sigma^2); fixed batch size n;
        N_{tau-1} = n(tau-1).
    """
    return _cond_derivation(1, "em_cond_var_h0",
                            r"\mathrm{Var}[\hat{\mu}_{\tau}\mid\hat{\mu}_{\tau-1},H_0]")


@register("em_cond_mean_h1")
def em_cond_mean_h1() -> Derivation:
    """Conditional mean of the release at tau under H1.

    Returns
    -------
    Derivation
        ``em_cond_mean_h1`` (semi_sequential_mi §3.1 (conditional distributions) / Lemma B.1): the
        expression in :math:`\\hat{\\mu}_{prev}, \\tau, n, \\mu, z` (the argument order of
        ``lambdify``); proven equal to the seed's printed form. Holds when: stationary N(mu,
        sigma^2); fixed batch size n; N_{tau-1} = n(tau-1).
    """
    return _cond_derivation(2, "em_cond_mean_h1",
                            r"\mathbb{E}[\hat{\mu}_{\tau}\mid\hat{\mu}_{\tau-1},H_1^{\tau}]")


@register("em_cond_var_h1")
def em_cond_var_h1() -> Derivation:
    """Conditional variance of the release at tau under H1.

    Returns
    -------
    Derivation
        ``em_cond_var_h1`` (semi_sequential_mi §3.1 (conditional distributions) / Lemma B.1): the
        expression in :math:`\\tau, n, \\sigma` (the argument order of ``lambdify``); proven equal to
        the seed's printed form. Holds when: stationary N(mu, sigma^2); fixed batch size n;
        N_{tau-1} = n(tau-1).
    """
    return _cond_derivation(3, "em_cond_var_h1",
                            r"\mathrm{Var}[\hat{\mu}_{\tau}\mid\hat{\mu}_{\tau-1},H_1^{\tau}]")


# ---------------------------------------------------------------------------------------------
# Step log-LR, 1-D
# ---------------------------------------------------------------------------------------------


@register("em_log_lr_1d")
def em_log_lr_1d() -> Derivation:
    r"""Theorem 3.4: stationary 1-D log-LR in :math:`\bar X_\tau` (seed recursion, fixed n).

    Returns
    -------
    Derivation
        ``em_log_lr_1d`` (semi_sequential_mi §3.1 Thm 3.4): the expression in :math:`\bar{x}, n,
        \mu, \sigma, z` (the argument order of ``lambdify``); proven equal to the seed's printed
        form. Holds when: stationary N(mu, sigma^2); fixed batch size n >= 2.
    """
    expr, (n, mu, sigma, z) = _llr_in_batch_mean(S.n * (S.tau - 1))
    return Derivation(
        name="em_log_lr_1d",
        expr=expr,
        symbols=(S.xbar, n, mu, sigma, z),
        source="semi_sequential_mi §3.1 Thm 3.4",
        assumptions=("stationary N(mu, sigma^2)", "fixed batch size n >= 2"),
        seed_form=_thm34_seed(S.xbar, n, mu, sigma, z),
        note="Derived from the conditionals of mu_hat_tau | mu_hat_{tau-1}; tau and "
             "mu_hat_{tau-1} cancel (isolation, Remark 3.3).",
        lhs=r"\log \mathrm{LR}_{\tau}",
        display=display_log_lr_1d(S.xbar, n),
    )


@register("em_log_lr_step_1d")
def em_log_lr_step_1d() -> Derivation:
    r"""Per-step 1-D log-LR with :math:`(\mu_t, \sigma_t, n_t)` and any :math:`N_{t-1}`.

    Returns
    -------
    Derivation
        ``em_log_lr_step_1d`` (semi_sequential_mi App. C Thm C.1 (with §3.1 footnote: varying batch
        sizes)): the expression in :math:`\bar{x}, n, \mu, \sigma, z` (the argument order of
        ``lambdify``); proven equal to the seed's printed form. Holds when: batch tau ~ N(mu_tau,
        sigma_tau^2) with n = n_tau >= 2; N_{tau-1} = sum of earlier batch sizes, any value >= 0.
    """
    expr, (n, mu, sigma, z) = _llr_in_batch_mean(S.N_prev)
    return Derivation(
        name="em_log_lr_step_1d",
        expr=expr,
        symbols=(S.xbar, n, mu, sigma, z),
        source="semi_sequential_mi App. C Thm C.1 (with §3.1 footnote: varying batch sizes)",
        assumptions=("batch tau ~ N(mu_tau, sigma_tau^2) with n = n_tau >= 2",
                     "N_{tau-1} = sum of earlier batch sizes, any value >= 0"),
        seed_form=_thm34_seed(S.xbar, n, mu, sigma, z),
        note="Symbols n, mu, sigma stand for n_tau, mu_tau, sigma_tau. N_{tau-1} and "
             "mu_hat_{tau-1} cancel, so Thm 3.4 holds per step with the step's parameters.",
        lhs=r"\log \mathrm{LR}_{\tau}",
        display=display_log_lr_1d(S.xbar, n),
    )


# ---------------------------------------------------------------------------------------------
# Step log-LR, general d (MatrixSymbol algebra)
# ---------------------------------------------------------------------------------------------


def _llr_general_d(N_prev_value):
    r"""General-d step log-LR in invariants, from the affine recursion with Sigma symbolic.

    With :math:`b = n/N_\tau` the recursion gives, conditionally on the past,
    :math:`\hat\mu_\tau - m_0 = b\,\mathbf N`, :math:`m_1 - m_0 = b\,\boldsymbol\delta/n`,
    :math:`V_0 = b^2\Sigma/n`, :math:`V_1 = b^2 (n-1)\Sigma/n^2`; the scalars come from the
    scalar derivation :func:`conditionals_1d` (covariances are all multiples of Sigma).
    """
    n, d = S.n, S.d
    m0, v0, m1, v1 = conditionals_1d(N_prev=N_prev_value, sigma=sp.Integer(1))
    Nt = N_prev_value + n
    b = n / Nt
    # Scalar factors of the mean shift and of the covariances relative to Sigma.
    shift = sp.simplify((m1 - m0).subs({S.z: S.mu + 1}))     # = b / n per unit of delta
    Nm = sp.MatrixSymbol("N", d, 1)
    Dm = sp.MatrixSymbol("delta", d, 1)
    Sig = sp.MatrixSymbol("Sigma", d, d)
    table = {("N", "N"): S.q, ("N", "delta"): S.ell, ("delta", "delta"): S.m}
    expr = matrixsymbol_log_lr(b * Nm, shift * Dm, v0 * Sig, v1 * Sig, metric=Sig, table=table)
    return tidy(sp.simplify(expr), [S.q, S.ell, S.m])


@register("em_log_lr")
def em_log_lr() -> Derivation:
    r"""Theorem 3.1 / B.2: d-dim log-LR in the invariants of :math:`\mathbf N = \bar X_\tau-\mu`.

    Returns
    -------
    Derivation
        ``em_log_lr`` (semi_sequential_mi §3.1 Thm 3.1 / App. B.2 Thm B.2): the expression in
        :math:`q, \ell, m, n, d` (the argument order of ``lambdify``); proven equal to the seed's
        printed form. Holds when: stationary N(mu, Sigma), Sigma positive definite; fixed n >= 2; q
        = N'Sigma^-1 N, ell = N'Sigma^-1 delta, m = delta'Sigma^-1 delta, delta = z* - mu.
    """
    expr = _llr_general_d(S.n * (S.tau - 1))
    return Derivation(
        name="em_log_lr",
        expr=expr,
        symbols=(S.q, S.ell, S.m, S.n, S.d),
        source="semi_sequential_mi §3.1 Thm 3.1 / App. B.2 Thm B.2",
        assumptions=("stationary N(mu, Sigma), Sigma positive definite", "fixed n >= 2",
                     "q = N'Sigma^-1 N, ell = N'Sigma^-1 delta, m = delta'Sigma^-1 delta, "
                     "delta = z* - mu"),
        seed_form=_thm31_seed(S.q, S.ell, S.m, S.n, S.d),
        note="MatrixSymbol derivation for general d; the determinant ratio ((n-1)/n)^d "
             "comes from det(c Sigma) = c^d det(Sigma).",
        lhs=r"\log \mathrm{LR}_{\tau}",
        display=display_log_lr(S.n),
    )


@register("em_log_lr_step")
def em_log_lr_step() -> Derivation:
    r"""Per-step d-dim log-LR with :math:`(\mu_t, \Sigma_t, n_t)` and any :math:`N_{t-1}`.

    Returns
    -------
    Derivation
        ``em_log_lr_step`` (semi_sequential_mi App. C Thm C.1 (d-dim, varying n_t)): the expression
        in :math:`q, \ell, m, n, d` (the argument order of ``lambdify``); proven equal to the seed's
        printed form. Holds when: batch tau ~ N(mu_tau, Sigma_tau), n = n_tau >= 2; invariants use
        Sigma_tau and delta = z* - mu_tau.
    """
    expr = _llr_general_d(S.N_prev)
    return Derivation(
        name="em_log_lr_step",
        expr=expr,
        symbols=(S.q, S.ell, S.m, S.n, S.d),
        source="semi_sequential_mi App. C Thm C.1 (d-dim, varying n_t)",
        assumptions=("batch tau ~ N(mu_tau, Sigma_tau), n = n_tau >= 2",
                     "invariants use Sigma_tau and delta = z* - mu_tau"),
        seed_form=_thm31_seed(S.q, S.ell, S.m, S.n, S.d),
        note="N_{tau-1} cancels: the running-mean recursion with varying batch sizes gives "
             "Thm 3.1 with the parameters of the insertion step.",
        lhs=r"\log \mathrm{LR}_{\tau}",
        display=display_log_lr(S.n),
    )


def _coefficient_derivation(name, expr, symbols, seed, lhs, note, display):
    return Derivation(
        name=name,
        expr=expr,
        symbols=symbols,
        source="semi_sequential_mi App. B.2 Cor B.3",
        assumptions=("quadratic form log LR = c0 + c1'N + N'C2 N",),
        seed_form=seed,
        note=note,
        lhs=lhs,
        display=display,
    )


@register("em_c0")
def em_c0() -> Derivation:
    """Corollary B.3 constant c0 (the log-LR at N = 0).

    Returns
    -------
    Derivation
        ``em_c0`` (semi_sequential_mi App. B.2 Cor B.3): the expression in :math:`m, n, d` (the
        argument order of ``lambdify``); proven equal to the seed's printed form. Holds when:
        quadratic form log LR = c0 + c1'N + N'C2 N.
    """
    expr = tidy(em_log_lr().expr.subs({S.q: 0, S.ell: 0}), [S.m])
    seed = -S.d * sp.log((S.n - 1) / S.n) / 2 - S.m / (2 * (S.n - 1))
    display = add(neg(mul(frac(S.d, 2), display_log_ratio(S.n))), neg(frac(S.m, mul(2, dev(S.n, 1)))))
    return _coefficient_derivation("em_c0", expr, (S.m, S.n, S.d), seed, r"c_{0}",
                                   "Read off the derived Thm 3.1 at N = 0.", display)


@register("em_c1")
def em_c1() -> Derivation:
    r"""Corollary B.3 linear coefficient: :math:`\mathbf c_1 = k_1 \Sigma^{-1}\delta`; expr is k1.

    Returns
    -------
    Derivation
        ``em_c1`` (semi_sequential_mi App. B.2 Cor B.3): the expression in :math:`n` (the argument
        order of ``lambdify``); proven equal to the seed's printed form. Holds when: quadratic form
        log LR = c0 + c1'N + N'C2 N.
    """
    expr = sp.simplify(sp.diff(em_log_lr().expr, S.ell))
    return _coefficient_derivation(
        "em_c1", expr, (S.n,), S.n / (S.n - 1),
        r"\mathbf{c}_{1} = k_{1}\,\boldsymbol{\Sigma}^{-1}\boldsymbol{\delta},\quad k_{1}",
        "expr is the scalar k1 multiplying Sigma^-1 (z* - mu).", frac(S.n, dev(S.n, 1)))


@register("em_C2")
def em_C2() -> Derivation:
    r"""Corollary B.3 quadratic coefficient: :math:`\mathbf C_2 = k_2 \Sigma^{-1}`; expr is k2.

    Returns
    -------
    Derivation
        ``em_C2`` (semi_sequential_mi App. B.2 Cor B.3): the expression in :math:`n` (the argument
        order of ``lambdify``); proven equal to the seed's printed form. Holds when: quadratic form
        log LR = c0 + c1'N + N'C2 N.
    """
    expr = sp.factor(sp.diff(em_log_lr().expr, S.q))
    return _coefficient_derivation(
        "em_C2", expr, (S.n,), -S.n / (2 * (S.n - 1)),
        r"\mathbf{C}_{2} = k_{2}\,\boldsymbol{\Sigma}^{-1},\quad k_{2}",
        "expr is the scalar k2 multiplying Sigma^-1 (negative definite C2).",
        neg(frac(S.n, mul(2, dev(S.n, 1)))))


# ---------------------------------------------------------------------------------------------
# Final Observation
# ---------------------------------------------------------------------------------------------


@register("em_final_log_lr_1d")
def em_final_log_lr_1d() -> Derivation:
    r"""Final Observation 1-D log-LR in :math:`\hat\mu_T` (stationary, any batch sizes).

    Returns
    -------
    Derivation
        ``em_final_log_lr_1d`` (semi_sequential_mi §3.1 (Final Observation) / App. A.5): the
        expression in :math:`W, N_{T}, \mu, \sigma, z` (the argument order of ``lambdify``); proven
        equal to the seed's printed form. Holds when: stationary N(mu, sigma^2); N_T = sum_t n_t (=
        nT for fixed n); T >= 2 (other batches exist).
    """
    n = S.n
    m0, v0, m1, v1 = final_conditionals_1d(n=n, stationary=True)
    expr = scalar_log_lr(S.W, m0, v0, m1, v1)
    expr = sp.expand(sp.expand_log(sp.simplify(expr), force=True))
    expr = tidy(expr, [S.W], center={S.W: S.mu})
    return Derivation(
        name="em_final_log_lr_1d",
        expr=expr,
        symbols=(S.W, S.N_T, S.mu, S.sigma, S.z),
        source="semi_sequential_mi §3.1 (Final Observation) / App. A.5",
        assumptions=("stationary N(mu, sigma^2)", "N_T = sum_t n_t (= nT for fixed n)",
                     "T >= 2 (other batches exist)"),
        seed_form=_thm34_seed(S.W, S.N_T, S.mu, S.sigma, S.z),
        note="Theorem 3.4 with n -> N_T and Xbar_tau -> mu_hat_T; n_tau and tau cancel.",
        lhs=r"\log \mathrm{LR}_{\mathrm{FO}}",
        display=display_log_lr_1d(S.W, S.N_T),
    )


@register("em_final_log_lr")
def em_final_log_lr() -> Derivation:
    r"""Final Observation d-dim log-LR in invariants of :math:`\hat\mu_T - \mu` (stationary).

    Returns
    -------
    Derivation
        ``em_final_log_lr`` (semi_sequential_mi §3.1 (Final Observation), Thm 3.1 with n -> nT): the
        expression in :math:`q, \ell, m, N_{T}, d` (the argument order of ``lambdify``); proven
        equal to the seed's printed form. Holds when: stationary N(mu, Sigma); N = mu_hat_T - mu;
        N_T = sum_t n_t.
    """
    d = S.d
    m0, v0, m1, v1 = final_conditionals_1d(n=S.n, sigma=sp.Integer(1), stationary=True)
    shift = sp.simplify((m1 - m0).subs({S.z: S.mu + 1}))
    Nm = sp.MatrixSymbol("N", d, 1)
    Dm = sp.MatrixSymbol("delta", d, 1)
    Sig = sp.MatrixSymbol("Sigma", d, d)
    table = {("N", "N"): S.q, ("N", "delta"): S.ell, ("delta", "delta"): S.m}
    expr = matrixsymbol_log_lr(Nm, shift * Dm, v0 * Sig, v1 * Sig, metric=Sig, table=table)
    expr = tidy(sp.simplify(expr), [S.q, S.ell, S.m])
    return Derivation(
        name="em_final_log_lr",
        expr=expr,
        symbols=(S.q, S.ell, S.m, S.N_T, S.d),
        source="semi_sequential_mi §3.1 (Final Observation), Thm 3.1 with n -> nT",
        assumptions=("stationary N(mu, Sigma)", "N = mu_hat_T - mu", "N_T = sum_t n_t"),
        seed_form=_thm31_seed(S.q, S.ell, S.m, S.N_T, S.d),
        note="Stationary case: identical to Thm 3.1 with n -> N_T (nT for fixed n).",
        lhs=r"\log \mathrm{LR}_{\mathrm{FO}}",
        display=display_log_lr(S.N_T),
    )


@register("em_final_log_lr_nonstationary_1d")
def em_final_log_lr_nonstationary_1d() -> Derivation:
    r"""Final Observation 1-D log-LR when the batches have different :math:`(\mu_t,\sigma_t)`.

    Returns
    -------
    Derivation
        ``em_final_log_lr_nonstationary_1d`` (semi_sequential_mi §3.1 (Final Observation) + App. C
        (distribution shift)): the expression in :math:`W, A_{other}, B_{other}, n, \mu, \sigma, z,
        N_{T}` (the argument order of ``lambdify``); the seed prints no form of it. Holds when:
        A_other = sum_{t != tau} n_t mu_t, B_other = sum_{t != tau} n_t sigma_t^2; n, mu, sigma are
        n_tau, mu_tau, sigma_tau; N_T = sum_t n_t.
    """
    n = S.n
    m0, v0, m1, v1 = final_conditionals_1d(n=n, stationary=False)
    derived = scalar_log_lr(S.W, m0, v0, m1, v1)
    # Display form: the Gaussian log-ratio with the derived moments (proven equal below).
    expr = (-sp.log(sp.factor(v1 / v0)) / 2 + (S.W - m0) ** 2 / (2 * v0)
            - (S.W - m1) ** 2 / (2 * v1))
    if not is_zero(expr - derived):
        raise AssertionError("display form of the non-stationary FO log-LR is not equal")
    k, s2 = dev(n, 1), S.sigma**2
    v0, v1 = add(B_other, mul(n, s2)), add(B_other, mul(k, s2))
    display = add(neg(frac(sp.log(frac(v1, v0)), 2)),
                  frac(sq(add(mul(S.N_T, S.W), neg(A_other), neg(mul(n, S.mu)))), mul(2, v0)),
                  neg(frac(sq(add(mul(S.N_T, S.W), neg(A_other), neg(mul(k, S.mu)), neg(S.z))),
                           mul(2, v1))))
    return Derivation(
        name="em_final_log_lr_nonstationary_1d",
        expr=expr,
        symbols=(S.W, A_other, B_other, n, S.mu, S.sigma, S.z, S.N_T),
        source="semi_sequential_mi §3.1 (Final Observation) + App. C (distribution shift)",
        assumptions=("A_other = sum_{t != tau} n_t mu_t, B_other = sum_{t != tau} n_t sigma_t^2",
                     "n, mu, sigma are n_tau, mu_tau, sigma_tau", "N_T = sum_t n_t"),
        seed_form=None,
        note="Not in the seed. The two variances are not proportional, so the n -> nT rule of "
             "§3.1 does not apply; all steps' parameters enter (no isolation).",
        lhs=r"\log \mathrm{LR}_{\mathrm{FO}}",
        display=display,
    )

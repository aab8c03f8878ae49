r"""SymPy derivations of the anytime-valid one-run audit (:mod:`semi_core.audit.anytime_one_run`).

* ``anytime_posterior_max``: the posterior :math:`\pi=p_+/(p_++p_-)` of a fair-coin canary bit
  under a density ratio :math:`p_+/p_-\le e^\varepsilon` is largest at the ratio's bound:
  :math:`\pi\le e^\varepsilon/(1+e^\varepsilon)=q(\varepsilon)`.
* ``anytime_excess_density``: :math:`(\pi-q)_+\,\tfrac12(p_++p_-)=\tfrac12(1-q)(p_+-e^\varepsilon
  p_-)_+`, so the expected excess of the posterior over :math:`q` is
  :math:`\tfrac12(1-q)` times the hockey-stick divergence :math:`H_{e^\varepsilon}\le\delta`
  (one side; the two sides give :math:`E\Delta_i\le\delta/(1+e^\varepsilon)`).
* ``anytime_bet``: the likelihood-ratio factor :math:`(r/q)^Z((1-r)/(1-q))^{1-Z}` of a guess
  graded :math:`Z\in\{0,1\}` is the bet :math:`1+\lambda(Z-q)` with
  :math:`\lambda=(r-q)/(q(1-q))\in[0,1/q]` for :math:`r\in[q,1]`.
* ``anytime_delta_slack``: the Ville slack of the stopped wealth, :math:`m\cdot\lambda_{\max}
  \cdot\delta/(1+e^\varepsilon)` with :math:`\lambda_{\max}=1/q`, equals
  :math:`m\delta e^{-\varepsilon}`.
* ``anytime_mixture_wealth``: the uniform-on-:math:`[q,1]` mixture of the likelihood ratios
  after :math:`k` correct of :math:`n` guesses, in closed form with the regularised incomplete
  Beta function (checked against SymPy's integral at small :math:`k,n` in the tests).
"""

from __future__ import annotations

import sympy as sp

from ._core import Derivation, register

__all__ = ["posterior_max_expr", "excess_density_expr", "bet_lambda_expr", "delta_slack_expr",
           "mixture_wealth_integral"]

eps, delta = sp.symbols("epsilon delta", nonnegative=True)
pm, r = sp.symbols("p_- r", positive=True)
m = sp.symbols("m", positive=True)
k, n = sp.symbols("k n", nonnegative=True, integer=True)
Z = sp.symbols("Z", nonnegative=True)
q = sp.exp(eps) / (1 + sp.exp(eps))


def posterior_max_expr() -> sp.Expr:
    """sup of p+/(p+ + p-) over p+ <= e^eps p-: increasing in p+, so at p+ = e^eps p-.

    Returns
    -------
    sympy.Expr
        :math:`e^\\varepsilon/(1+e^\\varepsilon)`.
    """
    pp = sp.symbols("p_+", positive=True)
    post = pp / (pp + pm)
    assert sp.simplify(sp.diff(post, pp) - pm / (pp + pm) ** 2) == 0   # > 0: increasing
    return sp.simplify(post.subs(pp, sp.exp(eps) * pm))


def excess_density_expr() -> sp.Expr:
    """(pi - q)(p+ + p-)/2 on the set where it is positive, as a multiple of p+ - e^eps p-.

    Returns
    -------
    sympy.Expr
        The multiple of :math:`p_+-e^\\varepsilon p_-`.
    """
    pp = sp.symbols("p_+", positive=True)
    post = pp / (pp + pm)
    expr = sp.simplify((post - q) * (pp + pm) / 2)
    ratio = sp.simplify(expr / (pp - sp.exp(eps) * pm))
    assert sp.simplify(ratio - (1 - q) / 2) == 0
    return ratio


def bet_lambda_expr() -> sp.Expr:
    """lambda with (r/q)^Z ((1-r)/(1-q))^(1-Z) = 1 + lambda (Z - q) at Z in {0, 1}.

    Returns
    -------
    sympy.Expr
        :math:`\\lambda` as a function of r and q.
    """
    lam = sp.symbols("lambda", real=True)
    qs = sp.symbols("q", positive=True)
    sol = sp.solve(sp.Eq(r / qs, 1 + lam * (1 - qs)), lam)[0]
    assert sp.simplify((1 + sol * (0 - qs)) - (1 - r) / (1 - qs)) == 0   # the Z = 0 branch
    assert sp.simplify(sol.subs(r, 1) - 1 / qs) == 0                    # lambda_max = 1/q
    return sp.simplify(sol.subs(qs, q))


def delta_slack_expr() -> sp.Expr:
    """m * lambda_max * E[Delta_i] bound with lambda_max = 1/q, E[Delta_i] <= delta/(1+e^eps).

    Returns
    -------
    sympy.Expr
        The slack :math:`m\\delta/(q(1+e^\\varepsilon))`.
    """
    return sp.simplify(m * (1 / q) * delta / (1 + sp.exp(eps)))


def mixture_wealth_integral(k_val: int, n_val: int) -> sp.Expr:
    """The mixture integral at concrete k, n (SymPy integrates the polynomial exactly).

    Parameters
    ----------
    k_val : int
        Number of correct guesses.
    n_val : int
        Number of guesses.

    Returns
    -------
    sympy.Expr
        The exact integral.
    """
    qs = sp.symbols("q", positive=True)
    integrand = (r / qs) ** k_val * ((1 - r) / (1 - qs)) ** (n_val - k_val) / (1 - qs)
    return sp.simplify(sp.integrate(integrand, (r, qs, 1)))


@register("anytime_posterior_max")
def anytime_posterior_max() -> Derivation:
    r"""Largest posterior of a member guess under :math:`\varepsilon`-DP, :math:`e^\varepsilon/(1+e^\varepsilon)`.

    Returns
    -------
    Derivation
        ``anytime_posterior_max`` (sequential_dp_auditing §3 (test martingales) applied to one-run
        canaries (Steinke, Nasr & Jagielski 2023, Lemma 4.2 form)): the expression in
        :math:`\epsilon` (the argument order of ``lambdify``); the seed prints no form of it. Holds
        when: canary bits i.i.d. Bernoulli(1/2); eps-DP in each canary bit; conditioning on the
        whole transcript and the earlier bits.
    """
    return Derivation(
        name="anytime_posterior_max", expr=posterior_max_expr(), symbols=(eps,),
        source="sequential_dp_auditing §3 (test martingales) applied to one-run canaries "
               "(Steinke, Nasr & Jagielski 2023, Lemma 4.2 form)",
        assumptions=("canary bits i.i.d. Bernoulli(1/2)", "eps-DP in each canary bit",
                     "conditioning on the whole transcript and the earlier bits"),
        seed_form=None,
        note="P[S_i = +1 | Y, S_<i] <= e^eps/(1 + e^eps): the mixture over later bits keeps "
             "the density ratio within e^eps.",
        lhs=r"\sup\pi_i")


@register("anytime_excess_density")
def anytime_excess_density() -> Derivation:
    r"""The :math:`\delta` term of the anytime one-run audit: the posterior's excess over q.

    Returns
    -------
    Derivation
        ``anytime_excess_density`` (beyond the seeds: delta term of the anytime one-run audit): the
        expression in :math:`\epsilon` (the argument order of ``lambdify``); the seed prints no form
        of it. Holds when: (eps, delta)-DP in each canary bit (hockey stick H_{e^eps} <= delta).
    """
    return Derivation(
        name="anytime_excess_density", expr=excess_density_expr(), symbols=(eps,),
        source="beyond the seeds: delta term of the anytime one-run audit",
        assumptions=("(eps, delta)-DP in each canary bit (hockey stick H_{e^eps} <= delta)",),
        seed_form=None,
        note="(pi - q)_+ (p+ + p-)/2 = (1 - q)/2 (p+ - e^eps p-)_+, so E(pi - q)_+ <= "
             "delta/(2(1 + e^eps)) per side.",
        lhs=r"\frac{(\pi-q)(p_++p_-)/2}{p_+-e^\varepsilon p_-}")


@register("anytime_bet")
def anytime_bet() -> Derivation:
    r"""The bet :math:`\lambda` whose wealth factor is the likelihood ratio of rate r against q.

    Returns
    -------
    Derivation
        ``anytime_bet`` (sequential_dp_auditing §3 (betting), likelihood-ratio form): the expression
        in :math:`r, \epsilon` (the argument order of ``lambdify``); the seed prints no form of it.
        Holds when: q <= r <= 1.
    """
    return Derivation(
        name="anytime_bet", expr=bet_lambda_expr(), symbols=(r, eps),
        source="sequential_dp_auditing §3 (betting), likelihood-ratio form",
        assumptions=("q <= r <= 1",),
        seed_form=None,
        note="lambda = (r - q)/(q(1 - q)) in [0, 1/q]: every factor is >= 0.",
        lhs=r"\lambda(r)")


@register("anytime_delta_slack")
def anytime_delta_slack() -> Derivation:
    r"""The :math:`\delta` slack of the stopped wealth (Ville's inequality with :math:`\delta`).

    Returns
    -------
    Derivation
        ``anytime_delta_slack`` (beyond the seeds: Ville's inequality for the stopped wealth with
        delta): the expression in :math:`m, \delta, \epsilon` (the argument order of ``lambdify``);
        the seed prints no form of it. Holds when: m canaries in the run, fixed in advance.
    """
    return Derivation(
        name="anytime_delta_slack", expr=delta_slack_expr(), symbols=(m, delta, eps),
        source="beyond the seeds: Ville's inequality for the stopped wealth with delta",
        assumptions=("m canaries in the run, fixed in advance",),
        seed_form=None,
        note="P[ever reject a true (eps, delta) claim] <= a + m delta e^-eps at threshold 1/a.",
        lhs=r"m\,\delta\,\lambda_{\max}/(1+e^\varepsilon)")


#: None of these has a printed seed form (read by tests/symbolic/test_sym_core.py).
EXPECTED_NO_SEED = {"anytime_posterior_max", "anytime_excess_density", "anytime_bet",
                    "anytime_delta_slack"}

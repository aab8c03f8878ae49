r"""SymPy derivations for the sequential DP audit (sequential_dp_auditing seed) and SeMI streams.

* ``seqaudit_tv_max``: the largest :math:`1-\alpha-f(\alpha)` on the :math:`(\varepsilon,\delta)`-DP
  trade-off curve :math:`f(\alpha)=\max\{0,1-\delta-e^\varepsilon\alpha,
  e^{-\varepsilon}(1-\delta-\alpha)\}`; the two lines cross at
  :math:`\alpha^*=(1-\delta)/(1+e^\varepsilon)`, where :math:`1-\alpha-f` (piecewise linear,
  increasing then decreasing) peaks: :math:`\mathrm{TV}_{\max}=(e^\varepsilon-1+2\delta)/(e^\varepsilon+1)`.
* ``seqaudit_tau``: :math:`\tau=\sqrt2\,\mathrm{TV}_{\max}` (Thm 3.1), equal to the seed's form.
* ``semi_success_bound``: a balanced guess succeeds with probability :math:`(1+\mathrm{TV})/2`, so
  :math:`p^*=(e^\varepsilon+\delta)/(1+e^\varepsilon)` under :math:`(\varepsilon,\delta)`-DP.
* ``seqaudit_beta_map``: :math:`1+\lambda a = 1-\beta+\beta E` with :math:`\beta=(2+\tau)\lambda`,
  :math:`E=(2+a+\tau)/(2+\tau)` (seed App. C.2 prints ``-1`` where ``+1`` belongs).
* ``seqaudit_oga_norm``: :math:`\|f+2\Delta/\sqrt M\|^2=\|f\|^2+4v/\sqrt M+4k/M` (App. E.3).
* ``seqaudit_up_log_wealth``: :math:`\log\tilde W_t=\max_\beta\log W_t(\beta)-\log(t+1)/2-\log2`
  (Alg. 2 line 7; eq. 19 prints :math:`+\log 2`).
"""

from __future__ import annotations

import sympy as sp

from ._core import Derivation, register

__all__ = ["tv_max_expr"]

eps, delta = sp.symbols("epsilon delta", nonnegative=True)
lam, a, tau = sp.symbols("lambda a tau", real=True)
fn2, v, k, M = sp.symbols("F v k M", positive=True)
t, logw = sp.symbols("t L_max", positive=True)


def tv_max_expr() -> sp.Expr:
    """Maximise 1 - alpha - f(alpha) over the DP trade-off curve (symbolically).

    Returns
    -------
    sympy.Expr
        The largest total variation, :math:`(e^\\varepsilon-1+2\\delta)/(e^\\varepsilon+1)`.
    """
    al = sp.symbols("alpha_I", nonnegative=True)
    line1 = 1 - delta - sp.exp(eps) * al
    line2 = sp.exp(-eps) * (1 - delta - al)
    cross = sp.solve(sp.Eq(line1, line2), al)[0]
    # left of the crossing f = line1 (slope -e^eps <= -1: 1 - alpha - f increases), right of it
    # f = line2 (slope -e^-eps >= -1: it decreases), so the maximum is at the crossing
    assert sp.simplify(sp.diff(1 - al - line1, al) - (sp.exp(eps) - 1)) == 0
    assert sp.simplify(sp.diff(1 - al - line2, al) - (sp.exp(-eps) - 1)) == 0
    return sp.simplify(1 - cross - line1.subs(al, cross))


@register("seqaudit_tv_max")
def seqaudit_tv_max() -> Derivation:
    r"""Largest total variation of an (eps, delta)-DP pair (the TV bound behind Thm 3.1).

    Returns
    -------
    Derivation
        ``seqaudit_tv_max`` (sequential_dp_auditing App. A (TV bound used by Thm 3.1)): the
        expression in :math:`\epsilon, \delta` (the argument order of ``lambdify``); proven equal to
        the seed's printed form. Holds when: A is (eps, delta)-DP.
    """
    return Derivation(
        name="seqaudit_tv_max", expr=tv_max_expr(), symbols=(eps, delta),
        source="sequential_dp_auditing App. A (TV bound used by Thm 3.1)",
        assumptions=("A is (eps, delta)-DP",),
        seed_form=1 - 2 * (1 - delta) / (1 + sp.exp(eps)),
        note="Maximum of 1 - alpha - f(alpha) over the DP trade-off curve, at "
             "alpha* = (1 - delta)/(1 + e^eps).",
        lhs=r"\mathrm{TV}_{\max}")


@register("seqaudit_tau")
def seqaudit_tau() -> Derivation:
    r"""The MMD threshold :math:`\tau(\varepsilon,\delta)` of the sequential audit.

    Returns
    -------
    Derivation
        ``seqaudit_tau`` (sequential_dp_auditing §3.1 Thm 3.1, Def. 3.2): the expression in
        :math:`\epsilon, \delta` (the argument order of ``lambdify``); proven equal to the seed's
        printed form. Holds when: 0 <= K(x, y) <= 1.
    """
    return Derivation(
        name="seqaudit_tau", expr=sp.sqrt(2) * tv_max_expr(), symbols=(eps, delta),
        source="sequential_dp_auditing §3.1 Thm 3.1, Def. 3.2",
        assumptions=("0 <= K(x, y) <= 1",),
        seed_form=sp.sqrt(2) * (1 - 2 * (1 - delta) / (1 + sp.exp(eps))),
        note="sup ||K(x,.) - K(y,.)|| <= sqrt(2) times the largest TV of a DP pair.",
        lhs=r"\tau(\varepsilon,\delta)")


@register("semi_success_bound")
def semi_success_bound() -> Derivation:
    r"""Largest success :math:`p^*` of a balanced guess against an (eps, delta)-DP mechanism.

    Returns
    -------
    Derivation
        ``semi_success_bound`` (sequential_dp_auditing §3.1 (applied to SeMI stream audits, beyond
        the seed)): the expression in :math:`\epsilon, \delta` (the argument order of ``lambdify``);
        the seed prints no form of it. Holds when: fair-coin membership; threshold fixed before the
        round.
    """
    return Derivation(
        name="semi_success_bound", expr=sp.simplify((1 + tv_max_expr()) / 2),
        symbols=(eps, delta),
        source="sequential_dp_auditing §3.1 (applied to SeMI stream audits, beyond the seed)",
        assumptions=("fair-coin membership", "threshold fixed before the round"),
        seed_form=None,
        note="Largest success probability of a balanced membership guess against an "
             "(eps, delta)-DP mechanism; attained by randomized response.",
        lhs=r"p^*(\varepsilon,\delta)")


@register("seqaudit_beta_map")
def seqaudit_beta_map() -> Derivation:
    r"""Wealth factor :math:`1-\beta+\beta E=1+\lambda a`, :math:`\beta=(2+\tau)\lambda` (Thm C.1, Part 2).

    Returns
    -------
    Derivation
        ``seqaudit_beta_map`` (sequential_dp_auditing App. C.2 (proof of Thm C.1, Part 2)): the
        expression in :math:`\lambda, a, \tau` (the argument order of ``lambdify``); differs from
        the seed's printed form (see its note).
    """
    beta = (2 + tau) * lam
    E = (2 + a + tau) / (2 + tau)
    expr = sp.expand(1 - beta + beta * E)
    assert sp.simplify(expr - (1 + lam * a)) == 0
    return Derivation(
        name="seqaudit_beta_map", expr=expr, symbols=(lam, a, tau),
        source="sequential_dp_auditing App. C.2 (proof of Thm C.1, Part 2)",
        seed_form=1 - lam * (2 + tau) + lam * (2 + tau) * (a / (2 + tau) - 1),
        note="The seed's third line has a/(2+tau) - 1; it must be + 1 (claim appC.2.beta_map).",
        lhs=r"1+\lambda a")


@register("seqaudit_oga_norm")
def seqaudit_oga_norm() -> Derivation:
    # ||f + c Delta||^2 = ||f||^2 + 2 c <f, Delta> + c^2 ||Delta||^2 with c = 2/sqrt(M)
    """Squared norm ||f + c Delta||^2 of the OGA witness after one step.

    Returns
    -------
    Derivation
        ``seqaudit_oga_norm`` (sequential_dp_auditing App. E.3): the expression in :math:`F, v, k,
        M` (the argument order of ``lambdify``); proven equal to the seed's printed form.
    """
    c = 2 / sp.sqrt(M)
    expr = fn2 + 2 * c * v + c**2 * k
    return Derivation(
        name="seqaudit_oga_norm", expr=expr, symbols=(fn2, v, k, M),
        source="sequential_dp_auditing App. E.3",
        seed_form=fn2 + 4 * v / sp.sqrt(M) + 4 * k / M,
        note="k = ||K(X_t,.) - K(Y_t,.)||^2 = M_t - M_{t-1}; the kernel keeps ||f_t||^2 running.",
        lhs=r"\|f_t+2\Delta_t/\sqrt{M_t}\|^2")


@register("seqaudit_up_log_wealth")
def seqaudit_up_log_wealth() -> Derivation:
    """Log wealth of the universal-portfolio bettor (eq. 19, Alg. 2 line 7).

    Returns
    -------
    Derivation
        ``seqaudit_up_log_wealth`` (sequential_dp_auditing App. C.1 eq. (19), Alg. 2 line 7): the
        expression in :math:`L_{max}, t` (the argument order of ``lambdify``); differs from the
        seed's printed form (see its note). Holds when: UP with the Beta(1/2, 1/2) prior, regret <=
        log(t+1)/2 + log 2.
    """
    return Derivation(
        name="seqaudit_up_log_wealth", expr=logw - sp.log(t + 1) / 2 - sp.log(2),
        symbols=(logw, t),
        source="sequential_dp_auditing App. C.1 eq. (19), Alg. 2 line 7",
        assumptions=("UP with the Beta(1/2, 1/2) prior, regret <= log(t+1)/2 + log 2",),
        seed_form=logw - sp.log(t + 1) / 2 + sp.log(2),
        note="eq. (19) adds log 2; W~ <= W^UP needs it subtracted (Alg. 2 line 7 is right).",
        lhs=r"\log\tilde W_t")


#: Derivations whose printed seed form differs (read by tests/symbolic/test_sym_core.py).
EXPECTED_DIFFERENT = {"seqaudit_beta_map", "seqaudit_up_log_wealth"}
#: Derivations without a printed seed form.
EXPECTED_NO_SEED = {"semi_success_bound"}

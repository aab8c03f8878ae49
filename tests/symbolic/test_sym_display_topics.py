r"""Display forms of the finished topic modules (updates, IHA, Edgeworth, linear regression).

Every derivation registered by :mod:`semi_core.symbolic.updates` (combining_mi_updates App. B),
:mod:`semi_core.symbolic.iha` (IHA Eq. 4, 12, Thm 3.2), :mod:`semi_core.symbolic.edgeworth` and
:mod:`semi_core.symbolic.linreg` carries a display form (collected and factored, the seeds'
symbols); the tests pin its exact LaTeX, prove ``display - expr == 0`` symbolically, check the
two agree numerically at random admissible points, and show that a display with one changed
coefficient is refuted.
"""

import numpy as np
import pytest
import sympy as sp

from semi_core.symbolic import all_derivations, get_derivation
from semi_core.symbolic import iha as I
from semi_core.symbolic import updates as U
from semi_core.symbolic._core import Derivation, Phi, numeric_lambdify, registered
from semi_core.symbolic._display import add, frac, mul, plain, root, sq

MODULES = ("semi_core.symbolic.updates", "semi_core.symbolic.iha",
           "semi_core.symbolic.edgeworth", "semi_core.symbolic.linreg")

_SIGMA_INV_NUM = (r"S \left(1 - \mu\right) \left(\sigma + \alpha\right) \left(2 \left(1 +"
                  r" \mu\right) - \lambda \left(\sigma + \alpha\right)\right)")

GOLDEN = {
    # combining_mi_updates App. B / §5.7
    "upd_b3_var_ratio": r"\mathrm{Var}_{\mathrm{IN}}/\mathrm{Var}_{\mathrm{OUT}} = \frac{n_{1} - 1}{n_{1}}",
    "upd_b3_bound": r"\underline{\mathrm{Acc}}(\mathcal A) = \Phi\left(\sqrt{\frac{d}{80 n_{1}}}\right)",
    "upd_b1_condition_rhs": r"\mathrm{RHS}_{(1)} = \Phi\left(\sqrt{\frac{d}{80 n_{1}}}\right)",
    "upd_b5_eta_equiv": r"\eta' = \frac{n_{1} \eta}{n_{0} + n_{1}}",
    "upd_b4_chebyshev": r"\underline{\mathrm{Acc}} = 1 - \frac{4 C n_{1}}{d}",
    "upd_b4_var_out": (r"\mathrm{Var}[d_{\mathrm{OUT}}] = 16 d \eta^{2} \sigma^{4}"
                       r" \left(\frac{1}{n_{1}} + \frac{1}{n_{0}} + \frac{1}{n_{0} n_{1}} +"
                       r" \frac{2}{n_{0}^{2}}\right)"),
    "upd_b4_mean_gap": r"\mathbb{E}[d_{\mathrm{OUT}}]-\mathbb{E}[d_{\mathrm{IN}}] = \frac{4 \eta a^{2}}{n_{1}}",
    "upd_dp_epsilon_from_precision": r"\underline{\varepsilon} = \log{\left(\frac{p}{1 - p} \right)}",
    # iha_parameters_vs_loss §2.2, App. B, Thm 3.2 (one eigen-direction)
    "iha_eq4_sigma": (r"\Sigma_{\sigma} = \frac{2 \lambda L_{*} \sigma \left(1 + \mu\right)}{"
                      + _SIGMA_INV_NUM + "}"),
    "iha_precision_eq12": (r"\Sigma_{\sigma}^{-1} = \frac{" + _SIGMA_INV_NUM
                           + r"}{2 \lambda L_{*} \sigma \left(1 + \mu\right)}"),
    "iha_thm32_log_lr": (r"\ln\frac{p(\mathbf w\mid\mathbf w_1^*)}{p(\mathbf w\mid\mathbf w_0^*)}"
                         r" = - \frac{" + _SIGMA_INV_NUM + r"}{4 \lambda L_{*} \left(1 +"
                         r" \mu\right) n^{2} \sigma^{3}} g_{z} \left(2 n g_{0} + g_{z}\right)"),
    # per_datum_leakage App. C.3 (also pinned in test_sym_edgeworth.py)
    "edgeworth_h1": r"h_{1}(x) = \frac{\lambda_{3} \left(x^{3} - 3 x\right)}{6}",
    "edgeworth_h2": (r"h_{2}(x) = \frac{\lambda_{3}^{2}}{72} \left(x^{6} - 15 x^{4} + 45 x^{2} -"
                     r" 15\right) + \frac{\lambda_{4}}{24} \left(x^{4} - 6 x^{2} + 3\right)"),
    "edgeworth_log_density": (r"\log d_{n}(x) = - \frac{\log{\left(2 \pi \right)}}{2} -"
                              r" \frac{x^{2}}{2} + \frac{h_{1}}{\sqrt{n}} +"
                              r" \frac{h_{2} - \frac{h_{1}^{2}}{2}}{n}"),
    # semi_sequential_mi App. F.3 (also pinned in test_sym_linreg.py)
    "linreg_delta_g": r"\delta_{g,j} = - \varepsilon^{*} x^{*}_{j}",
    "linreg_m_star": (r"m^{*} = \frac{\left(\varepsilon^{*}\right)^{2}}{\sigma_{\varepsilon}^{2}}"
                      r" \mathbf{x}^{*\top}\boldsymbol{\Sigma}_{x}^{-1}\mathbf{x}^{*}"),
}


def _names():
    all_derivations()
    return sorted(k for k, b in registered().items() if b.__wrapped__.__module__ in MODULES)


def test_every_topic_derivation_has_a_golden_display():
    assert set(_names()) == set(GOLDEN)
    for name in GOLDEN:
        assert get_derivation(name).display is not None, name


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_display_latex_golden(name):
    assert get_derivation(name).to_latex() == GOLDEN[name]


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_display_equals_derivation(name):
    """``display - expr`` simplifies to 0 (SymPy proof), and both agree at random points."""
    der = get_derivation(name)
    assert sp.simplify(plain(der.display) - der.expr) == 0, name
    assert der.display_matches(), name
    rng = np.random.default_rng(7)
    # Admissible points: every symbol in (0.2, 0.45) keeps 1 - mu > 0, p < 1 and the IHA
    # stationarity factor 2(1 + mu) - lambda(sigma + alpha) > 0; n1 - 1 may be negative, which
    # only makes the comparison stricter (both sides are rational in it).
    vals = rng.uniform(0.2, 0.45, size=(len(der.symbols), 16))
    shown = np.asarray(numeric_lambdify(der.symbols, der.display)(*vals), dtype=complex)
    derived = np.asarray(der.lambdify(stable=False)(*vals), dtype=complex)
    np.testing.assert_allclose(shown, derived, rtol=1e-10, atol=1e-12)


def _bad(name: str, display) -> Derivation:
    der = get_derivation(name)
    return Derivation(name=f"bad_{name}", expr=der.expr, symbols=der.symbols,
                      source=der.source, display=display)


def _bad_thm32():
    """IHA Thm 3.2 display with the denominator's 4 changed to 3."""
    coef = frac(I._precision_num_display(),
                mul(3, I.lam, I.Ls, add(1, I.mu), sq(I.n), I.sig**3))
    return mul(-1, coef, I.gz, add(mul(2, I.n, I.g0), I.gz))


def _bad_var_out():
    """Var[d_OUT] with the 2/n0^2 term changed to 3/n0^2."""
    n0, n1 = U.n0, U.n1
    return mul(16, U.d, sq(U.eta), U.sigma**4,
               add(frac(1, n1), frac(1, n0), frac(1, mul(n0, n1)), frac(3, sq(n0))))


def _bad_b3_bound():
    """Lemma B.3 bound with 80 changed to 8 inside the square root."""
    return Phi(root(frac(U.d, mul(8, U.n1))))


@pytest.mark.parametrize(("name", "make"), [("iha_thm32_log_lr", _bad_thm32),
                                            ("upd_b4_var_out", _bad_var_out),
                                            ("upd_b3_bound", _bad_b3_bound)])
def test_display_check_can_fail(name, make):
    """A display with one changed coefficient is refuted (and the true one is not)."""
    assert get_derivation(name).display_matches() is True
    bad = _bad(name, make())
    assert sp.simplify(plain(bad.display) - bad.expr) != 0
    assert bad.display_matches() is False


def test_raw_tree_is_kept_next_to_the_display():
    der = get_derivation("upd_dp_epsilon_from_precision")
    assert r"- \frac{p}{p - 1}" in der.raw_latex()
    assert r"\frac{p}{1 - p}" in der.to_latex()
    assert get_derivation("iha_thm32_log_lr").raw_latex().count("+") > 10   # expanded sum

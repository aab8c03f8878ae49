"""Paper-ready LaTeX: display forms, their symbolic equality with the derivations, golden strings.

Each derivation of the SeMI topic modules carries a display form (collected and factored,
deviations such as ``\\bar{X}_{\\tau} - \\mu``, the seed's symbols) built unevaluated; the tests
prove ``display - expr == 0`` symbolically and pin the exact LaTeX (SymPy-style goldens).
"""

import pytest
import sympy as sp

from semi_core.symbolic import _symbols as S
from semi_core.symbolic import all_derivations, get_derivation
from semi_core.symbolic._core import Derivation, registered
from semi_core.symbolic._display import DisplayPrinter, dev, display_latex, frac, mul, neg, sq

MODULES = ("semi_core.symbolic.gaussian", "semi_core.symbolic.empirical_mean",
           "semi_core.symbolic.errors", "semi_core.symbolic.sgd")


def _names():
    all_derivations()
    return sorted(k for k, b in registered().items() if b.__wrapped__.__module__ in MODULES)


GOLDEN = {
    "gaussian_log_lr_scalar": (
        r"\log \mathrm{LR} = - \frac{\log{\left(\frac{v_{1}}{v_{0}} \right)}}{2} +"
        r" \frac{\left(x - m_{0}\right)^{2}}{2 v_{0}} - \frac{\left(x - m_{1}\right)^{2}}{2"
        r" v_{1}}"
    ),
    "gaussian_log_lr_2d": (
        r"\log \mathrm{LR} = \frac{\log{\left(\frac{P_{11} P_{22} - P_{12}^{2}}{Q_{11} Q_{22}"
        r" - Q_{12}^{2}} \right)}}{2} + \frac{P_{22} \left(x_{1} - a_{1}\right)^{2} - 2"
        r" P_{12} \left(x_{1} - a_{1}\right) \left(x_{2} - a_{2}\right) + P_{11} \left(x_{2}"
        r" - a_{2}\right)^{2}}{2 \left(P_{11} P_{22} - P_{12}^{2}\right)} - \frac{Q_{22}"
        r" \left(x_{1} - b_{1}\right)^{2} - 2 Q_{12} \left(x_{1} - b_{1}\right) \left(x_{2} -"
        r" b_{2}\right) + Q_{11} \left(x_{2} - b_{2}\right)^{2}}{2 \left(Q_{11} Q_{22} -"
        r" Q_{12}^{2}\right)}"
    ),
    "gaussian_log_lr_proportional": (
        r"\log \mathrm{LR} = - \frac{d}{2} \log{\left(\rho \right)} + \frac{\rho - 1}{2 \rho}"
        r" \mathbf{L}^{\top}\mathbf{V}_{0}^{-1}\mathbf{L} +"
        r" \frac{\mathbf{L}^{\top}\mathbf{V}_{0}^{-1}\boldsymbol{\Delta}}{\rho} -"
        r" \frac{\boldsymbol{\Delta}^{\top}\mathbf{V}_{0}^{-1}\boldsymbol{\Delta}}{2 \rho}"
    ),
    "em_cond_mean_h0": (
        r"\mathbb{E}[\hat{\mu}_{\tau}\mid\hat{\mu}_{\tau-1},H_0] = \frac{\tau - 1}{\tau}"
        r" \hat{\mu}_{\tau-1} + \frac{\mu}{\tau}"
    ),
    "em_cond_var_h0": (
        r"\mathrm{Var}[\hat{\mu}_{\tau}\mid\hat{\mu}_{\tau-1},H_0] = \frac{\sigma^{2}}{n"
        r" \tau^{2}}"
    ),
    "em_cond_mean_h1": (
        r"\mathbb{E}[\hat{\mu}_{\tau}\mid\hat{\mu}_{\tau-1},H_1^{\tau}] = \frac{\tau -"
        r" 1}{\tau} \hat{\mu}_{\tau-1} + \frac{\left(n - 1\right) \mu + z^{*}}{n \tau}"
    ),
    "em_cond_var_h1": (
        r"\mathrm{Var}[\hat{\mu}_{\tau}\mid\hat{\mu}_{\tau-1},H_1^{\tau}] = \frac{\left(n -"
        r" 1\right) \sigma^{2}}{n^{2} \tau^{2}}"
    ),
    "em_log_lr_1d": (
        r"\log \mathrm{LR}_{\tau} = - \frac{\log{\left(\frac{n - 1}{n} \right)}}{2} -"
        r" \frac{n}{2 \left(n - 1\right) \sigma^{2}} \left(\bar{X}_{\tau} - \mu\right)^{2} +"
        r" \frac{n}{\left(n - 1\right) \sigma^{2}} \left(z^{*} - \mu\right)"
        r" \left(\bar{X}_{\tau} - \mu\right) - \frac{\left(z^{*} - \mu\right)^{2}}{2 \left(n"
        r" - 1\right) \sigma^{2}}"
    ),
    "em_log_lr_step_1d": (
        r"\log \mathrm{LR}_{\tau} = - \frac{\log{\left(\frac{n - 1}{n} \right)}}{2} -"
        r" \frac{n}{2 \left(n - 1\right) \sigma^{2}} \left(\bar{X}_{\tau} - \mu\right)^{2} +"
        r" \frac{n}{\left(n - 1\right) \sigma^{2}} \left(z^{*} - \mu\right)"
        r" \left(\bar{X}_{\tau} - \mu\right) - \frac{\left(z^{*} - \mu\right)^{2}}{2 \left(n"
        r" - 1\right) \sigma^{2}}"
    ),
    "em_log_lr": (
        r"\log \mathrm{LR}_{\tau} = - \frac{d}{2} \log{\left(\frac{n - 1}{n} \right)} -"
        r" \frac{n}{2 \left(n - 1\right)} \mathbf{N}^{\top}\boldsymbol{\Sigma}^{-1}\mathbf{N}"
        r" + \frac{n}{n - 1} \mathbf{N}^{\top}\boldsymbol{\Sigma}^{-1}\boldsymbol{\delta} -"
        r" \frac{m^{*}}{2 \left(n - 1\right)}"
    ),
    "em_log_lr_step": (
        r"\log \mathrm{LR}_{\tau} = - \frac{d}{2} \log{\left(\frac{n - 1}{n} \right)} -"
        r" \frac{n}{2 \left(n - 1\right)} \mathbf{N}^{\top}\boldsymbol{\Sigma}^{-1}\mathbf{N}"
        r" + \frac{n}{n - 1} \mathbf{N}^{\top}\boldsymbol{\Sigma}^{-1}\boldsymbol{\delta} -"
        r" \frac{m^{*}}{2 \left(n - 1\right)}"
    ),
    "em_c0": (
        r"c_{0} = - \frac{d}{2} \log{\left(\frac{n - 1}{n} \right)} - \frac{m^{*}}{2 \left(n"
        r" - 1\right)}"
    ),
    "em_c1": (
        r"\mathbf{c}_{1} = k_{1}\,\boldsymbol{\Sigma}^{-1}\boldsymbol{\delta},\quad k_{1} ="
        r" \frac{n}{n - 1}"
    ),
    "em_C2": (
        r"\mathbf{C}_{2} = k_{2}\,\boldsymbol{\Sigma}^{-1},\quad k_{2} = - \frac{n}{2 \left(n"
        r" - 1\right)}"
    ),
    "em_final_log_lr_1d": (
        r"\log \mathrm{LR}_{\mathrm{FO}} = - \frac{\log{\left(\frac{N_{T} - 1}{N_{T}}"
        r" \right)}}{2} - \frac{N_{T}}{2 \left(N_{T} - 1\right) \sigma^{2}}"
        r" \left(\hat{\mu}_{T} - \mu\right)^{2} + \frac{N_{T}}{\left(N_{T} - 1\right)"
        r" \sigma^{2}} \left(z^{*} - \mu\right) \left(\hat{\mu}_{T} - \mu\right) -"
        r" \frac{\left(z^{*} - \mu\right)^{2}}{2 \left(N_{T} - 1\right) \sigma^{2}}"
    ),
    "em_final_log_lr": (
        r"\log \mathrm{LR}_{\mathrm{FO}} = - \frac{d}{2} \log{\left(\frac{N_{T} - 1}{N_{T}}"
        r" \right)} - \frac{N_{T}}{2 \left(N_{T} - 1\right)}"
        r" \mathbf{N}^{\top}\boldsymbol{\Sigma}^{-1}\mathbf{N} + \frac{N_{T}}{N_{T} - 1}"
        r" \mathbf{N}^{\top}\boldsymbol{\Sigma}^{-1}\boldsymbol{\delta} - \frac{m^{*}}{2"
        r" \left(N_{T} - 1\right)}"
    ),
    "em_final_log_lr_nonstationary_1d": (
        r"\log \mathrm{LR}_{\mathrm{FO}} = - \frac{\log{\left(\frac{B_{\neg\tau} + \left(n -"
        r" 1\right) \sigma^{2}}{B_{\neg\tau} + n \sigma^{2}} \right)}}{2} + \frac{\left(N_{T}"
        r" \hat{\mu}_{T} - A_{\neg\tau} - n \mu\right)^{2}}{2 \left(B_{\neg\tau} + n"
        r" \sigma^{2}\right)} - \frac{\left(N_{T} \hat{\mu}_{T} - A_{\neg\tau} - \left(n -"
        r" 1\right) \mu - z^{*}\right)^{2}}{2 \left(B_{\neg\tau} + \left(n - 1\right)"
        r" \sigma^{2}\right)}"
    ),
    "sgd_log_lr": (
        r"\log \mathrm{LR}_{\mathrm{SGD}} = - \frac{d}{2} \log{\left(\frac{n - 1}{n} \right)}"
        r" - \frac{n}{2 \left(n - 1\right) \eta^{2}} N^{\top}\Sigma_{g}^{-1}N -"
        r" \frac{n}{\left(n - 1\right) \eta} N^{\top}\Sigma_{g}^{-1}\delta_{g} -"
        r" \frac{m^{*}}{2 \left(n - 1\right)}"
    ),
    "dp_sgd_log_lr_coord": (
        r"\log \mathrm{LR}_{j} = - \frac{\log{\left(\frac{\left(n - 1\right) \lambda_{j} +"
        r" \sigma_{\mathrm{DP}}^{2} C^{2}}{n \lambda_{j} + \sigma_{\mathrm{DP}}^{2} C^{2}}"
        r" \right)}}{2} + \frac{n^{2} \tilde{N}_{j}^{2}}{2 \eta^{2} \left(n \lambda_{j} +"
        r" \sigma_{\mathrm{DP}}^{2} C^{2}\right)} - \frac{\left(n \tilde{N}_{j} + \eta"
        r" \tilde{\delta}_{g,j}\right)^{2}}{2 \eta^{2} \left(\left(n - 1\right) \lambda_{j} +"
        r" \sigma_{\mathrm{DP}}^{2} C^{2}\right)}"
    ),
    "em_gamma_max": (
        r"\gamma_{\max} = \frac{m^{*}}{2} - \frac{d}{2} \log{\left(\frac{n - 1}{n} \right)}"
    ),
    "em_R2": (
        r"R^{2}(\gamma) = \frac{2 \left(n - 1\right)}{n} \left(\frac{m^{*}}{2} - \gamma -"
        r" \frac{d}{2} \log{\left(\frac{n - 1}{n} \right)}\right)"
    ),
    "em_alpha": (
        r"\alpha(\gamma) = F_{\chi^{2}_{d}\left(n m^{*}\right)}\left(2 \left(n - 1\right)"
        r" \left(\frac{m^{*}}{2} - \gamma - \frac{d}{2} \log{\left(\frac{n - 1}{n}"
        r" \right)}\right)\right)"
    ),
    "em_beta": (
        r"\beta(\gamma) = \bar{F}_{\chi^{2}_{d}\left(\left(n - 1\right) m^{*}\right)}\left(2"
        r" n \left(\frac{m^{*}}{2} - \gamma - \frac{d}{2} \log{\left(\frac{n - 1}{n}"
        r" \right)}\right)\right)"
    ),
    "em_threshold": (
        r"\gamma(p) = \frac{m^{*}}{2} - \frac{d}{2} \log{\left(\frac{n - 1}{n} \right)} -"
        r" \frac{F^{-1}_{\chi^{2}_{d}\left(n m^{*}\right)}\left(p\right)}{2 \left(n -"
        r" 1\right)}"
    ),
    "em_alpha_1d": (
        r"\alpha(\gamma) = \Phi\left(\frac{\sqrt{n} \left(z^{*} - \mu\right)}{\sigma} +"
        r" \sqrt{\left(n - 1\right) \left(\frac{\left(z^{*} - \mu\right)^{2}}{\sigma^{2}} -"
        r" \log{\left(\frac{n - 1}{n} \right)} - 2 \gamma\right)}\right) -"
        r" \Phi\left(\frac{\sqrt{n} \left(z^{*} - \mu\right)}{\sigma} - \sqrt{\left(n -"
        r" 1\right) \left(\frac{\left(z^{*} - \mu\right)^{2}}{\sigma^{2}} -"
        r" \log{\left(\frac{n - 1}{n} \right)} - 2 \gamma\right)}\right)"
    ),
    "em_beta_1d": (
        r"\beta(\gamma) = \Phi\left(\frac{\sqrt{n - 1} \left(z^{*} - \mu\right)}{\sigma} -"
        r" \sqrt{n} \sqrt{\frac{\left(z^{*} - \mu\right)^{2}}{\sigma^{2}} -"
        r" \log{\left(\frac{n - 1}{n} \right)} - 2 \gamma}\right) + \Phi\left(- \frac{\sqrt{n"
        r" - 1} \left(z^{*} - \mu\right)}{\sigma} - \sqrt{n} \sqrt{\frac{\left(z^{*} -"
        r" \mu\right)^{2}}{\sigma^{2}} - \log{\left(\frac{n - 1}{n} \right)} - 2"
        r" \gamma}\right)"
    ),
    "em_gamma_max_1d": (
        r"\gamma_{\max} = \frac{\left(z^{*} - \mu\right)^{2}}{2 \sigma^{2}} -"
        r" \frac{\log{\left(\frac{n - 1}{n} \right)}}{2}"
    ),
    "em_root_lo_1d": (
        r"\bar{X}_{\tau}^{(1)} - \mu = z^{*} - \mu - \sigma \sqrt{\frac{n - 1}{n}}"
        r" \sqrt{\frac{\left(z^{*} - \mu\right)^{2}}{\sigma^{2}} - \log{\left(\frac{n - 1}{n}"
        r" \right)} - 2 \gamma}"
    ),
    "em_root_hi_1d": (
        r"\bar{X}_{\tau}^{(2)} - \mu = z^{*} - \mu + \sigma \sqrt{\frac{n - 1}{n}}"
        r" \sqrt{\frac{\left(z^{*} - \mu\right)^{2}}{\sigma^{2}} - \log{\left(\frac{n - 1}{n}"
        r" \right)} - 2 \gamma}"
    ),
    "fo_alpha_1d": (
        r"\alpha_{\mathrm{FO}}(\gamma) = \Phi\left(\frac{\sqrt{N_{T}} \left(z^{*} -"
        r" \mu\right)}{\sigma} + \sqrt{\left(N_{T} - 1\right) \left(\frac{\left(z^{*} -"
        r" \mu\right)^{2}}{\sigma^{2}} - \log{\left(\frac{N_{T} - 1}{N_{T}} \right)} - 2"
        r" \gamma\right)}\right) - \Phi\left(\frac{\sqrt{N_{T}} \left(z^{*} -"
        r" \mu\right)}{\sigma} - \sqrt{\left(N_{T} - 1\right) \left(\frac{\left(z^{*} -"
        r" \mu\right)^{2}}{\sigma^{2}} - \log{\left(\frac{N_{T} - 1}{N_{T}} \right)} - 2"
        r" \gamma\right)}\right)"
    ),
    "fo_beta_1d": (
        r"\beta_{\mathrm{FO}}(\gamma) = \Phi\left(\frac{\sqrt{N_{T} - 1} \left(z^{*} -"
        r" \mu\right)}{\sigma} - \sqrt{N_{T}} \sqrt{\frac{\left(z^{*} -"
        r" \mu\right)^{2}}{\sigma^{2}} - \log{\left(\frac{N_{T} - 1}{N_{T}} \right)} - 2"
        r" \gamma}\right) + \Phi\left(- \frac{\sqrt{N_{T} - 1} \left(z^{*} -"
        r" \mu\right)}{\sigma} - \sqrt{N_{T}} \sqrt{\frac{\left(z^{*} -"
        r" \mu\right)^{2}}{\sigma^{2}} - \log{\left(\frac{N_{T} - 1}{N_{T}} \right)} - 2"
        r" \gamma}\right)"
    ),
    "fo_gamma_max_1d": (
        r"\gamma_{\max}^{(T)} = \frac{\left(z^{*} - \mu\right)^{2}}{2 \sigma^{2}} -"
        r" \frac{\log{\left(\frac{N_{T} - 1}{N_{T}} \right)}}{2}"
    ),
    "fo_root_lo_1d": (
        r"W^{(1)} = z^{*} - \mu - \sigma \sqrt{\frac{N_{T} - 1}{N_{T}}}"
        r" \sqrt{\frac{\left(z^{*} - \mu\right)^{2}}{\sigma^{2}} - \log{\left(\frac{N_{T} -"
        r" 1}{N_{T}} \right)} - 2 \gamma}"
    ),
    "fo_root_hi_1d": (
        r"W^{(2)} = z^{*} - \mu + \sigma \sqrt{\frac{N_{T} - 1}{N_{T}}}"
        r" \sqrt{\frac{\left(z^{*} - \mu\right)^{2}}{\sigma^{2}} - \log{\left(\frac{N_{T} -"
        r" 1}{N_{T}} \right)} - 2 \gamma}"
    ),
}


def test_every_seed_derivation_has_a_golden_display():
    assert set(_names()) == set(GOLDEN)
    for name in GOLDEN:
        assert get_derivation(name).display is not None, name


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_display_latex_golden(name):
    assert get_derivation(name).to_latex() == "".join(GOLDEN[name])


@pytest.mark.parametrize("name", sorted(GOLDEN))
def test_display_equals_derivation(name):
    """The printed form is the derived expression: ``display - expr`` simplifies to 0."""
    der = get_derivation(name)
    assert der.display_matches(), name


def test_display_check_can_fail():
    """A display that differs from the derivation (one coefficient 2 -> 3) is refuted."""
    der = get_derivation("em_log_lr_1d")
    n, mu, sigma, z, x = S.n, S.mu, S.sigma, S.z, S.xbar
    wrong = neg(frac(sq(dev(z, mu)), mul(3, dev(n, 1), sigma**2)))
    bad_display = sp.Add(*der.display.args[:-1], wrong, evaluate=False)
    bad = Derivation(name="bad", expr=der.expr, symbols=der.symbols, source=der.source,
                     display=bad_display)
    assert bad.display_matches() is False
    assert x in bad.display.free_symbols


def test_printer_keeps_hand_built_order():
    """SymPy's canonical order prints ``- mu + xbar``; the display keeps ``xbar - mu``."""
    names = {S.xbar: r"\bar{X}_{\tau}"}
    assert sp.latex(S.xbar - S.mu, symbol_names=names) == r"- \mu + \bar{X}_{\tau}"
    assert display_latex(dev(S.xbar, S.mu), names) == r"\bar{X}_{\tau} - \mu"
    # Canonical sub-expressions keep SymPy's usual printing inside a display.
    assert display_latex(frac(S.n, mul(2, dev(S.n, 1)))) == r"\frac{n}{2 \left(n - 1\right)}"
    assert DisplayPrinter().doprint(S.n - 1) == "n - 1"


def test_raw_latex_is_kept():
    der = get_derivation("em_log_lr_1d")
    assert r"- \mu + \bar{X}_{\tau}" in der.raw_latex()
    assert r"\bar{X}_{\tau} - \mu" in der.to_latex()


def test_display_rejects_foreign_symbols():
    with pytest.raises(ValueError, match="display has symbols"):
        Derivation(name="bad", expr=S.n, symbols=(S.n,), source="semi_sequential_mi x",
                   display=S.n + S.m)


def test_hand_built_nodes_never_alias_canonical_ones():
    """A canonical ``x - mu`` elsewhere prints as SymPy prints it, whatever was built before."""
    from semi_core.symbolic._display import OrderedAdd, plain

    built = dev(S.xbar, S.mu)
    assert isinstance(built, OrderedAdd) and built != S.xbar - S.mu
    assert plain(built) == S.xbar - S.mu
    assert display_latex(S.xbar - S.mu) == sp.latex(S.xbar - S.mu)

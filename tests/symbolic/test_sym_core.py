"""Derivation record, registry, LaTeX pins, seed-match flags, and a perturbation check."""

import numpy as np
import pytest
import sympy as sp

from semi_core.symbolic import Derivation, Phi, all_derivations, get_derivation, is_zero
from semi_core.symbolic import _symbols as S

# Every derivation whose derived form must differ from the seed's printed one (errata).
EXPECTED_DIFFERENT = {"em_R2", "em_alpha", "fo_root_lo_1d", "fo_root_hi_1d"}
# Derivations without a printed seed form.
EXPECTED_NO_SEED = {"gaussian_log_lr_proportional", "em_final_log_lr_nonstationary_1d",
                    "em_beta", "em_threshold", "dp_sgd_log_lr_coord"}
# Topic modules added later pin their own flags: a module may define ``EXPECTED_DIFFERENT`` /
# ``EXPECTED_NO_SEED`` (sets of derivation names), as the claim modules do.
for _name in __import__("semi_core.symbolic._registry", fromlist=["x"]).topic_modules():
    _mod = __import__(f"semi_core.symbolic.{_name}", fromlist=["x"])
    EXPECTED_DIFFERENT |= set(getattr(_mod, "EXPECTED_DIFFERENT", ()))
    EXPECTED_NO_SEED |= set(getattr(_mod, "EXPECTED_NO_SEED", ()))


def _semi_names() -> set[str]:
    """Derivations of the SeMI seed's topic modules (other topic modules have their own tests)."""
    from semi_core.symbolic._core import registered

    mods = {"gaussian", "empirical_mean", "errors", "sgd"}
    all_derivations()
    return {k for k, b in registered().items()
            if b.__wrapped__.__module__.rsplit(".", 1)[1] in mods}


def test_registry_names_and_types():
    ders = all_derivations()
    semi = _semi_names()
    assert len(semi) >= 30
    for name, der in ders.items():
        assert isinstance(der, Derivation)
        assert der.name == name
        assert der.source.split(" ", 1)[0].isidentifier(), der.source  # "<seed> <section>"
        if name in semi:
            assert der.source.startswith("semi_sequential_mi ")
        assert der.expr.free_symbols <= set(der.symbols)


def _flagged_names() -> set[str]:
    """The SeMI derivations plus those of topic modules that pin their own flags."""
    from semi_core.symbolic._core import registered

    all_derivations()
    pinned = {n.rsplit(".", 1)[1] for n in {b.__wrapped__.__module__
                                            for b in registered().values()}
              if hasattr(__import__(n, fromlist=["x"]), "EXPECTED_DIFFERENT")
              or hasattr(__import__(n, fromlist=["x"]), "EXPECTED_NO_SEED")}
    return _semi_names() | {k for k, b in registered().items()
                            if b.__wrapped__.__module__.rsplit(".", 1)[1] in pinned}


def test_matches_seed_flags():
    """Proven equalities and the recorded errata (the claims registry reuses these flags)."""
    ders = all_derivations()
    for name in sorted(_flagged_names()):
        der = ders[name]
        flag = der.matches_seed()
        if name in EXPECTED_DIFFERENT:
            assert flag is False, name
            assert der.note, name
        elif name in EXPECTED_NO_SEED:
            assert flag is None, name
        else:
            assert flag is True, name


def test_get_derivation_validation():
    with pytest.raises(ValueError, match="name must be one of"):
        get_derivation("no_such_formula")
    with pytest.raises(TypeError, match="name must be a str"):
        get_derivation(3)


def test_derivation_rejects_missing_symbols():
    with pytest.raises(ValueError, match="symbols must list every free symbol"):
        Derivation(name="bad", expr=S.n + S.m, symbols=(S.n,), source="semi_sequential_mi x")


LATEX_PINS = {
    "em_log_lr": (
        r"\log \mathrm{LR}_{\tau} = - \frac{d \log{\left(\frac{n - 1}{n} \right)}}{2} + "
        r"\frac{\mathbf{N}^{\top}\boldsymbol{\Sigma}^{-1}\boldsymbol{\delta} n}{n - 1} - "
        r"\frac{m^{*}}{2 \left(n - 1\right)} - "
        r"\frac{n \mathbf{N}^{\top}\boldsymbol{\Sigma}^{-1}\mathbf{N}}{2 \left(n - 1\right)}"),
    "em_gamma_max": (r"\gamma_{\max} = - \frac{d \log{\left(\frac{n - 1}{n} \right)}}{2} + "
                     r"\frac{m^{*}}{2}"),
    "em_c1": (r"\mathbf{c}_{1} = k_{1}\,\boldsymbol{\Sigma}^{-1}\boldsymbol{\delta},\quad "
              r"k_{1} = \frac{n}{n - 1}"),
    "em_cond_var_h0": (r"\mathrm{Var}[\hat{\mu}_{\tau}\mid\hat{\mu}_{\tau-1},H_0] = "
                       r"\frac{\sigma^{2}}{n \tau^{2}}"),
    "em_R2": (r"R^{2}(\gamma) = - \frac{d \left(n - 1\right) \log{\left(1 - \frac{1}{n} "
              r"\right)}}{n} - \frac{2 \gamma \left(n - 1\right)}{n} + "
              r"\frac{m^{*} \left(n - 1\right)}{n}"),
}


@pytest.mark.parametrize("name", sorted(LATEX_PINS))
def test_latex_pinned(name):
    """The raw derived tree (SymPy's canonical printing); display goldens: test_sym_display."""
    assert get_derivation(name).raw_latex() == LATEX_PINS[name]


def test_latex_deterministic_and_custom_functions():
    a = get_derivation("em_alpha").raw_latex()
    assert a == get_derivation("em_alpha").raw_latex()
    assert r"F_{\chi^{2}_{d}\left(m^{*} n\right)}" in a
    assert r"F_{\chi^{2}_{d}\left(n m^{*}\right)}" in get_derivation("em_alpha").to_latex()
    assert r"\Phi\left(" in get_derivation("em_alpha_1d").to_latex()
    assert r"F^{-1}_{\chi^{2}_{d}" in get_derivation("em_threshold").to_latex()


def test_perturbation_breaks_equality(rng):
    """Scaling one term by 1.1 must make both the symbolic and the numeric check fail."""
    der = get_derivation("em_log_lr")
    lin = sp.expand(der.expr).coeff(S.ell) * S.ell
    perturbed = der.expr + sp.Rational(1, 10) * lin       # linear term x 1.1
    assert is_zero(der.expr - der.seed_form)
    assert not is_zero(perturbed - der.seed_form)
    bad = Derivation(name="em_log_lr_perturbed", expr=perturbed, symbols=der.symbols,
                     source=der.source, seed_form=der.seed_form)
    assert bad.matches_seed() is False
    # Numerically: the perturbed form no longer equals the seed at random points.
    q, ell, m = rng.uniform(0.1, 3, 100), rng.normal(size=100), rng.uniform(0.1, 3, 100)
    n, d = rng.integers(2, 50, 100).astype(float), rng.integers(1, 5, 100).astype(float)
    seed_f = sp.lambdify(der.symbols, der.seed_form)
    assert np.allclose(der.lambdify()(q, ell, m, n, d), seed_f(q, ell, m, n, d), rtol=1e-10)
    assert not np.allclose(bad.lambdify()(q, ell, m, n, d), seed_f(q, ell, m, n, d), rtol=1e-10)


def test_is_zero_phi_identity():
    x = sp.Symbol("x", real=True)
    assert is_zero(Phi(-x) - (1 - Phi(x)))
    assert not is_zero(Phi(-x) - Phi(x))


def test_lambdify_uses_log1p_for_stability():
    f = get_derivation("em_gamma_max").lambdify()
    n = 1e9
    # -d/2 log(1 - 1/n) for huge n: log1p keeps full relative accuracy.
    assert f(0.0, n, 1.0) == pytest.approx(-0.5 * np.log1p(-1.0 / n), rel=1e-14)


def test_seed_latex():
    assert r"\frac{m^{*} n^{2}}{2}" in get_derivation("em_R2").seed_latex()  # the erratum
    assert get_derivation("em_beta").seed_latex() is None


def test_topic_modules_are_discovered():
    """Every public module of semi_core.symbolic is imported by the registry (pkgutil)."""
    import sys

    from semi_core.symbolic._registry import topic_modules

    mods = topic_modules()
    assert {"empirical_mean", "errors", "gaussian", "sgd"} <= set(mods)
    assert not any(m.startswith("_") for m in mods)
    all_derivations()
    for m in mods:
        assert f"semi_core.symbolic.{m}" in sys.modules


def test_core_imports_no_topic_module():
    """``_core`` is the bottom of the symbolic package: no import of a topic module or of the
    registry (the old ``_core`` -> topic modules -> ``_core`` circle)."""
    import ast
    from pathlib import Path

    import semi_core.symbolic._core as core

    tree = ast.parse(Path(core.__file__).read_text())
    relative = [node.module or "" for node in ast.walk(tree)
                if isinstance(node, ast.ImportFrom) and node.level > 0]
    named = [a.name for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)
             and node.level > 0 and not node.module for a in node.names]
    assert set(relative) | set(named) <= {"_symbols", "_display"}, (relative, named)

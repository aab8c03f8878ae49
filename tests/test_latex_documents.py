"""The one LaTeX home (semi_core._latex): escaping, breaking equations, the preamble, and the
``derive --latex`` document compiled with pdflatex (no error, no overfull box over 20 pt)."""

from __future__ import annotations

import pytest

from semi_core import _latex
from semi_core.claims._core import FORM_SEP, form_name_latex, forms_latex
from tests.latex_helpers import compile_latex


def test_escape_specials_and_unicode():
    assert _latex.escape("a_b & 50% #1 $x$ {y} ~ ^") == (
        r"a\_\allowbreak{}b \& 50\% \#1 \$x\$ \{y\} \textasciitilde{} \textasciicircum{}")
    assert _latex.escape("§3.2, ε ≥ 1, τ ≤ T, x→y") == (
        r"\S{}3.2, $\varepsilon$ $\ge$ 1, $\tau$ $\le$ T, x$\to$y")


def test_equation_breaks_or_scales():
    assert _latex.equation(" a = b ") == "\\begin{dmath*}\na = b\n\\end{dmath*}"
    eq = _latex.equation(r"x = \begin{cases} 1 & y \\ 0 & \text{otherwise}\end{cases}")
    assert eq.startswith(r"\begin{center}\begin{adjustbox}{max width=\textwidth}")


def test_document_preamble_loads_what_formulas_use():
    doc = _latex.document(["body"], title="T_1")
    for pkg in (r"\usepackage{amsmath,amssymb}", r"\usepackage{breqn}",
                r"\usepackage{adjustbox}"):
        assert pkg in doc
    assert r"\title{T\_\allowbreak{}1}" in doc and doc.rstrip().endswith(r"\end{document}")


def test_overfull_parser():
    log = "Overfull \\hbox (21.5pt too wide) in paragraph\nOverfull \\vbox (3.0pt too high) has"
    assert _latex.overfull_boxes(log) == [21.5, 3.0]


@pytest.mark.parametrize("name, expected", [
    ("log_lr", (r"\log \mathrm{LR}", "=")),
    ("min_gap", (r"\min_{\text{settings}}\,(\text{power gap})", r"\geq")),
    ("gamma_max", (r"\gamma_{\mathrm{max}}", "=")),
    ("R2", ("R_{2}", "=")),
    ("cov0_factor", (r"\mathrm{cov}_{0}\,\text{factor}", "=")),
    ("radius", (r"\mathrm{radius}", "=")),
])
def test_form_names_are_formulas(name, expected):
    assert form_name_latex(name) == expected


def test_matrix_forms_are_written_entry_by_entry():
    import sympy as sp

    a, b = sp.symbols("a b")
    tex = forms_latex({"Sigma": sp.Matrix([[a, b], [b, a]])})
    parts = tex.split(FORM_SEP)
    assert parts == [r"\left(\Sigma\right)_{11} = a", r"\left(\Sigma\right)_{12} = b",
                     r"\left(\Sigma\right)_{21} = b", r"\left(\Sigma\right)_{22} = a"]


def test_derive_document_compiles(tmp_path):
    from semi_core.cli.derive import _document_body
    from semi_core.symbolic import all_derivations

    rows = [{"name": n, "latex": d.to_latex(), "source": d.source, "matches_seed": d.matches_seed(),
             "note": d.note} for n, d in all_derivations().items()]
    tex = _latex.document(_document_body(rows), title="Closed forms derived by semi_core")
    assert tex.count(r"\begin{dmath*}") + tex.count(r"\begin{adjustbox}") == len(rows)
    compile_latex(tex, tmp_path)

r"""The one home of the LaTeX documents the toolkit writes (``derive --latex``, ``verify --latex``).

A document is the preamble below plus a body; every displayed formula goes through
:func:`equation`, which uses ``breqn``'s ``dmath*`` so that a long expression is broken across
lines at its relations and binary operators instead of running into the margin. The preamble
loads what the printed formulas use (``amssymb`` for ``\mathbb``, ``breqn`` for the breaking,
``geometry`` for sane margins). Both documents are compiled in CI (``tests/test_latex_documents.py``
runs ``pdflatex`` when it is installed and fails on an error or on an overfull box wider than
:data:`MAX_OVERFULL_PT`).
"""

from __future__ import annotations

import re

__all__ = ["document", "equation", "escape", "overfull_boxes", "MAX_OVERFULL_PT", "PREAMBLE"]

#: The widest overfull box (in pt) a compiled document may have.
MAX_OVERFULL_PT = 20.0

PREAMBLE = (
    r"\documentclass[10pt]{article}",
    r"\usepackage[T1]{fontenc}",
    r"\usepackage[margin=2cm]{geometry}",
    r"\usepackage{amsmath,amssymb}",
    r"\usepackage{adjustbox}",
    r"\usepackage{breqn}",
    r"\setlength{\parindent}{0pt}",
    r"\setlength{\parskip}{0.5ex}",
    r"\emergencystretch=3em",
)

_TEX_SPECIAL = {
    "\\": r"\textbackslash{}", "&": r"\&", "%": r"\%", "$": r"\$", "#": r"\#", "_": r"\_",
    "{": r"\{", "}": r"\}", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
    "<": r"\textless{}", ">": r"\textgreater{}",
}
_UNICODE = {"§": r"\S{}", "±": r"$\pm$", "≤": r"$\le$", "≥": r"$\ge$", "×": r"$\times$",
            "≈": r"$\approx$", "→": r"$\to$", "—": "---", "–": "--", "τ": r"$\tau$",
            "ε": r"$\varepsilon$", "δ": r"$\delta$", "μ": r"$\mu$", "σ": r"$\sigma$",
            "Σ": r"$\Sigma$", "θ": r"$\theta$", "γ": r"$\gamma$", "α": r"$\alpha$",
            "β": r"$\beta$", "λ": r"$\lambda$", "ν": r"$\nu$", "ρ": r"$\rho$", "χ": r"$\chi$",
            "√": r"$\surd$", "∞": r"$\infty$", "·": r"$\cdot$", "′": "'", "’": "'", "“": "``",
            "”": "''", "−": "-", "…": r"\dots{}"}


def escape(text: str) -> str:
    """``text`` as LaTeX running text: special characters escaped, common Unicode symbols
    (Greek letters, relations, section sign) written as LaTeX, long code-like tokens allowed
    to break after underscores and dots."""
    out = []
    for ch in str(text):
        if ch in _TEX_SPECIAL:
            out.append(_TEX_SPECIAL[ch])
        elif ch in _UNICODE:
            out.append(_UNICODE[ch])
        else:
            out.append(ch)
    s = "".join(out)
    # a line may break after an escaped underscore or a slash inside long tokens
    return s.replace(r"\_", r"\_\allowbreak{}").replace("/", r"/\allowbreak{}")


#: Environments ``breqn`` cannot break inside: a formula holding one is scaled to the text
#: width instead (``adjustbox``), never left running into the margin.
_UNBREAKABLE = ("\\begin{cases}", "\\begin{matrix}", "\\begin{array}")


def equation(tex: str) -> str:
    """A displayed, unnumbered formula that breaks across lines when it is too long
    (``breqn``'s ``dmath*``); one holding a ``cases``/``matrix`` block, which cannot be
    broken, is scaled down to the text width."""
    tex = tex.strip()
    if any(env in tex for env in _UNBREAKABLE):
        return ("\\begin{center}\\begin{adjustbox}{max width=\\textwidth}$\\displaystyle "
                + tex + "$\\end{adjustbox}\\end{center}")
    return "\\begin{dmath*}\n" + tex + "\n\\end{dmath*}"


def document(body, *, title: str | None = None) -> str:
    """A standalone LaTeX document: :data:`PREAMBLE`, an optional title, then ``body``
    (a string or an iterable of lines)."""
    lines = list(PREAMBLE)
    if title is not None:
        lines += [r"\title{" + escape(title) + "}", r"\date{}"]
    lines.append(r"\begin{document}")
    if title is not None:
        lines.append(r"\maketitle")
    lines += [body] if isinstance(body, str) else list(body)
    lines += [r"\end{document}", ""]
    return "\n".join(lines)


_OVERFULL = re.compile(r"Overfull \\[hv]box \(([0-9.]+)pt too (?:wide|high)\)")


def overfull_boxes(log_text: str) -> list[float]:
    """Widths (pt) of the overfull boxes reported in a ``pdflatex`` log."""
    return [float(m.group(1)) for m in _OVERFULL.finditer(log_text)]

r"""Generate :mod:`semi_core.stats._leakage_forms`: the per-datum leakage derivations of
:mod:`semi_core.symbolic.leakage` printed as NumPy code.

The SymPy derivations stay the single home of each formula; the numeric layer calls their
printed forms, so the ``leakage`` command and :mod:`semi_core.stats.leakage` never import SymPy
(about 0.45 s of CPU) nor lambdify at run time. The printed expression is the one
:meth:`~semi_core.symbolic._core.Derivation.lambdify` evaluates (same stable rewrites:
``log1p`` for ``log(1 + small)``, ``Phi(a) - Phi(b)`` as :func:`semi_core._normal.phi_diff`),
with ``Phi`` as ``scipy.special.ndtr`` and ``Phinv`` as ``scipy.special.ndtri``.

Regenerate after changing a derivation (the tests fail until the file matches)::

    python -m semi_core.symbolic._leakage_codegen
"""

from __future__ import annotations

import sys
from pathlib import Path

import sympy as sp
from sympy.printing.numpy import NumPyPrinter

from . import leakage as S
from ._core import Derivation, _stable_logs, _stable_phi

__all__ = ["FORMS", "COMMAND", "TARGET", "render", "write", "main"]

#: Derivations printed, in the order of the generated module.
FORMS: tuple[str, ...] = (
    "pdl_leakage", "pdl_power", "pdl_threshold",
    "pdl_sub_leakage", "pdl_sub_power", "pdl_sub_paper_leakage", "pdl_sub_paper_power",
    "pdl_miss_advantage", "pdl_miss_power", "pdl_miss_threshold", "pdl_miss_threshold_adv",
    "pdl_plugin_effective_score", "pdl_bernoulli_k3",
    "pdl_eq10_mean0", "pdl_eq10_var0", "pdl_eq10_k3_0",
    "pdl_eq10_mean1", "pdl_eq10_var1", "pdl_eq10_k3_1",
    "pdl_cornish_fisher", "pdl_edgeworth_cdf",
    "pdl_avg_mean0", "pdl_avg_var0", "pdl_avg_mean1", "pdl_avg_var1",
)

#: The command that writes the module (named in its header).
COMMAND = "python -m semi_core.symbolic._leakage_codegen"

#: Where the generated module lives.
TARGET = Path(__file__).resolve().parents[1] / "stats" / "_leakage_forms.py"


class _FormsPrinter(NumPyPrinter):
    """NumPy printer with the symbolic layer's special functions (the names the generated
    module imports)."""

    def __init__(self):
        super().__init__({"fully_qualified_modules": True, "inline": True})

    def _print_Phi(self, e):
        return f"ndtr({self._print(e.args[0])})"

    def _print_Phinv(self, e):
        return f"ndtri({self._print(e.args[0])})"

    def _print_PhiDiff(self, e):
        return f"phi_diff({self._print(e.args[0])}, {self._print(e.args[1])})"

    def _print_log1p(self, e):
        return f"numpy.log1p({self._print(e.args[0])})"


def _numeric_expr(der: Derivation) -> sp.Expr:
    """The expression :meth:`Derivation.lambdify` evaluates (stable rewrites applied)."""
    return _stable_phi(_stable_logs(der.expr))


def _function(name: str) -> str:
    der = getattr(S, name)()
    code = _FormsPrinter().doprint(_numeric_expr(der))
    if "\n" in code or "#" in code:
        raise ValueError(f"{name}: the printer could not write one NumPy expression:\n{code}")
    args = [s.name for s in der.symbols]
    for a in args:
        if not a.isidentifier():
            raise ValueError(f"{name}: symbol {a!r} is not a Python identifier")
    summary = (getattr(S, name).__doc__ or name).strip().splitlines()[0]
    latex = der.to_latex().replace('"""', "'''")
    params = "\n".join(f"    {a} : float or array_like" for a in args)
    return (f"def {name}({', '.join(args)}):\n"
            f'    r"""{summary}\n\n'
            f"    ``{name}`` ({der.source}).\n\n"
            f"    .. math::\n\n        {latex}\n\n"
            f"    Parameters\n    ----------\n{params}\n"
            f"        Broadcast together, in the derivation's argument order.\n\n"
            f"    Returns\n    -------\n    ndarray or float\n"
            f'        The derived value.\n    """\n'
            f"    return {code}\n")


def render() -> str:
    """Text of :mod:`semi_core.stats._leakage_forms` from the current derivations.

    Returns
    -------
    str
        The module source (deterministic: the regeneration test compares it with the file).
    """
    head = (f'"""Per-datum leakage closed forms as NumPy code, GENERATED from the SymPy '
            f"derivations of\n:mod:`semi_core.symbolic.leakage` by ``{COMMAND}``.\n\n"
            "Do not edit: change the derivation and regenerate (a test fails while this file "
            "differs from\nwhat the derivations print). Same stable rewrites as "
            "``Derivation.lambdify``; no SymPy\nimport.\n"
            '"""\n'
            "# ruff: noqa: E501\n\n"
            "from __future__ import annotations\n\n"
            "import numpy\n"
            "from scipy.special import ndtr, ndtri\n\n"
            "from semi_core._normal import phi_diff\n\n"
            f"__all__ = {list(FORMS)!r}\n".replace("', '", "',\n           '"))
    return head + "".join("\n\n" + _function(name) for name in FORMS)


def write(path: Path | str | None = None) -> Path:
    """Write :func:`render` to ``path`` (default: :data:`TARGET`).

    Parameters
    ----------
    path : path-like, optional
        Destination; the package's ``semi_core/stats/_leakage_forms.py`` by default.

    Returns
    -------
    pathlib.Path
        The file written.
    """
    out = TARGET if path is None else Path(path)
    if out.is_symlink():
        raise ValueError(f"path: {out} is a symbolic link; outputs never follow links")
    out.write_text(render())
    return out


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m semi_core.symbolic._leakage_codegen [PATH]``.

    Parameters
    ----------
    argv : list of str, optional
        Optional destination path (default :data:`TARGET`).

    Returns
    -------
    int
        Exit status 0.
    """
    argv = sys.argv[1:] if argv is None else argv
    print(f"wrote {write(argv[0] if argv else None)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Core of the symbolic layer: the :class:`Derivation` record, special functions, registry.

Every closed form of the SeMI seed is *derived* here with SymPy from the conditional
Gaussians of one transition (never typed in from the paper), and stored as a
:class:`Derivation`. The paper's printed form is kept next to it (``seed_form``) so the
claims registry can ask :meth:`Derivation.matches_seed`.
"""

from __future__ import annotations

import functools
import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import sympy as sp
from scipy.special import ndtr, ndtri
from sympy.codegen.cfunctions import log1p

from semi_core._normal import phi_diff

from ._display import display_latex, plain

__all__ = [
    "Derivation",
    "Phi",
    "Phinv",
    "NcChi2CDF",
    "NcChi2SF",
    "NcChi2PPF",
    "is_zero",
    "tidy",
    "group_log_ratio",
    "register",
    "registered",
    "LATEX_NAMES",
    "NUMERIC_MODULES",
    "numeric_lambdify",
]


# ---------------------------------------------------------------------------------------------
# Special functions with a LaTeX form and a SciPy implementation for lambdify.
# ---------------------------------------------------------------------------------------------


class Phi(sp.Function):
    r"""Standard normal CDF :math:`\Phi(x) = \tfrac12(1 + \operatorname{erf}(x/\sqrt2))`."""

    nargs = 1

    def _latex(self, printer, exp=None):
        arg = printer._print(self.args[0])
        tex = rf"\Phi\left({arg}\right)"
        return tex if exp is None else rf"{tex}^{{{exp}}}"

    def _eval_rewrite_as_erf(self, x, **kwargs):
        return (1 + sp.erf(x / sp.sqrt(2))) / 2

    def fdiff(self, argindex=1):
        x = self.args[0]
        return sp.exp(-x**2 / 2) / sp.sqrt(2 * sp.pi)


class Phinv(sp.Function):
    r"""Standard normal quantile :math:`\Phi^{-1}` (lambdifies to ``scipy.special.ndtri``)."""

    nargs = 1

    def _latex(self, printer, exp=None):
        tex = rf"\Phi^{{-1}}\left({printer._print(self.args[0])}\right)"
        return tex if exp is None else rf"\left({tex}\right)^{{{exp}}}"

    def _eval_rewrite_as_erfinv(self, p, **kwargs):
        return sp.sqrt(2) * sp.erfinv(2 * p - 1)


def _chi2_latex(name: str):
    def _latex(self, printer, exp=None):
        x, k, lam = (printer._print(a) for a in self.args)
        tex = rf"{name}_{{\chi^{{2}}_{{{k}}}\left({lam}\right)}}\left({x}\right)"
        return tex if exp is None else rf"\left({tex}\right)^{{{exp}}}"

    return _latex


class NcChi2CDF(sp.Function):
    r"""CDF :math:`F_{\chi^2_k(\lambda)}(x)` of the noncentral chi-squared distribution.

    Arguments ``(x, k, lam)``. For ``k = 1`` it rewrites to the normal CDF,
    :math:`F_{\chi^2_1(\lambda)}(x) = \Phi(\sqrt x - \sqrt\lambda) - \Phi(-\sqrt x - \sqrt\lambda)`,
    which lets SymPy prove the one-dimensional Lemmas 3.5-3.8 from the chi-squared form.
    """

    nargs = 3
    _latex = _chi2_latex("F")

    def _eval_rewrite_as_Phi(self, x, k, lam, **kwargs):
        if k == 1:
            return Phi(sp.sqrt(x) - sp.sqrt(lam)) - Phi(-sp.sqrt(x) - sp.sqrt(lam))
        return None


class NcChi2SF(sp.Function):
    r"""Survival function :math:`1 - F_{\chi^2_k(\lambda)}(x)` (evaluated as a tail, not 1 - CDF)."""

    nargs = 3

    def _latex(self, printer, exp=None):
        x, k, lam = (printer._print(a) for a in self.args)
        tex = rf"\bar{{F}}_{{\chi^{{2}}_{{{k}}}\left({lam}\right)}}\left({x}\right)"
        return tex if exp is None else rf"\left({tex}\right)^{{{exp}}}"

    def _eval_rewrite_as_Phi(self, x, k, lam, **kwargs):
        if k == 1:
            return 1 - NcChi2CDF(x, k, lam).rewrite(Phi)
        return None


class NcChi2PPF(sp.Function):
    r"""Quantile :math:`F^{-1}_{\chi^2_k(\lambda)}(p)` of the noncentral chi-squared distribution."""

    nargs = 3

    def _latex(self, printer, exp=None):
        p, k, lam = (printer._print(a) for a in self.args)
        tex = rf"F^{{-1}}_{{\chi^{{2}}_{{{k}}}\left({lam}\right)}}\left({p}\right)"
        return tex if exp is None else rf"\left({tex}\right)^{{{exp}}}"


def _ncx2_cdf(x, k, lam):
    # lazy: scipy.stats is a heavy import, loaded only when this runs
    from scipy.stats import ncx2

    return ncx2.cdf(x, k, lam)  # 0 for x < 0 (gamma above gamma_max)


def _ncx2_sf(x, k, lam):
    # lazy: scipy.stats is a heavy import, loaded only when this runs
    from scipy.stats import ncx2

    return ncx2.sf(x, k, lam)  # 1 for x < 0


def _ncx2_ppf(p, k, lam):
    # lazy: scipy.stats is a heavy import, loaded only when this runs
    from scipy.stats import ncx2

    return ncx2.ppf(p, k, lam)


def _ndtr(x):
    return ndtr(x)


def _ndtri(p):
    return ndtri(p)


# What lambdify maps the custom functions to (SciPy tails, not 1 - CDF).
NUMERIC_MODULES: list[Any] = [
    {
        "Phi": _ndtr,
        "Phinv": _ndtri,
        "PhiDiff": phi_diff,   # shared with the generated NumPy forms
        "NcChi2CDF": _ncx2_cdf,
        "NcChi2SF": _ncx2_sf,
        "NcChi2PPF": _ncx2_ppf,
        "log1p": np.log1p,
    },
    "scipy",
    "numpy",
]


def numeric_lambdify(symbols: Sequence[sp.Symbol], expr) -> Callable[..., np.ndarray]:
    """NumPy/SciPy function of ``symbols`` for any expression of this layer (``Phi``,
    ``Phinv``, noncentral chi-squared, display forms), with the shared :data:`NUMERIC_MODULES`.

    Unlike :meth:`Derivation.lambdify` no stable rewrite is applied: the expression is evaluated
    as written (the claims registry evaluates the seeds' printed forms this way).
    """
    if isinstance(expr, sp.MatrixBase):
        expr = expr.applyfunc(plain)
    elif isinstance(expr, sp.Basic):
        expr = plain(expr)
    return sp.lambdify(list(symbols), expr, modules=NUMERIC_MODULES)

# LaTeX names of the shared symbols (the symbol *names* stay plain identifiers).
LATEX_NAMES: dict[str, str] = {
    "z": r"z^{*}",
    "m": r"m^{*}",
    "xbar": r"\bar{X}_{\tau}",
    "muhat": r"\hat{\mu}_{\tau}",
    "muhat_prev": r"\hat{\mu}_{\tau-1}",
    "N_prev": r"N_{\tau-1}",
    "N_T": r"N_{T}",
    "q": r"\mathbf{N}^{\top}\boldsymbol{\Sigma}^{-1}\mathbf{N}",
    "ell": r"\mathbf{N}^{\top}\boldsymbol{\Sigma}^{-1}\boldsymbol{\delta}",
    "u": r"\mathbf{M}^{\top}\boldsymbol{\Sigma}^{-1}\mathbf{M}",
    "W": r"\hat{\mu}_{T}",
    "w": r"\tilde{N}",
    "dg": r"\tilde{\delta}_{g}",
    "lam": r"\lambda",
    "sigma_dp": r"\sigma_{\mathrm{DP}}",
    "eta": r"\eta",
    "C": r"C",
    "q_g": r"N^{\top}\Sigma_{g}^{-1}N",
    "ell_g": r"N^{\top}\Sigma_{g}^{-1}\delta_{g}",
    "m_g": r"m^{*}",
    "R2": r"R^{2}",
    "p": r"p",
    "A_other": r"A_{\neg\tau}",
    "B_other": r"B_{\neg\tau}",
    "mu_tau": r"\mu_{\tau}",
    "sigma_tau": r"\sigma_{\tau}",
    "n_tau": r"n_{\tau}",
    "x0": r"x",
    "m0": r"m_{0}",
    "m1": r"m_{1}",
    "v0": r"v_{0}",
    "v1": r"v_{1}",
}


# ---------------------------------------------------------------------------------------------
# Zero testing
# ---------------------------------------------------------------------------------------------


def _simplify_chain(expr: sp.Expr) -> sp.Expr:
    """A few rewrites that together settle the identities met here (logs, radicals, Phi)."""
    steps: list[Callable[[sp.Expr], sp.Expr]] = [
        lambda e: e,
        sp.cancel,
        lambda e: sp.expand(sp.expand_log(e, force=True)),
        sp.simplify,
        lambda e: sp.simplify(sp.expand_log(e.rewrite(Phi), force=True)),
        lambda e: sp.simplify(e.rewrite(Phi).rewrite(sp.erf)),
        lambda e: sp.simplify(sp.radsimp(sp.powsimp(sp.expand(e), force=True))),
    ]
    current = expr
    for step in steps:
        current = step(current)
        if current == 0:
            return current
    return current


def _phi_terms(expr: sp.Expr):
    """Split ``expr`` into ``(rest, [(coef, arg), ...])`` over its Phi(arg) terms."""
    rest = sp.Integer(0)
    items = []
    for term in sp.Add.make_args(sp.expand(expr)):
        phis = [f for f in sp.Mul.make_args(term) if isinstance(f, Phi)]
        if len(phis) == 1:
            items.append((term / phis[0], phis[0].args[0]))
        else:
            rest += term
    return rest, items


def _phi_zero(expr: sp.Expr) -> bool:
    """Zero test for sums of Phi terms: match arguments up to sign, Phi(-x) = 1 - Phi(x)."""
    rest, items = _phi_terms(expr)
    if not items:
        return False
    items = [[c, a] for c, a in items]
    for i in range(len(items)):
        if items[i][0] == 0:
            continue
        for j in range(i + 1, len(items)):
            if items[j][0] == 0:
                continue
            if _simplify_chain(items[i][1] - items[j][1]) == 0:
                items[i][0] += items[j][0]
                items[j][0] = 0
            elif _simplify_chain(items[i][1] + items[j][1]) == 0:
                rest += items[j][0]
                items[i][0] -= items[j][0]
                items[j][0] = 0
    return all(sp.simplify(c) == 0 for c, _ in items) and sp.simplify(rest) == 0


def is_zero(expr: sp.Expr, *, cases: Sequence[Mapping[sp.Symbol, sp.Expr]] = ()) -> bool:
    """Symbolic proof that ``expr`` is identically zero (under every substitution in ``cases``).

    ``cases`` splits a proof by sign (e.g. ``z* > mu`` and ``z* < mu``) or reparametrises a
    range (``n = 1 + n1`` with ``n1 > 0``) where an ``Abs`` or a square root of a product would
    otherwise block simplification. Substitutions of one case apply in insertion order.
    Sums of normal CDFs are compared argument by argument (``Phi`` is injective).
    """
    exprs = [sp.sympify(expr)] if not cases else [
        sp.sympify(expr).subs(list(c.items())) for c in cases]
    for e in exprs:
        if e.has(Phi) and _phi_zero(e):
            continue
        if _simplify_chain(e) != 0:
            return False
    return True


def _tidy_const(c: sp.Expr) -> sp.Expr:
    """Combine the logarithms of a constant and factor the rest (display form only)."""
    c = sp.expand(c)
    terms = sp.Add.make_args(c)
    logs = sp.Add(*[t for t in terms if t.has(sp.log)])
    rest = sp.Add(*[t for t in terms if not t.has(sp.log)])
    if logs != 0:
        logs = _combine_log_pair(sp.expand(sp.expand_log(logs, force=True)))
    return logs + sp.factor(rest)


def _combine_log_pair(logs: sp.Expr) -> sp.Expr:
    """``c log a - c log b`` -> ``c log(a/b)`` with the compound argument on top."""
    coeffs: dict[sp.Expr, sp.Expr] = {}
    for term in sp.Add.make_args(logs):
        lg = [f for f in sp.Mul.make_args(term) if isinstance(f, sp.log)]
        if len(lg) != 1:
            return sp.logcombine(sp.factor(logs), force=True)
        coeffs[lg[0].args[0]] = coeffs.get(lg[0].args[0], 0) + term / lg[0]
    coeffs = {a: sp.factor(c) for a, c in coeffs.items() if sp.simplify(c) != 0}
    if len(coeffs) == 1:
        (a, c), = coeffs.items()
        return c * sp.log(a)
    if len(coeffs) == 2:
        (a1, c1), (a2, c2) = sorted(coeffs.items(), key=lambda kv: -sp.count_ops(kv[0]))
        if sp.simplify(c1 + c2) == 0:
            return c1 * sp.log(a1 / a2)
    return sp.logcombine(sp.factor(logs), force=True)


def group_log_ratio(expr: sp.Expr, num: sp.Expr, den: sp.Expr) -> sp.Expr:
    """Rewrite ``log(den)`` as ``log(num) - log(num/den)`` so ``log(num)`` cancels (display)."""
    ratio = sp.log(sp.factor(num / den), evaluate=False)
    out = sp.expand(expr, log=False).subs(sp.log(den), sp.log(num) - ratio)
    return sp.expand(out, log=False)


def tidy(expr: sp.Expr, gens: Sequence[sp.Symbol], *, center: Mapping | None = None) -> sp.Expr:
    """Canonical display form of a polynomial in ``gens``: factored coefficients, combined logs.

    ``center`` maps a generator to its centre (e.g. ``{xbar: mu}``) so the polynomial is
    written in the deviation ``xbar - mu``. The value of the expression is unchanged.
    """
    center = dict(center or {})
    shifts = {g: sp.Dummy(f"t_{g.name}") for g in center}
    work = sp.expand(expr.subs({g: center[g] + shifts[g] for g in center}))
    vars_ = [shifts.get(g, g) for g in gens]
    poly = sp.Poly(work, *vars_)
    out = sp.Integer(0)
    for monom, coeff in poly.terms():
        mono = sp.Mul(*[v**k for v, k in zip(vars_, monom)])
        if all(k == 0 for k in monom):
            out += _tidy_const(coeff)
        else:
            out += sp.factor(coeff) * mono
    back = {shifts[g]: (g - center[g]) for g in center}
    return out.subs(back)


# ---------------------------------------------------------------------------------------------
# Derivation record
# ---------------------------------------------------------------------------------------------


def _stable_logs(expr: sp.Expr) -> sp.Expr:
    """Rewrite ``log(a)`` as ``log1p(a - 1)`` when ``a - 1`` is a single term (e.g. -1/n)."""

    def repl(arg):
        shifted = sp.cancel(arg - 1)
        num, _ = sp.fraction(shifted)
        if not isinstance(sp.expand(num), sp.Add) and shifted != 0 and not arg.is_Symbol:
            return log1p(shifted)
        return sp.log(arg)

    return expr.replace(lambda e: isinstance(e, sp.log), lambda e: repl(e.args[0]))


class PhiDiff(sp.Function):
    """Numeric-only node: ``Phi(x) - Phi(y)`` evaluated without cancellation (lambdify)."""

    nargs = 2


def _stable_phi(expr: sp.Expr) -> sp.Expr:
    """Replace ``Phi(a) - Phi(b)`` inside sums by ``PhiDiff(a, b)`` (numerics only)."""

    def repl(add):
        plus = [t for t in add.args if isinstance(t, Phi)]
        minus = [t for t in add.args if isinstance(-t, Phi) and t.could_extract_minus_sign()]
        if len(plus) == 1 and len(minus) == 1:
            rest = [t for t in add.args if t is not plus[0] and t is not minus[0]]
            return sp.Add(PhiDiff(plus[0].args[0], (-minus[0]).args[0]), *rest)
        return add

    return expr.replace(lambda e: isinstance(e, sp.Add) and e.has(Phi), repl)


@dataclass(frozen=True, eq=False)
class Derivation:
    """One derived closed form.

    Attributes
    ----------
    name : str
        Registry key, e.g. ``"em_log_lr_1d"``.
    expr : sympy.Expr
        The derived expression (source of truth).
    symbols : tuple of sympy.Symbol
        Argument order of :meth:`lambdify`.
    source : str
        Seed reference, e.g. ``"semi_sequential_mi §3.1 Thm 3.4"``.
    assumptions : tuple of str
        Conditions under which the expression holds.
    seed_form : sympy.Expr or None
        The seed's printed formula transcribed as SymPy (``None`` when the seed prints none).
    note : str
        Discrepancies with the seed, derivation remarks.
    lhs : str
        LaTeX of the left-hand side, used by :meth:`to_latex`.
    cases : tuple of dict
        Sign cases used when proving equality with ``seed_form`` (see :func:`is_zero`).
    display : sympy.Expr or None
        The form a person would write (collected, factored, deviations such as
        :math:`\\bar X_\\tau - \\mu`), built unevaluated with :mod:`._display`; printed by
        :meth:`to_latex` and proven equal to ``expr`` by :meth:`display_matches`.
    """

    name: str
    expr: sp.Expr
    symbols: tuple[sp.Symbol, ...]
    source: str
    assumptions: tuple[str, ...] = ()
    seed_form: sp.Expr | None = None
    note: str = ""
    lhs: str = ""
    cases: tuple[Mapping[sp.Symbol, sp.Expr], ...] = ()
    display: sp.Expr | None = None
    _cache: dict = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self):
        missing = self.expr.free_symbols - set(self.symbols)
        if missing:
            raise ValueError(
                f"Derivation {self.name!r}: symbols must list every free symbol of expr; "
                f"missing {sorted(map(str, missing))}"
            )
        if self.display is not None and not self.display.free_symbols <= set(self.symbols):
            raise ValueError(f"Derivation {self.name!r}: display has symbols not in symbols")

    # -- printing ---------------------------------------------------------------------------
    def to_latex(self) -> str:
        """Paper-ready LaTeX ``lhs = display`` (the display form; the raw tree without one)."""
        if self.display is None:
            return self.raw_latex()
        names = {s: LATEX_NAMES[s.name] for s in self.display.free_symbols
                 if s.name in LATEX_NAMES}
        body = display_latex(self.display, names)
        return f"{self.lhs} = {body}" if self.lhs else body

    def raw_latex(self) -> str:
        """LaTeX of the raw derived tree (SymPy's canonical, expanded order)."""
        names = {s: LATEX_NAMES[s.name] for s in self.expr.free_symbols if s.name in LATEX_NAMES}
        body = sp.latex(self.expr, symbol_names=names, order="lex")
        return f"{self.lhs} = {body}" if self.lhs else body

    def display_matches(self) -> bool:
        """Symbolic proof that the display form equals the derived expression (True if none)."""
        if self.display is None:
            return True
        if "display" not in self._cache:
            diff = plain(self.display) - self.expr
            cheap = sp.expand(sp.expand_log(diff, force=True))
            self._cache["display"] = (cheap == 0 or sp.cancel(cheap) == 0 or is_zero(diff)
                                      or (bool(self.cases) and is_zero(diff, cases=self.cases)))
        return self._cache["display"]

    def seed_latex(self) -> str | None:
        """LaTeX of the seed's printed form, or ``None``."""
        if self.seed_form is None:
            return None
        names = {s: LATEX_NAMES[s.name] for s in self.seed_form.free_symbols
                 if s.name in LATEX_NAMES}
        return sp.latex(self.seed_form, symbol_names=names, order="lex")

    # -- numerics ---------------------------------------------------------------------------
    def lambdify(self, *, stable: bool = True) -> Callable[..., np.ndarray]:
        """A NumPy/SciPy function of ``self.symbols`` (positional, broadcasting).

        With ``stable=True`` (default) logarithms of the form ``log(1 + small)`` are evaluated
        with ``log1p``, differences ``Phi(a) - Phi(b)`` on the tail side in log space
        (``log_ndtr``/``expm1``), and chi-squared tails with ``scipy.stats.ncx2.sf``.
        """
        key = ("lambdify", stable)
        if key not in self._cache:
            expr = _stable_phi(_stable_logs(self.expr)) if stable else self.expr
            self._cache[key] = sp.lambdify(self.symbols, expr, modules=NUMERIC_MODULES)
        return self._cache[key]

    # -- seed comparison ---------------------------------------------------------------------
    def matches_seed(self) -> bool | None:
        """Whether the derived expression equals the seed's printed form.

        ``True`` only with a symbolic proof (``simplify(expr - seed_form) == 0``); ``False``
        when the difference is non-zero at a random admissible point; ``None`` when the seed
        prints no formula for this quantity.
        """
        if self.seed_form is None:
            return None
        if "match" not in self._cache:
            diff = self.expr - self.seed_form
            if is_zero(diff, cases=self.cases):
                self._cache["match"] = True
            else:
                self._cache["match"] = False if _numerically_nonzero(diff, self) else None
                if self._cache["match"] is None:  # neither proven nor refuted: say so loudly
                    raise RuntimeError(
                        f"{self.name}: equality with the seed form is neither proven nor "
                        "refuted numerically"
                    )
        return self._cache["match"]

    def as_dict(self, *, latex: bool = True) -> dict[str, Any]:
        """JSON-ready summary (used by ``semi-core derive --json``)."""
        out = {
            "name": self.name,
            "latex": self.to_latex() if latex else None,
            "source": self.source,
            "matches_seed": self.matches_seed(),
            "note": self.note,
        }
        return out


def _numerically_nonzero(diff: sp.Expr, der: Derivation) -> bool:
    """Evaluate ``diff`` at admissible random points; True if clearly non-zero somewhere."""
    rng = random.Random(12345)
    syms = sorted(diff.free_symbols, key=lambda s: s.name)
    f = sp.lambdify(syms, diff, modules=NUMERIC_MODULES)
    hits = 0
    for _ in range(20):
        vals = []
        for s in syms:
            if s.name in ("n", "n_tau", "N_T"):
                vals.append(float(rng.randint(3, 40)))
            elif s.name == "N_prev":
                vals.append(float(rng.randint(0, 100)))
            elif s.name == "d":
                vals.append(float(rng.randint(1, 4)))
            elif s.name == "gamma":
                vals.append(rng.uniform(-3.0, 0.0))
            elif s.name == "p":
                vals.append(rng.uniform(0.01, 0.5))
            elif s.is_positive or s.is_nonnegative:
                vals.append(rng.uniform(0.3, 2.5))
            else:
                vals.append(rng.uniform(-2.0, 2.0))
        with np.errstate(all="ignore"):
            val = complex(f(*vals))
        if np.isfinite(val) and abs(val) > 1e-8:
            hits += 1
    return hits > 0


# ---------------------------------------------------------------------------------------------
# Registry
# ---------------------------------------------------------------------------------------------

_BUILDERS: dict[str, Callable[[], Derivation]] = {}


def register(name: str):
    """Decorator: register a cached zero-argument builder returning a :class:`Derivation`."""

    def deco(fn: Callable[[], Derivation]) -> Callable[[], Derivation]:
        cached = functools.lru_cache(maxsize=None)(fn)
        if name in _BUILDERS:
            raise ValueError(f"duplicate derivation name {name!r}")
        _BUILDERS[name] = cached
        return cached

    return deco


def registered() -> dict[str, Callable[[], Derivation]]:
    """The builders registered so far, name -> cached builder (a copy; see :mod:`._registry`)."""
    return dict(_BUILDERS)

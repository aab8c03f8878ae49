"""Claim records, checks and verdicts (the machinery behind ``semi-core verify``).

A :class:`Claim` holds one formula-bearing statement of a seed paper: where it is, the formula as
the seed states it (SymPy expressions in ``stated``), its hypotheses and a ``check`` that decides
it against an *independent* computation (our own SymPy derivation, mpmath quadrature, scipy
distributions or Monte Carlo with a standard-error tolerance). :func:`verify_claim` turns the
outcome into one of three verdicts:

``holds``
    the check on the stated form passed;
``fails``
    it did not; the detail carries a counterexample (parameters and both numbers) and, when the
    claim has a corrected form, that form is itself checked with the same check;
``holds only under ...``
    it fails in general but passes when the check is restricted to ``claim.condition``.

Every check must be able to fail: :func:`perturb_forms` scales one registered formula (by 1.1, or
by 1/1.1 for upper bounds) and the test suite asserts the verifier then reports ``fails``.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import sympy as sp

from semi_core._table import ResultDisplay, Table
from semi_core.symbolic import Phi, Phinv, get_derivation, numeric_lambdify
from semi_core.symbolic._display import display_latex, replace_symbols

__all__ = [
    "HOLDS",
    "FAILS",
    "HOLDS_UNDER",
    "Claim",
    "CheckContext",
    "Outcome",
    "ClaimResult",
    "verify_claim",
    "perturb_forms",
    "Phi",
    "Phinv",
    "lambdify",
    "derived_form",
    "symbolic_outcome",
    "numeric_outcome",
    "mc_outcome",
    "summary",
]

HOLDS = "holds"
FAILS = "fails"
HOLDS_UNDER = "holds only under"


@dataclass
class CheckContext:
    """What a check gets: quick mode (smaller Monte Carlo), a seed, and the restriction flag."""

    quick: bool = True
    seed: int = 0
    restricted: bool = False

    def rng(self, salt: str) -> np.random.Generator:
        """A Generator derived from the seed and a per-claim salt (order-independent)."""
        key = [int(b) for b in salt.encode()]
        return np.random.default_rng(np.random.SeedSequence([self.seed, *key]))


@dataclass
class Outcome:
    """Result of one check: pass/fail, a human-readable detail, and an optional counterexample."""

    ok: bool
    detail: str
    counterexample: dict[str, Any] | None = None


Forms = Mapping[str, sp.Expr]


@dataclass(frozen=True)
class Claim:
    """One registered statement of a seed.

    Attributes
    ----------
    id : str
        ``"<seed>:<label>"``, e.g. ``"semi_sequential_mi:lemB.5"``.
    seed : str
        Seed file stem (``semi_sequential_mi`` for ``semi_sequential_mi.txt``).
    location : str
        Section / theorem / equation as printed in the seed.
    title : str
        Short description.
    stated : dict of str to sympy.Expr
        The formula(s) as the seed states them.
    hypotheses : tuple of str
        Conditions the seed states (or implies) for the claim.
    check : callable
        ``check(forms, ctx) -> Outcome``: decides ``forms`` against an independent computation.
    method : str
        ``symbolic``, ``numeric``, ``monte-carlo`` or ``asymptotic`` (the strongest check used).
    derived : dict, optional
        Our own derivation of the same quantities (shown in the LaTeX/errata).
    corrected : dict, optional
        Corrected form for a failing claim (checked by the same ``check``).
    condition : str, optional
        Extra condition for ``holds only under`` (the check honours ``ctx.restricted``).
    perturb_key, perturb_factor : str, float
        Which form the can-fail test scales and by how much (1/1.1 for upper bounds).
    perturb : callable, optional
        Custom perturbation ``forms -> forms`` (e.g. a shift for bounds that may change sign).
    notes : str
        Discrepancies found by reading (typos, wrong cross-references) recorded with the claim.
    """

    id: str
    seed: str
    location: str
    title: str
    stated: dict[str, Any]
    hypotheses: tuple[str, ...]
    check: Callable[[Forms, CheckContext], Outcome]
    method: str
    derived: dict[str, Any] | None = None
    corrected: dict[str, Any] | None = None
    condition: str | None = None
    perturb_key: str | None = None
    perturb_factor: float = 1.1
    perturb: Callable[[Forms], dict] | None = None
    notes: str = ""

    @property
    def label(self) -> str:
        return self.id.split(":", 1)[1]


@dataclass(repr=False)
class ClaimResult(ResultDisplay):
    """A verdict with everything needed for JSON, LaTeX and the errata page.

    Prints as one line (id, verdict, method); ``summary()`` is a table of the claim's source,
    verdict, check and forms; ``to_dict()`` is :meth:`as_json`.
    """

    _repr_fields = ("id", "verdict", "method")

    id: str
    source: str
    verdict: str
    detail: str
    corrected_latex: str | None
    stated_latex: str
    derived_latex: str | None
    method: str
    title: str
    counterexample: dict[str, Any] | None = None
    condition: str | None = None
    notes: str = ""
    corrected_checked: bool | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def as_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source": self.source,
            "verdict": self.verdict,
            "detail": self.detail,
            "corrected_latex": self.corrected_latex,
            "title": self.title,
            "method": self.method,
            "stated_latex": self.stated_latex,
            "derived_latex": self.derived_latex,
            "counterexample": self.counterexample,
            "condition": self.condition,
            "notes": self.notes,
            "corrected_checked": self.corrected_checked,
        }

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe dict (:meth:`as_json`)."""
        return self.as_json()

    def summary(self) -> Table:
        """One row per field (``field, value``): source, verdict, check, detail, forms."""
        keys = ("id", "title", "source", "verdict", "condition", "method", "detail",
                "stated_latex", "derived_latex", "corrected_latex", "corrected_checked", "notes")
        rows = [{"field": k, "value": getattr(self, k)} for k in keys
                if getattr(self, k) not in (None, "")]
        return Table(rows, title=repr(self))


#: Separator of the equations in a ``*_latex`` field of :class:`ClaimResult`.
FORM_SEP = r";\quad "

#: How a registered form's name is written in formulas: (LaTeX, relation). The relation is the
#: one the claim asserts: "min_gap" holds the margin of an inequality "X - Y >= min_gap" over
#: the seed's parameter range (see :mod:`semi_core.claims.semi_sequential_mi.qualitative`).
FORM_NAMES: dict[str, tuple[str, str]] = {
    "log_lr": (r"\log \mathrm{LR}", "="),
    "LR_unif": (r"\mathrm{LR}_{\mathrm{Unif}}", "="),
    "log_LR_unif": (r"\log \mathrm{LR}_{\mathrm{Unif}}", "="),
    "mean0": (r"\mathbb{E}_{H_0}[S]", "="),
    "mean1": (r"\mathbb{E}_{H_1}[S]", "="),
    "var0": (r"\operatorname{Var}_{H_0}[S]", "="),
    "var1": (r"\operatorname{Var}_{H_1}[S]", "="),
    "lhs": (r"\text{left side}", "="),
    "rhs": (r"\text{right side}", "="),
    "lhs1": (r"\text{left side}_{1}", "="),
    "lhs2": (r"\text{left side}_{2}", "="),
    "Xbar_tau": (r"\bar{X}_{\tau}", "="),
    "eps_lb": (r"\varepsilon_{\mathrm{LB}}", "="),
    "E_mahalanobis": (r"\mathbb{E}\,\|z^*-\mu\|^2_{\Sigma^{-1}}", "="),
    "p_joint": (r"p_{\mathrm{joint}}", "="),
    "m_star": (r"m^{*}", "="),
    "min_gap": (r"\min_{\text{settings}}\,(\text{power gap})", r"\geq"),
    "min_gap_increment": (r"\min_{\text{settings}}\,(\text{gap increment})", r"\geq"),
    "min_drop": (r"\min_{\text{settings}}\,(\text{power drop})", r"\geq"),
    "min_final_drop": (r"\min_{\text{settings}}\,(\text{Final Observation drop})", r"\geq"),
    "sep_star_ratio": (r"\text{separation ratio}_{\mathrm{SeMI}^*}", "="),
    "sep_final": (r"\text{separation}_{\mathrm{Final}}", "="),
    "star_ratio": (r"\mathrm{TPR}_{\mathrm{SeMI}^*}(T)/\mathrm{TPR}_{\mathrm{SeMI}^*}(1)", "="),
    "tpr_ratio": (r"\text{TPR ratio}", "="),
    "ratio": (r"\text{power ratio}", "="),
    "ncp": (r"\lambda_{\mathrm{nc}}", "="),
    "loss_after": (r"\ell_{\text{after}}", "="),
    "var_out": (r"\operatorname{Var}_{\text{out}}", "="),
    "C_times_S": (r"C\,S", "="),
    "logdet": (r"\log\det", "="),
}


def form_name_latex(name: str) -> tuple[str, str]:
    """``(LaTeX, relation)`` of a registered form's name: :data:`FORM_NAMES`, else the SymPy
    symbol of the name (``gamma_max`` -> :math:`\\gamma_{max}`, ``R2`` -> :math:`R_{2}`) with
    ``=``."""
    if name in FORM_NAMES:
        return FORM_NAMES[name]
    head, *rest = name.split("_")
    words = []
    if rest and rest[-1] in ("factor", "ratio", "increment"):
        words.append(rest.pop())
    m = re.fullmatch(r"([A-Za-z]+?)(\d+)", head)
    base, sub = (m.group(1), [m.group(2)]) if m else (head, [])
    sub += rest

    def atom(w: str) -> str:
        tex = sp.latex(sp.Symbol(w))
        return tex if (len(w) == 1 or tex.startswith("\\")) else r"\mathrm{" + w + "}"

    out = atom(base)
    if sub:
        out += "_{" + ",".join(w if w.isdigit() else atom(w) for w in sub) + "}"
    for w in words:
        out += r"\,\text{" + w + "}"
    return out, "="


def forms_latex(forms: Forms | None) -> str | None:
    """``name = latex`` equations joined by :data:`FORM_SEP` (deterministic).

    Names are written as formulas (:func:`form_name_latex`); SymPy's printer, and forms taken
    from a derivation's display (see :func:`derived_form`) keep their hand-built order
    (:class:`semi_core.symbolic._display.DisplayPrinter`).
    """
    if not forms:
        return None
    parts = []
    for k, v in forms.items():
        lhs, rel = form_name_latex(k)
        if isinstance(v, sp.MatrixBase) and v.shape != (1, 1):
            # entry by entry: a matrix of long entries cannot be broken across lines
            for i in range(v.rows):
                for j in range(v.cols):
                    idx = f"{i + 1}{j + 1}" if v.cols > 1 and v.rows > 1 else f"{max(i, j) + 1}"
                    parts.append(f"\\left({lhs}\\right)_{{{idx}}} {rel} {display_latex(v[i, j])}")
            continue
        body = display_latex(v) if isinstance(v, sp.Basic | sp.MatrixBase) else str(v)
        parts.append(f"{lhs} {rel} {body}")
    return FORM_SEP.join(parts)


def perturb_forms(claim: Claim, forms: Forms | None = None) -> dict:
    """Scale one registered formula so that a correct check must report a failure."""
    forms = dict(claim.stated if forms is None else forms)
    if claim.perturb is not None:
        return claim.perturb(forms)
    key = claim.perturb_key or next(iter(forms))
    forms[key] = sp.nsimplify(claim.perturb_factor, rational=True) * forms[key]
    return forms


def _run(check, forms, ctx) -> Outcome:
    try:
        return check(forms, ctx)
    except (ValueError, TypeError, ZeroDivisionError, ArithmeticError) as exc:
        # A form that cannot even be evaluated (e.g. the square root of a negative number) fails.
        return Outcome(False, f"the form cannot be evaluated: {type(exc).__name__}: {exc}")


def verify_claim(claim: Claim, *, quick: bool = True, seed: int = 0,
                 forms: Forms | None = None) -> ClaimResult:
    """Decide one claim: ``holds``, ``fails`` (with counterexample and checked correction) or
    ``holds only under <condition>``.

    Parameters
    ----------
    claim : Claim
    quick : bool
        Smaller Monte Carlo sizes (tolerances still come from the standard error).
    seed : int
        Root seed of every Monte Carlo check.
    forms : dict, optional
        Forms to check instead of ``claim.stated`` (used by the perturbation tests).
    """
    stated = claim.stated if forms is None else forms
    ctx = CheckContext(quick=quick, seed=seed)
    out = _run(claim.check, stated, ctx)
    corrected_checked = None
    condition = None
    if out.ok:
        verdict, detail = HOLDS, out.detail
    elif claim.condition is not None and _run(
            claim.check, stated, replace(ctx, restricted=True)).ok:
        verdict = f"{HOLDS_UNDER} {claim.condition}"
        condition = claim.condition
        detail = f"fails in general: {out.detail}; holds under {claim.condition}"
    else:
        verdict, detail = FAILS, out.detail
        if claim.corrected is not None and forms is None:
            oc = _run(claim.check, claim.corrected, ctx)
            corrected_checked = oc.ok
            detail += f" | corrected form {'checked: holds' if oc.ok else 'ALSO FAILS'}: {oc.detail}"
    return ClaimResult(
        id=claim.id,
        source=f"{claim.seed}.txt, {claim.location}",
        verdict=verdict,
        detail=detail,
        corrected_latex=forms_latex(claim.corrected) if verdict == FAILS else None,
        stated_latex=forms_latex(stated) or "",
        derived_latex=forms_latex(claim.derived),
        method=claim.method,
        title=claim.title,
        counterexample=out.counterexample if not out.ok else None,
        condition=condition,
        notes=claim.notes,
        corrected_checked=corrected_checked,
    )


# ----------------------------------------------------------------------------- check helpers

def _fmt(v) -> str:
    if isinstance(v, complex | np.complexfloating):
        v = complex(v)
        if v.imag != 0 or not np.isfinite(v.real):
            return f"{v:.6g}"
        v = v.real
    try:
        return f"{float(v):.6g}"
    except (TypeError, ValueError):
        return str(v)


def lambdify(expr, symbols):
    """NumPy/SciPy function of ``symbols``: the symbolic layer's
    :func:`semi_core.symbolic.numeric_lambdify` (``Phi``/``Phinv`` -> ``ndtr``/``ndtri``)."""
    return numeric_lambdify(symbols, expr)


def derived_form(name: str, subs: Mapping | None = None, *, display: bool = False):
    """Our derivation of a quantity, taken from the symbolic layer (never retyped here).

    Parameters
    ----------
    name : str
        A :func:`semi_core.symbolic.get_derivation` name, e.g. ``"em_log_lr_1d"``.
    subs : mapping, optional
        Replacements of the derivation's symbols (by symbol or by name) with a claim's symbols
        or expressions, e.g. ``{"xbar": X}`` or invariants written out for ``d = 2``.
    display : bool
        Return the display form (the form a person writes, for the LaTeX of a corrected
        claim) instead of the derived tree; both are proven equal in the symbolic tests.
    """

    der = get_derivation(name)
    expr = der.display if display and der.display is not None else der.expr
    if subs:
        by_name = {s.name: s for s in der.symbols}
        table = {by_name.get(k) if isinstance(k, str) else k: sp.sympify(v)
                 for k, v in subs.items()}
        table.pop(None, None)  # a name this derivation does not use (e.g. a cancelled one)
        expr = replace_symbols(expr, table) if display else expr.xreplace(table)
    return expr


def symbolic_outcome(stated: sp.Expr, derived: sp.Expr, symbols: list[sp.Symbol],
                     sampler: Callable[[np.random.Generator], dict], rng: np.random.Generator,
                     *, what: str, rtol: float = 1e-9, n_points: int = 24) -> Outcome:
    """Symbolic equivalence ``stated == derived``; on failure, a numeric counterexample.

    Both sides are first evaluated at ``n_points`` random points from ``sampler``: a relative
    difference above ``rtol`` is a counterexample (reported with both numbers). Otherwise the
    difference is reduced symbolically (``expand_log`` then rational cancellation, then
    ``simplify`` for small forms) and the detail says whether SymPy proved it zero.
    """
    f_s, f_d = lambdify(stated, symbols), lambdify(derived, symbols)
    worst = None
    for _ in range(n_points):
        pt = sampler(rng)
        args = [pt[str(s)] for s in symbols]
        with np.errstate(all="ignore"):
            a, b = complex(f_s(*args)), complex(f_d(*args))
        err = abs(a - b) / max(1.0, abs(b))
        if not np.isfinite(err):
            err = math.inf
        if worst is None or err > worst[0]:
            worst = (err, pt, a, b)
    err, pt, a, b = worst
    if err > rtol:  # a numeric counterexample settles it; no need to simplify
        ce = {**{k: _num(v) for k, v in pt.items()}, "stated": _num(a), "derived": _num(b)}
        return Outcome(False, f"{what}: differs from our derivation; at "
                              f"{_pt(pt)} the seed gives {_fmt(a)}, we get {_fmt(b)}", ce)
    raw = sp.expand_log(stated - derived, force=True)
    # cheap first: rational cancellation with logs as atoms; simplify only for small forms
    diff = sp.cancel(sp.together(raw))
    if diff != 0 and sp.count_ops(raw) < 300:
        diff = sp.simplify(raw)
    if diff == 0:
        return Outcome(True, f"{what}: symbolically identical to our SymPy derivation "
                             f"(and at {n_points} random points, max rel. diff {err:.1e})")
    return Outcome(True, f"{what}: equal to our derivation at {n_points} random points "
                         f"(max rel. diff {err:.1e}; SymPy could not simplify the difference)")


def _num(v):
    if isinstance(v, str):
        return v
    v = complex(v)
    return v.real if v.imag == 0 else str(v)


def _pt(pt: Mapping[str, Any]) -> str:
    return ", ".join(f"{k}={_fmt(v)}" for k, v in pt.items())


def numeric_outcome(points: list[dict], stated_vals, ref_vals, *, what: str,
                    rtol: float = 1e-6, atol: float = 1e-10, ref_name: str = "reference") -> Outcome:
    """Compare values of the stated form with an independent computation at the given points."""
    stated_vals = np.asarray(stated_vals, dtype=complex)
    ref_vals = np.asarray(ref_vals, dtype=complex)
    with np.errstate(all="ignore"):
        err = np.abs(stated_vals - ref_vals) - (atol + rtol * np.abs(ref_vals))
    err = np.where(np.isfinite(err), err, np.inf)
    i = int(np.argmax(err))
    if err[i] <= 0:
        return Outcome(True, f"{what}: matches {ref_name} at {len(points)} random points "
                             f"(rtol {rtol:g}, atol {atol:g})")
    pt = points[i]
    ce = {**{k: _num(v) for k, v in pt.items()}, "stated": _num(stated_vals[i]),
          "reference": _num(ref_vals[i])}
    return Outcome(False, f"{what}: at {_pt(pt)} the seed gives {_fmt(stated_vals[i])}, "
                          f"{ref_name} gives {_fmt(ref_vals[i])}", ce)


def mc_outcome(cases: list[tuple[dict, float, float, float]], *, what: str, k: float = 4.0
               ) -> Outcome:
    """Monte Carlo comparison: each case is ``(params, predicted, estimate, se)``.

    Passes when every ``|predicted - estimate| <= k * se`` (``k`` standard errors; the default
    4 SE gives a per-case false-alarm rate below 1e-4 under normality of the estimate).
    """
    worst = None
    for params, pred, est, se in cases:
        z = abs(complex(pred) - est) / se if np.isfinite(complex(pred)) else math.inf
        if worst is None or z > worst[0]:
            worst = (z, params, pred, est, se)
    z, params, pred, est, se = worst
    if z <= k:
        return Outcome(True, f"{what}: within {k:g} Monte Carlo SE in {len(cases)} cases "
                             f"(largest deviation {z:.2f} SE)")
    ce = {**{kk: _num(v) for kk, v in params.items()}, "stated": _num(pred),
          "monte_carlo": float(est), "se": float(se)}
    return Outcome(False, f"{what}: at {_pt(params)} the seed gives {_fmt(pred)}, Monte Carlo "
                          f"gives {est:.6g} +- {se:.2g} ({z:.1f} SE away; tolerance {k:g} SE)", ce)


def summary(results: list[ClaimResult]) -> dict:
    """Counts per seed and verdict kind, plus the list of failures and conditional claims."""
    per_seed: dict[str, Counter] = {}
    for r in results:
        seed = r.id.split(":", 1)[0]
        kind = FAILS if r.verdict == FAILS else (HOLDS if r.verdict == HOLDS else HOLDS_UNDER)
        per_seed.setdefault(seed, Counter())[kind] += 1
    tot = Counter()
    for cnt in per_seed.values():
        tot.update(cnt)
    return {
        "total": len(results),
        "holds": tot[HOLDS],
        "fails": tot[FAILS],
        "holds_only_under": tot[HOLDS_UNDER],
        "per_seed": {s: {"registered": sum(c.values()), "holds": c[HOLDS], "fails": c[FAILS],
                         "holds_only_under": c[HOLDS_UNDER]} for s, c in per_seed.items()},
        "failures": [r.id for r in results if r.verdict == FAILS],
        "conditional": [r.id for r in results if r.verdict.startswith(HOLDS_UNDER)],
    }

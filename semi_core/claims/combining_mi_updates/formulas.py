"""Claims of ``combining_mi_updates.txt`` (Jagielski et al.), Appendix B.1 exact identities.

Claims ``B1.l2sq``, ``B1.l2sq.expansion``, ``B1.l2.sqrt`` hold; ``B1.l2`` holds only when the
step does not overshoot the point (see its notes; ``semi-core verify``, ``docs/errata.md``).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from .._core import Claim, lambdify, numeric_outcome, symbolic_outcome

SEED = "combining_mi_updates"

eta = sp.Symbol("eta", positive=True)
f0 = sp.Matrix(sp.symbols("f0_1 f0_2", real=True))
xv = sp.Matrix(sp.symbols("x_1 x_2", real=True))
SYMS = [eta, f0[0], f0[1], xv[0], xv[1]]


def _sq(v):
    return (v.T * v)[0, 0]


def _samp(rng):
    return {"eta": rng.uniform(0.01, 2), "f0_1": rng.normal(), "f0_2": rng.normal(),
            "x_1": rng.normal(), "x_2": rng.normal()}


def _check_l2sq(forms, ctx, key):
    f1 = f0 - 2 * eta * (f0 - xv)          # gradient step on ||f - x||^2
    return symbolic_outcome(forms[key], _sq(f1 - xv), SYMS, _samp, ctx.rng("cmu" + key),
                            what="l2^2 loss after the update (d=2)")


def _check_l2(forms, ctx, key):
    rng = ctx.rng("cmu" + key + str(ctx.restricted))
    f = lambdify(forms[key], SYMS)
    pts, sv, rv = [], [], []
    for _ in range(40):
        p = _samp(rng)
        a, b = np.array([p["f0_1"], p["f0_2"]]), np.array([p["x_1"], p["x_2"]])
        dist = np.linalg.norm(a - b)
        if ctx.restricted:
            p["eta"] = rng.uniform(0, 1) * dist
        f1 = a - p["eta"] * (a - b) / dist  # gradient step on ||f - x||
        pts.append(p)
        sv.append(f(*[p[str(s)] for s in SYMS]))
        rv.append(np.linalg.norm(f1 - b))
    return numeric_outcome(pts, sv, rv, what="l2 loss after the update", rtol=1e-10,
                           ref_name="the loss of the updated point")


def _claims() -> list[Claim]:
    loss0 = _sq(f0 - xv)
    ell = sp.sqrt(loss0)

    def C(label, location, title, stated, hyp, check, method, **kw):
        return Claim(id=f"{SEED}:{label}", seed=SEED, location=location, title=title,
                     stated=stated, hypotheses=tuple(hyp), check=check, method=method, **kw)

    return [
        C("B1.l2sq", "App. B.1, l2^2 loss", "loss ratio (1 - 2 eta)^2 after one step",
          {"loss_after": (1 - 2 * eta) ** 2 * loss0}, ("single update point x",),
          lambda f, c: _check_l2sq(f, c, "loss_after"), "symbolic"),
        C("B1.l2sq.expansion", "App. B.1, l2^2 loss (third line)", "expanded loss after one "
          "step", {"loss_after": loss0 + (4 * eta**2 - 4 * eta) * loss0},
          ("single update point x",), lambda f, c: _check_l2sq(f, c, "loss_after"), "symbolic"),
        C("B1.l2.sqrt", "App. B.1, l2 loss (fourth line)", "l2 loss after one step as a root",
          {"loss_after": sp.sqrt(ell**2 + eta**2 - 2 * eta * ell)}, ("x != f0",),
          lambda f, c: _check_l2(f, c, "loss_after"), "numeric"),
        C("B1.l2", "App. B.1, l2 loss (last line)", "l2 loss drops by exactly eta",
          {"loss_after": ell - eta}, ("x != f0",),
          lambda f, c: _check_l2(f, c, "loss_after"), "numeric",
          condition="eta <= ||f0 - x||_2 (the step does not overshoot x)",
          notes="in general the loss after the step is | ||f0 - x|| - eta |."),
    ]


CLAIMS = _claims()

r"""Claims of ``per_datum_leakage.txt`` about the set-up of its experiments (§5, App. E.1).

* ``secE.1.easy`` -- the coordinate-wise rule :math:`z^*_{\mathrm{easy}} = 1\{p\le 1/2\}`
  maximises the Mahalanobis distance over :math:`\{0,1\}^d`: holds (exhaustive search).
* ``secE.1.hard`` -- :math:`z^*_{\mathrm{hard}} = 1\{p>1/2\}` minimises it: holds.

Whether the appendix's expansions cover the experiments' Bernoulli data is checked with the
expansions themselves (``thmC.5.lattice``, :mod:`semi_core.claims.per_datum_leakage.appendix_c`).
"""

from __future__ import annotations

import itertools

import numpy as np
import sympy as sp

from .._core import Claim, lambdify, numeric_outcome

SEED = "per_datum_leakage"

p = sp.Symbol("p", positive=True)


# ----------------------------------------------------------------------------- App. E.1

def _mahalanobis_coord(z, p_):
    return (z - p_) ** 2 / (p_ * (1 - p_))


def _check_easy(forms, ctx, *, hardest=False):
    """The stated target's Mahalanobis distance vs the max (``hardest``: min) over {0,1}^d."""
    rng = ctx.rng("pdl.E1.hard" if hardest else "pdl.E1.easy")
    pick = min if hardest else max
    f = lambdify(forms["m_coord"], [p])
    pts, sv, rv = [], [], []
    for d_ in (3, 6, 9):
        p_vec = rng.uniform(0.25, 0.75, size=d_)
        best = pick(sum(_mahalanobis_coord(np.array(z), p_vec))
                   for z in itertools.product((0.0, 1.0), repeat=d_))
        pts.append({"d": d_, "p": ",".join(f"{v:.3f}" for v in p_vec)})
        sv.append(float(np.sum([f(v) for v in p_vec])))
        rv.append(float(best))
    what = "z_hard" if hardest else "z_easy"
    return numeric_outcome(pts, sv, rv, what=f"Mahalanobis distance of {what}", rtol=1e-12,
                           ref_name=f"the {'minimum' if hardest else 'maximum'} over {{0,1}}^d "
                                    "(exhaustive)")


# ----------------------------------------------------------------------------- registry

def _claims() -> list[Claim]:
    def C(label, location, title, stated, hyp, check, method, **kw):
        return Claim(id=f"{SEED}:{label}", seed=SEED, location=location, title=title,
                     stated=stated, hypotheses=tuple(hyp), check=check, method=method, **kw)

    z_ = sp.Symbol("z", real=True)
    m_coord = (z_ - p) ** 2 / (p * (1 - p))
    easy = sp.Piecewise((m_coord.subs(z_, 1), p <= sp.Rational(1, 2)), (m_coord.subs(z_, 0),
                                                                         True))
    hard = sp.Piecewise((m_coord.subs(z_, 1), p > sp.Rational(1, 2)), (m_coord.subs(z_, 0),
                                                                        True))
    return [
        C("secE.1.easy", "§5 / App. E.1 (a)", "z_easy = 1{p <= 1/2} has the largest "
          "Mahalanobis distance in {0,1}^d", {"m_coord": easy},
          ("p in (0, 1)^d", "diagonal C_sigma = diag(p(1-p))"), _check_easy, "numeric"),
        C("secE.1.hard", "§5 / App. E.1 (b)", "z_hard = 1{p > 1/2} has the smallest "
          "Mahalanobis distance in {0,1}^d", {"m_coord": hard},
          ("p in (0, 1)^d", "diagonal C_sigma = diag(p(1-p))"),
          lambda f, c: _check_easy(f, c, hardest=True), "numeric",
          notes="For p_j ~ U[1/4, 3/4] the three targets' scores are about 1.77 tau (easy), "
                "tau (medium) and 0.62 tau (hard): 8.9, 5 and 3.1 at n = 1000, d = 5000."),
    ]


CLAIMS = _claims()


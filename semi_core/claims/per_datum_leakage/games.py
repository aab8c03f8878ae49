r"""Claims of ``per_datum_leakage.txt`` on its games (§2, App. B): the optimal adversaries of
Theorem 2.2 and the connection between the per-datum and the average-datum games (App. B.3).

Both are decided by exact enumeration on small discrete mechanisms (every dataset, secret bit,
replaced position and output), so each check compares two exact numbers:

* ``thm2.2`` -- (a)-(b): the log-likelihood adversary with threshold 0 has advantage
  :math:`\mathrm{TV}(p^{out}, p^{in})` and no deterministic adversary (every subset of the
  outputs) does better; (c): at every level the (randomised) LR test has the largest power
  among the deterministic tests of that level. Holds.
* ``appB.3.average`` -- :math:`\mathrm{Adv}_n(\mathcal A)=\mathbb E_{z^*\sim\mathcal D}
  \mathrm{Adv}_n(\mathcal A_{z^*})` for an average-datum adversary seen as the collection of
  per-datum adversaries :math:`\mathcal A_{z^*}=\mathcal A(z^*,\cdot)`. Holds.
"""

from __future__ import annotations

import itertools

import numpy as np
import sympy as sp

from .._core import Claim, Outcome, lambdify, numeric_outcome

SEED = "per_datum_leakage"

TV, EADV = sp.symbols("TV E_adv_per_datum", real=True)


def _random_mechanism(rng, n_vals: int, n_out: int):
    """A random kernel P(o | sum of the dataset) on a small alphabet."""
    return rng.dirichlet(np.full(n_out, 0.7), size=n_vals)


def _output_laws(D, kernel, n_, z):
    """p_out(o) and p_in(o | z) of the per-datum game (Alg. 1) for the mechanism
    o ~ kernel[sum(D)], datasets of n_ points from D on {0, .., len(D)-1}, by enumeration."""
    k = len(D)
    p_out = np.zeros(kernel.shape[1])
    p_in = np.zeros(kernel.shape[1])
    for data in itertools.product(range(k), repeat=n_):
        w = float(np.prod(D[list(data)]))
        p_out += w * kernel[sum(data)]
        for j in range(n_):                   # position j replaced by z, j ~ U[n]
            p_in += w / n_ * kernel[sum(data) - data[j] + z]
    return p_out, p_in


def _check_thm22(forms, ctx):
    rng = ctx.rng("pdl.thm2.2")
    f = lambdify(forms["adv_bayes"], [TV])
    pts, sv, rv = [], [], []
    for _ in range(8):
        D = rng.dirichlet(np.ones(3))
        n_, kernel = 3, _random_mechanism(rng, 2 * 3 + 1, 6)
        z = int(rng.integers(0, 3))
        p0, p1 = _output_laws(D, kernel, n_, z)
        tv = 0.5 * float(np.abs(p1 - p0).sum())
        bayes = p1 > p0                          # A_Bayes: guess 1 iff log LR > 0
        adv_bayes = float(p1[bayes].sum() - p0[bayes].sum())      # 2 Acc - 1
        best = max(float(p1[list(S)].sum() - p0[list(S)].sum()) for r in range(7)
                   for S in itertools.combinations(range(6), r))
        if best > adv_bayes + 1e-12:
            return Outcome(False, f"a deterministic adversary has advantage {best:.6g} > the "
                                  f"Bayes adversary's {adv_bayes:.6g}",
                           {"best": best, "bayes": adv_bayes})
        # (c): the NP test (randomised at its boundary) vs every deterministic test of level a
        order = np.argsort(-(p1 / p0))
        for a_ in (0.05, 0.2, 0.5):
            c0, c1 = np.cumsum(p0[order]), np.cumsum(p1[order])
            i = int(np.searchsorted(c0, a_, side="right"))
            power = (c1[i - 1] if i else 0.0) + (
                (a_ - (c0[i - 1] if i else 0.0)) / p0[order[i]] * p1[order[i]] if i < 6 else 0.0)
            det = max(float(p1[list(S)].sum()) for r in range(7)
                      for S in itertools.combinations(range(6), r)
                      if p0[list(S)].sum() <= a_ + 1e-15)
            if det > power + 1e-12:
                return Outcome(False, f"at level {a_} a deterministic test has power {det:.6g} "
                                      f"> the LR test's {power:.6g}",
                               {"alpha": a_, "power_lr": power, "power_other": det})
        pts.append({"D": ",".join(f"{v:.3f}" for v in D), "z": z, "TV": tv})
        sv.append(f(tv))
        rv.append(adv_bayes)
    return numeric_outcome(pts, sv, rv, what="advantage of the Bayes (threshold-0 LR) "
                           "adversary; no subset beats it; NP power at levels 0.05-0.5",
                           rtol=1e-12, atol=1e-14, ref_name="its advantage by enumeration")


def _check_average(forms, ctx):
    """Alg. 3 (average-datum game) enumerated for a random adversary A(z*, o) (probability of
    guessing 1), against the mean over z* ~ D of its per-datum advantages (Alg. 1)."""
    rng = ctx.rng("pdl.appB.3")
    f = lambdify(forms["adv_avg"], [EADV])
    pts, sv, rv = [], [], []
    for _ in range(6):
        D = rng.dirichlet(np.ones(3))
        n_, kernel = 3, _random_mechanism(rng, 2 * 3 + 1, 5)
        A = rng.random((3, 5))                   # P(guess 1 | z*, o)
        per = []
        for z in range(3):
            p0, p1 = _output_laws(D, kernel, n_, z)
            per.append(float(p1 @ A[z] - p0 @ A[z]))          # 2 Acc - 1
        e_adv = float(np.dot(D, per))
        # average-datum game by enumeration: b = 0: z* ~ D independent; b = 1: z* = D_j
        acc = 0.0
        for data in itertools.product(range(3), repeat=n_):
            w = float(np.prod(D[list(data)]))
            o = kernel[sum(data)]
            acc += 0.5 * w * sum(D[z] * (1 - o @ A[z]) for z in range(3))
            acc += 0.5 * w * sum(o @ A[data[j]] for j in range(n_)) / n_
        pts.append({"D": ",".join(f"{v:.3f}" for v in D), "n": n_})
        sv.append(f(e_adv))
        rv.append(2 * acc - 1)
    return numeric_outcome(pts, sv, rv, what="E_{z*~D} Adv(A_z*)", rtol=1e-12, atol=1e-14,
                           ref_name="the average-datum advantage (Alg. 3, enumerated)")


def _claims() -> list[Claim]:
    def C(label, location, title, stated, hyp, check, method, **kw):
        return Claim(id=f"{SEED}:{label}", seed=SEED, location=location, title=title,
                     stated=stated, hypotheses=tuple(hyp), check=check, method=method, **kw)

    return [
        C("thm2.2", "§2.3, Theorem 2.2 (App. B.4)", "the threshold-0 LR adversary maximises the "
          "advantage, equal to TV; the LR test maximises the power at every level",
          {"adv_bayes": TV}, ("b ~ Bern(1/2)", "discrete outputs (checked by enumeration)"),
          _check_thm22, "numeric"),
        C("appB.3.average", "App. B.3", "Adv_n(A) = E_{z* ~ D} Adv_n(A_z*) (average-datum "
          "advantage is the mean per-datum advantage)", {"adv_avg": EADV},
          ("A(z*, o) = A_z*(o)", "Alg. 3 vs Alg. 1"), _check_average, "numeric",
          notes="App. B.1 says the average-datum game is Algorithm 2 (it is Algorithm 4) and "
                "B.2 defines its errors 'using Algorithm 1' (Algorithm 3)."),
    ]


CLAIMS = _claims()

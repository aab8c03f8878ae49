r"""Qualitative claims of ``semi_sequential_mi.txt`` (§3.2-3.3, §5.1, App. H), each decided.

Sentences of the form "X outperforms Y", "power is constant in ...", "falls with ..." are turned
into inequalities over the parameter range the seed states (its figures' axes) and decided with
the closed forms of :mod:`semi_core.stats.errors` (SeMI*, SeMI-max, Final Observation: exact) or
with the compiled engine (:func:`semi_core.game.engine.simulate`) where no closed form exists
(SeMI-Unif, non-uniform insertion-time priors), with tolerances of 4 Monte Carlo standard errors.

Each claim's ``stated`` holds the margin the sentence asserts (``min_gap = 0`` for "X >= Y"); the
can-fail test raises the margin to an impossible value (a power gap of 1), so a check that
ignored its data would be caught.

Findings (see ``semi-core verify``):

* §3.3 / Fig. 2: "SeMI-Unif and SeMI-max ... consistently outperform Final Observation" fails for
  SeMI-max below Mahalanobis distance 3.5 (e.g. n = 10, T = 5, distance 2, FPR 1 %: SeMI-max
  0.0169 vs Final Observation 0.0195, closed forms; Monte Carlo agrees); it holds from 3.5 up.
* §3.2 conjecture "replacing the uniform distribution by another distribution would lead to
  comparable performance": false for concentrated priors -- the Neyman-Pearson test of a
  two-point prior has twice the power of the uniform-prior test; it holds for diffuse priors.
* §3.3 "Figure 2 tracks the log-likelihood ratio" refers to Figure 1; §5.1 defines
  :math:`N_i(R)` as the number of times "the MI test signals" membership :math:`i`, but the error
  estimates need the number of rounds with :math:`B_r=i` (the Crafter's bit).
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from semi_core.audit.roc import tpr_at_fpr_se
from semi_core.game.engine import simulate
from semi_core.mechanisms.empirical_mean import EmpiricalMean
from semi_core.stats import errors as E

from .._core import Claim, Outcome, mc_outcome

SEED = "semi_sequential_mi"

n, m, d, N = sp.symbols("n m d N", positive=True)
min_gap, min_drop, ratio = sp.symbols("min_gap min_drop ratio", real=True)

FPR = 0.01
DIST_FIG2B = (0.5, 1.0, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0)  # Fig. 2(b) axis (T = 5)
T_FIG2A = (1, 2, 3, 5, 7, 10, 15, 20)                  # Fig. 2(a) axis (distance 3)


def _mech(T_, dist, d_=1):
    return EmpiricalMean.isotropic(10, int(T_), distance=float(dist), d=d_)


def _tpr(T_, dist, test, fpr=FPR, tau=None):
    mech = _mech(T_, dist)
    return float(E.tpr_at_fpr(mech, fpr, test, tau=min(5, int(T_)) if tau is None else tau))


def _margin(forms, key) -> float:
    return float(forms[key])


def _worst(cases, what, margin):
    """cases: (params, value); pass when every value >= margin (exact closed forms)."""
    params, val = min(cases, key=lambda c: c[1])
    if val >= margin - 1e-12:
        return Outcome(True, f"{what}: smallest value {val:.4g} >= {margin:g} over "
                             f"{len(cases)} parameter points")
    return Outcome(False, f"{what}: {val:.4g} < {margin:g} at "
                          + ", ".join(f"{k}={v}" for k, v in params.items()),
                   {**params, "value": float(val), "stated_margin": margin})


def _raise_margin(key, value=1.0):
    def perturb(forms):
        out = dict(forms)
        out[key] = sp.Float(value)
        return out
    return perturb


# ----------------------------------------------------------------------------- Fig. 1 isolation

def _sep_closed(n_, m_, d_=1):
    """E[log LR | H1] - E[log LR | H0] of the SeMI* form with batch size n (derived in the
    module docstring of the check)."""
    return (m_ * (2 * n_ - 1) + d_) / (2 * n_ * (n_ - 1))


def _check_isolation(forms, ctx):
    r"""Separation :math:`E_1S-E_0S` of the statistic computed from the first t releases.

    For :math:`t\ge\tau` SeMI* depends on :math:`\bar X_\tau` only; with
    :math:`w\sim\mathcal N(0,I/n)` (H0) or :math:`\mathcal N(u/n,(n-1)I/n^2)` (H1),
    :math:`E_1-E_0=\frac{n}{n-1}\big(\frac mn-\frac m{2n^2}+\frac d{2n^2}\big)
    =\frac{m(2n-1)+d}{2n(n-1)}`; Final Observation is the same form with :math:`n\to N_t=nt`.
    Independent games per horizon t (engine, sufficient mode) estimate both separations."""

    rng_seed = ctx.rng("q-isolation").integers(2**31)
    R = 60_000 if ctx.quick else 400_000
    f_star = sp.lambdify([n, m, d], forms["sep_star_ratio"])
    f_fin = sp.lambdify([n, m, d, N], forms["sep_final"])
    cases = []
    tau_, n_, m_ = 5, 10, 9.0
    base = _sep_closed(n_, m_)
    for t in (5, 7, 10):
        res = simulate(_mech(t, 3.0), R, int(rng_seed) + t, tau=tau_, mode="sufficient", kernel="numba")
        for name, pred in (("semi-star", float(f_star(n_, m_, 1)) * base),
                           ("final", float(f_fin(n_, m_, 1, n_ * t)))):
            a, b = res.scores(name)
            est = a.mean() - b.mean()
            se = float(np.sqrt(a.var(ddof=1) / a.size + b.var(ddof=1) / b.size))
            cases.append(({"t": t, "test": name}, pred, est, se))
    return mc_outcome(cases, what="separation of the statistic after t releases (tau = 5)")


# ----------------------------------------------------------------------------- §3.3 power claims

def _check_power_all_fpr(forms, ctx):
    """TPR(SeMI*) - TPR(Final) >= min_gap at every FPR, T and distance of Fig. 2; and the gap
    at 1 % FPR does not shrink as the distance grows along Fig. 2(b)'s axis."""
    g0, g1 = _margin(forms, "min_gap"), _margin(forms, "min_gap_increment")
    cases = []
    for T_ in (2, 5, 10, 20):
        for dist in DIST_FIG2B:
            for f in np.logspace(-4, np.log10(0.5), 9):
                gap = _tpr(T_, dist, "semi-star", f) - _tpr(T_, dist, "final", f)
                cases.append(({"T": T_, "distance": dist, "fpr": float(f)}, gap))
    out = _worst(cases, "TPR(SeMI*) - TPR(Final Observation)", g0)
    if not out.ok:
        return out
    incs = []
    for T_ in (5, 10):
        gaps = [_tpr(T_, x, "semi-star") - _tpr(T_, x, "final") for x in DIST_FIG2B]
        incs += [({"T": T_, "from": DIST_FIG2B[i], "to": DIST_FIG2B[i + 1]},
                  gaps[i + 1] - gaps[i]) for i in range(len(gaps) - 1)]
    return _worst(incs, "increase of the power gap with the distance", g1)


def _check_T_scaling(forms, ctx):
    """TPR(SeMI*, T) / TPR(SeMI*, 1) = ratio for T on Fig. 2(a)'s axis (seed: constant, 1);
    Final Observation's power strictly decreasing in T."""
    r = float(forms["star_ratio"])
    t1 = _tpr(1, 3.0, "semi-star", tau=1)
    for T_ in T_FIG2A:
        v = _tpr(T_, 3.0, "semi-star")
        if abs(v / t1 - r) > 1e-9:
            return Outcome(False, f"TPR(SeMI*, T={T_}) / TPR(SeMI*, 1) = {v / t1:.6g}, stated "
                                  f"{r:g}", {"T": T_, "ratio": v / t1, "stated": r})
    fin = [_tpr(T_, 3.0, "final") for T_ in T_FIG2A]
    drops = [({"from_T": T_FIG2A[i], "to_T": T_FIG2A[i + 1]}, fin[i] - fin[i + 1])
             for i in range(len(fin) - 1)]
    return _worst(drops, "SeMI* constant in T; decrease of Final Observation's power",
                  float(forms["min_final_drop"]))


def _unif_mc(ctx, T_, dist, R, salt, tau=None, unif=None):
    seed = int(ctx.rng(salt).integers(2**31))
    return simulate(_mech(T_, dist), R, seed, tau=min(5, T_) if tau is None else tau,
                    unif_pmf=unif, mode="sufficient", kernel="numba")


def _tpr_mc(res, test, fpr=FPR):
    t = tpr_at_fpr_se(*res.scores(test), fpr)
    return float(t["tpr"][0]), float(t["se"][0])


def _check_max_unif_vs_final(forms, ctx):
    """SeMI-max >= Final Observation (closed forms) over Fig. 2's axes, and SeMI-Unif >= Final
    Observation (Monte Carlo, 4 SE) at T = 5. Restricted: distances >= 3.5 only."""
    g0 = _margin(forms, "min_gap")
    lo = 3.5 if ctx.restricted else 0.0
    cases = [({"T": 5, "distance": x}, _tpr(5, x, "semi-max") - _tpr(5, x, "final"))
             for x in DIST_FIG2B if x >= lo]
    dists_a = (3.5, 4.0, 5.0) if ctx.restricted else (3.0,)
    cases += [({"T": T_, "distance": x}, _tpr(T_, x, "semi-max") - _tpr(T_, x, "final"))
              for T_ in T_FIG2A[1:] for x in dists_a]
    out = _worst(cases, "TPR(SeMI-max) - TPR(Final Observation), closed forms", g0)
    if not out.ok:
        return out
    R = 100_000 if ctx.quick else 400_000
    mc = []
    for x in [v for v in (1.0, 2.0, 4.0) if v >= lo]:
        res = _unif_mc(ctx, 5, x, R, f"q-unif-{x}")
        (u, su), (f, sf) = _tpr_mc(res, "semi-unif"), _tpr_mc(res, "final")
        mc.append(({"T": 5, "distance": x}, u - f, np.hypot(su, sf)))
    bad = [c for c in mc if c[1] < g0 - 4 * c[2]]
    if bad:
        p, gap, se = bad[0]
        return Outcome(False, f"TPR(SeMI-Unif) - TPR(Final) = {gap:.4f} +- {se:.4f} < {g0:g} at "
                              f"{p}", {**p, "gap": gap, "se": se})
    return Outcome(True, out.detail + f"; SeMI-Unif >= Final Observation within 4 SE at "
                                      f"{len(mc)} Monte Carlo points")


def _check_degrade(forms, ctx):
    """SeMI-max (closed form) and SeMI-Unif (Monte Carlo) lose power as T grows (distance 3);
    and the gap to SeMI* widens with T (App. H.1)."""
    g0 = _margin(forms, "min_drop")
    mx = [_tpr(T_, 3.0, "semi-max") for T_ in T_FIG2A]
    cases = [({"test": "semi-max", "from_T": T_FIG2A[i], "to_T": T_FIG2A[i + 1]},
              mx[i] - mx[i + 1]) for i in range(1, len(mx) - 1)]
    star = _tpr(5, 3.0, "semi-star")
    cases += [({"test": "gap semi-star - semi-max", "from_T": T_FIG2A[i], "to_T": T_FIG2A[i + 1]},
               (star - mx[i + 1]) - (star - mx[i])) for i in range(1, len(mx) - 1)]
    out = _worst(cases, "decrease of SeMI-max's power in T and growth of the gap to SeMI*", g0)
    if not out.ok:
        return out
    R = 100_000 if ctx.quick else 400_000
    u = [_tpr_mc(_unif_mc(ctx, T_, 3.0, R, f"q-deg-{T_}"), "semi-unif") for T_ in (2, 10)]
    drop, se = u[0][0] - u[1][0], float(np.hypot(u[0][1], u[1][1]))
    if drop < g0 + 4 * se:
        return Outcome(False, f"SeMI-Unif: TPR(T=2) - TPR(T=10) = {drop:.4f} +- {se:.4f}, not "
                              f"above {g0:g} by 4 SE", {"drop": drop, "se": se})
    return Outcome(True, out.detail + f"; SeMI-Unif drops by {drop:.4f} +- {se:.4f} from T=2 "
                                      "to T=10")


def _check_uniform_tau(forms, ctx):
    """Uniform insertion time (App. H.1, Figs. 5-6): the oracle SeMI* bounds SeMI-max and
    SeMI-Unif, the gap persists as T grows, and SeMI-max beats Final Observation at large
    distances (>= 4). Monte Carlo, 4 SE."""
    g0 = _margin(forms, "min_gap")
    R = 100_000 if ctx.quick else 400_000
    cases = []
    for T_, x in ((5, 3.0), (10, 3.0), (20, 3.0), (5, 4.0), (5, 5.0)):
        res = _unif_mc(ctx, T_, x, R, f"q-uni-{T_}-{x}", tau="uniform")
        st, mx, un, fi = (_tpr_mc(res, k) for k in ("semi-star", "semi-max", "semi-unif", "final"))
        cases.append(({"T": T_, "distance": x, "pair": "star-max"}, st[0] - mx[0],
                      np.hypot(st[1], mx[1])))
        cases.append(({"T": T_, "distance": x, "pair": "star-unif"}, st[0] - un[0],
                      np.hypot(st[1], un[1])))
        if x >= 4:
            cases.append(({"T": T_, "distance": x, "pair": "max-final"}, mx[0] - fi[0],
                          np.hypot(mx[1], fi[1])))
    bad = [c for c in cases if c[1] < g0 - 4 * c[2]]
    if bad:
        p, gap, se = min(bad, key=lambda c: c[1])
        return Outcome(False, f"gap {gap:.4f} +- {se:.4f} < {g0:g} at {p}",
                       {**p, "gap": float(gap), "se": float(se)})
    return Outcome(True, f"all {len(cases)} power gaps >= {g0:g} within 4 SE (uniform tau)")


def _check_prior_conjecture(forms, ctx):
    r"""§3.2 conjecture: the Neyman-Pearson test of another insertion-time prior
    :math:`\nu` (SeMI-Unif with weights :math:`\nu`, Crafter drawing :math:`\tau\sim\nu`) has power
    comparable to the uniform case: ratio to the uniform-prior power within
    [1/ratio, ratio] (stated: 1.25). Priors at T = 10, distance 3: increasing, geometric early
    and late (0.6^t), two-point {1, T}. Restricted: priors with max_t nu_t <= 2/T."""
    r = float(forms["ratio"])
    T_ = 10
    t = np.arange(1, T_ + 1)
    priors = {"increasing": t / t.sum(),
              "geometric-early": 0.6 ** t / (0.6 ** t).sum(),
              "geometric-late": 0.6 ** (T_ - t) / (0.6 ** (T_ - t)).sum(),
              "two-point": np.r_[0.5, np.zeros(T_ - 2), 0.5]}
    if ctx.restricted:
        priors = {k: v for k, v in priors.items() if v.max() <= 2 / T_}
    R = 100_000 if ctx.quick else 400_000
    uni = np.full(T_, 1 / T_)
    p0, s0 = _tpr_mc(_unif_mc(ctx, T_, 3.0, R, "q-prior-u", tau=uni, unif=uni), "semi-unif")
    cases = []
    for name, p in priors.items():
        v, sv = _tpr_mc(_unif_mc(ctx, T_, 3.0, R, f"q-prior-{name}", tau=p, unif=p), "semi-unif")
        q = v / p0
        se = q * np.hypot(sv / v, s0 / p0)
        cases.append((name, q, se))
    bad = [c for c in cases if c[1] - 4 * c[2] > r or c[1] + 4 * c[2] < 1 / r]
    if bad:
        name, q, se = max(bad, key=lambda c: abs(np.log(c[1])))
        return Outcome(False, f"prior {name}: power ratio to the uniform prior {q:.3f} +- "
                              f"{se:.3f}, outside [1/{r:g}, {r:g}] (T=10, distance 3, FPR 1%)",
                       {"prior": name, "power_ratio": float(q), "se": float(se), "stated": r})
    return Outcome(True, "power ratios to the uniform prior: "
                   + ", ".join(f"{c[0]} {c[1]:.3f}" for c in cases) + f" within [1/{r:g}, {r:g}]")


def _check_unif_vs_max(forms, ctx):
    r"""§3.2 / §1 (3): SeMI-Unif and SeMI-max "have comparable performance" ("behave
    similarly"): the ratio TPR(SeMI-Unif) / TPR(SeMI-max) at 1 % FPR lies in
    [1/ratio, ratio] (stated: 1.25, the tolerance used for the prior conjecture) at every T of
    Fig. 2(a) and distance of Fig. 2(b) tested; one game per point (engine, sufficient mode),
    delta-method SE of the ratio (the two statistics share the rounds, so the SE of the ratio
    is bounded by treating them as independent: conservative), 4 SE."""
    r = float(forms["ratio"])
    R = 100_000 if ctx.quick else 400_000
    cases = []
    for T_, x in ((2, 3.0), (5, 2.0), (5, 3.0), (5, 5.0), (10, 3.0), (20, 3.0)):
        res = _unif_mc(ctx, T_, x, R, f"q-um-{T_}-{x}")
        (u, su), (mx, smx) = _tpr_mc(res, "semi-unif"), _tpr_mc(res, "semi-max")
        q = u / mx
        cases.append(({"T": T_, "distance": x}, q, q * np.hypot(su / u, smx / mx)))
    bad = [c for c in cases if c[1] - 4 * c[2] > r or c[1] + 4 * c[2] < 1 / r]
    if bad:
        p, q, se = max(bad, key=lambda c: abs(np.log(c[1])))
        return Outcome(False, f"TPR(SeMI-Unif)/TPR(SeMI-max) = {q:.3f} +- {se:.3f} outside "
                              f"[1/{r:g}, {r:g}] at {p} (FPR 1%)",
                       {**p, "power_ratio": float(q), "se": float(se), "stated": r})
    return Outcome(True, "TPR(SeMI-Unif)/TPR(SeMI-max) at 1% FPR: "
                   + ", ".join(f"T={c[0]['T']} d={c[0]['distance']:g}: {c[1]:.3f}"
                               for c in cases) + f", within [1/{r:g}, {r:g}] (4 SE)")


def _check_fig4(forms, ctx):
    """App. H.1 / Figure 4 (ROC curves, distance 3, T = 5 and 10): SeMI-max (closed forms) and
    SeMI-Unif (Monte Carlo, 4 SE) above Final Observation at every FPR of the ROC grid.
    Restricted: FPR <= 1 %."""
    g0 = _margin(forms, "min_gap")
    grid = np.logspace(-4, np.log10(0.9), 15)
    if ctx.restricted:
        grid = grid[grid <= 0.01 + 1e-12]
    cases = [({"T": T_, "distance": 3.0, "fpr": float(f)},
              _tpr(T_, 3.0, "semi-max", f) - _tpr(T_, 3.0, "final", f))
             for T_ in (5, 10) for f in grid]
    out = _worst(cases, "TPR(SeMI-max) - TPR(Final Observation) along the ROC", g0)
    if not out.ok:
        return out
    R = 100_000 if ctx.quick else 400_000
    res = _unif_mc(ctx, 10, 3.0, R, "q-fig4")
    mc = []
    for f in [v for v in (0.01, 0.1, 0.3) if v <= grid.max() + 1e-12]:
        (u, su), (fi, sf) = _tpr_mc(res, "semi-unif", f), _tpr_mc(res, "final", f)
        mc.append(({"T": 10, "fpr": f}, u - fi, float(np.hypot(su, sf))))
    bad = [c for c in mc if c[1] < g0 - 4 * c[2]]
    if bad:
        p, gap, se = bad[0]
        return Outcome(False, f"TPR(SeMI-Unif) - TPR(Final) = {gap:.4f} +- {se:.4f} < {g0:g} at "
                              f"{p}", {**p, "gap": gap, "se": se})
    return Outcome(True, out.detail + f"; SeMI-Unif above Final Observation within 4 SE at "
                                      f"{len(mc)} FPRs (T = 10)")


def _check_delta_tau(forms, ctx):
    """App. H.2 / Fig. 7(b): the Delta statistic's power falls as tau grows (TPR at 5 % FPR,
    linear-regression SGD, d = 5, T = 10, n = 50, eta = 0.05): TPR(tau=1) - TPR(tau=10) must
    exceed min_drop by 4 SE."""
    # lazy: torch is a heavy import, loaded only when this runs
    from semi_core.sgd.linreg import H2Config, simulate_h2

    g0 = _margin(forms, "min_drop")
    R = 8000 if ctx.quick else 20_000
    seed = int(ctx.rng("q-h2").integers(2**31))
    v = [_tpr_mc(simulate_h2(H2Config(), tau=t, rounds=R, seed=seed + t), "delta_diff", 0.05)
         for t in (1, 10)]
    drop, se = v[0][0] - v[1][0], float(np.hypot(v[0][1], v[1][1]))
    ok = drop - 4 * se > g0
    return Outcome(ok, f"Delta (diff) TPR at 5% FPR: tau=1 {v[0][0]:.3f}, tau=10 {v[1][0]:.3f} "
                       f"(drop {drop:.3f} +- {se:.3f})",
                   None if ok else {"drop": drop, "se": se, "stated_min_drop": g0})


def _check_counts(forms, ctx):
    r"""§5.1: :math:`\hat\beta_R(\gamma)=\frac1{N_1(R)}\sum_r\mathbb 1(T_r\le\gamma)\mathbb 1(B_r=1)`
    must be an empirical CDF (in [0, 1], equal to 1 as :math:`\gamma\to\infty`). ``N1`` is read
    as a count: ``n_positive_signals`` (the seed's words: rounds where the test signals
    membership at :math:`\gamma`) or ``n_B1`` (rounds with :math:`B_r=1`)."""
    rng = ctx.rng("q-counts")
    R = 2000
    B = rng.random(R) < 0.5
    Tst = rng.normal(B * 1.0, 1.0)
    worst = None
    for gam in np.linspace(-2, 6, 33):
        counts = {"n_positive_signals": float((Tst > gam).sum()), "n_B1": float(B.sum())}
        N1 = float(forms["N1"].subs({sp.Symbol(k): v for k, v in counts.items()}))
        beta_hat = ((Tst <= gam) & B).sum() / N1 if N1 > 0 else np.inf
        target = ((Tst <= gam) & B).sum() / B.sum()  # the CDF estimate the bound needs
        err = abs(beta_hat - target)
        if worst is None or err > worst[0]:
            worst = (err, gam, beta_hat, target)
    err, gam, bh, tg = worst
    if err <= 1e-12:
        return Outcome(True, "N_1(R) = #{r: B_r = 1} makes beta_hat the empirical CDF of T | B=1")
    return Outcome(False, f"with the stated N_1(R), beta_hat({gam:.2f}) = {bh:.4g}, but the "
                          f"empirical CDF of T | B = 1 is {tg:.4g}",
                   {"gamma": float(gam), "beta_hat": float(bh), "empirical_cdf": float(tg)})


def _q(label, location, title, stated, check, method, **kw):
    return Claim(id=f"{SEED}:{label}", seed=SEED, location=location, title=title,
                 stated=stated, hypotheses=kw.pop("hypotheses", ()), check=check, method=method,
                 **kw)


CLAIMS = [
    _q("q.fig1.isolation", "§3.3 'isolation' and Figure 1",
       "SeMI* separation jumps at tau and stays constant; Final Observation's shrinks with t",
       {"sep_star_ratio": sp.Integer(1),
        "sep_final": (m * (2 * N - 1) + d) / (2 * N * (N - 1))},
       _check_isolation, "monte-carlo",
       derived={"sep_star": (m * (2 * n - 1) + d) / (2 * n * (n - 1))},
       hypotheses=("n = 10, tau = 5, distance 3",),
       notes="§3.3 says 'Figure 2 tracks the log-likelihood ratio'; it is Figure 1."),
    _q("q.sec3.3.power", "§3.3 'power' (Figure 2)",
       "SeMI* beats Final Observation at all FPRs; the gap widens with the distance",
       {"min_gap": sp.Integer(0), "min_gap_increment": sp.Integer(0)},
       _check_power_all_fpr, "numeric", perturb=_raise_margin("min_gap")),
    _q("q.sec3.3.T", "§3.3 'scaling with T' (Figure 2(a))",
       "SeMI* power constant in T; Final Observation's power decreases",
       {"star_ratio": sp.Integer(1), "min_final_drop": sp.Integer(0)},
       _check_T_scaling, "numeric"),
    _q("q.sec3.3.max-unif-vs-final", "§3.3 (Figure 2): 'they consistently outperform Final "
       "Observation'", "SeMI-Unif and SeMI-max beat Final Observation over Figure 2's range",
       {"min_gap": sp.Integer(0)}, _check_max_unif_vs_final, "monte-carlo",
       perturb=_raise_margin("min_gap"), condition="Mahalanobis distance >= 3.5",
       notes="SeMI-max is below Final Observation for distances <= 3 (T = 5: 0.0169 vs 0.0195 "
             "at distance 2); the sentence holds from distance 3.5 on."),
    _q("q.sec3.3.degrade", "§3.3 'SeMI-Unif and SeMI-max degrade with T'; App. H.1 'the gap "
       "widens'", "SeMI-max/SeMI-Unif lose power in T; gap to SeMI* grows",
       {"min_drop": sp.Integer(0)}, _check_degrade, "monte-carlo",
       perturb=_raise_margin("min_drop")),
    _q("q.H1.uniform", "App. H.1, Figures 5-6 (uniform tau)",
       "oracle SeMI* bounds the tau-agnostic tests; SeMI-max beats Final at large distances",
       {"min_gap": sp.Integer(0)}, _check_uniform_tau, "monte-carlo",
       perturb=_raise_margin("min_gap")),
    _q("q.sec3.2.priors", "§3.2, conjecture after Figure 2",
       "other insertion-time priors give power comparable to the uniform prior",
       {"ratio": sp.Rational(5, 4)}, _check_prior_conjecture, "monte-carlo",
       perturb=_raise_margin("ratio", 0.5), condition="diffuse priors (max_t nu_t <= 2/T)",
       notes="The Neyman-Pearson test of a concentrated prior is much stronger (two-point prior "
             "{1, T}: about twice the uniform prior's power at T = 10, distance 3)."),
    _q("q.sec3.2.unif-vs-max", "§3.2 'SeMI-Unif and SeMI-max have comparable performance' "
       "and §1 contribution (3) 'the other two behave similarly' (Figure 2)",
       "SeMI-Unif and SeMI-max have comparable power",
       {"ratio": sp.Rational(5, 4)}, _check_unif_vs_max, "monte-carlo",
       perturb=_raise_margin("ratio", 0.5), hypotheses=("n = 10, FPR 1%, tau = min(5, T)",),
       notes="Measured ratios 1.00-1.18 (SeMI-Unif ahead, most at distance 2-3), so the sentence "
             "holds at a 25 % tolerance."),
    _q("q.H1.fig4", "App. H.1, Figure 4 ('SeMI-Unif and SeMI-max maintain an advantage over "
       "Final Observation')", "SeMI-Unif and SeMI-max above Final Observation along the ROC "
       "(T = 5, 10)", {"min_gap": sp.Integer(0)}, _check_fig4, "monte-carlo",
       perturb=_raise_margin("min_gap"), hypotheses=("n = 10, distance 3 (App. H.1)",),
       condition="false-positive rates <= 1 %",
       notes="At T = 10 SeMI-max falls below Final Observation for FPR >= 5 % (e.g. 0.2891 vs "
             "0.2931 at FPR 20 %, 0.4063 vs 0.4108 at 30 %, closed forms); with the seed's R = "
             "50,000 games the gap (<= 0.0045) is about one SE. SeMI-Unif stays above at every "
             "FPR tested (T = 10, FPR 10 %: 0.176 vs 0.162)."),
    _q("q.H2.delta", "App. H.2, Figure 7(b)", "the Delta statistic's power decreases with tau",
       {"min_drop": sp.Integer(0)}, _check_delta_tau, "monte-carlo",
       perturb=_raise_margin("min_drop")),
    _q("q.sec5.1.counts", "§5.1, definition of N_i(R)",
       "N_i(R) counts the rounds with B_r = i (the seed: times the test signals i)",
       {"N1": sp.Symbol("n_positive_signals")}, _check_counts, "numeric",
       corrected={"N1": sp.Symbol("n_B1")},
       notes="The seed's wording makes the denominator depend on gamma and the test's output; "
             "the estimator and Lemma 5.1 need the Crafter's class counts."),
]

#: Conclusions pinned by the registry tests.
EXPECTED_FAILS = {f"{SEED}:q.sec5.1.counts"}
EXPECTED_CONDITIONAL = {f"{SEED}:q.sec3.3.max-unif-vs-final", f"{SEED}:q.sec3.2.priors",
                        f"{SEED}:q.H1.fig4"}

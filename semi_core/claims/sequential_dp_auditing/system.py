"""Readings of ``sequential_dp_auditing.txt``'s experiments (§4, Table 1), run on the shipped
sequential tester (:mod:`semi_core.audit.sequential`) and mechanism zoo
(:mod:`semi_core.mechanisms.zoo`).

Each claim is decided by Monte Carlo of the tester as the section describes it. Summary:

* §4.2: "the smallest candidate epsilon that the test fails to reject" is not a valid lower
  bound; the largest epsilon with all smaller grid values rejected is.
* §4.1 / Table 1: the mechanisms as printed (eq. (5)) do not give Table 1's NonDPLaplace2 row;
  DP-Auditorium's floored noise scale, which the section says it follows, does, and under that
  reading DPLaplace is not eps-DP; Table 1's stopping times are those of the authors'
  notebook's OGA/ONS, not of Alg. 1 as printed.

The slips in Alg. 1-4 and their proofs are in
:mod:`semi_core.claims.sequential_dp_auditing.algorithms`.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from semi_core.audit.sequential import run_audits, sampler_source, sequential_grid

from .._core import Claim, Outcome, mc_outcome

SEED = "sequential_dp_auditing"


# ----------------------------------------------------------------------------- §4 and Table 1

def _check_grid_reading(forms, ctx):
    """Monte Carlo: how often the reported epsilon is >= the true epsilon (must be <= alpha)."""

    off = int(round(float(forms["offset"])))
    e_true, al = 1.0, 0.1
    p = np.exp(e_true) / (1 + np.exp(e_true))  # binary mechanism, MMD = tau(1, 0) (bw 0.05)
    grid = [0.0, 0.25, 1.5, 3.0]

    def sx(n, r):
        return (r.random((n, 1)) < p).astype(float)

    def sy(n, r):
        return (r.random((n, 1)) < 1 - p).astype(float)

    def reported(ss):
        g = sequential_grid(sampler_source(sx, sy), grid, delta=0.0, failure_prob=al,
                            max_obs=400, bandwidth=0.05, seed=ss)
        n_rej = int(np.sum(np.isfinite(np.maximum.accumulate(
            [np.inf if r.stopped_at is None else r.stopped_at for r in g.results]))))
        idx = n_rej - 1 + off
        return grid[idx] if 0 <= idx < len(grid) else (0.0 if idx < 0 else np.inf)

    R = 60 if ctx.quick else 400
    reps = run_audits(audit=reported, runs=R, seed=np.random.SeedSequence([ctx.seed, 77]),
                      summary=None).runs
    rate = sum(rep >= e_true for rep in reps) / R
    se = np.sqrt(al * (1 - al) / R)
    return mc_outcome([({"eps_true": e_true, "alpha": al, "grid": str(grid)}, al,
                        max(rate, al), se)],
                      what="P(reported epsilon >= true epsilon) <= alpha", k=4.5)


eps_ = sp.symbols("epsilon", positive=True)
fl_ = sp.symbols("floor", nonnegative=True)


def _check_dp_as_run(forms, ctx):
    """Monte Carlo: DPLaplace with DP-Auditorium's floored noise *scale* against (eps, delta).

    Event E = {|o| < 1e-6}: on S = {0} a negative noisy count floors the noise scale at 1e-12
    and the output is 0 (P(E) ~ e^{-eps/2}/2); on S' = {0, 1} it is 1/(2 + W), never that small.
    The check fails when P_S(E) - e^eps P_S'(E) exceeds the form's delta by 4.5 SE."""
    from semi_core.mechanisms.zoo import SEED_PAIR, DPLaplace

    f = sp.lambdify([eps_], forms["delta_as_run"], "numpy")
    n = 20_000 if ctx.quick else 200_000
    rng = ctx.rng("sda.dp_as_run")
    for e_ in (0.01, 0.1, 1.0):
        m = DPLaplace(e_, floor="scale")
        pS = np.mean(np.abs(m.sample(SEED_PAIR[0], n, rng)) < 1e-6)
        pT = np.mean(np.abs(m.sample(SEED_PAIR[1], n, rng)) < 1e-6)
        hs = pS - np.exp(e_) * pT
        se = max(np.sqrt((pS * (1 - pS) + np.exp(2 * e_) * pT * (1 - pT)) / n), 1.0 / n)
        d_ = float(f(e_))
        if hs - d_ > 4.5 * se:
            return Outcome(False, f"at eps = {e_:g} the event |o| < 1e-6 has P_S - e^eps P_S' = "
                                  f"{hs:.4f} +- {se:.1g} > delta = {d_:.4g}",
                           {"eps": e_, "hockey_stick_at_E": float(hs), "se": float(se),
                            "delta": d_})
    return Outcome(True, "P_S(E) - e^eps P_S'(E) <= delta (4.5 SE) at eps = 0.01, 0.1, 1")


def _check_nondp2_reading(forms, ctx):
    """Alg. 1 on NonDPLaplace2 at eps = 0.01 (N_max = 2000, median heuristic) under the
    form's floor (0: count, eq. 5 as printed; 1: scale, DP-Auditorium); Table 1 reports
    rejection rate 1.0 +- 0.0. Fails when fewer than half of the runs reject."""
    from semi_core.audit.sequential import mechanism_source, run_audits
    from semi_core.mechanisms.zoo import SEED_PAIR, NonDPLaplace2

    floor = "scale" if float(forms["floor"]) >= 0.5 else "count"
    m = NonDPLaplace2(0.01, floor=floor)
    R = 4 if ctx.quick else 10
    res = run_audits(lambda: mechanism_source(m, *SEED_PAIR), runs=R,
                     seed=np.random.SeedSequence([ctx.seed, 4101]), epsilon=0.01, delta=1e-5,
                     max_obs=2000)
    s = res.summary
    bw = float(np.median([r.bandwidth for r in res.runs]))
    detail = (f"floor={floor}: rejection rate {s['rejection_rate']:.2f} over {R} runs, median "
              f"bandwidth {bw:.3g}, degenerate witness in {s['degenerate_runs']}/{R}")
    if s["rejection_rate"] < 0.5:
        return Outcome(False, detail + " (Table 1: 1.0)",
                       {"floor": floor, "rejection_rate": s["rejection_rate"], "bandwidth": bw})
    return Outcome(True, detail)


nb_ = sp.symbols("notebook_oga_ons", nonnegative=True)


def _check_table1_conventions(forms, ctx):
    """Alg. 1 on NonDPGaussian1 at eps = 0.1 (N_max = 5000, median heuristic, scale floor)
    with the paper's OGA/ONS (form 0) or the notebook's (form 1: OGA step 1/(2 sqrt M_t) on the
    radius-1/2 ball, ONS on [0, 1/(8+4 tau)] with Shekhar-Ramdas constants; tau of Thm 3.1 in
    both): the mean stopping time against Table 1's 562 +- 29.2 (4 combined SE)."""
    from semi_core.audit.sequential import mechanism_source, run_audits
    from semi_core.mechanisms.zoo import SEED_PAIR, NonDPGaussian1

    conv = "ons,oga" if float(forms["notebook_oga_ons"]) >= 0.5 else "paper"
    m = NonDPGaussian1(0.1, floor="scale")
    R = 8 if ctx.quick else 20
    res = run_audits(lambda: mechanism_source(m, *SEED_PAIR), runs=R,
                     seed=np.random.SeedSequence([ctx.seed, 4202]), epsilon=0.1, delta=1e-5,
                     max_obs=5000, conventions=conv)
    s = res.summary
    if s["mean_stop"] is None:
        return Outcome(False, f"conventions {conv}: no rejection in {R} runs (Table 1: 562)",
                       {"conventions": conv})
    se = float(np.hypot(s["mean_stop_se"] or 0.0, 29.2))
    return mc_outcome([({"conventions": conv, "runs": R}, 562.0, s["mean_stop"], se)],
                      what="mean stopping time of NonDPGaussian1 at eps = 0.1", k=4.0)


def _claims() -> list[Claim]:
    def C(label, location, title, stated, hyp, check, method, **kw):
        return Claim(id=f"{SEED}:{label}", seed=SEED, location=location, title=title,
                     stated=stated, hypotheses=tuple(hyp), check=check, method=method, **kw)

    return [
        C("sec4.2.lower_bound_reading", "§4.2 (Auditing methodology, last sentence)",
          "anytime epsilon lower bound over a grid",
          {"offset": sp.Integer(1)}, ("parallel tests at level alpha on one stream",),
          _check_grid_reading, "monte-carlo", corrected={"offset": sp.Integer(0)},
          perturb=lambda f: {"offset": f["offset"] + 1},
          notes="offset 1: the smallest grid epsilon not rejected (seed text); offset 0: the "
                "largest epsilon with every smaller grid epsilon rejected (fixed-sequence, "
                "valid without multiplicity correction because the nulls are nested). The "
                "authors' public notebook uses the largest rejected epsilon, which coincides "
                "with ours when rejections are monotone in epsilon."),
        C("sec4.1.nondp2_reading", "§4.1, eq. (5)-(7) and Table 1 (NonDPLaplace2, eps = 0.01)",
          "the mechanisms as printed give Table 1's NonDP2 row",
          {"floor": sp.Integer(0) + 0 * fl_}, ("S = {0}, S' = {0, 1}", "20 warm-up pairs, "
                                                "median heuristic", "N_max = 2000"),
          _check_nondp2_reading, "monte-carlo", corrected={"floor": sp.Integer(1) + 0 * fl_},
          perturb=lambda f: {"floor": 1 - f["floor"]},
          notes="floor 0: eq. (5) as printed, n~ = max{1e-12, n + W}; half the outputs are then "
                "O(1e14), the median-heuristic bandwidth is 1e13-1e14, the kernel merges every "
                "O(1) output and the witness is degenerate: 0 rejections (our runs: 0/20 at "
                "both eps). floor 1: DP-Auditorium's MeanMechanism (which §4.1 says it "
                "follows) floors the noise scale, max{1e-12, b/(n + W)}: a negative noisy count "
                "leaves an atom at s/n and NonDP2 is rejected in every run. The same reading "
                "makes the DP rows non-DP (claim sec4.1.dp_as_run)."),
        C("sec4.1.dp_as_run", "§4.1 ('only DPLaplace satisfies eps-DP') and Table 1 DP rows, "
          "under the DP-Auditorium setup the section says it follows",
          "DPLaplace as run is eps-DP (delta = 0)",
          {"delta_as_run": sp.Integer(0) + 0 * eps_}, ("DP-Auditorium's floored noise scale "
                                                        "(the reading that reproduces NonDP2)",),
          _check_dp_as_run, "monte-carlo",
          corrected={"delta_as_run": sp.exp(-eps_ / 2) / 2},
          perturb_factor=1 / 1.1,
          notes="With the scale floor a negative noisy count (probability e^{-eps/2}/2) releases "
                "0 on S = {0} with noise 1e-12, while S' = {0, 1} releases 1/(n + W): the "
                "event |o| < 1e-6 alone gives delta >= e^{-eps/2}/2 ~ 0.4975 at eps = 0.01. "
                "So under the reading that reproduces the NonDP2 rows, the '0 rejections' of "
                "the DPLaplace/DPGaussian rows are missed violations (the MMD at the median "
                "bandwidth cannot see a 1e-12-wide atom next to mass within 0.05 of it), not "
                "Type-I control; under eq. (5) as printed they are DP but the witness is "
                "degenerate, so the rows carry no evidence either way."),
        C("table1.conventions", "Table 1 (N-bar) against Alg. 1, Thm 3.3 and App. E",
          "Table 1's stopping times are those of Alg. 1 as printed",
          {"notebook_oga_ons": sp.Integer(0) + 0 * nb_},
          ("OGA of Alg. 4 with eta_t = 2/sqrt(M_t) on the unit ball (App. E.3)",
           "ONS of Alg. 3 on [0, 1/(4 + 2 tau)] (Thm 3.3)"),
          _check_table1_conventions, "monte-carlo",
          corrected={"notebook_oga_ons": sp.Integer(1) + 0 * nb_},
          perturb=lambda f: {"notebook_oga_ons": 1 - f["notebook_oga_ons"]},
          notes="Alg. 1 as printed stops 1.8-3x sooner than Table 1 (20 runs, scale floor: "
                "NonDPGaussian1 139/192 vs 264/562, NonDPLaplace1 200/306 vs 331/920, "
                "NonDPLaplace2 104/168 vs 192/770 at eps = 0.01/0.1). The authors' notebook's "
                "OGA (step 1/(2 sqrt M_t), radius 1/2) and ONS (lambda <= 1/(8 + 4 tau), "
                "S_0 = 1, c = 2/(2 - log 3)) with the paper's tau reproduce it: 248/557, "
                "345/1072, 186/526 (Table 1's 770 for NonDPLaplace2 at 0.1 is a censored mean "
                "with one run at N_max + 1: over its rejecting runs 547, claim "
                "table1.nbar_reading). The notebook's own threshold 2[(1 + delta e^-eps)"
                "(1 - e^-eps)/(1 + e^-eps) + e^-eps delta] (~2 tanh(eps/2), sqrt 2 times Thm "
                "3.1's) matches eps = 0.01 but not 0.1 (1055 and 3120 +- 363 with 60% "
                "rejections): Table 1 was run with the paper's tau and the notebook's OGA/ONS. "
                "analysis/seq_floor_conventions.py; seq-audit --conventions ons,oga."),
    ]


CLAIMS = _claims()

#: Our conclusions, pinned for the registry tests (each still decided by its check).
EXPECTED_FAILS = {f"{SEED}:{x}" for x in (
    "sec4.2.lower_bound_reading", "sec4.1.nondp2_reading", "sec4.1.dp_as_run",
    "table1.conventions")}
EXPECTED_CONDITIONAL: set[str] = set()

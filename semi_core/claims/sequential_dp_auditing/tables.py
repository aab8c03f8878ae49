"""Statements of ``sequential_dp_auditing.txt`` about its Tables 1-2 (§4.1, App. C.3, the
abstract): the prose against the tables, how N-bar was computed, the standard errors, and the
reading of the NonDPGaussian2 mechanism that gives its row.

Summary:

* Table 1/2 N-bar is said to average the runs that detected a violation; the printed cells are
  the authors' notebook's censored mean (a run that never rejects counts at N_max + 1): the
  NonDPGaussian2 cell at eps = 0.1 has one rejecting run and SE 219.0, which is the censored
  mean's SE (219.3) and impossible for a mean over one run.
* App. C.3's "decrease in N-bar for every mechanism except NonDPGaussian2 at eps = 0.1" is false
  on the printed numbers and true on the decoded means over the rejecting runs (501 -> 1494).
* App. C.3 lists NonDPLaplace1 at eps = 0.1 among the improved rejection rates (1.0 in both).
* Table 2's rate SE 0.06 at 0.9 over 20 runs is 0.07.
* The abstract's "from 50K" is §4.1's 500,000; §1's "under a thousand samples" holds only for
  the decoded mean over NonDPGaussian2's rejecting runs (987; printed 1139).
* §4.1's prose figures agree with Table 1 ("DPGaussian1" is NonDPGaussian1).
* Table 1's NonDPGaussian2 row is DP-Auditorium's MeanMechanism as its code runs (Laplace count
  noise, classical sigma), not the Gaussian-count reading; at eps = 0.1 the test as run cannot
  detect it at all (ceiling 0.058): its 5 % is the level alpha, not power.
"""

from __future__ import annotations

import math

import numpy as np
import sympy as sp

from semi_core.audit.sequential.experiments import SEED_NMAX, SEED_TABLE1, SEED_TABLE2

from .._core import Claim, Outcome, mc_outcome

SEED = "sequential_dp_auditing"
R = 20  # runs per cell of Tables 1 and 2

c_ = sp.symbols("censored", nonnegative=True)
a_ = sp.symbols("auditorium", nonnegative=True)


def _flag(v) -> bool:
    return float(v) >= 0.5


def _cells(table):
    for mech, by in table.items():
        for eps, (rate, rse, nbar, nse) in by.items():
            yield mech, eps, rate, rse, nbar, nse


def _check_nbar_reading(forms, ctx):
    """Cells with 0 < rate < 1. Mean over the rejecting runs (censored = 0): a cell with one
    rejecting run has SE 0. Censored mean (censored = 1): the decoded mean over the rejecting runs
    lies in [1, N_max], and with one rejecting run the SE is sqrt(p(1-p)/R) |N_max + 1 - x|
    (numpy std, ddof 0) within the rounding of N-bar (+-0.5 -> x +- R/2) and of the SE."""
    censored = _flag(forms["censored"])
    for t, table in ((1, SEED_TABLE1), (2, SEED_TABLE2)):
        for mech, eps, rate, _, nbar, nse in _cells(table):
            if not 0 < rate < 1:
                continue
            k = round(rate * R)
            n_max = SEED_NMAX[eps]
            where = {"table": t, "mechanism": mech, "eps": eps, "rate": rate, "nbar": nbar,
                     "nbar_se": nse}
            if not censored:
                if k == 1 and nse > 0.05:
                    return Outcome(False, f"Table {t}, {mech} at eps = {eps:g}: one rejecting "
                                          f"run of {R}, yet N-bar has SE {nse:g} (a mean over "
                                          "one run has none)", where)
                continue
            x = (R * nbar - (R - k) * (n_max + 1)) / k
            if not 1 <= x <= n_max:
                return Outcome(False, f"Table {t}, {mech} at eps = {eps:g}: decoded mean over "
                                      f"the rejecting runs {x:.0f} outside [1, {n_max}]",
                               {**where, "decoded": x})
            if k == 1:
                pred = math.sqrt(rate * (1 - rate) / R) * (n_max + 1 - x)
                tol = math.sqrt(rate * (1 - rate) / R) * R * 0.5 / k + 0.05
                if abs(pred - nse) > tol:
                    return Outcome(False, f"Table {t}, {mech} at eps = {eps:g}: censored SE "
                                          f"{pred:.1f} vs printed {nse:g} (tolerance {tol:.1f})",
                                   {**where, "predicted_se": pred})
    what = ("censored mean (runs that never reject at N_max + 1)" if censored else
            "mean over the rejecting runs")
    return Outcome(True, f"every cell with 0 < rate < 1 is consistent with the {what}")


def _check_appc3_nbar(forms, ctx):
    """App. C.3: N-bar decreases from Table 1 to Table 2 for every mechanism and epsilon except
    NonDPGaussian2 at eps = 0.1. Compared on the printed cells (censored = 0) or on the means
    over the rejecting runs decoded from them (censored = 1)."""
    censored = _flag(forms["censored"])
    worse = []
    for mech, by in SEED_TABLE1.items():
        for eps, (r1, _, n1, _) in by.items():
            r2, _, n2, _ = SEED_TABLE2[mech][eps]
            if n1 is None or n2 is None:
                continue
            if censored:
                n1 = (R * n1 - (R - round(r1 * R)) * (SEED_NMAX[eps] + 1)) / round(r1 * R)
                n2 = (R * n2 - (R - round(r2 * R)) * (SEED_NMAX[eps] + 1)) / round(r2 * R)
            if n2 >= n1:
                worse.append((mech, eps, round(n1), round(n2)))
    if [w[:2] for w in worse] != [("nondp-gaussian-2", 0.1)]:
        return Outcome(False, f"cells where N-bar does not decrease: {worse or 'none'} (the seed: "
                              "only NonDPGaussian2 at eps = 0.1)", {"not_decreasing": str(worse)})
    return Outcome(True, f"N-bar decreases everywhere except NonDPGaussian2 at eps = 0.1 "
                         f"({worse[0][2]} -> {worse[0][3]})")


_LISTED = (("nondp-gaussian-2", 0.01), ("nondp-gaussian-2", 0.1), ("nondp-laplace-1", 0.1),
           ("nondp-laplace-2", 0.1))


def _check_appc3_rates(forms, ctx):
    """App. C.3 lists four cells whose rejection rate Alg. 2 improved; the form is how many of
    the listed cells have a higher rate in Table 2 than in Table 1."""
    better = [c for c in _LISTED if SEED_TABLE2[c[0]][c[1]][0] > SEED_TABLE1[c[0]][c[1]][0]]
    n = float(forms["n_improved"])
    if abs(n - len(better)) > 1e-9:
        same = [c for c in _LISTED if c not in better]
        return Outcome(False, f"{len(better)} of the listed cells improve, not {n:g}: "
                              f"{same} has the same rate in both tables",
                       {"improved": len(better), "not_improved": str(same)})
    return Outcome(True, f"{len(better)} of the listed cells have a higher rate in Table 2")


def _check_rate_se(forms, ctx):
    """Every rate SE of Tables 1-2 is sqrt(p(1-p)/20) to two decimals (+-0.005); the form is
    Table 2's printed SE at NonDPGaussian2, eps = 0.01 (rate 0.9)."""
    for t, table in ((1, SEED_TABLE1), (2, SEED_TABLE2)):
        for mech, eps, rate, rse, _, _ in _cells(table):
            if t == 2 and mech == "nondp-gaussian-2" and eps == 0.01:
                rse = float(forms["se_rate"])
            exact = math.sqrt(rate * (1 - rate) / R)
            if abs(rse - exact) > 0.005 + 1e-12:
                return Outcome(False, f"Table {t}, {mech} at eps = {eps:g}: rate {rate:g} over "
                                      f"{R} runs has SE {exact:.4f}, printed {rse:g}",
                               {"table": t, "mechanism": mech, "eps": eps, "printed": rse,
                                "exact": exact})
    return Outcome(True, "every rate SE is sqrt(p(1-p)/20) to two decimals")


def _check_abstract(forms, ctx):
    """The abstract's batch sample size against §4.1's ('even when using 500,000
    observations')."""
    n = float(forms["batch_n"])
    if abs(n - 500_000) > 0.5:
        return Outcome(False, f"abstract {n:,.0f} vs §4.1 500,000", {"abstract": n,
                                                                   "section_4_1": 500_000})
    return Outcome(True, "the abstract's batch size is §4.1's 500,000")


def _check_prose(forms, ctx):
    """§4.1's figures against Table 1: at eps = 0.01 NonDPGaussian1, NonDPLaplace1/2 reject in
    every run with N-bar below the stated bound, NonDPGaussian2's N-bar is 'approximately' the
    stated value (2 %) at rate 0.85; at eps = 0.1 the same three are at rate >= 0.95 below the
    stated bound, NonDPGaussian2 at the stated rate."""
    three = ("nondp-gaussian-1", "nondp-laplace-1", "nondp-laplace-2")
    t = SEED_TABLE1
    checks = [
        ("max N-bar of the three at eps = 0.01", max(t[m][0.01][2] for m in three) <
         float(forms["bound_eps001"]) and all(t[m][0.01][0] == 1.0 for m in three)),
        ("NonDPGaussian2 N-bar at eps = 0.01", abs(t["nondp-gaussian-2"][0.01][2] -
                                                   float(forms["nbar_nondp2"]))
         <= 0.02 * float(forms["nbar_nondp2"]) and t["nondp-gaussian-2"][0.01][0] == 0.85),
        ("max N-bar of the three at eps = 0.1", max(t[m][0.1][2] for m in three) <
         float(forms["bound_eps01"]) and all(t[m][0.1][0] >= 0.95 for m in three)),
        ("NonDPGaussian2 rate at eps = 0.1", abs(t["nondp-gaussian-2"][0.1][0] -
                                                 float(forms["rate_nondp2_eps01"])) < 1e-9),
    ]
    bad = [w for w, ok in checks if not ok]
    if bad:
        return Outcome(False, f"§4.1 disagrees with Table 1 on: {bad}", {"disagree": str(bad)})
    return Outcome(True, "§4.1's figures agree with Table 1")


def _check_under_1000(forms, ctx):
    """§1's 'previous tests requiring hundreds of thousands of samples while still failing to
    reject, now reject with under a thousand samples': the two mechanisms §4.1 says the batch
    tester missed at eps = 0.01 (NonDPLaplace2, NonDPGaussian2), Table 1's N-bar as printed
    (censored = 0) or as the mean over the rejecting runs decoded from it (censored = 1)."""
    censored = _flag(forms["censored"])
    out = {}
    for mech in ("nondp-laplace-2", "nondp-gaussian-2"):
        rate, _, nbar, _ = SEED_TABLE1[mech][0.01]
        k = round(rate * R)
        out[mech] = ((R * nbar - (R - k) * (SEED_NMAX[0.01] + 1)) / k) if censored else nbar
    bad = {m: round(v) for m, v in out.items() if v >= 1000}
    if bad:
        return Outcome(False, f"Table 1 at eps = 0.01: N-bar {bad} is not under a thousand",
                       {"nbar": str(bad)})
    return Outcome(True, f"N-bar under a thousand: { {m: round(v) for m, v in out.items()} } "
                         "(NonDPGaussian2 rejects in 17 of 20 runs)")


e_ = sp.symbols("epsilon_detectable", positive=True)


def _check_nondp2_power(forms, ctx):
    """The NonDPGaussian2 mechanism built for and tested at the form's epsilon, as Table 1 ran
    it (DP-Auditorium's code, claim table1.nondp2_gaussian_reading; the notebook's OGA, witness
    radius 1/2, claim table1.conventions; median heuristic): the test can detect the violation
    only if its ceiling tau^{-1}(MMD_h / 2) (:mod:`semi_core.audit.sequential.ceiling`, MMD_h^2
    estimated from 200,000 fresh pairs at the median of 200 warm-up bandwidths) exceeds epsilon;
    fails when even the estimate + 2 SE stays below it."""
    from semi_core.audit.sequential import mechanism_source
    from semi_core.audit.sequential.ceiling import mechanism_ceiling
    from semi_core.audit.sequential.conventions import make_reading_mechanism
    from semi_core.audit.sequential.experiments import median_bandwidth_draws
    from semi_core.mechanisms.zoo import SEED_PAIR

    eps = float(forms["epsilon_detectable"])
    m = make_reading_mechanism("nondp-gaussian-2", eps, 1e-5, reading="auditorium")
    bws = median_bandwidth_draws(lambda n, r: m.sample(SEED_PAIR[0], n, r),
                                 lambda n, r: m.sample(SEED_PAIR[1], n, r), draws=200,
                                 seed=np.random.SeedSequence([ctx.seed, 4401]))
    c = mechanism_ceiling(mechanism_source(m, *SEED_PAIR), float(np.median(bws)), 1e-5,
                          n_pairs=200_000, seed=np.random.SeedSequence([ctx.seed, 4402]),
                          radius=0.5)
    lo, hi = c["epsilon_ceiling_range"]
    detail = (f"at eps = {eps:g} the test's ceiling is {c['epsilon_ceiling']:.3f} (2-SE range "
              f"{lo:.3f}-{hi:.3f}; MMD_h^2 = {c['mmd2']:.4f} +- {c['mmd2_se']:.4f} at bandwidth "
              f"{c['bandwidth']:.2f})")
    if hi < eps:
        return Outcome(False, detail + ": the null MMD <= tau holds for the test, which rejects "
                                       "with probability <= alpha whatever N_max",
                       {"epsilon": eps, "ceiling": c["epsilon_ceiling"], "ceiling_high": hi})
    return Outcome(True, detail + " >= eps: the violation is detectable")


def _check_nondp2_gaussian(forms, ctx):
    """Alg. 1 with the notebook's OGA/ONS (Table 1's, claim table1.conventions) on
    NonDPGaussian2 at eps = 0.01 (N_max = 2000, median heuristic) under the form's reading
    (0: the zoo's scale floor with Gaussian count noise and the analytic sigma; 1:
    DP-Auditorium's code, Laplace count noise and the classical sigma): the censored mean
    stopping time against Table 1's 1139 +- 126.1 (4 combined SE)."""
    from semi_core.audit.sequential import mechanism_source, run_audits
    from semi_core.audit.sequential.conventions import make_reading_mechanism
    from semi_core.audit.sequential.experiments import censored_mean_stop
    from semi_core.mechanisms.zoo import SEED_PAIR

    reading = "auditorium" if _flag(forms["auditorium"]) else "scale"
    m = make_reading_mechanism("nondp-gaussian-2", 0.01, 1e-5, reading=reading)
    runs = 8 if ctx.quick else 20
    res = run_audits(lambda: mechanism_source(m, *SEED_PAIR), runs=runs,
                     seed=np.random.SeedSequence([ctx.seed, 4303]), epsilon=0.01, delta=1e-5,
                     max_obs=2000, conventions="ons,oga")
    stops = [r.stopped_at for r in res.runs if r.rejected]
    cm, cse = censored_mean_stop(stops, runs, 2000)
    return mc_outcome([({"reading": reading, "runs": runs}, 1139.0, cm,
                        float(np.hypot(max(cse, 1.0), 126.1)))],
                      what="censored mean stopping time of NonDPGaussian2 at eps = 0.01")


def _claims() -> list[Claim]:
    def C(label, location, title, stated, hyp, check, method, **kw):
        return Claim(id=f"{SEED}:{label}", seed=SEED, location=location, title=title,
                     stated=stated, hypotheses=tuple(hyp), check=check, method=method, **kw)

    flip_c = {"perturb": lambda f: {"censored": 1 - f["censored"]}}
    return [
        C("table1.nbar_reading", "Tables 1-2 captions ('the average number of samples required "
          "to detect a violation, when it occurred')", "N-bar averages the rejecting runs",
          {"censored": sp.Integer(0) + 0 * c_}, ("20 runs per cell", "N_max 2000 / 5000"),
          _check_nbar_reading, "numeric", corrected={"censored": sp.Integer(1) + 0 * c_},
          **flip_c,
          notes="Table 1, NonDPGaussian2 at eps = 0.1: rate 0.05 (one run of 20) with N-bar "
                "4776 +- 219.0. A mean over one run has no SE; the authors' notebook's mean "
                "(get_first_crossing_index returns the length of the wealth history, N_max + 1, "
                "for a run that never rejects; np.std, ddof 0) gives a single rejecting run at "
                "501 and SE 219.3. Decoded means over the rejecting runs: NonDPGaussian2 987 / "
                "501 (Table 1), 587 / 1494 (Table 2), NonDPLaplace2 at 0.1: 547. "
                "semi_core.audit.sequential.experiments.seed_mean_over_rejecting; seq-audit "
                "prints both means beside the seed's cell."),
        C("appC.3.nbar_exception", "App. C.3 ('a decrease in the average number of samples ... "
          "with the exception of NonDPGaussian2 when eps = 0.1')",
          "N-bar decreases from Table 1 to 2 except NonDPGaussian2 at eps = 0.1 (printed N-bar)",
          {"censored": sp.Integer(0) + 0 * c_}, ("Tables 1 and 2 as printed",),
          _check_appc3_nbar, "numeric", corrected={"censored": sp.Integer(1) + 0 * c_},
          **flip_c,
          notes="On the printed cells NonDPGaussian2 at 0.1 also decreases (4776 -> 4475), so "
                "there is no exception; on the means over the rejecting runs decoded from the "
                "censored cells (claim table1.nbar_reading) it is exactly the one increase "
                "(501 -> 1494), which supports that reading."),
        C("appC.3.rates", "App. C.3 ('improved rejection rates for NonDPGaussian2 (eps = 0.01), "
          "and NonDPGaussian2, NonDPLaplace1 and NonDPLaplace2 (eps = 0.1)')",
          "the four listed rejection rates improve from Table 1 to Table 2",
          {"n_improved": sp.Integer(4)}, ("Tables 1 and 2 as printed",), _check_appc3_rates,
          "numeric", corrected={"n_improved": sp.Integer(3)},
          notes="NonDPLaplace1 at eps = 0.1 rejects in every run in both tables (1.0 +- 0.0)."),
        C("table2.rate_se", "Table 2, NonDPGaussian2 at eps = 0.01 ('0.9 +- 0.06'; caption: "
          "standard errors over 20 independent runs)", "rate standard error",
          {"se_rate": sp.Rational(6, 100)}, ("20 runs",), _check_rate_se, "numeric",
          corrected={"se_rate": sp.Rational(7, 100)},
          notes="sqrt(0.9 x 0.1 / 20) = 0.067; every other rate SE of Tables 1-2 is "
                "sqrt(p(1-p)/20) to two decimals."),
        C("abstract.batch_samples", "Abstract ('reducing this number from 50K to a few hundred') "
          "against §4.1 ('even when using 500,000 observations')",
          "batch sample size the sequential test is compared with",
          {"batch_n": sp.Integer(50_000)}, (), _check_abstract, "numeric",
          corrected={"batch_n": sp.Integer(500_000)}),
        C("sec4.1.prose", "§4.1, paragraph after Table 1 (the figures it quotes)",
          "§4.1's figures against Table 1",
          {"bound_eps001": sp.Integer(350), "nbar_nondp2": sp.Integer(1150),
           "bound_eps01": sp.Integer(1000), "rate_nondp2_eps01": sp.Rational(5, 100)},
          ("Table 1 as printed",), _check_prose, "numeric", perturb_factor=1 / 1.1,
          notes="'DPGaussian1' in the prose is NonDPGaussian1 (DPGaussian rejects in no run)."),
        C("sec1.under_a_thousand", "§1, contributions ('now reject with under a thousand "
          "samples') against Table 1 at eps = 0.01", "the sequential test rejects the "
          "mechanisms the batch tester missed with under 1,000 samples (Table 1's N-bar)",
          {"censored": sp.Integer(0) + 0 * c_}, ("Table 1 as printed", "§4.1: the batch "
                                                  "tester missed NonDPLaplace2, NonDPGaussian2"),
          _check_under_1000, "numeric", corrected={"censored": sp.Integer(1) + 0 * c_},
          **flip_c,
          notes="NonDPGaussian2's printed N-bar is 1139; over its 17 rejecting runs (claim "
                "table1.nbar_reading) 987, and 3 of 20 runs do not reject within 2,000."),
        C("sec4.1.nondp2_eps01_power", "§4.1 ('NonDPGaussian2 presents the most challenging "
          "detection scenario, with rejection rates dropping to just 5% for eps = 0.1, "
          "suggesting its violations become more subtle') and Table 1",
          "Table 1's test detects NonDPGaussian2's violation at eps = 0.1 (rarely)",
          {"epsilon_detectable": sp.Rational(1, 10) + 0 * e_},
          ("Table 1 as run: DP-Auditorium's MeanMechanism, the notebook's OGA (radius 1/2)",
           "median heuristic", "delta = 1e-5"), _check_nondp2_power, "monte-carlo",
          corrected={"epsilon_detectable": sp.Rational(1, 100) + 0 * e_},
          perturb=lambda f: {"epsilon_detectable": 10 * f["epsilon_detectable"]},
          notes="At eps = 0.1 the ceiling of the test as run is 0.058 (0.045-0.069): every "
                "eps >= 0.07 is a true null for the MMD test although the mechanism is not DP, "
                "so its rejection rate is at most alpha = 0.05 whatever N_max; Table 1's 0.05 "
                "(1 of 20 runs; ours 1-2 of 20) is the test's level, not power against a subtle "
                "violation. At eps = 0.01 the ceiling is 0.061 > 0.01 (detected in 16-19 of 20 "
                "runs). With Alg. 1's own OGA (radius 1) the ceiling at 0.1 is 0.116 "
                "(0.090-0.137): barely above."),
        C("table1.nondp2_gaussian_reading", "Table 1, NonDPGaussian2 row, and §4.1 ('Gaussian "
          "noise variants ... analogous mechanisms but use additive Gaussian noise')",
          "NonDPGaussian2 of Table 1 is the Laplace mechanism with both noises Gaussian",
          {"auditorium": sp.Integer(0) + 0 * a_},
          ("S = {0}, S' = {0, 1}", "N_max = 2000", "the notebook's OGA/ONS (table1.conventions)"),
          _check_nondp2_gaussian, "monte-carlo", corrected={"auditorium": sp.Integer(1) + 0 * a_},
          perturb=lambda f: {"auditorium": 1 - f["auditorium"]},
          notes="Both noises Gaussian (analytic sigma, floored noise scale): 20/20 rejections, "
                "censored mean 202 +- 14 at eps = 0.01 and 374 +- 41 at 0.1 (Table 1: 0.85 / "
                "1139 +- 126 and 0.05 / 4776 +- 219). DP-Auditorium's MeanMechanism as its code "
                "runs (the count noised with Laplace(2/eps) for the Gaussian mechanisms too, the "
                "classical sigma sqrt(2 log(1.25/delta)) 2/eps): 16/20, 1260 +- 119 and 1/20, "
                "4878 +- 120 (20 runs). seq-audit --noise-floor auditorium --conventions ons,oga; "
                "readings_table."),
    ]


CLAIMS = _claims()

#: Our conclusions, pinned for the registry tests (each still decided by its check).
EXPECTED_FAILS = {f"{SEED}:{x}" for x in (
    "table1.nbar_reading", "appC.3.nbar_exception", "appC.3.rates", "table2.rate_se",
    "abstract.batch_samples", "table1.nondp2_gaussian_reading", "sec1.under_a_thousand",
    "sec4.1.nondp2_eps01_power")}
EXPECTED_CONDITIONAL: set[str] = set()

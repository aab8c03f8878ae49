"""Statements of ``sequential_dp_auditing.txt``'s synthetic experiments and limits (App. F, App.
G, §3.3's reading of Theorem 3.3), checked against exact MMDs and the shipped tester.

Summary:

* App. F.1's 108 observations are those of U[0,1] against its one-bump perturbation, not of the
  stated [0,1]^2: there no run of Alg. 1 can average fewer than ~190 (Wald bound at the
  median-heuristic bandwidth; measured 816 +- 48).
* App. F.2's 62 % rejection rate is not a multiple of 1/20 (nor of 1/10, the authors'
  notebook's number of runs); 50 runs is the smallest count consistent with it.
* App. G (Fig. 8): at eps_canary = 2.75 the lower bound does not "grow slowly" toward 2.75: the
  test cannot reject any epsilon above tau^{-1}(MMD_h) = 0.41, whatever the observations.
* §3.3: "Item (3) guarantees that E[T] is bounded by 1/Delta^2": Theorem 3.3 has two items and
  its bound is O(log(1/(alpha Delta^2))/Delta^2), not O(1/Delta^2).
* App. C.2's "[0, 1/2]" for Alg. 1's betting range in the beta parametrisation holds.
"""

from __future__ import annotations

import numpy as np
import sympy as sp

from .._core import Claim, Outcome, lambdify, mc_outcome

SEED = "sequential_dp_auditing"

d_ = sp.symbols("d", positive=True, integer=True)
D_, al_ = sp.symbols("Delta alpha", positive=True)


def _check_f1(forms, ctx):
    """App. F.1 in dimension d (form): U[0,1]^d vs the one-bump perturbed uniform of Schrab et
    al. (density in [0, 2]), Alg. 1 as printed, median heuristic on 20 warm-up pairs. First the
    Wald bound E[T] >= log(1/alpha) / (MMD_h / 4) averaged over the median-heuristic bandwidth
    (exact MMD by quadrature): above 108 the seed's mean is impossible. Then Monte Carlo: the
    mean stopping time of the runs within 4 SE of 108."""
    from semi_core.audit.sequential import run_audits, sampler_source
    from semi_core.audit.sequential.experiments import (
        median_bandwidth_draws,
        perturbed_uniform_mmd,
        perturbed_uniform_sampler,
        wald_stop_lower_bound,
    )

    d = int(round(float(forms["d"])))
    if d < 1:
        return Outcome(False, f"dimension {d} < 1", {"d": d})
    unif = lambda n, r: r.random((n, d))  # noqa: E731
    pert = perturbed_uniform_sampler(d, 1.0)
    bws = median_bandwidth_draws(unif, pert, draws=200 if ctx.quick else 1000,
                                 seed=np.random.SeedSequence([ctx.seed, 6101, d]))
    bound = float(np.mean(wald_stop_lower_bound(perturbed_uniform_mmd(bws, d=d))))
    if bound > 108:
        return Outcome(False, f"d = {d}: no run of Alg. 1 can average fewer than {bound:.0f} "
                              f"observations (Wald bound at the median-heuristic bandwidth, "
                              f"median {np.median(bws):.2f}); the seed reports 108",
                       {"d": d, "wald_bound": bound, "stated_mean": 108})
    runs = 12 if ctx.quick else 40
    res = run_audits(lambda: sampler_source(unif, pert), runs=runs,
                     seed=np.random.SeedSequence([ctx.seed, 6102, d]), epsilon=0.0, delta=0.0,
                     max_obs=1500)
    s = res.summary
    if s["mean_stop"] is None:
        return Outcome(False, f"d = {d}: no run rejected", {"d": d})
    return mc_outcome([({"d": d, "runs": runs}, 108.0, s["mean_stop"],
                        max(s["mean_stop_se"], 1.0))], what="mean stopping time (App. F.1)")


def _check_f2(forms, ctx):
    """App. F.2's rejection rates over the stated number of runs: each printed rate (62 %,
    10 %, 100 %) times the runs must be a whole number of rejecting runs."""
    runs = float(forms["runs"])
    for rate in (0.62, 0.10, 1.0):
        k = rate * runs
        if abs(k - round(k)) > 1e-9:
            return Outcome(False, f"a rate of {rate:.0%} over {runs:g} runs is {k:g} rejecting "
                                  "runs", {"rate": rate, "runs": runs})
    return Outcome(True, f"every printed rate is a whole number of rejections over {runs:g} runs")


def _check_fig8(forms, ctx):
    """App. G, Fig. 8: the value the lower bound tends to with unlimited observations (form).
    Exact: the ceiling tau^{-1}(MMD_h) at the median-heuristic bandwidth of the canary stream
    N(0, s^2) vs N(1, s^2) calibrated to (2.75, 1e-5) (median over 200 warm-ups); the form must
    match it to 0.01. Monte Carlo: two runs of 2,500 pairs never put the lower bound above the
    ceiling plus one grid step."""
    from semi_core.audit.sequential.ceiling import gaussian_shift_ceiling
    from semi_core.audit.sequential.experiments import canary_ceiling, median_bandwidth_draws
    from semi_core.mechanisms.zoo import gaussian_sigma

    s = gaussian_sigma(2.75, 1e-5)
    bws = median_bandwidth_draws(lambda n, r: r.normal(0, s, (n, 1)),
                                 lambda n, r: r.normal(1, s, (n, 1)), draws=200,
                                 seed=np.random.SeedSequence([ctx.seed, 6201]))
    ceil = gaussian_shift_ceiling(1.0, s, 1e-5, bandwidth=float(np.median(bws)))
    c = ceil["at_bandwidth"]["epsilon_ceiling"]
    stated = float(forms["limit"])
    if abs(stated - c) > 0.01:
        return Outcome(False, f"the lower bound cannot pass {c:.3f} (tau^-1 of MMD_h = "
                              f"{ceil['at_bandwidth']['mmd']:.3f} at bandwidth "
                              f"{np.median(bws):.2f}; any kernel: {ceil['any_kernel_ceiling']:.3f}), "
                              f"not {stated:g}", {"stated": stated, "ceiling": c,
                                                  "any_kernel": ceil["any_kernel_ceiling"]})
    cc = canary_ceiling(runs=2, max_obs=2500, seed=np.random.SeedSequence([ctx.seed, 6202]))
    worst = max(r["lb_end"] for r in cc["runs"])
    if worst > c + 0.05 + 1e-9:
        return Outcome(False, f"a run's lower bound {worst:.2f} passed the ceiling {c:.3f}",
                       {"lb_end": worst, "ceiling": c})
    return Outcome(True, f"the ceiling is {c:.3f}; the runs' bounds end at "
                         f"{[r['lb_end'] for r in cc['runs']]}")


def _check_order(forms, ctx):
    """§3.3's order of E[T] against Theorem 3.3 (ii)'s bound
    O(log(1/Delta)/Delta + log(1/(alpha Delta^2))/Delta^2): the stated order must dominate the
    bound as Delta -> 0 (finite limit of bound / order), at alpha = 0.05."""
    bound = sp.log(1 / D_) / D_ + sp.log(1 / (al_ * D_**2)) / D_**2
    ratio = sp.limit((bound / forms["ET_order"]).subs(al_, sp.Rational(1, 20)), D_, 0, "+")
    if not ratio.is_finite:
        return Outcome(False, f"bound / stated order -> {ratio} as Delta -> 0: the bound is not "
                              f"O({forms['ET_order']})", {"limit": str(ratio)})
    return Outcome(True, f"bound / stated order -> {ratio} as Delta -> 0")


tau_ = sp.symbols("tau", nonnegative=True)


def _check_beta_domain(forms, ctx):
    """App. C.2: ONS's domain lambda in [0, 1/(4 + 2 tau)] of Alg. 1 is beta = (2 + tau) lambda
    in [0, beta_max]; SymPy: (2 + tau)/(4 + 2 tau) - beta_max simplifies to 0 (and at 20 points
    of tau in [0, sqrt 2])."""
    diff = sp.simplify((2 + tau_) / (4 + 2 * tau_) - forms["beta_max"])
    f = lambdify(diff, [tau_])
    pts = np.linspace(0, np.sqrt(2), 20)
    worst = float(np.max(np.abs(f(pts) + 0 * pts)))
    if diff != 0 or worst > 1e-12:
        return Outcome(False, f"(2 + tau)/(4 + 2 tau) - beta_max = {diff} (max {worst:.3g} on "
                              "[0, sqrt 2])", {"difference": str(diff)})
    return Outcome(True, "beta_max = (2 + tau)/(4 + 2 tau) = 1/2 for every tau")


def _claims() -> list[Claim]:
    def C(label, location, title, stated, hyp, check, method, **kw):
        return Claim(id=f"{SEED}:{label}", seed=SEED, location=location, title=title,
                     stated=stated, hypotheses=tuple(hyp), check=check, method=method, **kw)

    return [
        C("appF.1.dimension", "App. F.1 and Fig. 4 ('a uniform distribution on [0,1]^2 against a "
          "perturbed uniform ... rejects H0 after, on average, 108 observations')",
          "Alg. 1 rejects U[0,1]^d vs the perturbed uniform in 108 observations on average",
          {"d": sp.Integer(2) + 0 * d_},
          ("one perturbation (Schrab et al.), density in [0, 2]", "median heuristic on 20 pairs",
           "alpha = 0.05"), _check_f1, "monte-carlo", corrected={"d": sp.Integer(1) + 0 * d_},
          perturb=lambda f: {"d": 3 - f["d"]},
          notes="The kernel and the perturbation factor over coordinates, MMD_h = e^d J(h)^{d/2}; "
                "in [0,1]^2 MMD_h <= 0.13 (0.065 at the median-heuristic h ~ 0.5), so E[T] >= "
                "log(20)/(MMD_h/4) ~ 190 for Alg. 1 (lambda <= 1/4) and 4 times that with the "
                "notebook's OGA/ONS; measured 816 +- 48 (20 runs; 380 at the best fixed "
                "bandwidth 0.2, 906 with Alg. 2). On U[0,1] (d = 1): 107 +- 5 (20 runs), the "
                "seed's 108. report section App. F.1; perturbed_uniform(d=1)."),
        C("appF.2.runs", "App. F.2 ('based on 20 simulations ... the rejection rate is 62% when "
          "d = 1, degrading its power to 10%')", "rejection rates over 20 runs",
          {"runs": sp.Integer(20)}, (), _check_f2, "numeric",
          corrected={"runs": sp.Integer(50)}, perturb=lambda f: {"runs": f["runs"] + 1},
          notes="62 % is 12.4 of 20 runs (the authors' notebook runs 10 simulations per cell, "
                "6.2 of 10, with bandwidth sqrt(d) rather than the median heuristic); 50 is the "
                "smallest run count that gives 62 %, 10 % and 100 %."),
        C("appG.fig8_ceiling", "App. G, Fig. 8 caption and §4.2 Discussion ('when auditing a "
          "mechanism with a true eps ~ 3, the empirical lower bound grows very slowly')",
          "the lower bound grows (slowly) toward eps_canary = 2.75",
          {"limit": sp.Rational(11, 4)},
          ("white-box canary stream N(0, s^2) vs N(1, s^2), (2.75, 1e-5)", "Alg. 1, median "
           "heuristic", "delta = 1e-5"), _check_fig8, "numeric",
          corrected={"limit": sp.Rational(411, 1000)}, perturb_factor=1.1,
          notes="The witness statistic converges to MMD_h, and every grid epsilon with "
                "tau(eps, delta) >= MMD_h is a true null for the test: the lower bound stays "
                "below tau^-1(MMD_h) = log((1 - 2 delta + m)/(1 - m)), m = MMD_h/sqrt 2, except "
                "with probability alpha, whatever the number of observations. Here MMD_h = 0.287 "
                "at h ~ 1.5 (also the best bandwidth): 0.41; sqrt 2 TV = 0.369 caps every kernel "
                "in [0, 1] at 0.53. Our runs: 0.30-0.35 after 2,500 pairs, 0.35-0.375 after "
                "20,000. seq-audit --epsilon-grid reports epsilon_ceiling; report Fig. 8 panel."),
        C("appC.2.beta_domain", "App. C.2 ('UP allows to optimize over the interval [0, 1] "
          "instead of [0, 1/2]')", "Alg. 1's ONS range in the beta parametrisation",
          {"beta_max": sp.Rational(1, 2)}, ("beta = (2 + tau) lambda (App. C.2, Part 2)",),
          _check_beta_domain, "symbolic"),
        C("sec3.3.item3_order", "§3.3, after Theorem 3.3 ('Item (3) guarantees that the expected "
          "time to reject ... is bounded by 1/Delta^2')",
          "E[T] = O(1/Delta^2)", {"ET_order": 1 / D_**2}, ("Theorem 3.3 (ii)", "alpha fixed"),
          _check_order, "asymptotic",
          corrected={"ET_order": sp.log(1 / D_) / D_**2},
          perturb=lambda f: {"ET_order": f["ET_order"] * D_},
          notes="Theorem 3.3 has two items; its (ii) gives O(log(1/Delta)/Delta + "
                "log(1/(alpha Delta^2))/Delta^2), a log factor above 1/Delta^2 (the measured "
                "stopping times follow the log factor: analysis/seq_outputs, scaling_delta)."),
    ]


CLAIMS = _claims()

#: Our conclusions, pinned for the registry tests (each still decided by its check).
EXPECTED_FAILS = {f"{SEED}:{x}" for x in (
    "appF.1.dimension", "appF.2.runs", "appG.fig8_ceiling", "sec3.3.item3_order")}
EXPECTED_CONDITIONAL: set[str] = set()

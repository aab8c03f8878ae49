"""Report section: per-datum membership leakage (``per_datum_leakage`` seed, Fig. 2a-f analogues).

Theory (corrected closed forms of :mod:`semi_core.stats.leakage`) against the per-datum game
(:func:`semi_core.attacks.leakage.simulate_leakage`, sufficient statistics) on the seed's set-up
(Bernoulli, :math:`p_j\\sim U[0.25,0.75]`, ``d/n = 5``; quick mode ``n = 200``, full mode the
seed's ``n = 1000, d = 5000``):

(a, b) histograms of the Eq. (10) statistic against :math:`\\mathcal N(\\mp m^*/2, m^*)`;
(c, d) ROC of easy / medium / hard targets against :math:`\\Phi(\\Phi^{-1}(\\alpha)+\\sqrt{m^*})`;
(e) noise sweep (:math:`\\tilde m^*_\\gamma`); (f) sub-sampling sweep: the paper's Eq. (16),
the corrected shared-inclusion power and simulation (optimal test and the paper's Eq. 15
statistic) and, beside it, the per-coordinate inclusion model under which Eq. (16) holds;
the plug-in power loss against :math:`n_0/n`; the finite-``n`` gap of the limit
power and the Edgeworth-corrected power; the average-datum game (App. B, Alg. 3/4) against its
limit :math:`\\mathcal N(\\mp M/2, M)` (Remark 3.3), noiseless Bernoulli and noisy Gaussian.
"""

from __future__ import annotations

import time

import numpy as np
from scipy import stats

from semi_core.mechanisms.per_datum import PerDatumMean, seed_bernoulli, seed_targets
from semi_core.report import ReportContext, Section
from semi_core.stats import leakage as L

#: Position of this section in the report (smaller first).
ORDER = 70

__all__ = ["build", "run_experiments", "make_figures", "tables", "average_datum_rows"]

ALPHA = 0.01
RHOS = (0.1, 0.25, 0.5, 0.75)
NOISES = (0.0, 0.25, 0.5, 1.0)
RATIOS = (0.1, 0.25, 0.5, 1.0, 2.0, 4.0)
EDGE_NS = (5, 10, 20, 50, 200)


def _ss(seed, *key):
    return np.random.SeedSequence([int(seed), 1313, *key])


def run_experiments(*, quick: bool = True, seed: int = 0, progress=lambda m: None,
                    n: int | None = None, rounds: int | None = None) -> dict:
    """Every number of the section (JSON-ready), with run times.

    Parameters
    ----------
    quick : bool
        Small Monte Carlo sizes.
    seed : int
        Root seed.
    progress : callable
        ``progress(message)``.
    n : int, optional
        Batch size; None = the seed's.
    rounds : int, optional
        Games per experiment; None = the mode's default.

    Returns
    -------
    dict
        The section's numbers and run times.
    """
    # lazy: torch is a heavy import, loaded only when this runs
    from semi_core.attacks.leakage import power_loss_curve, simulate_leakage, summarize_leakage

    n = n or (200 if quick else 1000)
    d = 5 * n
    R = rounds or 2000
    law = seed_bernoulli(d, seed=seed)
    targets = seed_targets(law, seed=seed)
    out: dict = {"n": n, "d": d, "rounds": R, "alpha": ALPHA, "targets": {}, "noise": [],
                 "subsample": [], "power_loss": [], "edgeworth": []}
    t_all = time.perf_counter()
    for i, (name, z) in enumerate(targets.items()):
        progress(f"target {name}")
        mech = PerDatumMean(law, n, z)
        res = simulate_leakage(mech, R, _ss(seed, 1, i), attacks=("exact", "approx"))
        s = summarize_leakage(res, (ALPHA, 0.1))
        th = mech.theory(ALPHA)
        mem, non = res.scores("approx")
        out["targets"][name] = {
            "m_star": th["m_star"], "leakage_theory": th["leakage"],
            "power_theory": th["power"], "threshold": th["threshold"],
            "threshold_scale": th["threshold_scale"],
            "sim": {a: {"power": s[a]["tpr_at_fpr"][str(ALPHA)],
                        "power_se": s[a]["tpr_se"][str(ALPHA)],
                        "advantage": s[a]["bayes_advantage"],
                        "advantage_se": s[a]["bayes_advantage_se"],
                        "auc": s[a]["auc"]} for a in s},
            "approx_scores": {"member": mem.tolist(), "nonmember": non.tolist()},
            "seconds": res.metadata["seconds"]}
    z = targets["easy"]
    for j, g in enumerate(NOISES):
        progress(f"noise {g}")
        mech = PerDatumMean(law, n, z, noise_std=g)
        res = simulate_leakage(mech, R, _ss(seed, 2, j), attacks=(mech.test,))
        s = summarize_leakage(res, (ALPHA,))[mech.test]
        mem, non = res.scores(mech.test)
        out["noise"].append({"gamma": g, "m_tilde": mech.m_star,
                             "power_theory": float(L.power(ALPHA, mech.m_star)),
                             "power": s["tpr_at_fpr"][str(ALPHA)],
                             "power_se": s["tpr_se"][str(ALPHA)],
                             "scores": {"member": mem.tolist(), "nonmember": non.tolist()}})
    for j, rho in enumerate(RHOS):
        progress(f"rho {rho}")
        mech = PerDatumMean(law, n, z, rho=rho)
        res = simulate_leakage(mech, R, _ss(seed, 3, j), attacks=("exact", "paper-sub"))
        s = summarize_leakage(res, (ALPHA,))
        th = mech.theory(ALPHA)
        mem, non = res.scores("exact")
        # the same rho with one inclusion event per coordinate: the model of Eq. (16)
        pc = PerDatumMean(law, n, z, rho=rho, inclusion="per-coordinate")
        spc = summarize_leakage(simulate_leakage(pc, R, _ss(seed, 6, j), attacks=("exact",)),
                                (ALPHA,))["exact"]
        out["subsample"].append({
            "power_sim_per_coordinate": spc["tpr_at_fpr"][str(ALPHA)],
            "power_sim_per_coordinate_se": spc["tpr_se"][str(ALPHA)],
            "rho": rho, "rho_effective": mech.q, "m_star": mech.m_star,
            "power_paper": th["paper"]["power"], "power_corrected": th["power"],
            "leakage_paper": th["paper"]["leakage"], "leakage_corrected": th["leakage"],
            "power_sim": s["exact"]["tpr_at_fpr"][str(ALPHA)],
            "power_sim_se": s["exact"]["tpr_se"][str(ALPHA)],
            "power_sim_eq15": s["paper-sub"]["tpr_at_fpr"][str(ALPHA)],
            "power_sim_eq15_se": s["paper-sub"]["tpr_se"][str(ALPHA)],
            "advantage_sim": s["exact"]["bayes_advantage"],
            "advantage_sim_se": s["exact"]["bayes_advantage_se"],
            "scores": {"member": mem.tolist(), "nonmember": non.tolist()}})
    progress("plug-in power loss")
    mech = PerDatumMean(law, n, targets["medium"])
    out["power_loss"] = power_loss_curve(mech, RATIOS, R, seed=int(seed), alpha=0.1)
    out["power_loss_target"] = "medium"
    out["power_loss_alpha"] = 0.1
    progress("finite-n gap")
    R_e = 4000 if quick else 20000
    for j, ne in enumerate(EDGE_NS):
        lw = seed_bernoulli(5 * ne, seed=seed)
        ze = seed_targets(lw, seed=seed)["easy"]
        mech = PerDatumMean(lw, ne, ze, test="approx")
        res = simulate_leakage(mech, R_e, _ss(seed, 5, j), attacks=("approx", "exact"))
        s = summarize_leakage(res, (0.1,))
        cum = L.eq10_cumulants(ze, lw.mean, lw.var, ne, k3=lw.k3)
        out["edgeworth"].append({
            "n": ne, "d": 5 * ne, "m_star": mech.m_star, "alpha": 0.1,
            "power_limit": float(L.power(0.1, mech.m_star)),
            "power_edgeworth": float(L.edgeworth_power(0.1, cum)),
            "power_sim_eq10": s["approx"]["tpr_at_fpr"]["0.1"],
            "power_sim_eq10_se": s["approx"]["tpr_se"]["0.1"],
            "power_sim_exact": s["exact"]["tpr_at_fpr"]["0.1"],
            "power_sim_exact_se": s["exact"]["tpr_se"]["0.1"],
            "skewness_h0": float(cum["k3_0"] / cum["k2_0"] ** 1.5),
            "var1_over_var0": float(cum["k2_1"] / cum["k2_0"])})
    progress("average-datum game")
    out["average"] = average_datum_rows(law, n, R, seed)
    out["seconds"] = time.perf_counter() - t_all
    return out


#: Noise levels of the average-datum rows (Gaussian data; Bernoulli is noiseless only).
AVG_NOISES = (0.0, 0.5, 1.0)


def average_datum_rows(law, n: int, rounds: int, seed: int = 0) -> list[dict]:
    r"""The average-datum game (seed App. B, Alg. 3/4) beside its limit :math:`\mathcal
    N(\mp M/2, M)`, :math:`M=\sum_j\sigma_j^2/(n(\sigma_j^2+\gamma_j^2))` (:math:`=d/n`
    without noise: Remark 3.3).

    One row for ``law`` (the seed's Bernoulli set-up, noiseless: the exact LR of the pair needs
    Gaussian data once noise is added) and one per :data:`AVG_NOISES` for Gaussian data with
    the same variances; each row holds the limit leakage and power at :data:`ALPHA`, the
    simulated advantage and power (exact LR of the pair, ``rounds`` games,
    :func:`semi_core.attacks.leakage.simulate_average_datum`), the simulated log-LR moments and,
    for Gaussian data, the exact finite-``n`` moments.

    Parameters
    ----------
    law : ProductLaw
        Bernoulli law of the per-datum rows.
    n : int
    rounds : int
    seed : int

    Returns
    -------
    list of dict
    """
    from semi_core.attacks.leakage import simulate_average_datum, summarize_leakage
    from semi_core.mechanisms.per_datum import AverageDatumMean, ProductLaw

    gauss = ProductLaw.gaussian(np.asarray(law.mean, float), np.sqrt(np.asarray(law.var, float)))
    cases = [("bernoulli", law, 0.0)] + [("gaussian", gauss, g) for g in AVG_NOISES]
    rows = []
    for k, (fam, lw, g) in enumerate(cases):
        mech = AverageDatumMean(lw, n, noise_std=g)
        th = mech.theory(ALPHA)
        res = simulate_average_datum(mech, rounds, _ss(seed, 7, k))
        sm = summarize_leakage(res, (ALPHA,))["exact"]
        mem, non = res.scores("exact")
        rows.append({
            "data": fam, "gamma": g, "M": th["M"], "leakage_limit": th["leakage"],
            "power_limit": th["power"], "advantage_sim": sm["bayes_advantage"],
            "advantage_sim_se": sm["bayes_advantage_se"],
            "power_sim": sm["tpr_at_fpr"][str(ALPHA)], "power_sim_se": sm["tpr_se"][str(ALPHA)],
            "moments_sim": {"mean0": float(non.mean()), "var0": float(non.var(ddof=1)),
                            "mean1": float(mem.mean()), "var1": float(mem.var(ddof=1)),
                            "n0": int(non.size), "n1": int(mem.size)},
            "moments_exact": th.get("exact_moments"),
            "seconds": res.metadata["seconds"]})
    return rows


def tables(data: dict) -> str:
    """Markdown tables of the section.

    Parameters
    ----------
    data : dict
        The result of :func:`run_experiments`.

    Returns
    -------
    str
        The Markdown tables.
    """
    a = data["alpha"]
    L = [f"Seed set-up: Bernoulli p_j ~ U[0.25, 0.75], n = {data['n']}, d = {data['d']}, "
         f"{data['rounds']} games per point (sufficient statistics); FPR {a}.", "",
         "| target | m* | leakage (theory) | advantage (sim, exact LR) | power (theory) | "
         "power (exact LR) | power (Eq. 10) |", "|---|---|---|---|---|---|---|"]
    for name, t in data["targets"].items():
        e, ap = t["sim"]["exact"], t["sim"]["approx"]
        L.append(f"| {name} | {t['m_star']:.3f} | {t['leakage_theory']:.3f} | "
                 f"{e['advantage']:.3f} ± {e['advantage_se']:.3f} | {t['power_theory']:.3f} | "
                 f"{e['power']:.3f} ± {e['power_se']:.3f} | {ap['power']:.3f} ± "
                 f"{ap['power_se']:.3f} |")
    L += ["", "Sub-sampling (easy target; one shared inclusion event):", "",
          "| rho | paper Eq. (16) | corrected | simulated (optimal) | simulated (paper's Eq. 15 "
          "statistic) | leakage paper / corrected / sim | simulated, per-coordinate inclusion "
          "|", "|---|---|---|---|---|---|---|"]
    for r in data["subsample"]:
        L.append(f"| {r['rho']} | {r['power_paper']:.3f} | {r['power_corrected']:.3f} | "
                 f"{r['power_sim']:.3f} ± {r['power_sim_se']:.3f} | {r['power_sim_eq15']:.3f}"
                 f" ± {r['power_sim_eq15_se']:.3f} | {r['leakage_paper']:.3f} / "
                 f"{r['leakage_corrected']:.3f} / {r['advantage_sim']:.3f} ± "
                 f"{r['advantage_sim_se']:.3f} | {r['power_sim_per_coordinate']:.3f} ± "
                 f"{r['power_sim_per_coordinate_se']:.3f} |")
    L += ["", "Noise (easy target): power at FPR vs the noisy score m~*:", "",
          "| gamma | m~* | power (theory) | power (sim) |", "|---|---|---|---|"]
    for r in data["noise"]:
        L.append(f"| {r['gamma']} | {r['m_tilde']:.3f} | {r['power_theory']:.3f} | "
                 f"{r['power']:.3f} ± {r['power_se']:.3f} |")
    pa = data["power_loss_alpha"]
    L += ["", f"Plug-in LR power loss ({data['power_loss_target']} target, FPR {pa}; fresh "
          "reference sample of n0 points per game):", "",
          "| n0/n | m_eff = m* λ/(1+λ) | power (theory) | plug-in, known var | plug-in, "
          "estimated var | oracle Eq. 10 |", "|---|---|---|---|---|---|"]
    for r in data["power_loss"]:
        L.append(f"| {r['ratio']:.3g} | {r['m_eff']:.3f} | {r['theory_power']:.3f} | "
                 f"{r['plugin-known-var_power']:.3f} ± {r['plugin-known-var_se']:.3f} | "
                 f"{r['plugin_power']:.3f} ± {r['plugin_se']:.3f} | {r['approx_power']:.3f} |")
    L += ["", "Finite-n gap (easy target, d = 5n, FPR 0.1): limit power vs exact finite-n "
          "cumulants + Edgeworth term vs simulation:", "",
          "| n | m* | limit | Edgeworth | sim (Eq. 10) | sim (exact LR) | skewness | "
          "var1/var0 |", "|---|---|---|---|---|---|---|---|"]
    for r in data["edgeworth"]:
        L.append(f"| {r['n']} | {r['m_star']:.3f} | {r['power_limit']:.3f} | "
                 f"{r['power_edgeworth']:.3f} | {r['power_sim_eq10']:.3f} ± "
                 f"{r['power_sim_eq10_se']:.3f} | {r['power_sim_exact']:.3f} ± "
                 f"{r['power_sim_exact_se']:.3f} | {r['skewness_h0']:.2e} | "
                 f"{r['var1_over_var0']:.4f} |")
    if data.get("average"):
        L += ["", "Average-datum game (seed App. B, Alg. 3/4: a fresh target each round, exact LR "
              f"of the pair; n = {data['n']}, d = {data['d']}, {data['rounds']} games): limit "
              "N(-+M/2, M), M = d/n = 5 without noise (Remark 3.3, Sankararaman et al.: "
              "leakage 0.736, power 0.464 at FPR 0.01); Gaussian data with the same variances "
              "for the noise levels:", "",
              "| data | gamma | M | leakage (limit) | advantage (sim) | power (limit) | "
              "power (sim) | log-LR mean0 / var0 / mean1 / var1 (sim) | exact finite-n "
              "(Gaussian) |", "|---|---|---|---|---|---|---|---|---|"]
        for r in data["average"]:
            m, e = r["moments_sim"], r["moments_exact"]
            ex = (f"{e['mean0']:.3f} / {e['var0']:.3f} / {e['mean1']:.3f} / {e['var1']:.3f}"
                  if e else "-")
            L.append(f"| {r['data']} | {r['gamma']} | {r['M']:.3f} | {r['leakage_limit']:.3f} "
                     f"| {r['advantage_sim']:.3f} ± {r['advantage_sim_se']:.3f} | "
                     f"{r['power_limit']:.3f} | {r['power_sim']:.3f} ± {r['power_sim_se']:.3f}"
                     f" | {m['mean0']:.3f} / {m['var0']:.3f} / {m['mean1']:.3f} / "
                     f"{m['var1']:.3f} | {ex} |")
    return "\n".join(L)


def _sim_roc(ax, P, s1, s0, theory_f, theory_tpr, color, label, ls_theory=":"):
    """Simulated ROC (steps, pointwise 95 % Clopper-Pearson band) and its closed form."""
    P.plot_empirical_roc(ax, s1, s0, label=label, color=color, lw=1.1, band_alpha=0.12)
    P.plot_curve(ax, theory_f, theory_tpr, color=color, ls=ls_theory, lw=1.4)


def make_figures(data: dict, out_dir) -> list[str]:
    """Fig. 2a-f analogues as PNG files under ``out_dir``; returns their names.

    ROC panels go through :mod:`semi_core.report._plots` (log-log, FPR from 1/N0, chance line,
    pointwise 95 % Clopper-Pearson bands of the simulated curves).

    Parameters
    ----------
    data : dict
        The result of :func:`run_experiments`.
    out_dir : str or pathlib.Path
        Directory of the PNG files.

    Returns
    -------
    list of str
        File names of the figures.
    """
    from semi_core.report import _plots as P

    with P.style() as plt:
        fig, axes = plt.subplots(2, 3, figsize=(13.5, 8.2))
        for ax, name in zip(axes[0, :2], ("easy", "hard"), strict=True):
            t = data["targets"][name]
            m = t["m_star"]
            s0 = np.array(t["approx_scores"]["nonmember"])
            s1 = np.array(t["approx_scores"]["member"])
            lo, hi = min(s0.min(), s1.min()), max(s0.max(), s1.max())
            xs = np.linspace(lo, hi, 300)
            ax.hist(s0, bins=40, density=True, alpha=0.45, color="C0",
                    label=f"non-member (H0), {s0.size} games")
            ax.hist(s1, bins=40, density=True, alpha=0.45, color="C3",
                    label=f"member (H1), {s1.size} games")
            ax.plot(xs, stats.norm.pdf(xs, -m / 2, np.sqrt(m)), "C0--", label="N(-m*/2, m*)")
            ax.plot(xs, stats.norm.pdf(xs, m / 2, np.sqrt(m)), "C3--", label="N(+m*/2, m*)")
            ax.set_title(f"({'a' if name == 'easy' else 'b'}) Eq. 10 statistic, {name} target: "
                         f"m* = {m:.2f}")
            ax.set_xlabel("log-likelihood-ratio statistic (Eq. 10)")
            ax.set_ylabel("density")
            ax.legend(loc="upper left", fontsize=6.5)
        t0 = next(iter(data["targets"].values()))
        n0 = len(t0["approx_scores"]["nonmember"])
        n1 = len(t0["approx_scores"]["member"])
        ax = axes[0, 2]
        xf, _ = P.roc_axes(ax, n0=n0, n1=n1, title="(c, d) ROC by target: sim vs Eq. 9 (dotted)",
                           tpr_floor=0.01)
        grid = np.geomspace(xf, 1 - 1e-9, 200)
        for i, (name, t) in enumerate(data["targets"].items()):
            _sim_roc(ax, P, np.array(t["approx_scores"]["member"]),
                     np.array(t["approx_scores"]["nonmember"]), grid,
                     L.power(grid, t["m_star"]), f"C{i}", f"{name} (m* = {t['m_star']:.2f})")
        ax.legend(loc="lower right", fontsize=6.5)
        ax = axes[1, 0]
        r0 = data["noise"][0]["scores"]
        P.roc_axes(ax, n0=len(r0["nonmember"]), n1=len(r0["member"]),
                   title="(e) noise sweep: sim vs Eq. 14 (dotted)", tpr_floor=0.01)
        for i, r in enumerate(data["noise"]):
            _sim_roc(ax, P, np.array(r["scores"]["member"]), np.array(r["scores"]["nonmember"]),
                     grid, L.power(grid, r["m_tilde"]), f"C{i}", f"gamma = {r['gamma']}")
        ax.legend(loc="lower right", fontsize=6.5)
        ax = axes[1, 1]
        r0 = data["subsample"][0]["scores"]
        P.roc_axes(ax, n0=len(r0["nonmember"]), n1=len(r0["member"]),
                   title="(f) sub-sampling: dotted corrected, dashed paper", tpr_floor=0.01)
        for i, r in enumerate(data["subsample"]):
            _sim_roc(ax, P, np.array(r["scores"]["member"]), np.array(r["scores"]["nonmember"]),
                     grid, L.sub_power(grid, r["m_star"], r["rho_effective"]), f"C{i}",
                     f"rho = {r['rho']}")
            P.plot_curve(ax, grid, L.sub_power(grid, r["m_star"], r["rho_effective"],
                                               form="paper"), color=f"C{i}", ls="--", lw=0.8)
        ax.legend(loc="lower right", fontsize=6.5)
        ax = axes[1, 2]
        pl = data["power_loss"]
        ratios = np.array([r["ratio"] for r in pl])
        ax.plot(ratios, [r["theory_power"] for r in pl], "k-", label="theory m* λ/(1+λ)")
        ax.errorbar(ratios / 1.04, [r["plugin-known-var_power"] for r in pl],
                    yerr=[2 * r["plugin-known-var_se"] for r in pl], fmt="o",
                    label="plug-in, known variance (±2 SE)")
        ax.errorbar(ratios * 1.04, [r["plugin_power"] for r in pl],
                    yerr=[2 * r["plugin_se"] for r in pl], fmt="s",
                    label="plug-in, estimated variance (±2 SE)")
        ax.axhline(pl[0]["oracle_theory_power"], color="0.35", ls=":", label="oracle (known mean)")
        ax.set_xscale("log")
        ax.set_xticks(ratios, [f"{r:g}" for r in ratios])
        ax.minorticks_off()
        ax.set_xlabel("reference sample size n0 / n  (λ)")
        ax.set_ylabel(f"TPR at FPR {data['power_loss_alpha']}")
        ax.set_ylim(bottom=0)
        ax.set_title(f"plug-in power loss at FPR {data['power_loss_alpha']}")
        ax.legend(loc="lower right", fontsize=6.5)
        fig.tight_layout()
        fig.text(0.5, -0.01, "ROC panels: steps = simulation with pointwise 95% Clopper-Pearson "
                 "band; FPR axis from 1/N0 (the simulation's resolution)", ha="center",
                 fontsize=P.STYLE["legend.fontsize"])
        name = "leakage_fig2.png"
        P.save(fig, f"{out_dir}/{name}")
    return [name]


def build(ctx: ReportContext) -> Section:
    """Fig. 2a-f analogues, target / sub-sampling / noise / plug-in / finite-n tables.

    Parameters
    ----------
    ctx : ReportContext
        Output directory, quick or full mode, seed and progress hook.

    Returns
    -------
    Section
        The section's Markdown, figure names and JSON data.
    """
    t0 = time.perf_counter()
    data = run_experiments(quick=ctx.quick, seed=ctx.seed, progress=ctx.progress)
    figs = make_figures(data, ctx.out_dir)
    md = ("Per-datum leakage of the empirical mean (Azize & Basu): closed forms (corrected) "
          "against the per-datum game. The sub-sampling table shows the paper's Eq. (16) next "
          "to the corrected shared-inclusion power; simulation follows the corrected one, and "
          "the last column (one inclusion event per coordinate, the model Eq. (16) describes) "
          "follows Eq. (16): why the paper's Fig. 2f seemed to agree (details: "
          "`python analysis/leakage_inclusion.py`). "
          "The average-datum game (a fresh target each round) closes the section. "
          "DP-SGD canaries (Alg. 6/7): `python analysis/leakage_canaries.py`.\n\n"
          + tables(data))
    slim = {k: v for k, v in data.items() if k not in ("targets", "noise", "subsample")}
    slim["targets"] = {k: {kk: vv for kk, vv in v.items() if kk != "approx_scores"}
                       for k, v in data["targets"].items()}
    slim["noise"] = [{k: v for k, v in r.items() if k != "scores"} for r in data["noise"]]
    slim["subsample"] = [{k: v for k, v in r.items() if k != "scores"}
                         for r in data["subsample"]]
    slim["seconds_section"] = time.perf_counter() - t0
    return Section(title="Per-datum membership leakage (Azize & Basu)", markdown=md,
                   figures=figs, data=slim)

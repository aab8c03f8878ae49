"""Report section: DP-SGD fine-tuning audit, the seed's Fig. 3 / H.4 analogue (logreg on digits).

Quick mode plays 300 games per insertion time for tau in {1, 5, 10} and target eps in
{1, 2, 4, 8} (plus a no-noise run for the ROC plot); full mode plays 1000 games for every tau
and eps in {0.5, 1, 2, 4, 8}. Needs the torch extra; without it the section says so.
"""

from __future__ import annotations

import math

import numpy as np

from semi_core.report import ReportContext, Section

#: Position of this section in the report (smaller first).
ORDER = 40

__all__ = ["build"]


def plot_fig3(res: dict, path, *, labels: dict, method: str = "dkw") -> None:
    """eps_LB per attack against the exact eps: mean over tau (marker) and the range up to the
    best tau (bar, post hoc), attacks offset around each eps with their own marker and line
    style; the ideal eps_LB = eps line and the largest eps certifiable from the games per tau
    (above it: shaded, no bound can get there)."""
    from semi_core.report import _plots as P

    rows = res["rows"]
    truth = np.array([r["epsilon_true"] for r in rows])
    first = next(iter(labels))
    cap = np.array([r["attacks"][first][f"eps_max_{method}"] for r in rows])
    with P.style() as plt:
        fig, ax = plt.subplots(figsize=(7.2, 4.4))
        lo_x, hi_x = truth.min() / 1.35, truth.max() * 1.35
        top = 1.3 * cap.max()  # no bound can exceed the cap: the ideal line leaves the axes
        xe, ce = np.r_[lo_x, truth, hi_x], np.r_[cap[0], cap, cap[-1]]
        ax.plot([lo_x, hi_x], [lo_x, hi_x], color="0.35", ls=":", lw=0.9,
                label="ideal: eps_LB = exact eps")
        ax.plot(xe, ce, color="0.2", ls="--", lw=1.0,
                label=f"largest certifiable eps ({res['rounds_per_tau']} games/tau)")
        ax.fill_between(xe, ce, top, color="0.88", lw=0,
                        label="not certifiable with these games")
        n = len(labels)
        for k, (a, lab) in enumerate(labels.items()):
            mean = np.array([r["attacks"][a][f"eps_lb_{method}_mean"] for r in rows])
            best = np.array([r["attacks"][a][f"eps_lb_{method}_best"] for r in rows])
            x = truth * 2 ** ((k - (n - 1) / 2) * 0.07)  # dodge on the log axis
            ax.errorbar(x, mean, yerr=[np.zeros_like(mean), best - mean], color=f"C{k}",
                        marker=P.MARKERS[k], ls=P.LINESTYLES[k % len(P.LINESTYLES)], lw=1.1,
                        capsize=2.5, label=f"{lab}")
        ax.axhline(0, color="0.5", lw=0.6)
        ax.set_xscale("log", base=2)
        ax.set_xticks(truth, [f"{t:.3g}" for t in truth])
        ax.minorticks_off()
        ax.set_xlim(lo_x, hi_x)
        ax.set_ylim(-0.04 * top, top)
        ax.set_xlabel(f"exact epsilon of the DP-SGD run (delta = {res['delta']:g})")
        ax.set_ylabel(f"epsilon lower bound ({method.upper()}, 95%)")
        ax.set_title(f"DP-SGD audit: {res['model']} on {res['dataset']}, "
                     f"{res['rounds_per_tau']} games per tau, tau in {list(res['taus'])}")
        P.legend_outside(ax, title="marker: mean over tau;\nbar: up to the best tau\n(post hoc)",
                         title_fontsize=7, alignment="left")
        P.save(fig, path)


def plot_roc(res: dict, path, *, labels: dict) -> None:
    """ROC of every attack (log-log, FPR floored at 1/N0) without noise and at each audited eps,
    with the pointwise 95 % Clopper-Pearson band of the first attack (seed H.4)."""
    from semi_core.report import _plots as P

    keys = sorted(res["roc"], key=lambda k: (k != "inf", k))  # no noise first
    with P.style() as plt:
        fig, axes = plt.subplots(1, len(keys), figsize=(4.8 * len(keys), 4.3), squeeze=False)
        for ax, key in zip(axes[0], keys, strict=True):
            curves = res["roc"][key]["curves"]
            fpr0, tpr0 = next(iter(curves.values()))
            n0, n1 = P.class_sizes(fpr0, tpr0, res["rounds_per_tau"])
            what = "no noise" if key == "inf" else f"eps = {key}"
            xf, _ = P.roc_axes(ax, n0=n0, n1=n1, title=f"{what} (tau = {res['roc'][key]['tau']}, "
                               f"{n1} members / {n0} non-members)")
            for k, (a, lab) in enumerate(labels.items()):
                fpr, tpr = curves[a]
                band = P.roc_band_from_points(fpr, tpr, n1=n1, floor=xf) if k == 0 else None
                P.plot_roc(ax, fpr, tpr, label=lab, band=band, color=f"C{k}",
                           ls=P.LINESTYLES[k % len(P.LINESTYLES)])
        fig.tight_layout()
        P.figure_legend(fig, axes, ncol=4, title="steps: empirical ROC; shaded: pointwise 95% "
                        f"Clopper-Pearson band of {next(iter(labels.values()))}'s TPR "
                        "(the other attacks' are as wide)")
        P.save(fig, path)


def build(ctx: ReportContext) -> Section:
    """Run the audit and return the Fig. 3 analogue table, the eps plot and ROC curves."""
    title = "DP-SGD fine-tuning audit (seed Fig. 3, H.4, H.5)"
    try:
        # lazy: torch is a heavy import, loaded only when this runs
        import torch

        # lazy: torch is a heavy import, loaded only when this runs
        from semi_core.sgd.experiments import (
            LABELS,
            fig3_experiment,
            fig3_markdown,
        )
    except ImportError as exc:
        return Section(title=title, markdown=f"Skipped: the torch extra is not installed ({exc}).")
    torch.set_num_threads(1)
    if ctx.quick:
        kw = dict(epsilons=(1.0, 2.0, 4.0, 8.0), rounds=300, taus=(1, 5, 10), n_reference=128)
    else:
        kw = dict(epsilons=(0.5, 1.0, 2.0, 4.0, 8.0), rounds=1000, taus=None, n_reference=128)
    res = fig3_experiment(dataset="digits", model="logreg", seed=ctx.seed,
                          roc_epsilons=(math.inf, 1.0), progress=ctx.progress, **kw)
    plot_fig3(res, ctx.out_dir / "dpsgd_fig3.png", labels=LABELS)
    plot_roc(res, ctx.out_dir / "dpsgd_roc.png", labels=LABELS)
    mode = (f"**Quick mode**: {kw['rounds']} games per tau, tau in {list(kw['taus'])}; the "
            "bounds are loose at this size (run without --quick for 1000 games and all tau)."
            if ctx.quick else f"Full mode: {kw['rounds']} games per tau, tau = 1..10.")
    # AUC of each ROC curve (trapezoid over the empirical points = Mann-Whitney AUC)
    aucs = {k: {a: float(np.trapezoid(res["roc"][k]["curves"][a][1],
                                      res["roc"][k]["curves"][a][0])) for a in LABELS}
            for k in res["roc"]}
    auc_lines = [f"ROC AUC at tau = {res['roc'][k]['tau']} ("
                 + ("no noise" if k == "inf" else f"eps = {k}") + "): "
                 + ", ".join(f"{LABELS[a]} {v:.3f}" for a, v in aucs[k].items()) for k in aucs]
    md = "\n".join([
        mode, "",
        "Multinomial logistic regression pretrained on a public split of scikit-learn digits, "
        "fine-tuned with DP-SGD (batch 64, T = 10, C = 1, delta = 1e-4); the canary is the "
        "candidate with the largest clipped-gradient Mahalanobis distance. Ground truth: one "
        "record replaced, each record used once, so the run is (2/sigma_DP)-GDP. Cells: "
        "eps_LB (DKW, 95%) averaged over tau / best tau (post hoc, not multiplicity-corrected).",
        "", fig3_markdown(res, method="dkw"), "",
        *auc_lines, "",
        f"Games took {res['seconds_games']:.1f} s in total.",
    ])
    data = {"rows": res["rows"], "setup": res["setup"], "rounds_per_tau": res["rounds_per_tau"],
            "taus": res["taus"], "quick": ctx.quick, "roc_auc": aucs}
    return Section(title=title, markdown=md, figures=["dpsgd_fig3.png", "dpsgd_roc.png"],
                   data=data)

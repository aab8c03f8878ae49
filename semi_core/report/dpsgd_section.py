"""Report section: DP-SGD fine-tuning audit, the SeMI seed's Fig. 3 / H.4 analogue (logreg on
digits), drawn with the largest certifiable eps.

Quick mode (:data:`QUICK`) plays 300 games per insertion time for tau in {1, 5, 10} and target
eps in {0.5, 1, 2} (plus a no-noise run for the ROC plot); full mode (:data:`FULL`) plays 10^4
games for every tau and eps in {0.5, 1, 2, 4, 6} (about 3.4 x 10^5 DP-SGD runs, 45 CPU-minutes,
split over local processes). Needs the torch extra; without it the section says so.
"""

from __future__ import annotations

import math
import os

import numpy as np

from semi_core.report import ReportContext, Section

#: Position of this section in the report (smaller first).
ORDER = 40

__all__ = ["build", "plot_fig3", "plot_roc", "QUICK", "FULL"]


def plot_fig3(res: dict, path, *, labels: dict) -> None:
    """Seed Fig. 3 from :func:`semi_core.sgd.experiments.fig3_experiment`'s result.

    Left: every attack's tau-averaged bound against the exact eps on the scale of the exact
    eps, with the ideal line eps_LB = eps and the largest eps the method can certify from the
    games (on all games of a tau, and on the certification split; above it: shaded, no bound can
    get there). Right: the same bounds zoomed in, each with its 95 % interval (estimate
    +- 1.96 paired-bootstrap SE; filled marker) and the bound certified at the pilot-chosen tau (open marker, a valid
    bound for one tau); attacks offset around each eps.

    Parameters
    ----------
    res : dict
        :func:`~semi_core.sgd.experiments.fig3_experiment`'s result.
    path : str or pathlib.Path
        PNG file written.
    labels : dict
        Display name of each attack.
    """
    from semi_core.report import _plots as P

    rows = res["rows"]
    truth = np.array([r["epsilon_true"] for r in rows])
    cap = np.array([r["eps_max"] for r in rows])
    cap_c = np.array([r["eps_max_certify"] for r in rows])
    meth = res["method"]
    with P.style() as plt:
        fig, (ax, az) = plt.subplots(1, 2, figsize=(10.5, 4.3))
        lo_x, hi_x = truth.min() / 1.35, truth.max() * 1.35
        top = 1.1 * max(cap.max(), truth.max())
        xe = np.r_[lo_x, truth, hi_x]
        ce, cce = np.r_[cap[0], cap, cap[-1]], np.r_[cap_c[0], cap_c, cap_c[-1]]
        ax.plot([lo_x, hi_x], [lo_x, hi_x], color="0.35", ls=":", lw=0.9,
                label="ideal: eps_LB = exact eps")
        ax.plot(xe, ce, color="0.2", ls="--", lw=1.0,
                label=f"largest certifiable eps ({res['rounds_per_tau']} games/tau)")
        ax.plot(xe, cce, color="0.5", ls="-.", lw=0.9,
                label=f"largest certifiable on the {1 - res['pilot_fraction']:.0%} "
                      "certification split")
        ax.fill_between(xe, ce, top, color="0.9", lw=0, label="not certifiable with these games")
        n = len(labels)
        hi_z = 0.0
        for k, (a, lab) in enumerate(labels.items()):
            mean = np.array([r["attacks"][a]["eps_lb_mean"] for r in rows])
            pc = np.array([r["attacks"][a]["pilot_certify"]["eps_lb"] for r in rows])
            iv = np.array([r["attacks"][a].get("eps_lb_mean_interval", (m, m))
                           for r, m in zip(rows, mean, strict=True)])
            hi_z = max(hi_z, iv[:, 1].max(), pc.max(), mean.max())
            style = dict(color=f"C{k}", marker=P.MARKERS[k], lw=1.1,
                         ls=P.LINESTYLES[k % len(P.LINESTYLES)])
            ax.plot(truth, mean, label=lab, **style)
            x = truth * 2 ** ((k - (n - 1) / 2) * 0.06)  # dodge on the log axis
            az.errorbar(x, mean, yerr=[np.maximum(mean - iv[:, 0], 0),
                                       np.maximum(iv[:, 1] - mean, 0)], capsize=2.5, **style)
            az.plot(x, pc, ls="none", marker=P.MARKERS[k], mfc="none", color=f"C{k}", ms=6)
        for a_ in (ax, az):
            a_.axhline(0, color="0.5", lw=0.6)
            a_.set_xscale("log", base=2)
            a_.set_xticks(truth, [f"{t:.3g}" for t in truth])
            a_.minorticks_off()
            a_.set_xlim(lo_x, hi_x)
            a_.set_xlabel(f"exact epsilon of the DP-SGD run (delta = {res['delta']:g})")
        ax.set_ylim(-0.02 * top, top)
        az.set_ylim(-0.04 * max(hi_z, 0.05), 1.15 * max(hi_z, 0.05))
        ax.set_ylabel(f"epsilon lower bound ({meth}, {1 - res['failure_prob']:.0%})")
        ax.set_title(f"(a) {res['model']} on {res['dataset']}: tau-averaged bound, "
                     f"{res['rounds_per_tau']} games per tau, tau in {_taus(res['taus'])}")
        az.set_title("(b) zoom: tau-averaged bound +- 1.96 bootstrap SE (filled),\n"
                     "bound certified at the pilot-chosen tau (open)")
        fig.tight_layout()
        P.figure_legend(fig, [ax], ncol=5)
        P.save(fig, path)


def _taus(taus) -> str:
    taus = list(taus)
    if len(taus) > 2 and taus == list(range(taus[0], taus[-1] + 1)):
        return f"{taus[0]}..{taus[-1]}"
    return str(taus)


def plot_roc(res: dict, path, *, labels: dict) -> None:
    """ROC of every attack (log-log, FPR floored at 1/N0) without noise and at each audited eps,
    with the pointwise 95 % Clopper-Pearson band of the first attack (seed H.4).

    Parameters
    ----------
    res : dict
        :func:`~semi_core.sgd.experiments.fig3_experiment`'s result.
    path : str or pathlib.Path
        PNG file written.
    labels : dict
        Display name of each attack.
    """
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


#: Quick and full settings of :func:`semi_core.sgd.experiments.fig3_experiment` in the report.
QUICK = dict(epsilons=(0.5, 1.0, 2.0), rounds=300, taus=(1, 5, 10), n_bootstrap=50)
FULL = dict(epsilons=(0.5, 1.0, 2.0, 4.0, 6.0), rounds=10_000, taus=None, n_bootstrap=200)


def build(ctx: ReportContext) -> Section:
    """Run the audit and return the Fig. 3 analogue table, the eps plot and ROC curves.

    Parameters
    ----------
    ctx : ReportContext
        Output directory, quick or full mode, seed and progress hook.

    Returns
    -------
    Section
        The section's Markdown, figure names and JSON data.
    """
    title = "DP-SGD fine-tuning audit (seed Fig. 3, H.4, H.5)"
    try:
        # lazy: torch is a heavy import, loaded only when this runs
        import torch

        # lazy: torch is a heavy import, loaded only when this runs
        from semi_core.sgd.experiments import LABELS, fig3_experiment, fig3_markdown, ranking_text
    except ImportError as exc:
        return Section(title=title, markdown=f"Skipped: the torch extra is not installed ({exc}).")
    torch.set_num_threads(1)
    kw = QUICK if ctx.quick else FULL
    processes = 1 if ctx.quick else max(1, min(16, os.cpu_count() or 1))
    res = fig3_experiment(dataset="digits", model="logreg", seed=ctx.seed, method="band",
                          roc_epsilons=(math.inf, 1.0), progress=ctx.progress,
                          processes=processes, **kw)
    plot_fig3(res, ctx.out_dir / "dpsgd_fig3.png", labels=LABELS)
    plot_roc(res, ctx.out_dir / "dpsgd_roc.png", labels=LABELS)
    taus = _taus(res["taus"])
    mode = (f"**Quick mode**: {kw['rounds']} games per tau, tau in {taus}: the largest "
            "certifiable eps is about 3 here, so only eps <= 2 is shown and every bound is "
            "near 0 (run without --quick for 10^4 games per tau, every tau and eps up to 6; "
            "the full run's numbers are recorded in analysis/fig3_dpsgd_audit_results.md)."
            if ctx.quick else
            f"Full mode: {kw['rounds']} games per tau, tau = {taus}, {processes} processes.")
    aucs = {k: {a: float(np.trapezoid(res["roc"][k]["curves"][a][1],
                                      res["roc"][k]["curves"][a][0])) for a in LABELS}
            for k in res["roc"]}
    auc_lines = [f"ROC AUC at tau = {res['roc'][k]['tau']} ("
                 + ("no noise" if k == "inf" else f"eps = {k}") + "): "
                 + ", ".join(f"{LABELS[a]} {v:.3f}" for a, v in aucs[k].items()) for k in aucs]
    top = [r for r in res["rows"] if r["ranking"]]
    md = "\n".join([
        mode, "",
        "Multinomial logistic regression pretrained on a public split of scikit-learn digits, "
        "fine-tuned with DP-SGD (batch 64, T = 10, C = 1, delta = 1e-4); the canary is the "
        "candidate with the largest clipped-gradient Mahalanobis distance. Ground truth: one "
        "record replaced, each record used once, so the run is (2/sigma_DP)-GDP. Bounds: the "
        "`band` method (tail-adaptive simultaneous bands, the tightest distribution-free "
        "certificate here) at 95 %. Cells: the bound averaged over tau (seed Fig. 3) with a "
        f"95 % interval (estimate +- 1.96 SE of a paired, stratified {res['n_bootstrap']}-"
        "replicate bootstrap: it contains its estimate by construction), and `p/c`: "
        f"tau chosen on a {res['pilot_fraction']:.0%} pilot split of each tau's games, the bound "
        "certified on the rest (a valid bound; the seed H.5's post-hoc best tau is not and is "
        "only kept in the JSON). The largest certifiable eps is the bound of perfectly "
        "separated scores with these games: no attack can show more. A percentile bootstrap "
        "interval is not used: the bound is a maximum over thresholds, resampled scores are "
        "noisier and their maximum larger, so percentile intervals excluded their own estimate "
        "(0.06 [0.08, 0.17] at eps 1 in the full run); the ranking uses the same centred "
        "intervals of the paired gaps.", "",
        fig3_markdown(res), "",
        *auc_lines, "",
        "Ranking at the largest exact eps shown: " + (ranking_text(top[-1]) if top else "-"), "",
        "Fashion-MNIST (seed Fig. 3a) runs from the user's IDX files with "
        "`python analysis/fig3_dpsgd_audit.py --datasets digits fashion-mnist --data-dir DIR`; "
        "nothing is downloaded, so the report shows digits only.", "",
        f"Games: {res['runs_trained']} DP-SGD runs, {res['seconds_games']:.1f} s of process time.",
    ])
    data = {"rows": res["rows"], "setup": res["setup"], "rounds_per_tau": res["rounds_per_tau"],
            "taus": res["taus"], "method": res["method"], "quick": ctx.quick, "roc_auc": aucs}
    return Section(title=title, markdown=md, figures=["dpsgd_fig3.png", "dpsgd_roc.png"],
                   data=data)

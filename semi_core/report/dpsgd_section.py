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
            plot_fig3,
            plot_roc,
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
    plot_fig3(res, ctx.out_dir / "dpsgd_fig3.png")
    plot_roc(res, ctx.out_dir / "dpsgd_roc.png")
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

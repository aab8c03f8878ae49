"""Report section: IHA and the LiRA family on bundled data (``iha_parameters_vs_loss`` Tables
2-5, 8, 9 analogues).

Two settings: the seed's MNIST-Odd analogue (scikit-learn digits, odd vs even, logistic
regression with an MSE head, d = 65) and a tabular one (breast-cancer, 2-layer tanh MLP,
d = 530, standing in for Purchase-100). Quick mode: 32 models, one target model, 30
leave-one-out targets with 4 models each (200 targets on breast-cancer); full mode: 64 models,
4 target models pooled, 100 leave-one-out targets with 8 models each. Needs the torch extra;
without it the section says so.
"""

from __future__ import annotations

from semi_core.report import ReportContext, Section

#: Position of this section in the report (smaller first).
ORDER = 60

__all__ = ["build", "SETTINGS", "run_setting", "resources_block"]

#: (dataset, model, the seed's column it stands in for, targets per target model in quick mode).
SETTINGS = (("digits-odd", "logreg-mse", "MNIST-Odd", None),
            ("breast-cancer", "mlp", "Purchase-100", 200))

_ATTACKS = ("iha", "loss", "sif", "lira-online", "lira-offline", "lira-online-global",
            "lira-offline-global", "rmia", "rmia-offline", "l-attack", "lira-l")


def run_setting(dataset: str, model: str, seed_col: str, *, quick: bool, seed: int = 0,
                progress=None, n_bootstrap: int | None = None, n_targets: int | None = None,
                **overrides) -> dict:
    """One setting: the main table, exact vs CG, damping sweep, ablation, LOO fraction and
    agreement, with Markdown beside the seed's numbers.

    Parameters
    ----------
    dataset : str
        Bundled dataset.
    model : str
        Architecture.
    seed_col : str
        Column of the seed's tables compared against.
    quick : bool
        Small sizes.
    seed : int
        Root seed.
    progress : callable, optional
        ``progress(message)``.
    n_bootstrap : int, optional
        Bootstrap replicates; None = the mode's default.
    n_targets : int, optional
        Target models; None = the mode's default.
    **overrides
        Fields of :class:`~semi_core.attacks.whitebox.AttackConfig`.

    Returns
    -------
    dict
        The tables (data and Markdown).
    """
    # lazy: torch is a heavy import, loaded only when this runs
    from semi_core.attacks.whitebox import AttackConfig, run_attacks

    # lazy: torch is a heavy import, loaded only when this runs
    from semi_core.attacks.whitebox.tables import (
        agreement_tables,
        damping_sweep,
        exact_vs_cg,
        loo_fraction_curve,
        markdown_main,
        markdown_sweeps,
        term_ablation,
    )

    kw = (dict(n_models=32, target_models=1, loo_targets=30, loo_models=4) if quick
          else dict(n_models=64, target_models=4, loo_targets=100, loo_models=8))
    kw.update(overrides)
    B = n_bootstrap or (50 if quick else 200)
    cfg = AttackConfig(dataset=dataset, model=model, n_targets=n_targets, **kw)
    run = run_attacks(cfg, _ATTACKS, seed=seed, progress=progress)
    mk = dict(n_bootstrap=B, seed=seed)
    metrics = run.metrics(**mk)
    ev = exact_vs_cg(run, **mk)
    damp = damping_sweep(run, **mk)
    abl = term_ablation(run, **mk)
    frac = loo_fraction_curve(run, **mk)
    agree = agreement_tables(run)
    md = [markdown_main(metrics, setting=f"{dataset}/{model}", seed_col=seed_col), "",
          markdown_sweeps(ev, damp, abl, frac, agree, seed_col=seed_col)]
    return {"metrics": metrics, "exact_vs_cg": ev, "damping": damp, "ablation": abl,
            "loo_fraction": frac,
            "agreement": {str(k): v for k, v in agree.items()}, "setup": run.setup,
            "seconds": run.seconds, "config": cfg.to_dict(), "markdown": "\n".join(md),
            "run": run}


_TRANSFER = (
    "What transfers and what does not. The seed's absolute numbers come from MNIST, "
    "Fashion-MNIST and Purchase-100 with 128 models and 10^4-10^5 targets; here the data are "
    "scikit-learn's bundled sets (1797 and 569 records), so only orderings and qualitative "
    "statements can be compared: (i) exact and CG iHVPs give the same IHA scores (the seed's "
    "Table 3 shows ~0.001 AUC differences; here the scores agree to the CG tolerance); (ii) on "
    "the MNIST-Odd analogue LOSS and SIF sit at chance while LiRA and IHA carry a weak signal, "
    "as in the seed's Table 2; (iii) I3/I4 change nothing when alpha = 5e-4 (Table 4); (iv) "
    "the damping choice matters and the best epsilon depends on the Hessian's spectrum "
    "(Table 8, App. D.1); (v) IHA degrades when the leave-one-out gradient is estimated from "
    "a fraction of D \\ {z} (Table 9); (vi) in full mode on the tabular analogue the ordering "
    "of the seed's Purchase-100 column holds (IHA above LiRA above LOSS, with IHA's TPR at 1 % "
    "FPR several times LiRA's), and I1 and I2 are needed together. What does not transfer: "
    "absolute AUCs (smaller data, other models), the seed's finding that damping beats the "
    "low-rank pseudo-inverse (here it depends on the setting), and the seed's Sec. 4.4 "
    "ordering IHA > L-attack in AUC: here the leave-one-out reference-model attacks beat IHA on "
    "the LOO subset (with 300 LOO records x 8 models, seed 1: L-attack 0.70 [0.65, 0.75] vs IHA "
    "0.54 [0.49, 0.60] on breast-cancer, 0.61 [0.55, 0.67] vs 0.54 [0.48, 0.60] on digits-odd), "
    "while IHA keeps the higher TPR at 1 % FPR than the L-attack. The agreement matrices use "
    "the LOO "
    "subset only; the L-attack's scores are discrete (multiples of 1/(2K) for K reference "
    "models), so at small FPR its threshold often admits no member. TPR at 0.1 % FPR is not "
    "resolvable with a few hundred non-members (the step rule then reads TPR at FPR 0); such "
    "cells are marked * and every result carries fpr_resolution = 1/N0. "
    "The damping on the stand-ins (analysis/iha_damping.py, 32 models, 2 target models, seed "
    "0): the Hessian's largest eigenvalue is .41 (digits-odd / logreg-mse, d = 65), .40-.45 "
    "(breast-cancer / mlp, d = 530) and .68-.70 (digits / logreg, d = 650), while 98-99.6 % of "
    "its eigenvalues lie below epsilon = 0.2 (92-96 % below 0.01). So (H + 0.2 I)^-1 is "
    "within 5 % of 5 I on 92-96 % of the directions and IHA's I1, I2 are mostly a gradient "
    "norm and a "
    "gradient alignment: IHA with H replaced by 0 (inverse I / 0.2) ranks like IHA with "
    "Spearman .44 / .88 / .51 and scores AUC .518 / .572 / .557 against IHA's .574 / .540 / "
    ".584 (LOSS .532 / .496 / .511). The few large eigen-directions carry IHA's edge on the "
    "logistic models; on the MLP the Hessian-free score does as well or better, and smaller "
    "epsilon does not help (.05: .564 / .512 / .560; 0.01 is refused on the MLP, whose "
    "Hessian has eigenvalues down to -.018). A comparison of IHA with LiRA on these stand-ins "
    "is therefore largely a comparison of a damped gradient-norm attack with LiRA; whether the "
    "seed's models sit in the same regime is not known (it prints no spectra; its App. D.1 "
    "says the best epsilon depends on the eigenvalue distribution).")


_RESOURCES_INTRO = (
    "Exact against CG inverse-Hessian products (the seed's Table 6 and App. D.1) on records of "
    "Purchase-100's shape (600 binary features, 100 classes; a stand-in: time and memory "
    "depend on the shapes, not on the values). Each measurement runs in a fresh process "
    "(wall and CPU time, the peak resident memory of the method alone) beside one dense "
    "float64 product of the same d timed in the same process; the scaling law c d^p is fitted "
    "from the measured sizes of the sweep. At the seed's Purchase MLP (d = 22,532) CG is "
    "measured and the exact path's Hessian build is measured on part of its columns (each "
    "column is one HVP of the same cost) into the full, resident d x d matrix; its eigh comes "
    "from the sweep's fit (measuring it takes hours on two cores: `python -m "
    "benchmarks.bench_hessian --full`). The seed's times are from a GPU with the Hessian on "
    "the CPU, for 100 members; ours are single-machine CPU times, so compare the ratios and "
    "the exponents, not the seconds.")


def resources_block(*, quick: bool, progress=None) -> tuple[str, dict]:
    """The Table 6 / App. D.1 subsection: :func:`~semi_core.attacks.whitebox.costs.
    resource_study` (quick: small shapes in this process; full: the seed's shapes, the
    Purchase MLP point and the 4-layer MLP at damping 0.2 and 0.5, one process per
    measurement) as Markdown beside the seed's numbers.

    Parameters
    ----------
    quick : bool
        Small shapes (seconds) instead of the seed's (tens of minutes on two cores).
    progress : callable, optional
        ``progress(message)``.

    Returns
    -------
    markdown : str
    data : dict
        The study.
    """
    # lazy: torch is a heavy import, loaded only when this runs
    from semi_core.attacks.whitebox.costs import resource_study
    from semi_core.attacks.whitebox.tables import markdown_resources

    # quick: damping 1 (the briefly trained small MLPs have eigenvalues below -0.2)
    study = resource_study(quick=quick, isolate=not quick, purchase=not quick, mlp4=not quick,
                           damping=1.0 if quick else 0.2, progress=progress)
    mode = ("Quick mode: MLPs 60-h-10 for h = 1..5 on 200 records, damping 1, measured in "
            "this process (run without --quick for the seed's 600-h-100 sweep at damping 0.2, "
            "the Purchase MLP and the 4-layer MLP)." if quick else "")
    md = ["### Time and memory: exact vs CG iHVPs (seed Table 6, App. D.1)", "",
          _RESOURCES_INTRO, "", mode, "", markdown_resources(study), ""]
    return "\n".join(md), study


#: Attacks drawn on the leave-one-out subset panel (the reference-model attacks that need it,
#: with IHA and LiRA for comparison).
_LOO_SHOWN = ("iha", "lira-online", "l-attack", "lira-l")

#: The target-model attacks split into panels of a few curves each (IHA, the reference, in every
#: panel); an attack in none of them goes to the last panel.
_ROC_GROUPS = (("gradient and loss", ("iha", "loss", "sif")),
               ("LiRA", ("lira-online", "lira-offline", "lira-online-global",
                         "lira-offline-global")),
               ("RMIA and L-attacks", ("rmia", "rmia-offline", "l-attack", "lira-l")))


def _roc_panels(run) -> list[tuple[str, object, list[str]]]:
    """``(what, result, attack names)`` per panel: the target-model attacks in
    :data:`_ROC_GROUPS` (IHA leading each), then the leave-one-out subset."""
    names = list(run.result.stats)
    grouped = {a for _, g in _ROC_GROUPS for a in g}
    panels = []
    for k, (what, group) in enumerate(_ROC_GROUPS):
        shown = [a for a in group if a in names]
        if k == len(_ROC_GROUPS) - 1:
            shown += [a for a in names if a not in grouped]
        if "iha" in names and "iha" not in shown:
            shown.insert(0, "iha")
        if [a for a in shown if a != "iha"] or (k == 0 and shown):
            panels.append((f"target model(s), {what}", run.result, shown))
    if run.loo_result is not None:
        panels.append(("leave-one-out subset", run.loo_result,
                       [a for a in _LOO_SHOWN if a in run.loo_result.stats]))
    return panels


def plot_roc(run, path, *, title: str = "") -> None:
    """ROC of every attack (log-log, FPR from 1/N0, steps of the step rule) on the target
    model(s), a few attacks per panel, and of the leave-one-out attacks on their subset; IHA in
    every panel, with its pointwise 95 % Clopper-Pearson band (:mod:`semi_core.report._plots`).
    A curve starts where its TPR first exceeds 0 (a log axis has no 0).

    Parameters
    ----------
    run : object
        The attacks' result.
    path : str or pathlib.Path
        PNG file written.
    title : str
        Figure title.
    """
    from semi_core.report import _plots as P

    panels = _roc_panels(run)
    ncols = 2 if len(panels) > 2 else len(panels)
    nrows = -(-len(panels) // ncols)
    with P.style() as plt:
        fig, axes = plt.subplots(nrows, ncols, figsize=(5.2 * ncols, 4.4 * nrows),
                                 squeeze=False)
        for ax, (what, res, names) in zip(axes.ravel(), panels):
            m0, n0 = res.scores(names[0])
            P.roc_axes(ax, n0=n0.size, n1=m0.size,
                       title=f"{title}: {what}\n{m0.size} members / {n0.size} non-members")
            for name in names:
                k = _ATTACKS.index(name) if name in _ATTACKS else len(_ATTACKS)
                P.plot_empirical_roc(ax, *res.scores(name), label=name, band=name == "iha",
                                     color=f"C{k}" if k < 10 else "0.1",  # not IHA's C0
                                     ls=P.LINESTYLES[k % len(P.LINESTYLES)])
        for ax in axes.ravel()[len(panels):]:
            ax.set_visible(False)
        fig.tight_layout()
        P.figure_legend(fig, axes, ncol=6, title="steps: empirical ROC (step rule), from the "
                        "first FPR with TPR > 0; shaded: pointwise 95% Clopper-Pearson band of "
                        "IHA's TPR")
        P.save(fig, path)


def build(ctx: ReportContext) -> Section:
    """Run both settings and return the tables beside the seed's numbers and ROC figures.

    Parameters
    ----------
    ctx : ReportContext
        Output directory, quick or full mode, seed and progress hook.

    Returns
    -------
    Section
        The section's Markdown, figure names and JSON data.
    """
    title = ("White-box vs reference-model attacks: IHA and the LiRA family (iha seed Tables 2-6, "
             "8, 9, App. D.1)")
    try:
        # lazy: torch is a heavy import, loaded only when this runs
        import torch

    except ImportError as exc:
        return Section(title=title, markdown=f"Skipped: the torch extra is not installed ({exc}).")
    torch.set_num_threads(1)
    md, figs, data = [], [], {}
    mode = ("**Quick mode**: 32 models, one target model (200 targets on breast-cancer), 30 "
            "leave-one-out targets x 4 models (run without --quick for 64 models, 4 target "
            "models pooled, every record a target, 100 x 8)."
            if ctx.quick else "Full mode: 64 models, 4 target models pooled, 100 leave-one-out "
                              "targets x 8 models.")
    md += [mode, "", "Training: heavy-ball SGD with the seed's lr 0.01, momentum 0.9, weight "
           "decay 5e-4 (batch 32), each record in a model's training set with probability 1/2; "
           "IHA with the exact Hessian of the mean training loss and damping 0.2 (the seed's "
           "setting); every interval is a 95 % bootstrap interval.", ""]
    for dataset, model, col, quick_targets in SETTINGS:
        ctx.progress(f"{dataset}/{model}")
        res = run_setting(dataset, model, col, quick=ctx.quick, seed=ctx.seed,
                          progress=ctx.progress, n_targets=quick_targets if ctx.quick else None)
        fig = f"attack_roc_{dataset}_{model}.png"
        plot_roc(res.pop("run"), ctx.out_dir / fig, title=f"{dataset} / {model}")
        figs.append(fig)
        md += [f"### {dataset} / {model} (analogue of the seed's {col})", "",
               f"Pool {res['setup']['n_pool']} records, d = {res['setup']['d']}, target "
               f"trained on {res['setup']['n_train_target']} records; training took "
               f"{res['seconds']['train_models']:.1f} s.", "", res.pop("markdown"), ""]
        data[f"{dataset}/{model}"] = res
    ctx.progress("exact vs CG resources")
    block, data["resources"] = resources_block(quick=ctx.quick, progress=ctx.progress)
    md += [block, _TRANSFER]
    return Section(title=title, markdown="\n".join(md), figures=figs, data=data)

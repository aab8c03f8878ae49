"""Analogues of the seed's Tables 2-5, 8, 9 (``iha_parameters_vs_loss``) from one
:class:`~semi_core.attacks.whitebox.experiment.AttackRun`, beside the seed's printed numbers.

Every function reuses the run's cached white-box quantities (gradients, Hessian), so the
sweeps cost one ``eigh`` or one matrix product each. Scores are pooled over the run's target
models, as in the main result.
"""

from __future__ import annotations

import numpy as np

from semi_core.audit.roc import mark_unresolved
from semi_core.game.result import GameResult

from .experiment import AttackRun, agreement_matrix, attack_metrics
from .scores import iha_score

__all__ = ["SEED", "TABLE4_ROWS", "damping_sweep", "term_ablation", "loo_fraction_curve",
           "agreement_tables", "exact_vs_cg", "markdown_main", "markdown_sweeps",
           "markdown_resources"]

#: The seed's printed numbers (AUC, %TPR@1%, %TPR@0.1%).
SEED = {
    "table2": {
        "Purchase-100": {"loss": (.531, .97, .00), "sif": (.531, .97, .10),
                         "lira-online": (.644, 4.70, .98), "iha": (.703, 13.69, 7.52)},
        "MNIST-Odd": {"loss": (.500, .97, .09), "sif": (.500, .97, .10),
                      "lira-online": (.568, 2.77, .63), "iha": (.542, 2.61, .51)},
        "FashionMNIST": {"loss": (.507, 1.00, .10), "sif": (.507, .98, .10),
                         "lira-online": (.578, 2.98, .63), "iha": (.594, 4.06, .89)},
    },
    "table3": {"Purchase-100": ((.701, 13.74, 7.56), (.701, 13.72, 7.55)),
               "MNIST-Odd": ((.541, 2.76, .43), (.541, 2.76, .43)),
               "FashionMNIST": ((.593, 4.10, .85), (.592, 4.09, .86))},
    "table4": {"I1": (.591, 1.04, .09), "I2": (.704, 2.63, .70), "I1,I2": (.779, 17.61, 16.65),
               "I1,I2,I3,I4": (.779, 17.60, 16.64), "loss,I1": (.594, 1.12, .12),
               "loss,I2": (.686, 1.97, .48), "loss,I1,I2": (.791, 19.96, 19.00),
               "all": (.791, 20.09, 19.09)},
    "table8": {"MNIST-Odd": {"lowrank": {0.01: .521, 0.1: .530, 0.2: .500},
                             "damping": {0.01: .513, 0.1: .535, 0.2: .542}},
               "FashionMNIST": {"lowrank": {0.01: .551, 0.1: .557, 0.2: .541},
                                "damping": {0.01: .533, 0.1: .582, 0.2: .594}}},
    "table9": {0.2: (.577, .85, .11), 0.4: (.607, 1.79, .28), 0.6: (.638, 3.38, .86),
               0.8: (.692, 6.47, 1.59), 0.9: (.733, 13.53, 4.17), 1.0: (.791, 20.09, 19.09)},
    # Table 6 (§4.5.1): Purchase-100 MLP-2 (d = 22,532), 100 members; precompute 43 and 192
    # minutes; memory in MB (precompute, runtime, their max).
    "table6": {"iha": {"precompute_s": 43 * 60.0, "per_sample_s": 0.16, "precompute_mb": 4228,
                       "runtime_mb": 1324, "peak_mb": 4228},
               "iha-cg": {"precompute_s": 0.0, "per_sample_s": 85.0, "precompute_mb": 0,
                          "runtime_mb": 1638, "peak_mb": 1638},
               "lira-online": {"precompute_s": 192 * 60.0, "per_sample_s": 0.07,
                               "precompute_mb": 276, "runtime_mb": 1228, "peak_mb": 1228},
               "loss": {"precompute_s": 0.0, "per_sample_s": 0.004, "precompute_mb": 0,
                        "runtime_mb": 906, "peak_mb": 906}},
    # Table 7 (App. D): (AUC, %TPR@1%, %TPR@0.1%); None where the seed prints a dash.
    "table7": {"Purchase-100": {"loss": (.529, .97, .00), "lira-online": (.634, 4.70, .98),
                                "iha": (.703, 13.69, 7.52), "iha-cg": (.701, 13.72, 7.55)},
               "Purchase-100(S)": {"loss": (.589, 1.04, .00), "lira-online": (.743, 9.56, 2.79),
                                   "iha": (.791, 19.95, 18.99), "iha-cg": (.791, 20.09, 19.09)},
               "Purchase-100(S) MLP-4": {"loss": (.666, .00, .00),
                                         "lira-online": (.843, 25.17, 9.09), "iha": None,
                                         "iha-cg": (.691, 1.14, .16)}},
    # App. D.1: IHA (CG) on the MLP-4 with damping 0.5 instead of 0.2.
    "appD1": {0.2: (.691, 1.14, .16), 0.5: (.768, 13.11, 12.12)},
    "sec4.4_auc": {"iha": .791, "l-attack": .737, "lira-online": .767, "lira-l": .633},
    "table5_fpr0.05": {
        "members": {("lira-online", "l-attack"): .794, ("lira-online", "lira-l"): .826,
                    ("lira-online", "iha"): .718, ("l-attack", "lira-l"): .908,
                    ("l-attack", "iha"): .712, ("lira-l", "iha"): .768},
        "nonmembers": {("lira-online", "l-attack"): .930, ("lira-online", "lira-l"): .916,
                       ("lira-online", "iha"): .912, ("l-attack", "lira-l"): .938,
                       ("l-attack", "iha"): .926, ("lira-l", "iha"): .916}},
    "table5_fpr0.3": {
        "members": {("lira-online", "l-attack"): .732, ("lira-online", "lira-l"): .658,
                    ("lira-online", "iha"): .436, ("l-attack", "lira-l"): .766,
                    ("l-attack", "iha"): .492, ("lira-l", "iha"): .462},
        "nonmembers": {("lira-online", "l-attack"): .724, ("lira-online", "lira-l"): .588,
                       ("lira-online", "iha"): .612, ("l-attack", "lira-l"): .660,
                       ("l-attack", "iha"): .660, ("lira-l", "iha"): .584}},
}

#: Table 4's rows: label -> terms of Eq. 8 used.
TABLE4_ROWS = {"I1": ("I1",), "I2": ("I2",), "I1,I2": ("I1", "I2"),
               "I1,I2,I3,I4": ("I1", "I2", "I3", "I4"), "loss,I1": ("loss", "I1"),
               "loss,I2": ("loss", "I2"), "loss,I1,I2": ("loss", "I1", "I2"),
               "all": ("loss", "I1", "I2", "I3", "I4")}


def _pooled(run: AttackRun, scores: list[np.ndarray], name: str, **kw) -> dict:
    res = GameResult(member=run.result.member, tau=run.result.tau,
                     stats={name: np.concatenate(scores)})
    return attack_metrics(res, name, **kw)


def exact_vs_cg(run: AttackRun, **kw) -> dict:
    """IHA with the exact (``eigh``) and the CG iHVPs on the same targets, and the largest
    relative score difference.

    Parameters
    ----------
    run : AttackRun
        The attacks' run.
    **kw
        Options of the IHA scoring.

    Returns
    -------
    dict
        Metrics of each method and the largest relative difference.
    """
    out, scores = {}, {}
    for method in ("exact", "cg"):
        s = []
        for wb in run.whitebox:
            inv = wb.inverse(method)
            s.append(iha_score(wb.iha_terms(inv), lr=run.config.sgd.lr))
        scores[method] = np.concatenate(s)
        out[method] = _pooled(run, s, f"iha-{method}", **kw)
    d = np.abs(scores["exact"] - scores["cg"]) / np.maximum(np.abs(scores["exact"]), 1e-300)
    out["max_relative_score_difference"] = float(d.max())
    return out


def damping_sweep(run: AttackRun, epsilons=(0.01, 0.1, 0.2), **kw) -> dict:
    """Table 8: IHA AUC (and TPRs) with damping or a low-rank pseudo-inverse at each epsilon;
    ``None`` where the low-rank threshold keeps no eigenvalue.

    Parameters
    ----------
    run : AttackRun
        The attacks' run.
    epsilons : sequence of float
        Damping / threshold values.
    **kw
        Options of the IHA scoring.

    Returns
    -------
    dict
        ``lowrank``, ``damping`` and ``eigenvalues``.
    """
    out: dict = {"lowrank": {}, "damping": {}, "eigenvalues": {}}
    for method in ("lowrank", "damping"):
        for eps in epsilons:
            try:
                s = [iha_score(wb.iha_terms(wb.inverse("exact", epsilon=eps,
                                                       lowrank=method == "lowrank")),
                               lr=run.config.sgd.lr) for wb in run.whitebox]
            except ValueError as exc:       # e.g. no eigenvalue above the low-rank threshold
                out[method][eps] = {"error": str(exc)}
                continue
            out[method][eps] = _pooled(run, s, "iha", **kw)
    ev = run.whitebox[0].inverse("exact").eigvals.numpy()
    out["eigenvalues"] = {"min": float(ev.min()), "max": float(ev.max()),
                          "quantiles_10_50_90": [float(v) for v in np.quantile(ev, [.1, .5, .9])],
                          "d": int(ev.size)}
    return out


def term_ablation(run: AttackRun, rows=None, **kw) -> dict:
    """Table 4: IHA with only some of Eq. 8's terms.

    Parameters
    ----------
    run : AttackRun
        The attacks' run.
    rows : sequence, optional
        Term subsets; None = Table 4's.
    **kw
        Options of the metrics.

    Returns
    -------
    dict
        Metrics per term subset.
    """
    rows = TABLE4_ROWS if rows is None else rows
    terms = [wb.iha_terms(wb.inverse(run.config.hessian)) for wb in run.whitebox]
    return {label: _pooled(run, [iha_score(t, lr=run.config.sgd.lr, use=use) for t in terms],
                           "iha", **kw) for label, use in rows.items()}


def loo_fraction_curve(run: AttackRun, fractions=(0.2, 0.4, 0.6, 0.8, 0.9, 1.0), **kw) -> dict:
    """Table 9: :math:`\\nabla L_0` from a random fraction of :math:`D\\setminus\\{z\\}`.

    Parameters
    ----------
    run : AttackRun
        The attacks' run.
    fractions : sequence of float
        Fractions in (0, 1].
    **kw
        Options of the metrics.

    Returns
    -------
    dict
        Metrics per fraction.
    """
    out = {}
    for f in fractions:
        rng = np.random.default_rng([int(kw.get("seed", 0)), int(round(f * 1000))])
        s = []
        for wb in run.whitebox:
            inv = wb.inverse(run.config.hessian)
            s.append(iha_score(wb.iha_terms(inv, loo_fraction=f, rng=rng), lr=run.config.sgd.lr))
        out[f] = _pooled(run, s, "iha", **kw)
    return out


def agreement_tables(run: AttackRun, fprs=(0.05, 0.3)) -> dict:
    """Table 5 on the leave-one-out subset (every attack scored there), at each FPR.

    Parameters
    ----------
    run : AttackRun
        The attacks' run (with its leave-one-out result).
    fprs : sequence of float
        FPR levels.

    Returns
    -------
    dict
        Agreement matrices per FPR.
    """
    res = run.loo_result
    if res is None:
        raise ValueError("agreement tables need the leave-one-out attacks (l-attack, lira-l)")
    names = [a for a in ("lira-online", "l-attack", "lira-l", "iha") if a in res.stats]
    return {f: agreement_matrix(res, names, fpr=f) for f in fprs}


def _fmt(m: dict) -> str:
    lo, hi = m["auc_interval"]
    ok = m.get("tpr_at_fpr_resolvable", {})
    t1, t01 = (mark_unresolved(f"{100 * m['tpr_at_fpr'][f]:.2f}", ok.get(f, True))
               for f in ("0.01", "0.001"))
    return f"{m['auc']:.3f} [{lo:.3f}, {hi:.3f}] | {t1} | {t01}"


def markdown_main(metrics: dict, *, setting: str, seed_col: str) -> str:
    """Table 2 analogue: every attack's AUC (95 % CI), %TPR@1 %, %TPR@0.1 % beside the seed's
    column ``seed_col``.

    Parameters
    ----------
    metrics : dict
        Metrics per attack.
    setting : str
        Label of the setting.
    seed_col : str
        Column of the seed's table.

    Returns
    -------
    str
        The Markdown table.
    """
    ref = SEED["table2"].get(seed_col, {})
    lines = [f"| attack ({setting}) | AUC [95% CI] | %TPR@1% | %TPR@0.1% | n (mem/non) | "
             f"seed {seed_col}: AUC, %TPR@1%, %TPR@0.1% |", "|---|---|---|---|---|---|"]
    for name, m in metrics.items():
        key = "iha" if name.startswith("iha") and "@" not in name else name
        s = ref.get(key)
        seed_txt = f"{s[0]:.3f}, {s[1]:.2f}, {s[2]:.2f}" if s else ""
        lines.append(f"| {name} | {_fmt(m)} | {m['n_member']}/{m['n_nonmember']} | {seed_txt} |")
    if any(not all(m.get("tpr_at_fpr_resolvable", {}).values()) for m in metrics.values()):
        lines += ["", "\\* FPR level below the resolution 1/(non-members): the cell is the TPR "
                      "at FPR 0, not a measurement at that level."]
    return "\n".join(lines)


def markdown_sweeps(ev: dict, damp: dict, abl: dict, frac: dict, agree: dict | None, *,
                    seed_col: str) -> str:
    """Tables 3, 8, 4, 9, 5 analogues as Markdown, each beside the seed's numbers.

    Parameters
    ----------
    ev : dict
        :func:`exact_vs_cg` result.
    damp : dict
        :func:`damping_sweep` result.
    abl : dict
        :func:`term_ablation` result.
    frac : dict
        :func:`loo_fraction_curve` result.
    agree : dict or None
        :func:`agreement_tables` result.
    seed_col : str
        Column of the seed's tables.

    Returns
    -------
    str
        The Markdown tables.
    """
    out = []
    t3 = SEED["table3"][seed_col]
    out += ["**Exact vs CG (Table 3)**", "",
            "| iHVP | AUC [95% CI] | %TPR@1% | %TPR@0.1% | seed " + seed_col + " |",
            "|---|---|---|---|---|",
            f"| exact (eigh) | {_fmt(ev['exact'])} | {t3[0][0]:.3f}, {t3[0][1]:.2f}, "
            f"{t3[0][2]:.2f} |",
            f"| CG | {_fmt(ev['cg'])} | {t3[1][0]:.3f}, {t3[1][1]:.2f}, {t3[1][2]:.2f} |", "",
            f"Largest relative difference between the exact and CG scores: "
            f"{ev['max_relative_score_difference']:.1e}.", ""]
    s8 = SEED["table8"].get("MNIST-Odd" if seed_col == "MNIST-Odd" else "FashionMNIST")
    eps = sorted(damp["damping"])
    out += ["**Damping vs low-rank (Table 8, AUC)**", "",
            "| method | " + " | ".join(f"eps={e:g}" for e in eps) + " | seed |",
            "|---|" + "---|" * (len(eps) + 1)]
    for method in ("lowrank", "damping"):
        cells = []
        for e in eps:
            m = damp[method][e]
            if "error" in m:   # damping: sigma_min + eps <= 0; low-rank: nothing kept
                cells.append("not PD" if method == "damping" else "no eigenvalue > eps")
            else:
                cells.append(f"{m['auc']:.3f}")
        seed_cells = ", ".join(f"{s8[method][e]:.3f}" for e in eps if e in s8[method])
        out.append(f"| {method} | " + " | ".join(cells) + f" | {seed_cells} |")
    e = damp["eigenvalues"]
    out += ["", "(not PD: on some target model the damped Hessian keeps an eigenvalue <= 0.)",
            "", f"Hessian spectrum (target model 0, d = {e['d']}): min {e['min']:.2e}, "
                f"10/50/90 % quantiles {', '.join(f'{v:.2e}' for v in e['quantiles_10_50_90'])}, "
                f"max {e['max']:.2e}.", ""]
    out += ["**Term ablation (Table 4)**", "",
            "| terms | AUC [95% CI] | %TPR@1% | %TPR@0.1% | seed (Purchase-100(S)) |",
            "|---|---|---|---|---|"]
    for label, m in abl.items():
        s = SEED["table4"][label]
        out.append(f"| {label} | {_fmt(m)} | {s[0]:.3f}, {s[1]:.2f}, {s[2]:.2f} |")
    out += ["", "**Leave-one-out fraction (Table 9)**", "",
            "| fraction | AUC [95% CI] | %TPR@1% | %TPR@0.1% | seed (Purchase-100(S)) |",
            "|---|---|---|---|---|"]
    for f, m in frac.items():
        s = SEED["table9"].get(f)
        out.append(f"| {f:g} | {_fmt(m)} | " + (f"{s[0]:.3f}, {s[1]:.2f}, {s[2]:.2f}" if s
                                                 else "") + " |")
    if agree:
        for f, a in agree.items():
            key = f"table5_fpr{f:g}"
            seedt = SEED.get(key, {})
            names = [n for n in a["members"] if n != "GT"]
            out += ["", f"**Agreement at FPR {f:g} (Table 5; upper: members, lower: "
                        "non-members; seed in parentheses)**", "",
                    "| | " + " | ".join(names + ["GT"]) + " |", "|---|" + "---|" * (len(names) + 1)]
            for i, r in enumerate(names):
                cells = []
                for j, c in enumerate(names + ["GT"]):
                    if c == r:
                        cells.append("")
                        continue
                    side = "members" if (j > i or c == "GT") else "nonmembers"
                    val = a[side][r][c]
                    sv = seedt.get(side, {}).get((r, c), seedt.get(side, {}).get((c, r)))
                    cells.append(f"{val:.3f}" + (f" ({sv:.3f})" if sv is not None else ""))
                out.append(f"| {r} | " + " | ".join(cells) + " |")
            gt = [f"{a['nonmembers']['GT'][n]:.3f}" for n in names]
            out.append("| GT (non-members) | " + " | ".join(gt) + " | |")
    return "\n".join(out)


def markdown_resources(study: dict) -> str:
    """Table 6 analogue: exact vs CG iHVPs, the fitted scaling in d and the Purchase / MLP-4
    points beside the seed's Table 6 and App. D.1 (:func:`~semi_core.attacks.whitebox.costs.
    resource_study`).

    Parameters
    ----------
    study : dict
        :func:`~semi_core.attacks.whitebox.costs.resource_study` result.

    Returns
    -------
    str
        The Markdown tables.
    """
    mb = 1e6
    out = ["| d | path | wall s | CPU s | + peak RSS MB | reference s | wall / reference |",
           "|---|---|---|---|---|---|---|"]
    for r in study["rows"]:
        out.append(f"| {r['d']} | {r['method']} ({r['stage']}) | {r['wall_s']:.2f} | "
                   f"{r['cpu_s']:.2f} | {r['method_rss_bytes'] / mb:.0f} | "
                   f"{r['reference_s']:.3g} | {r['ratio_wall_over_reference']:.1f} |")
    out += ["", "Reference: one dense float64 product of the same d timed in the same process "
                "((d x d)(d x d) in the sweep, (d x min(d, 4096))(min(d, 4096) x 64) at the larger "
                "points).", "",
            "| fitted law (c d^p, least squares in log-log) | p | se(p) | r^2 | points |",
            "|---|---|---|---|---|"]
    for name, f in study["fits"].items():
        if "error" in f:
            out.append(f"| {name} | {f['error']} | | | |")
        else:
            out.append(f"| {name} | {f['p']:.2f} | {f['p_se']:.2f} | {f['r2']:.3f} | "
                       f"{f['points']} |")
    t6 = SEED["table6"]
    if "purchase" in study:
        p = study["purchase"]
        pre = p["exact_precompute_s"]
        memfit = p["exact_rss_fit_bytes"]
        out += ["", f"**Purchase MLP (d = {p['d']}, {p['n_train']} training records; seed Table "
                    "6: 100 members, GPU + CPU)**", "",
                "| | ours | seed Table 6 |", "|---|---|---|",
                f"| exact: precompute (Hessian + eigh) | {pre:.0f} s (build {p['exact_build_s']:.0f} "
                f"s, {p['exact_build']}; eigh {p['exact_eigh_s']:.0f} s, {p['exact_eigh']}) | "
                f"{t6['iha']['precompute_s']:.0f} s |" if pre is not None else
                "| exact: precompute | eigh fit unavailable | |",
                f"| exact: memory | Hessian resident {p['exact_hessian_resident_bytes'] / mb:.0f} "
                f"MB (measured); with eigh {memfit / mb:.0f} MB (fit) | "
                f"{t6['iha']['peak_mb']} MB |" if memfit else
                f"| exact: memory | Hessian resident {p['exact_hessian_resident_bytes'] / mb:.0f} "
                f"MB | {t6['iha']['peak_mb']} MB |",
                f"| CG: time per target | {p['cg_s_per_target']:.1f} s wall, "
                f"{p['cg_cpu_s_per_target']:.1f} s CPU ({p['cg_iterations']} iterations, tol "
                f"1e-5) | {t6['iha-cg']['per_sample_s']:g} s |",
                f"| CG: memory beyond set-up | {p['cg_rss_bytes'] / mb:.0f} MB | "
                f"{t6['iha-cg']['peak_mb']} MB (whole process) |",
                f"| CG per target / reference | {p['ratio_cg_per_target_over_reference']:.0f} | |"]
        if p["ratio_exact_precompute_over_cg_per_target"] is not None:
            out.append(f"| exact precompute / CG per target (break-even targets) | "
                       f"{p['ratio_exact_precompute_over_cg_per_target']:.0f} | "
                       f"{t6['iha']['precompute_s'] / t6['iha-cg']['per_sample_s']:.0f} |")
    if "mlp4" in study:
        d1 = SEED["appD1"]
        out += ["", "**4-layer MLP (App. D / D.1, CG only; seed: AUC, %TPR@1%, %TPR@0.1% on "
                    "Purchase-100(S))**", "",
                "| damping | d | training records | CG s / target | iterations | + peak RSS "
                "MB | seed IHA (CG) |", "|---|---|---|---|---|---|---|"]
        for eps, r in study["mlp4"].items():
            s = d1.get(float(eps))
            out.append(f"| {eps} | {r['d']} | {r['n_train']} | {r['cg_s_per_target']:.0f} | "
                       f"{r['cg_iterations']} | {r['method_rss_bytes'] / mb:.0f} | "
                       + (f"{s[0]:.3f}, {s[1]:.2f}, {s[2]:.2f}" if s else "") + " |")
    return "\n".join(out)

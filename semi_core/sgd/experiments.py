"""Fig. 3 / H.4 / H.5 analogue of the seed on data that ships here, shared by the report section
and ``analysis/fig3_dpsgd_audit.py``.

One pretrained model and canary (fixed public/private/reference split) serve every target
:math:`\\varepsilon`; only :math:`\\sigma_{DP}` changes between rows.
"""

from __future__ import annotations

import math

import numpy as np

from semi_core._rng import as_seed_sequence

__all__ = ["fig3_experiment", "plot_fig3", "plot_roc", "fig3_markdown"]

LABELS = {"semi_sgd": "SeMI-SGD", "semi_max": "SeMI-max", "delta_diff": "Delta Diff",
          "delta_ratio": "Delta Ratio", "back_front_diff": "Back-Front Diff",
          "back_front_ratio": "Back-Front Ratio"}


def fig3_experiment(*, dataset: str = "digits", model: str = "logreg",
                    epsilons=(0.5, 1.0, 2.0, 4.0, 8.0), rounds: int = 1000, taus=None,
                    seed=0, delta: float = 1e-4, roc_epsilons=(math.inf, 1.0),
                    n_reference: int = 128, data_dir=None, lr: float = 0.5,
                    progress=lambda msg: None, executor=None) -> dict:
    """eps lower bounds per attack against the exact eps for each target eps (seed Fig. 3),
    with ROC data (seed H.4) at ``roc_epsilons`` (``inf`` = no noise) for the middle tau.

    The games of each row are played by :func:`semi_core.sgd.audit.audit_games` on
    ``executor`` (in-process by default; threads or a Dask cluster give the same numbers)."""
    from semi_core.audit import roc_curve

    from .accounting import calibrate_sigma, dp_accounting_epsilon, dpsgd_epsilon
    from .audit import ATTACKS, AuditSetup, audit_bounds, audit_games, prepare_audit
    from .dpsgd import DPSGDConfig

    root = as_seed_sequence(seed)
    ss_setup, ss_games = root.spawn(2)
    base = DPSGDConfig(lr=lr)
    taus = list(range(1, base.steps + 1)) if taus is None else list(taus)
    setup = prepare_audit(dataset=dataset, model=model, cfg=base, seed=ss_setup,
                          data_dir=data_dir, n_reference=n_reference)
    all_eps = sorted(set(epsilons) | set(roc_epsilons), key=lambda e: (math.isinf(e), e))
    rows, roc, seconds = [], {}, 0.0
    for k, eps in enumerate(all_eps):
        progress(f"{model}: eps={eps}")
        sigma = 0.0 if math.isinf(eps) else calibrate_sigma(eps, delta)
        cfg = DPSGDConfig(**{**base.__dict__, "sigma_dp": sigma})
        st = AuditSetup(**{**setup.__dict__, "cfg": cfg})
        run_taus = taus if eps in epsilons else [taus[len(taus) // 2]]
        games = audit_games(st, rounds=rounds, taus=run_taus, executor=executor,
                            seed=np.random.SeedSequence(ss_games.entropy,
                                                        spawn_key=(*ss_games.spawn_key, k)))
        seconds += float(next(iter(games.values())).metadata["seconds"])
        if eps in epsilons:
            out = audit_bounds(games, delta=delta)
            row = {"epsilon_target": eps, "sigma_dp": sigma,
                   "epsilon_true": dpsgd_epsilon(sigma, delta),
                   "epsilon_dp_accounting": dp_accounting_epsilon(sigma, delta),
                   "attacks": {a: out["summary"][a] for a in ATTACKS}}
            rows.append(row)
        if eps in roc_epsilons:
            tau = run_taus[len(run_taus) // 2] if len(run_taus) > 1 else run_taus[0]
            res = games[tau]
            roc[str(eps)] = {"tau": tau, "curves": {}}
            for a in ATTACKS:
                fpr, tpr, _ = roc_curve(*res.scores(a))
                roc[str(eps)]["curves"][a] = (np.asarray(fpr), np.asarray(tpr))
    return {"dataset": dataset, "model": model, "rounds_per_tau": rounds, "taus": taus,
            "delta": delta, "rows": rows, "roc": roc, "setup": setup.info,
            "seconds_games": seconds}


def fig3_markdown(res: dict, *, method: str = "dkw") -> str:
    """Markdown table: target eps, exact eps, eps_LB per attack (mean over tau / best tau, post
    hoc), and the largest eps the method can certify from the games per tau."""
    head = ("| target eps | exact eps | " + " | ".join(LABELS[a] for a in LABELS)
            + " | max certifiable |")
    lines = [head, "|" + "---|" * (3 + len(LABELS))]
    for r in res["rows"]:
        cells = [f"{r['attacks'][a][f'eps_lb_{method}_mean']:.3f} / "
                 f"{r['attacks'][a][f'eps_lb_{method}_best']:.3f}" for a in LABELS]
        first = next(iter(LABELS))
        cells.append(f"{r['attacks'][first].get(f'eps_max_{method}', float('nan')):.3f}")
        lines.append(f"| {r['epsilon_target']:g} | {r['epsilon_true']:.4g} | "
                     + " | ".join(cells) + " |")
    return "\n".join(lines)


def plot_fig3(res: dict, path, *, method: str = "dkw") -> None:
    """eps_LB (mean over tau: solid; best tau: dashed) against the exact eps."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 4.2))
    truth = [r["epsilon_true"] for r in res["rows"]]
    ax.plot(truth, truth, "k:", label="ideal")
    for a, lab in LABELS.items():
        mean = [r["attacks"][a][f"eps_lb_{method}_mean"] for r in res["rows"]]
        best = [r["attacks"][a][f"eps_lb_{method}_best"] for r in res["rows"]]
        line, = ax.plot(truth, mean, "o-", label=lab)
        ax.plot(truth, best, "--", color=line.get_color(), alpha=0.6)
    ax.set_xlabel("exact epsilon")
    ax.set_ylabel(f"epsilon lower bound ({method})")
    ax.set_title(f"DP-SGD audit: {res['model']} on {res['dataset']}, "
                 f"R={res['rounds_per_tau']}/tau")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot_roc(res: dict, path) -> None:
    """ROC curves (log-log) without noise and at eps = 1 (seed H.4)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    keys = list(res["roc"])
    fig, axes = plt.subplots(1, len(keys), figsize=(5 * len(keys), 4.2), squeeze=False)
    for ax, key in zip(axes[0], keys, strict=True):
        for a, lab in LABELS.items():
            fpr, tpr = res["roc"][key]["curves"][a]
            ax.plot(np.maximum(fpr, 1e-4), np.maximum(tpr, 1e-4), label=lab)
        ax.plot([1e-4, 1], [1e-4, 1], "k:")
        ax.set_xscale("log")
        ax.set_yscale("log")
        title = "no noise" if key == "inf" else f"eps = {key}"
        ax.set_title(f"{title} (tau = {res['roc'][key]['tau']})")
        ax.set_xlabel("FPR")
        ax.set_ylabel("TPR")
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

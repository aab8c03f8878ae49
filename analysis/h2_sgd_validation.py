"""Seed App. H.2: SGD validation on linear regression (d=5, T=10, n=50, eta=0.05).

Writes ``h2_roc_tau5.png``, ``h2_power_vs_tau.png`` and ``h2_power.json`` under ``--out``:
ROC curves at tau = 5 and power (TPR at FPR = 0.05) against tau for SeMI-SGD, SeMI-max and the
four loss baselines. Usage::

    python analysis/h2_sgd_validation.py --rounds 20000 --out results/h2
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from semi_core.sgd.linreg import H2Config, h2_power_table, simulate_h2
from semi_core.stats.update_combination import BASELINES

NAMES = {"semi_sgd": "SeMI-SGD", "semi_max": "SeMI-max", **{k: k.replace("_", " ").title()
                                                           for k in BASELINES}}


def main(argv=None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20000)
    parser.add_argument("--fpr", type=float, default=0.05)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="results/h2")
    args = parser.parse_args(argv)
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from semi_core.audit import roc_curve

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    cfg = H2Config()
    ss_roc, ss_tab = np.random.SeedSequence(args.seed).spawn(2)
    res = simulate_h2(cfg, tau=5, rounds=args.rounds, seed=ss_roc)
    fig, ax = plt.subplots(figsize=(5, 4))
    for k in res.stats:
        fpr, tpr, _ = roc_curve(*res.scores(k))
        ax.plot(fpr, tpr, label=NAMES[k])
    ax.plot([0, 1], [0, 1], "k:")
    ax.set(xlabel="FPR", ylabel="TPR", title="H.2: ROC at tau = 5")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "h2_roc_tau5.png", dpi=110)
    plt.close(fig)
    table = h2_power_table(cfg, rounds=args.rounds, seed=ss_tab, fpr=args.fpr)
    taus = sorted(table)
    fig, ax = plt.subplots(figsize=(5, 4))
    for k in NAMES:
        ax.plot(taus, [table[t][k]["tpr"] for t in taus], "o-", label=NAMES[k])
    ax.set(xlabel="insertion time tau", ylabel=f"power (TPR at FPR = {args.fpr})",
           title="H.2: power vs tau")
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(out / "h2_power_vs_tau.png", dpi=110)
    plt.close(fig)
    payload = {"config": cfg.__dict__, "rounds_per_tau": args.rounds, "fpr": args.fpr,
               "power": {str(t): table[t] for t in taus}}
    (out / "h2_power.json").write_text(json.dumps(payload, indent=2))
    print(f"{'tau':>4} " + " ".join(f"{NAMES[k]:>17}" for k in NAMES))
    for t in taus:
        print(f"{t:>4} " + " ".join(f"{table[t][k]['tpr']:>8.3f} ({table[t][k]['auc']:.3f})"
                                    for k in NAMES))
    print("cells: power (AUC)")
    return payload


if __name__ == "__main__":
    main()

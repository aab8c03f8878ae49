"""Seed Fig. 3 / H.4 / H.5 analogue: eps lower bounds of DP-SGD fine-tuning audits vs truth.

For each model (logreg, mlp, frozen) on digits (or Fashion-MNIST from ``--data-dir``), plays
``--rounds`` games per insertion time and target eps; writes ``fig3_<model>.png``,
``roc_<model>.png``, ``fig3_<model>.json`` and a Markdown table ``fig3.md`` under ``--out``.
Usage::

    python analysis/fig3_dpsgd_audit.py --models logreg --rounds 1000 --out results/fig3
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from semi_core.cli._common import to_jsonable


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", nargs="+", default=["logreg"],
                        choices=["logreg", "mlp", "frozen"])
    parser.add_argument("--dataset", default="digits", choices=["digits", "fashion-mnist"])
    parser.add_argument("--data-dir", default=None)
    parser.add_argument("--epsilons", nargs="+", type=float, default=[0.5, 1, 2, 4, 8])
    parser.add_argument("--rounds", type=int, default=1000)
    parser.add_argument("--taus", nargs="+", type=int, default=None, help="default: 1..10")
    parser.add_argument("--n-reference", type=int, default=128)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", default="results/fig3")
    args = parser.parse_args(argv)
    import torch

    from semi_core.sgd.experiments import fig3_experiment, fig3_markdown, plot_fig3, plot_roc

    torch.set_num_threads(1)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    md = []
    for model in args.models:
        res = fig3_experiment(dataset=args.dataset, model=model, epsilons=tuple(args.epsilons),
                              rounds=args.rounds, taus=args.taus, seed=args.seed,
                              roc_epsilons=(math.inf, 1.0), n_reference=args.n_reference,
                              data_dir=args.data_dir, progress=print)
        plot_fig3(res, out / f"fig3_{model}.png")
        plot_roc(res, out / f"roc_{model}.png")
        res_json = {k: v for k, v in res.items() if k != "roc"}
        res_json["roc_tau"] = {k: v["tau"] for k, v in res["roc"].items()}
        (out / f"fig3_{model}.json").write_text(json.dumps(to_jsonable(res_json), indent=2))
        for method in ("dkw", "cp"):
            md += [f"## {model} on {args.dataset}: eps_LB ({method}) mean over tau / best tau",
                   f"R = {args.rounds} games per tau, games took {res['seconds_games']:.0f} s",
                   "", fig3_markdown(res, method=method), ""]
        print("\n".join(md[-6:]))
    (out / "fig3.md").write_text("\n".join(md))


if __name__ == "__main__":
    main()

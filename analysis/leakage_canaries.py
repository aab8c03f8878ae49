"""Per-datum leakage on DP-SGD: canary selection (Alg. 6 vs gradient Mahalanobis at theta_0 vs a
median record) and scores (SeMI-SGD, SeMI-max, Alg. 7 max_t v^t) on the same games.

Writes ``canaries.json`` and ``canaries.md`` under ``--out``. Usage::

    python analysis/leakage_canaries.py --epsilons inf 8 --rounds 400 --out results/leakage
"""

from __future__ import annotations

import argparse
import json
import math
from pathlib import Path

from semi_core.cli._common import to_jsonable


def table(runs) -> str:
    """Markdown: one row per (epsilon, canary, attack)."""
    lines = ["| eps target | eps true | canary | attack | AUC (SE) | eps_LB dkw | eps_LB cp |",
             "|---|---|---|---|---|---|---|"]
    for r in runs:
        for canary, res in r["results"].items():
            for att, row in res["attacks"].items():
                lines.append(f"| {r['epsilon_target']} | {r['epsilon_true']:.3g} | {canary} | "
                             f"{att} | {row['auc']:.3f} ({row['auc_se']:.3f}) | "
                             f"{row['eps_lb_dkw']:.3f} | {row['eps_lb_cp']:.3f} |")
    return "\n".join(lines)


def main(argv=None) -> None:
    from semi_core.sgd.leakage_canaries import compare_canaries

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--epsilons", nargs="+", type=float, default=[math.inf, 8.0])
    p.add_argument("--rounds", type=int, default=400)
    p.add_argument("--tau", type=int, default=1)
    p.add_argument("--n-reference", type=int, default=128)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="results/leakage")
    a = p.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    runs = []
    for eps in a.epsilons:
        r = compare_canaries(epsilon=None if math.isinf(eps) else eps, rounds=a.rounds,
                             tau=a.tau, n_reference=a.n_reference, seed=a.seed,
                             progress=lambda m, e=eps: print(f"eps={e}: {m}", flush=True))
        r["epsilon_target"] = eps
        runs.append(r)
        (out / "canaries.json").write_text(json.dumps(to_jsonable(runs), indent=1))
        (out / "canaries.md").write_text(table(runs) + "\n")
        print(table([r]), flush=True)


if __name__ == "__main__":
    main()

"""Tables 4 / 5 (and 10) of ``combining_mi_updates`` on digits: single-update attacks after
subpopulation shift (Hard / Easy pairs) and covariate shift (Hard / Easy), alpha in
{0.2, 0.6, 1.0}, ScoreRatio and ScoreDiff with the loss score, Batch threshold, SGD-New and
SGD-Full: accuracy, precision / recall at the 10 % rule and the accuracy on the shifted (new)
and source (old) candidates apart (mean +- SE over trials), through
:func:`semi_core.attacks.updates.studies.shift_tables` (also ``semi-core updates --study shift``
and the report).

Usage::

    python analysis/updates_shift.py --trials 30 --n0 60 --out analysis/updates_outputs/shift.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from semi_core._json import to_jsonable
from semi_core.attacks.updates.studies import SHIFT_KINDS, shift_tables


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=30)
    ap.add_argument("--n0", type=int, default=60)
    ap.add_argument("--n-up", type=int, default=10)
    ap.add_argument("--alphas", type=float, nargs="+", default=[0.2, 0.6, 1.0])
    ap.add_argument("--shifts", nargs="+", default=list(SHIFT_KINDS))
    ap.add_argument("--updates", nargs="+", default=["sgd-new", "sgd-full"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="analysis/updates_outputs/shift.json")
    a = ap.parse_args()
    torch.set_num_threads(1)
    res = shift_tables(updates=tuple(a.updates), shifts=tuple(a.shifts), alphas=tuple(a.alphas),
                       trials=a.trials, seed=a.seed, n0=a.n0, n_up=a.n_up)
    print("| update | shift | alpha | ratio acc | ratio prec/rec | ratio new / old | diff acc | "
          "diff prec/rec | final-model acc |")
    print("|---|---|---|---|---|---|---|---|---|")
    for row in res["rows"]:
        cells = []
        for comb in ("ratio", "diff"):
            s = row[comb]
            cells += [f"{s['mi_accuracy']['mean']:.3f} ± {s['mi_accuracy']['se']:.3f}",
                      f"{s['precision_at_10pct']['mean']:.2f}/{s['recall_at_10pct']['mean']:.2f}"]
            if comb == "ratio":
                cells.append(" / ".join("-" if s["new_old"][g]["mean"] is None else
                                        f"{s['new_old'][g]['mean']:.3f}" for g in ("new", "old")))
        print(f"| {row['update']} | {row['shift']} | {row['alpha']:g} | " + " | ".join(cells)
              + f" | {row['final_model_accuracy']:.3f} |", flush=True)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(to_jsonable(res), indent=1))


if __name__ == "__main__":
    main()

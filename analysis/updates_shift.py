"""Tables 4 / 5 (and 10) of ``combining_mi_updates`` on digits: single-update attacks after
subpopulation shift (Hard / Easy pairs) and covariate shift (Hard / Easy), alpha in
{0.2, 0.6, 1.0}, ScoreRatio and ScoreDiff with the loss score, Batch threshold, SGD-New and
SGD-Full: accuracy and precision / recall at the 10 % rule (mean +- SE over trials).

Usage::

    python analysis/updates_shift.py --trials 30 --n0 60 --out analysis/updates_outputs/shift.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from semi_core._json import to_jsonable
from semi_core.attacks.updates import UpdateConfig, run_experiment, summarize
from semi_core.attacks.updates.experiment.data import _PAIR_SOURCES, subpop_targets
from semi_core.sgd.data import load_digits


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=30)
    ap.add_argument("--n0", type=int, default=60)
    ap.add_argument("--n-up", type=int, default=10)
    ap.add_argument("--alphas", type=float, nargs="+", default=[0.2, 0.6, 1.0])
    ap.add_argument("--shifts", nargs="+", default=["subpop-hard", "subpop-easy",
                                                    "covariate-hard", "covariate-easy"])
    ap.add_argument("--updates", nargs="+", default=["sgd-new", "sgd-full"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="analysis/updates_outputs/shift.json")
    a = ap.parse_args()
    torch.set_num_threads(1)
    x, y = load_digits()
    pairs = {sh: {"sources": list(_PAIR_SOURCES), "targets": subpop_targets(x, y, sh)}
             for sh in ("subpop-hard", "subpop-easy")}
    rows = []
    print("| update | shift | alpha | ratio acc | ratio prec/rec | diff acc | diff prec/rec | "
          "final-model acc |")
    print("|---|---|---|---|---|---|---|---|")
    for upd in a.updates:
        for sh in a.shifts:
            for al in a.alphas:
                run = run_experiment(UpdateConfig(update=upd, shift=sh, shift_alpha=al,
                                                  trials=a.trials, n0=a.n0, n_up=a.n_up,
                                                  seed=a.seed))
                cells, row = [], {"update": upd, "shift": sh, "alpha": al}
                for comb in ("ratio", "diff"):
                    s = summarize(run, combiner=comb)
                    row[comb] = {k: s[k] for k in ("mi_accuracy", "precision_at_10pct",
                                                    "recall_at_10pct")}
                    cells += [f"{s['mi_accuracy']['mean']:.3f} ± {s['mi_accuracy']['se']:.3f}",
                              f"{s['precision_at_10pct']['mean']:.2f}/"
                              f"{s['recall_at_10pct']['mean']:.2f}"]
                row["final_model_accuracy"] = run.test_accuracy[
                    "final_model_accuracy_on_test_points"]
                rows.append(row)
                print(f"| {upd} | {sh} | {al:g} | " + " | ".join(cells) +
                      f" | {row['final_model_accuracy']:.3f} |", flush=True)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(to_jsonable({"pairs": pairs, "rows": rows}), indent=1))


if __name__ == "__main__":
    main()

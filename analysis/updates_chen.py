"""Q7 (Fig. 7) of ``combining_mi_updates``: Chen et al.'s SortedDiff attack (30 shadow runs,
best attack model), its improved form (logistic regression on SortedDiff + ScoreDiff +
ScoreRatio) and ScoreDiff / ScoreRatio with one shadow run, on digits or the user's data.

Usage::

    python analysis/updates_chen.py --trials 30 --n-shadow 30 --n-up 10 40 \
        --out analysis/updates_outputs/chen.json [--data FILE]

Writes JSON and prints a Markdown table (accuracy mean +- SE over the target trials).
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from semi_core._json import to_jsonable
from semi_core.attacks.updates import UpdateConfig
from semi_core.attacks.updates.chen import chen_comparison


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=30)
    ap.add_argument("--n-shadow", type=int, default=30)
    ap.add_argument("--n-up", type=int, nargs="+", default=[10, 40])
    ap.add_argument("--data", default=None)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="analysis/updates_outputs/chen.json")
    a = ap.parse_args()
    torch.set_num_threads(1)
    rows = []
    for upd in ("sgd-new", "sgd-full"):
        for n_up in a.n_up:
            cfg = UpdateConfig(update=upd, n_up=n_up, trials=a.trials, seed=a.seed,
                               dataset="file" if a.data else "digits", data=a.data)
            res = chen_comparison(cfg, n_shadow=a.n_shadow)
            rows.append({"update": upd, "n_up": n_up, **res})
            print(f"| {upd} | {n_up} | " + " | ".join(
                f"{k}: {v['accuracy']['mean']:.3f} ± {v['accuracy']['se']:.3f}"
                for k, v in res["attacks"].items() if "accuracy" in v)
                + f" | weight ratio {res['attacks']['improved_weights']['ratio']:.2f} |",
                flush=True)
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(to_jsonable({"rows": rows}), indent=1))


if __name__ == "__main__":
    main()

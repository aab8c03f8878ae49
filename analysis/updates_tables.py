"""Tables 3 (SGD-Full) and 7 (SGD-New) of ``combining_mi_updates`` on digits: precision / recall
at the 10 % rules of the no-update Loss (median threshold) and of ScoreRatio with Batch,
Transfer and Rank thresholds, at n_up = 1 % and 8 % of n0, with the paired significance test
of each attack's accuracy against the best no-update attack (Table 2's marks).

Usage::

    python analysis/updates_tables.py --trials 30 --out analysis/updates_outputs/tables_3_7.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import torch

from semi_core._json import to_jsonable
from semi_core.attacks.updates.studies import SEED_NUMBERS, precision_tables


def _pr(c) -> str:
    p, r = c["precision_10"], c["recall_10"]
    if p["mean"] is None:
        return "-"
    return f"{p['mean']:.2f}/{r['mean']:.2f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=30)
    ap.add_argument("--combiner", default="ratio", choices=["diff", "ratio"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="analysis/updates_outputs/tables_3_7.json")
    a = ap.parse_args()
    torch.set_num_threads(1)
    out = precision_tables(trials=a.trials, seed=a.seed, combiner=a.combiner)
    print("| table | n_up | Loss | Batch | Transfer | Rank | seed (FMNIST) |")
    print("|---|---|---|---|---|---|---|")
    for upd, tb in out["tables"].items():
        seed = SEED_NUMBERS[f"{tb['table']}_fmnist"]
        for f, r in tb["rows"].items():
            cells = [_pr(r["loss"])] + [
                f"{_pr(r[t])} (acc {r[t]['accuracy']['mean']:.3f}"
                f"{r[t]['vs_no_update']['mark']}, n={r[t]['precision_10']['n']})"
                for t in ("batch", "transfer", "rank")]
            sv = seed.get(f, {})
            print(f"| {tb['table']} {upd} | {r['n_up']} ({f}) | " + " | ".join(cells) + " | " +
                  ", ".join(f"{k} {p:.2f}/{q:.2f}" for k, (p, q) in sv.items()) + " |")
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(to_jsonable(out), indent=1))


if __name__ == "__main__":
    main()

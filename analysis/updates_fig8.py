"""Fig. 8 of ``combining_mi_updates`` (App. C): mean estimation, Neyman-Pearson attack with and
without the update (and ScoreDiff / ScoreRatio at the median of a balanced pool) against n1, at
n0 = 200, d = 250, mu = 0, sigma = 0.1.

Usage::

    python analysis/updates_fig8.py --rounds 20000 --out analysis/updates_outputs/fig8.json
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from semi_core._json import to_jsonable
from semi_core.attacks.updates.gap import fig8_sweep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n1", type=int, nargs="+", default=[2, 5, 10, 20, 50, 100, 200])
    ap.add_argument("--rounds", type=int, default=20000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="analysis/updates_outputs/fig8.json")
    a = ap.parse_args()
    out = fig8_sweep(a.n1, rounds=a.rounds, seed=a.seed)
    print("| n1 | NP no update (final) | NP with update (Delta) | ScoreDiff | ScoreRatio |")
    print("|---|---|---|---|---|")
    for r in out["rows"]:
        print(f"| {r['n1']} | " + " | ".join(
            f"{r[t]['accuracy']:.4f} ± {r[t]['se']:.4f}"
            for t in ("final", "optimal", "score-diff", "score-ratio")) + " |")
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(to_jsonable(out), indent=1))


if __name__ == "__main__":
    main()

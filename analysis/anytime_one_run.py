"""Audit while you train: validity, price of anytime validity and stopping times of the
anytime-valid one-run audit (:mod:`semi_core.audit.anytime_one_run`).

    .venv/bin/python analysis/anytime_one_run.py [--runs 1000] [--m 1000] [--seed 0]

Prints three Markdown tables and writes them with the numbers to
``analysis/anytime_outputs/anytime_one_run.json``:

1. validity: runs whose anytime bound ever exceeds the true epsilon, and runs that refute the
   true claim (the stronger event), for canaries exactly at the claim (randomised response:
   every score tied; Gaussian canaries at (eps, delta)), with the 95 % Clopper-Pearson interval;
2. price of anytime validity: the final anytime bound vs the fixed-time one-run bound
   (Steinke, Nasr & Jagielski 2023) on the same canaries and guesses;
3. stopping time: canaries graded when a false claim is refuted, vs the end-of-run audit.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from semi_core.audit.anytime_one_run import (
    markdown_table,
    price_table,
    stopping_table,
    validity_table,
)


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=1000)
    p.add_argument("--m", type=int, default=1000, help="canaries per run")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(Path(__file__).parent / "anytime_outputs"))
    args = p.parse_args(argv)
    res = {}
    for name, fn in (("validity", validity_table), ("price", price_table),
                     ("stopping", stopping_table)):
        t0 = time.perf_counter()
        rows = fn(runs=args.runs, n_canaries=args.m, seed=args.seed)
        res[name] = rows
        print(f"\n## {name} ({args.runs} runs x {args.m} canaries, "
              f"{time.perf_counter() - t0:.0f} s)\n")
        print(markdown_table(rows), flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "anytime_one_run.json").write_text(json.dumps(
        {"runs": args.runs, "m": args.m, "seed": args.seed, **res}, indent=1))
    return res


if __name__ == "__main__":
    main()

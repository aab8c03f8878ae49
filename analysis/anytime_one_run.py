"""Audit while you train: validity, price of anytime validity and stopping times of the
anytime-valid one-run audit (:mod:`semi_core.audit.anytime_one_run`).

    .venv/bin/python analysis/anytime_one_run.py [--runs 1000] [--m 1000] [--seed 0]
    .venv/bin/python analysis/anytime_one_run.py --dpsgd [--runs 10] [--m 200] [--steps 20]

Prints three Markdown tables and writes them with the numbers to
``analysis/anytime_outputs/anytime_one_run.json``:

1. validity: runs whose anytime bound ever exceeds the true epsilon, and runs that refute the
   true claim (the stronger event), for canaries exactly at the claim (randomised response:
   every score tied; Gaussian canaries at (eps, delta)), with the 95 % Clopper-Pearson interval;
2. price of anytime validity: the final anytime bound vs the fixed-time one-run bound
   (Steinke, Nasr & Jagielski 2023) on the same canaries and guesses;
3. stopping time: canaries graded when a false claim is refuted, vs the end-of-run audit;
4. ``--dpsgd``: the DP-SGD bug zoo (:func:`semi_core.integrations.anytime.bug_zoo_stopping`,
   ``--runs`` training runs per loop of a plain-torch loop through ``OneRunLoop``): the correct
   loop, clipping forgotten, noise divided by the batch size (white-box Dirac canaries scored at
   their own step), and a correct sampler loop and a misreported sample rate (input canaries
   through the loop's Poisson sampler at rate 0.5, the claim accounted at 0.5 or at 0.01): the
   fraction of runs refuted, the median step and canary at which the anytime audit refutes the
   claim, against the end-of-run one-run audit. The report section runs it with 10 runs of 200
   canaries in 20 steps.
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
from semi_core.integrations.anytime import bug_zoo_stopping


def main(argv=None) -> dict:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=None,
                   help="runs per cell (default 1000; --dpsgd: training runs per loop, 10)")
    p.add_argument("--m", type=int, default=None,
                   help="canaries per run (default 1000; --dpsgd: 200)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default=str(Path(__file__).parent / "anytime_outputs"))
    p.add_argument("--dpsgd", action="store_true",
                   help="only the DP-SGD bug-zoo stopping table (--runs training runs per loop)")
    p.add_argument("--steps", type=int, default=20, help="DP-SGD steps (--dpsgd)")
    args = p.parse_args(argv)
    if args.runs is None:
        args.runs = 10 if args.dpsgd else 1000
    if args.m is None:
        args.m = 200 if args.dpsgd else 1000
    res = {}
    tables = ((("dpsgd", lambda runs, n_canaries, seed: bug_zoo_stopping(
        runs=runs, m=n_canaries, steps=args.steps, seed=seed)),)
              if args.dpsgd else
              (("validity", validity_table), ("price", price_table),
               ("stopping", stopping_table)))
    for name, fn in tables:
        t0 = time.perf_counter()
        rows = fn(runs=args.runs, n_canaries=args.m, seed=args.seed)
        res[name] = rows
        runs = (f"{args.runs} training runs per loop, {args.steps} steps" if args.dpsgd
                else f"{args.runs} runs")
        print(f"\n## {name} ({runs} x {args.m} canaries, "
              f"{time.perf_counter() - t0:.0f} s)\n")
        print(markdown_table(rows), flush=True)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / f"anytime_one_run{'_dpsgd' if args.dpsgd else ''}.json").write_text(json.dumps(
        {"runs": args.runs, "m": args.m, "seed": args.seed, **res}, indent=1))
    return res


if __name__ == "__main__":
    main()

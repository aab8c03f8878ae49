"""Table 1 under DP-Auditorium's MeanMechanism code (the reading that reproduces it) and the
NonDPGaussian2 row by reading and conventions, beside the seed's cells.

Writes ``analysis/seq_outputs/readings.json`` and prints a summary. Usage::

    python analysis/seq_readings.py --runs 20      # ~5 min on one core
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from semi_core.cli._common import to_jsonable


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="analysis/seq_outputs/readings.json")
    args = p.parse_args(argv)
    from semi_core.audit.sequential.experiments import mechanism_table, readings_table

    res = {"nondp2_readings": readings_table(runs=args.runs, seed=args.seed),
           "table1_auditorium": mechanism_table(algorithm=1, runs=args.runs, seed=args.seed,
                                                floor="auditorium", conventions="ons,oga",
                                                power_runs=5)}
    for r in res["nondp2_readings"]["rows"]:
        print(f"NonDPGaussian2 {r['reading']:10s} {r['conventions']:8s} eps={r['epsilon']:<5g} "
              f"{r['rejections']}/{r['runs']} censored {r['censored_mean']:.0f} +- "
              f"{r['censored_mean_se']:.0f} (seed {r['seed_value'][2]} +- {r['seed_value'][3]})")
    for r in res["table1_auditorium"]["rows"]:
        cm = "-" if r["mean_stop"] is None else f"{r['censored_mean']:.0f} +- " \
                                                f"{r['censored_mean_se']:.0f}"
        print(f"Table 1 (auditorium, ons,oga) {r['mechanism']:17s} eps={r['epsilon']:<5g} "
              f"{r['rejection_rate']:.2f} {cm} (seed {r['seed_value']})")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(to_jsonable(res)))


if __name__ == "__main__":
    main()

"""Seed Fig. 2a-f analogue (per-datum leakage, Azize & Basu) at the seed's size.

Runs :func:`semi_core.report.leakage_section.run_experiments` (Bernoulli p_j ~ U[0.25, 0.75],
n = 1000, d = 5000 by default) and writes ``leakage_fig2.png``, ``leakage.md`` and
``leakage.json`` under ``--out``. Usage::

    python analysis/leakage_fig2.py --n 1000 --rounds 2000 --out results/leakage
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from semi_core.cli._common import to_jsonable


def main(argv=None) -> None:
    from semi_core.report.leakage_section import make_figures, run_experiments, tables

    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=1000)
    p.add_argument("--rounds", type=int, default=2000)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--out", default="results/leakage")
    a = p.parse_args(argv)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    data = run_experiments(quick=False, seed=a.seed, n=a.n, rounds=a.rounds,
                           progress=lambda m: print(m, flush=True))
    make_figures(data, out)
    md = tables(data) + f"\n\nTotal {data['seconds']:.1f} s.\n"
    (out / "leakage.md").write_text(md)
    (out / "leakage.json").write_text(json.dumps(to_jsonable(data)))
    print(md)


if __name__ == "__main__":
    main()

"""Seed Tables 1-3, App. F, Type-I rates and the SeMI stream comparison (sequential DP audits).

Tables 1-3 use DP-Auditorium's floored noise scale and the Type-I rows eq. 5's floored count,
as the report does (both floors side by side: ``analysis/seq_floor_conventions.py``).
Writes ``<out>/<part>.json`` and a Markdown summary ``<out>/seq_audit.md`` with every cell
beside the seed's value. Usage::

    python analysis/seq_audit_tables.py --out results/seq_audit                 # all parts
    python analysis/seq_audit_tables.py --parts table1 table2 --runs 20 --out results/seq_audit
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

from semi_core.cli._common import to_jsonable

PARTS = ("table1", "table2", "table3", "type1", "appF_gauss", "appF_uniform", "semi",
         "nondp2_bw1", "boundary")


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--out", default="results/seq_audit")
    p.add_argument("--parts", nargs="+", default=list(PARTS), choices=PARTS)
    p.add_argument("--runs", type=int, default=20, help="runs per cell of Tables 1-2")
    p.add_argument("--type1-runs", type=int, default=100)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    from semi_core.audit.sequential import experiments as ex
    from semi_core.report.seq_audit_section import render_markdown

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    results = {}
    for part in args.parts:
        t0 = time.perf_counter()
        if part in ("table1", "table2"):
            res = ex.mechanism_table(algorithm=1 if part == "table1" else 2, runs=args.runs,
                                     seed=args.seed, keep_paths=5, progress=print,
                                     floor="scale", power_runs=10)
        elif part == "nondp2_bw1":  # NonDP2 with bandwidth 1 (the median heuristic fails)
            res = {f"alg{a}": ex.mechanism_table(
                algorithm=a, runs=args.runs, seed=args.seed, bandwidth=1.0, progress=print,
                mechanisms=("nondp-gaussian-2", "nondp-laplace-2")) for a in (1, 2)}
        elif part == "boundary":
            res = ex.boundary_type1(seed=args.seed)
        elif part == "table3":
            res = ex.ablation_table(runs=10, seed=args.seed, progress=print, floor="scale")
        elif part == "type1":
            res = ex.type1_rates(runs=args.type1_runs, seed=args.seed, progress=print,
                                 floor="count")
        elif part == "appF_gauss":
            res = ex.gaussian_shift_grid(runs=20, seed=args.seed, progress=print)
        elif part == "appF_uniform":
            res = ex.perturbed_uniform(runs=100, seed=args.seed)
        else:
            res = ex.semi_rounds_comparison(seed=args.seed, progress=print)
        res["seconds"] = time.perf_counter() - t0
        results[part] = res
        (out / f"{part}.json").write_text(json.dumps(to_jsonable(res)))
        print(f"{part}: {res['seconds']:.0f} s")
    # merge with parts computed by earlier invocations
    for part in PARTS:
        f = out / f"{part}.json"
        if part not in results and f.exists():
            results[part] = json.loads(f.read_text())
    (out / "seq_audit.md").write_text(render_markdown(results))
    from semi_core.report.seq_audit_section import _NAMES, _paths_figure

    paths = {f"Alg. {results[t]['algorithm']}: {_NAMES[r['mechanism']]} eps={r['epsilon']}":
             r["paths"] for t in ("table1", "table2") if t in results
             for r in results[t]["rows"] if r.get("paths") and r["mechanism"].startswith("nondp")
             and r["mechanism"].endswith("1")}
    if paths:
        _paths_figure(out / "seq_audit_wealth.png", paths, 0.05)
    if "appF_uniform" in results:
        u = results["appF_uniform"]
        _paths_figure(out / "seq_audit_uniform.png", {"U vs U (null)": u["null"]["paths"],
                                                     "U vs perturbed U": u["alternative"]["paths"]},
                      0.05)
    print(f"wrote {out / 'seq_audit.md'}")


if __name__ == "__main__":
    main()

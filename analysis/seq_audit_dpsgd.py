"""Seed §4.2 / Fig. 1-2 analogue: sequential audits of DP-SGD from the white-box canary stream.

Private run: noise calibrated so each canary pair is exactly (eps_canary = 0.01, 1e-5)-DP
(dead-coordinate Dirac canary: x ~ N(0, s^2), y ~ N(1, s^2)); the tests at eps = 0.01 must not
reject. Non-private run: the noise is never added (live coordinate: natural gradients make the
stream non-stationary). Anytime-valid epsilon lower bounds (Alg. 1 and Alg. 2) over a grid;
writes ``<out>/dpsgd.json``, ``<out>/dpsgd_lower_bound.png``. Usage::

    python analysis/seq_audit_dpsgd.py --runs 5 --steps 2500 --out results/seq_audit
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from semi_core.cli._common import to_jsonable


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=5)
    p.add_argument("--steps", type=int, default=2500)
    p.add_argument("--private-steps", type=int, default=520)
    p.add_argument("--out", default="results/seq_audit")
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)
    from semi_core._rng import as_seed_sequence
    from semi_core.audit.sequential import sequential_grid, stream_source
    from semi_core.sgd.canary_stream import canary_stream, private_sigma

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    delta, grid = 1e-5, np.round(np.arange(0.0, 1.51, 0.05), 2)
    grid[0] = 0.01
    res = {"private": [], "non_private": [], "grid": grid.tolist(), "delta": delta}
    sig = private_sigma(0.01, delta)
    for i, ss in enumerate(as_seed_sequence(args.seed).spawn(args.runs)):
        a, b = ss.spawn(2)
        s = canary_stream(args.private_steps, sigma=sig, coordinate="dead", seed=a)
        row = {}
        for alg in (1, 2):
            g = sequential_grid(stream_source(s["x"], s["y"]), grid, delta=delta,
                                max_obs=args.private_steps - 20, algorithm=alg, seed=b)
            row[f"alg{alg}"] = {"rejected_0.01": g.results[0].rejected,
                                "epsilon_lower_bound": g.epsilon_lower_bound}
        res["private"].append(row)
        s = canary_stream(args.steps, sigma=0.0, coordinate="live", seed=b)
        row = {}
        for alg in (1, 2):
            g = sequential_grid(stream_source(s["x"], s["y"]), grid, delta=delta,
                                max_obs=args.steps - 20, algorithm=alg, seed=a)
            lb = g.lower_bound_path
            row[f"alg{alg}"] = {
                "stop_0.01": g.results[0].stopped_at,
                "stop_0.1": g.results[list(grid).index(0.1)].stopped_at,
                "lb_250": float(lb[min(249, lb.size - 1)]),
                "lb_end": float(lb[-1]), "lb_path": lb.tolist()}
        res["non_private"].append(row)
        print(f"run {i}: private {res['private'][-1]}, non-private "
              f"{ {k: {kk: v for kk, v in d.items() if kk != 'lb_path'} for k, d in row.items()} }")
    (out / "dpsgd.json").write_text(json.dumps(to_jsonable(res)))
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for r in res["non_private"]:
        for alg, c in (("alg1", "C0"), ("alg2", "C1")):
            ax.plot(r[alg]["lb_path"], color=c, lw=0.8, alpha=0.7)
    ax.set_xscale("log")
    ax.set_xlabel("canary observations")
    ax.set_ylabel("anytime-valid eps lower bound")
    ax.set_title("non-private DP-SGD (C0: Alg. 1, C1: Alg. 2)", fontsize=9)
    fig.tight_layout()
    fig.savefig(out / "dpsgd_lower_bound.png", dpi=110)
    print(f"wrote {out / 'dpsgd.json'}")


if __name__ == "__main__":
    main()

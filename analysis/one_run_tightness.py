"""Tightness of one-run audits: eps_LB / eps_true of one-run, one-run-fdp and many-run methods.

The mechanism is the Gaussian mechanism at mu-GDP with eps_GDP(mu, delta) = eps for eps in
--epsilons (delta = 1e-5): m canaries, each included independently with probability 1/2, score
``mu * S_i + N(0, 1)`` (the per-canary output, exactly mu-GDP). The one-run methods read the m
scores of ONE run (``one-run``: Steinke et al. 2023; ``one-run-fdp``: Mahloujifar et al. 2024,
Gaussian curve and (eps, delta) curve). The many-run methods (``band``, ``gdp``) read the same
number of scores as m independent games (one canary, one run each: R = m runs), which for
this mechanism have the same law. Median over --reps seeds of eps_LB / eps_true at 95 %.

``--dpsgd`` prints the DP-SGD table of the report's one-run section instead
(:func:`semi_core.sgd.one_run.tightness_table`): ONE run of our trainer with m canaries,
white-box (Dirac canaries at steps spread over the run, per-step log-LR at each canary's step) and
black-box (input canaries, final model's loss), beside R = m runs of today's white-box audit, with
the seconds of the one run and of the R runs, and the oracle ceiling
(:func:`semi_core.audit.one_run_fdp.gaussian_ceiling`).
Usage::

    python analysis/one_run_tightness.py                    # m in {100, 1000, 5000}, 5 reps
    python analysis/one_run_tightness.py --m 1000 --reps 3 --json out.json
    python analysis/one_run_tightness.py --dpsgd --reps 3   # the DP-SGD one-run table
"""

from __future__ import annotations

import argparse
import json

import numpy as np

from semi_core._rng import child_seed
from semi_core.audit import epsilon_lower_bound
from semi_core.audit.one_run_fdp import gaussian_ceiling
from semi_core.sgd.accounting import calibrate_sigma

#: (column, method, extra keyword arguments)
METHODS = (
    ("one-run", "one-run", {}),
    ("one-run-fdp (gdp)", "one-run-fdp", {"tradeoff": "gdp"}),
    ("one-run-fdp (eps,delta)", "one-run-fdp", {"tradeoff": "eps-delta"}),
    ("band (R=m runs)", "band", {}),
    ("gdp (R=m runs)", "gdp", {}),
)


def tightness(epsilons=(1.0, 2.0, 4.0, 8.0), ms=(100, 1000, 5000), *, delta=1e-5,
              failure_prob=0.05, reps=5, seed=0) -> list[dict]:
    """Rows (eps, m, method, median ratio, min, max) of eps_LB / eps_true."""
    rows = []
    for eps in epsilons:
        mu = 2.0 / calibrate_sigma(eps, delta)  # eps_GDP(mu, delta) = eps
        for m in ms:
            ratios = {name: [] for name, _, _ in METHODS}
            for rep in range(reps):
                rng = np.random.default_rng(child_seed(seed, int(eps * 1000), m, rep))
                s = rng.random(m) < 0.5
                x = mu * s + rng.standard_normal(m)
                for name, method, kw in METHODS:
                    try:
                        e = epsilon_lower_bound(x[s], x[~s], delta=delta, method=method,
                                                failure_prob=failure_prob,
                                                **kw).epsilon_lower_bound
                    except ValueError:  # class sizes refused by the one-run check (<= 1e-3)
                        continue
                    ratios[name].append(e / eps)
            for name, _, _ in METHODS:
                r = np.asarray(ratios[name])
                rows.append({"eps": eps, "mu": mu, "m": m, "method": name,
                             "median": float(np.median(r)), "min": float(r.min()),
                             "max": float(r.max()), "reps": int(r.size)})
    return rows


def format_table(rows: list[dict]) -> str:
    """Markdown: one row per (eps, m), one column per method (median eps_LB / eps_true)."""
    names = [n for n, _, _ in METHODS]
    lines = ["| eps | mu | m | " + " | ".join(names) + " |",
             "|---|---|---|" + "---|" * len(names)]
    keys = sorted({(r["eps"], r["m"]) for r in rows})
    for eps, m in keys:
        sel = {r["method"]: r for r in rows if r["eps"] == eps and r["m"] == m}
        mu = next(iter(sel.values()))["mu"]
        cells = [f"{sel[n]['median']:.3f}" for n in names]
        lines.append(f"| {eps:g} | {mu:.3f} | {m} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epsilons", nargs="+", type=float, default=[1.0, 2.0, 4.0, 8.0])
    parser.add_argument("--m", nargs="+", type=int, default=[100, 1000, 5000])
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--failure-prob", type=float, default=0.05)
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", default=None, help="write the rows as JSON")
    parser.add_argument("--dpsgd", action="store_true",
                        help="the one-run DP-SGD table (white-box, black-box, R = m runs)")
    args = parser.parse_args(argv)
    if args.dpsgd:
        import torch  # lazy: heavy optional dependency

        from semi_core.sgd.one_run import format_tightness, tightness_table

        torch.set_num_threads(1)
        rows = tightness_table(tuple(args.epsilons), tuple(args.m), delta=args.delta,
                               failure_prob=args.failure_prob, reps=args.reps, seed=args.seed)
        for r in rows:
            r["ceiling"] = gaussian_ceiling(r["mu"], r["m"], delta=args.delta,
                                            failure_prob=args.failure_prob)["epsilon"] / r["eps"]
        print(f"ONE DP-SGD run with m canaries: eps_LB / eps_true (median of {args.reps}), "
              f"delta = {args.delta:g}, failure probability {args.failure_prob:g}")
        print(format_tightness(rows))
        print("\noracle ceiling of one-run-fdp (gdp), expected counts, no Bonferroni:")
        for r in rows:
            print(f"  eps = {r['eps']:g}, m = {r['m']}: {r['ceiling']:.3f}")
        if args.json:
            with open(args.json, "w") as fh:
                json.dump(rows, fh, indent=2)
        return
    rows = tightness(tuple(args.epsilons), tuple(args.m), delta=args.delta,
                     failure_prob=args.failure_prob, reps=args.reps, seed=args.seed)
    print(f"eps_LB / eps_true (median of {args.reps}), delta = {args.delta:g}, "
          f"failure probability {args.failure_prob:g}; Gaussian mechanism, one run of m canaries "
          "vs R = m runs")
    print(format_table(rows))
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=2)


if __name__ == "__main__":
    main()

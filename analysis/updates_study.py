"""Jagielski et al. (``combining_mi_updates``) on digits: Table 2 analogue, Q1, Q2/Q3, the
heuristic-vs-optimal gap on the empirical-mean game, a DP-SGD update audit and LiRA scores.

Usage::

    python analysis/updates_study.py --trials 30 --out updates_study.json   # full (minutes)
    python analysis/updates_study.py --quick                                # seconds

Writes one JSON file with every number and prints Markdown tables (the report section
``semi_core/report/updates_section.py`` shows the same studies).
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import torch

from semi_core._json import to_jsonable
from semi_core.attacks.updates import UpdateConfig, run_experiment, summarize
from semi_core.attacks.updates.dp import dp_audit
from semi_core.attacks.updates.gap import UpdateMeanGame, gap_table, multi_update_game
from semi_core.attacks.updates.studies import SEED_NUMBERS, q1_curve, q2_curve, table2


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--trials", type=int, default=30)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--out", default="updates_study.json")
    args = ap.parse_args()
    torch.set_num_threads(1)
    trials = 4 if args.quick else args.trials
    times, res = {}, {"seed_numbers": SEED_NUMBERS}

    def timed(name, fn):
        t0 = time.perf_counter()
        res[name] = fn()
        times[name] = time.perf_counter() - t0
        print(f"[{name}] {times[name]:.1f} s", flush=True)

    timed("table2", lambda: table2(trials=trials, seed=args.seed))
    timed("table2_mlp", lambda: table2(trials=max(2, trials // 2), seed=args.seed, model="mlp"))
    timed("q1", lambda: q1_curve((5, 10, 20, 40) if not args.quick else (5, 40), trials=trials,
                                 seed=args.seed))
    timed("q2", lambda: q2_curve((1, 2, 4, 8) if not args.quick else (2,), trials=trials,
                                 seed=args.seed))

    def lira():
        out = {}
        for upd in ("sgd-new", "sgd-full"):
            run = run_experiment(UpdateConfig(update=upd, trials=trials, seed=args.seed,
                                              n_ref=8), scores=("loss", "lira"))
            out[upd] = {f"{s}_{c}": summarize(run, score=s, combiner=c)["mi_accuracy"]
                        for s in ("loss", "lira") for c in ("diff", "ratio")}
            out[upd]["no_update_lira"] = summarize(run, score="lira")["no_update"]["lira"]
        return out

    timed("lira", lira)

    def shift():
        out = {}
        for alpha in (0.2, 0.6, 1.0):
            run = run_experiment(UpdateConfig(trials=trials, seed=args.seed, shift_alpha=alpha,
                                              n_up=10))
            out[f"alpha={alpha}"] = {c: summarize(run, combiner=c)["mi_accuracy"]
                                     for c in ("diff", "ratio")}
        return out

    timed("shift", shift)
    g = UpdateMeanGame()
    timed("gap", lambda: gap_table(g, rounds=20000 if args.quick else 400000, seed=args.seed,
                                   fpr=(0.001, 0.01, 0.1)))
    timed("gap_small_update", lambda: gap_table(UpdateMeanGame(n0=200, n1=2, d=50, distance=4.0),
                                                rounds=20000 if args.quick else 400000,
                                                seed=args.seed, fpr=(0.01, 0.1)))

    def multi():
        m = multi_update_game(rounds=10000 if args.quick else 200000, seed=args.seed)
        m.pop("result")
        return m

    timed("multi", multi)
    timed("dp", lambda: {f"sigma={s}": dp_audit(UpdateConfig(clip=1.0, sigma_dp=s,
                                                             seed=args.seed),
                                                rounds=100 if args.quick else 1000)
                         for s in (1.0, 4.0)})
    res["seconds"] = times
    Path(args.out).write_text(json.dumps(to_jsonable(res), indent=1))
    print(json.dumps(to_jsonable({k: v for k, v in res.items() if k != "seed_numbers"}),
                     indent=1)[:6000])


if __name__ == "__main__":
    main()

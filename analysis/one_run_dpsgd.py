"""One-run white-box DP-SGD audit: m Dirac gradient canaries in ONE training run of our trainer.

A thin driver of :mod:`semi_core.sgd.one_run` (:func:`~semi_core.sgd.one_run.synthetic_setup`,
:func:`~semi_core.sgd.one_run.one_run_white_box`): every canary sits on its own isolated
coordinate (the weight of an input feature that is zero in every record) with its own bit, drawn
independently with probability 1/2: sign +1 ("included") or -1 (replace-one neighbours, Nasr et
al. 2023). The canaries enter at steps spread over the run (``--tau T`` puts them all at step T);
each is scored by the optimal per-step log-LR at its own step. The run is exactly mu-GDP per
canary with mu = 2/sigma_DP (each record used once: fixed disjoint batches), sigma_DP calibrated
so that eps(delta) = eps. The m scores of the single run are certified with ``one-run``
(Steinke et al. 2023) and ``one-run-fdp`` (Mahloujifar et al. 2024; Gaussian and (eps, delta)
curves); "step unknown" reads the same run by the Final Observation score.
Usage::

    python analysis/one_run_dpsgd.py --m 100 1000 --epsilons 1 2 4 8 --reps 3
"""

from __future__ import annotations

import argparse
import json
import math

import numpy as np

from semi_core.sgd.one_run import ONE_RUN_METHODS


def one_run(m: int, eps: float, *, delta: float = 1e-5, failure_prob: float = 0.05,
            tau: int | None = None, seed: int = 0) -> dict:
    """One training run with ``m`` Dirac canaries; eps_LB / eps_true per method."""
    import torch  # lazy: heavy optional dependency

    from semi_core.sgd.accounting import calibrate_sigma
    from semi_core.sgd.one_run import one_run_white_box, synthetic_setup

    torch.set_num_threads(1)
    sigma = calibrate_sigma(eps, delta)
    setup = synthetic_setup(m, sigma, zero_features=math.ceil(m / 3), seed=seed)
    res = one_run_white_box(setup, seed=seed, taus=tau, delta=delta, failure_prob=failure_prob)
    row = {"eps": eps, "m": m, "sigma_dp": sigma, "mu": 2.0 / sigma, "seed": seed,
           "members": int(res.member.sum()), "run_seconds": res.seconds["train"]}
    row.update(res.ratios())
    row.update({f"{k}, step unknown": v for k, v in res.ratios_step_unknown().items()})
    return row


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", nargs="+", type=int, default=[100, 1000])
    parser.add_argument("--epsilons", nargs="+", type=float, default=[1.0, 2.0, 4.0, 8.0])
    parser.add_argument("--reps", type=int, default=1, help="independent runs per cell")
    parser.add_argument("--tau", type=int, default=None,
                        help="insert every canary at this step (default: spread over the run)")
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    rows = [one_run(m, eps, delta=args.delta, tau=args.tau, seed=rep)
            for eps in args.epsilons for m in args.m for rep in range(args.reps)]
    names = [n for n, _, _ in ONE_RUN_METHODS] + ["one-run-fdp (gdp), step unknown"]
    print(f"one white-box DP-SGD run, m Dirac canaries, eps_LB / eps_true (delta = "
          f"{args.delta:g}, 95 %; median of {args.reps} run(s))")
    print("| eps | m | sigma_DP | " + " | ".join(names) + " | seconds per run |")
    print("|---|---|---|" + "---|" * len(names) + "---|")
    for eps in args.epsilons:
        for m in args.m:
            sel = [r for r in rows if r["eps"] == eps and r["m"] == m]
            cells = [f"{np.median([r[n] for r in sel]):.3f}" for n in names]
            print(f"| {eps:g} | {m} | {sel[0]['sigma_dp']:.3f} | " + " | ".join(cells)
                  + f" | {np.median([r['run_seconds'] for r in sel]):.1f} |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=2)


if __name__ == "__main__":
    main()

"""One-run white-box DP-SGD audit: m Dirac gradient canaries in ONE training run of our trainer.

Every canary sits on its own isolated coordinate (the weight of an input feature that is zero
in every record, so no natural gradient touches it) with its own bit, drawn independently with
probability 1/2: sign +1 ("included") or -1 (replace-one neighbours, Nasr et al. 2023). All m
canaries enter batch ``--tau`` of one run (``canaries_per_run = m`` of
:mod:`semi_core.sgd.dirac`, played by :func:`~semi_core.sgd.dirac.play_white_box` with
``rounds=1``). The score of each canary is the white-box ``dirac`` statistic at its insertion
step (the optimal per-step log-LR, SeMI* specialised to the Dirac canary). The run is exactly
mu-GDP per canary with mu = 2/sigma_DP (each record is used once: fixed disjoint batches), and
sigma_DP is calibrated so that eps(delta) = eps (:func:`semi_core.sgd.accounting.calibrate_sigma`).
The m scores of the single run are certified with ``one-run`` (Steinke et al. 2023) and
``one-run-fdp`` (Mahloujifar et al. 2024; Gaussian and (eps, delta) curves).

The model is a linear softmax on 8 Gaussian features plus ``ceil(m / classes)`` all-zero
features; the batch holds ``n = max(m, 64)`` records (the canaries take distinct slots).
Usage::

    python analysis/one_run_dpsgd.py --m 100 1000 --epsilons 1 2 4 8 --reps 3
"""

from __future__ import annotations

import argparse
import json
import math
import time

import numpy as np

from semi_core.audit import epsilon_lower_bound

METHODS = (("one-run", "one-run", {}), ("one-run-fdp (gdp)", "one-run-fdp", {"tradeoff": "gdp"}),
           ("one-run-fdp (eps,delta)", "one-run-fdp", {"tradeoff": "eps-delta"}))


def build_setup(m: int, sigma_dp: float, *, steps: int = 3, classes: int = 3, seed: int = 0):
    """White-box setup with ``m`` isolated Dirac coordinates (module docstring)."""
    import torch  # lazy: heavy optional dependency

    from semi_core.sgd.dirac import WhiteBoxSetup, dirac_coordinates
    from semi_core.sgd.dpsgd import DPSGDConfig
    from semi_core.sgd.grads import FunctionalModel, clip_rows

    real = 8
    zero = math.ceil(m / classes)
    features = real + zero
    n = max(m, 64)
    records = steps * n + 200
    rng = np.random.default_rng(seed)
    w = rng.normal(size=(real, classes))
    x = np.zeros((records, features))
    x[:, :real] = rng.normal(size=(records, real))
    y = np.argmax(x[:, :real] @ w + rng.gumbel(size=(records, classes)), axis=1)
    torch.manual_seed(seed)
    model = torch.nn.Linear(features, classes).double()
    fm = FunctionalModel(model)
    theta0 = fm.theta()
    X, Y = torch.as_tensor(x), torch.as_tensor(y)
    cfg = DPSGDConfig(batch_size=n, steps=steps, lr=0.5, clip=1.0, sigma_dp=sigma_dp)
    ref_x, ref_y, pool_x, pool_y = X[:200], Y[:200], X[200:], Y[200:]
    ref = clip_rows(fm.per_sample_grads(theta0, ref_x, ref_y), cfg.clip)
    coords, mom = dirac_coordinates(ref, m)
    if np.any(mom != 0):
        raise RuntimeError("not enough isolated coordinates for the canaries")
    return WhiteBoxSetup(fm=fm, theta0=theta0, pool_x=pool_x, pool_y=pool_y, ref_x=ref_x,
                         ref_y=ref_y, cfg=cfg, coords=coords, scale=4.0)


def one_run(m: int, eps: float, *, delta: float = 1e-5, failure_prob: float = 0.05,
            tau: int = 2, seed: int = 0) -> dict:
    """One training run with ``m`` Dirac canaries; eps_LB / eps_true per method."""
    import torch  # lazy: heavy optional dependency

    from semi_core.sgd.accounting import calibrate_sigma
    from semi_core.sgd.dirac import play_white_box

    torch.set_num_threads(1)
    sigma = calibrate_sigma(eps, delta)
    setup = build_setup(m, sigma, seed=seed)
    t0 = time.perf_counter()
    game = play_white_box(setup, rounds=1, tau=tau, seed=seed, semi=False)
    train_s = time.perf_counter() - t0
    mem, non = game.scores("dirac")
    row = {"eps": eps, "m": m, "sigma_dp": sigma, "mu": 2.0 / sigma, "seed": seed,
           "members": int(mem.size), "run_seconds": train_s}
    for name, method, kw in METHODS:
        try:
            e = epsilon_lower_bound(mem, non, delta=delta, failure_prob=failure_prob,
                                    method=method, **kw).epsilon_lower_bound
            row[name] = e / eps
        except ValueError as err:  # class sizes refused (rate <= 1e-3 by design)
            row[name] = float("nan")
            row["refused"] = str(err)[:80]
    return row


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--m", nargs="+", type=int, default=[100, 1000])
    parser.add_argument("--epsilons", nargs="+", type=float, default=[1.0, 2.0, 4.0, 8.0])
    parser.add_argument("--reps", type=int, default=1, help="independent runs per cell")
    parser.add_argument("--tau", type=int, default=2)
    parser.add_argument("--delta", type=float, default=1e-5)
    parser.add_argument("--json", default=None)
    args = parser.parse_args(argv)
    rows = [one_run(m, eps, delta=args.delta, tau=args.tau, seed=rep)
            for eps in args.epsilons for m in args.m for rep in range(args.reps)]
    names = [n for n, _, _ in METHODS]
    print(f"one white-box DP-SGD run, m Dirac canaries, eps_LB / eps_true (delta = "
          f"{args.delta:g}, 95 %; median of {args.reps} run(s))")
    print("| eps | m | sigma_DP | " + " | ".join(names) + " | seconds per run |")
    print("|---|---|---|" + "---|" * len(names) + "---|")
    for eps in args.epsilons:
        for m in args.m:
            sel = [r for r in rows if r["eps"] == eps and r["m"] == m]
            cells = [f"{np.nanmedian([r[n] for r in sel]):.3f}" for n in names]
            print(f"| {eps:g} | {m} | {sel[0]['sigma_dp']:.3f} | " + " | ".join(cells)
                  + f" | {np.median([r['run_seconds'] for r in sel]):.1f} |")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(rows, fh, indent=2)


if __name__ == "__main__":
    main()

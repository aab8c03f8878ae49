"""``semi-core seq-audit``: anytime-valid sequential DP audits (MMD witness, test martingales).

Examples::

    semi-core seq-audit --mechanism nondp-laplace-1 --epsilon 0.01 --delta 1e-5 \\
        --failure-prob 0.05 --max-obs 5000 --runs 20 --algorithm 1 --seed 0 --json
    semi-core seq-audit --mechanism nondp-gaussian-1 --epsilon-grid 0,0.1,0.2,0.4 --json
    semi-core seq-audit --stream semi --mechanism noisy-mean --noise 0.5 --epsilon 1 --json

``--json`` prints one object: per run ``rejected`` and ``stopped_at`` (test pairs after the
20 discarded warm-up pairs), the summary ``rejection_rate`` and ``mean_stop`` (over rejecting
runs) with standard errors, and ``log_wealth`` paths (every ``--path-stride``-th step) to plot.
"""

from __future__ import annotations

import sys

import numpy as np

from semi_core.cli._common import Result
from semi_core.cli._options import add_delta, add_failure_prob, add_json, add_seed

__all__ = ["register", "handler"]

_SEMI_MECHS = ("noisy-mean", "randomized-response", "nondp-laplace-1", "dp-laplace",
               "nondp-gaussian-1", "dp-gaussian", "nondp-laplace-2", "nondp-gaussian-2")


def register(subparsers) -> None:
    """Add the ``seq-audit`` subcommand."""
    from semi_core.mechanisms.zoo import ZOO

    p = subparsers.add_parser(
        "seq-audit", help="anytime-valid sequential DP audit (MMD test martingale / e-process)",
        description="Draw outputs of a mechanism on S={0} and S'={0,1} one pair at a time and "
                    "stop as soon as 'the mechanism is (eps, delta)-DP' is rejected at level "
                    "--failure-prob (Ville), or report no violation within --max-obs pairs. "
                    "--epsilon-grid gives an anytime-valid epsilon lower bound; --stream semi "
                    "audits a SeMI game played round by round.")
    p.add_argument("--mechanism", default="nondp-laplace-1",
                   help=f"one of {sorted(ZOO)} (stream mmd) or {list(_SEMI_MECHS)} (stream semi)")
    p.add_argument("--stream", choices=("mmd", "semi"), default="mmd",
                   help="mmd: the seed's MMD test; semi: SeMI stream audit")
    p.add_argument("--epsilon", type=float, default=None, help="claimed epsilon >= 0")
    p.add_argument("--epsilon-grid", default=None,
                   help="comma-separated epsilons: anytime-valid lower bound over the grid")
    p.add_argument("--mech-epsilon", type=float, default=None,
                   help="epsilon the zoo mechanism is built for (default: --epsilon)")
    add_delta(p, default=1e-5)
    add_failure_prob(p)
    p.add_argument("--max-obs", type=int, default=5000, help="N_max >= 1 (pairs or rounds)")
    p.add_argument("--runs", type=int, default=1, help="independent runs >= 1")
    p.add_argument("--algorithm", type=int, default=1, help="1 (ONS) or 2 (e-process)")
    p.add_argument("--evalue", choices=("max", "mixture"), default="max",
                   help="Alg. 2 stopping statistic: seed's max-minus-regret or exact UP mixture")
    p.add_argument("--bound", choices=("new", "auditorium"), default="new",
                   help="MMD threshold: Thm 3.1 (new) or DP-Auditorium")
    p.add_argument("--bandwidth", default="median", help="'median' or a positive number")
    p.add_argument("--warmup", type=int, default=20, help="discarded warm-up pairs (median)")
    p.add_argument("--noise", type=float, default=0.1,
                   help="noisy-mean noise std (semi; n=10, data N(-1, 0.1^2), canary +1)")
    p.add_argument("--path-stride", type=int, default=10, help="keep every k-th path point")
    add_seed(p)
    add_json(p)
    p.set_defaults(func=handler)


def _grid(text: str) -> list[float]:
    try:
        vals = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"--epsilon-grid must be comma-separated numbers, got {text!r}") from None
    if not vals:
        raise ValueError("--epsilon-grid is empty")
    return vals


def _bar(args):
    if args.json:
        return None, lambda i, n: None
    from tqdm.auto import tqdm

    bar = tqdm(total=args.runs, desc="seq-audit", unit="run", file=sys.stderr)
    return bar, lambda i, n: bar.update(1)


def _check(args):
    from semi_core._validation import check_delta, check_int
    from semi_core.audit.sequential.tau import check_alpha, check_epsilon

    check_delta(args.delta, "--delta")
    check_alpha(args.failure_prob, "--failure-prob")
    check_int(args.max_obs, "--max-obs", minimum=1)
    check_int(args.runs, "--runs", minimum=1)
    check_int(args.path_stride, "--path-stride", minimum=1)
    if args.algorithm not in (1, 2):
        raise ValueError(f"--algorithm must be 1 or 2, got {args.algorithm}")
    if (args.epsilon is None) == (args.epsilon_grid is None):
        raise ValueError("give exactly one of --epsilon or --epsilon-grid")
    eps = [args.epsilon] if args.epsilon is not None else _grid(args.epsilon_grid)
    for e in eps:
        check_epsilon(e, "--epsilon")
    bw = args.bandwidth
    if bw != "median":
        try:
            bw = float(bw)
        except ValueError:
            raise ValueError(f"--bandwidth must be 'median' or a number, got {bw!r}") from None
        if not (np.isfinite(bw) and bw > 0):
            raise ValueError(f"--bandwidth must be > 0, got {bw}")
    return eps, bw


def _semi(args, eps) -> Result:
    from semi_core.audit.sequential.semi_stream import semi_stream_audit
    from semi_core.mechanisms.zoo import RandomizedResponse, make_zoo_mechanism

    if args.mechanism == "noisy-mean":
        from semi_core.mechanisms.noisy_mean import NoisyMean

        mech = NoisyMean(10, 1, noise=args.noise, data_mean=-1.0, data_std=0.1)
    elif args.mechanism == "randomized-response":
        mech = RandomizedResponse(args.mech_epsilon if args.mech_epsilon is not None
                                  else max(eps), args.delta)
    elif args.mechanism in _SEMI_MECHS:
        mech = make_zoo_mechanism(args.mechanism, args.mech_epsilon or max(max(eps), 1e-3),
                                  max(args.delta, 1e-12))
    else:
        raise ValueError(f"--mechanism must be one of {list(_SEMI_MECHS)} with --stream semi, "
                         f"got {args.mechanism!r}")
    from semi_core._rng import as_seed_sequence

    bar, tick = _bar(args)
    runs = []
    for i, ss in enumerate(as_seed_sequence(args.seed).spawn(args.runs)):
        r = semi_stream_audit(mech, eps, delta=args.delta, failure_prob=args.failure_prob,
                              max_rounds=args.max_obs, seed=ss)
        d = r.to_dict(paths=False)
        d["log_wealth"] = r.log_wealth[::args.path_stride].T.tolist()
        runs.append(d)
        tick(i + 1, args.runs)
    if bar is not None:
        bar.close()
    rej = np.array([r["rejected"] for r in runs], dtype=float)  # (runs, n_eps)
    stops = [[r["stopped_at"][j] for r in runs if r["stopped_at"][j] is not None]
             for j in range(len(eps))]
    summary = {"epsilons": sorted(eps), "rejection_rate": rej.mean(axis=0).tolist(),
               "rejection_rate_se": np.sqrt(rej.mean(0) * (1 - rej.mean(0)) / len(runs)).tolist(),
               "mean_stop": [float(np.mean(s)) if s else None for s in stops],
               "epsilon_lower_bound": [r["epsilon_lower_bound"] for r in runs]}
    payload = {"stream": "semi", "mechanism": mech.params(), "runs": runs, "summary": summary,
               "path_stride": args.path_stride}
    text = "\n".join(
        [f"SeMI stream audit of {args.mechanism}, delta={args.delta}, alpha={args.failure_prob}"]
        + [f"  eps={e:g}: rejection rate {rr:.3f}, mean rounds to reject {ms}"
           for e, rr, ms in zip(summary["epsilons"], summary["rejection_rate"],
                                summary["mean_stop"])])
    return Result(payload=payload, text=text)


def handler(args) -> Result:
    """Run the audit(s); see the module docstring for the payload."""
    eps, bw = _check(args)
    if args.stream == "semi":
        return _semi(args, eps)
    from semi_core._rng import as_seed_sequence
    from semi_core.audit.sequential import mechanism_source, sequential_grid, summarize
    from semi_core.mechanisms.zoo import SEED_PAIR, make_zoo_mechanism

    mech_eps = args.mech_epsilon if args.mech_epsilon is not None else (
        args.epsilon if args.epsilon is not None else None)
    if mech_eps is None:
        raise ValueError("--mech-epsilon is required with --epsilon-grid (the epsilon the "
                         "mechanism is built for)")
    mech = make_zoo_mechanism(args.mechanism, mech_eps, args.delta if args.delta > 0 else 1e-5)
    bar, tick = _bar(args)
    runs, grids = [], []
    for i, ss in enumerate(as_seed_sequence(args.seed).spawn(args.runs)):
        g = sequential_grid(mechanism_source(mech, *SEED_PAIR), eps, delta=args.delta,
                            failure_prob=args.failure_prob, max_obs=args.max_obs,
                            algorithm=args.algorithm, bandwidth=bw, warmup=args.warmup,
                            bound=args.bound, evalue=args.evalue, seed=ss)
        grids.append(g)
        tick(i + 1, args.runs)
    if bar is not None:
        bar.close()
    s = args.path_stride
    if args.epsilon is not None:
        res = [g.results[0] for g in grids]
        for r in res:
            d = r.to_dict(paths=False)
            d["log_wealth"] = r.log_wealth[::s].tolist()
            runs.append(d)
        summary = summarize(res)
        payload = {"stream": "mmd", "mechanism": mech.params(), "runs": runs,
                   "summary": summary, "path_stride": s,
                   "log_wealth_threshold": float(np.log(1 / args.failure_prob))}
        ms = summary["mean_stop"]
        text = (f"{mech.name} at eps={args.epsilon:g}, delta={args.delta:g}, alpha="
                f"{args.failure_prob:g}, Alg. {args.algorithm}, {args.runs} run(s): rejection "
                f"rate {summary['rejection_rate']:.3f} +- {summary['rejection_rate_se']:.3f}; "
                + (f"mean stop {ms:.1f} +- {summary['mean_stop_se']:.1f} pairs" if ms is not None
                   else "no rejection"))
        return Result(payload=payload, text=text)
    for g in grids:
        d = g.to_dict(paths=False)
        d["lower_bound_path"] = g.lower_bound_path[::s].tolist()
        for t, r in zip(d["tests"], g.results):
            t["log_wealth"] = r.log_wealth[::s].tolist()
        runs.append(d)
    lbs = [g.epsilon_lower_bound for g in grids]
    payload = {"stream": "mmd", "mechanism": mech.params(), "runs": runs,
               "epsilon_lower_bound": lbs[0] if len(lbs) == 1 else lbs,
               "reading": "largest grid epsilon with every smaller grid epsilon rejected "
                          "(fixed-sequence; valid at level alpha at every time)",
               "path_stride": s}
    text = (f"{mech.name}: anytime-valid epsilon lower bound(s) {lbs} over grid {sorted(eps)} "
            f"(alpha={args.failure_prob:g})")
    return Result(payload=payload, text=text)

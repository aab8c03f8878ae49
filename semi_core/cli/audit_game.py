"""``semi-core audit-game``: audit the noisy empirical-mean mechanism with SeMI tests.

Example::

    semi-core audit-game --mu-levels 1 2 4 --rounds 4000 --delta 1e-5 --alpha 0.05 --json

For each noise level, plays the SeMI game (seed Alg. 1-2) on
:class:`semi_core.mechanisms.noisy_mean.NoisyMean` (clipped data, Gaussian noise on every
released running mean) and prints eps_LB of SeMI*, SeMI-max and Final Observation next to the
ground-truth epsilon(delta) of the mechanism.
"""

from __future__ import annotations

from semi_core.cli._common import Result, add_json_flag

__all__ = ["register", "handler"]

def register(subparsers) -> None:
    """Add the ``audit-game`` subcommand."""
    p = subparsers.add_parser(
        "audit-game", help="eps lower bounds of SeMI*, SeMI-max, Final Observation vs truth",
        description="SeMI game on the clipped, noisy empirical mean (a Gaussian mechanism with "
                    "known epsilon); certified eps_LB per test at several noise levels.")
    p.add_argument("--n", type=int, default=10, help="batch size n >= 2 (default 10)")
    p.add_argument("--T", type=int, default=10, help="number of releases (default 10)")
    p.add_argument("--tau", type=int, default=1, help="insertion time in 1..T (default 1)")
    p.add_argument("--clip", type=float, default=1.0, help="clipping radius C (default 1)")
    p.add_argument("--data-mean", type=float, default=-1.0,
                   help="data mean (default -1 = -C: opposite the canary)")
    p.add_argument("--data-std", type=float, default=0.1, help="data std (default 0.1)")
    p.add_argument("--target", type=float, default=None,
                   help="canary z* in [-C, C] (default C: on the boundary)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--noise", type=float, nargs="+", default=None,
                   help="noise standard deviations s of the releases")
    g.add_argument("--mu-levels", type=float, nargs="+", default=[1.0, 2.0, 4.0],
                   help="GDP levels mu; noise s = Delta_1 / mu (default 1 2 4)")
    p.add_argument("--rounds", type=int, default=4000, help="games per noise level (default 4000)")
    p.add_argument("--delta", type=float, default=1e-5, help="delta in [0, 1) (default 1e-5)")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="failure probability in (0, 0.5] (default 0.05)")
    p.add_argument("--method", choices=("dkw", "cp", "gdp"), default="dkw")
    p.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    add_json_flag(p)
    p.set_defaults(func=handler)


def handler(args) -> Result:
    """Run the table; payload = {"rows": [...], parameters}."""
    from semi_core.audit.games import noisy_mean_audit_table as run_table
    from semi_core.report.audit_section import format_table

    rows = run_table(n=args.n, T=args.T, tau=args.tau, clip=args.clip, data_mean=args.data_mean,
                     data_std=args.data_std, target=args.target, noise=args.noise,
                     mu_levels=args.mu_levels, rounds=args.rounds, delta=args.delta,
                     alpha=args.alpha, method=args.method, seed=args.seed)
    payload = {"n": args.n, "T": args.T, "tau": args.tau, "clip": args.clip,
               "data_mean": args.data_mean, "data_std": args.data_std, "rounds": args.rounds,
               "delta": args.delta, "alpha": args.alpha, "method": args.method,
               "seed": args.seed, "rows": rows}
    text = (f"SeMI audit of the noisy mean (n={args.n}, T={args.T}, tau={args.tau}, "
            f"delta={args.delta:g}, failure prob {args.alpha:g}, method {args.method}, "
            f"{args.rounds} games per level)\n" + format_table(rows))
    return Result(payload=payload, text=text)

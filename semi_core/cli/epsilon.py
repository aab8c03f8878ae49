"""``semi-core epsilon``: exact epsilon(delta) of mu-GDP / the Gaussian mechanism.

Example::

    semi-core epsilon --mu 1 --delta 1e-5 --json      # {"epsilon": 4.377..., ...}
    semi-core epsilon --sigma 2 --sensitivity 1 --delta 1e-5
"""

from __future__ import annotations

from semi_core.audit import gdp_delta, gdp_epsilon
from semi_core.cli._common import Result, add_json_flag

__all__ = ["register", "handler"]


def register(subparsers) -> None:
    """Add the ``epsilon`` subcommand."""
    p = subparsers.add_parser(
        "epsilon", help="exact epsilon(delta) of mu-GDP or the Gaussian mechanism",
        description="Solve Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) = delta for eps "
                    "(log space). Give --mu, or --sigma and --sensitivity (mu = "
                    "sensitivity / sigma).")
    p.add_argument("--mu", type=float, default=None, help="GDP parameter mu >= 0")
    p.add_argument("--sigma", type=float, default=None, help="Gaussian noise std (> 0)")
    p.add_argument("--sensitivity", type=float, default=1.0,
                   help="L2 sensitivity with --sigma (default 1)")
    p.add_argument("--delta", type=float, required=True, help="delta in [0, 1)")
    add_json_flag(p)
    p.set_defaults(func=handler)


def handler(args) -> Result:
    """Compute epsilon; payload keys epsilon, mu, delta, delta_at_epsilon."""
    if (args.mu is None) == (args.sigma is None):
        raise ValueError("give exactly one of --mu or --sigma")
    if args.mu is not None:
        mu = args.mu
    else:
        if not args.sigma > 0 or not args.sensitivity > 0:
            raise ValueError(f"--sigma and --sensitivity must be > 0, got {args.sigma}, "
                             f"{args.sensitivity}")
        mu = args.sensitivity / args.sigma
    eps = gdp_epsilon(mu, args.delta)
    check = float(gdp_delta(eps, mu)) if (mu > 0 and eps != float("inf")) else 0.0
    payload = {"epsilon": eps, "mu": mu, "delta": args.delta, "delta_at_epsilon": check}
    return Result(payload=payload,
                  text=f"mu = {mu:.6g}, delta = {args.delta:g}: epsilon = {eps:.10g}")

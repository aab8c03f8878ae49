"""``semi-core epsilon``: exact epsilon(delta) of mu-GDP / the Gaussian mechanism.

Example::

    semi-core epsilon --gdp-mu 1 --delta 1e-5 --json      # {"epsilon": 4.377..., ...}
    semi-core epsilon --noise 2 --sensitivity 1 --delta 1e-5

(``--mu`` and ``--sigma`` are deprecated aliases of ``--gdp-mu`` and ``--noise``: elsewhere
``--mu``/``--sigma`` are the data's mean and standard deviation.)
"""

from __future__ import annotations

import math

from semi_core.cli._common import Result
from semi_core.cli._options import DeprecatedAlias, add_delta, add_json
from semi_core.stats.gdp import gdp_delta, gdp_epsilon

__all__ = ["register", "handler"]

#: Largest mu accepted: epsilon(delta) ~ mu^2/2 is then ~5e11, beyond any meaningful privacy.
MAX_GDP_MU = 1e6


def register(subparsers) -> None:
    """Add the ``epsilon`` subcommand."""
    p = subparsers.add_parser(
        "epsilon", help="exact epsilon(delta) of mu-GDP or the Gaussian mechanism",
        description="Solve Phi(-eps/mu + mu/2) - e^eps Phi(-eps/mu - mu/2) = delta for eps "
                    "(log space). Give --gdp-mu, or --noise and --sensitivity (mu = "
                    "sensitivity / noise).")
    p.add_argument("--gdp-mu", dest="gdp_mu", type=float, default=None,
                   help=f"GDP parameter mu in [0, {MAX_GDP_MU:g}]")
    p.add_argument("--mu", dest="gdp_mu", type=float, action=DeprecatedAlias, new="--gdp-mu")
    p.add_argument("--noise", dest="noise", type=float, default=None,
                   help="Gaussian noise standard deviation (> 0)")
    p.add_argument("--sigma", dest="noise", type=float, action=DeprecatedAlias, new="--noise")
    p.add_argument("--sensitivity", type=float, default=None,
                   help="L2 sensitivity with --noise (default 1; --noise only)")
    add_delta(p, required=True)
    add_json(p)
    p.set_defaults(func=handler)


def handler(args) -> Result:
    """Compute epsilon; payload keys epsilon, mu, delta, delta_at_epsilon."""
    from semi_core._validation import check_delta, check_positive, check_real

    if (args.gdp_mu is None) == (args.noise is None):
        raise ValueError("give exactly one of --gdp-mu or --noise")
    delta = check_delta(args.delta, "--delta")
    if args.gdp_mu is not None:
        if args.sensitivity is not None:
            raise ValueError("--sensitivity does not apply to --gdp-mu (mu already includes "
                             "it; it is used with --noise only); remove it")
        mu = check_real(args.gdp_mu, "--gdp-mu")
        if mu < 0:
            raise ValueError(f"--gdp-mu must be >= 0, got {mu}")
        src = "--gdp-mu"
    else:
        sens = 1.0 if args.sensitivity is None else args.sensitivity
        mu = check_positive(sens, "--sensitivity") / check_positive(args.noise, "--noise")
        src = "--sensitivity / --noise"
    if not mu <= MAX_GDP_MU:
        raise ValueError(f"{src} gives mu = {mu:.3g}; mu must be in [0, {MAX_GDP_MU:g}]: "
                         "epsilon(delta) ~ mu^2/2 is beyond any meaningful privacy level and "
                         "beyond the solver's range")
    eps = gdp_epsilon(mu, delta)
    check = float(gdp_delta(eps, mu)) if (mu > 0 and eps != math.inf) else 0.0
    payload = {"epsilon": eps, "mu": mu, "delta": delta, "delta_at_epsilon": check}
    return Result(payload=payload,
                  text=f"mu = {mu:.6g}, delta = {delta:g}: epsilon = {eps:.10g}")

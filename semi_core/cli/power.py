"""`semi-core power`: closed-form power of a SeMI test at a target false-positive rate.

Example::

    semi-core power --n 10 --T 10 --mu 0 --sigma 1 --target 3 --fpr 0.01 --test semi-star --json

Payload: ``test``, ``n``, ``T``, ``d``, ``tau`` (the insertion time used), ``mahalanobis``,
``fpr``, ``tpr``, ``threshold``, ``alpha``, ``beta``.
"""

from __future__ import annotations

from semi_core import _params

from ._common import Result
from ._options import add_json, add_mechanism_args, mechanism_from_args, resolve_tau

__all__ = ["register", "run"]

_TESTS = {"semi-star": "semi-star", "final": "final", "max": "semi-max", "semi-max": "semi-max"}


def register(sub) -> None:
    """Add the ``power`` subcommand."""
    p = sub.add_parser("power", help="closed-form TPR at a given FPR (SeMI*, Final Observation, "
                                     "SeMI-max)",
                       description="Closed-form errors of the SeMI likelihood-ratio tests (seed "
                                   "§3, App. A-E) for Gaussian empirical means.")
    add_mechanism_args(p)
    p.add_argument("--fpr", type=float, default=_params.POWER_FPR,
                   help=f"target false-positive rate in (0, 1) (default {_params.POWER_FPR})")
    p.add_argument("--test", choices=sorted(_TESTS), default="semi-star")
    add_json(p)
    p.set_defaults(func=run)


def run(args) -> Result:
    """Threshold, alpha, beta and TPR of the chosen test."""
    from semi_core.stats import errors as E

    mech = mechanism_from_args(args)
    test = _TESTS[args.test]
    tau = resolve_tau(args.tau, mech.T, prior=True)
    tau_arg = None if isinstance(tau, str) else tau  # "uniform": the uniform law
    gamma = float(E.threshold(mech, args.fpr, test, tau_arg))
    a = float(E.alpha(mech, gamma, test, tau_arg))
    b = float(E.beta(mech, gamma, test, tau_arg))
    payload = {
        "test": test, "n": int(mech.n_t[0]), "T": mech.T, "d": mech.d, "tau": tau,
        "mahalanobis": float(mech.m_t[tau - 1 if isinstance(tau, int) else 0] ** 0.5),
        "fpr": args.fpr,
        "tpr": 1.0 - b, "threshold": gamma, "alpha": a, "beta": b,
    }
    text = (f"{test}: n={payload['n']} T={mech.T} d={mech.d} tau={tau} "
            f"Mahalanobis={payload['mahalanobis']:.4g}\n"
            f"  threshold gamma = {gamma:.6g}\n  alpha = {a:.6g}  beta = {b:.6g}\n"
            f"  TPR at FPR {args.fpr:g} = {1 - b:.6g}")
    return Result(payload, text)

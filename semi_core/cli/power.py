"""`semi-core power`: closed-form power of a SeMI test at a target false-positive rate."""

from __future__ import annotations

from ._common import Result, add_json_flag
from ._mech_args import add_mechanism_args, mechanism_from_args, parse_tau

_TESTS = {"semi-star": "semi-star", "final": "final", "max": "semi-max", "semi-max": "semi-max"}


def register(sub) -> None:
    p = sub.add_parser("power", help="closed-form TPR at a given FPR (SeMI*, Final Observation, "
                                     "SeMI-max)")
    add_mechanism_args(p)
    p.add_argument("--fpr", type=float, default=0.01, help="target false-positive rate in (0, 1)")
    p.add_argument("--test", choices=sorted(_TESTS), default="semi-star")
    add_json_flag(p)
    p.set_defaults(func=run)


def run(args) -> Result:
    from semi_core.stats import errors as E

    mech = mechanism_from_args(args)
    test = _TESTS[args.test]
    tau = parse_tau(args.tau, mech.T)
    gamma = float(E.threshold(mech, args.fpr, test, tau))
    a = float(E.alpha(mech, gamma, test, tau))
    b = float(E.beta(mech, gamma, test, tau))
    payload = {
        "test": test, "n": int(mech.n_t[0]), "T": mech.T, "d": mech.d,
        "mahalanobis": float(mech.m_t[0] ** 0.5), "fpr": args.fpr,
        "tpr": 1.0 - b, "threshold": gamma, "alpha": a, "beta": b,
    }
    text = (f"{test}: n={payload['n']} T={mech.T} d={mech.d} Mahalanobis={payload['mahalanobis']:.4g}\n"
            f"  threshold gamma = {gamma:.6g}\n  alpha = {a:.6g}  beta = {b:.6g}\n"
            f"  TPR at FPR {args.fpr:g} = {1 - b:.6g}")
    return Result(payload, text)

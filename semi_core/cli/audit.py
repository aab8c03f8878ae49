"""``semi-core audit``: certified lower bound on epsilon from a CSV of MI scores.

Example::

    semi-core audit --scores scores.csv --delta 1e-5 --failure-prob 0.05 --method dkw --json

``scores.csv`` has a header with columns ``score`` and ``member`` (1/0 or true/false); by
default higher scores mean "member" (``--higher-is nonmember`` for losses or distances, where
lower means member); ``-`` reads standard input; a UTF-8 byte-order mark (spreadsheet exports)
is accepted. The file is parsed with NumPy in bounded chunks
(:func:`semi_core._io.read_scores_csv`). ``--failure-prob`` is the failure probability of the
bound (in (0, 0.5]; ``--alpha`` is its deprecated alias).
Output keys: ``epsilon_lower_bound``, ``threshold``, ``tpr``, ``fpr``, the confidence bounds, the
``assumption`` the bound rests on (:class:`semi_core.audit.AuditResult`) and ``higher_is``;
``threshold`` is on the scale of the file (with ``--higher-is nonmember`` the test is
``score < threshold``).
"""

from __future__ import annotations

import numpy as np

from semi_core._io import MAX_CSV_BYTES, read_scores_csv
from semi_core.audit import epsilon_lower_bound
from semi_core.cli._common import Result
from semi_core.cli._options import add_delta, add_failure_prob, add_json, add_method, add_seed

__all__ = ["register", "handler", "read_scores_csv", "orient_scores", "MAX_CSV_BYTES"]

#: ``--higher-is``: which class the larger scores point to.
HIGHER_IS = ("member", "nonmember")


def orient_scores(member: np.ndarray, nonmember: np.ndarray, higher_is: str
                  ) -> tuple[np.ndarray, np.ndarray]:
    """Scores with "higher = member", the orientation every bound uses.

    ``higher_is="nonmember"`` (losses, distances: lower = member) negates both arrays, an
    exact and monotone map, so the tests ``score > threshold`` become ``-score > -threshold``.
    """
    if higher_is not in HIGHER_IS:
        raise ValueError(f"--higher-is must be one of {HIGHER_IS}, got {higher_is!r}")
    if higher_is == "member":
        return member, nonmember
    return -member, -nonmember


def register(subparsers) -> None:
    """Add the ``audit`` subcommand."""
    p = subparsers.add_parser(
        "audit", help="certified epsilon lower bound from member/non-member scores (CSV)",
        description="High-probability lower bound on epsilon (SeMI seed Lemma 2.1 and §5.1) "
                    "from a CSV with columns score,member. Methods: dkw (uniform DKW bands, "
                    "all thresholds), cp (Clopper-Pearson; split or pre-registered thresholds), "
                    "gdp (mu-GDP fit, converted to epsilon(delta); assumes a GDP mechanism).")
    p.add_argument("--scores", required=True, metavar="FILE.csv",
                   help="CSV with header columns score,member (member: 1/0 or true/false); "
                        "'-' reads standard input")
    p.add_argument("--higher-is", choices=HIGHER_IS, default="member",
                   help="which class larger scores point to: member (default: likelihood "
                        "ratios, confidences) or nonmember (losses, distances: lower = member)")
    add_delta(p, required=True)
    add_failure_prob(p, alpha_alias=True)
    add_method(p)
    p.add_argument("--sides", choices=("two", "one"), default="two",
                   help="two: both inequalities of Lemma 2.1; one: (TPR - delta)/FPR only")
    p.add_argument("--threshold", type=float, action="append", default=None,
                   help="cp only: pre-registered threshold (repeat for a Bonferroni grid); "
                        "default: choose on a random half, certify on the other")
    p.add_argument("--gdp-fit", choices=("tradeoff", "gaussian"), default=None,
                   help="gdp only: DKW trade-off fit (default) or equal-variance Gaussian fit")
    add_seed(p, help_suffix="; draws the cp split")
    add_json(p)
    p.set_defaults(func=handler)


def handler(args) -> Result:
    """Run the audit; payload = AuditResult fields."""
    from semi_core._validation import check_delta, check_failure_prob

    check_delta(args.delta, "--delta")  # before reading a large file
    check_failure_prob(args.failure_prob, "--failure-prob")
    if args.method != "gdp" and args.gdp_fit is not None:
        raise ValueError(f"--gdp-fit applies to --method gdp only, got --method {args.method}")
    if args.method != "cp" and args.threshold:
        raise ValueError(f"--threshold applies to --method cp only, got --method {args.method}")
    higher_is = args.higher_is
    mem, non = orient_scores(*read_scores_csv(args.scores), higher_is)
    sign = 1.0 if higher_is == "member" else -1.0
    thresholds = None if not args.threshold else [sign * t for t in args.threshold]
    res = epsilon_lower_bound(mem, non, delta=args.delta, failure_prob=args.failure_prob,
                              method=args.method, sides=args.sides, thresholds=thresholds,
                              seed=args.seed, gdp_fit=args.gdp_fit or "tradeoff")
    payload = res.to_dict()
    payload["threshold"] = sign * res.threshold + 0.0  # back on the file's scale (no -0.0)
    payload["higher_is"] = higher_is
    test = (f"score > {payload['threshold']:.6g}" if higher_is == "member"
            else f"score < {payload['threshold']:.6g} (lower = member)")
    text = (f"epsilon >= {res.epsilon_lower_bound:.6g} with probability >= {1 - res.failure_prob:g}"
            f" (method {res.method}, delta {res.delta:g})\n"
            f"  test: {test} ({res.direction})\n"
            f"  TPR {res.tpr:.4g} (lower bound {res.tpr_lower:.4g}), "
            f"FPR {res.fpr:.4g} (upper bound {res.fpr_upper:.4g})\n"
            f"  {res.n_member} member / {res.n_nonmember} non-member scores")
    if res.mu_lower is not None:
        text += f"\n  mu >= {res.mu_lower:.4g} (fit {res.mu_hat:.4g})"
    text += f"\n  assumes: {res.assumption_text} [{res.assumption}]"
    return Result(payload=payload, text=text)

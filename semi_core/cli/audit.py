"""``semi-core audit``: certified lower bound on epsilon from a CSV of MI scores.

Example::

    semi-core audit --scores scores.csv --delta 1e-5 --alpha 0.05 --method dkw --json

``scores.csv`` has a header with columns ``score`` and ``member`` (1/0 or true/false); higher
scores mean "member". ``--alpha`` is the failure probability of the bound (in (0, 0.5]).
Output keys: ``epsilon_lower_bound``, ``threshold``, ``tpr``, ``fpr`` and the confidence bounds
(:class:`semi_core.audit.AuditResult`).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from semi_core.audit import epsilon_lower_bound
from semi_core.cli._common import Result, add_json_flag

__all__ = ["register", "handler", "read_scores_csv"]

_TRUE = {"1", "true", "t", "yes", "y", "member", "in"}
_FALSE = {"0", "false", "f", "no", "n", "nonmember", "non-member", "out"}


def read_scores_csv(path: str) -> tuple[np.ndarray, np.ndarray]:
    """Read ``score,member`` rows; return (member scores, non-member scores).

    Raises ``FileNotFoundError`` for a missing file and ``ValueError`` naming the line for a
    missing column, an unparsable score (NaN is rejected later) or membership value.
    """
    p = Path(path)
    if not p.is_file():
        raise FileNotFoundError(f"--scores: no such file {path}")
    scores, member = [], []
    with p.open(newline="") as fh:
        reader = csv.DictReader(fh)
        cols = [c.strip().lower() for c in (reader.fieldnames or [])]
        if "score" not in cols or "member" not in cols:
            raise ValueError(f"--scores: CSV header must contain columns 'score' and 'member', "
                             f"got {reader.fieldnames}")
        key = {c.strip().lower(): c for c in reader.fieldnames}
        for i, row in enumerate(reader, start=2):
            raw_s, raw_m = row[key["score"]], row[key["member"]]
            try:
                scores.append(float(raw_s))
            except (TypeError, ValueError):
                raise ValueError(f"--scores line {i}: score {raw_s!r} is not a number") from None
            m = (raw_m or "").strip().lower()
            if m in _TRUE:
                member.append(True)
            elif m in _FALSE:
                member.append(False)
            else:
                raise ValueError(f"--scores line {i}: member must be 1/0 or true/false, "
                                 f"got {raw_m!r}")
    s = np.asarray(scores, dtype=float)
    b = np.asarray(member, dtype=bool)
    return s[b], s[~b]


def register(subparsers) -> None:
    """Add the ``audit`` subcommand."""
    p = subparsers.add_parser(
        "audit", help="certified epsilon lower bound from member/non-member scores (CSV)",
        description="High-probability lower bound on epsilon (SeMI seed Lemma 2.1 and §5.1) "
                    "from a CSV with columns score,member. Methods: dkw (uniform DKW bands, "
                    "all thresholds), cp (Clopper-Pearson; split or pre-registered thresholds), "
                    "gdp (mu-GDP fit, converted to epsilon(delta); assumes a GDP mechanism).")
    p.add_argument("--scores", required=True, metavar="FILE.csv",
                   help="CSV with header columns score,member (member: 1/0 or true/false)")
    p.add_argument("--delta", type=float, required=True, help="delta in [0, 1)")
    p.add_argument("--alpha", type=float, default=0.05,
                   help="failure probability of the bound, in (0, 0.5] (default 0.05)")
    p.add_argument("--method", choices=("dkw", "cp", "gdp"), default="dkw")
    p.add_argument("--sides", choices=("two", "one"), default="two",
                   help="two: both inequalities of Lemma 2.1; one: (TPR - delta)/FPR only")
    p.add_argument("--threshold", type=float, action="append", default=None,
                   help="cp only: pre-registered threshold (repeat for a Bonferroni grid); "
                        "default: choose on a random half, certify on the other")
    p.add_argument("--gdp-fit", choices=("tradeoff", "gaussian"), default="tradeoff",
                   help="gdp only: DKW trade-off fit (default) or equal-variance Gaussian fit")
    p.add_argument("--seed", type=int, default=0, help="seed of the cp split (default 0)")
    add_json_flag(p)
    p.set_defaults(func=handler)


def handler(args) -> Result:
    """Run the audit; payload = AuditResult fields."""
    mem, non = read_scores_csv(args.scores)
    res = epsilon_lower_bound(mem, non, delta=args.delta, failure_prob=args.alpha,
                              method=args.method, sides=args.sides, thresholds=args.threshold,
                              seed=args.seed, gdp_fit=args.gdp_fit)
    payload = res.to_dict()
    text = (f"epsilon >= {res.epsilon_lower_bound:.6g} with probability >= {1 - res.failure_prob:g}"
            f" (method {res.method}, delta {res.delta:g})\n"
            f"  test: score > {res.threshold:.6g} ({res.direction})\n"
            f"  TPR {res.tpr:.4g} (lower bound {res.tpr_lower:.4g}), "
            f"FPR {res.fpr:.4g} (upper bound {res.fpr_upper:.4g})\n"
            f"  {res.n_member} member / {res.n_nonmember} non-member scores")
    if res.mu_lower is not None:
        text += f"\n  mu >= {res.mu_lower:.4g} (fit {res.mu_hat:.4g}); assumes a mu-GDP mechanism"
    return Result(payload=payload, text=text)

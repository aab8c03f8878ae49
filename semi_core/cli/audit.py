"""``semi-core audit``: certified lower bound on epsilon from a CSV of MI scores.

Example::

    semi-core audit --scores scores.csv --delta 1e-5 --failure-prob 0.05 --method dkw --json

``scores.csv`` has a header with columns ``score`` and ``member`` (1/0 or true/false); higher
scores mean "member"; ``-`` reads standard input; a UTF-8 byte-order mark (spreadsheet exports)
is accepted. ``--failure-prob`` is the failure probability of the bound (in (0, 0.5];
``--alpha`` is its deprecated alias).
Output keys: ``epsilon_lower_bound``, ``threshold``, ``tpr``, ``fpr`` and the confidence bounds
(:class:`semi_core.audit.AuditResult`).
"""

from __future__ import annotations

import csv
import io
import sys
from pathlib import Path

import numpy as np

from semi_core.audit import epsilon_lower_bound
from semi_core.cli._common import Result
from semi_core.cli._options import add_delta, add_failure_prob, add_json, add_method, add_seed

__all__ = ["register", "handler", "read_scores_csv"]

_TRUE = {"1", "true", "t", "yes", "y", "member", "in"}
_FALSE = {"0", "false", "f", "no", "n", "nonmember", "non-member", "out"}


#: Largest CSV read (bytes): ~ 50 million rows of scores.
MAX_CSV_BYTES = 2 * 2**30


def read_scores_csv(path: str) -> tuple[np.ndarray, np.ndarray]:
    """Read ``score,member`` rows; return (member scores, non-member scores).

    ``path`` ``-`` reads standard input. The header is matched case- and space-insensitively;
    a UTF-8 byte-order mark is ignored; a repeated column (``member`` twice) is an error, not
    silently the last one. Raises ``FileNotFoundError`` for a missing file and ``ValueError``
    naming the line for a missing column, an unparsable score (NaN is rejected later) or
    membership value.
    """
    if path is None or not str(path).strip():
        raise ValueError("--scores must be a file path or '-' (standard input)")
    if str(path) == "-":
        raw = sys.stdin.buffer.read(MAX_CSV_BYTES + 1) if hasattr(sys.stdin, "buffer") else \
            sys.stdin.read(MAX_CSV_BYTES + 1).encode()
    else:
        p = Path(path)
        if not p.is_file():
            raise FileNotFoundError(f"--scores: no such file {path}")
        if p.stat().st_size > MAX_CSV_BYTES:
            raise ValueError(f"--scores: {path} is larger than {MAX_CSV_BYTES >> 30} GiB")
        raw = p.read_bytes()
    if len(raw) > MAX_CSV_BYTES:
        raise ValueError(f"--scores: input larger than {MAX_CSV_BYTES >> 30} GiB")
    try:
        text = raw.decode("utf-8-sig")  # strips a UTF-8 byte-order mark
    except UnicodeDecodeError as exc:
        raise ValueError(f"--scores: not UTF-8 text ({exc.reason} at byte {exc.start})") from None
    if "\x00" in text:
        raise ValueError("--scores: binary data (NUL bytes) in a CSV file")
    scores, member = [], []
    reader = csv.reader(io.StringIO(text, newline=""))
    header = next(reader, None)
    cols = [c.strip().lower() for c in (header or [])]
    if "score" not in cols or "member" not in cols:
        raise ValueError(f"--scores: CSV header must contain columns 'score' and 'member', "
                         f"got {header}")
    for name in ("score", "member"):
        if cols.count(name) > 1:
            raise ValueError(f"--scores: column {name!r} appears {cols.count(name)} times in "
                             f"the header {header}")
    i_s, i_m = cols.index("score"), cols.index("member")
    for i, row in enumerate(reader, start=2):
        if not row or all(not c.strip() for c in row):
            continue  # blank line
        if len(row) != len(cols):
            raise ValueError(f"--scores line {i}: {len(row)} fields, the header has "
                             f"{len(cols)}")
        raw_s, raw_m = row[i_s], row[i_m]
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
                   help="CSV with header columns score,member (member: 1/0 or true/false); "
                        "'-' reads standard input")
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
    mem, non = read_scores_csv(args.scores)
    res = epsilon_lower_bound(mem, non, delta=args.delta, failure_prob=args.failure_prob,
                              method=args.method, sides=args.sides, thresholds=args.threshold,
                              seed=args.seed, gdp_fit=args.gdp_fit or "tradeoff")
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

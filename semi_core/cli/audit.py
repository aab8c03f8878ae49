"""``semi-core audit``: certified lower bound on epsilon from member / non-member scores.

Example::

    semi-core audit --scores scores.csv --delta 1e-5 --failure-prob 0.05 --method dkw --json
    semi-core audit --scores run.npz --score-col loss --label-col is_member --lower-is-member

Inputs (:func:`semi_core._io.read_scores_file`): a CSV with a header (columns ``score`` and
``member`` by default, others named with ``--score-col`` / ``--label-col``; ``-`` reads standard
input; a UTF-8 byte-order mark is accepted; parsed with NumPy in bounded chunks), ``.npz``
(arrays of those names), ``.npy`` (a structured array with those fields, or ``(n, 2)`` rows of
``[score, label]``) or ``.parquet`` (needs pandas and pyarrow). Labels: 1/0 or true/false.
**Direction**: by default higher scores mean "member" (likelihood ratios, confidences);
``--higher-is nonmember`` (alias ``--lower-is-member``) for losses or distances.
``--failure-prob`` is the failure probability of the bound (in (0, 0.5]; ``--alpha`` is its
deprecated alias).
Output keys: ``epsilon_lower_bound``, ``threshold``, ``tpr``, ``fpr``, the confidence bounds, the
``assumption`` the bound rests on (:class:`semi_core.audit.AuditResult`), ``higher_is``,
``epsilon_max_certifiable`` (the largest bound these numbers of scores could give with the same
method, :meth:`semi_core.audit.ScoreAuditor.max_certifiable_epsilon`) and ``tpr_at_fpr``
(TPR at FPR 1 % and 0.1 % with exact Clopper-Pearson intervals at the threshold selected,
:meth:`semi_core.audit.ScoreAuditor.roc`); ``threshold`` is on the scale of the file (with
``--higher-is nonmember`` the test is ``score < threshold``).
"""

from __future__ import annotations

import numpy as np

from semi_core._io import MAX_CSV_BYTES, read_scores_csv, read_scores_file
from semi_core.audit.score_auditor import ScoreAuditor
from semi_core.cli._common import Result
from semi_core.cli._options import (
    add_delta,
    add_failure_prob,
    add_json,
    add_method,
    add_seed,
    add_tradeoff,
)

__all__ = ["register", "handler", "read_scores_csv", "read_scores_file", "orient_scores",
           "MAX_CSV_BYTES"]

#: ``--higher-is``: which class the larger scores point to.
HIGHER_IS = ("member", "nonmember")
#: FPR levels of the TPR-at-FPR report.
FPR_LEVELS = (0.01, 0.001)


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
        "audit", help="certified epsilon lower bound from member/non-member scores "
                      "(CSV, npy, npz, parquet)",
        description="High-probability lower bound on epsilon (SeMI seed Lemma 2.1 and §5.1) "
                    "from scores with membership labels; also TPR at FPR 1% and 0.1% with "
                    "Clopper-Pearson intervals and the largest epsilon the sample could "
                    "certify. By default HIGHER scores mean MEMBER; pass --lower-is-member for "
                    "losses. Methods valid for any mechanism: band (default), joint, dkw, cp; "
                    "for the canaries of one run (each included w.p. 1/2): one-run, "
                    "one-run-fdp (--tradeoff eps-delta by default; --tradeoff gdp assumes a "
                    "mu-GDP mechanism); gdp (mu-GDP fit, converted to epsilon(delta); assumes "
                    "a GDP mechanism). The output names the assumption of the bound.")
    p.add_argument("--scores", required=True, metavar="FILE",
                   help="scores with labels: CSV with a header (columns --score-col, "
                        "--label-col; '-' reads standard input), .npz (arrays of those names), "
                        ".npy (structured with those fields, or (n, 2) rows [score, label]) or "
                        ".parquet (needs pandas and pyarrow); labels 1/0 or true/false")
    p.add_argument("--score-col", default="score", metavar="NAME",
                   help="column / array holding the scores (default: score)")
    p.add_argument("--label-col", default="member", metavar="NAME",
                   help="column / array holding the membership labels (default: member)")
    direction = p.add_mutually_exclusive_group()
    direction.add_argument("--higher-is", choices=HIGHER_IS, default="member",
                           help="which class larger scores point to: member (default: "
                                "likelihood ratios, confidences) or nonmember (losses, "
                                "distances: lower = member)")
    direction.add_argument("--lower-is-member", dest="higher_is", action="store_const",
                           const="nonmember",
                           help="lower scores mean member (losses); same as --higher-is "
                                "nonmember")
    add_delta(p, required=True)
    add_failure_prob(p, alpha_alias=True)
    add_method(p)
    add_tradeoff(p)
    p.add_argument("--sides", choices=("two", "one"), default=None,
                   help="band, dkw, cp: two (default): both inequalities of Lemma 2.1; one: "
                        "(TPR - delta)/FPR only")
    p.add_argument("--threshold", type=float, action="append", default=None,
                   help="cp only: pre-registered threshold (repeat for a Bonferroni grid); "
                        "default: choose on a random half, certify on the other")
    p.add_argument("--gdp-fit", choices=("tradeoff", "gaussian"), default=None,
                   help="gdp only: DKW trade-off fit (default) or equal-variance Gaussian fit")
    add_seed(p, help_suffix="; draws the cp split (cp without --threshold)")
    add_json(p)
    p.set_defaults(func=handler, seed=None)


def handler(args) -> Result:
    """Run the audit; payload = AuditResult fields."""
    from semi_core._validation import check_delta, check_failure_prob

    check_delta(args.delta, "--delta")  # before reading a large file
    check_failure_prob(args.failure_prob, "--failure-prob")
    if args.method != "gdp" and args.gdp_fit is not None:
        raise ValueError(f"--gdp-fit applies to --method gdp only, got --method {args.method}")
    if args.method != "cp" and args.threshold:
        raise ValueError(f"--threshold applies to --method cp only, got --method {args.method}")
    if args.sides is not None and args.method not in ("band", "joint", "dkw", "cp"):
        raise ValueError(f"--sides applies to --method band, joint, dkw or cp only (the {args.method} "
                         f"bound has no one-sided form), got --method {args.method}")
    if args.tradeoff is not None and args.method != "one-run-fdp":
        raise ValueError(f"--tradeoff applies to --method one-run-fdp only, got --method "
                         f"{args.method}")
    if args.seed is not None and not (args.method == "cp" and not args.threshold):
        # one-run abstains on tied scores instead of breaking ties at random
        raise ValueError("--seed applies to --method cp without --threshold (the split) only; "
                         f"--method {args.method}"
                         f"{' with --threshold' if args.threshold else ''} draws nothing")
    if args.threshold:
        from semi_core._validation import check_real

        for t in args.threshold:
            check_real(t, "--threshold", finite=False)
    higher_is = args.higher_is
    mem, non = orient_scores(*read_scores_file(args.scores, score_col=args.score_col,
                                               label_col=args.label_col), higher_is)
    sign = 1.0 if higher_is == "member" else -1.0
    thresholds = None if not args.threshold else [sign * t for t in args.threshold]
    auditor = ScoreAuditor(mem, non)
    res = auditor.epsilon_lower_bound(delta=args.delta, failure_prob=args.failure_prob,
                                      method=args.method, sides=args.sides or "two",
                                      thresholds=thresholds,
                                      seed=0 if args.seed is None else args.seed,
                                      gdp_fit=args.gdp_fit or "tradeoff",
                                      **({} if args.tradeoff is None
                                         else {"tradeoff": args.tradeoff}))
    payload = res.to_dict()
    payload["threshold"] = sign * res.threshold + 0.0  # back on the file's scale (no -0.0)
    payload["higher_is"] = higher_is
    eps_max = auditor.max_certifiable_epsilon(delta=args.delta, failure_prob=args.failure_prob,
                                              method=args.method, tradeoff=args.tradeoff)
    payload["epsilon_max_certifiable"] = eps_max
    roc = auditor.roc(fpr=FPR_LEVELS, interval="binomial")
    payload["tpr_at_fpr"] = [{"fpr": f, "tpr": t, "interval": list(ci),
                              "confidence": roc.confidence, "resolvable": ok}
                             for f, t, ci, ok in zip(roc.fpr_levels, roc.tpr_at_fpr,
                                                     roc.tpr_at_fpr_interval, roc.resolvable,
                                                     strict=True)]
    payload["fpr_resolution"] = roc.fpr_resolution
    payload["auc"] = roc.auc
    test = (f"score > {payload['threshold']:.6g}" if higher_is == "member"
            else f"score < {payload['threshold']:.6g} (lower = member)")
    text = (f"epsilon >= {res.epsilon_lower_bound:.6g} with probability >= {1 - res.failure_prob:g}"
            f" (method {res.method}, delta {res.delta:g})\n"
            f"  test: {test} ({res.direction})\n"
            + _rates_line(res)
            +
            f"  {res.n_member} member / {res.n_nonmember} non-member scores: the largest "
            f"epsilon they could certify (method {res.method}) is {eps_max:.4g}")
    for row in payload["tpr_at_fpr"]:
        lo, hi = row["interval"]
        text += (f"\n  TPR at FPR {100 * row['fpr']:g}%: {row['tpr']:.4g} "
                 f"[{lo:.4g}, {hi:.4g}] ({100 * row['confidence']:g}% Clopper-Pearson)"
                 + ("" if row["resolvable"] else
                    f" * below the FPR resolution 1/{res.n_nonmember}: TPR at FPR 0"))
    text += f"\n  AUC {roc.auc:.4g}"
    if res.mu_lower is not None:
        text += f"\n  mu >= {res.mu_lower:.4g} (fit {res.mu_hat:.4g})"
    text += f"\n  assumes: {res.assumption_text} [{res.assumption}]"
    return Result(payload=payload, text=text)


def _rates_line(res) -> str:
    """The text line on what the bound rests on: rate bounds, guesses, or the joint test."""
    if res.tpr_lower is not None:
        return (f"  TPR {res.tpr:.4g} (lower bound {res.tpr_lower:.4g}), "
                f"FPR {res.fpr:.4g} (upper bound {res.fpr_upper:.4g})\n")
    if res.n_guesses is not None:
        return f"  {res.n_correct} of {res.n_guesses} guesses correct\n"
    return (f"  TPR {res.tpr:.4g}, FPR {res.fpr:.4g} (one exact test of both rates, one of "
            f"{res.n_thresholds} pre-registered thresholds; no separate rate bounds)\n")

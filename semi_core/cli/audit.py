"""``semi-core audit``: certified lower bound on epsilon from member / non-member scores.

Example::

    semi-core audit --scores scores.csv --delta 1e-5 --failure-prob 0.05 --method dkw --json
    semi-core audit --scores run.npz --score-col loss --label-col is_member --lower-is-member

Inputs (:func:`semi_core._io.read_scores_file`): a CSV with a header (columns ``score`` and
``member`` by default, others named with ``--score-col`` / ``--label-col``; ``-`` reads standard
input; a UTF-8 byte-order mark is accepted; parsed with NumPy in bounded chunks), ``.npz``
(arrays of those names), ``.npy`` (a structured array with those fields, or ``(n, 2)`` rows of
``[score, label]``) or ``.parquet`` (needs pandas and pyarrow). Labels: 1/0 or true/false.
Two more forms: ``--scores FILE --member-col loss_train --nonmember-col loss_test`` reads two
columns side by side, of unequal lengths with the shorter padded by empty or NaN cells (as
tf-privacy's ``AttackInputData`` and pandas write them; padding is accepted only there and said
in the output); ``--member-scores FILE --nonmember-scores FILE`` reads each class from a file of
its own (:func:`semi_core._io.read_score_columns`, :func:`semi_core._io.read_score_list`). An ML
Privacy Meter ``attack_result_<i>.npz`` (arrays ``scores``, ``memberships``) is read as such.
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
``--higher-is nonmember`` the test is ``score < threshold``). ``input`` says what was read and
``notes`` what a reader must know beside the bound (also printed as ``note:`` lines): padding
read, a bound from the test's other tail ((TNR - delta)/FNR), a one-run file (ML Privacy Meter:
one target model's records) audited with a method that assumes independent games, scores named
like losses read as "higher = member".
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from semi_core._io import MAX_CSV_BYTES, read_scores_csv, read_scores_file
from semi_core.audit.score_auditor import ScoreAuditor
from semi_core.cli._common import Result, UsageError
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
                    "losses. Methods valid for any mechanism: joint (default), band, dkw, cp; "
                    "for the canaries of one run (each included w.p. 1/2): one-run, "
                    "one-run-fdp (--tradeoff eps-delta by default; --tradeoff gdp assumes a "
                    "mu-GDP mechanism); gdp (mu-GDP fit, converted to epsilon(delta); assumes "
                    "a GDP mechanism). The output names the assumption of the bound.")
    _add_inputs(p)
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
                   help="joint, band, dkw, cp: two (default): both inequalities of Lemma 2.1; one: "
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
    raw_mem, raw_non, source = read_inputs(args)
    mem, non = orient_scores(raw_mem, raw_non, higher_is)
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
    notes = _notes(source, res, higher_is)
    payload["input"] = source
    payload["notes"] = notes
    text += "".join(f"\n  note: {n}" for n in notes)
    return Result(payload=payload, text=text)


def _add_inputs(p) -> None:
    """The input flags: one labelled file, two columns side by side, or two files."""
    p.add_argument("--scores", metavar="FILE",
                   help="scores with labels: CSV with a header (columns --score-col, "
                        "--label-col; '-' reads standard input), .npz (arrays of those names), "
                        ".npy (structured with those fields, or (n, 2) rows [score, label]) or "
                        ".parquet (needs pandas and pyarrow); labels 1/0 or true/false. With "
                        "--member-col/--nonmember-col: two score columns side by side instead")
    p.add_argument("--score-col", default=None, metavar="NAME",
                   help="column / array holding the scores (default: score; with "
                        "--member-scores/--nonmember-scores: the file's only column)")
    p.add_argument("--label-col", default=None, metavar="NAME",
                   help="column / array holding the membership labels (default: member)")
    p.add_argument("--member-col", metavar="NAME",
                   help="with --scores: the column of member scores (e.g. loss_train); "
                        "with --nonmember-col, two columns of unequal length side by side, the "
                        "shorter padded with empty or NaN cells (tf-privacy's AttackInputData)")
    p.add_argument("--nonmember-col", metavar="NAME",
                   help="with --scores: the column of non-member scores (e.g. loss_test)")
    p.add_argument("--member-scores", metavar="FILE",
                   help="member scores in a file of their own (.npy, .npz, .parquet, a CSV "
                        "column or one number a line); with --nonmember-scores, instead of "
                        "--scores")
    p.add_argument("--nonmember-scores", metavar="FILE",
                   help="non-member scores in a file of their own (as --member-scores)")


def _is_mlpm(path) -> bool:
    """An ML Privacy Meter attack result (``attack_result_<i>.npz``: arrays ``scores`` and
    ``memberships`` beside its ROC), which holds the records of one target model."""
    if path is None or not str(path).lower().endswith(".npz"):
        return False
    try:
        with np.load(path, allow_pickle=False) as z:
            return {"scores", "memberships"} <= set(z.files)
    except Exception:  # noqa: BLE001 - unreadable: the reader says why
        return False


def read_inputs(args) -> tuple[np.ndarray, np.ndarray, dict]:
    """Member and non-member scores from the input flags, and what was read (``input``)."""
    from semi_core._io import read_score_columns, read_score_list

    # a wrong combination of input flags is a usage error (as a missing required flag)
    usage = "semi-core audit"

    cols = (args.member_col, args.nonmember_col)
    files = (args.member_scores, args.nonmember_scores)
    if any(files):
        if args.scores is not None or not all(files):
            raise UsageError("--member-scores and --nonmember-scores go together, instead of "
                             "--scores", usage)
        if args.label_col is not None or any(cols):
            raise UsageError("--label-col, --member-col and --nonmember-col apply to --scores "
                             "only", usage)
        mem = read_score_list(files[0], name="--member-scores", score_col=args.score_col)
        non = read_score_list(files[1], name="--nonmember-scores", score_col=args.score_col)
        return mem, non, {"form": "two-files", "member_scores": str(files[0]),
                          "nonmember_scores": str(files[1])}
    if args.scores is None:
        raise UsageError("name the scores: --scores FILE (labelled rows, or two columns with "
                         "--member-col/--nonmember-col) or --member-scores FILE "
                         "--nonmember-scores FILE", usage)
    if any(cols):
        if not all(cols):
            raise UsageError("--member-col and --nonmember-col go together", usage)
        if args.label_col is not None or args.score_col is not None:
            raise UsageError("--member-col/--nonmember-col name the two score columns; "
                             "--score-col and --label-col do not apply", usage)
        mem, non, padding = read_score_columns(args.scores, *cols)
        return mem, non, {"form": "two-columns", "scores": str(args.scores),
                          "member_col": cols[0], "nonmember_col": cols[1],
                          "padding": padding}
    score_col, label_col = args.score_col or "score", args.label_col or "member"
    mlpm = _is_mlpm(args.scores)
    if mlpm and args.score_col is None and args.label_col is None:
        score_col, label_col = "scores", "memberships"
    mem, non = read_scores_file(args.scores, score_col=score_col, label_col=label_col)
    return mem, non, {"form": "labelled", "scores": str(args.scores), "score_col": score_col,
                      "label_col": label_col,
                      "ml_privacy_meter": mlpm}


def _notes(source: dict, res, higher_is: str) -> list[str]:
    """What a reader must know beside the bound: padding read, the tail the bound came from,
    a one-run file audited as independent games, losses read as "higher = member"."""
    notes = []
    for col, n in source.get("padding", {}).items():
        if n:
            notes.append(f"column {col!r}: its last {n} cells are empty or NaN and were read as "
                         "padding (the two columns have unequal lengths)")
    if res.direction == "tnr/fnr" and res.epsilon_lower_bound > 0:
        notes.append("the bound comes from the test's other tail: the ratio (TNR - delta) / FNR "
                     "(Lemma 2.1's second inequality): scores on the non-member side of the "
                     "threshold are much rarer among members than among non-members; TPR and "
                     "FPR near 1 are FNR and TNR near 0")
    if source.get("ml_privacy_meter") and not res.assumption.startswith("one-run"):
        notes.append(f"{source['scores']} looks like an ML Privacy Meter attack result (arrays "
                     "'scores', 'memberships'): the records of one target model, i.e. one "
                     f"training run (a one-run setting), while method {res.method} assumes "
                     "independent games (one training run per score); use --method one-run "
                     "(valid when each record was included independently with probability "
                     "1/2) or read this bound as heuristic")
    names = [Path(str(source.get(k) or "")).name
             for k in ("member_col", "nonmember_col", "score_col", "member_scores",
                       "nonmember_scores")]
    if higher_is == "member" and any("loss" in str(n).lower() for n in names):
        notes.append("the scores are named like losses; losses are lower for members: pass "
                     "--lower-is-member if so (read here as higher = member)")
    return notes


def _rates_line(res) -> str:
    """The text line on what the bound rests on: rate bounds, guesses, or the joint test."""
    if res.tpr_lower is not None:
        return (f"  TPR {res.tpr:.4g} (lower bound {res.tpr_lower:.4g}), "
                f"FPR {res.fpr:.4g} (upper bound {res.fpr_upper:.4g})\n")
    if res.n_guesses is not None:
        return f"  {res.n_correct} of {res.n_guesses} guesses correct\n"
    return (f"  TPR {res.tpr:.4g}, FPR {res.fpr:.4g} (one exact test of both rates, one of "
            f"{res.n_thresholds} pre-registered thresholds; no separate rate bounds)\n")

"""``semi-core updates``: membership and entry inference from model updates (Jagielski et al.).

Example::

    semi-core updates --dataset digits --model logreg --update sgd-new --k 1 --n-up 10 \\
        --score loss --combiner diff --threshold-rule batch --trials 20 --seed 0 --json

Your data: ``--data-file FILE`` replaces the bundled digits: a ``.csv`` / ``.txt`` of comma-separated
numbers, one record per line (a first line of column names is a header), the label in column
``--label-column`` (an index, default 0, Purchase-100 style, or a header name); an ``.npz``
with arrays ``X`` (N, p) and ``y`` (N,); or a directory holding an IDX pair
``train-images-idx3-ubyte`` / ``train-labels-idx1-ubyte`` (``.gz`` allowed, MNIST /
Fashion-MNIST layout, pixels scaled to [0, 1]). Features are used as given (the learning rates
are tuned for features in [0, 1]); labels are mapped to 0..K-1. Nothing is downloaded.

Trains ``--trials`` runs of Alg. 1 (base model on ``--n0`` records, ``--k`` updates of
``--n-up`` records each, SGD-New or SGD-Full; plus one shadow run per trial and, for
``--score lira``, ``--n-ref`` reference runs), then attacks: Back-Front (membership; the single
update attack when ``k = 1``) with the chosen combiner and threshold rule, and Delta with
top-``n_up`` assignment (entry inference). Payload: ``mi_accuracy``, ``entry_accuracy``,
``delta_mi_accuracy``, ``precision_at_10pct`` / ``recall_at_10pct`` (each ``{mean, se, n}``
over trials), ``entry_baselines`` (random 1/(2k), generic p/k), ``notes`` (every metric averaged over fewer
trials than were run, e.g. a precision undefined where no candidate was called IN), ``auc`` (per-trial mean and SE,
plus pooled with a bootstrap interval), ``tpr_at_fpr`` (pooled, intervals), ``no_update``
baselines on the final model (``loss``: a *median* threshold on the loss, not Yeom et al.'s
average-training-loss threshold; ``gap``; ``lira``; ``rules`` says which is which),
``seconds``. With ``--sigma-dp > 0`` the update
is DP-SGD (clipping norm ``--clip``, default 1; ``--clip`` without ``--sigma-dp`` is refused)
and ``dp`` carries the update's exact epsilon and the certified lower bound from one fixed
canary per run (``semi_core.audit.bounds.epsilon_lower_bound``), whose games the one runner
plays on the executor of ``--threads`` / ``--workers`` / ``--scheduler`` (the result does not
depend on it). ``--sigma-dp`` is refused when the update would be mu-GDP with mu > 1e6 (no
privacy left to audit) or when ``sigma_dp * clip > 1e6``. Needs the torch extra.
"""

from __future__ import annotations

import argparse
import math

from semi_core.cli._common import Result
from semi_core.cli._options import (
    DeprecatedAlias,
    add_delta,
    add_executor_args,
    add_json,
    add_progress,
    add_seed,
    executor_from_args,
    positive_int,
    reporter_from_args,
)

__all__ = ["register", "handler"]


def _unit(text: str) -> float:
    try:
        v = float(text)
    except ValueError:
        raise ValueError(f"--shift-alpha must be a number in [0, 1], got {text!r}") from None
    if not (0.0 <= v <= 1.0):
        raise ValueError(f"--shift-alpha must be in [0, 1], got {text}")
    return v


def _column(text: str) -> int | str:
    """--label-column: an integer index, or else a column name from the file's header."""
    try:
        return int(text)
    except ValueError:
        if not text.strip():
            raise argparse.ArgumentTypeError("an index or a header name, got ''") from None
        return text


def register(subparsers) -> None:
    """Add the ``updates`` subcommand."""
    p = subparsers.add_parser(
        "updates", help="membership / entry inference from several model updates",
        description="SGD-New / SGD-Full updates of a digits model; ScoreDiff / ScoreRatio on "
                    "LOSS or offline-LiRA scores; Batch / Transfer / Rank thresholds; "
                    "Back-Front and Delta attacks; metrics with standard errors over trials.")
    p.add_argument("--dataset", default="digits", choices=["digits"],
                   help="bundled data set (ignored with --data-file)")
    p.add_argument("--data", dest="data", action=DeprecatedAlias, new="--data-file")
    p.add_argument("--data-file", dest="data", default=None, metavar="FILE",
                   help="your data instead: .csv/.txt (label column --label-column), .npz "
                        "(X, y) or a directory with an IDX pair train-images-idx3-ubyte / "
                        "train-labels-idx1-ubyte")
    p.add_argument("--label-column", type=_column, default=None,
                   help="--data-file .csv/.txt: the label's column, an index (default 0; "
                        "negative counts from the end) or a name from the file's header line")
    p.add_argument("--model", default="logreg", choices=["logreg", "mlp"])
    p.add_argument("--update", default="sgd-new", choices=["sgd-new", "sgd-full"])
    p.add_argument("--k", type=positive_int, default=1, help="number of updates (1..50)")
    p.add_argument("--n-up", type=positive_int, default=10, help="records per update (>= 2)")
    p.add_argument("--n0", type=positive_int, default=300, help="base training set size")
    p.add_argument("--score", default="loss", choices=["loss", "lira"])
    p.add_argument("--combiner", default="diff", choices=["diff", "ratio"])
    p.add_argument("--threshold-rule", dest="threshold", default="batch",
                   choices=["batch", "transfer", "rank"],
                   help="how the membership threshold is set: batch, transfer or rank")
    p.add_argument("--threshold", dest="threshold", action=DeprecatedAlias,
                   new="--threshold-rule", choices=["batch", "transfer", "rank"])
    p.add_argument("--delta-collisions", default="exclusive",
                   choices=["exclusive", "argmax", "index-order"],
                   help="Delta: a point several updates would take enters the first by pair "
                        "score, each update then holding exactly n_up (exclusive); each "
                        "update's own top n_up with a colliding point in its best one (argmax); "
                        "or updates filled in index order, each taking its top n_up of the "
                        "points not yet taken (index-order, the authors' code)")
    p.add_argument("--trials", type=positive_int, default=20, help="independent runs (>= 2)")
    p.add_argument("--n-ref", type=positive_int, default=8,
                   help="offline-LiRA reference runs (>= 2; --score lira)")
    p.add_argument("--shift-alpha", type=_unit, default=0.0,
                   help="distribution shift of the update data (0 = none; > 0: binary task, "
                        "update/test points from (1-alpha) source + alpha target subclasses)")
    p.add_argument("--shift", dest="shift", action=DeprecatedAlias, new="--shift-kind",
                   choices=["subpopulation", "subpop-hard", "subpop-easy", "covariate-hard",
                            "covariate-easy"])
    p.add_argument("--shift-kind", dest="shift", default="subpopulation",
                   choices=["subpopulation", "subpop-hard", "subpop-easy", "covariate-hard",
                            "covariate-easy"],
                   help="with --shift-alpha > 0: subpopulation (digit subclasses "
                        "{0,1,2|5,6,7} -> {3,4|8,9}), its Hard / Easy pairs (targets farthest "
                        "/ nearest to sources 0 and 1), or covariate shift (Hard: inverted "
                        "intensities; Easy: N(0, 0.1^2) pixel noise)")
    p.add_argument("--sigma-dp", type=float, default=0.0,
                   help="DP-SGD noise multiplier of the update (0 = plain SGD)")
    p.add_argument("--clip", type=float, default=None, help="DP-SGD clipping norm (only with "
                   "--sigma-dp > 0; default 1)")
    add_delta(p, default=1e-4, note=" (the DP audit of the update)")
    add_executor_args(p)
    add_seed(p)
    add_progress(p)
    add_json(p)
    p.set_defaults(func=handler)


def handler(args) -> Result:
    """Run the experiment; see the module docstring for the payload."""
    from semi_core._extras import extra_needed

    with extra_needed("updates"):  # torch is an optional extra
        import torch

        from semi_core.attacks.updates import UpdateConfig, run_experiment, summarize
        from semi_core.attacks.updates.dp import dp_audit
        from semi_core.attacks.updates.experiment import check_training_work, shared_executor
    from semi_core._validation import check_delta

    check_delta(args.delta, "--delta")  # validated even when no DP audit runs
    if not (math.isfinite(args.sigma_dp) and args.sigma_dp >= 0):
        raise ValueError(f"--sigma-dp must be finite and >= 0, got {args.sigma_dp}")
    if args.clip is not None and args.sigma_dp == 0:
        raise ValueError("--clip applies only to a DP update: give --sigma-dp > 0 with it")
    clip = 1.0 if args.clip is None else args.clip
    if args.sigma_dp > 0 and not (math.isfinite(clip) and clip > 0):
        raise ValueError(f"--clip must be finite and > 0, got {clip}")
    if args.trials < 2:
        raise ValueError(f"--trials must be >= 2 (standard errors over trials), got {args.trials}")
    if args.n_up < 2:
        raise ValueError(f"--n-up must be >= 2, got {args.n_up}")
    if args.k > 50:
        raise ValueError(f"--k must be in 1..50, got {args.k}")
    if args.n_ref < 2:
        raise ValueError(f"--n-ref must be >= 2, got {args.n_ref}")
    if args.label_column is not None and (
            args.data is None or not str(args.data).lower().endswith((".csv", ".txt"))):
        raise ValueError("--label-column applies only to --data-file FILE.csv / .txt")
    if args.data is not None:
        from pathlib import Path

        if not Path(args.data).exists():
            raise FileNotFoundError(f"--data-file: no such file or directory: {args.data}")
    executor = executor_from_args(args)
    torch.set_num_threads(1)
    cfg = UpdateConfig(dataset="file" if args.data is not None else args.dataset,
                       data=args.data,
                       label_column=0 if args.label_column is None else args.label_column,
                       model=args.model,
                       update=args.update, k=args.k,
                       n_up=args.n_up, n0=args.n0, trials=args.trials, n_ref=args.n_ref,
                       shift_alpha=args.shift_alpha, shift=args.shift,
                       clip=clip if args.sigma_dp > 0 else None, sigma_dp=args.sigma_dp,
                       seed=args.seed)
    if args.sigma_dp > 0:  # refuse unbounded DP-audit work before any training
        check_training_work(cfg, 200, "the DP-update audit: training the runs")
    with shared_executor(executor) as ex:  # one Dask cluster for every game of the command
        run = run_experiment(cfg, scores=(args.score,), executor=ex,
                             progress=reporter_from_args(args))
        out = summarize(run, score=args.score, combiner=args.combiner,
                        threshold=args.threshold, collisions=args.delta_collisions)
        if args.sigma_dp > 0:
            out["dp"] = dp_audit(cfg, delta=args.delta, combiner=args.combiner, executor=ex)
    mi, en = out["mi_accuracy"], out["entry_accuracy"]
    text = (f"{args.update}, k={args.k}, n_up={args.n_up}, {args.score}/{args.combiner}/"
            f"{args.threshold}, {args.trials} trials: MI accuracy {mi['mean']:.3f} +- "
            f"{mi['se']:.3f}; entry accuracy {en['mean']:.3f} +- {en['se']:.3f} (random "
            f"{out['entry_baselines']['random']:.3f}); AUC {out['auc']['pooled']:.3f}; "
            f"no-update Loss (median threshold) {out['no_update']['loss']['mean']:.3f}; "
            f"{out['seconds']:.1f} s" + "".join(f"\nnote: {n}" for n in out["notes"]))
    return Result(payload=out, text=text)

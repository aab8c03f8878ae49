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

``--study`` runs one of the seed's single-update studies instead (same data, ``--update``,
``--n-up``, ``--n0``, ``--trials``, ``--seed`` and executor flags; options the study would ignore
are refused): ``shift`` -- Tables 4 / 5 / 10, ScoreDiff and ScoreRatio (loss, Batch) after the
Hard / Easy subpopulation and covariate shifts at each of ``--alphas`` (``--n0`` default 60);
with ``--shift-pairs easy=S:T,S:T hard=S:T,S:T`` your own subclass pairs instead (App. C's
CINIC-10 Tables 8 / 9 on your data: one pair per class of the task, the records of each source
label the class's source, of each target label its shift; the new / old accuracies are §5.6's
disparate impact); ``chen`` -- Q7, Chen et al.'s SortedDiff with ``--n-shadow`` shadow runs
(best of logistic regression / decision tree / random forest), its improved form on SortedDiff +
ScoreDiff + ScoreRatio with the weight ratio (the seed's 7.5x is its FMNIST figure), and ScoreDiff /
ScoreRatio with one shadow run; ``dp-protocol`` -- §5.7 with the seed's protocol, precision at
the 10 % rule pooled over the models -> Clopper-Pearson epsilon lower bound (98 %) for each of
``--sigmas`` (clip ``--clip``, default 0.5), beside the update's epsilon from the seed's RDP
accounting and from our exact GDP; ``small-data`` -- Fig. 9, a model trained from scratch on
``n`` records (no-update attack) against one updated with ``n`` (update attack), for each of
``--sizes`` (digits). Example::

    semi-core updates --study chen --n-up 10 --trials 30 --n-shadow 30 --json
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


def _pairs(text: str) -> tuple[str | None, tuple[tuple[int, int], ...]]:
    """--shift-pairs: ``[NAME=]S:T,S:T,...`` (labels 0..K-1 in the file's sorted order)."""
    name, _, body = text.rpartition("=")
    try:
        prs = tuple(tuple(int(v) for v in pr.split(":")) for pr in body.split(","))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected [NAME=]S:T,S:T,... with integer labels, got {text!r}") from None
    if any(len(pr) != 2 for pr in prs):
        raise argparse.ArgumentTypeError(f"expected [NAME=]S:T,S:T,..., got {text!r}")
    return (name or None), prs


def _column(text: str) -> int | str:
    """--label-column: an integer index, or else a column name from the file's header."""
    try:
        return int(text)
    except ValueError:
        if not text.strip():
            raise argparse.ArgumentTypeError("an index or a header name, got ''") from None
        return text


#: ``--study`` choices: the seed's single-update studies run by this command.
STUDIES = ("shift", "chen", "dp-protocol", "small-data")


def _check_study_args(args) -> None:
    """--study runs single-update studies with their own grid: refuse the options that would be
    ignored, and the study options without --study."""
    own = {"--alphas": (args.alphas, "shift"), "--n-shadow": (args.n_shadow, "chen"),
           "--sigmas": (args.sigmas, "dp-protocol"), "--sizes": (args.sizes, "small-data")}
    for flag, (value, study) in own.items():
        if value is not None and args.study != study:
            raise ValueError(f"{flag} applies only to --study {study}")
    if args.study is None:
        if (args.shift == "subpop-pairs") != (args.shift_pairs is not None):
            raise ValueError("--shift-pairs goes with --shift-kind subpop-pairs (or --study "
                             "shift) and subpop-pairs needs --shift-pairs")
        if args.shift_pairs is not None and (len(args.shift_pairs) != 1
                                             or args.shift_pairs[0][0] is not None):
            raise ValueError("--shift-kind subpop-pairs takes one unnamed set: --shift-pairs "
                             "S:T,S:T,...")
        if args.shift_pairs is not None and args.shift_alpha == 0:
            raise ValueError("--shift-pairs needs --shift-alpha > 0 (the share of shifted "
                             "records in the update and test points)")
        _check_pairs(args)
        return
    if args.shift_pairs is not None:
        if args.study != "shift":
            raise ValueError("--shift-pairs applies to --shift-kind subpop-pairs or "
                             "--study shift")
        names = [n or f"set{i + 1}" for i, (n, _) in enumerate(args.shift_pairs)]
        if len(set(names)) != len(names):
            raise ValueError(f"--shift-pairs: the sets need distinct names, got {names}")
        _check_pairs(args)
    ignored = {"--k": args.k != 1, "--score": args.score != "loss",
               "--combiner": args.combiner != "diff", "--threshold-rule": args.threshold != "batch",
               "--delta-collisions": args.delta_collisions != "exclusive",
               "--shift-alpha": args.shift_alpha != 0.0, "--sigma-dp": args.sigma_dp != 0.0,
               "--shift-kind": args.shift != "subpopulation"}
    bad = [f for f, given in ignored.items() if given]
    if bad:
        raise ValueError(f"--study {args.study} runs one update with its own attacks and grid; "
                         f"{', '.join(bad)} would be ignored: leave "
                         f"{'it' if len(bad) == 1 else 'them'} out")
    if args.clip is not None and args.study != "dp-protocol":
        raise ValueError("--clip applies to --sigma-dp or --study dp-protocol")
    if args.study == "small-data" and (args.n_up != 10 or args.n0 is not None):
        raise ValueError("--study small-data sets the sizes with --sizes (the updated models "
                         "keep n0 = 300): leave --n-up and --n0 out")
    if args.study == "small-data" and args.data is not None:
        raise ValueError("--study small-data runs on the bundled digits; --data-file applies "
                         "to the other studies")
    if args.sizes is not None and min(args.sizes) < 2:
        raise ValueError(f"--sizes must be >= 2, got {args.sizes}")
    if args.n_shadow is not None and not (2 <= args.n_shadow <= 1000):
        raise ValueError(f"--n-shadow must be in 2..1000, got {args.n_shadow}")
    if args.alphas is not None and any(a == 0.0 for a in args.alphas):
        raise ValueError(f"--alphas must be in (0, 1], got {args.alphas}")
    if args.sigmas is not None and any(not (math.isfinite(x) and x > 0) for x in args.sigmas):
        raise ValueError(f"--sigmas must be finite and > 0, got {args.sigmas}")


def _check_pairs(args) -> None:
    if args.shift_pairs is None:
        return
    from semi_core.attacks.updates.experiment.config import check_shift_pairs

    for name, prs in args.shift_pairs:
        check_shift_pairs(prs, "--shift-pairs" + (f" {name}" if name else ""))


def _run_study(args, executor) -> Result:
    """``--study``: the seed's shift tables, Chen et al.'s comparison or the DP protocol."""
    import warnings

    with extra_needed_updates():
        from semi_core.attacks.updates import UpdateConfig
        from semi_core.attacks.updates.chen import chen_comparison
        from semi_core.attacks.updates.dp import dp_protocol_sweep
        from semi_core.attacks.updates.experiment import shared_executor
        from semi_core.attacks.updates.studies import (
            SEED_NUMBERS,
            SHIFT_KINDS,
            shift_tables,
            small_dataset_curve,
        )

    data = {"dataset": "file" if args.data is not None else args.dataset, "data": args.data,
            "label_column": 0 if args.label_column is None else args.label_column}
    if args.optimizer != "sgd":
        raise ValueError("--study runs the seed's studies with SGD as the seed ran them; "
                         "--optimizer adam applies to the single experiment")
    n0 = args.n0 if args.n0 is not None else (60 if args.study == "shift" else 300)
    lines = []
    with shared_executor(executor) as ex:
        if args.study == "shift":
            sets = {n or f"set{i + 1}": prs for i, (n, prs) in enumerate(args.shift_pairs or ())}
            out = shift_tables(updates=(args.update,), alphas=tuple(args.alphas or
                                                                     (0.2, 0.6, 1.0)),
                               shifts=() if sets else SHIFT_KINDS, pair_sets=sets or None,
                               trials=args.trials, seed=args.seed, n0=n0, n_up=args.n_up,
                               data=args.data, label_column=data["label_column"], executor=ex,
                               progress=reporter_from_args(args))
            tabs = ("table4_sgd_new", "table5_sgd_new", "table9_sgd_new") \
                if args.update == "sgd-new" else ("table10_sgd_full",)
            seed_acc = {k: v for t in tabs for k, v in SEED_NUMBERS[t].items()}
            for r in out["rows"]:
                sv = seed_acc.get(r["shift"], {}).get(f"{r['alpha']:g}")
                no = r["ratio"]["new_old"]
                lines.append(f"{r['update']} {r['shift']} alpha={r['alpha']:g}: accuracy diff "
                             f"{r['diff']['mi_accuracy']['mean']:.3f}, ratio "
                             f"{r['ratio']['mi_accuracy']['mean']:.3f} (new / old "
                             + " / ".join("-" if no[g]["mean"] is None else
                                          f"{no[g]['mean']:.3f}" for g in ("new", "old"))
                             + ")" + (f"; seed {sv[0]:.3f}, {sv[1]:.3f}" if sv else ""))
        elif args.study == "chen":
            cfg = UpdateConfig(update=args.update, n_up=args.n_up, n0=n0, trials=args.trials,
                               seed=args.seed, **data)
            out = chen_comparison(cfg, n_shadow=args.n_shadow or 30, executor=ex)
            for name, v in out["attacks"].items():
                if "accuracy" in v:
                    lines.append(f"{name}: accuracy {v['accuracy']['mean']:.3f} +- "
                                 f"{v['accuracy']['se']:.3f}")
            w = out["attacks"]["improved_weights"]
            lines.append("improved Chen: our features weigh "
                         + ("-" if w["ratio"] is None else f"{w['ratio']:.2f}x")
                         + " one SortedDiff feature (the seed's 7.5x is its FMNIST figure)")
        elif args.study == "small-data":
            out = small_dataset_curve(tuple(args.sizes or (10, 20, 40, 80)),
                                      updates=(args.update,), trials=args.trials,
                                      seed=args.seed, progress=reporter_from_args(args))
            for r in out["rows"]:
                lines.append(f"n={r['n']}: trained on n records, no-update attack "
                             f"{r['standalone_loss']['mean']:.3f}; updated with n records, "
                             f"update attack {r[args.update]['accuracy']['mean']:.3f}")
        else:
            cfg = UpdateConfig(update=args.update, n_up=args.n_up, n0=n0, trials=args.trials,
                               seed=args.seed, clip=0.5 if args.clip is None else args.clip,
                               **data)
            with warnings.catch_warnings():  # the RDP optimum at the largest order is handled
                warnings.filterwarnings("ignore", message="Optimal order is the largest alpha")
                out = dp_protocol_sweep(cfg, tuple(args.sigmas or (2, 4, 8, 16, 32, 64, 128)),
                                        delta=args.delta, executor=ex)
            for r in out["rows"]:
                lb = ", ".join(f"{k} {v['epsilon_lower_bound']:.3f}"
                               for k, v in r["attacks"].items())
                lines.append(f"sigma={r['sigma_dp']:g}: eps RDP (seed) "
                             f"{r['epsilon_paper_rdp']:.3f}, eps GDP (ours) "
                             f"{r['epsilon_ours_gdp']:.3f}; eps lower bounds: {lb}")
    out = {"study": args.study, **out}
    return Result(payload=out, text="\n".join([f"--study {args.study} ({args.update}, "
                                               f"{args.trials} trials)", *lines]))


def extra_needed_updates():
    """The torch extra's guard for this command."""
    from semi_core._extras import extra_needed

    return extra_needed("updates")


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
    p.add_argument("--optimizer", default="sgd", choices=["sgd", "adam"],
                   help="optimizer of every training phase (adam: the seed's choice for its "
                        "transfer-learning data, with Adam's default learning rates 0.01 / "
                        "0.001 / 0.01 for base / SGD-New / SGD-Full)")
    p.add_argument("--k", type=positive_int, default=1, help="number of updates (1..50)")
    p.add_argument("--n-up", type=positive_int, default=10, help="records per update (>= 2)")
    p.add_argument("--n0", type=positive_int, default=None,
                   help="base training set size (default 300; 60 with --study shift)")
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
                            "covariate-easy", "subpop-pairs"])
    p.add_argument("--shift-kind", dest="shift", default="subpopulation",
                   choices=["subpopulation", "subpop-hard", "subpop-easy", "covariate-hard",
                            "covariate-easy", "subpop-pairs"],
                   help="with --shift-alpha > 0: subpopulation (digit subclasses "
                        "{0,1,2|5,6,7} -> {3,4|8,9}), its Hard / Easy pairs (targets farthest "
                        "/ nearest to sources 0 and 1), covariate shift (Hard: inverted "
                        "intensities; Easy: N(0, 0.1^2) pixel noise), or your own "
                        "subclass pairs (subpop-pairs, with --shift-pairs)")
    p.add_argument("--shift-pairs", type=_pairs, nargs="+", default=None,
                   metavar="[NAME=]S:T,S:T",
                   help="your (source, target) subclass pairs, one per class of the task "
                        "(labels 0..K-1: the data's label values in sorted order; App. C's "
                        "Tables 8/9): one set with --shift-kind subpop-pairs, or named sets "
                        "(easy=0:1,2:3 hard=0:4,2:5) with --study shift")
    p.add_argument("--sigma-dp", type=float, default=0.0,
                   help="DP-SGD noise multiplier of the update (0 = plain SGD)")
    p.add_argument("--clip", type=float, default=None, help="DP-SGD clipping norm (only with "
                   "--sigma-dp > 0; default 1)")
    p.add_argument("--study", default=None, choices=list(STUDIES),
                   help="instead of one experiment, one of the seed's single-update studies: "
                        "shift (Tables 4/5/10: Hard/Easy subpopulation and covariate shift over "
                        "--alphas), chen (Q7: Chen et al.'s SortedDiff with --n-shadow shadow "
                        "runs, its improved form, ScoreDiff/ScoreRatio with one) or dp-protocol "
                        "(§5.7: precision -> Clopper-Pearson epsilon lower bound over --sigmas, "
                        "beside the seed's RDP and our GDP epsilon)")
    p.add_argument("--alphas", type=_unit, nargs="+", default=None,
                   help="--study shift: shift strengths in (0, 1] (default 0.2 0.6 1.0)")
    p.add_argument("--n-shadow", type=positive_int, default=None,
                   help="--study chen: shadow runs for Chen et al.'s attack model (2..1000, "
                        "default 30)")
    p.add_argument("--sizes", type=positive_int, nargs="+", default=None,
                   help="--study small-data: data set / update sizes (default 10 20 40 80)")
    p.add_argument("--sigmas", type=float, nargs="+", default=None,
                   help="--study dp-protocol: DP-SGD noise multipliers of the update (default "
                        "2 4 8 16 32 64 128; clip --clip, default 0.5)")
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
    _check_study_args(args)
    if args.clip is not None and args.sigma_dp == 0 and args.study != "dp-protocol":
        raise ValueError("--clip applies only to a DP update: give --sigma-dp > 0 with it")
    clip = 1.0 if args.clip is None else args.clip
    if (args.sigma_dp > 0 or args.clip is not None) and not (math.isfinite(clip) and clip > 0):
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
    if args.study is not None:
        return _run_study(args, executor)
    cfg = UpdateConfig(dataset="file" if args.data is not None else args.dataset,
                       data=args.data,
                       label_column=0 if args.label_column is None else args.label_column,
                       model=args.model,
                       update=args.update, k=args.k,
                       n_up=args.n_up, n0=300 if args.n0 is None else args.n0,
                       trials=args.trials, n_ref=args.n_ref,
                       shift_alpha=args.shift_alpha, shift=args.shift,
                       shift_pairs=None if args.shift_pairs is None else args.shift_pairs[0][1],
                       optimizer=args.optimizer,
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
    text = (f"{args.update}" + (" (adam)" if args.optimizer == "adam" else "")
            + f", k={args.k}, n_up={args.n_up}, {args.score}/{args.combiner}/"
            f"{args.threshold}, {args.trials} trials: MI accuracy {mi['mean']:.3f} +- "
            f"{mi['se']:.3f}; entry accuracy {en['mean']:.3f} +- {en['se']:.3f} (random "
            f"{out['entry_baselines']['random']:.3f}); AUC {out['auc']['pooled']:.3f}; "
            f"no-update Loss (median threshold) {out['no_update']['loss']['mean']:.3f}; "
            f"{out['seconds']:.1f} s" + "".join(f"\nnote: {n}" for n in out["notes"]))
    return Result(payload=out, text=text)

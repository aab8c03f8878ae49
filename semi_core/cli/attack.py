"""``semi-core attack``: white-box and reference-model membership attacks on bundled data
(``iha_parameters_vs_loss`` §4).

Example::

    semi-core attack --dataset digits-odd --model logreg-mse \\
        --attacks iha,loss,sif,lira-online,lira-offline --models 64 --targets 500 --seed 0 --json

Trains ``--models`` models with heavy-ball SGD (the seed's lr 0.01, momentum 0.9, weight decay
5e-4; batched), each record of the pool in a model's training set with probability 1/2; model 0
(and 1.. with ``--target-models``) is the target, the others its reference models. Payload:
``attacks`` -> per attack ``auc`` (+ ``auc_interval``), ``tpr_at_fpr`` {"0.01", "0.001"} with
``tpr_at_fpr_interval`` (95 % bootstrap), ``tpr_at_fpr_resolvable`` and ``fpr_resolution``
(1/``n_nonmember``: a level below it cannot be measured, the cell is the TPR at FPR 0 and the
text table marks it ``*``), ``n_member``/``n_nonmember`` and ``seconds``;
leave-one-out attacks (``l-attack``, ``lira-l``) are scored on ``--loo-targets`` records (every
other attack is also reported on that subset as ``<name>@loo-subset``). ``--roc out.png``
writes the ROC curves on log axes. Local data: ``--dataset idx|idx-odd --data-path DIR`` (MNIST
or Fashion-MNIST IDX train files; ``idx-odd`` is the seed's MNIST-Odd task) or ``--dataset file
--data-path purchase.csv|.npz`` (Purchase-100 style), with ``--pool-size`` to subsample. Needs
the ``torch`` extra.

The models are trained and scored by the game runner (``play_pool``); ``--threads``,
``--workers``, ``--scheduler`` choose where (the result does not depend on it). Values outside
their range are refused, never clipped: ``--targets`` and ``--pool-size`` at most the pool's
records, ``--loo-targets`` at most ``--targets``, and ``--loo-targets`` / ``--loo-models``
only with a leave-one-out attack (``l-attack``, ``lira-l``).
"""

from __future__ import annotations

import math

from semi_core._validation import check_output_path, check_work
from semi_core.cli._common import Result
from semi_core.cli._options import (
    add_executor_args,
    add_json,
    add_progress,
    add_seed,
    executor_from_args,
    positive_int,
    reporter_from_args,
)

__all__ = ["register", "handler"]

_DATASETS = ("digits-odd", "digits", "breast-cancer", "wine", "idx", "idx-odd", "file")
_MODELS = ("logreg-mse", "logreg", "mlp")
_LOO_TARGETS, _LOO_MODELS = 100, 8
_LOO_ATTACKS = ("l-attack", "lira-l")
#: Library argument -> flag, for errors found once the pool is known (pool size, targets).
_FLAGS = {"n_targets": "--targets", "pool_size": "--pool-size", "loo_targets": "--loo-targets",
          "loo_models": "--loo-models", "n_models": "--models",
          "target_models": "--target-models", "damping": "--damping", "epsilon": "--damping",
          "rmia_gamma": "--rmia-gamma", "rmia_a": "--rmia-a", "hidden": "--hidden",
          "mse_convention": "--mse-convention",
          "threads": "--threads", "workers": "--workers", "connect_timeout": "--connect-timeout",
          "worker_timeout": "--worker-timeout"}
#: Seconds per bootstrap resample and score (AUC, TPR at two FPRs): an upper-side estimate.
_BOOT_SECONDS_PER_SCORE = 2e-7
_BOOT_SECONDS_PER_RESAMPLE = 1e-4


def register(subparsers) -> None:
    """Add the ``attack`` subcommand."""
    p = subparsers.add_parser(
        "attack", help="IHA, LOSS, SIF, LiRA, L-attack, LiRA-L on a model trained on bundled data",
        description="Train reference models (batched), attack the target model with white-box "
                    "(IHA, SIF) and reference-model attacks (LiRA, L-attack, LiRA-L); report "
                    "AUC and TPR at 1% / 0.1% FPR with bootstrap intervals.")
    p.add_argument("--dataset", default="digits-odd", help=f"one of {', '.join(_DATASETS)}")
    p.add_argument("--data-path", default=None,
                   help="for --dataset idx / idx-odd: a directory with the MNIST or "
                        "Fashion-MNIST IDX train files; for --dataset file: a .csv (label "
                        "first, Purchase-100 style) or .npz (X, y)")
    p.add_argument("--pool-size", type=positive_int, default=None,
                   help="subsample the pool to this many records (seeded)")
    p.add_argument("--model", default="logreg-mse", help=f"one of {', '.join(_MODELS)}")
    p.add_argument("--mse-convention", default="half", choices=("half", "mean"),
                   help="--model logreg-mse: 'half' = 1/2 (sigma - y)^2 (default); 'mean' = "
                        "the authors' torch MSELoss (sigma - y)^2 with lr / weight decay / "
                        "damping as declared for it")
    p.add_argument("--hidden", default="16",
                   help="--model mlp: hidden widths, comma-separated (seed: 32 for Purchase-100, "
                        "6 for Fashion-MNIST; three widths, e.g. 512,256,128, give a 4-layer "
                        "MLP, seed App. D.1)")
    p.add_argument("--attacks", default="iha,loss,sif,lira-online,lira-offline",
                   help="comma-separated: iha, iha-exact, iha-cg, loss, sif, lira-online, "
                        "lira-online-global, lira-offline, lira-offline-global, rmia, "
                        "rmia-offline, l-attack, lira-l")
    p.add_argument("--rmia-gamma", type=float, default=1.0,
                   help="RMIA's pairwise threshold gamma > 0 (Zarifzadeh et al. 2024)")
    p.add_argument("--rmia-a", type=float, default=0.3,
                   help="offline RMIA's a in [0, 1]: Pr(x) = ((1+a) Pr_OUT(x) + 1 - a) / 2")
    p.add_argument("--models", type=int, default=64, help="models trained (>= 5; seed: 128)")
    p.add_argument("--targets", default="500",
                   help="target records per target model (>= 2), or 'all'")
    p.add_argument("--target-models", type=int, default=1,
                   help="models used in turn as the target (scores pooled)")
    p.add_argument("--hessian", default="exact", help="exact | cg (iHVPs of 'iha' and 'sif')")
    p.add_argument("--damping", type=float, default=0.2, help="damping epsilon >= 0 (seed: 0.2)")
    p.add_argument("--epochs", type=float, default=None,
                   help="training epochs (default: per model, see attacks.whitebox.default_sgd)")
    p.add_argument("--loo-targets", type=int, default=None,
                   help=f"records scored by the leave-one-out attacks, 2..--targets (default "
                        f"{_LOO_TARGETS})")
    p.add_argument("--loo-models", type=int, default=None,
                   help=f"leave-one-out reference models per record, >= 2 (default "
                        f"{_LOO_MODELS})")
    p.add_argument("--bootstrap", type=int, default=200, help="bootstrap resamples (>= 10)")
    p.add_argument("--roc", default=None, metavar="PNG", help="write ROC curves (log axes)")
    add_executor_args(p)
    add_seed(p)
    add_progress(p)
    add_json(p)
    p.set_defaults(func=handler)


def _check_args(args, attacks):
    """Parse and check the flags (library ranges that need the pool come back from the
    library, named by flag); returns ``(targets, loo_targets, loo_models)``."""
    if args.dataset not in _DATASETS:
        raise ValueError(f"--dataset must be one of {list(_DATASETS)}, got {args.dataset!r}")
    if (args.dataset in ("idx", "idx-odd", "file")) != (args.data_path is not None):
        raise ValueError("--data-path is needed exactly with --dataset idx, idx-odd or file")
    if args.pool_size is not None and args.pool_size < 4:
        raise ValueError(f"--pool-size must be >= 4, got {args.pool_size}")
    if args.model not in _MODELS:
        raise ValueError(f"--model must be one of {list(_MODELS)}, got {args.model!r}")
    if args.hessian not in ("exact", "cg"):
        raise ValueError(f"--hessian must be 'exact' or 'cg', got {args.hessian!r}")
    if args.models < 5:
        raise ValueError(f"--models must be >= 5 (reference models per side), got {args.models}")
    if not 1 <= args.target_models <= args.models - 4:
        raise ValueError(f"--target-models must be in 1..{args.models - 4}, got "
                         f"{args.target_models}")
    if not (args.damping >= 0 and args.damping != float("inf")):
        raise ValueError(f"--damping must be finite and >= 0, got {args.damping}")
    if args.epochs is not None and not (args.epochs > 0 and args.epochs != float("inf")):
        raise ValueError(f"--epochs must be finite and > 0, got {args.epochs}")
    loo_targets = _LOO_TARGETS if args.loo_targets is None else args.loo_targets
    loo_models = _LOO_MODELS if args.loo_models is None else args.loo_models
    if loo_targets < 2 or loo_models < 2:
        raise ValueError("--loo-targets and --loo-models must be >= 2")
    if not any(a in _LOO_ATTACKS for a in attacks):
        given = [f for f, v in (("--loo-targets", args.loo_targets),
                                ("--loo-models", args.loo_models)) if v is not None]
        if given:
            raise ValueError(f"{' and '.join(given)} apply only to the leave-one-out attacks "
                             f"{list(_LOO_ATTACKS)}, which --attacks does not include")
    try:
        hidden = tuple(int(v) for v in str(args.hidden).split(","))
    except ValueError:
        raise ValueError(f"--hidden must be comma-separated integers >= 1, got "
                         f"{args.hidden!r}") from None
    if not hidden or min(hidden) < 1:
        raise ValueError(f"--hidden must be comma-separated integers >= 1, got {args.hidden!r}")
    if args.model != "mlp" and args.hidden != "16":
        raise ValueError("--hidden applies only to --model mlp")
    args.hidden_widths = hidden[0] if len(hidden) == 1 else hidden
    if args.bootstrap < 10:
        raise ValueError(f"--bootstrap must be >= 10, got {args.bootstrap}")
    if args.targets == "all":
        targets = None
    else:
        try:
            targets = int(args.targets)
        except ValueError:
            raise ValueError(f"--targets must be an integer >= 2 or 'all', got "
                             f"{args.targets!r}") from None
        if targets < 2:
            raise ValueError(f"--targets must be >= 2 or 'all', got {targets}")
    if args.roc is not None:  # no link, FIFO or device; the parent accepts new files
        check_output_path(args.roc, "--roc", suffix=".png")
    return targets, loo_targets, loo_models


def _check_bootstrap(args, targets, n_attacks: int) -> None:
    """Refuse up front a bootstrap that would not finish (before any training)."""
    # 'all' (or more targets than any pool, refused later by the library): the pools' scale
    rounds = float(min(targets or 2000, 10**6)) * args.target_models
    B = float(args.bootstrap) if args.bootstrap < 1e300 else math.inf
    seconds = B * n_attacks * (_BOOT_SECONDS_PER_RESAMPLE + _BOOT_SECONDS_PER_SCORE * rounds)
    check_work(f"attack: {args.bootstrap} bootstrap resamples x {n_attacks} attacks",
               nbytes=B * 8.0 * 4, seconds=seconds,
               hint="use fewer --bootstrap resamples (200 resolve a 95 % interval)")


def _flag_error(exc: Exception) -> Exception:
    """The library's error with its argument named by the flag (``n_targets`` -> --targets)."""
    msg = str(exc)
    head = msg.split(" ", 1)[0].rstrip(":")
    if head in _FLAGS and type(exc) in (ValueError, TypeError):
        return type(exc)(_FLAGS[head] + msg[len(head):])
    return exc


#: All attack names (``semi_core.attacks.whitebox.ATTACKS``, which needs torch; tested equal).
_ATTACKS = ("iha", "iha-exact", "iha-cg", "loss", "sif", "lira-online", "lira-online-global",
            "lira-offline", "lira-offline-global", "rmia", "rmia-offline", "l-attack", "lira-l")
#: Default epochs per model (``default_sgd``), doubled for the small bundled datasets.
_EPOCHS = {"logreg-mse": 60.0, "logreg": 40.0, "mlp": 80.0}


def _check_budget(args, targets, attacks, loo_targets: int, loo_models: int) -> None:
    """The experiment's work estimate from the arguments alone, before torch is imported
    (:func:`semi_core.attacks._budget.attack_budget` with lower bounds of what the pool may
    hold: the bundled datasets' shapes, or ``--pool-size``/4 records, 1 feature, 2 classes for
    a file); the exact estimate follows once the pool is loaded."""
    from semi_core.attacks._budget import BUNDLED_SHAPES, attack_budget, model_shape

    N, F, K = BUNDLED_SHAPES.get(args.dataset, (args.pool_size or 4, 1, 2))
    if args.pool_size is not None:
        N = min(N, args.pool_size)
    k = N if targets is None else min(targets, N)
    d, act = model_shape(args.model, F, K, args.hidden_widths)
    epochs = _EPOCHS[args.model] if args.epochs is None else float(args.epochs)
    bs = 32   # default_sgd's batch size
    steps = max(1.0, math.floor(epochs * max(N / 2, 1.0) / bs))   # at most the library's
    nbytes, seconds, _ = attack_budget(
        attacks, hessian=args.hessian, n_models=args.models, n_records=N, n_targets=k, d=d,
        act=act, target_models=args.target_models, steps=steps, batch_size=bs,
        loo_targets=loo_targets, loo_models=loo_models)
    check_work(f"the attack experiment ({args.models} models, at least {steps:.0f} steps, "
               f"d >= {d}, attacks {','.join(attacks)}, hessian {args.hessian})",
               nbytes=nbytes, seconds=seconds,
               hint="use fewer --models / --targets / --loo-targets / --loo-models / --epochs, "
                    "--pool-size, or --hessian cg (no d x d Hessian)")


def _parse_attacks(value: str) -> tuple[str, ...]:
    out = tuple(dict.fromkeys(a.strip() for a in str(value).split(",") if a.strip()))
    bad = [a for a in out if a not in _ATTACKS]
    if bad or not out:
        raise ValueError(f"--attacks must be drawn from {list(_ATTACKS)}, got {list(bad or out)}")
    return out


def handler(args) -> Result:
    """Run the experiment; see the module docstring for the payload."""
    attacks = _parse_attacks(args.attacks)     # argument-level checks: before importing torch
    targets, loo_targets, loo_models = _check_args(args, attacks)
    _check_bootstrap(args, targets, len(attacks))
    _check_budget(args, targets, attacks, loo_targets, loo_models)
    from semi_core._extras import extra_needed

    with extra_needed("attack"):  # torch is an optional extra
        import torch

        from semi_core.attacks.whitebox import AttackConfig, default_sgd, parse_attacks, run_attacks
    from dataclasses import replace

    from semi_core.audit.roc import mark_unresolved

    attacks = parse_attacks(attacks)
    torch.set_num_threads(1)
    sgd = default_sgd(args.dataset, args.model)
    if args.epochs is not None:
        sgd = replace(sgd, epochs=float(args.epochs))
    try:  # the library validates; its errors come back named by flag
        executor = executor_from_args(args)
        cfg = AttackConfig(dataset=args.dataset, model=args.model, n_models=args.models,
                           n_targets=targets, target_models=args.target_models,
                           hessian=args.hessian, damping=float(args.damping),
                           hidden=args.hidden_widths, mse_convention=args.mse_convention,
                           loo_targets=loo_targets, loo_models=loo_models, sgd=sgd,
                           data_path=args.data_path, pool_size=args.pool_size,
                           rmia_gamma=float(args.rmia_gamma), rmia_a=float(args.rmia_a))
        run = run_attacks(cfg, attacks, seed=args.seed, executor=executor,
                          progress=reporter_from_args(args))
    except (ValueError, TypeError) as exc:
        raise _flag_error(exc) from None
    metrics = run.metrics(fpr=(0.01, 0.001), n_bootstrap=args.bootstrap, seed=args.seed)
    for name, m in metrics.items():
        m["seconds"] = run.seconds.get(name.split("@")[0], None)
    payload = {"dataset": args.dataset, "model": args.model, "seed": args.seed,
               "config": cfg.to_dict(), "setup": run.setup, "attacks": metrics,
               "seconds": run.seconds, "executor": run.result.metadata.get("executor")}
    if args.roc is not None:
        import tempfile
        from pathlib import Path

        from semi_core._io import atomic_output
        from semi_core.report.attack_section import plot_roc

        # drawn into a private directory, then copied into a new file renamed over --roc
        with tempfile.TemporaryDirectory() as tmp, atomic_output(args.roc, name="--roc") as fh:
            png = Path(tmp) / "roc.png"
            plot_roc(run, png, title=f"{args.dataset} / {args.model}, {args.models} models")
            fh.write(png.read_bytes())
        payload["roc"] = str(args.roc)
    lines = [f"attack: {args.dataset} / {args.model} (d = {run.setup['d']}), {args.models} "
             f"models, target trained on {run.setup['n_train_target']} records",
             f"{'attack':<30}{'AUC':>7}  {'95% CI':<15}{'TPR@1%':>8}{'TPR@0.1%':>9}"
             f"{'members':>9}{'non-mem':>8}"]
    unresolved = False
    for name, m in metrics.items():
        lo, hi = m["auc_interval"]
        cells = [mark_unresolved(f"{m['tpr_at_fpr'][f]:.3f}", m["tpr_at_fpr_resolvable"][f])
                 for f in ("0.01", "0.001")]
        unresolved |= not all(m["tpr_at_fpr_resolvable"].values())
        lines.append(f"{name:<30}{m['auc']:>7.3f}  [{lo:.3f}, {hi:.3f}]  "
                     f"{cells[0]:>7}{cells[1]:>9}{m['n_member']:>9}{m['n_nonmember']:>8}")
    if unresolved:
        lines.append("* FPR level below the resolution 1/non-members: the cell is the TPR at "
                     "FPR 0 (more targets resolve it)")
    return Result(payload=payload, text="\n".join(lines))

"""``semi-core audit-checkpoints``: audit the checkpoints of your own training runs.

Example::

    # one run: the per-step log-LR trajectory of the target and every SeMI statistic
    semi-core audit-checkpoints --model mypkg.models:make_model --run-dirs runs/run0 \\
        --reference ref.npz --target-index 0 --lr 0.5 --batch-size 64 \\
        --noise-multiplier 1.1 --max-grad-norm 1 --plot trajectory.png
    # many runs, labelled by folder (ROOT/member/*, ROOT/non-member/*): certified eps_LB
    semi-core audit-checkpoints --model mypkg.models:make_model --runs-root runs \\
        --reference ref.npz --target target.npz --tau 5 --lr 0.5 --batch-size 64 \\
        --noise-multiplier 1.1 --max-grad-norm 1 --json

A run is a directory of checkpoints ``0..T`` (``.safetensors``, torch state dicts read with
``weights_only=True``, ``.npz``; the last integer of a file name is its step): see
:mod:`semi_core.integrations.checkpoints`. ``--model`` names an importable factory
(``module:callable``): trusted code, imported and called; nothing is unpickled. Reference data
and the target come from ``.csv`` (label in the first column) or ``.npz`` (``X``, ``y``)
files. Labelled runs: ``--runs-root ROOT`` (sub-folders ``member`` and ``non-member``) or
``--runs-file FILE.csv`` (columns ``path,member[,tau]``).
"""

from __future__ import annotations

import csv
from pathlib import Path

import numpy as np

from semi_core.cli._common import Result, UsageError
from semi_core.cli._options import (
    DeprecatedAlias,
    add_delta,
    add_executor_args,
    add_failure_prob,
    add_json,
    add_method,
    add_progress,
    add_seed,
    executor_from_args,
    positive_int,
    progress_enabled,
)

__all__ = ["register", "handler"]


def register(subparsers) -> None:
    """Add the ``audit-checkpoints`` subcommand."""
    p = subparsers.add_parser(
        "audit-checkpoints", help="audit saved checkpoints theta_0..theta_T of your own runs",
        description="Read checkpoint directories (one per training run), form the per-step "
                    "DP-SGD log-LR of the target at each run's own parameters, and with runs "
                    "labelled member / non-member certify an epsilon lower bound.")
    p.add_argument("--model", required=True, metavar="MODULE:CALLABLE",
                   help="importable factory returning a fresh torch.nn.Module (trusted code: "
                        "it is imported and called)")
    runs = p.add_mutually_exclusive_group(required=True)
    runs.add_argument("--runs", dest="runs", nargs="+", action=DeprecatedAlias,
                      new="--run-dirs")
    runs.add_argument("--run-dirs", dest="runs", nargs="+", metavar="DIR",
                      help="run directories (unlabelled: trajectories and statistics only)")
    runs.add_argument("--runs-root", metavar="ROOT",
                      help="ROOT/member/* and ROOT/non-member/*: labelled runs")
    runs.add_argument("--runs-file", metavar="FILE.csv",
                      help="CSV with columns path,member[,tau] (member: 1/0 or true/false)")
    p.add_argument("--reference", required=True, metavar="FILE",
                   help="reference records drawn like the training data (.csv label first, "
                        "or .npz with X, y)")
    tgt = p.add_mutually_exclusive_group(required=True)
    tgt.add_argument("--target", metavar="FILE", help="the target record (.csv/.npz, one row)")
    tgt.add_argument("--target-index", type=int, metavar="I",
                     help="use row I of --reference as the target (removed from the reference)")
    p.add_argument("--lr", type=float, required=True, help="learning rate eta of the training")
    p.add_argument("--batch-size", type=positive_int, required=True, help="batch size n >= 2")
    p.add_argument("--noise-multiplier", type=float, default=0.0,
                   help="sigma_DP of the training (default 0: plain SGD)")
    p.add_argument("--max-grad-norm", type=float, default=1.0,
                   help="clipping norm C (default 1; for unclipped SGD give a norm above "
                        "every per-sample gradient's)")
    p.add_argument("--loss", choices=("cross_entropy", "mse"), default="cross_entropy",
                   help="training loss (default cross_entropy)")
    p.add_argument("--tau", type=positive_int, default=None,
                   help="insertion step of the member runs (labelled runs; a runs-file column "
                        "tau overrides it per run)")
    p.add_argument("--plot", metavar="FILE.png", default=None,
                   help="plot the per-step log-LR trajectories (checked before any work)")
    add_delta(p, default=1e-5)
    add_failure_prob(p)
    add_method(p)
    add_seed(p)
    add_executor_args(p)
    add_progress(p)
    add_json(p)
    p.set_defaults(func=handler)


def _labelled(args) -> tuple[list[str], np.ndarray | None, np.ndarray | None]:
    if args.runs:
        return [str(d) for d in args.runs], None, None
    if args.runs_root:
        root = Path(args.runs_root)
        dirs, member = [], []
        for sub, bit in (("member", True), ("non-member", False)):
            d = root / sub
            if not d.is_dir():
                raise UsageError(f"--runs-root: {d} is not a directory (expected "
                                 "ROOT/member and ROOT/non-member)")
            kids = sorted(p for p in d.iterdir() if p.is_dir())
            dirs += [str(p) for p in kids]
            member += [bit] * len(kids)
        return dirs, np.asarray(member, dtype=bool), None
    path = Path(args.runs_file)
    if not path.is_file():
        raise UsageError(f"--runs-file: no such file {path}")
    dirs, member, taus = [], [], []
    with open(path, newline="") as fh:
        rows = list(csv.DictReader(fh))
    if not rows or not {"path", "member"} <= set(rows[0]):
        raise UsageError("--runs-file needs a header with columns path,member[,tau]")
    truth = {"1": True, "true": True, "0": False, "false": False}
    for k, row in enumerate(rows, start=2):
        bit = truth.get(str(row["member"]).strip().lower())
        if bit is None:
            raise UsageError(f"--runs-file line {k}: member must be 1/0/true/false, got "
                             f"{row['member']!r}")
        p = Path(row["path"])
        dirs.append(str(p if p.is_absolute() else path.parent / p))
        member.append(bit)
        if row.get("tau") not in (None, ""):
            taus.append(int(row["tau"]))
    if taus and len(taus) != len(dirs):
        raise UsageError("--runs-file: give tau for every run or for none")
    return dirs, np.asarray(member, dtype=bool), (np.asarray(taus) if taus else None)


def _check_values(args) -> None:
    """The numeric options, by flag name and range, before any file is opened."""
    from semi_core._validation import (
        check_delta,
        check_failure_prob,
        check_positive,
        check_real,
    )

    check_positive(args.lr, "--lr")
    check_positive(args.max_grad_norm, "--max-grad-norm")
    if check_real(args.noise_multiplier, "--noise-multiplier") < 0:
        raise ValueError(f"--noise-multiplier must be finite and >= 0, got "
                         f"{args.noise_multiplier}")
    check_delta(args.delta, "--delta")
    check_failure_prob(args.failure_prob, "--failure-prob")


def handler(args) -> Result:
    """Run the checkpoint audit; see the module docstring."""
    from semi_core._validation import check_output_path
    from semi_core.integrations.checkpoints import CheckpointRuns, audit_checkpoints, load_model
    from semi_core.sgd.data import load_tabular

    _check_values(args)  # every number before any file is read
    plot = check_output_path(args.plot, "--plot", suffix=".png") if args.plot else None
    dirs, member, taus = _labelled(args)
    if member is not None and taus is None and args.tau is None:
        raise UsageError("labelled runs need --tau (the insertion step of the member runs) or "
                         "a tau column in --runs-file")
    x, y = load_tabular(args.reference)
    if args.target_index is not None:
        i = args.target_index
        if not -x.shape[0] <= i < x.shape[0]:
            raise UsageError(f"--target-index must be in 0..{x.shape[0] - 1}, got {i}")
        target = (x[i], y[i])
        x, y = np.delete(x, i, axis=0), np.delete(y, i)
    else:
        tx, ty = load_tabular(args.target)
        if tx.shape[0] != 1:
            raise UsageError(f"--target must hold exactly one record, got {tx.shape[0]}")
        target = (tx[0], ty[0])
    model = load_model(args.model)
    first = dirs[0]
    from semi_core.integrations.checkpoints import step_files

    steps = len(step_files(first)) - 1
    runs = CheckpointRuns(model, reference=(x, y), target=target, lr=args.lr,
                          batch_size=args.batch_size, steps=steps,
                          noise_multiplier=args.noise_multiplier,
                          max_grad_norm=args.max_grad_norm, loss=args.loss)
    tau = taus if taus is not None else args.tau
    out = audit_checkpoints(runs, dirs, member=member, tau=tau, delta=args.delta,
                            failure_prob=args.failure_prob, methods=args.method,
                            executor=executor_from_args(args), progress=progress_enabled(args),
                            seed=args.seed)
    game = out.pop("game", None)
    if plot is not None:
        _plot(plot, runs, dirs, out, game)
        out["plot"] = str(plot)
    if member is None:
        lines = [f"{len(dirs)} run(s), T = {steps}: per-step log-LR of the target"]
        for d, lr in zip(dirs, out["log_lr"], strict=True):
            lines.append(f"  {d}: " + " ".join(f"{v:+.3f}" for v in lr)
                         + f"   (SeMI-max {max(lr):+.3f})")
    else:
        lines = [f"{out['runs']} runs ({out['members']} member, {out['non_members']} "
                 f"non-member), delta = {out['delta']:g}"]
        for t, per in out["epsilon_lower_bound"].items():
            for m, b in per.items():
                lines.append(f"  {t:>18s} [{m}]: eps_LB = {b['epsilon_lower_bound']:.4f}  "
                             f"({b.get('assumption', '')})")
    return Result(out, text="\n".join(lines))


def _plot(path, runs, dirs, out, game) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from semi_core._io import atomic_output

    if "log_lr" in out:
        lr = np.asarray(out["log_lr"])
        member = None
    else:
        lr = runs.log_lr_steps(runs.load(dirs[:50]))
        member = game.member[:50]
    fig, ax = plt.subplots(figsize=(6, 3.5))
    steps = np.arange(1, lr.shape[1] + 1)
    for i, row in enumerate(lr):
        color = "C0" if member is None else ("C3" if member[i] else "C7")
        ax.plot(steps, row, color=color, alpha=0.6, lw=1)
    ax.axhline(0, color="k", lw=0.5)
    ax.set_xlabel("step t")
    ax.set_ylabel(r"$\log \mathrm{LR}_t$ of the target")
    ax.set_title("per-step log-LR" + ("" if member is None else " (red: member runs)"))
    fig.tight_layout()
    with atomic_output(path, name="--plot") as fh:
        fig.savefig(fh, format="png", dpi=120)
    plt.close(fig)

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

A run is a directory (any name) of checkpoints (``.safetensors``, torch state dicts read with
``weights_only=True``, ``.npz``; any float dtype): the last integer of a file name is its
training step, checkpoints may be saved every k steps, and without a file numbered 0
theta_0 comes from the model factory. When the numbers are not training steps (timestamps),
``--every K`` says the checkpoints are K steps apart and the numbers only order them. See
:mod:`semi_core.integrations.checkpoints`. ``--model`` names an importable factory
(``module:callable``): trusted code, imported and called; nothing is unpickled. Reference data
and the target come from ``.csv`` (label in the first column) or ``.npz`` (``X``, ``y``)
files. Labelled runs: ``--runs-root ROOT`` (sub-folders ``member`` and ``non-member``, runs with
any names) or a manifest ``--runs-file FILE`` (``.csv`` with columns ``path,member[,tau]``, a
UTF-8 BOM and CRLF line ends accepted; or ``.json``: a list of objects with those keys, or
``{"runs": [...]}``); relative paths are read from the manifest's folder.
"""

from __future__ import annotations

import csv
import io
import json
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
    reporter_from_args,
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
                     help="use row I (0-based, >= 0) of --reference as the target (removed "
                          "from the reference)")
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
                   help="insertion training step of the member runs (labelled runs; a "
                        "runs-file column tau overrides it per run)")
    p.add_argument("--every", type=positive_int, default=None, metavar="K",
                   help="checkpoints are K training steps apart and the numbers in the file "
                        "names only order them (timestamps); default: the numbers are the "
                        "training steps (any stride)")
    p.add_argument("--device", default=None, metavar="DEVICE",
                   help="where the statistics run: cpu, cuda, cuda:K, mps (default cpu, where "
                        "the model factory builds the model; checked before any file is read)")
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


_TRUTH = {"1": True, "true": True, "1.0": True, "0": False, "false": False, "0.0": False}


def _manifest_rows(path: Path) -> list[dict]:
    """Rows of a CSV or JSON manifest (UTF-8, with or without a BOM; any line ends)."""
    try:
        text = path.read_bytes().decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(f"--runs-file: {path} is not UTF-8 text ({exc.reason})") from None
    if path.suffix.lower() == ".json":
        try:
            obj = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(f"--runs-file: {path} is not valid JSON ({exc})") from None
        rows = obj.get("runs") if isinstance(obj, dict) else obj
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise UsageError("--runs-file: a JSON manifest is a list of objects with keys "
                             "path, member[, tau] (or {\"runs\": [...]})")
        return rows
    rows = list(csv.DictReader(io.StringIO(text, newline="")))
    return [{(k or "").strip(): v for k, v in r.items()} for r in rows]


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
    rows = _manifest_rows(path)
    if not rows or not {"path", "member"} <= set(rows[0]):
        raise UsageError("--runs-file needs columns (keys) path,member[,tau]")
    dirs, member, taus = [], [], []
    for k, row in enumerate(rows, start=2 if path.suffix.lower() != ".json" else 1):
        where = f"--runs-file {'line' if path.suffix.lower() != '.json' else 'entry'} {k}"
        raw = row.get("member")
        bit = raw if isinstance(raw, bool) else _TRUTH.get(str(raw).strip().lower())
        if bit is None:
            raise UsageError(f"{where}: member must be 1/0/true/false, got {raw!r}")
        p = str(row.get("path") or "").strip()
        if not p:
            raise UsageError(f"{where}: path is empty")
        q = Path(p)
        dirs.append(str(q if q.is_absolute() else path.parent / q))
        member.append(bit)
        t = row.get("tau")
        if t not in (None, "") and str(t).strip() != "":
            try:
                tv = int(str(t).strip())
            except ValueError:
                raise UsageError(f"{where}: tau must be a whole training step, got {t!r}"
                                 ) from None
            taus.append(tv)
    if taus and len(taus) != len(dirs):
        raise UsageError("--runs-file: give tau for every run or for none")
    return dirs, np.asarray(member, dtype=bool), (np.asarray(taus) if taus else None)


def _saved_steps(first: str, every: int | None) -> tuple[object, str]:
    """``steps`` and ``file_steps`` of :class:`CheckpointRuns` from the first run's files."""
    from semi_core.integrations.checkpoints import step_files

    nums = [k for k, _ in step_files(first)]
    if every is None:
        return nums, "name"
    n = len(nums) - (1 if nums[0] == 0 else 0)
    if n < 1:
        raise UsageError(f"run {first}: only theta_0 is there; at least one later checkpoint "
                         "is needed")
    # the numbers only order the files; a first file numbered 0 is theta_0
    return [every * i for i in range(n + 1)], "order"


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
    device = None
    if args.device is not None:  # before any file is read
        from semi_core.sgd.device import resolve_device
        try:
            device = resolve_device(args.device, name="--device")
        except (TypeError, ValueError) as exc:
            raise UsageError(str(exc)) from None
    plot = check_output_path(args.plot, "--plot", suffix=".png") if args.plot else None
    dirs, member, taus = _labelled(args)
    if member is not None and taus is None and args.tau is None:
        raise UsageError("labelled runs need --tau (the insertion step of the member runs) or "
                         "a tau column in --runs-file")
    x, y = load_tabular(args.reference)
    if args.target_index is not None:
        i = args.target_index
        if not 0 <= i < x.shape[0]:
            raise UsageError(f"--target-index must be in 0..{x.shape[0] - 1} (a row of "
                             f"--reference; negative indices are not counted from the end), "
                             f"got {i}")
        target = (x[i], y[i])
        x, y = np.delete(x, i, axis=0), np.delete(y, i)
    else:
        tx, ty = load_tabular(args.target)
        if tx.shape[0] != 1:
            raise UsageError(f"--target must hold exactly one record, got {tx.shape[0]}")
        target = (tx[0], ty[0])
    model = load_model(args.model)
    if args.device is not None:
        model = model.to(device)   # the factory's fresh instance: the CLI's own copy
    if not dirs:
        raise UsageError("no run directory was given (--run-dirs, --runs-root, --runs-file)")
    steps, file_steps = _saved_steps(dirs[0], args.every)
    try:
        runs = CheckpointRuns(model, reference=(x, y), target=target, lr=args.lr,
                              batch_size=args.batch_size, steps=steps,
                              noise_multiplier=args.noise_multiplier,
                              max_grad_norm=args.max_grad_norm, loss=args.loss,
                              file_steps=file_steps, device=device)
    except ValueError as exc:  # name the flag the checks refer to
        msg = str(exc)
        flags = {"reference:": "--reference", "loss:": "--loss", "model:": "--model",
                 "target:": "--target" if args.target is not None else "--target-index"}
        for word, flag in flags.items():
            if msg.startswith(word):
                raise UsageError(f"{flag}{msg[len(word) - 1:]}") from None
        raise
    tau = taus if taus is not None else args.tau
    report = audit_checkpoints(runs, dirs, member=member, tau=tau, delta=args.delta,
                               failure_prob=args.failure_prob, methods=args.method,
                               executor=executor_from_args(args),
                               progress=reporter_from_args(args), seed=args.seed)
    out = report.to_dict()
    if plot is not None:
        _plot(plot, runs, dirs, out, report.game)
        out["plot"] = str(plot)
    cfg = out["config"]
    head = (f"saved steps {cfg['saved_steps']}, theta_0: {out['theta0']}, statistics in "
            f"float64 (model {cfg['model_dtype']}), reference statistics {cfg['reference_form']}"
            f" (memory estimate {out['memory']['estimate']})")
    if member is None:
        lines = [f"{len(dirs)} run(s), {runs.T} gap(s): per-gap log-LR of the target", head]
        for d, lr in zip(dirs, out["log_lr"], strict=True):
            lines.append(f"  {d}: " + " ".join(f"{v:+.3f}" for v in lr)
                         + f"   (SeMI-max {max(lr):+.3f})")
    else:
        lines = [f"{out['runs']} runs ({out['members']} member, {out['non_members']} "
                 f"non-member), delta = {out['delta']:g}", head]
        for t, m, b in report.items():
            lines.append(f"  {t:>18s} [{m}]: eps_LB = {b.epsilon_lower_bound:.4f}  "
                         f"({b.assumption})")
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
    ax.set_xlabel("gap j (between saved checkpoints)")
    ax.set_ylabel(r"$\log \mathrm{LR}_t$ of the target")
    ax.set_title("per-step log-LR" + ("" if member is None else " (red: member runs)"))
    fig.tight_layout()
    with atomic_output(path, name="--plot") as fh:
        fig.savefig(fh, format="png", dpi=120)
    plt.close(fig)

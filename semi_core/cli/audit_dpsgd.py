"""``semi-core audit-dpsgd``: SeMI-SGD audit of DP-SGD fine-tuning (seed §5.2, Fig. 3).

Example::

    semi-core audit-dpsgd --dataset digits --model logreg --epsilon 1 --rounds 1000 --tau 5 --json
    semi-core audit-dpsgd --epsilon 1 --rounds 1000 --workers 4     # on a local Dask cluster

Payload: ``attacks`` -> per attack (``semi_sgd``, ``semi_max``, ``delta_diff``, ``delta_ratio``,
``back_front_diff``, ``back_front_ratio``): ``epsilon_lower_bound`` (per method ``dkw``/``cp``,
averaged over tau), ``epsilon_lower_bound_best_tau``, ``auc``, ``tpr_at_fpr``; plus
``epsilon_true`` (exact, one record replaced, each record used once) and
``epsilon_dp_accounting`` (cross-check). The games run on the executor of ``--threads`` /
``--workers`` / ``--scheduler`` (the same seed gives the same payload on each). Needs the
``torch`` extra.
"""

from __future__ import annotations

import math

from semi_core import _params
from semi_core.cli._common import Result
from semi_core.cli._options import (
    add_delta,
    add_executor_args,
    add_failure_prob,
    add_json,
    add_progress,
    add_rounds,
    add_seed,
    add_tau,
    executor_from_args,
    positive_int,
    reporter_from_args,
    resolve_tau,
)

__all__ = ["register", "handler"]


def _epsilon(text: str) -> float:
    try:
        val = float(text)
    except ValueError:
        raise ValueError(f"--epsilon must be a number > 0 or 'inf', got {text!r}") from None
    if not (val > 0):
        raise ValueError(f"--epsilon must be > 0 or 'inf', got {text}")
    return val


def register(subparsers) -> None:
    """Add the ``audit-dpsgd`` subcommand."""
    p = subparsers.add_parser(
        "audit-dpsgd", help="audit DP-SGD fine-tuning with SeMI-SGD and loss baselines",
        description="Pretrain on a public split, fine-tune with DP-SGD (sigma calibrated to "
                    "--epsilon), play --rounds SeMI games per insertion time, report epsilon "
                    "lower bounds (dkw, cp) for SeMI-SGD, SeMI-max and four baselines against "
                    "the exact epsilon.")
    p.add_argument("--dataset", default="digits", choices=["digits", "fashion-mnist"])
    p.add_argument("--data-dir", default=None,
                   help="directory with the Fashion-MNIST IDX files (fashion-mnist only)")
    p.add_argument("--model", default="logreg", choices=["logreg", "mlp", "frozen"])
    p.add_argument("--epsilon", type=str, default="1",
                   help="target epsilon of the run (> 0), or 'inf' for no noise")
    add_delta(p, default=_params.DPSGD["delta"], note=", the seed's §5.2 setting")
    add_rounds(p, default=_params.DPSGD["rounds"], what="games per insertion time")
    add_tau(p, extra="all")
    p.add_argument("--steps", type=positive_int, default=_params.DPSGD["steps"],
                   help=f"T (seed: {_params.DPSGD['steps']})")
    p.add_argument("--batch-size", type=int, default=_params.DPSGD["batch_size"],
                   help=f"n (seed: {_params.DPSGD['batch_size']})")
    p.add_argument("--lr", type=float, default=0.5, help="fine-tuning learning rate")
    p.add_argument("--clip", type=float, default=1.0, help="clipping norm C > 0")
    p.add_argument("--n-reference", type=int, default=128,
                   help="reference gradients per statistic (>= 2; at most the reference "
                        "split: 300 for digits, 1000 for fashion-mnist)")
    p.add_argument("--chunk-size", type=positive_int, default=64,
                   help="runs trained together as batched replicas: the unit of work and of "
                        "seeding (default 64)")
    add_failure_prob(p)
    add_executor_args(p)
    add_seed(p)
    add_progress(p)
    add_json(p)
    p.set_defaults(func=handler)


#: Wall seconds per DP-SGD step of one run (a lower-side figure: the batched replicas of
#: ``--model logreg`` on digits train ~1e-4 s per run-step with their per-step log-LRs).
_SECONDS_PER_RUN_STEP = 1e-5


def _check_args(args):
    """Every argument-level refusal, before torch is imported; returns ``(eps, tau, n_ref)``."""
    from semi_core._validation import (
        check_batch_size,
        check_delta,
        check_failure_prob,
        check_int,
        check_positive,
        check_work,
    )
    from semi_core.sgd.data import DEFAULT_SIZES

    eps = math.inf if args.epsilon.strip().lower() in ("inf", "infinity") else _epsilon(
        args.epsilon)
    check_delta(args.delta, "--delta")
    if eps != math.inf and args.delta == 0:
        raise ValueError("--delta must be > 0 for a finite --epsilon (the Gaussian mechanism "
                         "is not (epsilon, 0)-DP)")
    check_failure_prob(args.failure_prob, "--failure-prob")
    check_batch_size(args.batch_size, "--batch-size")
    check_positive(args.lr, "--lr")
    check_positive(args.clip, "--clip")
    n_ref = check_int(args.n_reference, "--n-reference", minimum=2)
    cap = DEFAULT_SIZES[args.dataset][2]
    if n_ref > cap:
        raise ValueError(f"--n-reference must be at most {cap} (the {args.dataset} reference "
                         f"split), got {n_ref}")
    if args.dataset == "digits" and args.data_dir is not None:
        raise ValueError("--data-dir applies to --dataset fashion-mnist only (digits ships "
                         "with scikit-learn)")
    # each record of the private split is used in exactly one step (sgd.dpsgd.draw_game)
    pool = DEFAULT_SIZES[args.dataset][1]
    if args.steps * args.batch_size > pool:
        raise ValueError(f"--steps * --batch-size must be at most {pool} (the {args.dataset} "
                         f"private split; each record is used in exactly one step), got "
                         f"{args.steps} * {args.batch_size} = {args.steps * args.batch_size}")
    tau = resolve_tau(args.tau, args.steps, extra="all")
    n_tau = args.steps if tau == "all" else 1
    # H1 runs per insertion time (~rounds/2 each) and one shared stream of H0 runs
    runs = float(args.rounds) * (n_tau + 1) / 2
    check_work(f"audit-dpsgd: {args.rounds} games x {n_tau} insertion times x {args.steps} "
               f"steps", seconds=runs * args.steps * _SECONDS_PER_RUN_STEP,
               nbytes=8.0 * float(args.rounds) * n_tau * 16,
               hint="use fewer --rounds, one --tau, or fewer --steps")
    return eps, tau, n_ref


def handler(args) -> Result:
    """Run the audit; see the module docstring for the payload."""
    eps, tau, n_ref = _check_args(args)   # from the arguments alone, before importing torch
    from semi_core._extras import extra_needed

    with extra_needed("audit-dpsgd"):  # torch is an optional extra
        from semi_core.sgd.audit import run_audit
    taus = None if tau == "all" else [tau]
    report = run_audit(dataset=args.dataset, model=args.model, epsilon=eps, rounds=args.rounds,
                    taus=taus, delta=args.delta, seed=args.seed, batch_size=args.batch_size,
                    steps=args.steps, lr=args.lr, clip=args.clip,
                    failure_prob=args.failure_prob, n_reference=n_ref,
                    data_dir=args.data_dir, chunk_size=args.chunk_size,
                    executor=executor_from_args(args), progress=reporter_from_args(args))
    out = report.to_dict()
    lines = [f"DP-SGD audit: {out['dataset']} / {out['model']}, sigma_DP = {out['sigma_dp']:.4g}, "
             f"epsilon_true = {out['epsilon_true']:.4g} (delta = {out['delta']:g}), "
             f"{args.rounds} games per tau, tau = {tau}",
             f"{'attack':<18}{'eps_LB dkw':>11}{'eps_LB cp':>11}{'best-tau cp':>12}{'AUC':>8}"]
    for name, a in out["attacks"].items():
        lines.append(f"{name:<18}{a['epsilon_lower_bound']['dkw']:>11.3f}"
                     f"{a['epsilon_lower_bound']['cp']:>11.3f}"
                     f"{a['epsilon_lower_bound_best_tau']['cp']:>12.3f}{a['auc']:>8.3f}")
    out.pop("per_tau")
    return Result(payload=out, text="\n".join(lines))

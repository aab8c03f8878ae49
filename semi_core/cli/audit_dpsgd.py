"""``semi-core audit-dpsgd``: SeMI-SGD audit of DP-SGD fine-tuning (seed §5.2, Fig. 3).

Example::

    semi-core audit-dpsgd --dataset digits --model logreg --epsilon 1 --rounds 1000 --tau 5 --json

Payload: ``attacks`` -> per attack (``semi_sgd``, ``semi_max``, ``delta_diff``, ``delta_ratio``,
``back_front_diff``, ``back_front_ratio``): ``epsilon_lower_bound`` (per method ``dkw``/``cp``,
averaged over tau), ``epsilon_lower_bound_best_tau``, ``auc``, ``tpr_at_fpr``; plus
``epsilon_true`` (exact, one record replaced, each record used once) and
``epsilon_dp_accounting`` (cross-check). Needs the ``torch`` extra.
"""

from __future__ import annotations

import math

from semi_core.cli._common import Result, add_json_flag

__all__ = ["register", "handler"]


def _epsilon(text: str) -> float:
    val = float(text)
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
    p.add_argument("--data-dir", default=None, help="directory with Fashion-MNIST IDX files")
    p.add_argument("--model", default="logreg", choices=["logreg", "mlp", "frozen"])
    p.add_argument("--epsilon", type=str, default="1",
                   help="target epsilon of the run (> 0), or 'inf' for no noise")
    p.add_argument("--delta", type=float, default=1e-4, help="delta (seed: 1e-4)")
    p.add_argument("--rounds", type=int, default=1000, help="games per insertion time")
    p.add_argument("--tau", default="5", help="insertion time in 1..T, or 'all'")
    p.add_argument("--steps", type=int, default=10, help="T (seed: 10)")
    p.add_argument("--batch-size", type=int, default=64, help="n (seed: 64)")
    p.add_argument("--lr", type=float, default=0.5, help="fine-tuning learning rate")
    p.add_argument("--clip", type=float, default=1.0, help="clipping norm C > 0")
    p.add_argument("--n-reference", type=int, default=128,
                   help="reference gradients per statistic (>= 2)")
    p.add_argument("--failure-prob", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=0)
    add_json_flag(p)
    p.set_defaults(func=handler)


def handler(args) -> Result:
    """Run the audit; see the module docstring for the payload."""
    try:
        from semi_core.sgd.audit import run_audit
    except ImportError as exc:  # torch is an optional extra
        raise ValueError(f"audit-dpsgd needs the torch extra (pip install semi_core[torch]): "
                         f"{exc}") from None
    eps = math.inf if args.epsilon.strip().lower() in ("inf", "infinity") else _epsilon(
        args.epsilon)
    if args.tau == "all":
        taus = None
    else:
        try:
            taus = [int(args.tau)]
        except ValueError:
            raise ValueError(f"--tau must be an integer in 1..{args.steps} or 'all', "
                             f"got {args.tau!r}") from None
        if not 1 <= taus[0] <= args.steps:
            raise ValueError(f"--tau must be in 1..{args.steps} or 'all', got {taus[0]}")
    out = run_audit(dataset=args.dataset, model=args.model, epsilon=eps, rounds=args.rounds,
                    taus=taus, delta=args.delta, seed=args.seed, batch_size=args.batch_size,
                    steps=args.steps, lr=args.lr, clip=args.clip,
                    failure_prob=args.failure_prob, n_reference=args.n_reference,
                    data_dir=args.data_dir)
    lines = [f"DP-SGD audit: {out['dataset']} / {out['model']}, sigma_DP = {out['sigma_dp']:.4g}, "
             f"epsilon_true = {out['epsilon_true']:.4g} (delta = {out['delta']:g}), "
             f"{args.rounds} games per tau, tau = {args.tau}",
             f"{'attack':<18}{'eps_LB dkw':>11}{'eps_LB cp':>11}{'best-tau cp':>12}{'AUC':>8}"]
    for name, a in out["attacks"].items():
        lines.append(f"{name:<18}{a['epsilon_lower_bound']['dkw']:>11.3f}"
                     f"{a['epsilon_lower_bound']['cp']:>11.3f}"
                     f"{a['epsilon_lower_bound_best_tau']['cp']:>12.3f}{a['auc']:>8.3f}")
    out.pop("per_tau")
    return Result(payload=out, text="\n".join(lines))

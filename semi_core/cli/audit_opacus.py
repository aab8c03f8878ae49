"""``semi-core audit-opacus``: audit Opacus DP-SGD on bundled digits with white-box canaries.

Example::

    semi-core audit-opacus --epsilon 4 --canary dirac --rounds 1000 --tau 5 --delta 1e-5 --json
    semi-core audit-opacus --epsilon 2 --canary dirac --rounds 500 --bug noise_reused --json

:math:`\\sigma_{DP}` is calibrated so that a correct run (replace-one, each record used once) is
exactly ``--epsilon``-DP at ``--delta`` (:func:`semi_core.sgd.accounting.calibrate_sigma`).
Payload (:class:`semi_core.integrations.opacus.OpacusAuditReport`): ``epsilon_lower_bound``
(per test, per method ``band``/``dkw``/``cp``/``gdp``/``gdp_gaussian``), ``epsilon_true``,
``epsilon_accountant`` (Opacus RDP/PRV), ``epsilon_claimed``, ``claim_refuted`` (nonparametric,
Bonferroni over tests and methods), ``claim_refuted_gdp``, ``warnings`` (Opacus' own included),
``neighbouring_relation``, ``accountant_relation``. Needs the ``opacus`` extra.

The runs are played by the one game runner (:class:`~semi_core.integrations.opacus.
OpacusMechanism`); ``--threads``/``--workers``/``--scheduler`` choose where, without changing
the result. Every value is validated by the library before any training
(:class:`~semi_core.integrations.opacus.OpacusAuditConfig`); an error names the flag.
"""

from __future__ import annotations

import re

from semi_core._validation import ResourceLimitError
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

__all__ = ["register", "handler", "BUG_NAMES"]

#: The names of :data:`semi_core.sgd.bugs.BUGS`, spelled here so that ``--help`` and argument
#: parsing need no torch (``tests/cli/test_startup.py`` checks that the two lists agree).
BUG_NAMES = ("noise_unscaled", "batch_clip", "noise_reused", "clip_mismatch", "wrong_batch_size",
             "sampling_rate_misreport")


def register(subparsers) -> None:
    """Add the ``audit-opacus`` subcommand."""
    p = subparsers.add_parser(
        "audit-opacus", help="audit Opacus DP-SGD (white-box Dirac / input canaries, bug zoo)",
        description="Drive Opacus' PrivacyEngine on bundled digits (logistic regression "
                    "pretrained on a public split) with the Crafter's batches and canaries, "
                    "sigma calibrated to --epsilon, and report certified epsilon lower bounds "
                    "beside the exact epsilon and Opacus' accountant.")
    p.add_argument("--epsilon", type=float, default=4.0,
                   help="target epsilon of a correct run (> 0, default 4)")
    add_delta(p, default=1e-5)
    p.add_argument("--canary", choices=("dirac", "gradient-mahalanobis", "input"),
                   default="dirac", help="canary (default dirac: white-box gradient canary)")
    add_rounds(p, default=1000, what="runs (games; each a fresh Opacus training)")
    add_tau(p, extra=None)
    p.add_argument("--steps", type=positive_int, default=10, help="T (default 10)")
    p.add_argument("--batch-size", type=positive_int, default=64, help="n (default 64)")
    p.add_argument("--lr", type=float, default=0.5, help="SGD learning rate (default 0.5)")
    p.add_argument("--clip", type=float, default=1.0, help="max_grad_norm C > 0 (default 1)")
    p.add_argument("--bug", choices=("none", *BUG_NAMES), default="none",
                   help="install a bug of the zoo in Opacus' optimizer (default none)")
    p.add_argument("--sampler", choices=("fixed", "poisson"), default="fixed",
                   help="fixed: the Crafter's batches, replace-one (default); poisson: Opacus' "
                        "DPDataLoader, add/remove")
    p.add_argument("--engine", choices=("opacus", "batched"), default="opacus",
                   help="opacus (the real PrivacyEngine path, default) or batched "
                        "(semi_core's batched reference trainer on the same games)")
    p.add_argument("--canaries-per-run", type=positive_int, default=1,
                   help="Dirac canaries per run on distinct isolated coordinates (default 1)")
    p.add_argument("--no-semi", action="store_true",
                   help="skip SeMI-SGD / SeMI-max (faster)")
    p.add_argument("--runs-per-chunk", type=positive_int, default=64,
                   help="runs per chunk of the game runner (unit of work and seeding; default 64)")
    add_failure_prob(p)
    add_seed(p)
    add_executor_args(p)
    add_progress(p)
    add_json(p)
    p.set_defaults(func=handler)


#: Library argument -> the flag that sets it (errors name the flag).
_FLAGS = {"max_grad_norm": "--clip", "batch_size": "--batch-size", "steps": "--steps",
          "rounds": "--rounds", "delta": "--delta", "lr": "--lr", "tau": "--tau",
          "failure_prob": "--failure-prob", "canaries_per_run": "--canaries-per-run",
          "runs_per_chunk": "--runs-per-chunk", "epsilon": "--epsilon", "bug": "--bug",
          "canary": "--canary", "sampler": "--sampler", "engine": "--engine",
          "noise_multiplier": "--epsilon (sigma_DP is calibrated from it)"}


def _flag_error(exc: Exception, *names: str) -> Exception:
    """The library's error, prefixed with the flags of the arguments its message is about (those
    named before its first verb, else the first one it names)."""
    if isinstance(exc, ResourceLimitError):  # names the work and what would fit instead
        return exc
    msg = str(exc)
    head = re.split(r" must| =|=| is |:| needs| gave", msg, maxsplit=1)[0]

    def named(text):
        hits = [(m.start(), name) for name in (names or _FLAGS)
                for m in [re.search(rf"(?<![\w-]){name}(?![\w-])", text)] if m]
        return [name for _, name in sorted(hits)]

    found = named(head) or named(msg)[:1]
    if not found:
        return exc
    return type(exc)(f"{', '.join(_FLAGS.get(n, n) for n in found)}: {msg}")


def handler(args) -> Result:
    """Run the audit; see the module docstring for the payload."""
    from semi_core._extras import extra_needed

    with extra_needed("audit-opacus"):  # torch and Opacus are optional extras
        from semi_core.integrations.opacus import (
            DIGITS_TRAIN_RECORDS,
            OpacusAuditConfig,
            audit_opacus,
            digits_example,
        )
        from semi_core.sgd.accounting import calibrate_sigma
    tau = resolve_tau(args.tau, args.steps, extra=None)
    try:
        sigma = calibrate_sigma(args.epsilon, args.delta)
    except (TypeError, ValueError) as exc:
        raise _flag_error(exc, "epsilon", "delta") from None
    try:  # the library validates every value (before any training); the CLI only parses
        config = OpacusAuditConfig(
            noise_multiplier=sigma, max_grad_norm=args.clip, batch_size=args.batch_size,
            steps=args.steps, canary=args.canary, tau=tau, rounds=args.rounds,
            delta=args.delta, lr=args.lr, sampler=args.sampler,
            bug=None if args.bug == "none" else args.bug,
            canaries_per_run=args.canaries_per_run, failure_prob=args.failure_prob,
            engine=args.engine, semi=not args.no_semi, runs_per_chunk=args.runs_per_chunk)
        if args.batch_size > DIGITS_TRAIN_RECORDS:
            raise ValueError(f"batch_size {args.batch_size} is larger than the dataset "
                             f"({DIGITS_TRAIN_RECORDS} records)")
    except (TypeError, ValueError) as exc:
        raise _flag_error(exc) from None
    executor = executor_from_args(args)
    model_fn, data = digits_example(seed=args.seed)
    try:
        rep = audit_opacus(model_fn, data, config, seed=args.seed, executor=executor,
                           progress=reporter_from_args(args))
    except ValueError as exc:
        raise _flag_error(exc) from None
    out = rep.to_dict()
    out.update(epsilon_target=args.epsilon, sigma_dp=sigma, dataset="digits", model="logreg")
    et = rep.epsilon_true
    lines = [f"Opacus audit ({args.engine}, {args.sampler} batches, canary {args.canary}, "
             f"bug {args.bug}): sigma_DP = {sigma:.4g}, {rep.config['games']} games",
             f"epsilon_true = {et if et is None else f'{et:.4g}'}, claimed = "
             f"{rep.epsilon_claimed:.4g}, Opacus accountant rdp/prv = "
             f"{rep.epsilon_accountant['rdp']:.4g}/{rep.epsilon_accountant['prv']:.4g}",
             f"{'test':<18}{'band':>8}{'dkw':>8}{'cp':>8}{'gdp':>8}{'gdp-gauss':>11}"]
    def f(x, w):
        return f"{x:>{w}.3f}" if abs(x) < 1e4 else f"{x:>{w}.3g}"

    for test in rep.tests:
        v = {m: rep.epsilon_lower_bound(test, m) for m in rep.methods}
        lines.append(f"{test:<18}{f(v['band'], 8)}{f(v['dkw'], 8)}{f(v['cp'], 8)}{f(v['gdp'], 8)}"
                     f"{f(v['gdp_gaussian'], 11)}")
    ceil = {m: rep.epsilon_max_certifiable(rep.tests[0], m) for m in ("band", "dkw", "cp", "gdp")
            if rep.tests and m in rep.methods}
    if ceil:   # tells "private" from "too few games" when the bounds are 0
        lines.append(f"{'largest certif.':<18}" + "".join(
            f(ceil[m], 8) if ceil.get(m) is not None else f"{'-':>8}"
            for m in ("band", "dkw", "cp", "gdp")))
    lines.append(f"claim refuted: {rep.claim_refuted} (nonparametric), "
                 f"{rep.claim_refuted_gdp} (GDP route)")
    lines += [f"warning: {w}" for w in rep.warnings]
    return Result(payload=out, text="\n".join(lines))

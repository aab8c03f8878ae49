"""``semi-core audit-game``: audit the noisy empirical-mean mechanism with SeMI tests.

Example::

    semi-core audit-game --mu-levels 1 2 4 --rounds 4000 --delta 1e-5 --failure-prob 0.05 --json

For each noise level, plays the SeMI game (seed Alg. 1-2) on
:class:`semi_core.mechanisms.noisy_mean.NoisyMean` (clipped data, Gaussian noise on every
released running mean) and prints eps_LB of SeMI*, SeMI-max and Final Observation next to the
ground-truth epsilon(delta) of the mechanism.
"""

from __future__ import annotations

from semi_core import _params
from semi_core.cli._common import Result
from semi_core.cli._options import (
    add_delta,
    add_executor_args,
    add_failure_prob,
    add_json,
    add_method,
    add_progress,
    add_rounds,
    add_seed,
    add_tau,
    executor_from_args,
    reporter_from_args,
    resolve_tau,
)

__all__ = ["register", "handler", "run_table", "SCALE_RANGE", "MU_RANGE"]

#: --clip, and --data-std / |--data-mean| relative to it (outside, the clipped-data moments
#: under- or overflow).
SCALE_RANGE = (1e-6, 1e6)
#: GDP level of the release (--mu-levels, or Delta_1 / --noise): past 1e6 epsilon(delta) ~
#: mu^2/2 ~ 5e11 means nothing; below 1e-6 the game cannot tell the hypotheses apart.
MU_RANGE = (1e-6, 1e6)

def register(subparsers) -> None:
    """Add the ``audit-game`` subcommand."""
    p = subparsers.add_parser(
        "audit-game", help="eps lower bounds of SeMI*, SeMI-max, Final Observation vs truth",
        description="SeMI game on the clipped, noisy empirical mean (a Gaussian mechanism with "
                    "known epsilon); certified eps_LB per test at several noise levels.")
    p.add_argument("--n", type=int, default=_params.SEED_FIG2.n,
                   help=f"batch size n >= 2 (default {_params.SEED_FIG2.n})")
    p.add_argument("--T", type=int, default=_params.SEED_FIG2.T,
                   help=f"number of releases T >= 1 (default {_params.SEED_FIG2.T})")
    add_tau(p, extra=None, prior=True)
    p.add_argument("--clip", type=float, default=1.0, help="clipping radius C (default 1)")
    p.add_argument("--data-mean", type=float, default=-1.0,
                   help="data mean (default -1 = -C: opposite the canary)")
    p.add_argument("--data-std", type=float, default=0.1, help="data std (default 0.1)")
    p.add_argument("--target", type=float, default=None,
                   help="canary z* in [-C, C] (default C: on the boundary)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--noise", type=float, nargs="+", default=None,
                   help="noise standard deviations s of the releases (each > 0)")
    g.add_argument("--mu-levels", type=float, nargs="+",
                   default=list(_params.NOISY_MEAN_AUDIT["mu_levels"]),
                   help="GDP levels mu (each > 0); noise s = Delta_1 / mu (default 1 2 4)")
    add_rounds(p, default=_params.NOISY_MEAN_AUDIT["rounds"], what="games per noise level")
    add_delta(p, default=_params.AUDIT_DELTA, note=", the seed's §5.1 setting")
    add_failure_prob(p, alpha_alias=True)
    add_method(p)
    add_seed(p)
    add_executor_args(p)
    add_progress(p)
    add_json(p)
    p.set_defaults(func=handler)


def run_table(*, n=10, T=10, tau=1, clip=1.0, data_mean=-1.0, data_std=0.1, target=None,
              noise=None, mu_levels=(1.0, 2.0, 4.0), rounds=4000, delta=1e-5, failure_prob=0.05,
              method=None, seed=0, tests=None,
              progress=None, executor=None) -> list:
    """One row per noise level: :func:`semi_core.audit.games.noisy_mean_audit_table` after
    checking every argument and the memory of the games up front (``method``/``tests``:
    ``None`` for the library's defaults, imported here: ``audit-game --help`` stays light)."""
    import numpy as np

    from semi_core.audit.bounds import DEFAULT_METHOD
    from semi_core.audit.games import DEFAULT_AUDIT_TESTS

    method = DEFAULT_METHOD if method is None else method
    tests = DEFAULT_AUDIT_TESTS if tests is None else tests

    from semi_core._validation import (
        check_batch_size,
        check_delta,
        check_failure_prob,
        check_int,
        check_positive,
        check_real,
        check_work,
    )
    from semi_core.audit.games import noisy_mean_audit_table

    check_delta(delta, "--delta")  # fail before simulating
    check_failure_prob(failure_prob, "--failure-prob")
    n = check_batch_size(n, "--n")
    T = check_int(T, "--T", minimum=1)
    rounds = check_int(rounds, "--rounds", minimum=1)
    lo, hi = SCALE_RANGE
    clip = check_positive(clip, "--clip")
    if not lo <= clip <= hi:
        raise ValueError(f"--clip must be in [{lo:g}, {hi:g}], got {clip:g}")
    data_std = check_positive(data_std, "--data-std")
    if not lo * clip <= data_std <= hi * clip:
        raise ValueError(f"--data-std must be in [{lo:g}, {hi:g}] x C = [{lo * clip:g}, "
                         f"{hi * clip:g}], got {data_std:g}")
    data_mean = check_real(data_mean, "--data-mean")
    if abs(data_mean) > hi * clip:
        raise ValueError(f"--data-mean must be in [-{hi:g}, {hi:g}] x C, got {data_mean:g}")
    if target is not None:
        target = check_real(target, "--target")
        if abs(target) > clip:
            raise ValueError(f"--target must be in [-C, C] = [{-clip:g}, {clip:g}], got "
                             f"{target}")
    levels = len(noise) if noise is not None else len(mu_levels)
    # every datum of every game is drawn: rounds x n x T x 8 bytes, ~3 live copies; time
    # ~ 2e-8 s per datum (measured ~5e-9 on one core, rounded up)
    data = float(rounds) * n * T
    check_work(f"audit-game ({levels} level(s) x --rounds {rounds} games of --T {T} "
               f"releases with batches of --n {n})",
               nbytes=3.0 * data * 8 + 2.0 * rounds * T * 8, seconds=2e-8 * data * levels,
               hint="use fewer --rounds, a smaller --n or --T, or fewer levels")
    # the GDP level of each release: mu = Delta_1 / s, with Delta_1 = 2C (sum_t N_t^-2)^(1/2)
    delta1 = 2.0 * clip * float(np.sqrt(np.sum(1.0 / (n * np.arange(1.0, T + 1)) ** 2)))
    mlo, mhi = MU_RANGE
    if noise is not None:
        noise = [check_positive(s, "--noise") for s in noise]
        for s in noise:
            if not mlo <= delta1 / s <= mhi:
                raise ValueError(
                    f"--noise {s:g} gives the release a GDP level mu = Delta_1/s = "
                    f"{delta1 / s:.3g}; mu must be in [{mlo:g}, {mhi:g}], i.e. --noise in "
                    f"[{delta1 / mhi:.3g}, {delta1 / mlo:.3g}] here (Delta_1 = {delta1:.3g})")
    else:
        mu_levels = [check_positive(m, "--mu-levels") for m in mu_levels]
        for m in mu_levels:
            if not mlo <= m <= mhi:
                raise ValueError(f"--mu-levels must be in [{mlo:g}, {mhi:g}] (epsilon(delta) "
                                 f"~ mu^2/2 beyond), got {m:g}")
    return noisy_mean_audit_table(n=n, T=T, tau=tau, clip=clip, data_mean=data_mean,
                                  data_std=data_std, target=target, noise=noise,
                                  mu_levels=mu_levels, rounds=rounds, delta=delta,
                                  alpha=failure_prob, method=method, seed=seed, tests=tests,
                                  progress=progress, executor=executor)


def handler(args) -> Result:
    """Run the table; payload = {"rows": [...], parameters}."""
    from semi_core._validation import check_int
    from semi_core.report.audit_section import format_table

    T = check_int(args.T, "--T", minimum=1)
    tau = resolve_tau(args.tau, T, extra=None, prior=True)
    rows = run_table(n=args.n, T=T, tau=tau, clip=args.clip, data_mean=args.data_mean,
                     data_std=args.data_std, target=args.target, noise=args.noise,
                     mu_levels=args.mu_levels, rounds=args.rounds, delta=args.delta,
                     failure_prob=args.failure_prob, method=args.method, seed=args.seed,
                     executor=executor_from_args(args), progress=reporter_from_args(args))
    payload = {"n": args.n, "T": T, "tau": tau, "clip": args.clip,
               "data_mean": args.data_mean, "data_std": args.data_std, "rounds": args.rounds,
               "delta": args.delta, "failure_prob": args.failure_prob, "method": args.method,
               "seed": args.seed, "rows": [r.to_dict() for r in rows]}
    text = (f"SeMI audit of the noisy mean (n={args.n}, T={T}, tau={tau}, "
            f"delta={args.delta:g}, failure prob {args.failure_prob:g}, method {args.method}, "
            f"{args.rounds} games per level)\n" + format_table(rows))
    return Result(payload=payload, text=text)

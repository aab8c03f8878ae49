"""``semi-core simulate``: Monte Carlo SeMI games with the compiled engine.

Example::

    semi-core simulate --n 10 --T 10 --tau 5 --mu 0 --sigma 1 --target 3 \\
        --rounds 50000 --seed 0 --json

prints, per test (semi-star, semi-unif, semi-max, final), the TPR at FPR 0.1, 0.01, 0.001 and
the AUC, each with its Monte Carlo standard error (:mod:`semi_core.audit.roc`).
"""

from __future__ import annotations

import sys

import numpy as np

from semi_core._validation import check_int
from semi_core.cli._common import Result, add_json_flag, load_npy

__all__ = ["register", "handler"]


def _tau_arg(value: str):
    if value.strip().lower() == "uniform":
        return "uniform"
    try:
        return int(value)
    except ValueError:
        raise ValueError(f"--tau must be an integer in 1..T or 'uniform', got {value!r}") from None


def register(subparsers) -> None:
    """Add the ``simulate`` subcommand."""
    p = subparsers.add_parser(
        "simulate", help="Monte Carlo SeMI games (compiled engine): TPR at FPR and AUC per test",
        description="Play R rounds of the SeMI game (seed Alg. 1-2) for the empirical-mean "
                    "mechanism and report every test's TPR at FPR 0.1/0.01/0.001 and AUC "
                    "with Monte Carlo standard errors.")
    p.add_argument("--n", type=int, default=10, help="batch size n >= 2 (default 10)")
    p.add_argument("--T", type=int, default=10, help="number of updates T >= 1 (default 10)")
    p.add_argument("--tau", type=str, default="5",
                   help="insertion time: an integer in 1..T or 'uniform' (default 5)")
    p.add_argument("--mu", type=float, default=0.0, help="data mean (every coordinate)")
    p.add_argument("--sigma", type=float, default=1.0,
                   help="data standard deviation (covariance sigma^2 I unless --cov)")
    p.add_argument("--target", type=float, default=3.0,
                   help="canary z* (every coordinate; see --target-file)")
    p.add_argument("--dim", type=int, default=None, help="dimension d (default 1, or from files)")
    p.add_argument("--cov", type=str, default=None, metavar="FILE.npy",
                   help="(d, d) covariance matrix (np.load, allow_pickle=False)")
    p.add_argument("--target-file", type=str, default=None, metavar="FILE.npy",
                   help="(d,) canary vector (np.load, allow_pickle=False)")
    p.add_argument("--rounds", type=int, default=50_000, help="games R (default 50000)")
    p.add_argument("--seed", type=int, default=0, help="root seed (default 0)")
    p.add_argument("--p-member", type=float, default=0.5, help="P(B = 1) (default 0.5)")
    p.add_argument("--mode", choices=("exact", "sufficient"), default="exact",
                   help="exact: simulate every datum; sufficient: Gaussian batch means directly")
    p.add_argument("--data", type=str, default="gaussian",
                   help="gaussian | laplace | student-t:NU | bernoulli:P | exponential")
    p.add_argument("--threads", type=int, default=1, help="local threads (result unchanged)")
    p.add_argument("--workers", type=int, default=None,
                   help="run chunks on a Dask LocalCluster with this many workers")
    p.add_argument("--scheduler", type=str, default=None,
                   help="run chunks on an existing Dask scheduler (address)")
    p.add_argument("--chunk-size", type=int, default=16384,
                   help="rounds per chunk: the unit of work and of seeding (default 16384)")
    bar = p.add_mutually_exclusive_group()
    bar.add_argument("--progress", dest="progress", action="store_true", default=None,
                     help="show a progress bar on stderr (default: when stderr is a terminal)")
    bar.add_argument("--no-progress", dest="progress", action="store_false")
    add_json_flag(p)
    p.set_defaults(func=handler)


def _build_mechanism(args):
    from semi_core.mechanisms.empirical_mean import EmpiricalMean

    cov = load_npy(args.cov, "--cov") if args.cov else None
    target = load_npy(args.target_file, "--target-file") if args.target_file else None
    d = args.dim
    if d is not None:
        d = check_int(d, "--dim", minimum=1)
    if cov is not None:
        if cov.ndim != 2:
            raise ValueError(f"--cov must hold a (d, d) matrix, got shape {cov.shape}")
        if d is not None and cov.shape != (d, d):
            raise ValueError(f"--cov has shape {cov.shape}, expected ({d}, {d}) from --dim")
        d = cov.shape[0]
    if target is not None:
        if target.ndim != 1:
            raise ValueError(f"--target-file must hold a (d,) vector, got shape {target.shape}")
        if d is not None and target.size != d:
            raise ValueError(f"--target-file has {target.size} entries, expected d = {d}")
        d = target.size
    d = 1 if d is None else d
    if not np.isfinite(args.sigma) or args.sigma <= 0:
        raise ValueError(f"--sigma must be finite and > 0, got {args.sigma}")
    if cov is None:
        cov = args.sigma**2 * np.eye(d)
    if target is None:
        target = np.full(d, args.target)
    return EmpiricalMean(args.n, args.T, mu=np.full(d, args.mu), cov=cov, target=target)


def handler(args) -> Result:
    """Run the engine and summarise every test."""
    from semi_core.audit.roc import DEFAULT_FPRS, summarize
    from semi_core.game.engine import simulate

    mech = _build_mechanism(args)
    tau = _tau_arg(args.tau)
    progress = sys.stderr.isatty() if args.progress is None else args.progress
    res = simulate(mech, args.rounds, args.seed, data=args.data, mode=args.mode, tau=tau,
                   p_member=args.p_member, chunk_size=args.chunk_size, threads=args.threads,
                   workers=args.workers, scheduler=args.scheduler, progress=progress)
    tests = summarize(res, DEFAULT_FPRS)
    payload = {
        "params": {"n": args.n, "T": args.T, "tau": tau, "d": mech.d, "mu": args.mu,
                   "sigma": args.sigma, "m_star": float(mech.m_t[0]) if mech.T else None,
                   "rounds": args.rounds, "seed": args.seed, "p_member": args.p_member,
                   "mode": res.mode, "data": res.data, "chunk_size": res.chunk_size},
        "tests": tests,
        "n_members": int(res.member.sum()),
        "n_nonmembers": int((~res.member).sum()),
        "backend": res.backend,
        "kernel": res.kernel,
        "seconds": res.seconds,
    }
    lines = [f"SeMI game: n={args.n} T={args.T} tau={tau} d={mech.d} data={res.data} "
             f"mode={res.mode} R={args.rounds} seed={args.seed} ({res.seconds:.2f} s, "
             f"{res.backend})",
             f"{'test':<10} " + " ".join(f"{'TPR@' + format(f, 'g'):>18}" for f in DEFAULT_FPRS)
             + f" {'AUC':>18}"]
    for name, t in tests.items():
        cells = [f"{v['tpr']:.4f} ± {v['se']:.4f}" for v in t["tpr_at_fpr"].values()]
        lines.append(f"{name:<10} " + " ".join(f"{c:>18}" for c in cells)
                     + f" {t['auc']:.4f} ± {t['auc_se']:.4f}".rjust(19))
    lines.append("(± = Monte Carlo standard error; TPR s.e. includes threshold noise)")
    return Result(payload=payload, text="\n".join(lines))

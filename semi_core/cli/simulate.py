"""``semi-core simulate``: Monte Carlo SeMI games with the compiled engine.

Example::

    semi-core simulate --n 10 --T 10 --tau 5 --mu 0 --sigma 1 --target 3 \\
        --rounds 50000 --seed 0 --json

prints, per test (semi-star, semi-unif, semi-max, final), the TPR at FPR 0.1, 0.01, 0.001 and
the AUC, each with its Monte Carlo standard error (:mod:`semi_core.stats.empirical`).
Small runs use the NumPy twin of the engine's kernel (no Numba start-up), large ones the
compiled kernel (:func:`semi_core.game.engine.choose_kernel`; ``--kernel`` forces one, the JSON's
``kernel`` records which ran).
``--bounded-memory`` keeps only per-class score histograms (bounded memory, any number of rounds; a
second pass makes the TPR at each FPR exact, :func:`semi_core.game.engine.simulate_summary`).
"""

from __future__ import annotations

from semi_core import _params
from semi_core.cli._common import Result
from semi_core.cli._options import (
    add_executor_args,
    add_json,
    add_mechanism_args,
    add_progress,
    add_rounds,
    add_seed,
    executor_from_args,
    mechanism_from_args,
    positive_int,
    reporter_from_args,
    resolve_tau,
)

__all__ = ["register", "handler"]


def register(subparsers) -> None:
    """Add the ``simulate`` subcommand."""
    p = subparsers.add_parser(
        "simulate", help="Monte Carlo SeMI games (compiled engine): TPR at FPR and AUC per test",
        description="Play R rounds of the SeMI game (seed Alg. 1-2) for the empirical-mean "
                    "mechanism and report every test's TPR at FPR 0.1/0.01/0.001 and AUC "
                    "with Monte Carlo standard errors.")
    add_mechanism_args(p)
    add_rounds(p, default=_params.SEED_ROUNDS)
    add_seed(p)
    p.add_argument("--p-member", type=float, default=0.5, help="P(B = 1) (default 0.5)")
    p.add_argument("--mode", choices=("exact", "sufficient"), default="exact",
                   help="exact: simulate every datum; sufficient: Gaussian batch means directly")
    p.add_argument("--data", type=str, default="gaussian",
                   help="gaussian | laplace | student-t:NU | bernoulli:P | exponential")
    p.add_argument("--kernel", choices=("auto", "numba", "numpy-twin"), default="auto",
                   help="auto: the NumPy twin for small jobs (no Numba import, faster start), "
                        "the compiled kernel for large ones; numba / numpy-twin: force one "
                        "(statistics agree to rounding; the output records which ran)")
    add_executor_args(p)
    p.add_argument("--chunk-size", type=positive_int, default=16384,
                   help="rounds per chunk: the unit of work and of seeding (default 16384)")
    p.add_argument("--max-variates", type=float, default=None, metavar="N",
                   help="refuse runs drawing more random variates (default 1e12, about an "
                        "hour of one core)")
    p.add_argument("--bounded-memory", action="store_true",
                   help="bounded memory for any --rounds: keep per-class score histograms, "
                        "then a second pass for exact TPR at each FPR (AUC within a stated "
                        "bin error); default when the scores would not fit in memory")
    add_progress(p)
    add_json(p)
    p.set_defaults(func=handler)


#: Seconds per random variate drawn by the engine (for the up-front time estimate).
_VARIATE_SECONDS = 1e-8


def handler(args) -> Result:
    """Run the engine and summarise every test (streaming when the scores would not fit)."""
    import numpy as np

    from semi_core._validation import check_work, memory_limit
    from semi_core.audit.roc import DEFAULT_FPRS, resolvable, summarize
    from semi_core.game.engine import (
        build_params,
        estimate_resources,
        simulate,
        simulate_streaming,
    )

    mech = mechanism_from_args(args)
    tau = resolve_tau(args.tau, mech.T, prior=True)
    progress = reporter_from_args(args)
    # a prior: the Crafter draws tau from it and SeMI-Unif is the Neyman-Pearson test for it
    prior = tau if isinstance(tau, np.ndarray) else None
    kw = dict(data=args.data, mode=args.mode, tau=tau, unif_pmf=prior, p_member=args.p_member,
              chunk_size=args.chunk_size, executor=executor_from_args(args),
              progress=progress, max_variates=args.max_variates, kernel=args.kernel)
    stream = args.bounded_memory
    params = build_params(mech, data=args.data, mode=args.mode, tau=tau,
                          p_member=args.p_member, unif_pmf=prior)
    est = estimate_resources(params, args.rounds, args.chunk_size)
    # time from the arguments: ~1e-8 s per random variate on one core (measured ~5e-9 with
    # the compiled kernels, rounded up); the streaming mode makes up to 3 passes
    workers = max(1, kw["executor"].parallelism)
    check_work(f"simulate (--rounds {args.rounds} x {params.variates_per_round()} random "
               f"variates per round, --n {args.n}, --T {mech.T}, --dim {mech.d})",
               seconds=_VARIATE_SECONDS * est["variates"] * (3 if stream else 1) / workers,
               hint="use fewer --rounds, --mode sufficient (T*d variates per round), more "
                    "--threads or a Dask cluster (--workers/--scheduler)")
    if not stream:
        stream = est["bytes_scores"] > memory_limit()
    if stream:
        res = simulate_streaming(mech, args.rounds, args.seed, fprs=DEFAULT_FPRS, **kw)
        res["summary"] = {"method": "streaming", "passes": res.pop("passes"),
                          "bins": res.pop("bins"),
                          "note": "exact TPR at FPR; AUC within auc_bin_error"}
    else:
        r = simulate(mech, args.rounds, args.seed, **kw)
        k = int(r.member.sum())
        if k in (0, r.member.size):
            raise ValueError(f"the games drew {'no' if k == 0 else 'only'} members ({k} of "
                             f"--rounds {args.rounds} with --p-member {args.p_member!r}): both "
                             "classes are needed; use more --rounds or a --p-member nearer 0.5")
        # the per-test summaries (sorts, binary searches) on the run's local threads
        res = {"tests": summarize(r, DEFAULT_FPRS, threads=kw["executor"].threads),
               "n_members": int(r.member.sum()),
               "n_nonmembers": int((~r.member).sum()), "mode": r.mode, "data": r.data,
               "chunk_size": r.chunk_size, "backend": r.backend, "kernel": r.kernel,
               "seconds": r.seconds, "summary": {"method": "in-memory"},
               "executor_note": r.info.get("executor_note")}
    tests = res["tests"]
    for t in tests.values():  # the streaming summary too: levels below 1/N0 are flagged
        t["fpr_resolution"] = 1.0 / res["n_nonmembers"]
        for f, v in t["tpr_at_fpr"].items():
            v["resolvable"] = bool(resolvable(float(f), res["n_nonmembers"])[0])
    payload = {
        "params": {"n": args.n, "T": mech.T, "tau": tau, "d": mech.d, "mu": args.mu,
                   "sigma": args.sigma, "m_star": float(mech.m_t[0]),
                   "rounds": args.rounds, "seed": args.seed, "p_member": args.p_member,
                   "mode": res["mode"], "data": res["data"], "chunk_size": res["chunk_size"]},
        "tests": tests,
        "n_members": res["n_members"],
        "n_nonmembers": res["n_nonmembers"],
        "backend": res["backend"],
        "executor_note": res.get("executor_note"),
        "kernel": res["kernel"],
        "seconds": res["seconds"],
        "summary": res["summary"],
    }
    lines = [f"SeMI game: n={args.n} T={mech.T} tau={tau} d={mech.d} data={res['data']} "
             f"mode={res['mode']} R={args.rounds} seed={args.seed} ({res['seconds']:.2f} s, "
             f"{res['backend']}, {res['summary']['method']})",
             f"{'test':<10} " + " ".join(f"{'TPR@' + format(f, 'g'):>18}" for f in DEFAULT_FPRS)
             + f" {'AUC':>18}"]
    for name, t in tests.items():
        cells = [f"{v['tpr']:.4f} ± {v['se']:.4f}" + ("" if v["resolvable"] else "*")
                 for v in t["tpr_at_fpr"].values()]
        lines.append(f"{name:<10} " + " ".join(f"{c:>18}" for c in cells)
                     + f" {t['auc']:.4f} ± {t['auc_se']:.4f}".rjust(19))
    lines.append("(± = Monte Carlo standard error; TPR s.e. includes threshold noise)")
    if res.get("executor_note"):
        lines.append(f"note: {res['executor_note']}")
    if any(not v["resolvable"] for t in tests.values()
           for v in t["tpr_at_fpr"].values()):
        lines.append(f"* FPR below the resolution 1/{res['n_nonmembers']} (non-members): the "
                     "cell is the TPR at FPR 0; use more --rounds")
    return Result(payload=payload, text="\n".join(lines))

"""``semi-core seq-audit``: anytime-valid sequential DP audits (MMD witness, test martingales).

Examples::

    semi-core seq-audit --mechanism nondp-laplace-1 --claimed-epsilon 0.01 --delta 1e-5 \\
        --failure-prob 0.05 --max-obs 5000 --runs 20 --algorithm 1 --seed 0 --json
    semi-core seq-audit --mechanism nondp-gaussian-1 --epsilon-grid 0,0.1,0.2,0.4 --json
    semi-core seq-audit --stream semi --mechanism noisy-mean --noise 0.5 --claimed-epsilon 1 --json

``--json`` prints one object: per run ``rejected`` and ``stopped_at`` (test pairs after the
20 discarded warm-up pairs), the summary ``rejection_rate`` and ``mean_stop`` (over rejecting
runs) with standard errors, and ``log_wealth`` paths (every ``--path-stride``-th step) to plot.
Where the rejection rate is a Type-I figure (a DP zoo mechanism at ``--claimed-epsilon``), the
summary's ``power_at_alternative`` holds the rejection rate of the same tester, with the runs'
median bandwidth, at the mechanism's known non-DP alternative (``--power-runs`` runs).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from semi_core.cli._common import Result
from semi_core.cli._options import (
    DeprecatedAlias,
    add_delta,
    add_failure_prob,
    add_json,
    add_progress,
    add_seed,
    reporter_from_args,
)

__all__ = ["register", "handler"]

_SEMI_MECHS = ("noisy-mean", "randomized-response", "nondp-laplace-1", "dp-laplace",
               "nondp-gaussian-1", "dp-gaussian", "nondp-laplace-2", "nondp-gaussian-2")


def register(subparsers) -> None:
    """Add the ``seq-audit`` subcommand."""
    from semi_core.mechanisms.zoo import ZOO

    p = subparsers.add_parser(
        "seq-audit", help="anytime-valid sequential DP audit (MMD test martingale / e-process)",
        description="Draw outputs of a mechanism on S={0} and S'={0,1} one pair at a time and "
                    "stop as soon as 'the mechanism is (eps, delta)-DP' is rejected at level "
                    "--failure-prob (Ville), or report no violation within --max-obs pairs. "
                    "--epsilon-grid gives an anytime-valid epsilon lower bound; --stream semi "
                    "audits a SeMI game played round by round.")
    p.add_argument("--mechanism", default="nondp-laplace-1",
                   help=f"one of {sorted(ZOO)} (stream mmd) or {list(_SEMI_MECHS)} (stream semi)")
    p.add_argument("--stream", choices=("mmd", "semi"), default="mmd",
                   help="mmd: the seed's MMD test; semi: SeMI stream audit")
    p.add_argument("--claimed-epsilon", dest="epsilon", type=float, default=None,
                   help="the epsilon claimed for the mechanism (the null hypothesis), >= 0")
    p.add_argument("--epsilon", dest="epsilon", type=float, action=DeprecatedAlias,
                   new="--claimed-epsilon")
    p.add_argument("--epsilon-grid", default=None,
                   help="comma-separated epsilons: anytime-valid lower bound over the grid")
    p.add_argument("--mech-epsilon", type=float, default=None,
                   help="epsilon the zoo mechanism is built for (default: --claimed-epsilon)")
    add_delta(p, default=1e-5)
    add_failure_prob(p)
    p.add_argument("--max-obs", type=int, default=5000, help="N_max >= 1 (pairs or rounds)")
    p.add_argument("--runs", type=int, default=1, help="independent runs >= 1")
    p.add_argument("--algorithm", type=int, default=None,
                   help="1 (ONS, default) or 2 (e-process); stream mmd only")
    p.add_argument("--evalue", choices=("max", "mixture"), default=None,
                   help="Alg. 2 stopping statistic: seed's max-minus-regret (default) or exact "
                        "UP mixture; --algorithm 2 only")
    p.add_argument("--bound", choices=("new", "auditorium"), default=None,
                   help="MMD threshold: Thm 3.1 (new, default) or DP-Auditorium; stream mmd only")
    p.add_argument("--bandwidth", default=None,
                   help="'median' (default) or a positive number; stream mmd only")
    p.add_argument("--witness", choices=("exact", "rff"), default=None,
                   help="OGA witness: exact RBF kernel (default; O(N^2) per run) or the "
                        "squared random-Fourier-feature kernel (O(N D^2); exactly valid; "
                        "power: benchmarks/bench_witness.py); stream mmd only")
    p.add_argument("--features", type=int, default=None,
                   help="number D of random frequencies of --witness rff (default 16, "
                        "1..128; D (2D + 1) features)")
    p.add_argument("--warmup", type=int, default=None,
                   help="discarded warm-up pairs for the median bandwidth (default 20, >= 2); "
                        "stream mmd with --bandwidth median only")
    p.add_argument("--noise", type=float, default=None,
                   help="noisy-mean noise std (default 0.1; n=10, data N(-1, 0.1^2), canary "
                        "+1); --stream semi --mechanism noisy-mean only")
    p.add_argument("--noise-floor", choices=("count", "scale", "auditorium"), default=None,
                   help="reading of the zoo mechanisms: count = the noisy count floored at "
                        "1e-12 (eq. 5 as printed, default); scale = the noise scale floored "
                        "(Gaussian count noise, analytic sigma); auditorium = DP-Auditorium's "
                        "MeanMechanism code, which the seed says it follows (scale floor, "
                        "Laplace(2/eps) count noise for every variant, classical sigma "
                        "sqrt(2 log(1.25/delta)) 2/eps, NonDP1 with the whole budget): the "
                        "reading under which the NonDPGaussian2 rows of Table 1 reproduce; zoo "
                        "mechanisms only")
    p.add_argument("--conventions", default=None,
                   help="'paper' (Alg. 1/3/4 and Thm 3.1 as printed, default), 'notebook' (the "
                        "authors' public notebook: its threshold, ONS constants, OGA step and "
                        "radius) or a comma list of tau,ons,oga; stream mmd, --algorithm 1 for "
                        "ons, --witness exact for oga")
    p.add_argument("--power-runs", type=int, default=None,
                   help="runs at the known non-DP alternative beside a Type-I figure (a DP "
                        "mechanism audited at --claimed-epsilon): its rejection rate with the "
                        "same tester and bandwidth is the power that makes 0 rejections "
                        "evidence (default: --runs; 0 skips it and says so); stream mmd, "
                        "dp-laplace / dp-gaussian only")
    p.add_argument("--path-stride", type=int, default=10, help="keep every k-th path point")
    add_seed(p)
    add_progress(p)
    add_json(p)
    p.set_defaults(func=handler)


def _grid(text: str) -> list[float]:
    try:
        vals = [float(v) for v in text.split(",") if v.strip()]
    except ValueError:
        raise ValueError(f"--epsilon-grid must be comma-separated numbers, got {text!r}") from None
    if not vals:
        raise ValueError("--epsilon-grid is empty")
    return vals


def _bar(args):
    """The runs as a stage of the command's one progress reporter (stderr, ``--no-progress``):
    ``(stage, tick)``; ``stage.close()`` ends it."""
    bar = reporter_from_args(args).stage("seq-audit", total=args.runs, unit="run").open()
    return bar, lambda i, n: bar.update(1)


#: Options that apply to one stream / algorithm only, with their defaults.
_DEFAULTS = {"algorithm": 1, "evalue": "max", "bound": "new", "bandwidth": "median",
             "warmup": 20, "noise": 0.1, "witness": "exact", "features": 16,
             "noise_floor": "count", "conventions": "paper"}
#: Accepted range of --noise (outside, the noisy mean's log-LR over- or underflows).
NOISE_RANGE = (1e-6, 1e6)


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _refuse_inapplicable(args) -> None:
    """Options given that the chosen stream, algorithm or mechanism does not use are refused by
    name (never silently ignored)."""
    given = {k for k in _DEFAULTS if getattr(args, k) is not None}
    if args.stream == "semi":
        bad = sorted(given & {"algorithm", "evalue", "bound", "bandwidth", "warmup", "witness",
                              "features", "conventions"})
        why = "--stream semi (they configure the MMD test of --stream mmd)"
        if not bad and "noise" in given and args.mechanism != "noisy-mean":
            bad, why = ["noise"], f"--mechanism {args.mechanism} (noisy-mean only)"
        if not bad and args.mech_epsilon is not None and args.mechanism == "noisy-mean":
            bad, why = ["mech_epsilon"], "--mechanism noisy-mean (its privacy is set by --noise)"
        if not bad and "noise_floor" in given and args.mechanism in ("noisy-mean",
                                                                      "randomized-response"):
            bad, why = ["noise_floor"], f"--mechanism {args.mechanism} (zoo mechanisms only)"
    else:
        bad, why = [], ""
        if "noise" in given:
            bad, why = ["noise"], "--stream mmd (noisy-mean of --stream semi only)"
        elif "evalue" in given and (args.algorithm or 1) != 2:
            bad, why = ["evalue"], "--algorithm 1 (it is Alg. 2's stopping statistic)"
        elif "features" in given and args.witness != "rff":
            bad, why = ["features"], "the exact witness (it sets the RFF witness's size)"
        elif "warmup" in given and args.bandwidth not in (None, "median"):
            bad, why = ["warmup"], ("a fixed --bandwidth (the warm-up only sets the median "
                                    "bandwidth)")
    if not bad and args.power_runs is not None:
        from semi_core.audit.sequential.experiments import ALTERNATIVE

        if args.stream == "semi" or args.epsilon is None or args.mechanism not in ALTERNATIVE:
            bad, why = ["power_runs"], (f"this audit (the power beside a Type-I figure is for "
                                        f"--stream mmd, --claimed-epsilon and a mechanism in "
                                        f"{sorted(ALTERNATIVE)})")
    if bad:
        flags = ", ".join(_flag(b) for b in bad)
        raise ValueError(f"{flags} {'does' if len(bad) == 1 else 'do'} not apply to {why}; "
                         "remove it")
    for k, v in _DEFAULTS.items():
        if getattr(args, k) is None:
            setattr(args, k, v)


def _check(args):
    from semi_core._validation import check_delta, check_int, check_real
    from semi_core.audit.sequential.tau import check_alpha, check_epsilon

    _refuse_inapplicable(args)
    check_delta(args.delta, "--delta")
    check_alpha(args.failure_prob, "--failure-prob")
    check_int(args.max_obs, "--max-obs", minimum=1)
    check_int(args.runs, "--runs", minimum=1)
    check_int(args.path_stride, "--path-stride", minimum=1)
    if args.power_runs is not None:
        check_int(args.power_runs, "--power-runs", minimum=0)
    check_int(args.warmup, "--warmup", minimum=2)
    check_int(args.features, "--features", minimum=1, maximum=128)
    if args.algorithm not in (1, 2):
        raise ValueError(f"--algorithm must be 1 or 2, got {args.algorithm}")
    if (args.epsilon is None) == (args.epsilon_grid is None):
        raise ValueError("give exactly one of --claimed-epsilon or --epsilon-grid")
    if args.epsilon is not None:
        eps = [check_epsilon(args.epsilon, "--claimed-epsilon")]
    else:
        eps = [check_epsilon(e, "--epsilon-grid entries") for e in _grid(args.epsilon_grid)]
    if args.mech_epsilon is not None:
        check_epsilon(args.mech_epsilon, "--mech-epsilon")
    lo, hi = NOISE_RANGE
    noise = check_real(args.noise, "--noise")
    if not lo <= noise <= hi:
        raise ValueError(f"--noise must be in [{lo:g}, {hi:g}], got {noise:g}")
    bw = args.bandwidth
    if bw != "median":
        try:
            bw = float(bw)
        except ValueError:
            raise ValueError(f"--bandwidth must be 'median' or a number, got {bw!r}") from None
        if not (np.isfinite(bw) and bw > 0):
            raise ValueError(f"--bandwidth must be finite and > 0, got {bw}")
    return eps, bw


def _zoo(name: str, eps: float, delta: float, flag: str, floor: str = "count"):
    """A zoo mechanism at design epsilon ``eps`` (from ``flag``); nothing substituted."""
    from semi_core.audit.sequential.conventions import make_reading_mechanism
    from semi_core.mechanisms.zoo import ZOO_EPSILON_RANGE

    lo, hi = ZOO_EPSILON_RANGE
    if not lo <= eps <= hi:
        raise ValueError(f"{flag} = {eps:g}: --mechanism {name} is built for an epsilon in "
                         f"[{lo:g}, {hi:g}]; give --mech-epsilon in that range")
    if "gaussian" in name and delta <= 0:
        raise ValueError(f"--delta 0: --mechanism {name} is calibrated to (epsilon, delta)-DP "
                         "with delta > 0; give --delta > 0 or a Laplace mechanism")
    return make_reading_mechanism(name, eps, delta, reading=floor)


def _power(args, mech_eps: float, light, power_runs: int) -> dict:
    """The power beside a Type-I figure: the rejection rate, by the same tester with the Type-I
    runs' median bandwidth, at the mechanism's known non-DP alternative (seed child ``runs`` of
    ``--seed``, after the Type-I runs' children ``0 .. runs-1``)."""
    from semi_core.audit.sequential.experiments import ALTERNATIVE, power_at_alternative

    if power_runs == 0:
        return {"alternative": ALTERNATIVE[args.mechanism], "runs": 0,
                "skipped": "--power-runs 0: the Type-I figure stands without its power"}
    bandwidth = float(np.median([r.bandwidth for r in light]))
    seed = np.random.SeedSequence(args.seed).spawn(args.runs + 1)[-1]
    return power_at_alternative(
        args.mechanism, args.epsilon, bandwidth=bandwidth, runs=power_runs, delta=args.delta,
        failure_prob=args.failure_prob, max_obs=args.max_obs, seed=seed,
        floor=args.noise_floor, conventions=args.conventions, algorithm=args.algorithm,
        mech_epsilon=mech_eps, witness=args.witness, features=args.features)


def _seed_cell(args, light) -> dict:
    """The notebook's censored mean stop (non-rejecting runs at N_max + 1) and, when the audit
    is one of the seed's Table 1/2 cells (same mechanism, epsilon, delta 1e-5, alpha 0.05),
    the seed's cell and the mean over its rejecting runs decoded from it."""
    from semi_core.audit.sequential.experiments import (
        SEED_TABLE1,
        SEED_TABLE2,
        censored_mean_stop,
        seed_mean_over_rejecting,
    )

    stops = [r.stopped_at for r in light if r.rejected]
    cm, cse = censored_mean_stop(stops, len(light), args.max_obs)
    out = {"censored_mean_stop": cm, "censored_mean_stop_se": cse}
    table = SEED_TABLE1 if args.algorithm == 1 else SEED_TABLE2
    cell = table.get(args.mechanism, {}).get(args.epsilon)
    if (cell is not None and args.mech_epsilon in (None, args.epsilon) and args.delta == 1e-5
            and args.failure_prob == 0.05):
        rate, rse, nbar, nse = cell
        out["seed_value"] = {
            "table": args.algorithm, "rejection_rate": rate, "rejection_rate_se": rse,
            "mean_stop_censored": nbar, "mean_stop_censored_se": nse, "runs": 20,
            "max_obs": {0.01: 2000, 0.1: 5000}[args.epsilon],
            "mean_stop_over_rejecting": (seed_mean_over_rejecting(
                rate, nbar, 20, {0.01: 2000, 0.1: 5000}[args.epsilon]) if nbar else None),
            "reading": "the seed's N-bar is the notebook's censored mean (runs that never "
                       "reject count at N_max + 1; claim table1.nbar_reading)"}
    return out


def _ceiling(args, mech, bandwidths, comps) -> dict:
    """The ceiling of this test for this mechanism (:mod:`semi_core.audit.sequential.ceiling`)
    at the runs' median bandwidth, from 20,000 fresh pairs (seed child ``runs + 2``)."""
    from semi_core.audit.sequential import mechanism_source
    from semi_core.audit.sequential.ceiling import mechanism_ceiling
    from semi_core.audit.sequential.conventions import tau_notebook
    from semi_core.mechanisms.zoo import SEED_PAIR

    return mechanism_ceiling(
        mechanism_source(mech, *SEED_PAIR), float(np.median(bandwidths)), args.delta,
        n_pairs=20_000, seed=np.random.SeedSequence(args.seed).spawn(args.runs + 2)[-1],
        radius=0.5 if "oga" in comps else 1.0, bound=args.bound,
        tau=tau_notebook if "tau" in comps else None)


def _ceiling_text(c: dict) -> str:
    lo, hi = c["epsilon_ceiling_range"]
    return (f"\n  ceiling: no epsilon above {c['epsilon_ceiling']:.3g} (range {lo:.3g}-{hi:.3g}) "
            f"can be rejected by this test at bandwidth {c['bandwidth']:.3g}, whatever the "
            f"number of observations (MMD^2 estimate {c['mmd2']:.3g} +- {c['mmd2_se']:.2g})")


def _seed_text(summary: dict) -> str:
    text = (f"\n  censored mean stop (non-rejecting runs at N_max + 1, the seed's N-bar): "
            f"{summary['censored_mean_stop']:.1f} +- {summary['censored_mean_stop_se']:.1f}")
    sv = summary.get("seed_value")
    if sv:
        text += (f"\n  seed Table {sv['table']}: rejection rate {sv['rejection_rate']:g} +- "
                 f"{sv['rejection_rate_se']:g}, N-bar "
                 + (f"{sv['mean_stop_censored']:g} +- {sv['mean_stop_censored_se']:g} (over "
                    f"its rejecting runs: {sv['mean_stop_over_rejecting']:.0f})"
                    if sv["mean_stop_censored"] else "-")
                 + f" ({sv['runs']} runs, N_max {sv['max_obs']})")
    return text


def _power_text(pw: dict | None) -> str:
    if pw is None:
        return ""
    if pw["runs"] == 0:
        return f"\n  power at {pw['alternative']}: not measured ({pw['skipped']})"
    return (f"\n  power at {pw['alternative']} (the known non-DP alternative, same tester and "
            f"bandwidth {pw['bandwidth']:.3g}, {pw['runs']} run(s)): rejection rate "
            f"{pw['rejection_rate']:.3f} +- {pw['rejection_rate_se']:.3f}; 0 rejections above "
            "are evidence only when this is high")


def _json_path_bytes(args, n_eps: int) -> float:
    """Bytes of the strided wealth paths kept for the JSON output of all runs."""
    return 40.0 * args.runs * n_eps * (args.max_obs / args.path_stride + 1)


def _semi(args, eps) -> Result:
    from semi_core.audit.sequential.semi_stream import semi_stream_audit
    from semi_core.mechanisms.zoo import RandomizedResponse

    if args.mechanism == "noisy-mean":
        from semi_core.mechanisms.noisy_mean import NoisyMean

        mech = NoisyMean(10, 1, noise=args.noise, data_mean=-1.0, data_std=0.1)
    elif args.mechanism == "randomized-response":
        mech = RandomizedResponse(args.mech_epsilon if args.mech_epsilon is not None
                                  else max(eps), args.delta)
    elif args.mechanism in _SEMI_MECHS:
        if args.noise_floor == "auditorium":
            raise ValueError("--noise-floor auditorium applies to --stream mmd only (the SeMI "
                             "stream needs exact densities: use count)")
        flag = "--mech-epsilon" if args.mech_epsilon is not None else "the largest --claimed-epsilon"
        mech = _zoo(args.mechanism, args.mech_epsilon if args.mech_epsilon is not None
                    else max(eps), args.delta, flag, args.noise_floor)
    else:
        raise ValueError(f"--mechanism must be one of {list(_SEMI_MECHS)} with --stream semi, "
                         f"got {args.mechanism!r}")
    from semi_core.audit.sequential.semi_stream import check_semi_stream_work
    from semi_core.audit.sequential.tau import success_bound
    from semi_core.audit.sequential.tester import rejection_summary, run_audits

    p_max = success_bound(max(eps), args.delta)
    if p_max >= 1:
        raise ValueError(f"--claimed-epsilon {max(eps):g} with --delta {args.delta:g} makes the success "
                         "bound p* = 1 in double precision (from eps ~ 37): no guessing game "
                         "can reject it; audit a smaller epsilon")
    check_semi_stream_work(mech, args.max_obs, n_eps=len(eps), runs=args.runs,
                           extra_bytes=_json_path_bytes(args, len(eps)),
                           names={"max_rounds": "--max-obs", "runs": "--runs"})

    def keep(r):
        d = r.to_dict(paths=False)
        d["log_wealth"] = r.log_wealth[::args.path_stride].T.tolist()
        return d

    bar, tick = _bar(args)
    runs = run_audits(audit=lambda ss: semi_stream_audit(
        mech, eps, delta=args.delta, failure_prob=args.failure_prob, max_rounds=args.max_obs,
        seed=ss), keep=keep, runs=args.runs, seed=args.seed, progress=tick, summary=None).runs
    if bar is not None:
        bar.close()
    stops = [[r["stopped_at"][j] for r in runs if r["stopped_at"][j] is not None]
             for j in range(len(eps))]
    rates = rejection_summary([r["rejected"] for r in runs], stops)     # (runs, n_eps)
    summary = {"epsilons": sorted(eps), "rejection_rate": rates["rejection_rate"],
               "rejection_rate_se": rates["rejection_rate_se"], "mean_stop": rates["mean_stop"],
               "epsilon_lower_bound": [r["epsilon_lower_bound"] for r in runs]}
    payload = {"stream": "semi", "mechanism": mech.params(), "runs": runs, "summary": summary,
               "path_stride": args.path_stride}
    text = "\n".join(
        [f"SeMI stream audit of {args.mechanism}, delta={args.delta}, alpha={args.failure_prob}"]
        + [f"  eps={e:g}: rejection rate {rr:.3f}, mean rounds to reject {ms}"
           for e, rr, ms in zip(summary["epsilons"], summary["rejection_rate"],
                                summary["mean_stop"])])
    return Result(payload=payload, text=text)


def handler(args) -> Result:
    """Run the audit(s); see the module docstring for the payload."""
    eps, bw = _check(args)
    if args.stream == "semi":
        return _semi(args, eps)
    from semi_core.audit.sequential import (
        mechanism_source,
        run_audits,
        sequential_grid,
        summarize,
    )
    from semi_core.audit.sequential.tau import tau_for
    from semi_core.audit.sequential.tester import check_sequential_work
    from semi_core.mechanisms.zoo import SEED_PAIR, ZOO

    if args.mechanism not in ZOO:
        raise ValueError(f"--mechanism must be one of {sorted(ZOO)} with --stream mmd, got "
                         f"{args.mechanism!r}")
    mech_eps = args.mech_epsilon if args.mech_epsilon is not None else (
        args.epsilon if args.epsilon is not None else None)
    if mech_eps is None:
        raise ValueError("--mech-epsilon is required with --epsilon-grid (the epsilon the "
                         "mechanism is built for)")
    flag = "--mech-epsilon" if args.mech_epsilon is not None else "--claimed-epsilon"
    mech = _zoo(args.mechanism, mech_eps, args.delta, flag, args.noise_floor)
    from semi_core.audit.sequential.conventions import parse_conventions

    comps = parse_conventions(args.conventions)
    if "ons" in comps and args.algorithm != 1:
        raise ValueError(f"--conventions {args.conventions} replaces Alg. 1's ONS: use "
                         "--algorithm 1")
    if "oga" in comps and args.witness != "exact":
        raise ValueError(f"--conventions {args.conventions} replaces the exact OGA witness: use "
                         "--witness exact")
    if "tau" in comps and args.bound != "new":
        raise ValueError(f"--conventions {args.conventions} replaces the threshold: drop --bound")
    bad = [e for e in eps if not np.isfinite(tau_for(args.bound, e, args.delta))]
    if bad:
        raise ValueError(f"--claimed-epsilon {bad[0]:g} with --bound {args.bound} gives an infinite MMD "
                         "threshold (e^epsilon overflows): use epsilon <= 700 (the bound is "
                         "vacuous from ~0.9)")
    from semi_core.audit.sequential.experiments import ALTERNATIVE

    power_runs = 0
    if args.epsilon is not None and args.mechanism in ALTERNATIVE:
        power_runs = args.runs if args.power_runs is None else args.power_runs
    check_sequential_work(args.max_obs, n_eps=len(eps), algorithm=args.algorithm,
                          warmup=args.warmup if bw == "median" else 0,
                          runs=args.runs + power_runs,
                          extra_bytes=_json_path_bytes(args, len(eps)),
                          features=args.features if args.witness == "rff" else None,
                          names={"max_obs": "--max-obs", "runs": "--runs",
                                 "warmup": "--warmup"})
    s = args.path_stride

    def keep(g):
        # keep the strided paths only (memory: runs x max_obs / stride, as estimated)
        if args.epsilon is not None:
            r = g.results[0]
            d = r.to_dict(paths=False)
            d["log_wealth"] = r.log_wealth[::s].tolist()
            return d, dataclasses.replace(r, log_wealth=r.log_wealth[-1:], log_mixture=None,
                                          witness=None)
        d = g.to_dict(paths=False)
        d["lower_bound_path"] = g.lower_bound_path[::s].tolist()
        for t, r in zip(d["tests"], g.results):
            t["log_wealth"] = r.log_wealth[::s].tolist()
        return d, g.epsilon_lower_bound

    bar, tick = _bar(args)
    kept = run_audits(audit=lambda ss: sequential_grid(
        mechanism_source(mech, *SEED_PAIR), eps, delta=args.delta,
        failure_prob=args.failure_prob, max_obs=args.max_obs, algorithm=args.algorithm,
        bandwidth=bw, warmup=args.warmup, bound=args.bound, evalue=args.evalue, seed=ss,
        witness=args.witness, features=args.features, conventions=args.conventions,
        planned_runs=None if power_runs else args.runs),
        keep=keep, runs=args.runs, seed=args.seed, progress=tick, summary=None).runs
    if bar is not None:
        bar.close()
    runs = [d for d, _ in kept]
    light = lbs = [x for _, x in kept]        # the light results, or the lower bounds
    if args.epsilon is not None:
        summary = summarize(light)
        summary.update(_seed_cell(args, light))
        summary["epsilon_ceiling"] = _ceiling(args, mech, [r.bandwidth for r in light], comps)
        if args.mechanism in ALTERNATIVE:
            summary["power_at_alternative"] = _power(args, mech_eps, light, power_runs)
        payload = {"stream": "mmd", "mechanism": mech.params(), "runs": runs,
                   "summary": summary, "path_stride": s, "noise_floor": args.noise_floor,
                   "conventions": args.conventions,
                   "log_wealth_threshold": float(np.log(1 / args.failure_prob))}
        ms = summary["mean_stop"]
        text = (f"{mech.name} at eps={args.epsilon:g}, delta={args.delta:g}, alpha="
                f"{args.failure_prob:g}, Alg. {args.algorithm}, {args.runs} run(s): rejection "
                f"rate {summary['rejection_rate']:.3f} +- {summary['rejection_rate_se']:.3f}; "
                + (f"mean stop {ms:.1f} +- {summary['mean_stop_se']:.1f} pairs" if ms is not None
                   else "no rejection") + f"; verdict: {summary['verdict']} (noise floor: "
                f"{args.noise_floor})" + _seed_text(summary)
                + _ceiling_text(summary["epsilon_ceiling"])
                + _power_text(summary.get("power_at_alternative")))
        return Result(payload=payload, text=text)
    degen = sum(bool(r["tests"][0]["degenerate_witness"]) for r in runs)
    payload = {"stream": "mmd", "mechanism": mech.params(), "runs": runs,
               "noise_floor": args.noise_floor, "conventions": args.conventions,
               "degenerate_runs": degen,
               "epsilon_lower_bound": lbs[0] if len(lbs) == 1 else lbs,
               "epsilon_ceiling": _ceiling(args, mech, [r["bandwidth"] for r in runs], comps),
               "reading": "largest grid epsilon with every smaller grid epsilon rejected "
                          "(fixed-sequence; valid at level alpha at every time)",
               "path_stride": s}
    text = (f"{mech.name}: anytime-valid epsilon lower bound(s) {lbs} over grid {sorted(eps)} "
            f"(alpha={args.failure_prob:g})"
            + (f"; the witness was degenerate in {degen}/{len(runs)} run(s): a bound of 0 there "
               "is no evidence" if degen else "")
            + _ceiling_text(payload["epsilon_ceiling"]))
    return Result(payload=payload, text=text)

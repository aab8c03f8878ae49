r"""``semi-core leakage``: per-datum membership leakage of a (noisy, sub-sampled) mean.

Examples::

    semi-core leakage --data bernoulli --n 1000 --d 5000 --target easy --fpr 0.01 --json
    semi-core leakage --target hard --noise 0.25 --subsample 0.5 --simulate 2000 --json
    semi-core leakage --data gaussian:0,2 --n 500 --d 1000 --simulate 2000 --json
    semi-core leakage --data-file population.npy --n 200 --simulate 1000 --json
    semi-core leakage --target easy --subsample 0.5 --inclusion per-coordinate --simulate 4000
    semi-core leakage --game average --n 1000 --d 5000 --simulate 4000 --json   # App. B
    semi-core leakage --dataset digits --rank 20 --json        # the most exposed records

``--inclusion``: with sub-sampling, one inclusion event for the whole release (``shared``, the
mechanism as defined) or one k-subset per coordinate (``per-coordinate``: the model the seed's
Eq. 15/16 describe). ``--game average``: the average-datum game (Alg. 3/4), a fresh target
each round, limit ``N(-+M/2, M)`` with ``M = d/n`` noiseless and, for Gaussian data, the
log-LR's exact finite-n moments.

``--data-file`` rows are the population (each datum a uniformly drawn row; the closed forms and
the Eq. 10 attack use the rows' full covariance, :class:`~semi_core.attacks.leakage.
CovarianceMean`, not the seed's independent-columns form, which over-states the leakage of
correlated columns; a singular covariance is refused, ``--d`` and ``--inclusion
per-coordinate`` too); ``--dataset`` ranks records by the
noiseless full-data m* and refuses the single-target options (--noise, --subsample, --simulate,
--target, --data, --data-file) rather than ignoring them.

Closed forms (``per_datum_leakage`` seed, corrected where it errs): ``m_star`` (Eq. 7/12),
``leakage`` (optimal advantage, Eq. 8), ``power`` and ``threshold`` at ``--fpr`` (Eq. 9), the
record's GDP curve; with ``--subsample`` the shared-inclusion forms and the paper's
per-coordinate approximation side by side; ``--simulate R`` plays ``R`` games (sufficient
statistics; the one game runner on the executor of ``--threads`` / ``--workers`` /
``--scheduler``, the result does not depend on it) and reports TPR at FPR, the Bayes
adversary's advantage and AUC with SEs.

The ``threshold`` field is the Neyman-Pearson threshold at ``--fpr`` of the *limit experiment's*
log-LR, always on one scale, ``threshold_scale = "log_lr"``: the log-likelihood ratio
:math:`\log p_1(o)/p_0(o)` of one release (``PerDatumMean.theory``), in the limit
:math:`\log(1-q+q\,e^{s x - s^2/2})` with :math:`q=k/n`, :math:`s^2=m_{\rm in}`,
:math:`x\sim\mathcal N(0,1)` under H0; without sub-sampling (:math:`q=1`) this is
:math:`\sqrt{m^*}x-m^*/2` (Cor. 3.2). It is compared with the ``exact``/``approx`` scores of
the simulation, which are on the same scale.
"""

from __future__ import annotations

import time

import numpy as np

from semi_core._validation import check_work
from semi_core.cli._common import Result, load_npy
from semi_core.cli._options import (
    add_executor_args,
    add_json,
    add_progress,
    add_seed,
    executor_from_args,
    nonneg_int,
    positive_int,
    reporter_from_args,
)

__all__ = ["register", "handler"]

_DATASETS = ("digits", "breast_cancer", "wine")


def register(subparsers) -> None:
    """Add the ``leakage`` subcommand."""
    p = subparsers.add_parser(
        "leakage", help="per-datum membership leakage of a target (seed: per_datum_leakage)",
        description="Leakage score m*, optimal advantage, power and threshold at an FPR, GDP "
                    "curve of one target under the (noisy, sub-sampled) empirical mean; "
                    "--simulate R checks them by Monte Carlo; --dataset ranks the records of "
                    "a bundled dataset by exposure.")
    p.add_argument("--data", default=None, metavar="SPEC",
                   help="data law: bernoulli (p_j ~ U[0.25, 0.75], seed App. E.1; default), "
                        "bernoulli:P (every p_j = P), gaussian (N(0, 1) coordinates), "
                        "gaussian:MU,SD, poisson:LAM")
    p.add_argument("--data-file", default=None, metavar="FILE.npy",
                   help="the population as a (rows, d) .npy array: each datum is a uniformly "
                        "drawn row (closed forms and the attack use the rows' mean and full "
                        "covariance; a singular covariance is refused; rows are simulated row "
                        "by row); sets d")
    p.add_argument("--n", type=positive_int, default=None,
                   help="dataset size n (default 1000; with --dataset, its number of records)")
    p.add_argument("--d", "--dim", dest="d", type=positive_int, default=None,
                   help="dimension d of --data (default 5000; a --data-file sets it)")
    p.add_argument("--target", default=None, metavar="easy|medium|hard|FILE.npy",
                   help="the target z*: a named seed target (bernoulli: easy/medium/hard; "
                        "other laws: medium, a draw from the law) or a .npy vector of length d "
                        "(default easy for bernoulli, else medium)")
    p.add_argument("--noise", type=float, default=0.0,
                   help="noise std gamma (release adds N(0, gamma^2 I)/sqrt(n); default 0)")
    p.add_argument("--subsample", type=float, default=1.0,
                   help="sub-sampling ratio rho in (0, 1] (k = rho n rows; default 1)")
    p.add_argument("--inclusion", choices=("shared", "per-coordinate"), default="shared",
                   help="with --subsample: one inclusion event for the whole release (shared, "
                        "the mechanism as defined; default) or one k-subset per coordinate "
                        "(per-coordinate, the model under which the seed's Eq. 16 holds)")
    p.add_argument("--game", choices=("per-datum", "average"), default="per-datum",
                   help="per-datum: one fixed target (Alg. 1/2; default); average: a fresh "
                        "target z* ~ D each round (Alg. 3/4, App. B), no --target/--subsample")
    p.add_argument("--fpr", type=float, default=0.01, help="false-positive rate alpha "
                                                           "(default 0.01)")
    p.add_argument("--delta", type=float, default=1e-5,
                   help="delta for the per-datum GDP epsilon (default 1e-5)")
    p.add_argument("--simulate", type=nonneg_int, default=0, metavar="R",
                   help="Monte Carlo check with R games (default 0: closed forms only)")
    p.add_argument("--dataset", choices=_DATASETS, default=None,
                   help="rank the records of a bundled scikit-learn dataset by exposure")
    p.add_argument("--rank", type=positive_int, default=None,
                   help="with --dataset: how many of the most exposed records (default 20)")
    add_executor_args(p)
    add_seed(p)
    add_progress(p)
    add_json(p)
    p.set_defaults(func=handler)


#: Wall seconds per simulated round and coordinate (sufficient statistics, one core; upper side).
_SECONDS_PER_ROUND_COORD = 2e-7
#: Largest --noise accepted: gamma^2 must stay far inside float64 range.
_MAX_NOISE = 1e100
#: Rounds per chunk of the simulation.
_CHUNK = 1000


def _law(args):
    """The data law of ``--data SPEC`` or ``--data-file FILE.npy``, its name and (for a file)
    the rows' covariance."""
    from semi_core.mechanisms.per_datum import ProductLaw, seed_bernoulli

    if args.data_file is not None:
        if args.data is not None:
            raise ValueError("give --data or --data-file, not both")
        X = load_npy(args.data_file, "--data-file")
        if X.ndim != 2 or X.shape[0] < 2 or X.shape[1] < 1:
            raise ValueError(f"--data-file: {args.data_file} must hold a (rows >= 2, d) array, "
                             f"got shape {X.shape}")
        if not np.all(np.isfinite(X)):
            raise ValueError(f"--data-file: {args.data_file} holds non-finite values")
        try:
            law = ProductLaw.from_rows(X.astype(float))
        except ValueError as exc:
            raise ValueError(f"--data-file: {exc}") from None
        Xc = X.astype(float) - law.mean
        cov = Xc.T @ Xc / X.shape[0]        # population covariance (ddof = 0, as law.var)
        return law, f"file:{args.data_file}", cov
    spec = "bernoulli" if args.data is None else str(args.data)
    fam, _, rest = spec.partition(":")
    if fam == "bernoulli" and not rest:
        return seed_bernoulli(args.d, seed=args.seed), spec, None
    if fam == "gaussian" and not rest:
        return ProductLaw.gaussian(np.zeros(args.d), 1.0), spec, None
    try:
        vals = [float(v) for v in rest.split(",")] if rest else []
    except ValueError:
        vals = None
    want = {"bernoulli": 1, "gaussian": 2, "poisson": 1}
    if fam not in want or vals is None or len(vals) != want[fam] or not np.all(np.isfinite(vals)):
        raise ValueError("--data must be bernoulli, bernoulli:P with 0 < P < 1, gaussian, "
                         f"gaussian:MU,SD with SD > 0, or poisson:LAM with LAM > 0; got {spec!r}")
    ones = np.ones(args.d)
    try:
        law = (ProductLaw.bernoulli(vals[0] * ones) if fam == "bernoulli" else
               ProductLaw.gaussian(vals[0] * ones, vals[1]) if fam == "gaussian" else
               ProductLaw.poisson(vals[0] * ones))
    except ValueError as exc:
        raise ValueError(f"--data {spec}: {exc}") from None
    return law, spec, None


def _target(args, law):
    from semi_core.mechanisms.per_datum import seed_targets

    t = ("easy" if law.family == "bernoulli" else "medium") if args.target is None \
        else str(args.target)
    if t.endswith(".npy"):
        z = load_npy(t, "--target")
        if z.ndim != 1 or z.size != law.d:
            raise ValueError(f"--target: {t} must hold a vector of length d = {law.d}, got "
                             f"shape {z.shape}")
        if not np.all(np.isfinite(z)):
            raise ValueError(f"--target: {t} holds non-finite values")
        return z, t
    if law.family != "bernoulli":
        if t != "medium":
            raise ValueError("--target: with a non-Bernoulli --data (or --data-file) use "
                             "'medium' (a draw from the law) or a FILE.npy")
        rng = np.random.default_rng(np.random.SeedSequence([args.seed, 1306]))
        return law.sample(rng, 1)[0], t
    named = seed_targets(law, seed=args.seed)
    if t not in named:
        raise ValueError(f"--target must be easy, medium, hard or a FILE.npy, got {t!r}")
    return named[t], t


def _rank(args) -> Result:
    import sklearn.datasets as skd

    from semi_core.attacks.leakage import most_exposed

    X = getattr(skd, f"load_{args.dataset}")().data.astype(float)
    rank = 20 if args.rank is None else args.rank
    n = X.shape[0] if args.n is None else args.n
    if rank > X.shape[0]:
        raise ValueError(f"--rank must be <= {X.shape[0]} (records in {args.dataset}), got "
                         f"{rank}")
    out = most_exposed(X, n=n, rank=rank)
    out.pop("m_star_all")
    payload = {"dataset": args.dataset, **out,
               "note": "m* with the data's own per-coordinate mean/variance (product "
                       "approximation, seed §3); leakage = 2 Phi(sqrt(m*)/2) - 1 if the mean "
                       "of n such records is released"}
    lines = [f"{args.dataset}: {out['records']} records, d = {out['d_used']} informative "
             f"columns, mean of n = {n}; median m* = {out['m_star_median']:.4g}",
             "rank  record  m*        leakage"]
    for i, (idx, m, lk) in enumerate(zip(out["index"], out["m_star"], out["leakage"],
                                         strict=True)):
        lines.append(f"{i + 1:>4}  {idx:>6}  {m:<8.4g}  {lk:.4f}")
    return Result(payload=payload, text="\n".join(lines))


def _log_lr_moments(non: np.ndarray, mem: np.ndarray) -> tuple[dict, str | None]:
    r"""Sample mean and variance of the simulated log-LRs under H0 (``non``) and H1 (``mem``).

    With discrete data (Bernoulli, Poisson) and no noise the released mean can be impossible
    under one hypothesis, and the exact log-LR is then :math:`-\infty` under H0 (or
    :math:`+\infty` under H1) in some games: the log-LR's mean is then that infinity (an atom
    of positive mass) and its variance is undefined (``None``), never a NaN. ``infinite0`` /
    ``infinite1`` count those games.

    Returns
    -------
    tuple
        The moments and a note naming the infinite games, or ``None`` when there are none.
    """
    out, notes = {}, []
    for tag, x, sign, where in (("0", non, -1.0, "H0"), ("1", mem, 1.0, "H1")):
        inf = np.isinf(x)
        k = int(inf.sum())
        if np.isnan(x).any() or (k and np.any(np.sign(x[inf]) != sign)):
            raise RuntimeError(f"the simulated log-LRs under {where} contain a NaN or an "
                               "infinity of the wrong sign: the exact LR could not be computed")
        if k:
            out[f"mean{tag}"], out[f"var{tag}"] = sign * np.inf, None
            notes.append(f"the log-LR is {'-' if sign < 0 else '+'}inf in {k} of {x.size} "
                         f"games under {where} (the released mean is impossible under the "
                         "other hypothesis), so its mean is infinite and its variance undefined")
        else:
            out[f"mean{tag}"], out[f"var{tag}"] = float(x.mean()), float(x.var())
        out[f"infinite{tag}"] = k
    return out, ("; ".join(notes) or None)


def _average(args, law, dname, executor) -> Result:
    """``--game average``: the average-datum game (seed Alg. 3/4, App. B)."""
    from semi_core.mechanisms.per_datum import AverageDatumMean

    given = [f for f, on in (("--target", args.target is not None),
                             ("--subsample", args.subsample != 1.0),
                             ("--inclusion", args.inclusion != "shared")) if on]
    if given:
        raise ValueError(f"{', '.join(given)}: not applicable with --game average (a fresh "
                         "target each round, no sub-sampling)")
    if not law.has_sum_law:
        raise ValueError("--game average needs --data bernoulli/gaussian/poisson (the exact LR "
                         "of the pair), not --data-file")
    mech = AverageDatumMean(law, args.n, noise_std=args.noise)
    th = mech.theory(args.fpr)
    payload = {"game": "average", "data": dname, "law": law.params(), "n": args.n,
               "d": law.d, "noise": args.noise, "fpr": args.fpr, **th,
               "note": "limit N(-+M/2, M), M = sum_j sigma_j^2/(n(sigma_j^2+gamma_j^2)) "
                       "(= d/n without noise, seed Remark 3.3); exact_moments: the log-LR's "
                       "finite-n mean/variance (Gaussian data)"}
    lines = [f"average-datum game: M = {th['M']:.6g}", f"leakage (optimal advantage) = "
             f"{th['leakage']:.6g}", f"power at FPR {args.fpr:g} = {th['power']:.6g} "
             f"(threshold {th['threshold']:.6g} on the log-LR scale)"]
    if args.simulate:
        from semi_core.attacks.leakage import simulate_average_datum, summarize_leakage

        t0 = time.perf_counter()
        res = simulate_average_datum(mech, args.simulate, args.seed, chunk_size=_CHUNK,
                                     executor=executor, progress=reporter_from_args(args))
        s = summarize_leakage(res, (args.fpr,))["exact"]
        f = str(args.fpr)
        mem, non = res.scores("exact")
        moments, note = _log_lr_moments(non, mem)
        payload["simulation"] = {
            "rounds": args.simulate, "power": s["tpr_at_fpr"][f], "power_se": s["tpr_se"][f],
            "power_resolvable": s["tpr_resolvable"][f], "advantage": s["bayes_advantage"],
            "advantage_se": s["bayes_advantage_se"], "auc": s["auc"], "auc_se": s["auc_se"],
            "log_lr_moments": moments, "seconds": time.perf_counter() - t0}
        if note:
            payload["simulation"]["log_lr_moments_note"] = note
        lines.append(f"simulated ({args.simulate} games): power {s['tpr_at_fpr'][f]:.4f} +- "
                     f"{s['tpr_se'][f]:.4f}, advantage {s['bayes_advantage']:.4f} +- "
                     f"{s['bayes_advantage_se']:.4f}")
        if note:
            lines.append(f"note: {note}")
    return Result(payload=payload, text="\n".join(lines))


def handler(args) -> Result:
    """Closed forms (and optionally a simulation) for one target, or a ranking of records."""
    if args.dataset is not None:
        # the ranking is the noiseless full-data score m* of each record: refuse, never ignore,
        # the options of the single-target game
        given = [flag for flag, on in (("--noise", args.noise != 0.0),
                                       ("--subsample", args.subsample != 1.0),
                                       ("--simulate", args.simulate != 0),
                                       ("--target", args.target is not None),
                                       ("--data", args.data is not None),
                                       ("--data-file", args.data_file is not None),
                                       ("--inclusion", args.inclusion != "shared"),
                                       ("--game", args.game != "per-datum"))
                 if on]
        if given:
            raise ValueError(f"{', '.join(given)}: not applicable with --dataset (it ranks records "
                             "by the noiseless full-data m*); drop them or drop --dataset")
        return _rank(args)
    if args.n is None:
        args.n = 1000
    if args.data_file is not None:
        if args.d is not None:
            raise ValueError("--d: not applicable with --data-file (the file's columns set d)")
        if args.inclusion == "per-coordinate":
            raise ValueError("--inclusion per-coordinate: not applicable with --data-file (a "
                             "product over independent columns; the file's columns are "
                             "correlated, so the target's inclusion is one shared event)")
    if args.d is None:
        args.d = 5000
    if args.rank is not None:
        raise ValueError("--rank applies only with --dataset (ranking a dataset's records)")
    if not args.simulate and (args.threads != 1 or args.workers is not None or
                              args.scheduler is not None):
        raise ValueError("--threads/--workers/--scheduler apply only to the games of "
                         "--simulate R; give --simulate with them")
    if not (0 < args.fpr < 1):
        raise ValueError(f"--fpr must lie in (0, 1), got {args.fpr}")
    if not (0 < args.subsample <= 1):
        raise ValueError(f"--subsample must lie in (0, 1], got {args.subsample}")
    if not (np.isfinite(args.noise) and 0 <= args.noise <= _MAX_NOISE):
        raise ValueError(f"--noise must be in [0, {_MAX_NOISE:g}] (its square enters the "
                         f"variance), got {args.noise}")
    if not (0 < args.delta < 1):
        raise ValueError(f"--delta must lie in (0, 1), got {args.delta}")
    if args.n < 2:
        raise ValueError(f"--n must be >= 2, got {args.n}")
    if args.simulate == 1:
        raise ValueError("--simulate must be 0 or >= 2 games")
    if args.n * args.d > 10**9:
        raise ValueError("--n * --d must be <= 1e9")
    # the law, the target and the closed forms hold a few d-vectors; a simulation chunk more
    check_work(f"leakage: d = {args.d} coordinates", nbytes=8.0 * args.d * 12,
               hint="use a smaller --d")
    if args.simulate:
        check_work(f"leakage --simulate {args.simulate} (d = {args.d})",
                   nbytes=8.0 * min(args.simulate, _CHUNK) * args.d * 6,
                   seconds=_SECONDS_PER_ROUND_COORD * args.simulate * args.d,
                   hint="use fewer games (--simulate) or a smaller --d, or a Dask cluster "
                        "(--workers/--scheduler)")
    # argument-level refusals above; the closed forms are generated NumPy/SciPy code (no
    # SymPy), the GDP accountant is imported from its home (not through semi_core.audit)
    from semi_core.mechanisms.per_datum import PerDatumMean
    from semi_core.stats import leakage as L
    from semi_core.stats.gdp import gdp_epsilon

    # the executor runs the games of --simulate only (without it --threads/--workers/--scheduler
    # were refused above); the closed forms need none, nor the runner's imports
    executor = executor_from_args(args) if args.simulate else None
    law, dname, cov = _law(args)
    args.d = law.d
    if args.game == "average":
        return _average(args, law, dname, executor)
    z, tname = _target(args, law)
    if int(round(args.subsample * args.n)) < 2:
        raise ValueError("--subsample * --n must round to at least 2 rows")
    mode = "sufficient" if law.has_sum_law else "exact"
    if mode == "exact" and args.simulate:
        # row-by-row datasets: n * d floats per game
        check_work(f"leakage --simulate {args.simulate} on --data-file (n = {args.n}, "
                   f"d = {law.d}, row by row)", nbytes=8.0 * args.n * law.d * 4,
                   seconds=_SECONDS_PER_ROUND_COORD * args.simulate * args.n * law.d,
                   hint="use fewer games (--simulate), a smaller --n or fewer columns")
    if args.data_file is not None:
        from semi_core.attacks.leakage import CovarianceMean

        try:
            mech = CovarianceMean(law, cov, args.n, z, noise_std=args.noise,
                                  rho=args.subsample, mode=mode)
        except ValueError as exc:
            raise ValueError(f"--data-file: {exc}") from None
    else:
        mech = PerDatumMean(law, args.n, z, noise_std=args.noise, rho=args.subsample,
                            mode=mode, inclusion=args.inclusion)
    th = mech.theory(args.fpr)
    m = th["m_star"]
    gdp_mu = float(np.sqrt(m))
    eps_grid = [0.5, 1.0, 2.0, 4.0]
    payload = {
        "data": dname, "law": law.params(), "n": args.n, "d": args.d, "target": tname, "noise": args.noise,
        "subsample": args.subsample, "inclusion": args.inclusion, "k": mech.k,
        "fpr": args.fpr,
        "m_star": m, "leakage": th["leakage"], "advantage": th["advantage"],
        "power": th["power"], "threshold": th["threshold"],
        "threshold_scale": th["threshold_scale"],
        "test": mech.test,
        "covariance": "full" if args.data_file is not None else "independent columns",
    }
    if args.data_file is not None:
        payload["note"] = ("m* = (z-mu)^T (C + C_gamma)^-1 (z-mu) / n with C the rows' full "
                           "covariance (Cholesky); the test is Eq. 10 with that matrix")
    if mech.k < mech.n:
        payload["m_in"] = th["m_in"]
        payload["paper_approximation"] = th["paper"]
    if mech.k == mech.n or mech.per_coordinate:
        me = th.get("m_eff", m)       # per-coordinate inclusion: rho m* (Eq. 16's GDP curve)
        gdp_mu = float(np.sqrt(me))
        payload["gdp"] = {"mu": gdp_mu, "epsilon_at_delta": gdp_epsilon(gdp_mu, args.delta)
                          if me > 0 else 0.0, "delta": args.delta,
                          "delta_of_epsilon": {str(e): float(L.gdp_delta(e, me)) if me > 0
                                               else 0.0 for e in eps_grid}}
    else:
        payload["gdp"] = {"delta_of_epsilon": {
            str(e): float(L.sub_gdp_delta(e, th["m_in"] * mech.q, mech.q)) if m > 0 else 0.0
            for e in eps_grid}, "note": "shared-inclusion limit experiment (corrected)"}
    lines = [f"target {tname}: m* = {m:.6g} (test: {mech.test})",
             f"leakage (optimal advantage) = {th['leakage']:.6g}",
             f"power at FPR {args.fpr:g} = {th['power']:.6g} (threshold {th['threshold']:.6g} "
             "on the log-LR scale" + ("" if mech.k == mech.n else
                                      f", sum_j log(1 - q + q e^l_j), q = {mech.q:.4g}"
                                      if mech.per_coordinate else
                                      f", log(1 - q + q e^l_in), q = {mech.q:.4g}") + ")"]
    if "paper_approximation" in payload:
        pa = payload["paper_approximation"]
        lines.append(f"paper's per-coordinate form (sqrt(rho m*)): leakage {pa['leakage']:.6g},"
                     f" power {pa['power']:.6g}")
    if args.simulate:
        from semi_core.attacks.leakage import simulate_leakage, summarize_leakage

        t0 = time.perf_counter()
        attacks = (mech.test,) + (("paper-sub",) if mech.k < mech.n and
                                  mech.exact_available else ())
        chunk = _CHUNK if mode == "sufficient" else max(1, min(_CHUNK, int(
            2e7 // (args.n * law.d))))
        res = simulate_leakage(mech, args.simulate, args.seed, attacks=attacks,
                               chunk_size=chunk, executor=executor,
                               progress=reporter_from_args(args))
        summ = summarize_leakage(res, (args.fpr,))
        s = summ[mech.test]
        f = str(args.fpr)
        payload["simulation"] = {
            "rounds": args.simulate, "attack": mech.test,
            "power": s["tpr_at_fpr"][f], "power_se": s["tpr_se"][f],
            "power_resolvable": s["tpr_resolvable"][f], "fpr_resolution": s["fpr_resolution"],
            "advantage": s["bayes_advantage"], "advantage_se": s["bayes_advantage_se"],
            "auc": s["auc"], "auc_se": s["auc_se"], "seconds": time.perf_counter() - t0,
            "attacks": summ}
        lines.append(f"simulated ({args.simulate} games, {payload['simulation']['seconds']:.2f}"
                     f" s): power {s['tpr_at_fpr'][f]:.4f} +- {s['tpr_se'][f]:.4f}, advantage "
                     f"{s['bayes_advantage']:.4f} +- {s['bayes_advantage_se']:.4f}"
                     + ("" if s["tpr_resolvable"][f] else
                        f" (--fpr below the resolution 1/{s['n_nonmember']} non-members: the "
                        "power is the TPR at FPR 0)"))
    return Result(payload=payload, text="\n".join(lines))

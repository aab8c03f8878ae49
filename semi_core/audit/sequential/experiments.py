r"""The seed's experiments (Tables 1-3, App. F) and the SeMI stream comparison, reproducible.

Every function takes ``runs``/``max_obs`` and a seed and returns plain dicts (the report section
:mod:`semi_core.report.seq_audit_section` and the scripts ``analysis/seq_audit_*.py`` call
them). The seed's published numbers are kept next to ours (:data:`SEED_TABLE1`, ...).
"""

from __future__ import annotations

import time
from collections.abc import Callable

import numpy as np

from semi_core._rng import as_seed_sequence

from .batch import batch_mmd_test
from .semi_stream import fixed_r_rejection_rate, semi_stream_audit
from .tester import mechanism_source, rejection_summary, run_audits, sampler_source

__all__ = ["SEED_TABLE1", "SEED_TABLE2", "SEED_TABLE3", "MECH_ORDER", "mechanism_table",
           "ablation_table", "power_at_alternative", "ALTERNATIVE",
           "gaussian_shift_grid", "boundary_type1", "perturbed_uniform", "type1_rates",
           "semi_rounds_comparison", "perturbed_uniform_sampler", "censored_mean_stop",
           "seed_mean_over_rejecting", "readings_table", "canary_ceiling",
           "perturbed_uniform_mmd", "wald_stop_lower_bound", "median_bandwidth_draws"]

MECH_ORDER = ("dp-gaussian", "nondp-gaussian-1", "nondp-gaussian-2", "dp-laplace",
              "nondp-laplace-1", "nondp-laplace-2")

#: Seed Table 1 (Alg. 1): mechanism -> eps -> (rate, rate SE, mean N, N SE) (None: "-").
SEED_TABLE1 = {
    "dp-gaussian": {0.01: (0.0, 0.0, None, None), 0.1: (0.0, 0.0, None, None)},
    "nondp-gaussian-1": {0.01: (1.0, 0.0, 264, 9.3), 0.1: (1.0, 0.0, 562, 29.2)},
    "nondp-gaussian-2": {0.01: (0.85, 0.08, 1139, 126.1), 0.1: (0.05, 0.05, 4776, 219.0)},
    "dp-laplace": {0.01: (0.0, 0.0, None, None), 0.1: (0.0, 0.0, None, None)},
    "nondp-laplace-1": {0.01: (1.0, 0.0, 331, 14.5), 0.1: (1.0, 0.0, 920, 61.6)},
    "nondp-laplace-2": {0.01: (1.0, 0.0, 192, 18.4), 0.1: (0.95, 0.05, 770, 262.3)},
}
#: Seed Table 2 (Alg. 2).
SEED_TABLE2 = {
    "dp-gaussian": {0.01: (0.0, 0.0, None, None), 0.1: (0.0, 0.0, None, None)},
    "nondp-gaussian-1": {0.01: (1.0, 0.0, 92, 6.72), 0.1: (1.0, 0.0, 187, 16.8)},
    "nondp-gaussian-2": {0.01: (0.9, 0.06, 728, 139.8), 0.1: (0.15, 0.08, 4475, 307.4)},
    "dp-laplace": {0.01: (0.0, 0.0, None, None), 0.1: (0.0, 0.0, None, None)},
    "nondp-laplace-1": {0.01: (1.0, 0.0, 106, 9.8), 0.1: (1.0, 0.0, 340, 42.0)},
    "nondp-laplace-2": {0.01: (1.0, 0.0, 54, 4.9), 0.1: (1.0, 0.0, 253, 119.8)},
}
#: Seed Table 3 (10 runs, eps = 0.01, delta = 1e-5): procedure -> (DP, NonDP1, NonDP2).
SEED_TABLE3 = {
    "Sequential + new bound + MH": (0, 1, 1),
    "Sequential + MH": (0, 1, 1),
    "Sequential + new bound": (0, 0, 1),
    "Sequential": (0, 0, 1),
    "Batch + new bound + MH": (0, 1, 0.1),
    "Batch + MH": (0, 1, 0.1),
    "Batch + new bound": (0, 0, 0.5),
    "Batch": (0, 0, 0.5),
}
#: N_max of the seed (§4.1): 2000 pairs at eps = 0.01, 5000 at eps = 0.1.
SEED_NMAX = {0.01: 2000, 0.1: 5000}


def _zoo(name, eps, delta, floor="count"):
    from .conventions import make_reading_mechanism

    return make_reading_mechanism(name, eps, delta, reading=floor)


#: The known alternative beside each Type-I row: the same noise family's NonDP2 (mean with the
#: private n, noise scaled by the noisy count: not DP), audited with the bandwidth the DP runs
#: used. Its outputs live on the DP mechanism's scale (NonDP1's noise 2/(n eps) is ~100 times
#: wider, so the DP runs' bandwidth cannot see it and it would test the wrong thing).
ALTERNATIVE = {"dp-laplace": "nondp-laplace-2", "dp-gaussian": "nondp-gaussian-2"}


def censored_mean_stop(stops, runs: int, max_obs: int) -> tuple[float, float]:
    r"""The authors' notebook's "average number of observations to reject": every run counts,
    a run that never rejected at :math:`N_{\max}+1` (``get_first_crossing_index`` returns the
    length of the wealth history), with the SE :math:`\mathrm{sd}_0/\sqrt R` (NumPy's
    ``std``, ddof 0).

    .. math:: \bar N_c=\frac1R\Big(\sum_{i\ \mathrm{rejects}}T_i+(R-k)(N_{\max}+1)\Big)

    Parameters
    ----------
    stops : sequence of int
        Stopping times of the ``k`` rejecting runs.
    runs : int
        All runs ``R`` (>= ``k``, >= 1).
    max_obs : int
        :math:`N_{\max}`.

    Returns
    -------
    tuple of float
        The censored mean and its SE.
    """
    st = np.asarray(list(stops), dtype=float)
    if runs < max(1, st.size):
        raise ValueError(f"runs must be >= 1 and >= the {st.size} rejecting runs, got {runs}")
    full = np.concatenate([st, np.full(runs - st.size, max_obs + 1.0)])
    return float(full.mean()), float(full.std() / np.sqrt(runs))


def seed_mean_over_rejecting(rate: float, nbar: float, runs: int, max_obs: int) -> float:
    r"""The seed's mean stopping time over its rejecting runs, decoded from a Table 1/2 cell
    read as the notebook's censored mean (:func:`censored_mean_stop`):
    :math:`k=\mathrm{rate}\,R`, :math:`\bar N_{\mathrm{rej}}=(R\bar N_c-(R-k)(N_{\max}+1))/k`.

    Parameters
    ----------
    rate : float
        Printed rejection rate, in (0, 1].
    nbar : float
        Printed :math:`\bar N`.
    runs : int
        Runs per cell (20).
    max_obs : int
        :math:`N_{\max}` of the cell.

    Returns
    -------
    float
        The implied mean over the rejecting runs.
    """
    k = round(rate * runs)
    if not 0 < k <= runs:
        raise ValueError(f"rate must give between 1 and {runs} rejecting runs, got {rate}")
    return (runs * nbar - (runs - k) * (max_obs + 1.0)) / k


def readings_table(mechanism: str = "nondp-gaussian-2", *, readings=("scale", "auditorium"),
                   conventions=("paper", "ons,oga"), epsilons=(0.01, 0.1), runs: int = 20,
                   delta: float = 1e-5, failure_prob: float = 0.05, max_obs: dict | None = None,
                   seed=0, progress=None) -> dict:
    r"""One Table 1 row under several readings of the mechanism (:data:`.conventions.READINGS`)
    and tester conventions: rejection rate, mean stop over the rejecting runs and the notebook's
    censored mean (:func:`censored_mean_stop`), beside the seed's cell and the mean over its
    rejecting runs decoded from it (:func:`seed_mean_over_rejecting`).

    Parameters
    ----------
    mechanism : str
        Zoo name of the row.
    readings : sequence of str
        Readings of the mechanism.
    conventions : sequence of str
        Tester conventions (:func:`.conventions.parse_conventions`).
    epsilons : sequence of float
        Tested (and design) epsilons.
    runs : int
        Runs per cell.
    delta : float
        Tested and design delta.
    failure_prob : float
        Level of each test.
    max_obs : dict, optional
        :math:`N_{\max}` by epsilon; None = the seed's.
    seed : int or numpy.random.SeedSequence
        Root seed (each cell spawns its own child).
    progress : callable, optional
        Progress reporter.

    Returns
    -------
    dict
        The settings and one row per reading, convention and epsilon.
    """
    from semi_core.mechanisms.zoo import SEED_PAIR

    max_obs = max_obs or SEED_NMAX
    rows = []
    for ri, reading in enumerate(readings):
        for ci, conv in enumerate(conventions):
            for ei, eps in enumerate(epsilons):
                mech = _zoo(mechanism, eps, delta, reading)
                n_max = max_obs.get(eps, 5000)
                res = run_audits(lambda m=mech: mechanism_source(m, *SEED_PAIR), runs=runs,
                                 seed=as_seed_sequence(seed).spawn(
                                     100 * (ri + 1) + 10 * (ci + 1) + ei + 1)[-1],
                                 epsilon=eps, delta=delta, failure_prob=failure_prob,
                                 max_obs=n_max, conventions=conv)
                stops = [r.stopped_at for r in res.runs if r.rejected]
                cm, cse = censored_mean_stop(stops, runs, n_max)
                sv = SEED_TABLE1.get(mechanism, {}).get(eps)
                dec = (seed_mean_over_rejecting(sv[0], sv[2], 20, SEED_NMAX[eps])
                       if sv and sv[2] is not None and eps in SEED_NMAX else None)
                rows.append({"reading": reading, "conventions": conv, "epsilon": eps,
                             "max_obs": n_max, **res.summary, "censored_mean": cm,
                             "censored_mean_se": cse, "seed_value": sv,
                             "seed_mean_over_rejecting": dec})
                if progress:
                    progress(f"{mechanism} {reading} {conv} eps={eps}")
    return {"mechanism": mechanism, "runs": runs, "delta": delta,
            "failure_prob": failure_prob, "rows": rows}


def power_at_alternative(name: str, eps: float, *, bandwidth: float, runs: int, delta: float,
                         failure_prob: float, max_obs: int, seed, floor: str = "count",
                         conventions: str = "paper", algorithm: int = 1,
                         mech_epsilon: float | None = None, witness: str = "exact",
                         features: int = 16) -> dict:
    """Rejection rate at the known alternative :data:`ALTERNATIVE` ``[name]`` with the Type-I
    runs' (median) bandwidth fixed: what the same tester, seeing the outputs through the same
    kernel, can detect. A Type-I row of 0 rejections is evidence only when this is high.

    Parameters
    ----------
    name : str
        Mechanism of the Type-I row (a key of ``ALTERNATIVE``).
    eps : float
        Tested :math:`\\varepsilon`, >= 0.
    bandwidth : float
        Fixed RBF bandwidth, > 0.
    runs : int
        Number of runs.
    delta : float
        Tested :math:`\\delta`, in [0, 1).
    failure_prob : float
        Level of each test, in (0, 0.5].
    max_obs : int
        Test pairs per run.
    seed : int or numpy.random.SeedSequence
        Root seed.
    floor : {"count", "scale"}
        Reading of the zoo mechanisms.
    conventions : str
        ``"paper"``, ``"notebook"`` or a comma list (:mod:`.conventions`).
    algorithm : {1, 2}
        The paper's algorithm.
    mech_epsilon : float, optional
        :math:`\\varepsilon` the alternative is built for (the Type-I row's mechanism's);
        default ``eps``.
    witness : {"exact", "rff"}
        The Type-I runs' witness.
    features : int
        Random frequencies of the RFF witness.

    Returns
    -------
    dict
        Rejection rate with its SE and the settings.
    """
    from semi_core.mechanisms.zoo import SEED_PAIR

    alt = _zoo(ALTERNATIVE[name], eps if mech_epsilon is None else mech_epsilon, delta, floor)
    res = run_audits(lambda: mechanism_source(alt, *SEED_PAIR), runs=runs, seed=seed,
                     epsilon=eps, delta=delta, failure_prob=failure_prob, max_obs=max_obs,
                     algorithm=algorithm, bandwidth=float(bandwidth), conventions=conventions,
                     witness=witness, features=features)
    return {"alternative": ALTERNATIVE[name], "bandwidth": float(bandwidth), "runs": int(runs),
            **res.summary}


def mechanism_table(*, algorithm: int, epsilons=(0.01, 0.1), runs: int = 20, delta: float = 1e-5,
                    failure_prob: float = 0.05, max_obs: dict | None = None, seed=0,
                    mechanisms=MECH_ORDER, keep_paths: int = 0, bandwidth="median",
                    progress=None, witness: str = "exact", features: int = 16,
                    floor: str = "count", conventions: str = "paper",
                    power_runs: int | None = None) -> dict:
    """Seed Tables 1 (``algorithm=1``) and 2 (``algorithm=2``): rejection rate and mean
    stopping time (over rejecting runs) with SEs, ``runs`` runs per cell, S={0}, S'={0,1}.
    ``witness``/``features``: the exact or the RFF witness (:func:`.tester.sequential_grid`);
    ``floor``: the mechanisms' reading (:class:`semi_core.mechanisms.zoo.NoisyCountMean`);
    ``conventions``: paper or notebook (:mod:`.conventions`). Every DP row carries
    ``degenerate_runs`` and ``power_at_alternative`` (:func:`power_at_alternative`,
    ``power_runs`` runs, default ``runs``).

    Parameters
    ----------
    algorithm : {1, 2}
        The paper's algorithm.
    epsilons : sequence of float
        Tested :math:`\\varepsilon` values.
    runs : int
        Runs per cell.
    delta : float
        Tested :math:`\\delta`.
    failure_prob : float
        Level of each test, in (0, 0.5].
    max_obs : dict, optional
        Test pairs per run by algorithm; None = the seed's.
    seed : int or numpy.random.SeedSequence
        Root seed.
    mechanisms : sequence of str
        Zoo mechanisms of the rows.
    keep_paths : int
        Number of runs per cell whose wealth paths are kept.
    bandwidth : float or "median"
        RBF bandwidth, or the median heuristic on warm-up pairs.
    progress : callable, optional
        Progress reporter.
    witness : {"exact", "rff"}
        The OGA witness.
    features : int
        Frequencies D of the RFF witness.
    floor : {"count", "scale"}
        Reading of the zoo mechanisms.
    conventions : str
        ``"paper"``, ``"notebook"`` or a comma list.
    power_runs : int, optional
        Runs of :func:`power_at_alternative`; None = ``runs``.

    Returns
    -------
    dict
        The settings and one row per mechanism and epsilon.
    """
    from semi_core.mechanisms.zoo import SEED_PAIR

    max_obs = max_obs or SEED_NMAX
    ref = SEED_TABLE1 if algorithm == 1 else SEED_TABLE2
    rows = []
    for mi, name in enumerate(mechanisms):
        for ei, eps in enumerate(epsilons):
            mech = _zoo(name, eps, delta, floor)
            t0 = time.perf_counter()
            res = run_audits(lambda m=mech: mechanism_source(m, *SEED_PAIR), runs=runs,
                             seed=as_seed_sequence(seed).spawn(100 * (mi + 1) + ei + 1)[-1],
                             epsilon=eps, delta=delta, failure_prob=failure_prob,
                             max_obs=max_obs.get(eps, 5000), algorithm=algorithm,
                             bandwidth=bandwidth, witness=witness, features=features,
                             conventions=conventions)
            cm, cse = censored_mean_stop([r.stopped_at for r in res.runs if r.rejected], runs,
                                         max_obs.get(eps, 5000))
            row = {"mechanism": name, "epsilon": eps, **res.summary,
                   "censored_mean": cm, "censored_mean_se": cse,
                   "bandwidth_median": float(np.median([r.bandwidth for r in res.runs])),
                   "seconds": time.perf_counter() - t0,
                   "seed_value": ref.get(name, {}).get(eps)}
            if name in ALTERNATIVE:
                row["power_at_alternative"] = power_at_alternative(
                    name, eps, bandwidth=row["bandwidth_median"], runs=power_runs or runs,
                    delta=delta, failure_prob=failure_prob, max_obs=max_obs.get(eps, 5000),
                    seed=as_seed_sequence(seed).spawn(100 * (mi + 1) + ei + 51)[-1],
                    floor=floor, conventions=conventions, algorithm=algorithm)
            if keep_paths:
                row["paths"] = [r.log_wealth.tolist() for r in res.runs[:keep_paths]]
            rows.append(row)
            if progress:
                progress(f"{name} eps={eps}")
    return {"algorithm": algorithm, "runs": runs, "delta": delta, "failure_prob": failure_prob,
            "max_obs": {str(k): v for k, v in max_obs.items()}, "bandwidth": bandwidth,
            "witness": witness, "features": features if witness == "rff" else None,
            "floor": floor, "conventions": conventions, "rows": rows}


def ablation_table(*, runs: int = 10, max_obs: int = 2000, batch_n: int = 2000, seed=0,
                   epsilon: float = 0.01, delta: float = 1e-5, failure_prob: float = 0.05,
                   progress=None, floor: str = "count") -> dict:
    """Seed Table 3: sequential (Alg. 1) vs batch, new vs DP-Auditorium bound, median heuristic
    vs bandwidth 1; rejection rates over ``runs`` runs for DPGaussian, NonDPGaussian1/2
    (``floor``: the mechanisms' reading). ``degenerate`` counts the sequential runs whose
    witness was degenerate (:func:`.tester.witness_diagnostics`) per mechanism.

    Parameters
    ----------
    runs : int
        Runs per cell.
    max_obs : int
        Test pairs of the sequential test.
    batch_n : int
        Pairs of the batch test.
    seed : int or numpy.random.SeedSequence
        Root seed.
    epsilon : float
        Tested :math:`\\varepsilon`.
    delta : float
        Tested :math:`\\delta`.
    failure_prob : float
        Level of each test.
    progress : callable, optional
        Progress reporter.
    floor : {"count", "scale"}
        Reading of the zoo mechanisms.

    Returns
    -------
    dict
        Rejection rates per variant and mechanism, and ``degenerate``.
    """
    from semi_core.mechanisms.zoo import SEED_PAIR

    mechs = ("dp-gaussian", "nondp-gaussian-1", "nondp-gaussian-2")
    out = []
    for label, seq, bound, bw in [
            ("Sequential + new bound + MH", True, "new", "median"),
            ("Sequential + MH", True, "auditorium", "median"),
            ("Sequential + new bound", True, "new", 1.0),
            ("Sequential", True, "auditorium", 1.0),
            ("Batch + new bound + MH", False, "new", "median"),
            ("Batch + MH", False, "auditorium", "median"),
            ("Batch + new bound", False, "new", 1.0),
            ("Batch", False, "auditorium", 1.0)]:
        rates, degen = [], []
        for mi, name in enumerate(mechs):
            mech = _zoo(name, epsilon, delta, floor)
            ss = as_seed_sequence(seed).spawn(10 * (mi + 1))[-1]
            if seq:
                res = run_audits(lambda m=mech: mechanism_source(m, *SEED_PAIR), runs=runs,
                                 seed=ss, epsilon=epsilon, delta=delta,
                                 failure_prob=failure_prob, max_obs=max_obs, algorithm=1,
                                 bound=bound, bandwidth=bw)
                rates.append(res.summary["rejection_rate"])
                degen.append(res.summary["degenerate_runs"])
            else:
                res = run_audits(
                    audit=lambda c, m=mech, bw=bw, bound=bound: batch_mmd_test(
                        mechanism_source(m, *SEED_PAIR), epsilon=epsilon, delta=delta,
                        failure_prob=failure_prob, n=batch_n, bandwidth=bw, bound=bound,
                        seed=c)["rejected"],
                    runs=runs, seed=ss, summary=rejection_summary)
                rates.append(res.summary["rejection_rate"])
                degen.append(None)
        out.append({"procedure": label, "rates": dict(zip(mechs, rates)),
                    "degenerate": dict(zip(mechs, degen)), "seed_value": SEED_TABLE3[label]})
        if progress:
            progress(label)
    return {"runs": runs, "max_obs": max_obs, "batch_n": batch_n, "epsilon": epsilon,
            "delta": delta, "floor": floor, "rows": out}


def gaussian_shift_grid(*, dims=(1, 2, 3, 4, 5), norms=(0.0, 0.25, 0.5, 0.75, 1.0),
                        runs: int = 20, max_obs: int = 1000, failure_prob: float = 0.05,
                        seed=0, progress=None) -> dict:
    """App. F.2: N(0, I_d) vs N(mu, I_d), H0: MMD = 0 (eps = delta = 0, tau = 0), Alg. 1,
    median-heuristic bandwidth; rejection rate and mean rejection time per (d, ||mu||).

    Parameters
    ----------
    dims : sequence of int
        Dimensions d.
    norms : sequence of float
        Shift norms :math:`\\|\\mu\\|`.
    runs : int
        Runs per cell.
    max_obs : int
        Test pairs per run.
    failure_prob : float
        Level of each test.
    seed : int or numpy.random.SeedSequence
        Root seed.
    progress : callable, optional
        Progress reporter.

    Returns
    -------
    dict
        ``runs``, ``max_obs`` and one cell per ``(d, norm)``.
    """
    cells = []
    for d in dims:
        for k, m in enumerate(norms):
            mu = np.full(d, m / np.sqrt(d))
            def src(d=d, mu=mu):
                return sampler_source(lambda n, r: r.normal(0, 1, (n, d)),
                                      lambda n, r: r.normal(mu, 1, (n, d)))

            res = run_audits(src, runs=runs, seed=as_seed_sequence(seed).spawn(
                10 * d + k + 1)[-1], epsilon=0.0, delta=0.0, failure_prob=failure_prob,
                max_obs=max_obs, algorithm=1)
            cells.append({"d": d, "norm": m, **res.summary})
        if progress:
            progress(f"d={d}")
    return {"runs": runs, "max_obs": max_obs, "cells": cells,
            "seed_value": {"norm>=0.5": "rejection rate 1 for every d <= 5",
                           "norm=0.25": "0.62 at d=1 falling to 0.10",
                           "norm=0": "< 0.05", "mean N": "< ~700 (norm >= 0.5)"}}


def _bump(t):
    out = np.zeros_like(t)
    a = (t > 0) & (t < 0.5)
    b = (t >= 0.5) & (t < 1)
    u = 4 * t[a] - 1
    out[a] = np.exp(-1 / (1 - u * u))
    w = 4 * t[b] - 3
    out[b] = -np.exp(-1 / np.maximum(1 - w * w, 1e-300))
    return out


def perturbed_uniform_sampler(d: int = 2, amplitude: float = 1.0) -> Callable:
    r"""Sampler of the density :math:`1 + a\prod_i G(x_i)/e^{-d}` on :math:`[0,1]^d` with one
    zero-mean bump :math:`G` per axis (the one-perturbation construction of Schrab et al. 2023;
    :math:`|G|\le e^{-1}`, so the density is in :math:`[1-a, 1+a]`). Rejection sampling.

    Parameters
    ----------
    d : int
        Dimension.
    amplitude : float
        Amplitude a of the perturbation, in [0, 1].

    Returns
    -------
    callable
        ``sample(n, rng) -> ndarray (n, d)``.
    """
    a = float(amplitude)

    def sample(n, rng):
        out = np.empty((0, d))
        while out.shape[0] < n:
            x = rng.random((2 * n + 16, d))
            dens = 1 + a * np.prod(_bump(x), axis=1) / np.exp(-d)
            keep = rng.random(x.shape[0]) * (1 + a) < dens
            out = np.vstack([out, x[keep]])
        return out[:n]

    return sample


def perturbed_uniform_mmd(bandwidth, *, d: int = 2, amplitude: float = 1.0,
                          nodes: int = 256) -> np.ndarray:
    r"""Exact RBF MMD between :math:`U[0,1]^d` and the one-bump perturbed uniform
    :func:`perturbed_uniform_sampler` (density :math:`1+g`, :math:`g(x)=a\,e^d\prod_iG(x_i)`).
    The kernel and :math:`g` factor over coordinates, so

    .. math:: \mathrm{MMD}_h^2=\iint g(x)g(y)k_h(x,y)\,dx\,dy=(a e^d)^2J(h)^d,\qquad
              J(h)=\int_0^1\!\!\int_0^1G(s)G(u)e^{-(s-u)^2/(2h^2)}\,ds\,du,

    :math:`J` by Gauss--Legendre quadrature on the two halves of the bump (``nodes`` each;
    :math:`G` is smooth, the rule converges fast).

    Parameters
    ----------
    bandwidth : float or array_like
        RBF bandwidth(s) h, > 0.
    d : int
        Dimension.
    amplitude : float
        Amplitude a, in [0, 1].
    nodes : int
        Quadrature nodes per half.

    Returns
    -------
    ndarray
        :math:`\mathrm{MMD}_h` per bandwidth.
    """
    h = np.atleast_1d(np.asarray(bandwidth, dtype=float))
    if not np.all(np.isfinite(h) & (h > 0)):
        raise ValueError("bandwidth must be finite and > 0")
    if not 0 <= amplitude <= 1:
        raise ValueError(f"amplitude must be in [0, 1], got {amplitude}")
    x, w = np.polynomial.legendre.leggauss(int(nodes))
    s = np.concatenate([0.25 * (x + 1), 0.5 + 0.25 * (x + 1)])
    ws = np.concatenate([0.25 * w, 0.25 * w])
    gw = _bump(s) * ws
    diff2 = (s[:, None] - s[None, :]) ** 2
    J = np.array([gw @ np.exp(-diff2 / (2 * hh * hh)) @ gw for hh in h])
    return amplitude * np.exp(d) * np.maximum(J, 0.0) ** (d / 2)


def wald_stop_lower_bound(mmd, *, failure_prob: float = 0.05, tau: float = 0.0,
                          lam_max: float | None = None, radius: float = 1.0) -> np.ndarray:
    r"""Lower bound on the mean stopping time of Alg. 1 when every run rejects.

    With bets :math:`0\le\lambda_t\le\lambda_{\max}` (:math:`1/(4+2\tau)` in Alg. 1 as
    printed, :math:`1/(8+4\tau)` in the notebook) and payoffs :math:`a_t=v_t-\tau` with
    :math:`\mathbb E[a_t\mid\mathcal F_{t-1}]\le\Delta=r\,\mathrm{MMD}_h-\tau`, the bound
    :math:`\log(1+x)\le x` makes :math:`\log\mathcal K_t-\sum_{s\le t}\lambda_s
    \mathbb E[a_s\mid\mathcal F_{s-1}]` a supermartingale with increments bounded below while
    :math:`t` is finite, so by optional stopping (:math:`\mathbb E T<\infty`, every run stops)
    :math:`\log(1/\alpha)\le\mathbb E\log\mathcal K_T\le\lambda_{\max}\Delta\,\mathbb E T`:

    .. math:: \mathbb E[T]\ge\frac{\log(1/\alpha)}{\lambda_{\max}(r\,\mathrm{MMD}_h-\tau)}.

    Parameters
    ----------
    mmd : float or array_like
        :math:`\mathrm{MMD}_h`, > tau / radius.
    failure_prob : float
        :math:`\alpha`.
    tau : float
        Threshold of the test.
    lam_max : float, optional
        Largest bet; default :math:`1/(4+2\tau)`.
    radius : float
        Witness norm bound.

    Returns
    -------
    ndarray
        The bound per MMD value.
    """
    m = np.asarray(mmd, dtype=float)
    lam = 1.0 / (4.0 + 2.0 * tau) if lam_max is None else float(lam_max)
    gap = radius * m - tau
    if np.any(gap <= 0):
        raise ValueError("mmd must exceed tau / radius (otherwise the test never stops)")
    return np.log(1.0 / failure_prob) / (lam * gap)


def median_bandwidth_draws(sample_x: Callable, sample_y: Callable, *, warmup: int = 20,
                           draws: int = 1000, seed=0) -> np.ndarray:
    """Bandwidths the median heuristic picks on ``warmup`` pairs, over ``draws`` warm-ups.

    Parameters
    ----------
    sample_x, sample_y : callable
        ``sample(n, rng) -> (n, d)``.
    warmup : int
        Pairs per warm-up (20, as the seed).
    draws : int
        Number of warm-ups.
    seed : int or numpy.random.SeedSequence
        Root seed.

    Returns
    -------
    ndarray
        One bandwidth per warm-up.
    """
    from .rbf import median_bandwidth

    rng = np.random.Generator(np.random.PCG64(as_seed_sequence(seed)))
    return np.array([median_bandwidth(sample_x(warmup, rng), sample_y(warmup, rng))[0]
                     for _ in range(int(draws))])


def perturbed_uniform(*, runs: int = 100, max_obs: int = 3000, failure_prob: float = 0.05,
                      amplitude: float = 1.0, seed=0, keep_paths: int = 100, d: int = 2,
                      conventions: str = "paper") -> dict:
    """App. F.1: U[0,1]^d vs itself (null) and vs the perturbed uniform (alternative), Alg. 1
    with the median heuristic. The seed states d = 2; its 108 observations are those of d = 1
    (claim ``appF.1.dimension``), so both are offered. ``wald_bound``: the mean stopping time
    no run of Alg. 1 can beat on average (:func:`wald_stop_lower_bound`, averaged over the
    median-heuristic bandwidth of 1,000 warm-ups).

    Parameters
    ----------
    runs : int
        Runs per case.
    max_obs : int
        Test pairs per run.
    failure_prob : float
        Level of each test.
    amplitude : float
        Amplitude of the perturbation.
    seed : int or numpy.random.SeedSequence
        Root seed.
    keep_paths : int
        Number of runs whose paths are kept.
    d : int
        Dimension of the uniform (the seed states 2).
    conventions : str
        Tester conventions (:mod:`.conventions`).

    Returns
    -------
    dict
        The null and the alternative case, each with its rejection rate.
    """
    unif = lambda n, r: r.random((n, d))  # noqa: E731
    pert = perturbed_uniform_sampler(d, amplitude)
    out = {}
    for label, sy in (("null", unif), ("alternative", pert)):
        res = run_audits(lambda sy=sy: sampler_source(unif, sy), runs=runs,
                         seed=as_seed_sequence(seed).spawn(3 if label == "null" else 4)[-1],
                         epsilon=0.0, delta=0.0, failure_prob=failure_prob, max_obs=max_obs,
                         algorithm=1, conventions=conventions)
        out[label] = {**res.summary,
                      "paths": [r.log_wealth.tolist() for r in res.runs[:keep_paths]]}
    out["seed_value"] = {"null": "no path crosses 1/alpha (100 runs)",
                         "alternative": "rejects after 108 observations on average"}
    nb = "ons" in conventions or conventions == "notebook"
    bws = median_bandwidth_draws(unif, pert, draws=1000, seed=as_seed_sequence(seed).spawn(5)[-1])
    out["wald_bound"] = float(np.mean(wald_stop_lower_bound(
        perturbed_uniform_mmd(bws, d=d, amplitude=amplitude), failure_prob=failure_prob,
        lam_max=1 / 8 if nb else None,
        radius=0.5 if ("oga" in conventions or conventions == "notebook") else 1.0)))
    out["median_bandwidth"] = float(np.median(bws))
    out.update(runs=runs, max_obs=max_obs, amplitude=amplitude, d=d, conventions=conventions)
    return out


def type1_rates(*, runs: int = 200, epsilons=(0.01, 0.1), delta: float = 1e-5,
                failure_prob: float = 0.05, algorithms=(1, 2), seed=0, max_obs=None,
                progress=None, floor: str = "count", power_runs: int | None = None) -> dict:
    """Rejection rates of DPLaplace and DPGaussian (Type I) with binomial SEs, the runs whose
    witness was degenerate, and beside each row the power at the known alternative
    (:func:`power_at_alternative`, ``power_runs`` runs, default ``min(runs, 20)``).

    Parameters
    ----------
    runs : int
        Runs per cell.
    epsilons : sequence of float
        Tested :math:`\\varepsilon` values.
    delta : float
        Tested :math:`\\delta`.
    failure_prob : float
        Level of each test.
    algorithms : sequence of int
        The paper's algorithms to run.
    seed : int or numpy.random.SeedSequence
        Root seed.
    max_obs : dict, optional
        Test pairs per run by algorithm; None = the seed's.
    progress : callable, optional
        Progress reporter.
    floor : {"count", "scale"}
        Reading of the zoo mechanisms.
    power_runs : int, optional
        Runs of :func:`power_at_alternative`; None = ``min(runs, 20)``.

    Returns
    -------
    dict
        One row per mechanism, algorithm and epsilon.
    """
    from semi_core.mechanisms.zoo import SEED_PAIR

    max_obs = max_obs or SEED_NMAX
    rows = []
    for mi, name in enumerate(("dp-gaussian", "dp-laplace")):
        for ei, eps in enumerate(epsilons):
            mech = _zoo(name, eps, delta, floor)
            for alg in algorithms:
                res = run_audits(lambda m=mech: mechanism_source(m, *SEED_PAIR), runs=runs,
                                 seed=as_seed_sequence(seed).spawn(7 + 10 * mi + ei + alg)[-1],
                                 epsilon=eps, delta=delta, failure_prob=failure_prob,
                                 max_obs=max_obs.get(eps, 5000), algorithm=alg)
                bw = float(np.median([r.bandwidth for r in res.runs]))
                pw = power_at_alternative(
                    name, eps, bandwidth=bw, runs=power_runs or min(runs, 20), delta=delta,
                    failure_prob=failure_prob, max_obs=max_obs.get(eps, 5000),
                    seed=as_seed_sequence(seed).spawn(57 + 10 * mi + ei + alg)[-1],
                    floor=floor, algorithm=alg)
                rows.append({"mechanism": name, "epsilon": eps, "algorithm": alg,
                             **res.summary, "bandwidth_median": bw,
                             "power_at_alternative": pw})
                if progress:
                    progress(f"{name} eps={eps} alg={alg}")
    return {"runs": runs, "failure_prob": failure_prob, "floor": floor, "rows": rows}


def boundary_type1(*, runs: int = 1000, epsilon: float = 0.8, failure_prob: float = 0.1,
                   max_obs: int = 500, seed=0) -> dict:
    """Type I at the boundary of the null: the binary mechanism that is exactly epsilon-DP
    (MMD = tau(epsilon, 0) with bandwidth 0.05) for Alg. 1 and 2, and randomized response
    (exactly (epsilon, 1e-4)-DP, attains p*) for the SeMI stream audit.

    Parameters
    ----------
    runs : int
        Runs per test.
    epsilon : float
        The mechanism's exact :math:`\\varepsilon`.
    failure_prob : float
        Level of each test.
    max_obs : int
        Test pairs (rounds) per run.
    seed : int or numpy.random.SeedSequence
        Root seed.

    Returns
    -------
    dict
        Rejection rate of each test with its SE.
    """
    from semi_core.mechanisms.zoo import RandomizedResponse

    p = np.exp(epsilon) / (1 + np.exp(epsilon))

    def src():
        return sampler_source(lambda n, r: (r.random((n, 1)) < p).astype(float),
                              lambda n, r: (r.random((n, 1)) < 1 - p).astype(float))

    out = {"runs": runs, "epsilon": epsilon, "failure_prob": failure_prob, "max_obs": max_obs}
    for alg, ev in ((1, "max"), (2, "max"), (2, "mixture")):
        res = run_audits(src, runs=runs, seed=as_seed_sequence(seed).spawn(alg + 3)[-1],
                         epsilon=epsilon, delta=0.0, failure_prob=failure_prob, max_obs=max_obs,
                         algorithm=alg, evalue=ev, bandwidth=0.05)
        out[f"alg{alg}_{ev}"] = res.summary
    rr = RandomizedResponse(epsilon, 1e-4)
    out["semi_stream"] = run_audits(
        audit=lambda ss: semi_stream_audit(rr, epsilon, delta=1e-4, failure_prob=failure_prob,
                                           max_rounds=4 * max_obs, seed=ss).rejected[0],
        runs=runs, seed=seed, summary=rejection_summary).summary
    return out


def semi_rounds_comparison(mechanism=None, *, epsilon: float = 1.0, delta: float = 1e-5,
                           failure_prob: float = 0.05, runs: int = 100,
                           max_rounds: int = 20_000,
                           fixed_rounds=(50, 100, 200, 400, 800, 1600, 3200, 6400),
                           audits: int = 100, seed=0, progress=None) -> dict:
    """Rounds the SeMI stream audit needs to reject ``(epsilon, delta)`` vs fixed-R audits
    (:func:`semi_core.audit.bounds.audit_batch`, CP at the pre-registered LR threshold 0 and DKW)
    at the same confidence; default mechanism: the noisy mean (n=10, noise 0.1, data
    N(-1, 0.1^2), canary +1) with the SeMI* score.

    Parameters
    ----------
    mechanism : Mechanism, optional
        The audited mechanism; None = the default noisy mean.
    epsilon : float
        Tested :math:`\\varepsilon`.
    delta : float
        Tested :math:`\\delta`.
    failure_prob : float
        Confidence level of every audit.
    runs : int
        Stream audits run.
    max_rounds : int
        Largest rounds of a stream audit.
    fixed_rounds : sequence of int
        Round counts of the fixed-R audits.
    audits : int
        Fixed-R audits per round count.
    seed : int or numpy.random.SeedSequence
        Root seed.
    progress : callable, optional
        Progress reporter.

    Returns
    -------
    dict
        The stream audits' stopping rounds and each fixed-R rejection rate.
    """
    if mechanism is None:
        from semi_core.mechanisms.noisy_mean import NoisyMean

        mechanism = NoisyMean(10, 1, noise=0.1, data_mean=-1.0, data_std=0.1)
    stops = np.asarray(run_audits(
        audit=lambda ss: semi_stream_audit(mechanism, epsilon, delta=delta,
                                           failure_prob=failure_prob, max_rounds=max_rounds,
                                           seed=ss),
        keep=lambda r: np.inf if r.stopped_at[0] is None else r.stopped_at[0],
        runs=runs, seed=seed, summary=None).runs, dtype=float)
    if progress:
        progress("stream done")
    fixed = {}
    for method in ("cp", "dkw"):
        fixed[method] = []
        for R in fixed_rounds:
            fr = fixed_r_rejection_rate(mechanism, R, epsilon=epsilon, delta=delta,
                                        failure_prob=failure_prob, method=method,
                                        audits=audits, seed=as_seed_sequence(seed).spawn(R)[-1])
            fr["stream_rejected_by_R"] = float(np.mean(stops <= R))
            fixed[method].append(fr)
        if progress:
            progress(f"fixed-R {method} done")

    def r50(rows):
        hit = [r["rounds"] for r in rows if r["rejection_rate"] >= 0.5]
        return hit[0] if hit else None

    fin = stops[np.isfinite(stops)]
    return {"mechanism": mechanism.params(), "epsilon": epsilon, "delta": delta,
            "failure_prob": failure_prob, "runs": runs,
            "stream_rejection_rate": float(np.mean(np.isfinite(stops))),
            "stream_median_rounds": float(np.median(stops)) if fin.size * 2 > runs else None,
            "stream_mean_rounds": float(fin.mean()) if fin.size else None,
            "stream_mean_rounds_se": float(fin.std(ddof=1) / np.sqrt(fin.size))
            if fin.size > 1 else None,
            "fixed": fixed, "fixed_R50": {m: r50(v) for m, v in fixed.items()}}


def canary_ceiling(*, eps_canary: float = 2.75, delta: float = 1e-5, runs: int = 5,
                   max_obs: int = 2500, grid_step: float = 0.05, grid_max: float = 3.0,
                   failure_prob: float = 0.05, seed=0, path_stride: int = 5) -> dict:
    r"""App. G, Fig. 8: the anytime-valid lower bound of Alg. 1 on the white-box canary stream
    :math:`N(0,\sigma^2)` vs :math:`N(1,\sigma^2)` calibrated to
    :math:`(\varepsilon_{canary},\delta)` (the dead-coordinate Dirac canary), beside the
    ceiling of the test (:mod:`.ceiling`): at each run's median-heuristic bandwidth, at the best
    bandwidth and for every kernel in [0, 1].

    Parameters
    ----------
    eps_canary : float
        :math:`\varepsilon` of one observation pair, > 0.
    delta : float
        :math:`\delta` of the calibration and of the tests.
    runs : int
        Independent streams.
    max_obs : int
        Test pairs per stream (after the 20 warm-up pairs).
    grid_step, grid_max : float
        The tested grid ``grid_step, 2 grid_step, ..., grid_max``.
    failure_prob : float
        Level of the tests.
    seed : int or numpy.random.SeedSequence
        Root seed.
    path_stride : int
        Keep every k-th point of the lower-bound paths.

    Returns
    -------
    dict
        Per run the lower bound after 250 pairs and at the end, its path, the bandwidth and the
        ceiling there; the best-bandwidth and any-kernel ceilings.
    """
    from semi_core.mechanisms.zoo import gaussian_sigma

    from .ceiling import gaussian_shift_ceiling
    from .tester import sequential_grid

    sig = gaussian_sigma(eps_canary, delta)
    grid = np.round(np.arange(grid_step, grid_max + grid_step / 2, grid_step), 10)
    out_runs = []
    for ss in as_seed_sequence(seed).spawn(runs):
        src = sampler_source(lambda n, r: r.normal(0.0, sig, (n, 1)),
                             lambda n, r: r.normal(1.0, sig, (n, 1)), "canary stream")
        g = sequential_grid(src, grid, delta=delta, failure_prob=failure_prob,
                            max_obs=max_obs, seed=ss)
        lb = g.lower_bound_path
        c = gaussian_shift_ceiling(1.0, sig, delta, bandwidth=g.bandwidth)
        out_runs.append({"bandwidth": g.bandwidth, "lb_250": float(lb[min(249, lb.size - 1)]),
                         "lb_end": float(lb[-1]), "n": int(lb.size),
                         "ceiling": c["at_bandwidth"]["epsilon_ceiling"],
                         "lb_path": lb[::path_stride].tolist()})
    c = gaussian_shift_ceiling(1.0, sig, delta)
    return {"eps_canary": eps_canary, "delta": delta, "sigma": sig, "runs": out_runs,
            "grid": grid.tolist(), "max_obs": max_obs, "path_stride": path_stride,
            "best_kernel_ceiling": c["best_kernel_ceiling"],
            "best_bandwidth": c["best_bandwidth"], "any_kernel_ceiling": c["any_kernel_ceiling"],
            "tv": c["tv"],
            "seed_value": "the empirical lower bound grows slowly (Fig. 8; no number printed)"}

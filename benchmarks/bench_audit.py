"""Certified epsilon from scores: tightness, over-claim counts, timings and the default.

1. Tightness: members N(mu, 1), non-members N(0, 1), delta = 1e-5, failure probability 0.05,
   ``reps`` repetitions per cell; median eps_LB / exact eps(delta) for every method, beside the
   *oracle ceiling* (one threshold fixed in advance at its best value for the true laws,
   expected counts, exact Clopper-Pearson at xi/2 per error: no multiplicity at all).
   ``one-run``: one run on m = 2N canaries of the same Gaussian mechanism, each included
   independently with probability 1/2 (the protocol the bound needs), same score budget.
2. Over-claim counts: audits whose bound exceeds the exact eps(delta), per score family
   (null, Gaussian mu = 1, Laplace mu = 1, discrete Binomial(6, .75) vs (6, .25): ties) and
   method, xi = 0.05, 500 scores per side.
3. Timings on 10^6 scores per side, as ratios to one ``np.sort`` of 10^6 floats timed in the
   same run.
4. The choice of the default (:func:`default_choice`, :func:`default_times`): the
   distribution-free candidates against the peer *formula* -- jax_privacy's two-sided
   Clopper-Pearson Bonferroni bound, written here from its description
   (:func:`peer_cp_bonferroni`), so the comparison runs without the peer installed -- and the
   oracle ceiling, median eps_LB at mu in {.5, 1, 2} x {1k, 10k} per side x delta in
   {1e-5, .1}, with the ratios; CPU time per audit at 10k per side against np.sort and the peer
   formula in the same run. The over-claim table (2.) counts the peer formula too, and holds
   the non-GDP exactly-eps-DP families (randomized response, Laplace, geometric) and ties.
5. Cold vs warm (:func:`cold_warm`): the first call in a fresh process against the second, per
   method and size (on and off the shipped band table).

Peers are run through their public APIs only, when importable: jax_privacy's
``auditing.CanaryScoreAuditor`` (``epsilon_clopper_pearson`` with its default Bonferroni and with
``Split``, ``epsilon_one_run``, ``epsilon_one_run_fdp``, ``epsilon_from_gdp``). It is not a
dependency of semi_core: install it anywhere (e.g. ``pip install --target DIR jax-privacy``) and
set ``SEMI_CORE_PEER_SITE=DIR`` (appended to ``sys.path``, after the project's packages).
tensorflow_privacy is reported absent when not importable.
"""

from __future__ import annotations

import importlib.util
import math
import time

import numpy as np
from scipy.special import betaincinv, ndtr

from benchmarks._timing import best_of
from semi_core.audit import audit_batch, epsilon_lower_bound, gdp_epsilon
from semi_core.audit.bands import calibrate_band
from semi_core.audit.one_run import one_run_counts, one_run_epsilon, one_run_gdp_mu

DELTA, XI = 1e-5, 0.05
METHODS = {
    "band": {"method": "band"},
    "band (one-sided)": {"method": "band", "sides": "one"},
    "joint": {"method": "joint"},
    "cp ranks (Bonferroni)": {"method": "cp", "thresholds": "ranks"},
    "cp split": {"method": "cp"},
    "dkw": {"method": "dkw"},
    "one-run (Steinke)": {"method": "one-run"},
    "gdp tradeoff (assumes GDP)": {"method": "gdp"},
}
DIST_FREE = ("band", "band (one-sided)", "joint", "cp ranks (Bonferroni)", "cp split", "dkw")


def _jax_auditing():
    import os
    import sys

    site = os.environ.get("SEMI_CORE_PEER_SITE")
    if site and site not in sys.path:
        sys.path.append(site)
    try:
        from jax_privacy import auditing
    except Exception:  # noqa: BLE001 - any import failure means "not available"
        return None
    return auditing


def peer_methods():
    """Peer bounds as functions (member, nonmember) -> eps, through public APIs only."""
    au = _jax_auditing()
    if au is None:
        return {}
    A = au.CanaryScoreAuditor
    return {
        "jax_privacy CP, Bonferroni (default)":
            lambda m, n: A(m, n).epsilon_clopper_pearson(XI, DELTA, one_sided=False),
        "jax_privacy CP, Split": lambda m, n: A(m, n).epsilon_clopper_pearson(
            XI, DELTA, one_sided=False, threshold_strategy=au.Split(0.5, seed=0)),
        "jax_privacy one-run (Steinke)": lambda m, n: A(m, n).epsilon_one_run(XI, DELTA),
        "jax_privacy one-run f-DP (Mahloujifar)":
            lambda m, n: A(m, n).epsilon_one_run_fdp(XI, DELTA),
        "jax_privacy GDP (assumes GDP)": lambda m, n: A(m, n).epsilon_from_gdp(XI, DELTA),
    }


def one_run_agreement():
    """Our one-run bound vs jax_privacy's at the same (m, r, v) (one explicit threshold)."""
    au = _jax_auditing()
    if au is None:
        print("\none-run agreement with jax_privacy: not installed here")
        return []
    rows = []
    print("\none-run bound at one explicit threshold (k_- = 0), ours vs jax_privacy, "
          f"delta = {DELTA}, xi = {XI}")
    print("| m | r | v | ours Steinke | jax Steinke | ours GDP-profile f-DP | jax f-DP (Mahloujifar) |")
    print("|---|---|---|---|---|---|---|")
    rng = np.random.default_rng(11)
    for m, mu, frac in ((1000, 2.0, 0.1), (1000, 4.0, 0.05), (10_000, 2.0, 0.02),
                        (10_000, 1.0, 0.1)):
        s = rng.random(m) < 0.5
        score = mu * s + rng.normal(0.0, 1.0, m)
        k = int(frac * m)
        r, v, cut = one_run_counts(score[s], score[~s], k, 0)
        srt = np.sort(score)
        th = float(0.5 * (srt[m - k - 1] + srt[m - k]))  # between: the same k guesses either way
        ours = one_run_epsilon(m, r, v, delta=DELTA, failure_prob=XI)
        strat = au.Explicit(th)
        aud = au.CanaryScoreAuditor(score[s], score[~s])
        theirs = aud.epsilon_one_run(XI, DELTA, threshold_strategy=strat)
        ours_f = gdp_epsilon(one_run_gdp_mu(m, r, v, failure_prob=XI), DELTA)
        theirs_f = aud.epsilon_one_run_fdp(XI, DELTA, threshold_strategy=strat)
        print(f"| {m} | {r} | {v} | {ours:.4f} | {theirs:.4f} | {ours_f:.4f} | {theirs_f:.4f} |")
        rows.append({"table": "one_run_agreement", "m": m, "r": r, "v": v, "ours": ours,
                     "jax": theirs, "ours_gdp_profile": ours_f, "jax_fdp": theirs_f})
    return rows


def _upper_hull(fn: np.ndarray, tn: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # Vertices of the concave majorant of the (FN, TN) count curve (monotone chain): a point
    # on or below the chord of its neighbours is dropped.
    hx: list[int] = []
    hy: list[int] = []
    for x, y in zip(fn.tolist(), tn.tolist(), strict=True):
        while len(hx) >= 2 and ((hx[-1] - hx[-2]) * (y - hy[-2])
                                - (hy[-1] - hy[-2]) * (x - hx[-2])) >= 0:
            hx.pop()
            hy.pop()
        hx.append(x)
        hy.append(y)
    return np.asarray(hx), np.asarray(hy)


def peer_cp_bonferroni(member: np.ndarray, nonmember: np.ndarray, xi: float = XI,
                       delta: float = DELTA, two_sided: bool = True) -> float:
    r"""The peer formula (jax_privacy ``CanaryScoreAuditor.epsilon_lower_bound``), written here.

    Thresholds: every distinct score and :math:`+\infty`; "member" means score :math:`\ge`
    threshold. Only the thresholds at the vertices of the concave majorant of the
    (false-negative, true-negative) count curve are kept (``K`` of them, a number that depends
    on the data); at each, Clopper-Pearson upper bounds of FNR and FPR at :math:`\xi/(2K)`
    (Bonferroni), and

    .. math::

        \hat\varepsilon = \max_\gamma \log\frac{1-\overline{FNR}-\delta}{\overline{FPR}}
        \quad(\text{two-sided: also }\log\frac{1-\overline{FPR}-\delta}{\overline{FNR}}),

    floored at 0.
    """
    m, x = np.sort(member), np.sort(nonmember)
    n1, n0 = m.size, x.size
    thr = np.concatenate([np.union1d(m, x), [np.inf]])
    fn, tn = _upper_hull(np.searchsorted(m, thr, side="left"),
                         np.searchsorted(x, thr, side="left"))
    a = xi / (2 * fn.size)

    def cp_up(k, n):
        k = np.asarray(k, dtype=float)
        return np.where(k >= n, 1.0, betaincinv(k + 1.0, np.maximum(n - k, 1e-300), 1.0 - a))

    fnr_up, fpr_up = cp_up(fn, n1), cp_up(n0 - tn, n0)
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.log(1.0 - fnr_up - delta) - np.log(fpr_up)
        if two_sided:
            e = np.concatenate([e, np.log(1.0 - fpr_up - delta) - np.log(fnr_up)])
    best = np.nanmax(np.where(np.isfinite(e) | (e == np.inf), e, np.nan)) if e.size else 0.0
    return float(max(0.0, best))


def _cell_scores(mu, n, reps, seed):
    rng = np.random.default_rng(np.random.SeedSequence([seed, 24, int(mu * 10), n]))
    return rng.normal(mu, 1.0, (reps, n)), rng.normal(0.0, 1.0, (reps, n))


#: The distribution-free candidates for the default, compared in :func:`default_choice`.
CANDIDATES = ("band", "joint", "cp ranks (Bonferroni)", "dkw")


def default_choice(sizes, mus, deltas, reps, seed=0) -> list[dict]:
    """Tightness of the default's candidates against the peer formula and the oracle ceiling.

    Per cell (mu, n per side, delta): median eps_LB over ``reps`` audits of the same Gaussian
    scores for each candidate (:data:`CANDIDATES`), for the peer formula (jax_privacy's two-sided
    CP-Bonferroni, :func:`peer_cp_bonferroni`) and the oracle ceiling (:func:`oracle_ratio`:
    one threshold fixed in advance at its best for the true laws, no multiplicity); ratios
    ``joint / peer``, ``band / peer`` and ``joint / oracle``. ``joint xi/10``: the joint test at
    a ten times smaller failure probability (the rectangle methods leave most of theirs unused:
    see the over-claim table), so that it is compared at a realised over-claim rate no larger
    than the peer's.
    """
    print(f"\n## default candidates vs the peer formula (jax_privacy two-sided CP-Bonferroni, "
          f"written here) and the oracle ceiling; median eps_LB over {reps} audits, xi = {XI}")
    names = list(CANDIDATES) + ["joint xi/10"]
    print("| mu | n per side | delta | " + " | ".join(names) + " | peer formula | oracle | "
          "band / peer | joint / peer | joint xi/10 / peer | joint / oracle |")
    print("|---|---|---|" + "---|" * (len(names) + 6))
    rows = []
    for delta in deltas:
        for mu in mus:
            for n in sizes:
                m, nm = _cell_scores(mu, n, reps, seed)
                med = {name: float(np.median(audit_batch(m, nm, delta=delta, failure_prob=XI,
                                                         seed=seed, **METHODS[name])))
                       for name in CANDIDATES}
                med["joint xi/10"] = float(np.median(audit_batch(
                    m, nm, delta=delta, failure_prob=XI / 10, method="joint")))
                peer = float(np.median([peer_cp_bonferroni(m[i], nm[i], delta=delta)
                                        for i in range(reps)]))
                oracle = oracle_ratio(mu, n, delta) * gdp_epsilon(mu, delta)
                r_band, r_joint = med["band"] / peer, med["joint"] / peer
                r_j10, r_or = med["joint xi/10"] / peer, med["joint"] / oracle
                print(f"| {mu:g} | {n} | {delta:g} | "
                      + " | ".join(f"{med[k]:.4f}" for k in names)
                      + f" | {peer:.4f} | {oracle:.4f} | {r_band:.3f} | {r_joint:.3f} | "
                        f"{r_j10:.3f} | {r_or:.3f} |")
                rows.append({"table": "default_choice", "mu": mu, "n": n, "delta": delta,
                             **med, "peer_formula": peer, "oracle": oracle,
                             "band_over_peer": r_band, "joint_over_peer": r_joint,
                             "joint_xi_over_10_over_peer": r_j10,
                             "joint_over_oracle": r_or})
    return rows


def default_times(n=10_000, repeat=5) -> list[dict]:
    """CPU seconds per audit at ``n`` per side (warm, best of ``repeat`` on fresh scores each) of the
    candidates and the peer formula, as ratios to one ``np.sort`` of ``n`` floats and to the
    peer formula, timed in the same run."""
    rng = np.random.default_rng(3)
    data = [(rng.normal(1, 1, n), rng.normal(0, 1, n)) for _ in range(repeat)]
    ref = best_of(lambda: np.sort(data[0][1]), 5, clock=time.process_time)
    it = iter(range(10 ** 9))

    def one(fn):
        def call():
            m, x = data[next(it) % repeat]
            fn(m, x)
        call()  # warm: calibrations and caches of this size
        return best_of(call, repeat, clock=time.process_time)

    peer = one(peer_cp_bonferroni)
    print(f"\n## CPU time per audit, {n:,} per side, mu = 1 (warm, best of {repeat}); np.sort of "
          f"{n:,} floats = {ref * 1e3:.3f} ms, peer formula = {peer * 1e3:.2f} ms")
    print("| method | ms per audit | x sort | x peer formula |")
    print("|---|---|---|---|")
    rows = []
    for name in CANDIDATES + ("peer formula",):
        if name == "peer formula":
            t = peer
        else:
            kw = METHODS[name]
            t = one(lambda m, x, kw=kw: epsilon_lower_bound(m, x, delta=DELTA, failure_prob=XI,
                                                             **kw))
        print(f"| {name} | {t * 1e3:.2f} | {t / ref:.1f} | {t / peer:.2f} |")
        rows.append({"table": "default_time", "method": name, "n": n, "seconds": t,
                     "ratio_to_sort": t / ref, "ratio_to_peer": t / peer})
    return rows


_COLD_WARM = r"""
import json, time, numpy as np
from semi_core.audit import epsilon_lower_bound
rng = np.random.default_rng(0)
n = {n}
t = []
for _ in range(2):
    m, x = rng.normal(1, 1, n), rng.normal(0, 1, n)
    t0 = time.process_time()
    epsilon_lower_bound(m, x, delta=1e-5, method={method!r})
    t.append(time.process_time() - t0)
print(json.dumps(t))
"""


def cold_warm(sizes=(10_000, 12_345, 1_234_567, 10_000_000), methods=("band", "joint"),
              repeat=3) -> list[dict]:
    """First call in a fresh process (imports excluded) vs the second call on fresh scores of
    the same size, CPU seconds, best of ``repeat`` processes: what a one-shot audit pays for its
    calibration (``band``: the table, the embedded band or a simulation; ``joint``: the Beta
    quantiles of the counts it solves)."""
    from benchmarks.bench_cli import ROOT, _cold_warm

    print(f"\n## cold (first call in a process) vs warm (second call), CPU s, best of {repeat}")
    print("| method | n per side | cold | warm | cold / warm |")
    print("|---|---|---|---|---|")
    rows = []
    for method in methods:
        for n in sizes:
            script = _COLD_WARM.replace("{method!r}", repr(method))
            cold, warm = _cold_warm(str(ROOT), n, repeat, script)
            print(f"| {method} | {n:,} | {cold:.4f} | {warm:.4f} | {cold / warm:.2f} |")
            rows.append({"table": "cold_warm", "method": method, "n": n, "cold_s": cold,
                         "warm_s": warm, "cold_over_warm": cold / warm})
    return rows


def oracle_ratio(mu: float, n: int, delta: float = DELTA) -> float:
    """Best pre-registered single threshold for the true laws, CP at xi/2 each, expected counts,
    as a fraction of the exact eps(delta) of mu-GDP."""
    t = np.linspace(-1.0, 8.0, 9001)
    k0, k1 = np.round(n * ndtr(-t)), np.round(n * ndtr(mu - t))
    a_up = np.where(k0 >= n, 1.0, betaincinv(k0 + 1, np.maximum(n - k0, 1e-9), 1 - XI / 2))
    tpr_lo = np.where(k1 <= 0, 0.0, 1 - betaincinv(n - k1 + 1, np.maximum(k1, 1e-9),
                                                   1 - XI / 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.log(np.maximum(tpr_lo - delta, 1e-300)) - np.log(a_up)
    return float(max(0.0, np.nanmax(e)) / gdp_epsilon(mu, delta))


def _one_run_protocol(rng, mu, m, reps, seed, kw):
    """One run of the Gaussian mechanism on ``m`` canaries, each included w.p. 1/2."""
    out = []
    for _ in range(reps):
        s = rng.random(m) < 0.5
        score = mu * s + rng.normal(0.0, 1.0, m)
        out.append(epsilon_lower_bound(score[s], score[~s], delta=DELTA, failure_prob=XI,
                                       seed=seed, **kw).epsilon_lower_bound)
    return np.asarray(out)


def tightness(sizes, mus, reps, seed=0):
    rows = []
    cells = [(mu, n) for mu in mus for n in sizes]
    table = {name: [] for name in METHODS}
    for mu, n in cells:
        truth = gdp_epsilon(mu, DELTA)
        rng = np.random.default_rng(np.random.SeedSequence([seed, int(mu * 10), n]))
        m, nm = rng.normal(mu, 1.0, (reps, n)), rng.normal(0.0, 1.0, (reps, n))
        for name, kw in METHODS.items():
            if name.startswith("one-run"):
                eps = _one_run_protocol(rng, mu, 2 * n, reps, seed, kw)
            else:
                eps = audit_batch(m, nm, delta=DELTA, failure_prob=XI, seed=seed, **kw)
            table[name].append(float(np.median(eps)) / truth)
    peers = peer_methods()
    for name, fn in peers.items():
        table[name] = []
        for mu, n in cells:
            rng = np.random.default_rng(np.random.SeedSequence([seed, int(mu * 10), n]))
            m, nm = rng.normal(mu, 1.0, (reps, n)), rng.normal(0.0, 1.0, (reps, n))
            if "one-run" in name:  # the protocol: 2n canaries, each included w.p. 1/2
                eps = []
                for _ in range(reps):
                    s = rng.random(2 * n) < 0.5
                    sc = mu * s + rng.normal(0.0, 1.0, 2 * n)
                    eps.append(fn(sc[s], sc[~s]))
            else:
                eps = [fn(m[i], nm[i]) for i in range(reps)]
            table[name].append(float(np.median(eps)) / gdp_epsilon(mu, DELTA))
    table["oracle ceiling (1 fixed threshold)"] = [oracle_ratio(mu, n) for mu, n in cells]
    head = " | ".join(f"mu={mu:g} {n // 1000}k" for mu, n in cells)
    print(f"\nmedian eps_LB / eps(1e-5), {reps} reps, xi = {XI}")
    print(f"| method | {head} |")
    print("|---|" + "---|" * len(cells))
    for name, vals in table.items():
        print(f"| {name} | " + " | ".join(f"{v:.2f}" for v in vals) + " |")
        rows.append({"table": "tightness", "method": name,
                     **{f"mu{mu:g}_n{n}": v for (mu, n), v in zip(cells, vals, strict=True)}})
    if not peers:
        print("| jax_privacy | not installed here: not run |")
    if importlib.util.find_spec("tensorflow_privacy") is None:
        print("| tensorflow_privacy | not installed here: not run |")
    return rows


#: Randomized response with eps0 = 1: the member's bit is 1 w.p. e/(1+e), the non-member's w.p.
#: 1/(1+e); eps(delta) = log((p - delta)/(1 - p)) (the likelihood ratio takes the values e^{+-1}).
_RR_P = math.e / (1.0 + math.e)
#: Two-sided geometric mechanism, P(z) proportional to a^|z| with a = e^-1, sensitivity 1: the
#: ratio is e^{+-1} (e above 0), so eps(delta) = log((1 - delta (1 + a)) / a).
_GEO_A = math.exp(-1.0)


def _geometric(rng, shape):
    # the difference of two i.i.d. geometric laws is the two-sided geometric law
    return (rng.geometric(1.0 - _GEO_A, shape) - rng.geometric(1.0 - _GEO_A, shape)).astype(float)


def over_claims(audits, n, seed=1):
    from scipy.stats import binom

    k = np.arange(7)
    p1, p0 = binom.pmf(k, 6, 0.75), binom.pmf(k, 6, 0.25)

    def disc_eps(delta):
        from scipy.optimize import brentq

        def d(e):
            return max(np.maximum(p1 - math.exp(e) * p0, 0).sum(),
                       np.maximum(p0 - math.exp(e) * p1, 0).sum())
        return brentq(lambda e: d(e) - delta, 0.0, 50.0, xtol=1e-13)

    fams = {
        "null": (lambda r: (r.normal(0, 1, (audits, n)), r.normal(0, 1, (audits, n))), 0.0),
        "gaussian": (lambda r: (r.normal(1, 1, (audits, n)), r.normal(0, 1, (audits, n))),
                     gdp_epsilon(1.0, DELTA)),
        "laplace": (lambda r: (r.laplace(1, 1, (audits, n)), r.laplace(0, 1, (audits, n))),
                    1.0 + 2 * math.log1p(-DELTA)),
        "discrete": (lambda r: (r.binomial(6, .75, (audits, n)).astype(float),
                                r.binomial(6, .25, (audits, n)).astype(float)), disc_eps(DELTA)),
        # exactly-eps-DP mechanisms that are not GDP, scores with two values or integer ties
        "randomized response": (lambda r: ((r.random((audits, n)) < _RR_P).astype(float),
                                           (r.random((audits, n)) >= _RR_P).astype(float)),
                                math.log((_RR_P - DELTA) / (1.0 - _RR_P))),
        "geometric": (lambda r: (1.0 + _geometric(r, (audits, n)), _geometric(r, (audits, n))),
                      math.log((1.0 - DELTA * (1.0 + _GEO_A)) / _GEO_A)),
    }
    names = [k for k in METHODS if k != "one-run (Steinke)"]
    peers = peer_methods()
    peer_fixed = {k: f for k, f in peers.items() if "one-run" not in k}
    peer_fixed["peer formula (written here)"] = peer_cp_bonferroni
    peer_run = {k: f for k, f in peers.items() if "one-run" in k}
    allowed = int(binom.ppf(1.0 - 1e-3, audits, XI))
    print(f"\nover-claims (eps_LB > exact eps) of {audits} audits per cell, {n} per side, "
          f"xi = {XI} (allowed: {XI * audits:.0f} + noise; {allowed} = the upper end of the "
          f"binomial interval at 1e-3)")
    print("| family | " + " | ".join(names + list(peer_fixed)) + " |")
    print("|---|" + "---|" * (len(names) + len(peer_fixed)))
    rows = []
    for fam, (sample, truth) in fams.items():
        m, nm = sample(np.random.default_rng(np.random.SeedSequence([seed, len(fam)])))
        counts = []
        for name in names:
            eps = audit_batch(m, nm, delta=DELTA, failure_prob=XI, seed=seed, **METHODS[name])
            counts.append(int(np.sum(eps > truth + 1e-9)))
        for fn in peer_fixed.values():
            counts.append(int(sum(fn(m[i], nm[i]) > truth + 1e-9 for i in range(audits))))
        print(f"| {fam} | " + " | ".join(str(c) for c in counts) + " |")
        rows.append({"table": "over_claims", "family": fam, "audits": audits, "allowed": allowed,
                     **dict(zip(names + list(peer_fixed), counts, strict=True))})
    # one-run, under its protocol: 2n canaries, each included w.p. 1/2, one run per audit
    a1 = max(50, audits // 10)
    print(f"\none-run over-claims: {a1} runs per family, {2 * n} canaries each "
          f"(allowed: {XI * a1:.1f} + noise)")
    print("| family | one-run (Steinke) | " + " | ".join(peer_run) + " |")
    print("|---|---|" + "---|" * len(peer_run))
    for fam, (sample, truth) in fams.items():
        rng = np.random.default_rng(np.random.SeedSequence([seed, len(fam), 1]))
        m_all, nm_all = sample(rng)
        over = refused = 0
        over_p = {k: 0 for k in peer_run}
        for i in range(a1):
            inc = rng.random(2 * n) < 0.5
            score = np.where(inc, np.concatenate([m_all[i], m_all[(i + 1) % audits]]),
                             np.concatenate([nm_all[i], nm_all[(i + 1) % audits]]))
            try:
                e = epsilon_lower_bound(score[inc], score[~inc], delta=DELTA, failure_prob=XI,
                                        method="one-run").epsilon_lower_bound
            except ValueError:  # class sizes refused by the inclusion-balance check (level
                refused += 1    # 1e-3): a refusal certifies nothing, so it is no over-claim
                continue
            over += e > truth + 1e-9
            for k, fn in peer_run.items():
                over_p[k] += fn(score[inc], score[~inc]) > truth + 1e-9
        print(f"| {fam} | {over} ({refused} refused) | "
              + " | ".join(str(int(v)) for v in over_p.values()) + " |")
        rows.append({"table": "over_claims_one_run", "family": fam, "runs": a1,
                     "one-run": int(over), "refused": refused,
                     **{k: int(v) for k, v in over_p.items()}})
    return rows


def timings(n):
    rng = np.random.default_rng(2)
    m, nm = rng.normal(1, 1, n), rng.normal(0, 1, n)
    ref = best_of(lambda: np.sort(nm), 3)
    t0 = time.perf_counter()
    calibrate_band(n, XI / 2)
    cal = time.perf_counter() - t0
    print(f"\ntimes on {n:,} scores per side (reference: np.sort of {n:,} floats = "
          f"{ref * 1e3:.1f} ms; band calibration, once per (N, xi), {cal:.2f} s)")
    print("| method | seconds | x sort |")
    print("|---|---|---|")
    rows = []
    for name in ("band", "joint", "cp ranks (Bonferroni)", "cp split", "dkw",
                 "gdp tradeoff (assumes GDP)"):
        kw = METHODS[name]
        t = best_of(lambda kw=kw: epsilon_lower_bound(m, nm, delta=DELTA, failure_prob=XI, **kw),
                    2)
        print(f"| {name} | {t:.3f} | {t / ref:.1f} |")
        rows.append({"table": "timing", "method": name, "seconds": t, "ratio_to_sort": t / ref})
    for name, fn in peer_methods().items():
        if "CP" not in name:
            continue
        t = best_of(lambda fn=fn: fn(m, nm), 2)
        print(f"| {name} | {t:.3f} | {t / ref:.1f} |")
        rows.append({"table": "timing", "method": name, "seconds": t, "ratio_to_sort": t / ref})
    return rows


def main(quick: bool = False):
    """Print the three tables; ``quick`` shrinks every size."""
    if quick:
        rows = tightness((1000,), (1.0,), reps=5)
        rows += over_claims(audits=200, n=200)
        rows += one_run_agreement()
        rows += timings(100_000)
        rows += default_choice((1000,), (1.0,), (DELTA, 0.1), reps=5)
        rows += default_times(10_000, repeat=3)
        rows += cold_warm(sizes=(10_000, 12_345), repeat=1)
    else:
        rows = tightness((1000, 10_000), (0.5, 1.0, 2.0), reps=20)
        rows += over_claims(audits=5000, n=500)
        rows += one_run_agreement()
        rows += timings(1_000_000)
        rows += default_choice((1000, 10_000), (0.5, 1.0, 2.0), (DELTA, 0.1), reps=20)
        rows += default_times(10_000)
        rows += cold_warm()
    return rows


if __name__ == "__main__":
    main()

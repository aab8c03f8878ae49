"""Certified epsilon from scores: tightness, over-claim counts and timings (issue 15).

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
4. ``band`` and ``joint`` against the peer *formula* (issue 24): jax_privacy's two-sided
   Clopper-Pearson Bonferroni bound, written here from its description (below,
   :func:`peer_cp_bonferroni`), so the comparison runs without the peer installed; median
   eps_LB of each and the ratios, at mu in {.5, 1, 2} x {1k, 10k} per side, on the same scores.
   The over-claim table (2.) counts the peer formula too.

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


def band_vs_peer(sizes, mus, reps, seed=0) -> list[dict]:
    """Median eps_LB of ``band`` and ``joint`` vs the peer formula on the same scores.

    ``joint`` is also shown at a ten times smaller failure probability (``joint xi/10``): the
    rectangle methods leave most of their failure probability unused (their realised
    over-claim rates are far below xi, see :func:`over_claims`), the joint test spends it, so
    this column compares at a realised over-claim rate no larger than the peer's.
    """
    print(f"\n## band and joint vs the peer formula (jax_privacy two-sided CP-Bonferroni, written "
          f"here); median eps_LB over {reps} audits, xi = {XI}, delta = {DELTA}")
    print("| mu | n per side | band | joint | joint xi/10 | peer formula | band / peer | "
          "joint / peer | joint xi/10 / peer |")
    print("|---|---|---|---|---|---|---|---|---|")
    rows = []
    for mu in mus:
        for n in sizes:
            rng = np.random.default_rng(np.random.SeedSequence([seed, 24, int(mu * 10), n]))
            m, nm = rng.normal(mu, 1.0, (reps, n)), rng.normal(0.0, 1.0, (reps, n))
            ours = float(np.median(audit_batch(m, nm, delta=DELTA, failure_prob=XI,
                                               method="band")))
            joint = float(np.median(audit_batch(m, nm, delta=DELTA, failure_prob=XI,
                                                method="joint")))
            joint10 = float(np.median(audit_batch(m, nm, delta=DELTA, failure_prob=XI / 10,
                                                  method="joint")))
            peer = float(np.median([peer_cp_bonferroni(m[i], nm[i]) for i in range(reps)]))
            print(f"| {mu:g} | {n} | {ours:.4f} | {joint:.4f} | {joint10:.4f} | {peer:.4f} | "
                  f"{ours / peer:.3f} | {joint / peer:.3f} | {joint10 / peer:.3f} |")
            rows.append({"table": "band_vs_peer", "mu": mu, "n": n, "band": ours,
                         "joint": joint, "joint_xi_over_10": joint10, "peer_formula": peer,
                         "ratio": ours / peer, "joint_ratio": joint / peer,
                         "joint_xi_over_10_ratio": joint10 / peer})
    return rows


def oracle_ratio(mu: float, n: int) -> float:
    """Best pre-registered single threshold for the true laws, CP at xi/2 each, expected counts."""
    t = np.linspace(-1.0, 8.0, 9001)
    k0, k1 = np.round(n * ndtr(-t)), np.round(n * ndtr(mu - t))
    a_up = np.where(k0 >= n, 1.0, betaincinv(k0 + 1, np.maximum(n - k0, 1e-9), 1 - XI / 2))
    tpr_lo = np.where(k1 <= 0, 0.0, 1 - betaincinv(n - k1 + 1, np.maximum(k1, 1e-9),
                                                   1 - XI / 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        e = np.log(np.maximum(tpr_lo - DELTA, 1e-300)) - np.log(a_up)
    return float(max(0.0, np.nanmax(e)) / gdp_epsilon(mu, DELTA))


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
    }
    names = [k for k in METHODS if k != "one-run (Steinke)"]
    peers = peer_methods()
    peer_fixed = {k: f for k, f in peers.items() if "one-run" not in k}
    peer_fixed["peer formula (written here)"] = peer_cp_bonferroni
    peer_run = {k: f for k, f in peers.items() if "one-run" in k}
    print(f"\nover-claims (eps_LB > exact eps) of {audits} audits per cell, {n} per side, "
          f"xi = {XI} (allowed: {XI * audits:.0f} + noise)")
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
        rows.append({"table": "over_claims", "family": fam, "audits": audits,
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
        rows += band_vs_peer((1000,), (1.0,), reps=5)
    else:
        rows = tightness((1000, 10_000), (0.5, 1.0, 2.0), reps=20)
        rows += over_claims(audits=5000, n=500)
        rows += one_run_agreement()
        rows += timings(1_000_000)
        rows += band_vs_peer((1000, 10_000), (0.5, 1.0, 2.0), reps=20)
    return rows


if __name__ == "__main__":
    main()

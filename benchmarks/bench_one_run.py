"""One-run audits: time of ``one-run-fdp`` against ``one-run`` (Steinke) on the same scores,
and agreement of the f-DP auditor with jax_privacy's ``epsilon_one_run_fdp``.

1. Timings: one run of the Gaussian mechanism (mu = 2) on m canaries included w.p. 1/2;
   ``epsilon_lower_bound`` with each one-run method (pre-registered guess family, Bonferroni),
   best of 3; the ratio to ``one-run`` timed in the same run.
2. Peer agreement at one explicit threshold (k_- = 0): ours (``one_run_fdp_epsilon`` on the
   counts of the top-k guesses) against ``CanaryScoreAuditor.epsilon_one_run_fdp`` with
   ``Explicit`` threshold, through its public API when importable (``SEMI_CORE_PEER_SITE``, as in
   ``bench_audit``); otherwise against the peer values recorded in
   ``tests/audit/test_one_run_fdp.py`` (computed once from the peer's algorithm).
"""

from __future__ import annotations

import numpy as np

from benchmarks._timing import best_of
from benchmarks.bench_audit import _jax_auditing
from semi_core.audit import epsilon_lower_bound
from semi_core.audit.one_run import one_run_counts
from semi_core.audit.one_run_fdp import one_run_fdp_epsilon

DELTA, XI = 1e-5, 0.05
METHODS = (("one-run", {}), ("one-run-fdp gdp", {"tradeoff": "gdp"}),
           ("one-run-fdp eps-delta", {"tradeoff": "eps-delta"}))
#: (m, n_guess, n_correct, significance, delta) -> jax_privacy eps (tests/audit/test_one_run_fdp.py)
RECORDED_PEER = (((1000, 100, 90, 0.05, 1e-5), 2.456405), ((1000, 500, 400, 0.05, 1e-5), 2.076807),
                 ((100, 100, 100, 0.05, 1e-5), 8.216186), ((5000, 1000, 900, 0.01, 1e-6), 2.891148),
                 ((1000, 50, 50, 0.05, 1e-5), 4.061915))


def timings(sizes, mu=2.0, seed=0):
    rows = []
    print(f"\none-run methods: time per audit (best of 3), Gaussian mechanism mu = {mu}, "
          f"delta = {DELTA}, xi = {XI}")
    print("| m | method | eps_LB | seconds | ratio to one-run |")
    print("|---|---|---|---|---|")
    for m in sizes:
        rng = np.random.default_rng(seed + m)
        s = rng.random(m) < 0.5
        x = mu * s + rng.standard_normal(m)
        base = None
        for name, kw in METHODS:
            method = "one-run" if name == "one-run" else "one-run-fdp"

            def run(method=method, kw=kw, mem=x[s], non=x[~s]):
                return epsilon_lower_bound(mem, non, delta=DELTA, failure_prob=XI,
                                           method=method, **kw).epsilon_lower_bound

            eps = run()
            t = best_of(run, repeat=3)
            base = t if base is None else base
            print(f"| {m} | {name} | {eps:.4f} | {t:.4f} | {t / base:.2f} |")
            rows.append({"table": "one_run_timing", "m": m, "method": name, "eps": eps,
                         "seconds": t, "ratio": t / base})
    return rows


def peer_agreement():
    au = _jax_auditing()
    rows = []
    if au is None:
        print("\none-run-fdp vs jax_privacy: not importable here; recorded peer values")
        print("| m | r | v | xi | delta | ours | jax (recorded) | difference |")
        print("|---|---|---|---|---|---|---|---|")
        for (m, r, v, xi, delta), peer in RECORDED_PEER:
            ours = one_run_fdp_epsilon(m, r, v, delta=delta, failure_prob=xi, tradeoff="gdp")
            print(f"| {m} | {r} | {v} | {xi} | {delta:g} | {ours:.6f} | {peer:.6f} | "
                  f"{ours - peer:+.1e} |")
            rows.append({"table": "one_run_fdp_peer", "m": m, "r": r, "v": v, "ours": ours,
                         "jax": peer, "source": "recorded"})
        return rows
    print("\none-run-fdp at one explicit threshold (k_- = 0), ours vs jax_privacy public API")
    print("| m | r | v | ours | jax | difference |")
    print("|---|---|---|---|---|---|")
    rng = np.random.default_rng(11)
    for m, mu, frac in ((1000, 2.0, 0.1), (1000, 4.0, 0.05), (10_000, 2.0, 0.02),
                        (10_000, 1.0, 0.1)):
        s = rng.random(m) < 0.5
        score = mu * s + rng.normal(0.0, 1.0, m)
        k = int(frac * m)
        r, v, _ = one_run_counts(score[s], score[~s], k, 0)
        srt = np.sort(score)
        th = float(0.5 * (srt[m - k - 1] + srt[m - k]))  # the same k guesses either way
        ours = one_run_fdp_epsilon(m, r, v, delta=DELTA, failure_prob=XI, tradeoff="gdp")
        theirs = au.CanaryScoreAuditor(score[s], score[~s]).epsilon_one_run_fdp(
            XI, DELTA, threshold_strategy=au.Explicit(th))
        print(f"| {m} | {r} | {v} | {ours:.6f} | {theirs:.6f} | {ours - theirs:+.1e} |")
        rows.append({"table": "one_run_fdp_peer", "m": m, "r": r, "v": v, "ours": ours,
                     "jax": theirs, "source": "jax_privacy"})
    return rows


def main(quick: bool = False):
    """Print both tables; ``quick`` times m = 1000 only."""
    rows = timings((1000,) if quick else (1000, 10_000))
    rows += peer_agreement()
    return rows


if __name__ == "__main__":
    main()

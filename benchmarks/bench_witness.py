"""The OGA witness of the sequential DP audit: exact (Numba vs NumPy twin) and RFF, speed and power.

1. Speed, one run of N = 5,000 pairs (d = 1), same inputs, same run; the reference is the
   vectorised NumPy loop (the exact witness's twin: one vector pass over the past pairs per
   step). The RFF witness (``witness="rff"``, :mod:`semi_core.audit.sequential.rff`) at D = 8,
   16 and 32 (the squared RFF kernel, O(N D^2)): its ratio is against the same reference, and its
   agreement with the exact witness is the correlation of the witness values v_t.
   Times are CPU seconds of this process (best of 3).
2. One complete Alg. 1 audit of N = 5,000 pairs (witness + betting), exact vs RFF.
3. Power on the seed's Tables 1-2 (Alg. 1 and 2): rejection rate and mean stopping time of the
   exact and the RFF witness on the same streams (same seeds), with binomial / mean SEs.
"""

from __future__ import annotations

import time

import numpy as np


def best_of(fn, repeat: int = 3) -> float:
    """Best CPU time (``time.process_time``) of ``repeat`` calls: on a loaded machine the
    process's own CPU time is what the code costs (all of it is single-threaded)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.process_time()
        fn()
        best = min(best, time.process_time() - t0)
    return best


def _speed(N: int, rows: list[dict]) -> None:
    from semi_core.audit.sequential.rff import rff_witness_values
    from semi_core.kernels.witness import witness_values

    rng = np.random.default_rng(0)
    X, Y = rng.normal(0, 1, N), rng.normal(0.3, 1, N)
    witness_values(X[:10], Y[:10], 1.0, backend="numba")  # compile (cached) outside the timing
    rff_witness_values(X[:10], Y[:10], 1.0, features=8, backend="numba")
    print(f"\n## OGA witness, one run of N = {N:,} pairs (d = 1); reference: the NumPy loop")
    print(f"{'impl':<26} {'seconds':>9} {'x numpy loop':>13} {'corr(v, exact)':>15}")
    t_np = best_of(lambda: witness_values(X, Y, 1.0, backend="numpy"), repeat=3)
    v_ex, _ = witness_values(X, Y, 1.0, backend="numba")
    cases = [("exact, numpy loop", lambda: witness_values(X, Y, 1.0, backend="numpy")),
             ("exact, numba kernel", lambda: witness_values(X, Y, 1.0, backend="numba"))]
    for D in (8, 16, 32):
        for be in ("numba", "numpy"):
            cases.append((f"rff D={D}, {be}", lambda D=D, be=be: rff_witness_values(
                X, Y, 1.0, features=D, seed=1, backend=be)))
    for name, fn in cases:
        t = t_np if name == "exact, numpy loop" else best_of(fn, repeat=3)
        v = fn()[0]
        corr = float(np.corrcoef(v[10:], v_ex[10:])[0, 1])
        rows.append({"impl": name, "seconds": t, "x_numpy_loop": t_np / t, "corr": corr})
        print(f"{name:<26} {t:>9.4f} {t_np / t:>13.2f} {corr:>15.4f}")


def _audit(N: int, rows: list[dict]) -> None:
    from semi_core.audit.sequential import sampler_source, sequential_test

    src = lambda: sampler_source(lambda n, r: r.normal(0, 1, (n, 1)),  # noqa: E731
                                 lambda n, r: r.normal(0, 1, (n, 1)))
    print(f"\n## One full Alg. 1 audit, N = {N:,} pairs (H0: runs to the end)")
    print(f"{'witness':<26} {'seconds':>9} {'x exact':>13}")
    t_ex = best_of(lambda: sequential_test(src(), epsilon=0.5, delta=0.0, max_obs=N, seed=1),
                   repeat=3)
    rows.append({"impl": "full audit, exact", "seconds": t_ex, "x_exact": 1.0})
    print(f"{'exact':<26} {t_ex:>9.4f} {1.0:>13.2f}")
    for D in (16, 32):
        t = best_of(lambda D=D: sequential_test(src(), epsilon=0.5, delta=0.0, max_obs=N, seed=1,
                                                witness="rff", features=D), repeat=3)
        rows.append({"impl": f"full audit, rff D={D}", "seconds": t, "x_exact": t_ex / t})
        print(f"{f'rff D={D}':<26} {t:>9.4f} {t_ex / t:>13.2f}")


def _power(quick: bool, rows: list[dict]) -> None:
    from semi_core.audit.sequential.experiments import MECH_ORDER, mechanism_table

    runs = 5 if quick else 20
    mechs = ("nondp-gaussian-1", "nondp-laplace-1") if quick else MECH_ORDER
    eps = (0.01,) if quick else (0.01, 0.1)
    algs = (1,) if quick else (1, 2)
    configs = [("exact", 16), ("rff", 16), ("rff", 32)]
    print(f"\n## Power on Tables 1-2: {runs} runs per cell, same streams for every witness")
    print(f"{'alg':>3} {'mechanism':<18} {'eps':>5} " + " ".join(
        f"{(w if w == 'exact' else f'rff{D}') + ' rate':>11} {'stop':>12}" for w, D in configs)
        + f" {'CPU s exact/rff16':>19}")
    for alg in algs:
        res = {}
        for w, D in configs:
            # one call per cell, so that each cell's CPU time is measured (the seeds depend on
            # the cell's position only through these arguments: the same for every witness)
            rows_w, cpu = [], []
            for mech in mechs:
                for e in eps:
                    t0 = time.process_time()
                    rows_w += mechanism_table(algorithm=alg, epsilons=(e,), runs=runs, seed=0,
                                              mechanisms=(mech,), witness=w,
                                              features=D)["rows"]
                    cpu.append(time.process_time() - t0)
            res[(w, D)] = ({"rows": rows_w}, cpu)
        for i, row0 in enumerate(res[("exact", 16)][0]["rows"]):
            cells = []
            line = f"{alg:>3} {row0['mechanism']:<18} {row0['epsilon']:>5}"
            for w, D in configs:
                r = res[(w, D)][0]["rows"][i]
                stop = ("-" if r["mean_stop"] is None
                        else f"{r['mean_stop']:.0f}+-{r['mean_stop_se']:.0f}")
                line += f" {r['rejection_rate']:>6.2f}+-{r['rejection_rate_se']:.2f} {stop:>12}"
                cells.append({"witness": w, "features": D if w == "rff" else None,
                              "rate": r["rejection_rate"], "rate_se": r["rejection_rate_se"],
                              "mean_stop": r["mean_stop"], "mean_stop_se": r["mean_stop_se"],
                              "cpu_seconds": res[(w, D)][1][i]})
            te, tr = res[("exact", 16)][1][i], res[("rff", 16)][1][i]
            print(line + f" {te:>9.2f}/{tr:<9.2f}")
            rows.append({"impl": "power", "algorithm": alg, "mechanism": row0["mechanism"],
                         "epsilon": row0["epsilon"], "cells": cells})


def main(quick: bool = False) -> list[dict]:
    rows: list[dict] = []
    N = 1000 if quick else 5000
    _speed(N, rows)
    _audit(N, rows)
    _power(quick, rows)
    return rows


if __name__ == "__main__":
    import sys

    main(quick="--quick" in sys.argv)

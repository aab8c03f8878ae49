"""OGA witness of the sequential DP audit: Numba kernel vs NumPy twin vs a plain Python loop.

One run of N = 5,000 pairs (the witness is O(N^2) over a run), same inputs, same run; ratios
are against the plain Python loop. Also the time of one complete Alg. 1 audit of N = 5,000
pairs (witness + ONS betting), which is what a user waits for.
"""

from __future__ import annotations

import time

import numpy as np

from benchmarks._timing import best_of


def main(quick: bool = False) -> list[dict]:
    from semi_core.audit.sequential import sampler_source, sequential_test
    from semi_core.kernels.witness import witness_values

    rng = np.random.default_rng(0)
    N = 1000 if quick else 5000
    X, Y = rng.normal(0, 1, N), rng.normal(0.3, 1, N)
    witness_values(X[:10], Y[:10], 1.0, backend="numba")  # compile (cached) outside the timing
    rows = []
    print(f"\n## OGA witness, one run of N = {N:,} pairs (d = 1)")
    print(f"{'impl':<18} {'seconds':>10} {'x python loop':>14}")
    t0 = time.perf_counter()
    witness_values(X, Y, 1.0, backend="python")  # reference: timed once (slow)
    t_py = time.perf_counter() - t0
    for name, backend in (("numba kernel", "numba"), ("numpy twin", "numpy")):
        t = best_of(lambda b=backend: witness_values(X, Y, 1.0, backend=b), repeat=3)
        rows.append({"impl": name, "seconds": t, "speedup": t_py / t})
        print(f"{name:<18} {t:>10.3f} {t_py / t:>14.1f}")
    rows.append({"impl": "python loop", "seconds": t_py, "speedup": 1.0})
    print(f"{'python loop':<18} {t_py:>10.3f} {1.0:>14.1f}")
    src = lambda: sampler_source(lambda n, r: r.normal(0, 1, (n, 1)),  # noqa: E731
                                 lambda n, r: r.normal(0, 1, (n, 1)))
    t = best_of(lambda: sequential_test(src(), epsilon=0.5, delta=0.0, max_obs=N, seed=1),
                repeat=3)
    rows.append({"impl": "full Alg. 1 audit (numba)", "seconds": t, "speedup": t_py / t})
    print(f"{'full Alg. 1 audit':<18} {t:>10.3f} {t_py / t:>14.1f}")
    return rows


if __name__ == "__main__":
    main()

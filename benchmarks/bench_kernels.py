"""Quadratic-form kernels: Cython (1 and 2 threads) vs the NumPy twin, same inputs, same run.

Prints rows/s and the ratio to the NumPy twin (the reference measured in the same run).
"""

from __future__ import annotations

from functools import partial

import numpy as np

from benchmarks._timing import best_of


def main(quick: bool = False) -> list[dict]:
    from semi_core import kernels
    from semi_core.kernels import _twins

    rng = np.random.default_rng(0)
    rows = []
    m = 50_000 if quick else 400_000
    print(f"\n## quadratic-form kernel (rows = {m:,}); backend = {kernels.BACKEND}")
    print(f"{'d':>4} {'impl':<22} {'rows/s':>12} {'x twin':>8}")
    for d in (1, 5, 50):
        M = rng.standard_normal((d, d))
        L = np.linalg.cholesky(M @ M.T + d * np.eye(d))
        b = rng.standard_normal(d)
        N = rng.standard_normal((m // max(1, d // 5), d))
        args = (N, L, b, 0.1, -0.5)
        impls = {
            "numpy twin": partial(_twins.quadform_cholsolve, *args),
            "cython 1 thread": partial(kernels.quadform_cholsolve, *args, num_threads=1),
            "cython 2 threads": partial(kernels.quadform_cholsolve, *args, num_threads=2),
        }
        ref = None
        for name, fn in impls.items():
            t = best_of(fn)
            rate = N.shape[0] / t
            ref = ref or rate
            rows.append({"d": d, "impl": name, "rows_per_s": rate, "ratio": rate / ref})
            print(f"{d:>4} {name:<22} {rate:>12.3e} {rate / ref:>8.2f}")
    return rows


if __name__ == "__main__":
    main()

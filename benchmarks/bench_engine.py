"""SeMI Monte Carlo engine vs the RNG floor and a per-round NumPy reference (same run).

Setting: T = 10, n = 10, stationary N(0, I_d), z* at Mahalanobis distance 3, tau uniform,
d in {1, 50}. Rates are per core (one thread). "variates" counts the data variates of exact
mode, R * T * n * d (the engine additionally draws 3 control uniforms per round).

(a) RNG floor: ``Generator.standard_normal`` (PCG64 ziggurat) filling a buffer.
(b) per-round reference: :func:`semi_core.game.engine.reference_per_round`.
(c) engine, exact mode; (d) engine, sufficient mode (Gaussian batch means, n x fewer draws).
"""

from __future__ import annotations

import numpy as np

from benchmarks._timing import best_of


def _one_blas_thread():
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - optional
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(1)


def main(quick: bool = False) -> list[dict]:
    from semi_core._params import SEED_FIG2
    from semi_core.game.engine import reference_per_round, simulate
    from semi_core.mechanisms.empirical_mean import EmpiricalMean

    T, n = SEED_FIG2.T, SEED_FIG2.n
    rows = []
    print("\n## SeMI engine (T = 10, n = 10, one thread; ratios measured in this run)")
    hdr = (f"{'d':>3} {'impl':<26} {'rounds/s':>11} {'variates/s':>11} {'x RNG floor':>11} "
           f"{'x per-round ref':>15}")
    print(hdr)
    for d in (1, 50):
        mech = EmpiricalMean.isotropic(n, T, distance=SEED_FIG2.distance, d=d)
        per_round = T * n * d
        R = (20_000 if quick else 200_000) // d if d > 1 else (50_000 if quick else 400_000)
        R_ref = (200 if quick else 1000) // (1 if d == 1 else 5)
        buf = np.empty(min(R * per_round, 2_000_000))
        rng = np.random.default_rng(0)
        reps = max(1, (R * per_round) // buf.size)

        def floor(buf=buf, rng=rng, reps=reps):
            for _ in range(reps):
                rng.standard_normal(out=buf)

        simulate(mech, 100, 0)  # JIT / cache load outside the timing
        t_floor = best_of(floor, 5) / (reps * buf.size)  # seconds per variate
        with _one_blas_thread():  # per-core comparison; also avoids BLAS thread spin-up
            t_ref = best_of(lambda m=mech, r=R_ref: reference_per_round(m, r, 1, tau="uniform"),
                          3) / R_ref
        t_ex = best_of(lambda m=mech, r=R: simulate(m, r, 2, tau="uniform", mode="exact"), 5) / R
        t_su = best_of(lambda m=mech, r=R: simulate(m, r, 3, tau="uniform", mode="sufficient"),
                     3) / R
        floor_rate = 1.0 / t_floor
        impls = [
            ("(a) numpy standard_normal", None, floor_rate),
            ("(b) per-round reference", 1.0 / t_ref, per_round / t_ref),
            ("(c) engine exact", 1.0 / t_ex, per_round / t_ex),
            ("(d) engine sufficient", 1.0 / t_su, per_round / t_su),
        ]
        for name, rps, vps in impls:
            row = {"d": d, "impl": name, "rounds_per_s": rps, "variates_per_s": vps,
                   "x_floor": vps / floor_rate,
                   "x_reference": (rps * t_ref) if rps is not None else None}
            rows.append(row)
            rps_s = f"{rps:11.3e}" if rps is not None else f"{'-':>11}"
            ref_s = f"{row['x_reference']:15.1f}" if rps is not None else f"{'-':>15}"
            print(f"{d:>3} {name:<26} {rps_s} {vps:11.3e} {row['x_floor']:11.2f} {ref_s}")
    return rows


if __name__ == "__main__":
    main()

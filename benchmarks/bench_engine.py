"""SeMI Monte Carlo engine vs the RNG floor, a per-round NumPy reference and itself (same run).

Setting: T = 10, n = 10, stationary N(0, I_d), z* at Mahalanobis distance 3, tau uniform,
d in {1, 50}. Rates are per core (one thread, CPU time). "variates" counts the data variates of
exact mode, R * T * n * d (the engine additionally draws 3 control uniforms per round).

(a) NumPy floor: ``Generator.standard_normal`` (PCG64 ziggurat) filling a buffer.
(a') Numba floor: a compiled loop summing ``Generator.standard_normal()`` one variate at a
     time, as the engine's exact mode draws them (issue 24 goal: exact mode <= 1.5x its time
     per variate at every d).
(b) per-round reference: :func:`semi_core.game.engine.reference_per_round`.
(c) engine, exact mode; (d) engine, sufficient mode (Gaussian batch means, n x fewer draws;
    goal: >= 5x cheaper per round than exact mode at n = 10), both through ``simulate``; the
    same ratio for the chunk kernel alone (one call, buffers reused) shows what the per-chunk
    set-up and the assembly add.

Then ``semi-core simulate`` end to end in process (engine, threshold sort and AUC, JSON) with
``--threads 1`` and ``--threads 2`` (wall clock; goal: 2 threads >= 1.7x), with the serial part
(everything but the chunk tasks and the per-test summaries, which both run on the threads; CPU
time of a 1-thread run) and the speed-up it allows (Amdahl): on a loaded machine the
wall-clock speed-up is noise, the Amdahl bound is not.
"""

from __future__ import annotations

import contextlib
import io
import time

import numpy as np

from benchmarks._timing import best_of


def _one_blas_thread():
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - optional
        return contextlib.nullcontext()
    return threadpool_limits(1)


def _numba_floor():
    import numba

    @numba.njit(nogil=True)
    def normal_sum(gen, count):  # the floor: one ziggurat variate at a time, summed
        a = 0.0
        for _ in range(count):
            a += gen.standard_normal()
        return a

    return normal_sum


def _kernel_only(mech, rounds: int, mode: str) -> float:
    """CPU seconds per round of the compiled chunk kernel alone (one call, buffers reused)."""
    from semi_core.game.engine import build_params
    from semi_core.kernels.engine_kernels import semi_chunk

    setup = build_params(mech, mode=mode, tau="uniform").kernel_setup()
    member = np.empty(rounds, dtype=np.bool_)
    tau = np.empty(rounds, dtype=np.int64)
    stats = np.empty((4, rounds))

    def run():
        semi_chunk(np.random.Generator(np.random.PCG64(4)), rounds, setup, member, tau, stats)

    run()
    return best_of(run, 5, time.process_time) / rounds


def _kernels(quick: bool) -> list[dict]:
    from semi_core._params import SEED_FIG2
    from semi_core.game.engine import reference_per_round, simulate
    from semi_core.mechanisms.empirical_mean import EmpiricalMean

    cpu = time.process_time
    T, n = SEED_FIG2.T, SEED_FIG2.n
    normal_sum = _numba_floor()
    rows = []
    print("\n## SeMI engine (T = 10, n = 10, one thread, CPU time; ratios measured in this run)")
    print(f"{'d':>3} {'impl':<26} {'rounds/s':>11} {'variates/s':>11} {'t/var / numba floor':>20} "
          f"{'x per-round ref':>15}")
    for d in (1, 50):
        mech = EmpiricalMean.isotropic(n, T, distance=SEED_FIG2.distance, d=d)
        per_round = T * n * d
        R = (20_000 if quick else 200_000) // d if d > 1 else (50_000 if quick else 400_000)
        R_ref = (200 if quick else 1000) // (1 if d == 1 else 5)
        buf = np.empty(min(R * per_round, 2_000_000))
        rng = np.random.default_rng(0)
        reps = max(1, (R * per_round) // buf.size)

        def np_floor(buf=buf, rng=rng, reps=reps):
            for _ in range(reps):
                rng.standard_normal(out=buf)

        count = R * per_round
        normal_sum(rng, 10)  # compile outside the timing
        simulate(mech, 100, 0)  # JIT / cache load outside the timing
        t_np = best_of(np_floor, 5, cpu) / (reps * buf.size)  # seconds per variate
        t_nb = best_of(lambda c=count, g=rng: normal_sum(g, c), 5, cpu) / count
        with _one_blas_thread():  # per-core comparison; also avoids BLAS thread spin-up
            t_ref = best_of(lambda m=mech, r=R_ref: reference_per_round(m, r, 1, tau="uniform"),
                            3, cpu) / R_ref
        t_ex = best_of(lambda m=mech, r=R: simulate(m, r, 2, tau="uniform", mode="exact"), 5,
                       cpu) / R
        t_su = best_of(lambda m=mech, r=R: simulate(m, r, 3, tau="uniform", mode="sufficient"),
                       5, cpu) / R
        impls = [
            ("(a) numpy standard_normal", None, 1.0 / t_np),
            ("(a') numba ziggurat loop", None, 1.0 / t_nb),
            ("(b) per-round reference", 1.0 / t_ref, per_round / t_ref),
            ("(c) engine exact", 1.0 / t_ex, per_round / t_ex),
            ("(d) engine sufficient", 1.0 / t_su, per_round / t_su),
        ]
        for name, rps, vps in impls:
            row = {"d": d, "impl": name, "rounds_per_s": rps, "variates_per_s": vps,
                   "time_per_variate_vs_numba_floor": (1.0 / vps) / t_nb,
                   "x_reference": (rps * t_ref) if rps is not None else None}
            rows.append(row)
            rps_s = f"{rps:11.3e}" if rps is not None else f"{'-':>11}"
            ref_s = f"{row['x_reference']:15.1f}" if rps is not None else f"{'-':>15}"
            print(f"{d:>3} {name:<26} {rps_s} {vps:11.3e} "
                  f"{row['time_per_variate_vs_numba_floor']:20.2f} {ref_s}")
        ratio = t_ex / t_su
        # the kernel alone (one call over the R rounds, output buffers reused): what the
        # per-chunk set-up (seeding, Generator, dispatch) and the assembly add to (c) and (d)
        k_ex, k_su = (_kernel_only(mech, R, m) for m in ("exact", "sufficient"))
        rows.append({"d": d, "impl": "exact / sufficient per round", "ratio": ratio,
                     "kernel_ratio": k_ex / k_su, "kernel_ns": (1e9 * k_ex, 1e9 * k_su),
                     "simulate_ns": (1e9 * t_ex, 1e9 * t_su)})
        print(f"{d:>3} exact mode / sufficient mode, time per round: {ratio:.2f} (goal >= 5); "
              f"kernel alone {1e9 * k_ex:.0f} / {1e9 * k_su:.0f} ns = {k_ex / k_su:.2f}")
    return rows


def _cli_threads(quick: bool) -> list[dict]:
    from semi_core.audit import roc
    from semi_core.cli import main as cli_main
    from semi_core.game import engine

    rounds = 100_000 if quick else 1_000_000
    argv = ["simulate", "--n", "10", "--T", "10", "--mu", "0", "--sigma", "1", "--target", "3",
            "--rounds", str(rounds), "--seed", "0", "--json"]

    def run(threads: str) -> None:
        with contextlib.redirect_stdout(io.StringIO()):
            cli_main([*argv, "--threads", threads])

    # the parallel share of a 1-thread run: the chunk tasks (kernel, finiteness check) and the
    # per-test summaries (sorts, binary searches; run on the same threads); the rest is serial
    # (set-up, assembly, JSON)
    par_s = [0.0]

    def timed(fn):
        def wrapped(*a, **k):  # CPU time: robust to other load on the machine
            t0 = time.process_time()
            out = fn(*a, **k)
            par_s[0] += time.process_time() - t0
            return out
        return wrapped

    with contextlib.redirect_stdout(io.StringIO()):
        cli_main([*argv[:-4], "1000", "--seed", "0", "--json"])  # imports, JIT cache
    t1 = best_of(lambda: run("1"), 3)
    saved = engine._chunk_task, roc._summary_one
    engine._chunk_task, roc._summary_one = timed(saved[0]), timed(saved[1])
    try:
        t0 = time.process_time()
        run("1")
        total = time.process_time() - t0
    finally:
        engine._chunk_task, roc._summary_one = saved
    serial = max(total - par_s[0], 0.0) / total
    t2 = best_of(lambda: run("2"), 3)
    amdahl = 1.0 / (serial + (1.0 - serial) / 2.0)
    print(f"\n## semi-core simulate end to end (--rounds {rounds}, d = 1, exact; wall clock)")
    print(f"1 thread {t1:.3f} s, 2 threads {t2:.3f} s: speed-up {t1 / t2:.2f} (goal >= 1.7); "
          f"serial part {100 * serial:.1f} % of the 1-thread CPU time ({total:.3f} s), allows "
          f"{amdahl:.2f}")
    return [{"impl": "semi-core simulate", "rounds": rounds, "t1": t1, "t2": t2,
             "speedup_2_threads": t1 / t2, "serial_fraction": serial, "amdahl_2": amdahl,
             "cpu_1_thread": total}]


def main(quick: bool = False) -> list[dict]:
    return _kernels(quick) + _cli_threads(quick)


if __name__ == "__main__":
    main()

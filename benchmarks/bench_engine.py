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
    same ratio for the chunk kernel alone (one call, buffers reused, the two modes alternated)
    shows what the per-chunk set-up and the assembly add; sufficient mode's draws alone (3
    uniforms and T d normals a round, a compiled loop) bound that ratio from above.

Then ``semi-core simulate`` end to end in process (engine, threshold sort and AUC, JSON) with
``--threads 1`` and ``--threads 2`` (wall clock; goal: 2 threads >= 1.7x), with the serial part
(everything but the chunk tasks and the per-test summaries, which both run on the threads; CPU
time of a 1-thread run) and the speed-up it allows (Amdahl): on a loaded machine the
wall-clock speed-up is noise, the Amdahl bound is not.

Last, ``simulate`` on a 2-worker Dask ``LocalCluster`` against in-process, at a small and a
large size, each in a fresh process, CPU of all processes (workers included): the default (a
pilot of the first chunks decides whether the cluster pays for its start) and the cluster
forced (``small_jobs="cluster"``, what every Dask run did before).
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


def _sufficient_draws_floor():
    import numba

    @numba.njit(nogil=True)
    def draws(gen, rounds, T):  # sufficient mode's draws alone: 3 uniforms and T normals a round
        a = 0.0
        for _ in range(rounds):
            a += gen.random() + gen.random() + gen.random()
            for _ in range(T):
                a += gen.standard_normal()
        return a

    return draws


def _kernel_pair(mech, rounds: int, pairs: int = 9) -> tuple[float, float, float]:
    """CPU seconds per round of the compiled chunk kernel alone (one call, buffers reused) in
    exact and in sufficient mode, the two alternated so that a change of the machine's load hits
    both alike: (best exact, best sufficient, median of the paired ratios exact / sufficient)."""
    from semi_core.game.engine import build_params
    from semi_core.kernels.engine_kernels import semi_chunk

    member = np.empty(rounds, dtype=np.bool_)
    tau = np.empty(rounds, dtype=np.int64)
    stats = np.empty((4, rounds))
    runs = {}
    for mode in ("exact", "sufficient"):
        setup = build_params(mech, mode=mode, tau="uniform").kernel_setup()

        def run(setup=setup):
            t0 = time.process_time()
            semi_chunk(np.random.Generator(np.random.PCG64(4)), rounds, setup, member, tau, stats)
            return (time.process_time() - t0) / rounds

        run()
        runs[mode] = run
    got = [(runs["exact"](), runs["sufficient"]()) for _ in range(pairs)]
    return (min(g[0] for g in got), min(g[1] for g in got),
            float(np.median([g[0] / g[1] for g in got])))


def _kernels(quick: bool) -> list[dict]:
    from semi_core._params import SEED_FIG2
    from semi_core.game.engine import reference_per_round, simulate
    from semi_core.mechanisms.empirical_mean import EmpiricalMean

    cpu = time.process_time
    T, n = SEED_FIG2.T, SEED_FIG2.n
    normal_sum = _numba_floor()
    draws = _sufficient_draws_floor()
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
        draws(rng, 10, T)
        simulate(mech, 100, 0, kernel="numba")  # JIT / cache load outside the timing
        t_np = best_of(np_floor, 5, cpu) / (reps * buf.size)  # seconds per variate
        t_nb = best_of(lambda c=count, g=rng: normal_sum(g, c), 5, cpu) / count
        with _one_blas_thread():  # per-core comparison; also avoids BLAS thread spin-up
            t_ref = best_of(lambda m=mech, r=R_ref: reference_per_round(m, r, 1, tau="uniform"),
                            3, cpu) / R_ref
        # exact and sufficient mode through simulate, alternated (a change of the machine's
        # load hits both alike): best of each, and the median of the paired ratios
        def sim(mode, seed, m=mech, r=R):
            t0 = cpu()
            simulate(m, r, seed, tau="uniform", mode=mode, kernel="numba")
            return (cpu() - t0) / r

        sim("sufficient", 3)  # the sufficient kernel's cache load outside the timing
        sims = [(sim("exact", 2), sim("sufficient", 3)) for _ in range(3 if quick else 7)]
        t_ex, t_su = min(g[0] for g in sims), min(g[1] for g in sims)
        sim_med = float(np.median([g[0] / g[1] for g in sims]))
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
        # the kernel alone (one call over the R rounds, output buffers reused, the two modes
        # alternated): what the per-chunk set-up (seeding, Generator, dispatch) and the assembly
        # add to (c) and (d); and sufficient mode's draws alone (3 uniforms, T normals a
        # round), which bound the ratio: exact kernel / draws is the most it can reach
        k_ex, k_su, k_med = _kernel_pair(mech, R)
        t_dr = best_of(lambda c=R, g=rng, k=T * d: draws(g, c, k), 5, cpu) / R
        rows.append({"d": d, "impl": "exact / sufficient per round", "ratio": ratio,
                     "ratio_median_paired": sim_med,
                     "kernel_ratio": k_ex / k_su, "kernel_ratio_median_paired": k_med,
                     "kernel_ns": (1e9 * k_ex, 1e9 * k_su), "simulate_ns": (1e9 * t_ex, 1e9 * t_su),
                     "sufficient_draws_ns": 1e9 * t_dr, "ratio_ceiling": k_ex / t_dr})
        print(f"{d:>3} exact mode / sufficient mode, time per round: {ratio:.2f} (best of "
              f"each; median of paired ratios {sim_med:.2f}; goal >= 5); "
              f"kernel alone {1e9 * k_ex:.0f} / {1e9 * k_su:.0f} ns = {k_ex / k_su:.2f} "
              f"(median of paired ratios {k_med:.2f}); sufficient mode's draws alone "
              f"{1e9 * t_dr:.0f} ns: ceiling {k_ex / t_dr:.2f}")
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

    def wall(threads: str) -> float:
        t0 = time.perf_counter()
        run(threads)
        return time.perf_counter() - t0

    with contextlib.redirect_stdout(io.StringIO()):
        cli_main([*argv[:-4], "1000", "--seed", "0", "--json"])  # imports, JIT cache
    # 1- and 2-thread runs alternated, so that a change of the machine's load hits both alike;
    # the speed-up is the median of the paired ratios (the best-of ratio is also printed)
    pairs = [(wall("1"), wall("2")) for _ in range(3 if quick else 8)]
    t1, t2 = min(p[0] for p in pairs), min(p[1] for p in pairs)
    paired = float(np.median([a / b for a, b in pairs]))
    # the chunk tasks: written into the result arrays on local threads (_IntoTask), returned
    # and copied on Dask (_chunk_task)
    saved = engine._chunk_task, roc._summary_one, engine._IntoTask.__call__
    engine._chunk_task, roc._summary_one = timed(saved[0]), timed(saved[1])
    engine._IntoTask.__call__ = timed(saved[2])
    try:
        t0 = time.process_time()
        run("1")
        total = time.process_time() - t0
    finally:
        engine._chunk_task, roc._summary_one = saved[:2]
        engine._IntoTask.__call__ = saved[2]
    serial = max(total - par_s[0], 0.0) / total
    amdahl = 1.0 / (serial + (1.0 - serial) / 2.0)
    print(f"\n## semi-core simulate end to end (--rounds {rounds}, d = 1, exact; wall clock)")
    print(f"1 thread {t1:.3f} s, 2 threads {t2:.3f} s (best of {len(pairs)} alternated runs): "
          f"speed-up {paired:.2f} (median of paired ratios; best-of ratio {t1 / t2:.2f}; "
          f"goal >= 1.7); serial part {100 * serial:.1f} % of the 1-thread CPU time "
          f"({total:.3f} s), allows {amdahl:.2f}")
    return [{"impl": "semi-core simulate", "rounds": rounds, "t1": t1, "t2": t2,
             "speedup_2_threads": paired, "speedup_best_of": t1 / t2, "serial_fraction": serial,
             "amdahl_2": amdahl, "cpu_1_thread": total}]


_CLUSTER_JOB = r"""
import sys
from semi_core.game.backends import Executor
from semi_core.game.engine import simulate
from semi_core.mechanisms.empirical_mean import EmpiricalMean

if __name__ == "__main__":
    mode, rounds, d, chunk = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4])
    ex = {"in-process": None, "workers=2": Executor(workers=2),
          "workers=2 always": Executor(workers=2, small_jobs="cluster")}[mode]
    mech = EmpiricalMean.isotropic(10, 10, distance=3.0, d=d)
    r = simulate(mech, rounds, 1, chunk_size=chunk, tau="uniform", executor=ex)
    print(r.backend, r.info.get("tasks_per_dask_task"))
"""


def _all_cpu(argv: list[str]) -> tuple[float, float, str]:
    """(CPU seconds of the process and every process it started and reaped -- Dask's nannies
    and workers --, wall seconds, stdout) of one fresh ``python`` run."""
    import os
    import subprocess
    import sys

    t0 = time.perf_counter()
    proc = subprocess.Popen([sys.executable, *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL, text=True)
    out = proc.stdout.read()
    _, status, ru = os.wait4(proc.pid, 0)
    if os.waitstatus_to_exitcode(status) != 0:
        raise RuntimeError(f"{argv} failed")
    return ru.ru_utime + ru.ru_stime, time.perf_counter() - t0, out.strip()


def _cluster(quick: bool) -> list[dict]:
    """``simulate`` in-process vs a 2-worker Dask LocalCluster (fresh process each; CPU of all
    processes, workers included): the default (a pilot decides) and the cluster forced (what
    every Dask run did before), at a small and a large size."""
    import tempfile

    path = tempfile.mkdtemp(prefix="bench_cluster_") + "/job.py"
    with open(path, "w") as fh:
        fh.write(_CLUSTER_JOB)
    sizes = [("small", 10_000, 1, 2000, 5), ("large", 200_000 if quick else 1_200_000, 50,
                                             16384, 1)]
    rows = []
    print("\n## simulate on a 2-worker Dask LocalCluster vs in-process (fresh process each; "
          "CPU of all processes)")
    print(f"{'size':<6} {'rounds':>9} {'executor':<18} {'CPU s':>8} {'wall s':>8} "
          f"{'CPU x in-proc':>13} {'wall x in-proc':>14}  ran on")
    modes = ("in-process", "workers=2", "workers=2 always")
    for label, rounds, d, chunk, rep in sizes:
        base = None
        # the modes interleaved, median of rep: load on the machine hits each alike
        got: dict = {m: [] for m in modes}
        for _ in range(rep):
            for mode in modes:
                got[mode].append(_all_cpu([path, mode, str(rounds), str(d), str(chunk)]))
        for mode in modes:
            runs = got[mode]
            cpu = sorted(r[0] for r in runs)[len(runs) // 2]
            wall = sorted(r[1] for r in runs)[len(runs) // 2]
            base = base or (cpu, wall)
            row = {"size": label, "rounds": rounds, "d": d, "executor": mode, "cpu_s": cpu,
                   "wall_s": wall, "cpu_x_in_process": cpu / base[0],
                   "wall_x_in_process": wall / base[1], "ran_on": runs[-1][2]}
            rows.append(row)
            print(f"{label:<6} {rounds:>9} {mode:<18} {cpu:>8.2f} {wall:>8.2f} "
                  f"{row['cpu_x_in_process']:>13.2f} {row['wall_x_in_process']:>14.2f}  "
                  f"{row['ran_on']}")
    print("goal: the default never above 1.2x the in-process CPU when small; below 1x wall "
          "when large")
    return rows


def main(quick: bool = False) -> list[dict]:
    return _kernels(quick) + _cli_threads(quick) + _cluster(quick)


if __name__ == "__main__":
    main()

"""The seed's Figure 2 sweep at R = 50,000 games per point, with wall-clock timing.

Seed: ``semi_sequential_mi`` §3.3, Fig. 2 (and App. H.1): n = 10, N(0, 1) data, target at
Mahalanobis distance 3; (a) power (TPR at 1 % FPR) vs the number of updates T with
tau = min(5, T); (b) power vs the target's Mahalanobis distance at T = 5 (tau = 3). Grids are the
shared ones in :mod:`semi_core._params`. Every point plays R games with the compiled engine
(:func:`semi_core.game.engine.simulate`, exact mode: every datum simulated); SeMI-Unif uses the
uniform prior over 1..T as in the seed's figure. Closed forms (SeMI*, Final Observation,
SeMI-max; :mod:`semi_core.stats.errors`) are drawn as lines.

Usage::

    python analysis/fig2_power.py [--rounds 50000] [--mode exact|sufficient] [--threads 1]
                                  [--out analysis/out] [--seed 0] [--reference]

``--reference`` also times the vectorised NumPy reference game (``play``) on the same sweep.
"""

from __future__ import annotations

import argparse
import json
import time
from pathlib import Path

import numpy as np

from semi_core._names import SEMI_TESTS, test_label
from semi_core._params import FIG2_DISTANCE_GRID, FIG2_T_GRID, SEED_FIG2, SEED_ROUNDS
from semi_core.audit.roc import tpr_at_fpr_se
from semi_core.game.engine import simulate
from semi_core.mechanisms.empirical_mean import EmpiricalMean
from semi_core.stats import errors

TESTS = SEMI_TESTS
LABELS = {t: test_label(t) for t in TESTS}
FPR = 0.01


def sweep_points():
    """``[(panel, x, mech, tau)]`` of the two panels."""
    pts = [("T", T, EmpiricalMean.isotropic(SEED_FIG2.n, T, distance=SEED_FIG2.distance),
            min(5, T)) for T in FIG2_T_GRID]
    pts += [("distance", m, EmpiricalMean.isotropic(SEED_FIG2.n, 5, distance=m), 3)
            for m in FIG2_DISTANCE_GRID]
    return pts


def run(rounds: int = SEED_ROUNDS, seed: int = 0, mode: str = "exact", threads: int = 1,
        reference: bool = False) -> dict:
    """Play the sweep; returns per-point TPRs (MC and closed form) and the wall times."""
    pts = sweep_points()
    # the compiled engine for every point (a sweep pays Numba's start-up once; the size rule of
    # engine.choose_kernel is for one job per process): compile / load the cache, not timed
    simulate(pts[0][2], 10, 0, tau=pts[0][3], mode=mode, kernel="numba")
    rows = []
    t0 = time.perf_counter()
    for i, (panel, x, mech, tau) in enumerate(pts):
        res = simulate(mech, rounds, seed * 1000 + i, tau=tau, mode=mode, executor=threads,
                       kernel="numba")
        row = {"panel": panel, "x": x, "T": mech.T, "tau": tau}
        for test in TESTS:
            mc = tpr_at_fpr_se(*res.scores(test), FPR)
            row[test] = {"mc": float(mc["tpr"][0]), "se": float(mc["se"][0])}
        rows.append(row)
    wall = time.perf_counter() - t0
    for row, (_p, _x, mech, tau) in zip(rows, pts):  # closed forms, not part of the timing
        for test in ("semi-star", "semi-max", "final"):
            row[test]["closed_form"] = float(errors.tpr_at_fpr(mech, FPR, test, tau=tau))
    out = {"rounds": rounds, "mode": mode, "threads": threads, "points": len(pts),
           "engine_seconds": wall, "rows": rows}
    if reference:
        from semi_core.game.play import play

        t0 = time.perf_counter()
        for i, (_p, _x, mech, tau) in enumerate(pts):
            play(mech, rounds, seed * 1000 + i, tau=tau, unif_pmf=np.full(mech.T, 1 / mech.T))
        out["reference_seconds"] = time.perf_counter() - t0
    return out


def plot(result: dict, path: Path) -> None:
    """Two panels like the seed's Fig. 2: MC markers (2 s.e. bars) and closed-form lines."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
    for ax, panel, xlabel in ((axes[0], "T", "number of updates T"),
                              (axes[1], "distance", "Mahalanobis distance of z*")):
        rows = [r for r in result["rows"] if r["panel"] == panel]
        xs = [r["x"] for r in rows]
        for k, test in enumerate(TESTS):
            c = f"C{k}"
            if "closed_form" in rows[0][test]:
                ax.plot(xs, [r[test]["closed_form"] for r in rows], "-", color=c)
            ax.errorbar(xs, [r[test]["mc"] for r in rows], yerr=[2 * r[test]["se"] for r in rows],
                        fmt="o", ms=4, capsize=2, color=c, label=LABELS[test])
        ax.set_xlabel(xlabel)
        ax.set_ylabel(f"TPR at {FPR:.0%} FPR")
        ax.grid(alpha=0.3)
    axes[0].set_title("(a) power vs T (n=10, distance 3, tau=min(5,T))")
    axes[1].set_title("(b) power vs distance (n=10, T=5, tau=3)")
    axes[1].legend(fontsize=8)
    fig.suptitle(f"Seed Fig. 2 sweep, R = {result['rounds']:,} per point, engine "
                 f"{result['mode']} mode: {result['engine_seconds']:.1f} s", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> dict:
    """Command-line entry point: run, print a table, write JSON and PNG."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=SEED_ROUNDS)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--mode", choices=("exact", "sufficient"), default="exact")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent / "out")
    ap.add_argument("--reference", action="store_true")
    args = ap.parse_args(argv)
    res = run(args.rounds, args.seed, args.mode, args.threads, args.reference)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "fig2_power.json").write_text(json.dumps(res, indent=2))
    plot(res, args.out / "fig2_power.png")
    print(f"{'panel':<9} {'x':>5} " + " ".join(f"{LABELS[t]:>22}" for t in TESTS))
    for r in res["rows"]:
        cells = []
        for t in TESTS:
            c = r[t]
            cf = f" [{c['closed_form']:.3f}]" if "closed_form" in c else ""
            cells.append(f"{c['mc']:.3f}±{c['se']:.3f}{cf}".rjust(22))
        print(f"{r['panel']:<9} {r['x']:>5} " + " ".join(cells))
    msg = (f"Fig. 2 sweep: {res['points']} points x R = {res['rounds']:,} "
           f"({res['mode']} mode, {res['threads']} thread): {res['engine_seconds']:.2f} s")
    if "reference_seconds" in res:
        msg += f"; NumPy reference play: {res['reference_seconds']:.2f} s"
    print(msg)
    return res


if __name__ == "__main__":
    main()

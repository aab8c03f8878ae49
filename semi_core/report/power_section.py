"""Report section: the seed's Figure 2 analogues (power vs T, power vs Mahalanobis distance).

Closed forms (SeMI*, Final Observation, SeMI-max) are drawn as lines and checked by the SeMI game
(markers with 2-SE bars); SeMI-Unif has no closed form and is Monte Carlo only.
"""

from __future__ import annotations

from semi_core._names import test_label
from semi_core._params import FIG2_DISTANCE_GRID, FIG2_T_GRID, SEED_FIG2, SEED_ROUNDS
from semi_core.audit.roc import tpr_at_fpr_se
from semi_core.game.play import play
from semi_core.mechanisms.empirical_mean import EmpiricalMean
from semi_core.report import ReportContext, Section
from semi_core.stats import errors as E
from semi_core.stats.statistics import TEST_NAMES

#: Position of this section in the report (smaller first).
ORDER = 10

LABELS = {t: test_label(t) for t in TEST_NAMES}
FPR = 0.01


def _point(mech, tau: int, rounds: int, seed: int) -> dict:
    res = play(mech, rounds, seed=seed, tau=tau)
    out = {}
    for test in TEST_NAMES:
        mc = tpr_at_fpr_se(*res.scores(test), [FPR])
        closed = (float(E.tpr_at_fpr(mech, FPR, test, tau=tau)) if test in E.CLOSED_FORM_TESTS
                  else None)
        out[test] = {"closed_form": closed, "mc": float(mc["tpr"][0]), "mc_se": float(mc["se"][0])}
    return out


def _plot(ax, xs, rows, xlabel):
    for k, test in enumerate(TEST_NAMES):
        color = f"C{k}"
        closed = [r[test]["closed_form"] for r in rows]
        if closed[0] is not None:
            ax.plot(xs, closed, "-", color=color, label=f"{LABELS[test]} (closed form)")
        ax.errorbar(xs, [r[test]["mc"] for r in rows], yerr=[2 * r[test]["mc_se"] for r in rows],
                    fmt="o" if closed[0] is not None else "s--", color=color, ms=4, capsize=2,
                    label=f"{LABELS[test]} (Monte Carlo)")
    ax.set_xlabel(xlabel)
    ax.set_ylabel(f"TPR at {FPR:.0%} FPR")
    ax.grid(alpha=0.3)


def build(ctx: ReportContext) -> Section:
    """Power vs T (tau = min(5, T)) and power vs distance (T = 5, tau = 3); n = 10, N(0, 1).

    Parameters
    ----------
    ctx : ReportContext
        Output directory, quick or full mode, seed and progress hook.

    Returns
    -------
    Section
        The section's Markdown, figure names and JSON data.
    """
    from semi_core.report import _plots as P

    rounds = 20_000 if ctx.quick else SEED_ROUNDS
    n = SEED_FIG2.n
    rows_T = []
    for i, T in enumerate(FIG2_T_GRID):
        ctx.progress(f"power vs T: T={T}")
        mech = EmpiricalMean.isotropic(n, T, distance=SEED_FIG2.distance)
        rows_T.append(_point(mech, min(5, T), rounds, ctx.seed * 1000 + i))
    rows_m = []
    for i, dist in enumerate(FIG2_DISTANCE_GRID):
        ctx.progress(f"power vs distance: {dist}")
        mech = EmpiricalMean.isotropic(n, 5, distance=dist)
        rows_m.append(_point(mech, 3, rounds, ctx.seed * 1000 + 500 + i))

    with P.style() as plt:
        from matplotlib.ticker import MaxNLocator

        fig, axes = plt.subplots(1, 2, figsize=(11, 4.2))
        _plot(axes[0], FIG2_T_GRID, rows_T, "number of updates T")
        axes[0].xaxis.set_major_locator(MaxNLocator(integer=True))  # T is an integer
        axes[0].set_title(f"(a) power vs T (n={n}, distance {SEED_FIG2.distance:g})")
        _plot(axes[1], FIG2_DISTANCE_GRID, rows_m, "Mahalanobis distance of z*")
        axes[1].set_title(f"(b) power vs distance (n={n}, T=5)")
        axes[1].legend(fontsize=7, loc="upper left")
        fig.tight_layout()
        P.save(fig, ctx.out_dir / "fig2_power.png")

    def table(xs, rows, head):
        lines = [f"| {head} | " + " | ".join(LABELS[t] for t in TEST_NAMES) + " |",
                 "|---" * (len(TEST_NAMES) + 1) + "|"]
        for x, r in zip(xs, rows):
            cells = []
            for t in TEST_NAMES:
                c = r[t]
                mc = f"{c['mc']:.4f} ± {c['mc_se']:.4f}"
                cells.append(mc if c["closed_form"] is None else f"{c['closed_form']:.4f} ({mc})")
            lines.append(f"| {x} | " + " | ".join(cells) + " |")
        return "\n".join(lines)

    md = f"""
Gaussian empirical mean, N(0, 1) data, batch size n = {n}; power = TPR at {FPR:.0%} FPR.
Cells: closed form (Monte Carlo estimate ± 1 SE, R = {rounds:,} games per point{' — quick mode' if ctx.quick else ''}).
SeMI-Unif has no closed form: Monte Carlo only. SeMI* keeps its power as T grows (isolation);
Final Observation and SeMI-max lose power with T.

**(a) power vs T** (target at distance {SEED_FIG2.distance:g}, tau = min(5, T))

{table(FIG2_T_GRID, rows_T, "T")}

**(b) power vs Mahalanobis distance** (T = 5, tau = 3)

{table(FIG2_DISTANCE_GRID, rows_m, "distance")}
"""
    return Section(
        title="Sequential advantage: power of SeMI tests (seed Fig. 2)",
        markdown=md,
        figures=["fig2_power.png"],
        data={"rounds": rounds, "fpr": FPR,
              "power_vs_T": {str(T): r for T, r in zip(FIG2_T_GRID, rows_T)},
              "power_vs_distance": {str(m): r for m, r in zip(FIG2_DISTANCE_GRID, rows_m)}},
    )

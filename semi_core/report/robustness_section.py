"""Report section: robustness of the Gaussian LR tests to non-Gaussian data.

For each data family with the same mean and covariance as the Gaussian model (Laplace,
Student-t(5), Bernoulli(0.3), centred exponential; :mod:`semi_core.mechanisms.distributions`),
the compiled engine (exact mode: every datum simulated) measures the TPR at 1 % FPR of the
*Gaussian* log-LR statistics of the seed (Thm 3.1 SeMI*, Final Observation), which are then
misspecified, and compares it with the Gaussian-theory prediction of
:mod:`semi_core.stats.errors` (ncx2 closed forms). The Gaussian row is the control.
"""

from __future__ import annotations

import numpy as np

from semi_core._names import test_label
from semi_core._params import SEED_FIG2
from semi_core.audit.roc import tpr_at_fpr_se
from semi_core.game.engine import simulate
from semi_core.mechanisms.empirical_mean import EmpiricalMean
from semi_core.report import ReportContext, Section
from semi_core.stats import errors

#: Position of this section in the report (smaller first).
ORDER = 20

FAMILIES = ("gaussian", "laplace", "student-t:5", "bernoulli:0.3", "exponential")
TESTS = ("semi-star", "final")
LABELS = {t: test_label(t) for t in TESTS}
FPR = 0.01
#: The seed's §3.3 setting (:data:`semi_core._params.SEED_FIG2`).
N, T, TAU, DIST = SEED_FIG2.n, SEED_FIG2.T, SEED_FIG2.tau, SEED_FIG2.distance


def robustness_table(rounds: int, seed: int = 0, progress=lambda msg: None) -> dict:
    """Measured (engine) vs Gaussian-theory TPR at 1 % FPR for every family and test.

    Parameters
    ----------
    rounds : int
        Games per family.
    seed : int
        Root seed.
    progress : callable
        ``progress(message)``.

    Returns
    -------
    dict
        Measured and theoretical TPR per family and test.
    """
    mech = EmpiricalMean.isotropic(N, T, distance=DIST)
    theory = {t: float(errors.tpr_at_fpr(mech, FPR, t, tau=TAU)) for t in TESTS}
    rows = {}
    for i, fam in enumerate(FAMILIES):
        progress(f"robustness: {fam}")
        res = simulate(mech, rounds, seed * 100 + i, data=fam, tau=TAU, mode="exact", kernel="numba")
        rows[fam] = {}
        for t in TESTS:
            mc = tpr_at_fpr_se(*res.scores(t), FPR)
            tpr, se = float(mc["tpr"][0]), float(mc["se"][0])
            rows[fam][t] = {"measured": tpr, "se": se, "theory": theory[t],
                            "z": (tpr - theory[t]) / se if se > 0 else float("nan"),
                            "fpr_achieved": float(mc["fpr_achieved"][0])}
    return {"rounds": rounds, "fpr": FPR, "n": N, "T": T, "tau": TAU, "distance": DIST,
            "rows": rows}


def build(ctx: ReportContext) -> Section:
    """Robustness table and a bar chart (measured vs Gaussian theory).

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

    rounds = 40_000 if ctx.quick else 400_000
    data = robustness_table(rounds, ctx.seed, ctx.progress)
    rows = data["rows"]
    lines = ["| data | " + " | ".join(f"{LABELS[t]} measured | {LABELS[t]} theory | z | "
                                      f"FPR attained" for t in TESTS) + " |",
             "|---" * (1 + 4 * len(TESTS)) + "|"]
    for fam, r in rows.items():
        cells = []
        for t in TESTS:
            c = r[t]
            cells += [f"{c['measured']:.4f} ± {c['se']:.4f}", f"{c['theory']:.4f}",
                      f"{c['z']:+.1f}", f"{c['fpr_achieved']:.4f}"]
        lines.append(f"| {fam} | " + " | ".join(cells) + " |")

    with P.style() as plt:
        fig, axes = plt.subplots(1, len(TESTS), figsize=(10, 3.6))
        x = np.arange(len(FAMILIES))
        for ax, t in zip(axes, TESTS):
            meas = [rows[f][t]["measured"] for f in FAMILIES]
            err = [2 * rows[f][t]["se"] for f in FAMILIES]
            ax.bar(x, meas, yerr=err, color="C0", capsize=3, label="measured (2 s.e.)")
            ax.axhline(rows[FAMILIES[0]][t]["theory"], color="C3", ls="--", label="Gaussian theory")
            ax.set_xticks(x, FAMILIES, rotation=20, fontsize=8)
            ax.set_ylabel(f"TPR at {FPR:.0%} FPR")
            ax.set_title(f"{LABELS[t]} (Gaussian LR)")
            ax.grid(alpha=0.3, axis="y")
        axes[0].legend(fontsize=8)
        fig.tight_layout()
        P.save(fig, ctx.out_dir / "robustness.png")

    md = f"""
How robust is the Gaussian likelihood ratio when the data are not Gaussian? Each family has the
model's mean and variance (n = {N}, T = {T}, tau = {TAU}, target at distance {DIST:g}, d = 1;
x = mu + sigma e with e standardised), so the Gaussian LR statistics are misspecified but
computable. Measured: engine in exact mode (every datum simulated), R = {rounds:,} games per
family{' (quick mode)' if ctx.quick else ''}, empirical threshold at {FPR:.0%} FPR;
± = Monte Carlo s.e. including the threshold's noise; z = (measured - theory) / s.e.
Theory: Gaussian closed form (ncx2). Bernoulli data make the statistic discrete: the empirical
threshold then attains an FPR below 1 % (ties count as non-members).

{chr(10).join(lines)}
"""
    return Section(title="Robustness of the Gaussian LR to non-Gaussian data",
                   markdown=md, figures=["robustness.png"], data=data)

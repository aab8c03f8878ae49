"""Report section: verdicts of the seed papers' claims, with the errata page.

Runs every registered check (:func:`semi_core.claims.verify`), writes ``errata.md`` (the same
content as ``docs/errata.md``) and ``claims_verdicts.png`` into the report directory, and
summarises the verdict counts per seed with links to both.
"""

from __future__ import annotations

from semi_core.claims import errata_markdown, summary, verify
from semi_core.report import ReportContext, Section

#: Position of this section in the report (smaller first).
ORDER = 900

ERRATA_NAME = "errata.md"
FIGURE_NAME = "claims_verdicts.png"


def _figure(summ: dict, path) -> None:
    """Stacked bars of the verdicts per seed, counts written in the segments, the legend below
    the axes (never over the bars)."""
    from semi_core.report import _plots as P

    seeds = list(summ["per_seed"])
    kinds = [("holds", "tab:green", "holds"), ("holds_only_under", "tab:orange",
                                                 "holds only under a condition"),
             ("fails", "tab:red", "fails")]
    with P.style() as plt:
        fig, ax = plt.subplots(figsize=(7.5, 0.9 + 0.42 * len(seeds)))
        left = [0] * len(seeds)
        for key, colour, lab in kinds:
            vals = [summ["per_seed"][s][key] for s in seeds]
            bars = ax.barh(seeds, vals, left=left, color=colour, label=lab, height=0.65)
            ax.bar_label(bars, labels=[str(v) if v else "" for v in vals], label_type="center",
                         fontsize=7.5, color="white", fontweight="bold")
            left = [a + b for a, b in zip(left, vals, strict=True)]
        for y, tot in enumerate(left):
            ax.text(tot + 0.3, y, str(tot), va="center", fontsize=7.5, color="0.3")
        ax.set_xlim(0, max(left) * 1.08 + 1)
        ax.invert_yaxis()
        ax.grid(axis="y", visible=False)
        ax.set_xlabel("registered claims (number; total at the right)")
        ax.set_title(f"Verdicts of the seed papers' claims: {summ['holds']} hold, "
                     f"{summ['holds_only_under']} hold only under a condition, "
                     f"{summ['fails']} fail")
        fig.tight_layout()
        P.figure_legend(fig, ax, ncol=3)
        P.save(fig, path)


def build(ctx: ReportContext) -> Section:
    """Check every claim (quick Monte Carlo sizes in quick mode) and summarise the verdicts.

    Parameters
    ----------
    ctx : ReportContext
        Output directory, quick or full mode, seed and progress hook.

    Returns
    -------
    Section
        The section's Markdown, figure names and JSON data.
    """

    results = verify(quick=ctx.quick, rng_seed=ctx.seed, progress=ctx.progress)
    summ = summary(results)
    (ctx.out_dir / ERRATA_NAME).write_text(errata_markdown(results))
    _figure(summ, ctx.out_dir / FIGURE_NAME)
    lines = [
        f"{summ['total']} formula-bearing statements of the seed papers are registered in "
        "`semi_core/claims/` and decided by checks that can fail (symbolic equivalence, "
        "independent numerics, Monte Carlo within 4 standard errors). "
        f"**{summ['holds']} hold, {summ['fails']} fail, {summ['holds_only_under']} hold only "
        f"under an extra condition.** Details and corrected forms: [errata]({ERRATA_NAME}).",
        "",
        "| seed | registered | holds | fails | holds only under |",
        "|---|---|---|---|---|",
    ]
    for seed, c in summ["per_seed"].items():
        lines.append(f"| {seed} | {c['registered']} | {c['holds']} | {c['fails']} | "
                     f"{c['holds_only_under']} |")
    lines += ["", "Failures:"]
    lines += [f"- `{r.id}` ({r.source})" for r in results if r.verdict == "fails"]
    lines += ["", "Hold only under a condition:"]
    lines += [f"- `{r.id}`: {r.verdict}" for r in results if r.verdict.startswith("holds only")]
    data = {"summary": summ, "errata": ERRATA_NAME,
            "verdicts": {r.id: r.verdict for r in results}}
    return Section(title="Claims of the seed papers", markdown="\n".join(lines),
                   figures=[FIGURE_NAME], data=data)

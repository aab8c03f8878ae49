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
    # lazy: matplotlib is a heavy import, loaded only when this runs
    import matplotlib

    matplotlib.use("Agg")
    # lazy: matplotlib is a heavy import, loaded only when this runs
    import matplotlib.pyplot as plt

    seeds = list(summ["per_seed"])
    kinds = [("holds", "tab:green"), ("holds_only_under", "tab:orange"), ("fails", "tab:red")]
    fig, ax = plt.subplots(figsize=(7, 3))
    left = [0] * len(seeds)
    for key, colour in kinds:
        vals = [summ["per_seed"][s][key] for s in seeds]
        ax.barh(seeds, vals, left=left, color=colour, label=key.replace("_", " "))
        left = [a + b for a, b in zip(left, vals, strict=True)]
    ax.set_xlabel("registered claims")
    ax.legend(loc="lower right", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def build(ctx: ReportContext) -> Section:
    """Check every claim (quick Monte Carlo sizes in quick mode) and summarise the verdicts."""

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

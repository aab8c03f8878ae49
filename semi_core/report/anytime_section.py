"""Report section: audit while you train (the anytime-valid one-run audit).

:class:`semi_core.audit.AnytimeOneRun` grades canaries as their scores arrive and refutes a
claimed epsilon the moment the evidence allows, with a lower bound valid at every time at once.
The four tables: validity (runs exactly at the claim), the price of anytime validity (vs the
fixed-time one-run bound on the same canaries), stopping times (false claims) and the DP-SGD bug
zoo (:func:`semi_core.integrations.anytime.bug_zoo_stopping`: when the audit stops a run that
forgot clipping, divided the noise by the batch size or misreported its sample rate).
"""

from __future__ import annotations

from semi_core.report import ReportContext, Section

#: Position in the report: after the one-run audit section (45).
ORDER = 46


def build(ctx: ReportContext) -> Section:
    """The four tables (quick: 100 runs of 500 canaries per cell, 5 DP-SGD runs per loop;
    full: 1000 of 1000, 10 DP-SGD runs per loop of 20 steps).

    Parameters
    ----------
    ctx : ReportContext

    Returns
    -------
    Section
    """
    from semi_core.audit.anytime_one_run import (
        markdown_table,
        price_table,
        stopping_table,
        validity_table,
    )

    runs, m = (100, 500) if ctx.quick else (1000, 1000)
    ctx.progress("anytime one-run: validity")
    val = validity_table(runs=runs, n_canaries=m, seed=ctx.seed)
    ctx.progress("anytime one-run: price of anytime validity")
    price = price_table(runs=runs, n_canaries=m, seed=ctx.seed)
    ctx.progress("anytime one-run: stopping times")
    stop = stopping_table(runs=runs, n_canaries=m, seed=ctx.seed)
    from semi_core.integrations.anytime import BUG_ZOO_SCALE, bug_zoo_stopping

    zoo_runs, zoo_steps = (5, 10) if ctx.quick else (10, 20)
    q_true, q_decl = 0.5, 0.01
    ctx.progress("anytime one-run: DP-SGD bug zoo")
    zoo = bug_zoo_stopping(runs=zoo_runs, steps=zoo_steps, seed=ctx.seed, q_true=q_true,
                           q_declared=q_decl)
    zoo_runs, zoo_steps, zoo_m = zoo[0]["runs"], zoo[0]["steps"], zoo[0]["m"]
    bad = [r for r in val if not r["ok"]]
    md = f"""
Canaries of ONE run, each included with probability 1/2, graded in an order fixed in advance as
their scores arrive; the guess of a canary is a function of the scores only (quantiles of the
earlier canaries' scores: top and bottom 10 % guessed). **Why it is valid at every time:**
conditionally on the whole transcript Y and the earlier bits, a canary's bit is "in" with
probability at most e^eps/(1+e^eps) = q under eps-DP (the later bits are averaged out with the
same weights on both sides); with delta > 0 the excess over q has expectation at most
delta/(1+e^eps) (hockey-stick divergence). The uniform mixture over r in [q, 1] of the
likelihood ratios of the graded guesses is then a test supermartingale (delta = 0), and with
delta the stopped wealth obeys P[ever >= 1/a] <= a + m delta e^-eps, so the test runs at
a = xi - m delta e^-eps. The epsilon grid is read as a fixed sequence (each point counts only
after its predecessors), so the bound exceeds the truth only if the smallest true grid point is
ever rejected: one test, no union over the grid or over time. Proof:
`semi_core/audit/anytime_one_run.py`; SymPy: `semi_core/symbolic/anytime_one_run.py`.

**Validity** ({runs} runs of {m} canaries per cell, failure probability 0.05; the refutation
of the true claim is the stronger event; 95 % Clopper-Pearson interval). Cells whose interval
lies above 0.05: {len(bad)}.

{markdown_table(val)}

**Price of anytime validity**: the final anytime bound against the fixed-time one-run bound
(Steinke, Nasr & Jagielski 2023, Thm 5.2) on the same canaries and guesses, as if the end of
the run had been fixed in advance.

{markdown_table(price)}

**Stopping time** of a false claim, in canaries graded (runs never refuting count as m + 1),
against the end-of-run one-run audit, which reads all m canaries.

{markdown_table(stop)}

**The DP-SGD bug zoo** ({zoo_runs} runs per loop, one training run each, {zoo_m} canaries in
{zoo_steps} steps, a plain-torch loop through `OneRunLoop`): the fraction of runs the anytime
audit refutes, its median stopping step and canary (over the refuted runs), against the
end-of-run one-run audit of the same scores, which can only answer after step {zoo_steps}
(canary {zoo_m}). Dirac loops: white-box Dirac canaries scored right after their own step,
the claim the loop's epsilon; `clipping off` (the canary's gradient of norm {BUG_ZOO_SCALE:g} C passes
unclipped) and `noise / batch size` (noise sd sigma C / n). Sampler loops: input canaries, each
alone on its own feature column, go through the loop's Poisson sampler at rate {q_true:g}; a group
fixed in advance is scored after each step by its loss decrease since initialisation; the
claim is the accountant's epsilon at the declared rate ({q_true:g} for `correct (sampler)`, {q_decl:g} for
`sample rate misreported`: the same training, a smaller claim).

{markdown_table(zoo)}
"""
    return Section(title="Audit while you train (anytime-valid one-run audit)", markdown=md,
                   data={"runs": runs, "m": m, "validity": val, "price": price,
                         "stopping": stop, "bug_zoo": zoo})

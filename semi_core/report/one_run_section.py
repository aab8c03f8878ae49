"""Report section: tight audits in ONE training run (one-run and one-run f-DP audits).

eps_LB / eps_true of one DP-SGD run with m canaries each included with probability 1/2
(:func:`semi_core.sgd.one_run.tightness_table`: white-box Dirac canaries at chosen steps scored by
the per-step log-LR at their step, black-box input canaries scored by the final model's loss;
certified by ``one-run`` and ``one-run-fdp``), beside R = m runs of today's white-box audit and
the oracle ceiling of a one-run f-DP audit of m Gaussian scores
(:func:`semi_core.audit.one_run_fdp.gaussian_ceiling`), with the costs.
"""

from __future__ import annotations

from semi_core.report import ReportContext, Section

#: Position of this section in the report (smaller first): after the DP-SGD audit.
ORDER = 45

#: Published / peer reference values: jax_privacy's tests (tests/auditing_test.py,
#: ``test_epsilon_one_run_close``): 10^4 in and 10^4 out canaries with deterministic N(mu, 1) /
#: N(0, 1) quantile scores, significance 0.05, delta = 1e-6, ``epsilon_one_run_fdp``.
PEER = ((1.0, 2.164749), (2.0, 4.7218075), (4.0, 9.133752))


def build(ctx: ReportContext) -> Section:
    """The tightness table (quick: m in {100, 1000}, 2 repetitions; full: m up to 5000, 3).

    Parameters
    ----------
    ctx : ReportContext
        Output directory, quick or full mode, seed and progress hook.

    Returns
    -------
    Section
        The section's Markdown, figure names and JSON data.
    """
    import torch  # lazy: heavy optional dependency

    from semi_core.audit.one_run_fdp import gaussian_ceiling
    from semi_core.sgd.one_run import format_tightness, tightness_table
    from semi_core.stats.gdp import gdp_epsilon

    torch.set_num_threads(1)
    epsilons = (1.0, 2.0, 4.0, 8.0)
    ms = (100, 1000) if ctx.quick else (100, 1000, 5000)
    reps = 2 if ctx.quick else 3
    delta = 1e-5
    rows = tightness_table(epsilons, ms, delta=delta, reps=reps, seed=ctx.seed,
                           progress=ctx.progress)
    for r in rows:
        r["ceiling"] = gaussian_ceiling(r["mu"], r["m"], delta=delta,
                                        n_k=24 if ctx.quick else 60)["epsilon"] / r["eps"]
    ceil = ["| eps | mu | " + " | ".join(f"m = {m}" for m in ms) + " |",
            "|---|---|" + "---|" * len(ms)]
    for eps in epsilons:
        sel = [r for r in rows if r["eps"] == eps]
        ceil.append(f"| {eps:g} | {sel[0]['mu']:.3f} | "
                    + " | ".join(f"{r['ceiling']:.3f}" for r in sel) + " |")
    peer = ["| mu | eps_true(1e-6) | jax_privacy eps_LB | ratio |", "|---|---|---|---|"]
    for mu, e in PEER:
        et = gdp_epsilon(mu, 1e-6)
        peer.append(f"| {mu:g} | {et:.3f} | {e:.3f} | {e / et:.3f} |")
    md = f"""
ONE DP-SGD training run with m canaries, each included independently with probability 1/2
(`semi_core.sgd.one_run`; synthetic linear softmax, T = 3 steps, fixed disjoint batches, so the
run is exactly (2/sigma_DP)-GDP and sigma_DP is calibrated to eps(delta = {delta:g}) = eps).
**WB**: white-box, m Dirac gradient canaries on isolated coordinates inserted at steps spread over
the run, each scored by the optimal per-step log-LR at its own step (SeMI's known-step setting);
"step unknown": the same run read by the Final Observation score (sum over the steps).
**BB**: black-box, m input canaries on all-zero features, scored by the final model's loss.
**R=m runs**: today's audit, m training runs with one Dirac canary each (gdp: Gaussian-fit
bound; band: distribution-free). Median of {reps} repetitions of eps_LB / eps_true at 95 %.
Seconds: the one run (training + scoring); the R runs of the small-batch game (measured); and
R trainings of the one-run model (estimated as R x the one run's training time).

{format_tightness(rows)}

**What one run can give.** The oracle ceiling of `one-run-fdp (gdp)` for m Gaussian scores of
the run's mu (best guess count chosen knowing the expected precision, no Bonferroni, no
sampling noise; `gaussian_ceiling`), as eps_LB / eps_true:

{chr(10).join(ceil)}

Peer reference (jax_privacy's own test values: 10^4 + 10^4 canaries, deterministic Gaussian
quantile scores, delta = 1e-6):

{chr(10).join(peer)}

The goal eps_LB / eps >= 0.7 at eps = 4 in one run of m = 1000 canaries is above this ceiling
(0.57 at m = 1000; 0.67 at 5000, 0.69 at 10^4, 0.76 at 10^5): even a guess count chosen with
knowledge of the expected precision and no multiple-testing correction does not reach it. The
real procedure (pre-registered guess counts, Bonferroni) on 300 simulated ideal runs of m = 1000
exactly mu-GDP canaries at eps = 4: median 0.46, 90 % quantile 0.57, eps_LB >= 0.7 eps in 1 of
300 runs. jax_privacy's implementation of the same bound gives 0.43-0.44 of eps_true with
2 x 10^4 ideal Gaussian canaries (table above). Black-box canaries see one clipped gradient (not
the antipodal pair) through the noise of all T steps, and certify far less.
"""
    return Section(title="Auditing in one training run", markdown=md,
                   data={"rows": rows, "delta": delta, "reps": reps,
                         "peer_jax_privacy": [{"mu": mu, "eps_lb": e} for mu, e in PEER]})

"""Report section: auditing the noisy empirical mean with SeMI tests (audit-game table).

Measures the SeMI seed's claim (§5) that sequential access gives tighter audits: certified
eps_LB of SeMI*, SeMI-max and Final Observation next to the exact epsilon(delta) of the
clipped, noisy running-mean mechanism (:mod:`semi_core.mechanisms.noisy_mean`), at three noise
levels, plus the soundness of the three bound methods on mu-GDP scores.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from semi_core.report import ReportContext, Section

# The report's games, bounds and report machinery are imported where they are used:
# ``semi-core audit-game`` imports this module for :func:`format_table` only.

#: Position of this section in the report (smaller first).
ORDER = 30

__all__ = ["build", "format_table", "soundness_table", "one_run_soundness",
           "one_run_soundness_table"]


def format_table(rows) -> str:
    """Markdown table: noise, mu, eps_true (tau), eps_LB per test.

    Parameters
    ----------
    rows : list of AuditReport
        :func:`~semi_core.audit.games.noisy_mean_audit_table`'s rows.

    Returns
    -------
    str
    """
    tests = rows[0].tests
    head = ("| noise s | mu_1 | mu_tau | eps true | eps true (tau) | "
            + " | ".join(f"eps_LB {t}" for t in tests) + " | max certifiable |")
    sep = "|" + "---|" * (6 + len(tests))
    lines = [head, sep]
    for r in rows:
        cells = [f"{r['noise']:.4g}", f"{r['mu']:.3f}", f"{r['mu_tau']:.3f}",
                 f"{r['epsilon_true']:.3f}", f"{r['epsilon_true_tau']:.3f}"]
        cells += [f"{r.epsilon_lower_bound(t):.3f}" for t in tests]
        cells.append(f"{r.epsilon_max_certifiable(tests[0]):.3f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


#: Score families of the soundness table: name -> (alternative, null, truth at delta, GDP?).
#: Randomised response (eps0 = 1) is pure eps-DP but *not* mu-GDP: it violates the assumption of
#: ``gdp`` and the Gaussian fit, and its row stays in the table to show what that costs.
SOUNDNESS_FAMILIES = ("gaussian (mu-GDP, mu = 1)", "randomised response (eps0 = 1, not GDP)")
SOUNDNESS_METHODS = (("band", "band", {}), ("joint", "joint", {}), ("dkw", "dkw", {}),
                     ("cp (split)", "cp", {}),
                     ("gdp (trade-off)", "gdp", {}),
                     ("gdp (gaussian)", "gdp", {"gdp_fit": "gaussian"}))


def _family_scores(family: str, rng, audits: int, n: int, delta: float):
    """(member, non-member, null member, null non-member, true eps(delta), mu-GDP?)."""
    from semi_core.stats.gdp import gdp_epsilon

    if family.startswith("gaussian"):
        mu = 1.0
        m, nm = rng.normal(mu, 1.0, (audits, n)), rng.normal(0.0, 1.0, (audits, n))
        z1, z0 = rng.normal(0.0, 1.0, (audits, n)), rng.normal(0.0, 1.0, (audits, n))
        return m, nm, z1, z0, gdp_epsilon(mu, delta), True
    eps0 = 1.0
    q = np.exp(eps0) / (1.0 + np.exp(eps0))  # P[report 1 | member] = P[report 0 | non-member]
    m = (rng.random((audits, n)) < q).astype(float)
    nm = (rng.random((audits, n)) < 1.0 - q).astype(float)
    z1 = (rng.random((audits, n)) < 0.5).astype(float)
    z0 = (rng.random((audits, n)) < 0.5).astype(float)
    # privacy profile of randomised response: delta(eps) = max(0, q - e^eps (1 - q))
    truth = float(np.log((q - delta) / (1.0 - q))) if q - delta > 1.0 - q else 0.0
    return m, nm, z1, z0, truth, False


def _soundness(ctx: ReportContext, audits: int, n: int) -> dict:
    """Over-claim rate of every method on every family, assumption violations included."""
    from semi_core.audit.bounds import ASSUMPTIONS, assumption_of, audit_batch

    delta, xi = 0.1, 0.1
    rng = np.random.default_rng(np.random.SeedSequence([ctx.seed, 4242]))
    out = {}
    for family in SOUNDNESS_FAMILIES:
        m, nm, z1, z0, truth, is_gdp = _family_scores(family, rng, audits, n, delta)
        rows = {}
        for name, method, kw in SOUNDNESS_METHODS:
            ctx.progress(f"soundness {family[:12]} {name}")
            key = assumption_of(method, **kw)
            e = audit_batch(m, nm, delta=delta, failure_prob=xi, method=method, seed=ctx.seed,
                            **kw)
            e0 = audit_batch(z1, z0, delta=1e-5, failure_prob=xi, method=method,
                             seed=ctx.seed, **kw)
            holds = key.startswith("iid-games") or (key == "mu-gdp" and is_gdp) or (
                key == "gaussian-scores" and family.startswith("gaussian"))
            rows[name] = {"over_claim_rate": float(np.mean(e > truth)),
                          "median_ratio": float(np.median(e) / truth),
                          "null_zero_rate": float(np.mean(e0 == 0.0)),
                          "assumption": key, "assumption_holds": bool(holds)}
        out[family] = {"epsilon_true": truth, "methods": rows}
    return {"delta": delta, "failure_prob": xi, "audits": audits, "n_per_class": n,
            "families": out, "assumptions": {k: ASSUMPTIONS[k] for k in
                                             ("iid-games", "mu-gdp", "gaussian-scores")}}


def soundness_table(sound: dict) -> str:
    """Markdown: family x method, with the assumption and whether it holds for the family.

    Parameters
    ----------
    sound : dict
        Over-claim counts per score family and method.

    Returns
    -------
    str
        The Markdown table.
    """
    rows = ["| score family | method | assumption | holds here | over-claim rate | "
            "median eps_LB / eps | null (delta=1e-5): eps_LB = 0 |",
            "|---|---|---|---|---|---|---|"]
    for family, fam in sound["families"].items():
        for name, v in fam["methods"].items():
            rows.append(f"| {family} | {name} | {v['assumption']} | "
                        f"{'yes' if v['assumption_holds'] else '**no**'} | "
                        f"{v['over_claim_rate']:.3f} | {v['median_ratio']:.2f} | "
                        f"{v['null_zero_rate']:.3f} |")
    return "\n".join(rows)


#: One-run soundness rows: (mechanism, label, method, options, seed). The tie rows run the
#: tie-prone null at fixed seeds (the seed is also the method's ``seed``: the same in every
#: audit, as a user runs it); the trade-off rows run every one-run variant on exactly
#: eps-DP mechanisms that are not GDP (:mod:`semi_core.audit.one_run_soundness`). Quick mode
#: runs the rows of the mechanisms in :data:`ONE_RUN_QUICK` only.
ONE_RUN_ROWS = (
    ("bernoulli-null", "one-run", "one-run", {}, 129),
    ("bernoulli-null", "one-run", "one-run", {}, 7),
    ("bernoulli-null", "one-run-fdp (default: eps-delta)", "one-run-fdp", {}, 129),
    ("bernoulli-null", "one-run-fdp (gdp)", "one-run-fdp", {"tradeoff": "gdp"}, 129),
    *((mech, lab, "one-run-fdp", kw, 0)
      for mech in ("rr-1", "rr-4", "laplace-1", "geometric-2", "rr-1+u", "rr-4+u",
                   "geometric-2+u")
      for lab, kw in (("one-run-fdp (default: eps-delta)", {}),
                      ("one-run-fdp (gdp)", {"tradeoff": "gdp"}))),
    ("laplace-1", "one-run", "one-run", {}, 0),
    ("rr-1+u", "one-run", "one-run", {}, 0),
)
#: Mechanisms of the quick report's one-run rows (the untied ``+u`` variants cost the most).
ONE_RUN_QUICK = ("bernoulli-null", "rr-1", "rr-4", "laplace-1", "geometric-2")


def one_run_soundness(ctx: ReportContext, audits: int, m: int) -> dict:
    """Over-claim counts of the one-run variants (:data:`ONE_RUN_ROWS`; quick: those of
    :data:`ONE_RUN_QUICK`, one-run-fdp only), with exact 95 % intervals.

    Parameters
    ----------
    ctx : ReportContext
        Mode, seed and progress hook.
    audits : int
        Audits per variant.
    m : int
        Canaries per audit.

    Returns
    -------
    dict
        Over-claim counts, rates and intervals per mechanism and variant.
    """
    from semi_core.audit.one_run_soundness import one_run_overclaims

    delta, xi = 1e-5, 0.05
    rows = []
    for mech, label, method, kw, seed in ONE_RUN_ROWS:
        if ctx.quick and (mech not in ONE_RUN_QUICK or (method == "one-run"
                                                        and mech != "bernoulli-null")):
            continue
        ctx.progress(f"one-run soundness {mech} {label}")
        r = one_run_overclaims(mech, method, audits=audits, m=m, seed=seed, delta=delta,
                               failure_prob=xi, **kw)
        r["label"], r["seed"] = label, seed
        r["assumption_holds"] = r["assumption"] == "one-run-bernoulli-half"
        rows.append(r)
    return {"delta": delta, "failure_prob": xi, "audits": audits, "m": m, "rows": rows}


def one_run_soundness_table(sound: dict) -> str:
    """Markdown: mechanism x variant, over-claims k/n, rate, 95 % interval, above xi?

    Parameters
    ----------
    sound : dict
        The result of :func:`one_run_soundness`.

    Returns
    -------
    str
        The Markdown table.
    """
    xi = sound["failure_prob"]
    out = ["| mechanism | eps(delta) | method | seed | assumption | holds here | over-claims | "
           "rate | 95% interval | above xi beyond the interval |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for r in sound["rows"]:
        lo, hi = r["interval"]
        out.append(f"| {r['mechanism']} | {r['epsilon_true']:.3f} | {r['label']} | {r['seed']} | "
                   f"{r['assumption']} | {'yes' if r['assumption_holds'] else '**no**'} | "
                   f"{r['over_claims']}/{r['audits']} | {r['rate']:.3f} | [{lo:.3f}, {hi:.3f}] | "
                   f"{'**yes**' if r['above_xi'] else 'no'} (xi = {xi:g}) |")
    return "\n".join(out)


def build(ctx: ReportContext) -> Section:
    """Audit-game table at three noise levels (quick: 2000 games each) and soundness rates.

    Parameters
    ----------
    ctx : ReportContext
        Output directory, quick or full mode, seed and progress hook.

    Returns
    -------
    Section
        The section's Markdown, figure names and JSON data.
    """
    from semi_core.audit.games import noisy_mean_audit_table as run_table
    from semi_core.report import Section
    from semi_core.report import _plots as P

    rounds = 2000 if ctx.quick else 20_000
    rows = run_table(rounds=rounds, seed=ctx.seed, method="dkw", progress=ctx.progress)
    # same seed => same games, certified with the GDP trade-off fit (assumes mu-GDP)
    rows_gdp = run_table(rounds=rounds, seed=ctx.seed, method="gdp", progress=ctx.progress)
    sound = _soundness(ctx, audits=300 if ctx.quick else 2000, n=500)
    sound_one_run = one_run_soundness(ctx, audits=100 if ctx.quick else 400,
                                      m=200 if ctx.quick else 500)

    tests = rows[0].tests
    mus = [r["mu"] for r in rows]
    with P.style() as plt:
        fig, ax = plt.subplots(figsize=(5.5, 3.8))
        ax.plot(mus, [r["epsilon_true"] for r in rows], "k-o", label="true eps(delta)")
        for i, t in enumerate(tests):
            ax.plot(mus, [r.epsilon_lower_bound(t) for r in rows], "-s", color=f"C{i}",
                    label=f"{t} (dkw)")
            ax.plot(mus, [r.epsilon_lower_bound(t) for r in rows_gdp], "--^",
                    color=f"C{i}", label=f"{t} (gdp)")
        ax.set_xlabel("mu of the mechanism (noise s = Delta_1 / mu)")
        ax.set_ylabel("epsilon at delta = 1e-5")
        ax.set_title("Certified eps_LB (95%) vs ground truth")
        ax.legend(fontsize=8)
        fig.tight_layout()
        fname = "audit_game.png"
        P.save(fig, ctx.out_dir / fname)

    md = (
        f"Noisy running mean (n=10, T=10, tau=1, clip C=1, data N(-1, 0.1^2) clipped, canary "
        f"z*=C), {rounds} games per noise level, delta=1e-5, failure probability 0.05, DKW "
        "bounds. Ground truth: the release vector is a Gaussian mechanism with L2 sensitivity "
        "Delta_tau = 2C sqrt(sum_{t>=tau} N_t^-2) (replace-one), i.e. mu-GDP.\n\n"
        + format_table(rows)
        + "\n\nSame games, `gdp` bounds (trade-off fit; valid under the mu-GDP assumption, "
        "which holds here):\n\n" + format_table(rows_gdp)
        + "\n\nSoundness (delta=0.1, failure probability 0.1, "
        f"{sound['audits']} audits of {sound['n_per_class']} scores per class): where the "
        "method's assumption holds, the over-claim rate must stay <= 0.1 up to binomial noise. "
        "Rows where it does not hold (**no**) are kept on purpose: randomised response is not "
        "mu-GDP, and `gdp` (either fit) over-claims there. `joint` spends its failure "
        "probability (one exact test per threshold): its over-claim rate is above the "
        "rectangle methods' and still within the level. Assumptions: "
        + "; ".join(f"`{k}`: {v}" for k, v in sound["assumptions"].items())
        + ".\n\n" + soundness_table(sound)
        + "\n\nOne-run audits (Steinke et al. 2023; Mahloujifar et al. 2024): "
        f"{sound_one_run['audits']} audits of m = {sound_one_run['m']} canaries per row"
        + (" (quick mode: fewer audits and canaries, and no `+u` or continuous `one-run` "
           "rows; the full report runs 400 audits of 500 canaries per row)" if ctx.quick
           else "")
        + ", each canary included independently w.p. 1/2, delta = 1e-5, failure probability "
        "0.05, the seed of each row fixed for all its audits. Mechanisms: `bernoulli-null` "
        "(scores independent of membership, half of them tied: the tie-breaking check), "
        "randomised response `rr-1`, `rr-4`, `laplace-1`, two-sided `geometric-2` (exactly "
        "eps-DP, not GDP), `+u`: the same plus independent Uniform(0, 1/2) noise (same privacy "
        "profile, no ties). The one-run guesses abstain on a tied group of scores straddling a "
        "cut (a rule of the scores alone), so the tied mechanisms certify little. "
        "`one-run-fdp (gdp)` assumes a mu-GDP mechanism: on these mechanisms it does not hold "
        "and the row shows what that costs; every row whose assumption holds must stay at or "
        "below xi up to the binomial interval.\n\n" + one_run_soundness_table(sound_one_run)
    )
    choice = _tau_choice(ctx, rounds)
    md += (
        "\n\nChoosing the insertion time validly (same mechanism at mu = 2, tau in {1, 4, 7, 10}, "
        f"{rounds} games per tau, tests SeMI*, SeMI-max, Final; K = {choice['choices']} choices, "
        "DKW, failure probability 0.05). The post-hoc best is the number the seed reports; it "
        "is not a certificate. Max certifiable = the largest bound DKW can return from the "
        "certification games (perfect separation), so a 0 reads against it:\n\n"
        "| workflow | choice | eps_LB | valid |\n|---|---|---|---|\n"
        + "\n".join(f"| {k} | {choice[k]['choice']} | {choice[k]['epsilon_lower_bound']:.3f} | "
                    f"{'yes' if choice[k]['valid'] else 'no (post hoc)'} |"
                    for k in ("post_hoc", "bonferroni", "pilot_certify"))
        + f"\n\nTrue eps: {choice['epsilon_true']:.3f}; max certifiable from the certification "
        f"games: {choice['certifiable_max']:.3f}."
    )
    return Section(title="Privacy auditing with SeMI tests", markdown=md, figures=[fname],
                   data={"audit_game": [r.to_dict() for r in rows],
                         "audit_game_gdp": [r.to_dict() for r in rows_gdp],
                         "soundness": sound, "soundness_one_run": sound_one_run,
                         "tau_choice": choice})


def _tau_choice(ctx: ReportContext, rounds: int) -> dict:
    """Post-hoc best tau vs Bonferroni vs pilot/certify on the noisy mean (mu = 2)."""
    from semi_core._rng import as_seed_sequence
    from semi_core.audit.selection import select_and_certify
    from semi_core.game.play import play
    from semi_core.mechanisms.noisy_mean import NoisyMean

    ctx.progress("tau choice")
    base = NoisyMean(10, 10, noise=1.0, clip=1.0, data_mean=-1.0, data_std=0.1)
    mech = NoisyMean(10, 10, noise=base.sensitivity(1) / 2.0, clip=1.0, data_mean=-1.0,
                     data_std=0.1)
    taus = (1, 4, 7, 10)
    kids = as_seed_sequence(ctx.seed).spawn(len(taus) + 1)
    res = {t: play(mech, rounds, kids[i], tau=t, tests=("semi-star", "semi-max", "final"))
           for i, t in enumerate(taus)}
    out = select_and_certify(res, delta=1e-5, failure_prob=0.05, method="dkw", seed=kids[-1])
    out.pop("per_choice")
    out["epsilon_true"] = mech.epsilon(1e-5, 1)
    return out

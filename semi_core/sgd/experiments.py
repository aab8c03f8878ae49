r"""The DP-SGD fine-tuning audit of the SeMI seed (§5.2, Fig. 3, App. H.4-H.5), shared by the
report section and ``analysis/fig3_dpsgd_audit.py``.

One pretrained model and canary (fixed public/private/reference split) serve every target
:math:`\varepsilon`; only :math:`\sigma_{DP}` changes between rows. Each row's games are played
by :func:`semi_core.sgd.audit.audit_games` (the one runner, any executor) from a stream keyed by
the target :math:`\varepsilon` itself, so a row does not depend on which other rows are run:
rows computed in separate processes and joined by :func:`merge_fig3` equal one run of all rows.

Per row and attack (all bounds at failure probability :math:`\xi`, method ``"band"`` by
default, the tightest distribution-free bound of :func:`semi_core.audit.epsilon_lower_bound`):

- ``eps_lb_mean``: the bound averaged over the insertion times :math:`\tau` (seed Fig. 3),
  with a paired, stratified bootstrap interval (``eps_lb_mean_interval``);
- ``pilot_certify``: :math:`\tau^*` chosen on a random pilot part of each :math:`\tau`'s
  games, the bound certified on the held-out games of :math:`\tau^*` at the full :math:`\xi`
  (:func:`semi_core.audit.selection.select_and_certify`; a valid bound, unlike the seed H.5's
  post-hoc best :math:`\tau`, which is kept as ``eps_lb_best_post_hoc`` and labelled so);
- ``auc_mean`` and ``tpr_at_fpr`` (averaged over :math:`\tau`), with bootstrap intervals.

Each row also holds the largest :math:`\varepsilon` the method can certify from its games
(``eps_max``, per :math:`\tau` on all games; ``eps_max_certify`` on the certification part),
:func:`semi_core.audit.selection.certifiable_epsilon_max`: a bound can only exceed
:math:`\varepsilon` where this cap does, so rows with ``eps_max < epsilon_true`` cannot show a
tight audit whatever the attack. :func:`fig3_ranking` orders the attacks by ``eps_lb_mean`` and
says which gaps the paired bootstrap separates.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import norm as _norm

from semi_core._rng import as_seed_sequence, child_seed
from semi_core._validation import check_failure_prob, check_int, check_probability
from semi_core.audit import auc, epsilon_lower_bound, roc_curve, tpr_at_fpr
from semi_core.audit.selection import certifiable_epsilon_max, select_and_certify

__all__ = ["LABELS", "fig3_experiment", "fig3_row_seed", "bootstrap_attacks", "fig3_ranking",
           "fig3_markdown", "ranking_text", "merge_fig3"]

LABELS = {"semi_sgd": "SeMI-SGD", "semi_max": "SeMI-max", "delta_diff": "Delta Diff",
          "delta_ratio": "Delta Ratio", "back_front_diff": "Back-Front Diff",
          "back_front_ratio": "Back-Front Ratio"}

#: Settings that must agree between the parts joined by :func:`merge_fig3`.
_SETTINGS = ("dataset", "model", "rounds_per_tau", "taus", "delta", "method", "failure_prob",
             "pilot_fraction", "n_bootstrap", "seed", "lr", "n_reference", "sizes")


def fig3_row_seed(seed, epsilon: float) -> np.random.SeedSequence:
    """Stream of the row at target ``epsilon`` (``inf``: no noise), keyed by the value itself.

    ``child_seed(seed, 1, 0, round(1e6 * eps))`` for a finite ``eps >= 0``,
    ``child_seed(seed, 1, 1)`` for ``inf``.

    Parameters
    ----------
    seed : int or numpy.random.SeedSequence
        Root seed of the experiment.
    epsilon : float
        Target :math:`\\varepsilon` of the row, > 0 or ``inf``.

    Returns
    -------
    numpy.random.SeedSequence
        The row's stream.
    """
    eps = float(epsilon)
    if math.isinf(eps) and eps > 0:
        return child_seed(seed, 1, 1)
    if not math.isfinite(eps) or eps <= 0:
        raise ValueError(f"epsilon must be in (0, inf], got {epsilon!r}")
    return child_seed(seed, 1, 0, int(round(eps * 1e6)))


def bootstrap_attacks(games: dict, attacks, *, delta: float, failure_prob: float = 0.05,
                      method: str = "band", fpr: float = 0.01, n_bootstrap: int = 200,
                      level: float = 0.95, seed=0) -> dict:
    r"""Paired, stratified bootstrap of the :math:`\tau`-averaged bound, AUC and TPR at ``fpr``.

    Replicate :math:`b` resamples, for each :math:`\tau`, the members with replacement among
    the members and the non-members among the non-members (class sizes kept), the same indices
    for every attack (paired); it recomputes for each attack

    .. math::

        \bar\varepsilon^{(b)} = \frac1{|\mathcal T|}\sum_{\tau\in\mathcal T}
        \underline\varepsilon\big(S^{(b)}_{1,\tau}, S^{(b)}_{0,\tau}\big)

    (and likewise the mean AUC and TPR). Each interval is the normal interval with the
    bootstrap standard error, centred at the full-sample estimate :math:`\hat\theta`,

    .. math::

        \hat\theta \pm z_{(1+\ell)/2}\,\widehat{\mathrm{sd}}\big(\theta^{(b)}\big),

    intersected with the statistic's range (:math:`[0,\infty)` for the bound, :math:`[0,1]`
    for AUC and TPR): it contains its estimate by construction. Its target is the expected
    statistic at this game count, :math:`\mathbb E\,\hat\theta_n` (what Fig. 3's points
    estimate). The percentile interval is not valid for this statistic: the bound is a maximum
    over thresholds, and resampling (ties, extra noise) shifts its bootstrap distribution
    upwards, so the percentile interval can exclude :math:`\hat\theta` (seed Fig. 3's rerun:
    0.06 [0.08, 0.17]); the standard error is not shifted by that bias, so the centred
    interval keeps its coverage (tested by Monte Carlo in ``tests/sgd/test_fig3.py``).
    ``diff`` holds, for each ordered pair ``"a>b"``, the same interval for
    :math:`\bar\varepsilon_a-\bar\varepsilon_b` (paired replicates, range unrestricted).
    The interval describes how much the bound moves between samples of this size (the bound
    itself is already a one-sided :math:`1-\xi` confidence bound for :math:`\varepsilon`).

    Parameters
    ----------
    games : dict of int -> GameResult
    attacks : sequence of str
    delta, failure_prob, method
        As in :func:`semi_core.audit.epsilon_lower_bound`.
    fpr : float in (0, 1)
    n_bootstrap : int >= 2
    level : float in (0, 1)
    seed : int or SeedSequence

    Returns
    -------
    dict
        ``{"eps_lb_mean": {a: (lo, hi)}, "auc_mean": ..., "tpr_mean": ..., "diff": {...},
        "estimate": {"eps_lb_mean": {a: value}, ...}, "interval": "normal-bootstrap-se"}``.
    """
    n_boot = check_int(n_bootstrap, "n_bootstrap", minimum=2)
    level = check_probability(level, "level")
    fpr = check_probability(fpr, "fpr")
    attacks = list(attacks)
    rng = np.random.Generator(np.random.PCG64(as_seed_sequence(seed)))
    taus = sorted(games)
    eps = np.empty((n_boot, len(attacks)))
    aucs, tprs = np.empty_like(eps), np.empty_like(eps)
    split = {t: (np.flatnonzero(games[t].member), np.flatnonzero(~games[t].member))
             for t in taus}

    def stats(idx):
        acc = np.zeros((3, len(attacks)))
        for t in taus:
            j1, j0 = idx[t]
            for k, a in enumerate(attacks):
                s = games[t].stats[a]
                m, nm = s[j1], s[j0]
                acc[0, k] += epsilon_lower_bound(m, nm, delta=delta, failure_prob=failure_prob,
                                                 method=method).epsilon_lower_bound
                acc[1, k] += auc(m, nm)
                acc[2, k] += float(tpr_at_fpr(m, nm, fpr))
        return acc / len(taus)

    est = stats(split)
    for b in range(n_boot):
        draws = {t: (rng.choice(split[t][0], split[t][0].size),
                     rng.choice(split[t][1], split[t][1].size)) for t in taus}
        eps[b], aucs[b], tprs[b] = stats(draws)
    z = float(_norm.ppf((1 + level) / 2))

    def iv(centre, col, lo_range=-math.inf, hi_range=math.inf):
        half = z * float(np.std(col, ddof=1))
        return float(max(centre - half, lo_range)), float(min(centre + half, hi_range))

    n_a = len(attacks)
    return {
        "level": level, "n_bootstrap": n_boot, "fpr": fpr, "interval": "normal-bootstrap-se",
        "estimate": {"eps_lb_mean": {a: float(est[0, k]) for k, a in enumerate(attacks)},
                     "auc_mean": {a: float(est[1, k]) for k, a in enumerate(attacks)},
                     "tpr_mean": {a: float(est[2, k]) for k, a in enumerate(attacks)}},
        "eps_lb_mean": {a: iv(est[0, k], eps[:, k], 0.0) for k, a in enumerate(attacks)},
        "auc_mean": {a: iv(est[1, k], aucs[:, k], 0.0, 1.0) for k, a in enumerate(attacks)},
        "tpr_mean": {a: iv(est[2, k], tprs[:, k], 0.0, 1.0) for k, a in enumerate(attacks)},
        "diff": {f"{a}>{b}": iv(est[0, i] - est[0, j], eps[:, i] - eps[:, j])
                 for i in range(n_a) for j in range(n_a) if i != j
                 for a, b in [(attacks[i], attacks[j])]},
    }


def _row(games: dict, attacks, *, delta, failure_prob, method, pilot_fraction, n_bootstrap,
         fpr_levels, seed) -> dict:
    """Bounds, intervals and ranking of one target eps from its games per tau."""
    taus = sorted(games)
    per_tau, attack_out = {}, {}
    for t in taus:
        per_tau[t] = {}
        for a in attacks:
            m, nm = games[t].scores(a)
            per_tau[t][a] = {
                "eps_lb": float(epsilon_lower_bound(m, nm, delta=delta, failure_prob=failure_prob,
                                                    method=method).epsilon_lower_bound),
                "auc": float(auc(m, nm)),
                "tpr_at_fpr": {str(f): float(tpr_at_fpr(m, nm, f)) for f in fpr_levels}}
    sizes = [(int(games[t].member.sum()), int((~games[t].member).sum())) for t in taus]
    eps_max = min(certifiable_epsilon_max(n1, n0, delta=delta, failure_prob=failure_prob,
                                          method=method) for n1, n0 in sizes)
    boot = (bootstrap_attacks(games, attacks, delta=delta, failure_prob=failure_prob,
                              method=method, fpr=fpr_levels[0], n_bootstrap=n_bootstrap,
                              seed=child_seed(seed, 1))
            if n_bootstrap else None)
    eps_max_certify = math.inf
    for a in attacks:
        sel = select_and_certify(games, delta=delta, failure_prob=failure_prob, method=method,
                                 tests=[a], pilot_fraction=pilot_fraction, seed=child_seed(seed, 0))
        pc = sel["pilot_certify"]
        eps_max_certify = min(eps_max_certify, sel["certifiable_max"])
        vals = np.array([per_tau[t][a]["eps_lb"] for t in taus])
        out = {
            "eps_lb_mean": float(vals.mean()),
            "pilot_certify": {"tau": int(pc["choice"].split(":")[0]),
                              "eps_lb": float(pc["epsilon_lower_bound"]),
                              "pilot_bound": float(pc["pilot_bound"]),
                              "certify_games": pc["certify_games"],
                              "eps_max": float(sel["certifiable_max"])},
            "eps_lb_best_post_hoc": float(vals.max()),
            "eps_lb_best_post_hoc_tau": int(taus[int(vals.argmax())]),
            "eps_lb_best_bonferroni": float(sel["bonferroni"]["epsilon_lower_bound"]),
            "auc_mean": float(np.mean([per_tau[t][a]["auc"] for t in taus])),
            "tpr_at_fpr_mean": {str(f): float(np.mean([per_tau[t][a]["tpr_at_fpr"][str(f)]
                                                       for t in taus])) for f in fpr_levels},
        }
        if boot is not None:
            out["eps_lb_mean_interval"] = boot["eps_lb_mean"][a]
            out["auc_mean_interval"] = boot["auc_mean"][a]
            out["tpr_mean_interval"] = {str(boot["fpr"]): boot["tpr_mean"][a]}
        attack_out[a] = out
    row = {"attacks": attack_out, "per_tau": per_tau, "eps_max": float(eps_max),
           "eps_max_certify": float(eps_max_certify), "games_per_tau": sizes}
    if boot is not None:
        row["bootstrap"] = {"level": boot["level"], "n_bootstrap": boot["n_bootstrap"],
                            "diff": boot["diff"]}
    row["ranking"] = fig3_ranking(row)
    return row


def fig3_ranking(row: dict) -> list[dict]:
    """Attacks of one row ordered by ``eps_lb_mean`` (then AUC), each with whether the paired
    bootstrap interval of its gap to the next attack excludes 0 (``separated_from_next``).

    Parameters
    ----------
    row : dict
        One row of :func:`fig3_experiment`'s ``rows``.

    Returns
    -------
    list of dict
        Per attack, by decreasing bound: ``attack``, ``eps_lb_mean``, ``interval`` and
        ``separated_from_next``.
    """
    attacks = row["attacks"]
    order = sorted(attacks, key=lambda a: (-attacks[a]["eps_lb_mean"], -attacks[a]["auc_mean"]))
    diff = row.get("bootstrap", {}).get("diff", {})
    out = []
    for k, a in enumerate(order):
        entry = {"attack": a, "eps_lb_mean": attacks[a]["eps_lb_mean"],
                 "interval": attacks[a].get("eps_lb_mean_interval")}
        if k + 1 < len(order) and diff:
            lo, hi = diff[f"{a}>{order[k + 1]}"]
            entry["gap_to_next_interval"] = (lo, hi)
            entry["separated_from_next"] = bool(lo > 0)
        out.append(entry)
    return out


def fig3_experiment(*, dataset: str = "digits", model: str = "logreg",
                    epsilons=(0.5, 1.0, 2.0, 4.0, 6.0), rounds: int = 10_000, taus=None,
                    seed=0, delta: float = 1e-4, roc_epsilons=(math.inf, 1.0),
                    n_reference: int = 128, data_dir=None, lr: float = 0.5,
                    method: str = "band", failure_prob: float = 0.05,
                    pilot_fraction: float = 0.3, n_bootstrap: int = 200,
                    fpr_levels=(0.01, 0.001), chunk_size: int = 64,
                    sizes=None, progress=lambda msg: None, executor=None,
                    processes: int = 1) -> dict:
    r"""Bounds per attack against the exact :math:`\varepsilon` for each target (seed Fig. 3),
    with ROC data (seed H.4) at ``roc_epsilons`` (``inf`` = no noise) for the middle
    :math:`\tau`.

    Parameters
    ----------
    dataset, model, data_dir, n_reference, lr, sizes
        As in :func:`semi_core.sgd.audit.prepare_audit` (``"fashion-mnist"`` reads the user's
        IDX files from ``data_dir``; nothing is downloaded).
    epsilons : sequence of float > 0
        Target :math:`\varepsilon` of the rows (``sigma_DP`` calibrated to each at ``delta``).
    rounds : int >= 2
        Games per :math:`\tau`.
    taus : sequence of int, optional
        Insertion times (default ``1..T``).
    seed : int or SeedSequence
        Root seed; the setup uses ``child_seed(seed, 0)``, the row at :math:`\varepsilon`
        :func:`fig3_row_seed`.
    delta : float
        The :math:`\delta` of the targets and the bounds, in (0, 1).
    roc_epsilons : sequence of float
        Targets whose ROC data are kept (``inf`` = no noise).
    method, failure_prob
        Bound method and :math:`\xi` (:func:`semi_core.audit.epsilon_lower_bound`).
    pilot_fraction : float in (0, 1)
        Share of each :math:`\tau`'s games used to choose :math:`\tau^*`.
    n_bootstrap : int
        Bootstrap replicates of the intervals (0: none).
    fpr_levels : sequence of float
        FPR levels of the reported TPR (the first is bootstrapped).
    chunk_size, executor, progress
        As in :func:`semi_core.sgd.audit.audit_games` (the result does not depend on
        ``executor``).
    processes : int >= 1
        Local processes playing the rows' games in parallel, each row split into groups of
        :math:`\tau` (the runner's streams do not depend on which :math:`\tau` are played
        together, so the result equals ``processes=1``; each group trains its own H0 runs).

    Returns
    -------
    dict
        Settings, ``rows`` (see the module docstring), ``roc`` and ``seconds_games``.
    """
    from .accounting import calibrate_sigma, dpsgd_epsilon
    from .audit import ATTACKS, AuditSetup, audit_games, prepare_audit
    from .dpsgd import DPSGDConfig

    rounds = check_int(rounds, "rounds", minimum=2)
    failure_prob = check_failure_prob(failure_prob)
    pilot_fraction = check_probability(pilot_fraction, "pilot_fraction")
    n_bootstrap = check_int(n_bootstrap, "n_bootstrap", minimum=0)
    fpr_levels = tuple(check_probability(f, "fpr_levels entry") for f in fpr_levels)
    if not fpr_levels:
        raise ValueError("fpr_levels must hold at least one FPR level")
    epsilons = tuple(float(e) for e in epsilons)
    for e in (*epsilons, *roc_epsilons):
        fig3_row_seed(seed, e)  # validates every eps before any training
    base = DPSGDConfig(lr=lr)
    taus = list(range(1, base.steps + 1)) if taus is None else [int(t) for t in taus]
    setup = prepare_audit(dataset=dataset, model=model, cfg=base, seed=child_seed(seed, 0),
                          data_dir=data_dir, n_reference=n_reference, sizes=sizes)
    all_eps = sorted(set(epsilons) | {float(e) for e in roc_epsilons},
                     key=lambda e: (math.isinf(e), e))
    processes = check_int(processes, "processes", minimum=1)
    run_taus = {e: taus if e in epsilons else [taus[len(taus) // 2]] for e in all_eps}
    played: dict = {}
    done_rows: dict = {}
    if processes > 1:
        import concurrent.futures as cf
        import multiprocessing as mp

        extra = len(all_eps) - len(epsilons)  # rows played for the ROC only (one tau)
        n_groups = max(1, (processes - extra) // max(1, len(epsilons)))
        jobs = [(e, [int(t) for t in g]) for e in all_eps
                for g in np.array_split(run_taus[e], min(n_groups, len(run_taus[e])))]
        spec = {"dataset": dataset, "model": model, "lr": lr, "seed": seed, "sizes": sizes,
                "data_dir": data_dir, "n_reference": n_reference, "delta": delta,
                "rounds": rounds, "chunk_size": chunk_size}
        with cf.ProcessPoolExecutor(processes, mp_context=mp.get_context("spawn")) as pool:
            futs = [pool.submit(_games_job, spec, e, g) for e, g in jobs]
            for f in cf.as_completed(futs):
                e, games = f.result()
                meta = next(iter(games.values())).metadata
                progress(f"{dataset}/{model}: eps={e}, tau {sorted(games)}: "
                         f"{meta['rounds_released']} runs in {meta['seconds']:.1f} s")
                played.setdefault(e, []).append(games)
            row_futs = {e: pool.submit(
                _row, {t: g for part in played[e] for t, g in part.items()}, ATTACKS,
                delta=delta, failure_prob=failure_prob, method=method,
                pilot_fraction=pilot_fraction, n_bootstrap=n_bootstrap, fpr_levels=fpr_levels,
                seed=child_seed(fig3_row_seed(seed, e), 1)) for e in epsilons}
            done_rows = {e: f.result() for e, f in row_futs.items()}
    rows, roc, seconds, runs = [], {}, 0.0, 0
    for eps in all_eps:
        row_seed = fig3_row_seed(seed, eps)
        sigma = 0.0 if math.isinf(eps) else calibrate_sigma(eps, delta)
        if eps in played:
            games = {t: g for part in played[eps] for t, g in part.items()}
            metas = [next(iter(p.values())).metadata for p in played[eps]]
        else:
            progress(f"{dataset}/{model}: eps={eps}")
            cfg = DPSGDConfig(**{**base.__dict__, "sigma_dp": sigma})
            st = AuditSetup(**{**setup.__dict__, "cfg": cfg})
            games = audit_games(st, rounds=rounds, taus=run_taus[eps], chunk_size=chunk_size,
                                seed=child_seed(row_seed, 0), executor=executor)
            metas = [next(iter(games.values())).metadata]
        meta = {"seconds": float(sum(m["seconds"] for m in metas)),
                "rounds_released": int(sum(m["rounds_released"] for m in metas))}
        seconds += meta["seconds"]
        runs += meta["rounds_released"]
        if eps in epsilons:
            row = done_rows.get(eps) or _row(
                games, ATTACKS, delta=delta, failure_prob=failure_prob, method=method,
                pilot_fraction=pilot_fraction, n_bootstrap=n_bootstrap, fpr_levels=fpr_levels,
                seed=child_seed(row_seed, 1))
            row.update({"epsilon_target": eps, "sigma_dp": sigma,
                        "epsilon_true": dpsgd_epsilon(sigma, delta),
                        "seconds_games": float(meta["seconds"]),
                        "runs_trained": int(meta["rounds_released"])})
            rows.append(row)
        if eps in {float(e) for e in roc_epsilons}:
            tau = run_taus[eps][len(run_taus[eps]) // 2]
            roc[str(eps)] = {"tau": tau, "curves": {}}
            for a in ATTACKS:
                fpr, tpr, _ = roc_curve(*games[tau].scores(a))
                roc[str(eps)]["curves"][a] = (np.asarray(fpr), np.asarray(tpr))
    return {"dataset": dataset, "model": model, "rounds_per_tau": rounds, "taus": taus,
            "delta": delta, "method": method, "failure_prob": failure_prob,
            "pilot_fraction": pilot_fraction, "n_bootstrap": n_bootstrap,
            "seed": seed if isinstance(seed, int) else None, "lr": lr,
            "n_reference": n_reference, "sizes": sizes, "rows": rows, "roc": roc, "setup": setup.info,
            "seconds_games": seconds, "runs_trained": runs}


_SETUP_CACHE: dict = {}


def _games_job(spec: dict, eps: float, taus: list) -> tuple[float, dict]:
    """One process's share of :func:`fig3_experiment`: the games of ``taus`` at ``eps``."""
    # lazy: torch is a heavy optional dependency (the worker imports it)
    import torch

    from .accounting import calibrate_sigma
    from .audit import AuditSetup, audit_games, prepare_audit
    from .dpsgd import DPSGDConfig

    torch.set_num_threads(1)
    key = repr(sorted((k, spec[k]) for k in ("dataset", "model", "lr", "seed", "data_dir",
                                              "n_reference", "sizes")))
    if key not in _SETUP_CACHE:
        _SETUP_CACHE[key] = prepare_audit(
            dataset=spec["dataset"], model=spec["model"], cfg=DPSGDConfig(lr=spec["lr"]),
            seed=child_seed(spec["seed"], 0), data_dir=spec["data_dir"],
            n_reference=spec["n_reference"], sizes=spec["sizes"])
    setup = _SETUP_CACHE[key]
    sigma = 0.0 if math.isinf(eps) else calibrate_sigma(eps, spec["delta"])
    st = AuditSetup(**{**setup.__dict__,
                       "cfg": DPSGDConfig(**{**setup.cfg.__dict__, "sigma_dp": sigma})})
    games = audit_games(st, rounds=spec["rounds"], taus=[int(t) for t in taus],
                        seed=child_seed(fig3_row_seed(spec["seed"], eps), 0),
                        chunk_size=spec["chunk_size"])
    return eps, games


def merge_fig3(parts) -> dict:
    """Join :func:`fig3_experiment` results computed for disjoint sets of target eps (e.g. in
    separate processes) with the same settings; equal to one run over all of them.

    Parameters
    ----------
    parts : iterable of dict
        :func:`fig3_experiment` results with equal settings and disjoint targets.

    Returns
    -------
    dict
        The joined result.
    """
    parts = list(parts)
    if not parts:
        raise ValueError("parts must hold at least one fig3_experiment result")
    first = parts[0]
    for p in parts[1:]:
        for k in _SETTINGS:
            if p.get(k) != first.get(k):
                raise ValueError(f"parts differ in {k!r}: {first.get(k)!r} vs {p.get(k)!r}")
    rows = [r for p in parts for r in p["rows"]]
    targets = [r["epsilon_target"] for r in rows]
    if len(set(targets)) != len(targets):
        raise ValueError(f"parts overlap in target eps {sorted(targets)}")
    out = dict(first)
    out["rows"] = sorted(rows, key=lambda r: r["epsilon_target"])
    out["roc"] = {k: v for p in parts for k, v in p["roc"].items()}
    out["seconds_games"] = float(sum(p["seconds_games"] for p in parts))
    out["runs_trained"] = int(sum(p["runs_trained"] for p in parts))
    return out


def _fmt_iv(iv) -> str:
    return f"[{iv[0]:.2f}, {iv[1]:.2f}]" if iv is not None else ""


def fig3_markdown(res: dict) -> str:
    """Markdown table per row: exact eps, the cap, per attack the tau-averaged bound with its
    bootstrap interval and the pilot/certify bound (tau*), then the ranking of each row.

    Parameters
    ----------
    res : dict
        A :func:`fig3_experiment` result.

    Returns
    -------
    str
        The Markdown tables.
    """
    attacks = [a for a in LABELS if res["rows"] and a in res["rows"][0]["attacks"]]
    head = ("| exact eps | largest certifiable (all / certify games) | "
            + " | ".join(LABELS[a] for a in attacks) + " |")
    lines = [head, "|" + "---|" * (2 + len(attacks))]
    for r in res["rows"]:
        cells = []
        for a in attacks:
            s = r["attacks"][a]
            pc = s["pilot_certify"]
            cells.append(f"{s['eps_lb_mean']:.2f} {_fmt_iv(s.get('eps_lb_mean_interval'))}; "
                         f"p/c {pc['eps_lb']:.2f} (tau {pc['tau']})")
        lines.append(f"| {r['epsilon_true']:.3g} | {r['eps_max']:.2f} / {r['eps_max_certify']:.2f}"
                     f" | " + " | ".join(cells) + " |")
    lines += ["", "Ranking by the tau-averaged bound (`>`: the paired bootstrap interval of the "
              "gap excludes 0; `~`: it does not):", ""]
    lines += [f"- exact eps {r['epsilon_true']:.3g}: {ranking_text(r)}" for r in res["rows"]]
    return "\n".join(lines)


def ranking_text(row: dict) -> str:
    """One line: ``SeMI-SGD 0.81 [0.70, 0.92] > SeMI-max 0.64 [...] ~ ...``.

    Parameters
    ----------
    row : dict
        A row with its ``ranking`` (:func:`fig3_ranking`).

    Returns
    -------
    str
        The one-line ranking.
    """
    parts = []
    for e in row["ranking"]:
        parts.append(f"{LABELS.get(e['attack'], e['attack'])} {e['eps_lb_mean']:.2f} "
                     f"{_fmt_iv(e['interval'])}".rstrip())
        if "separated_from_next" in e:
            parts.append(">" if e["separated_from_next"] else "~")
    return " ".join(parts)

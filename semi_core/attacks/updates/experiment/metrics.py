"""The attacks' metrics on an update experiment: every metric of one (score, combiner,
threshold) choice (:func:`summarize`) and the candidates as one membership game
(:func:`game_result`).
"""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

import numpy as np

from semi_core._rng import as_seed_sequence
from semi_core.attacks.updates.experiment.config import THRESHOLDS
from semi_core.attacks.updates.experiment.result import UpdateRun
from semi_core.audit.roc import auc as roc_auc
from semi_core.audit.roc import roc_metrics
from semi_core.game.result import GameResult
from semi_core.stats.update_combination import (
    COLLISION_RULES,
    COMBINERS,
    assign_top_n,
    back_front_scores,
    batch_threshold,
    decision_metrics,
    entry_accuracy,
    entry_baselines,
    pair_scores,
    rank_threshold,
)

__all__ = ["summarize", "game_result", "fewer_trials_notes", "NO_UPDATE_RULES", "group_accuracy",
           "GROUPINGS"]

#: Groupings of :func:`group_accuracy`: the candidate's class (Fig. 12), source vs shifted
#: record (§5.6's disparate impact, new vs old examples), the update a member entered (Fig. 11).
GROUPINGS = ("class", "source", "entry")


def _mean_se(vals) -> dict[str, float]:
    v = np.asarray([x for x in vals if x is not None], dtype=float)
    if v.size == 0:
        return {"mean": None, "se": None, "n": 0}
    se = float(v.std(ddof=1) / np.sqrt(v.size)) if v.size > 1 else None
    return {"mean": float(v.mean()), "se": se, "n": int(v.size)}


#: What the no-update baselines are (the seed's "Loss" column is this median rule, not Yeom et
#: al.'s threshold at the average training loss).
NO_UPDATE_RULES = {
    "loss": "median threshold on the final model's cross-entropy: the half of the trial's "
            "candidates with the lowest loss on f_k called IN (top 10 % for precision); not "
            "Yeom et al.'s threshold at the average training loss",
    "gap": "Gap attack (Yeom et al.'s baseline): IN iff f_k classifies the candidate correctly",
}


def fewer_trials_notes(summary: dict, trials: int) -> list[str]:
    """One line per metric of ``summary`` averaged over fewer than ``trials`` trials (precision
    is undefined in a trial whose threshold calls no candidate IN: that trial is skipped).

    Parameters
    ----------
    summary : dict
        A :func:`summarize` result.
    trials : int
        Number of trials.

    Returns
    -------
    list of str
        The notes.
    """
    notes = []

    def walk(d, path):
        for key, v in d.items():
            if isinstance(v, dict) and {"mean", "se", "n"} <= set(v):
                if v["n"] < trials:
                    notes.append(f"{'.'.join((*path, key))} is averaged over {v['n']} of "
                                 f"{trials} trials (undefined in the others: no candidate "
                                 "called IN)")
            elif isinstance(v, dict) and key != "config":
                walk(v, (*path, key))

    walk(summary, ())
    return notes


def _threshold(rule: str, r: int, own_bf, shadow_bf, rank_bf, fraction_in: float) -> float:
    if rule == "batch":
        return batch_threshold(own_bf[r], fraction_in)
    if rule == "transfer":
        return batch_threshold(shadow_bf[r], fraction_in)
    return rank_threshold(rank_bf[r], fraction_in)


def summarize(run: UpdateRun, *, score: str = "loss", combiner: str = "diff",
              threshold: str = "batch", fpr=(0.01, 0.1), n_bootstrap: int = 200,
              collisions: str = "exclusive") -> dict[str, Any]:
    """Every metric of the model-update attacks for one (score, combiner, threshold) choice.

    Returns a JSON-ready dict: ``mi_accuracy`` (Back-Front at the chosen threshold, median
    rule), ``precision`` / ``recall`` at the seed's 10 % rule for Batch/Transfer/Rank,
    ``delta_mi_accuracy``, ``entry_accuracy`` with its ``entry_baselines``, ``auc`` (mean and SE
    over trials, plus pooled with a bootstrap interval), ``tpr_at_fpr`` (pooled, intervals), the
    no-update baselines ``loss`` / ``gap`` / ``lira`` on :math:`f_k` and the run time. All
    means come with standard errors over trials.

    Threshold rules: ``batch`` and ``transfer`` call the top half (accuracy) / top 10 %
    (precision) of the trial's (resp. the shadow run's) candidates IN; ``rank`` puts the
    threshold at the OUT median (accuracy, FPR 0.5) / the OUT 90th percentile (precision, the
    seed's "top 10 % of the test data") of the attacker's known-OUT points on the target
    snapshots. ``collisions``: Delta's rule for a point several updates would take
    (:func:`~semi_core.stats.update_combination.assign_top_n`).

    Parameters
    ----------
    run : UpdateRun
        The experiment's run.
    score : str
        Score type (a key of ``run.scores``).
    combiner : {"diff", "ratio"}
        Combiner of the update attack.
    threshold : {"batch", "transfer", "rank"}
        Threshold rule.
    fpr : sequence of float
        FPR levels.
    n_bootstrap : int
        Bootstrap replicates.
    collisions : str
        Delta's collision rule.

    Returns
    -------
    dict
        The metrics listed above.
    """
    if score not in run.scores:
        raise ValueError(f"score must be one of {tuple(run.scores)}, got {score!r}")
    if combiner not in COMBINERS:
        raise ValueError(f"combiner must be one of {COMBINERS}, got {combiner!r}")
    if threshold not in THRESHOLDS:
        raise ValueError(f"threshold must be one of {THRESHOLDS}, got {threshold!r}")
    if collisions not in COLLISION_RULES:
        raise ValueError(f"collisions must be one of {COLLISION_RULES}, got {collisions!r}")
    cfg = run.cfg
    L, Ls, Lr = run.scores[score], run.shadow[score], run.rank_out[score]
    c = cfg.c
    bf = back_front_scores(np.moveaxis(L, 1, -1), combiner, c=c)                       # (R, N)
    bf_sh = back_front_scores(np.moveaxis(Ls, 1, -1), combiner, c=c)
    bf_rk = back_front_scores(np.moveaxis(Lr, 1, -1), combiner, c=c)
    m = run.member
    R = L.shape[0]
    acc, prec10, rec10, aucs, d_acc, ent, bf_tpr = [], [], [], [], [], [], []
    no_upd_loss, gap, loss_p10, loss_r10 = [], [], [], []
    for r in range(R):
        thr = _threshold(threshold, r, bf, bf_sh, bf_rk, 0.5)
        dm = decision_metrics(bf[r, m], bf[r, ~m], thr)
        acc.append(dm["accuracy"])
        bf_tpr.append(dm["recall"])
        d10 = decision_metrics(bf[r, m], bf[r, ~m],
                               _threshold(threshold, r, bf, bf_sh, bf_rk, 0.1))
        prec10.append(d10["precision"])
        rec10.append(d10["recall"])
        aucs.append(roc_auc(bf[r, m], bf[r, ~m]))
        ps = pair_scores(np.moveaxis(L[r], 0, -1), combiner, c=c)                     # (N, k)
        assigned = assign_top_n(ps, cfg.n_up, collisions=collisions)
        d_acc.append(float(np.mean((assigned > 0) == m)))
        ent.append(entry_accuracy(assigned, run.entry))
        fin = -L[r, -1]
        no_upd_loss.append(decision_metrics(fin[m], fin[~m], batch_threshold(fin, 0.5))
                           ["accuracy"])
        l10 = decision_metrics(fin[m], fin[~m], batch_threshold(fin, 0.1))
        loss_p10.append(l10["precision"])
        loss_r10.append(l10["recall"])
        cor = run.correct_final[r]
        gap.append(0.5 * (cor[m].mean() + 1.0 - cor[~m].mean()))
    pooled_m = bf[:, m].ravel()
    pooled_n = bf[:, ~m].ravel()
    rm = roc_metrics(pooled_m, pooled_n, fpr=fpr, n_bootstrap=n_bootstrap, seed=cfg.seed)
    p_mi = float(np.mean(bf_tpr))
    out = {
        "config": asdict(cfg),
        "attack": {"score": score, "combiner": combiner, "threshold": threshold,
                   "multi_update": "back-front (membership), delta (entry)",
                   "delta_collisions": collisions},
        "mi_accuracy": _mean_se(acc),
        "precision_at_10pct": _mean_se(prec10),
        "recall_at_10pct": _mean_se(rec10),
        "delta_mi_accuracy": _mean_se(d_acc),
        "entry_accuracy": _mean_se(ent),
        "entry_baselines": entry_baselines(cfg.k, p_mi),
        "auc": {**_mean_se(aucs), "pooled": rm.auc, "pooled_interval": rm.auc_interval},
        "tpr_at_fpr": {f"{f:g}": {"tpr": t, "interval": iv, "resolvable": ok} for f, t, iv, ok in
                       zip(rm.fpr_levels, rm.tpr_at_fpr, rm.tpr_at_fpr_interval, rm.resolvable,
                           strict=True)},
        "fpr_resolution": rm.fpr_resolution,
        "no_update": {"loss": _mean_se(no_upd_loss), "gap": _mean_se(gap),
                      "loss_precision_at_10pct": _mean_se(loss_p10),
                      "loss_recall_at_10pct": _mean_se(loss_r10),
                      "rules": NO_UPDATE_RULES},
        "utility": run.test_accuracy,
        "trials": R,
        "per_trial": {"mi_accuracy": [float(v) for v in acc],
                      "no_update_loss": [float(v) for v in no_upd_loss],
                      "no_update_gap": [float(v) for v in gap]},
        "seconds": run.seconds,
    }
    out["notes"] = fewer_trials_notes(out, R)
    if "lira" in run.scores:
        fin = -run.scores["lira"][:, -1]
        out["no_update"]["lira"] = _mean_se(
            [decision_metrics(fin[r, m], fin[r, ~m], batch_threshold(fin[r], 0.5))["accuracy"]
             for r in range(R)])
    return out


def group_accuracy(run: UpdateRun, by: str, *, score: str = "loss", combiner: str = "diff"
                   ) -> dict[str, dict[str, float]]:
    r"""Disparate impact: Back-Front's accuracy at the trial's Batch (median) threshold within
    groups of candidates, mean +- SE over the trials in which a group has both members and
    non-members,

    .. math::

       \mathrm{acc}_g = \tfrac12\big(\mathrm{TPR}_g + 1 - \mathrm{FPR}_g\big),

    the threshold being the one of the whole trial (the attacker does not know the groups).
    ``by``: ``"class"`` (the candidate's label: Fig. 12's per-class accuracy), ``"source"``
    (``"old"`` = drawn from the source distribution, ``"new"`` = a shifted / target record:
    §5.6's new vs old examples; needs ``shift_alpha > 0``), ``"entry"`` (members grouped by the
    update they entered, every non-member in each group: Fig. 11's accuracy per update index).
    With equal shares of a group among members and non-members, the group accuracies average
    to the overall accuracy with the group's share as weight.

    Parameters
    ----------
    run : UpdateRun
        The experiment's run.
    by : {"class", "source", "entry"}
        The grouping.
    score : str
        Score type.
    combiner : {"diff", "ratio"}
        Combiner of the update attack.

    Returns
    -------
    dict
        Group name -> ``{mean, se, n}`` (``n``: trials in which the group is defined).
    """
    if by not in GROUPINGS:
        raise ValueError(f"by must be one of {GROUPINGS}, got {by!r}")
    if score not in run.scores:
        raise ValueError(f"score must be one of {tuple(run.scores)}, got {score!r}")
    if combiner not in COMBINERS:
        raise ValueError(f"combiner must be one of {COMBINERS}, got {combiner!r}")
    if "candidate_label" not in run.extra:
        raise ValueError("this run does not record its candidates' labels (made before "
                         "group_accuracy existed): rerun the experiment")
    if by == "source" and run.cfg.shift_alpha == 0:
        raise ValueError("by='source' needs a shifted run (shift_alpha > 0)")
    L = run.scores[score]
    bf = back_front_scores(np.moveaxis(L, 1, -1), combiner, c=run.cfg.c)            # (R, N)
    m = run.member
    R = bf.shape[0]
    if by == "class":
        labels = np.asarray(run.extra["candidate_label"])
        names = {str(int(v)): (labels == v, labels == v) for v in np.unique(labels)}
    elif by == "source":
        srcm = np.asarray(run.extra["candidate_source"], dtype=bool)
        names = {"old": (srcm, srcm), "new": (~srcm, ~srcm)}
    else:
        every = np.ones((R, m.size), bool)
        names = {str(i): (np.broadcast_to(run.entry == i, (R, m.size)), every)
                 for i in range(1, run.cfg.k + 1)}
    out = {}
    for name, (g_in, g_out) in names.items():
        vals = []
        for r in range(R):
            thr = batch_threshold(bf[r], 0.5)
            sel_in, sel_out = g_in[r] & m, g_out[r] & ~m
            if sel_in.any() and sel_out.any():
                vals.append(decision_metrics(bf[r, sel_in], bf[r, sel_out], thr)["accuracy"])
        out[name] = _mean_se(vals)
    return out


def game_result(run: UpdateRun, *, score: str = "loss", combiner: str = "diff") -> GameResult:
    """The candidates of every trial as one membership game (:class:`GameResult`).

    ``member`` is the candidate's truth, ``tau`` its update index (1..k; OUT candidates get the
    index the Fig. 2 experiment draws for them, uniform on 1..k from the run's seed), stats:
    ``back-front`` (the chosen combiner), ``final-loss`` (no update, :math:`-\\ell_k`).

    Parameters
    ----------
    run : UpdateRun
        The experiment's run.
    score : str
        Score type.
    combiner : {"diff", "ratio"}
        Combiner of the update attack.

    Returns
    -------
    GameResult
        The candidates as games.
    """
    L = run.scores[score]
    R = L.shape[0]
    bf = back_front_scores(np.moveaxis(L, 1, -1), combiner, c=run.cfg.c)
    rng = np.random.default_rng(as_seed_sequence(run.cfg.seed).spawn(5)[4])
    tau = np.where(run.member[None, :], run.entry[None, :],
                   rng.integers(1, run.cfg.k + 1, size=(R, run.member.size)))
    return GameResult(member=np.tile(run.member, R), tau=tau.ravel(),
                      stats={"back-front": bf.ravel(), "final-loss": -L[:, -1].ravel()},
                      seed=run.cfg.seed,
                      metadata={"game": "model-updates", "score": score, "combiner": combiner,
                                **{k_: v for k_, v in asdict(run.cfg).items()}})

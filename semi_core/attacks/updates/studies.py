"""The seed's questions on digits: Table 2 analogue, Q1 (accuracy vs n_up), Q2 (entry accuracy vs
k), Q3 (SGD-New vs SGD-Full), and the seed's printed numbers to put beside them.

Used by the report section (:mod:`semi_core.report.updates_section`) and by
``analysis/updates_study.py``; every function returns JSON-ready dicts.
"""

from __future__ import annotations

import time
from dataclasses import replace

import numpy as np
from scipy import stats

from .experiment import (
    UpdateConfig,
    check_shift_pairs,
    group_accuracy,
    load_update_data,
    run_experiment,
    subpop_targets,
    summarize,
)

__all__ = ["SEED_NUMBERS", "table2", "q1_curve", "q2_curve", "precision_tables",
           "improvement_test", "shift_tables", "SHIFT_KINDS", "small_dataset_curve"]

#: The shifts of Tables 4 / 5 (and 10): subpopulation Hard / Easy pairs, covariate Hard / Easy.
SHIFT_KINDS = ("subpop-hard", "subpop-easy", "covariate-hard", "covariate-easy")

#: Numbers printed by the seed (``combining_mi_updates``), for side-by-side display.
SEED_NUMBERS = {
    "table2_fmnist": {  # Table 2, FMNIST row (n_up = 1% of n0 = 10), accuracy
        "sgd-new": {"gap": 0.51, "loss": 0.53, "diff_batch": 0.68, "ratio_batch": 0.71,
                    "ratio_transfer": 0.72, "note": "one SGD-New cell (Diff/Transfer) is "
                    "missing from the seed's text"},
        "sgd-full": {"gap": 0.52, "loss": 0.51, "diff_batch": 0.63, "diff_transfer": 0.55,
                     "ratio_batch": 0.57, "ratio_transfer": 0.58},
    },
    "q1_fmnist": {"n_up=10": 0.79, "n_up=320": 0.70,
                  "gap_update_vs_no_update": {"n_up=10": 0.27, "n_up=320": 0.18}},
    "q2_cifar10_sgd_new": {"k=2": {"entry": 0.508, "random": 0.25, "x_random": 2.03},
                           "k=8": {"entry": 0.381, "random": 0.0625, "x_random": 6.10}},
    # Tables 4 (subpopulation, CIFAR-2) and 5 (covariate, CINIC-10), SGD-New, accuracy
    # (diff, ratio) at alpha = 0.2, 0.6, 1.0
    "table4_sgd_new": {"subpop-hard": {"0.2": (0.551, 0.559), "0.6": (0.602, 0.634),
                                       "1": (0.600, 0.687)},
                       "subpop-easy": {"0.2": (0.685, 0.685), "0.6": (0.574, 0.581),
                                       "1": (0.560, 0.562)}},
    "table5_sgd_new": {"covariate-hard": {"0.2": (0.628, 0.718), "0.6": (0.615, 0.694),
                                          "1": (0.596, 0.673)},
                       "covariate-easy": {"0.2": (0.595, 0.614), "0.6": (0.588, 0.616),
                                          "1": (0.589, 0.652)}},
    # Table 9 (App. C), CINIC-10 subclass pairs of Table 8, SGD-New, accuracy (diff, ratio)
    "table9_sgd_new": {"pairs:easy": {"0.2": (0.587, 0.643), "0.6": (0.566, 0.587),
                                      "1": (0.604, 0.625)},
                       "pairs:hard": {"0.2": (0.593, 0.630), "0.6": (0.583, 0.592),
                                      "1": (0.607, 0.630)}},
    # Table 10, SGD-Full, subpopulation shift, accuracy (diff, ratio)
    "table10_sgd_full": {"subpop-hard": {"0.2": (0.574, 0.597), "0.6": (0.578, 0.585),
                                         "1": (0.595, 0.666)},
                         "subpop-easy": {"0.2": (0.597, 0.606), "0.6": (0.570, 0.570),
                                         "1": (0.598, 0.598)}},
    "table3_fmnist_sgd_full_n10_prec_recall": {"loss": (0.53, 0.11), "batch": (0.78, 0.16),
                                              "transfer": (0.86, 0.24), "rank": (0.82, 0.28)},
    # Tables 3 (SGD-Full) and 7 (SGD-New), FMNIST rows: n_up = 1 % and 8 % of n0 (10, 80),
    # precision / recall of Loss, Batch, Transfer, Rank ("Test" in Table 7)
    "table3_fmnist": {"0.01": {"loss": (0.53, 0.11), "batch": (0.78, 0.16),
                               "transfer": (0.86, 0.24), "rank": (0.82, 0.28)},
                      "0.08": {"loss": (0.52, 0.10), "batch": (0.74, 0.15),
                               "transfer": (0.78, 0.13), "rank": (0.69, 0.25)}},
    "table7_fmnist": {"0.01": {"loss": (0.53, 0.11), "batch": (0.90, 0.18),
                               "transfer": (0.80, 0.48), "rank": (0.82, 0.38)},
                      "0.08": {"loss": (0.51, 0.10), "batch": (0.71, 0.14),
                               "transfer": (0.83, 0.09), "rank": (0.66, 0.20)}},
}


def improvement_test(attack, baseline) -> dict:
    r"""The seed's Table 2 marks (* p < 0.05, ** p < 0.01: an update attack "improves over the
    best no-update attack"): a one-sided paired t-test over trials of the per-trial accuracies
    (same runs), :math:`H_1: \mathbb E[a - b] > 0`. Returns ``p`` and the mark.

    Parameters
    ----------
    attack : array_like
        Per-trial accuracies of the update attack.
    baseline : array_like
        Per-trial accuracies of the best no-update attack (same trials).

    Returns
    -------
    dict
        ``p`` and ``mark``.
    """
    a = np.asarray(attack, dtype=float)
    b = np.asarray(baseline, dtype=float)
    if a.shape != b.shape or a.size < 2:
        raise ValueError(f"attack and baseline need the same >= 2 trials, got {a.shape}, "
                         f"{b.shape}")
    d = a - b
    if np.all(d == d[0]):  # no spread: the t statistic is undefined
        p = 0.0 if d[0] > 0 else 1.0
    else:
        p = float(stats.ttest_rel(a, b, alternative="greater").pvalue)
    return {"p": p, "mark": "**" if p < 0.01 else "*" if p < 0.05 else ""}


def precision_tables(*, trials: int = 20, seed: int = 0, fractions=(0.01, 0.08),
                     combiner: str = "ratio", progress=None) -> dict:
    """Tables 3 (SGD-Full) and 7 (SGD-New): precision / recall at the 10 % rules of the
    no-update Loss (median threshold) and of the update attack with Batch, Transfer and Rank
    thresholds, at ``n_up = fraction * n0`` for each fraction (the seed: 1 % and 8 %), with
    MI accuracy and the significance of its improvement over the best no-update attack
    (:func:`improvement_test`). Precisions are means over the trials in which they are
    defined (``n`` says how many).

    Parameters
    ----------
    trials : int
        Trials per setting.
    seed : int
        Root seed.
    fractions : sequence of float
        Update sizes as fractions of ``n0``.
    combiner : {"diff", "ratio"}
        Combiner of the update attack.
    progress : callable, optional
        ``progress(message)``.

    Returns
    -------
    dict
        Precision, recall and accuracy per update kind, fraction and rule.
    """
    n0 = UpdateConfig().n0
    out = {}
    for upd, table in (("sgd-full", "table3"), ("sgd-new", "table7")):
        rows = {}
        for f in fractions:
            n_up = max(2, int(round(f * n0)))
            run = run_experiment(_cfg(upd, trials=trials, seed=seed, n_up=n_up),
                                 progress=progress)
            row = {"n_up": n_up}
            for thr in ("batch", "transfer", "rank"):
                s = summarize(run, combiner=combiner, threshold=thr)
                nb = s["per_trial"]
                best_nb = max((nb["no_update_loss"], nb["no_update_gap"]), key=np.mean)
                row[thr] = {"precision_10": s["precision_at_10pct"],
                            "recall_10": s["recall_at_10pct"], "accuracy": s["mi_accuracy"],
                            "vs_no_update": improvement_test(nb["mi_accuracy"], best_nb)}
            row["loss"] = {"precision_10": s["no_update"]["loss_precision_at_10pct"],
                           "recall_10": s["no_update"]["loss_recall_at_10pct"],
                           "accuracy": s["no_update"]["loss"]}
            rows[f"{f:g}"] = row
        out[upd] = {"table": table, "rows": rows}
    return {"trials": trials, "n0": n0, "combiner": combiner, "tables": out}


def _cfg(update, *, trials, seed, **kw) -> UpdateConfig:
    return UpdateConfig(update=update, trials=trials, seed=seed, **kw)


def table2(*, trials: int = 20, seed: int = 0, n_up: int = 10, model: str = "logreg",
           progress=None) -> dict:
    """Single-update accuracy: no-update Gap / Loss vs ScoreDiff / ScoreRatio (loss score) with
    Batch and Transfer thresholds, for SGD-New and SGD-Full (mean +- SE over trials); also
    precision/recall at the 10 % rules (Table 3 / 7 analogue), pooled AUC and Table 2's
    significance mark of each update attack against the best no-update attack of its trials
    (``vs_no_update``, :func:`improvement_test`); ``per_class``: ScoreRatio's accuracy on each
    class's candidates (Fig. 12, :func:`~.experiment.group_accuracy`).

    Parameters
    ----------
    trials : int
        Trials per setting.
    seed : int
        Root seed.
    n_up : int
        Update size.
    model : str
        Architecture.
    progress : callable, optional
        ``progress(message)``.

    Returns
    -------
    dict
        Accuracies (mean, SE), precision/recall and AUC per update kind and attack.
    """
    out = {}
    for upd in ("sgd-new", "sgd-full"):
        t0 = time.perf_counter()
        run = run_experiment(_cfg(upd, trials=trials, seed=seed, n_up=n_up, model=model),
                             progress=progress)
        row = {}
        base = summarize(run)
        row["gap"] = base["no_update"]["gap"]
        row["loss"] = base["no_update"]["loss"]
        row["loss_prec_rec_10"] = {"precision_10": base["no_update"]["loss_precision_at_10pct"],
                                   "recall_10": base["no_update"]["loss_recall_at_10pct"]}
        nb = base["per_trial"]
        best_nb = max((nb["no_update_loss"], nb["no_update_gap"]), key=np.mean)
        for comb in ("diff", "ratio"):
            for thr in ("batch", "transfer", "rank"):
                s = summarize(run, combiner=comb, threshold=thr)
                row[f"{comb}_{thr}"] = {"accuracy": s["mi_accuracy"],
                                        "precision_10": s["precision_at_10pct"],
                                        "recall_10": s["recall_at_10pct"],
                                        "auc_pooled": s["auc"]["pooled"],
                                        "vs_no_update": improvement_test(
                                            s["per_trial"]["mi_accuracy"], best_nb)}
        # Fig. 12: the accuracy on each class (ScoreRatio, Batch)
        row["per_class"] = group_accuracy(run, "class", combiner="ratio")
        row["seconds"] = time.perf_counter() - t0
        out[upd] = row
    return {"n_up": n_up, "n0": UpdateConfig().n0, "trials": trials, "model": model,
            "rows": out}


def _best(run) -> tuple[str, dict]:
    best = None
    for comb in ("diff", "ratio"):
        s = summarize(run, combiner=comb)
        if best is None or s["mi_accuracy"]["mean"] > best[1]["mi_accuracy"]["mean"]:
            best = (comb, s)
    return best


def q1_curve(n_ups=(5, 10, 20, 40), *, trials: int = 20, seed: int = 0, progress=None) -> dict:
    """Q1/Q3: single-update accuracy (best of Diff/Ratio, loss score, Batch) and the no-update
    Loss baseline against ``n_up``, for SGD-New and SGD-Full.

    Parameters
    ----------
    n_ups : sequence of int
        Update sizes.
    trials : int
        Trials per size.
    seed : int
        Root seed.
    progress : callable, optional
        ``progress(message)``.

    Returns
    -------
    dict
        Accuracy rows per update kind.
    """
    rows = {}
    for upd in ("sgd-new", "sgd-full"):
        rows[upd] = []
        for n_up in n_ups:
            run = run_experiment(_cfg(upd, trials=trials, seed=seed, n_up=n_up),
                                 progress=progress)
            comb, s = _best(run)
            rows[upd].append({"n_up": n_up, "combiner": comb, "accuracy": s["mi_accuracy"],
                              "no_update_loss": s["no_update"]["loss"],
                              "auc_pooled": s["auc"]["pooled"], "seconds": run.seconds})
    return {"trials": trials, "rows": rows}


def q2_curve(ks=(1, 2, 4, 8), *, n_up: int = 10, trials: int = 20, seed: int = 0,
             progress=None) -> dict:
    """Q2/Q3: entry accuracy of Delta (top-``n_up`` assignment, loss diff and ratio) against
    ``k``, with the Random 1/(2k) and Generic p/k baselines, and Back-Front / Delta MI accuracy;
    ``entry_argmax`` / ``entry_index_order``: the same runs under Delta's other collision rules
    (each update's own top ``n_up``, a colliding point in its best update; updates filled in
    index order, as the authors' code does: ``assign_top_n(collisions=...)``);
    ``diff.per_entry``: Back-Front's accuracy on the members of each update against every test
    point (Fig. 11, :func:`~.experiment.group_accuracy`).

    Parameters
    ----------
    ks : sequence of int
        Numbers of updates.
    n_up : int
        Update size.
    trials : int
        Trials per k.
    seed : int
        Root seed.
    progress : callable, optional
        ``progress(message)``.

    Returns
    -------
    dict
        Entry and membership accuracies per update kind and k.
    """
    rows = {}
    for upd in ("sgd-new", "sgd-full"):
        rows[upd] = []
        for k in ks:
            run = run_experiment(_cfg(upd, trials=trials, seed=seed, n_up=n_up, k=k),
                                 progress=progress)
            per = {}
            for comb in ("diff", "ratio"):
                s = summarize(run, combiner=comb)
                per[comb] = {"entry": s["entry_accuracy"], "bf_mi": s["mi_accuracy"],
                             "delta_mi": s["delta_mi_accuracy"],
                             "baselines": s["entry_baselines"]}
                for rule in ("argmax", "index-order"):
                    per[comb][f"entry_{rule.replace('-', '_')}"] = summarize(
                        run, combiner=comb, collisions=rule)["entry_accuracy"]
            # Fig. 11: Back-Front (diff) on the members of each update against every test point
            per["diff"]["per_entry"] = group_accuracy(run, "entry", combiner="diff")
            rows[upd].append({"k": k, **per, "seconds": run.seconds})
    return {"n_up": n_up, "trials": trials, "rows": rows}


def shift_tables(*, updates=("sgd-new", "sgd-full"), shifts=SHIFT_KINDS, alphas=(0.2, 0.6, 1.0),
                 trials: int = 20, seed: int = 0, n0: int = 60, n_up: int = 10,
                 data=None, label_column: int | str = 0, pair_sets=None, executor=None,
                 progress=None) -> dict:
    """Tables 4 / 5 / 10 (§5.6): single-update ScoreRatio and ScoreDiff (loss score, Batch
    threshold) after a Hard / Easy subpopulation or covariate shift of strength ``alpha``:
    accuracy and precision / recall at the 10 % rule (mean +- SE over trials), the accuracy on
    the shifted ("new") and source ("old") candidates apart (§5.6's disparate impact,
    :func:`~.experiment.group_accuracy`), with the Hard / Easy subpopulation pairs used
    (:func:`~.experiment.subpop_targets`).

    Parameters
    ----------
    updates : sequence of {"sgd-new", "sgd-full"}
        Update rules.
    shifts : sequence of str
        Shift kinds (:data:`SHIFT_KINDS`).
    alphas : sequence of float
        Shift strengths in (0, 1].
    trials : int
        Trials per cell.
    seed : int
        Root seed.
    n0 : int
        Base training set size (the seed's 1 % update: small ``n0`` beside ``n_up``).
    n_up : int
        Update size.
    data : str or None
        The user's data file (10 classes) instead of digits.
    label_column : int or str
        Label column of a ``.csv`` / ``.txt`` data file (index or header name).
    pair_sets : dict of str to sequence of (int, int), optional
        Named sets of the user's (source, target) subclass pairs, one pair per class of the
        task (App. C's Tables 8 / 9: e.g. ``{"easy": ..., "hard": ...}``), run after
        ``shifts`` as rows ``"pairs:<name>"`` (shift ``subpop-pairs``).
    executor : None, int or Executor
        Where the runs train.
    progress : callable, optional
        ``progress(message)``.

    Returns
    -------
    dict
        ``rows`` (one per update, shift, alpha) and ``pairs`` (the subpopulation pairs).
    """
    from .experiment.data import _PAIR_SOURCES

    bad = [sh for sh in shifts if sh not in SHIFT_KINDS]
    if bad:
        raise ValueError(f"shifts must be among {SHIFT_KINDS}, got {bad}")
    if not alphas or any(not (0.0 < float(a) <= 1.0) for a in alphas):
        raise ValueError(f"alphas must be in (0, 1], got {list(alphas)}")
    if data is None:
        from semi_core.sgd.data import load_digits

        x, y = load_digits()
    else:
        x, y = load_update_data(data, label_column=label_column)
    named = {f"pairs:{k}": check_shift_pairs(v, f"pair_sets[{k!r}]")
             for k, v in (pair_sets or {}).items()}
    if not shifts and not named:
        raise ValueError("shift_tables needs shifts or pair_sets")
    rows, pairs = [], {}
    for upd in updates:
        for sh in (*shifts, *named):
            for al in alphas:
                cfg = UpdateConfig(update=upd, shift="subpop-pairs" if sh in named else sh,
                                   shift_pairs=named.get(sh), shift_alpha=float(al),
                                   trials=trials, n0=n0, n_up=n_up, seed=seed,
                                   dataset="file" if data else "digits", data=data,
                                   label_column=label_column)
                run = run_experiment(cfg, executor=executor, progress=progress)
                row = {"update": upd, "shift": sh, "alpha": float(al)}
                for comb in ("ratio", "diff"):
                    sm = summarize(run, combiner=comb)
                    row[comb] = {k: sm[k] for k in ("mi_accuracy", "precision_at_10pct",
                                                     "recall_at_10pct")}
                    # §5.6's disparate impact: shifted (new) vs source (old) candidates
                    row[comb]["new_old"] = group_accuracy(run, "source", combiner=comb)
                row["final_model_accuracy"] = run.test_accuracy[
                    "final_model_accuracy_on_test_points"]
                rows.append(row)
    for sh in shifts:
        if sh.startswith("subpop"):
            pairs[sh] = {"sources": list(_PAIR_SOURCES),
                         "targets": [int(t) for t in subpop_targets(x, y, sh)]}
    for sh, prs in named.items():
        pairs[sh] = {"sources": [a for a, _ in prs], "targets": [b for _, b in prs]}
    return {"trials": trials, "n0": n0, "n_up": n_up, "rows": rows, "pairs": pairs}


def small_dataset_curve(sizes=(10, 20, 40, 80), *, updates=("sgd-new", "sgd-full"),
                        trials: int = 20, seed: int = 0, progress=None) -> dict:
    r"""Fig. 9 (App. C): a model trained from scratch on ``n`` records, attacked without
    updates, against a model *updated* with ``n`` records, attacked with the update attack.

    Standalone: :math:`A_{\mathrm{train}}` (the base procedure) on ``n`` records of the learner's
    pool; candidates: those ``n`` and ``n`` other records; the no-update attack calls the half
    with the lowest loss IN (the Batch median rule; the seed uses LiRA here). Updated: the
    experiment with ``n_up = n`` (best of ScoreDiff / ScoreRatio, loss score, Batch). Accuracy
    mean +- SE over trials.

    Parameters
    ----------
    sizes : sequence of int
        Data set / update sizes ``n`` (>= 2).
    updates : sequence of {"sgd-new", "sgd-full"}
        Update rules of the updated models.
    trials : int
        Trials per size.
    seed : int
        Root seed.
    progress : callable, optional
        ``progress(message)``.

    Returns
    -------
    dict
        ``rows``: per size the standalone accuracy and the update attack's per update rule.
    """
    import torch

    from semi_core._rng import as_seed_sequence, child_seed
    from semi_core.sgd.models import build_model
    from semi_core.stats.update_combination import batch_threshold, decision_metrics

    from .experiment import check_training_work
    from .experiment.data import _pools
    from .experiment.metrics import _mean_se
    from .training import train_replicas

    sizes = [int(n) for n in sizes]
    if not sizes or min(sizes) < 2:
        raise ValueError(f"sizes must be integers >= 2, got {sizes}")
    base = UpdateConfig(trials=trials, seed=seed)
    check_training_work(replace(base, n0=max(10, *sizes)), trials * len(sizes),
                        "Fig. 9: training the standalone models")
    root = as_seed_sequence(seed)
    x_all, y_all, _, pools = _pools(base, np.random.default_rng(child_seed(root, 0)))
    n_classes = int(y_all.max()) + 1
    fm, theta_init, _ = build_model(base.model, x_all[:32], y_all[:32], n_classes,
                                    seed_seq=child_seed(root, 3), epochs=0, hidden=base.hidden)
    rows = []
    for j, n in enumerate(sizes):
        if 2 * n > len(pools["learner"]):
            raise ValueError(f"size {n} needs {2 * n} records, the learner's pool has "
                             f"{len(pools['learner'])}")
        rngs = [np.random.default_rng(child_seed(root, 1000 + 97 * j + r)) for r in range(trials)]
        idx = np.stack([g.choice(pools["learner"], size=2 * n, replace=False) for g in rngs])
        xt = torch.as_tensor(x_all[idx], dtype=torch.float64)
        yt = torch.as_tensor(y_all[idx], dtype=torch.long)
        thetas = train_replicas(fm, theta_init.expand(trials, -1).clone(), xt[:, :n], yt[:, :n],
                                base.base_cfg, rngs)
        with torch.no_grad():
            loss = np.stack([fm.losses(thetas[r], xt[r], yt[r]).numpy() for r in range(trials)])
        member = np.r_[np.ones(n, bool), np.zeros(n, bool)]
        acc = [decision_metrics(-loss[r, member], -loss[r, ~member],
                                batch_threshold(-loss[r], 0.5))["accuracy"]
               for r in range(trials)]
        row = {"n": n, "standalone_loss": _mean_se(acc)}
        for upd in updates:
            run = run_experiment(UpdateConfig(update=upd, n_up=n, trials=trials, seed=seed),
                                 progress=progress)
            comb, sm = _best(run)
            row[upd] = {"accuracy": sm["mi_accuracy"], "combiner": comb}
        rows.append(row)
    return {"trials": trials, "n0_updated": base.n0, "rows": rows}

"""The seed's questions on digits: Table 2 analogue, Q1 (accuracy vs n_up), Q2 (entry accuracy vs
k), Q3 (SGD-New vs SGD-Full), and the seed's printed numbers to put beside them.

Used by the report section (:mod:`semi_core.report.updates_section`) and by
``analysis/updates_study.py``; every function returns JSON-ready dicts.
"""

from __future__ import annotations

import time

from .experiment import UpdateConfig, run_experiment, summarize

__all__ = ["SEED_NUMBERS", "table2", "q1_curve", "q2_curve"]

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
    "table3_fmnist_sgd_full_n10_prec_recall": {"loss": (0.53, 0.11), "batch": (0.78, 0.16),
                                              "transfer": (0.86, 0.24), "rank": (0.82, 0.28)},
}


def _cfg(update, *, trials, seed, **kw) -> UpdateConfig:
    return UpdateConfig(update=update, trials=trials, seed=seed, **kw)


def table2(*, trials: int = 20, seed: int = 0, n_up: int = 10, model: str = "logreg",
           progress=None) -> dict:
    """Single-update accuracy: no-update Gap / Loss vs ScoreDiff / ScoreRatio (loss score) with
    Batch and Transfer thresholds, for SGD-New and SGD-Full (mean +- SE over trials); also
    precision/recall at the 10 % rules (Table 3 / 7 analogue) and pooled AUC."""
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
        for comb in ("diff", "ratio"):
            for thr in ("batch", "transfer", "rank"):
                s = summarize(run, combiner=comb, threshold=thr)
                row[f"{comb}_{thr}"] = {"accuracy": s["mi_accuracy"],
                                        "precision_10": s["precision_at_10pct"],
                                        "recall_10": s["recall_at_10pct"],
                                        "auc_pooled": s["auc"]["pooled"]}
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
    Loss baseline against ``n_up``, for SGD-New and SGD-Full."""
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
    ``entry_argmax``: the same runs under Delta's other collision rule (each update's own
    top ``n_up``, a colliding point in its best update: ``assign_top_n(collisions="argmax")``)."""
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
                per[comb]["entry_argmax"] = summarize(run, combiner=comb,
                                                      collisions="argmax")["entry_accuracy"]
            rows[upd].append({"k": k, **per, "seconds": run.seconds})
    return {"n_up": n_up, "trials": trials, "rows": rows}

"""Membership and entry inference from several model updates (Jagielski et al.,
``combining_mi_updates``): SGD-New / SGD-Full updates on the torch layer, LOSS and offline-LiRA
per-snapshot scores, ScoreDiff / ScoreRatio, Batch / Transfer / Rank thresholds, Back-Front and
Delta multi-update attacks, entry inference, and the heuristic-vs-optimal comparison on the
empirical-mean game (:mod:`.gap`).

The NumPy combiners, thresholds and the top-``n_up`` assignment live in
:mod:`semi_core.stats.update_combination` (one implementation, shared with the DP-SGD audit).
"""

from semi_core._extras import require

require("torch", __name__)  # a clear error naming the extra, before the imports below

from .experiment import (  # noqa: E402 - after the extra check
    DATASETS,
    MODELS,
    SCORES,
    THRESHOLDS,
    UpdateConfig,
    UpdateRun,
    game_result,
    lira_offline_loss,
    run_experiment,
    summarize,
)
from .training import UPDATES, TrainConfig, run_updates, train_replicas, update_mu  # noqa: E402

__all__ = ["DATASETS", "MODELS", "SCORES", "THRESHOLDS", "UPDATES", "UpdateConfig", "UpdateRun",
           "TrainConfig", "game_result", "lira_offline_loss", "run_experiment", "run_updates",
           "summarize", "train_replicas", "update_mu"]

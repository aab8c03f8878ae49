"""White-box and reference-model membership attacks on one trained model
(``iha_parameters_vs_loss``): IHA (Eq. 8) with exact or CG inverse-Hessian products, LOSS, SIF,
LiRA online/offline (per-example or global variance), RMIA online/offline (Zarifzadeh et al.
2024), the L-attack and LiRA-L.

:mod:`.scores` holds the score functions (NumPy/torch, no training); :mod:`.mechanism` the
trained models as a pool mechanism (``release_pool``) and as a ``T = 1``
:class:`~semi_core.mechanisms.base.Mechanism` releasing its parameters (Thm 3.2's log-LR as the
auditor's score); :mod:`.experiment` the seed's §4 protocol on bundled data, played by the game
runner's :func:`~semi_core.game.play.play_pool` with the attacks as pool scorers (one
:class:`~semi_core.game.result.GameResult` per run, ROC metrics with intervals, agreement
matrices); :mod:`.tables` the seed's Table 2-5, 8, 9 analogues. Needs the torch extra.
"""

from semi_core._extras import require

require("torch", __name__)  # a clear error naming the extra, before the imports below

from .experiment import (  # noqa: E402 - after the extra check
    ATTACKS,
    LOO_ATTACKS,
    AttackConfig,
    AttackRun,
    LeaveOneOutScorer,
    LiRAScorer,
    RMIAScorer,
    WhiteBoxScorer,
    agreement_matrix,
    attack_metrics,
    default_sgd,
    parse_attacks,
    run_attacks,
)
from .mechanism import TrainedModelMechanism  # noqa: E402
from .scores import (  # noqa: E402 - after the extra check
    IHA_TERMS,
    iha_score,
    iha_terms,
    l_attack,
    lira_l,
    lira_offline,
    lira_online,
    logit_confidence,
    loss_score,
    normal_logpdf,
    rmia,
    sif_score,
)

__all__ = ["ATTACKS", "LOO_ATTACKS", "AttackConfig", "AttackRun", "agreement_matrix",
           "attack_metrics", "default_sgd", "parse_attacks", "run_attacks", "WhiteBoxScorer",
           "LiRAScorer", "RMIAScorer", "LeaveOneOutScorer", "rmia",
           "IHA_TERMS", "iha_score", "iha_terms", "l_attack", "lira_l", "lira_offline",
           "lira_online", "logit_confidence", "loss_score", "normal_logpdf", "sif_score",
           "TrainedModelMechanism"]

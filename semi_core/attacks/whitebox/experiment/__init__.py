r"""The attack experiment of ``iha_parameters_vs_loss`` §4 on bundled data, played by the one
game runner (:func:`semi_core.game.play.play_pool`).

Protocol (seed §4.1, after Carlini et al. 2022): ``M`` models are trained with heavy-ball SGD
(:mod:`semi_core.sgd.momentum`; seed: :math:`\lambda=0.01,\ \mu=0.9,\ \alpha=5\cdot10^{-4}`),
each pool record in a model's training set with probability 1/2: the pool mechanism is a
:class:`~semi_core.attacks.whitebox.mechanism.TrainedModelMechanism` (batched training,
:mod:`semi_core.sgd.reference_models`). Model ``t`` (``t < target_models``) is a target; the
other ``M - 1`` are its reference models. The attacks are pool scorers: :class:`WhiteBoxScorer`
(IHA with exact or CG iHVPs, LOSS, SIF) and :class:`LiRAScorer` (LiRA online/offline). The
member bits and scores form one :class:`~semi_core.game.result.GameResult` (a one-shot,
``T = 1`` membership game), so ROC metrics (:func:`semi_core.audit.roc.roc_metrics`) and
certified :math:`\underline\varepsilon` (:func:`semi_core.audit.games.audit_game_result`)
apply as for any other game.

The leave-one-out attacks (L-attack, LiRA-L) are a second population game on the same runner:
its records are the first ``loo_targets`` targets of model 0, the rest of model 0's training set
is in every training set, and its membership matrix (chosen, not drawn) holds ``loo_models``
rows :math:`D` (model 0's own row: the leave-one-out set of every non-member) and
``loo_models`` rows :math:`D\setminus\{z\}` per member :math:`z`. :class:`LeaveOneOutScorer`
compares model 0's loss / confidence on :math:`z` with those models'. The result on that subset
(with every other attack's scores on it) is ``AttackRun.loo_result``.

Seeds: the pool subsample from stream ``(seed, 0)``, the population game from ``(seed, 1)``,
the leave-one-out game from ``(seed, 2)`` (:func:`semi_core._rng.child_seed`); the same seed
gives the same result on every executor (the result depends on ``chunk_size``, the models
trained per task).

Modules: :mod:`.config` (attack names, :class:`AttackConfig`, the SGD defaults), :mod:`.data`
(the pool of records), :mod:`.resources` (sizes, memory and time checked before training),
:mod:`.quantities` (:class:`WhiteBox`), :mod:`.scorers` (the attacks as pool scorers),
:mod:`.result` (:class:`AttackRun`, metrics) and :mod:`.run` (:func:`run_attacks`); this
package hands on their public names.
"""

from semi_core.attacks.whitebox.experiment.config import (
    ATTACKS,
    FILE_DATASETS,
    LIRA_ATTACKS,
    LOO_ATTACKS,
    MSE_CONVENTIONS,
    RMIA_ATTACKS,
    TRAIN_CHUNK,
    WHITEBOX_ATTACKS,
    AttackConfig,
    default_sgd,
    parse_attacks,
)
from semi_core.attacks.whitebox.experiment.quantities import WhiteBox
from semi_core.attacks.whitebox.experiment.result import AttackRun, agreement_matrix, attack_metrics
from semi_core.attacks.whitebox.experiment.run import run_attacks
from semi_core.attacks.whitebox.experiment.scorers import (
    LeaveOneOutScorer,
    LiRAScorer,
    RMIAScorer,
    WhiteBoxScorer,
)

__all__ = ["ATTACKS", "LOO_ATTACKS", "WHITEBOX_ATTACKS", "LIRA_ATTACKS", "AttackConfig",
           "WhiteBox", "WhiteBoxScorer", "LiRAScorer", "RMIAScorer", "LeaveOneOutScorer",
           "AttackRun", "RMIA_ATTACKS",
           "default_sgd", "run_attacks", "attack_metrics", "agreement_matrix", "parse_attacks",
           "TRAIN_CHUNK", "FILE_DATASETS", "MSE_CONVENTIONS"]

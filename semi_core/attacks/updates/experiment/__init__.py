r"""The seed's membership / entry-inference experiment with model updates on digits
(``combining_mi_updates`` §3.3 Fig. 2, §4, §5.2-5.6), trained with the project's torch layer.

Protocol (one *trial*; ``trials`` of them are trained at once as replicas):

1. the learner draws :math:`D_0` (``n0`` records), :math:`k` update sets :math:`D_1..D_k`
   (``n_up`` each) and :math:`k\,n_{up}` test points (the OUT points of the game) from its pool,
   and runs Alg. 1 (:func:`~semi_core.attacks.updates.training.run_updates`), recording
   :math:`f_0..f_k`;
2. the attacker scores every candidate (update and test points, balanced as in Fig. 2) on every
   snapshot with a *loss-like* score :math:`\ell_i(x)` (low = member): cross-entropy, or the
   offline-LiRA loss :math:`-\log\Phi((\phi_i(x)-\hat\mu_i(x))/\hat\sigma_i)` with
   :math:`\phi = \log(p_y/(1-p_y))` and the OUT Gaussian fitted on ``n_ref`` reference runs of
   the same procedure on the attacker's own data (per-example mean, pooled variance: few
   reference models, Carlini et al.'s fixed-variance variant);
3. single update / Back-Front: :func:`~semi_core.stats.update_combination.combine` of
   :math:`(\ell_0, \ell_k)`; Delta: pair scores and top-``n_up`` assignment without repetition
   (:func:`~semi_core.stats.update_combination.assign_top_n`);
4. thresholds: **Batch** (quantile of the trial's unlabeled candidates), **Transfer** (the same
   rule on a *shadow* run of the procedure on the attacker's data, whose split it knows),
   **Rank** (quantile of known-OUT points -- the attacker's own records -- scored on the target
   snapshots). Accuracy uses the median (``fraction_in = 0.5``), precision the seed's 10 %.

Data: scikit-learn's bundled digits, or the user's own file (``data``, :func:`load_update_data`:
a ``.csv`` / ``.txt`` with a label column, an ``.npz`` with ``X`` and ``y``, or a directory with
an IDX pair ``train-images-idx3-ubyte`` / ``train-labels-idx1-ubyte``), cut once per seed into a
learner pool, a shadow pool and a reference pool (disjoint). Distribution shift (§5.6,
BREEDS-like subpopulation shift; digits or any 10-class data): with ``shift_alpha > 0`` the
task is the binary "label >= 5"; :math:`D_0` comes from the source subclasses
{0,1,2 | 5,6,7}, update *and* test points from
:math:`(1-\alpha)\mathcal D_S + \alpha\mathcal D_T` with target subclasses {3,4 | 8,9}.

Per-trial metrics are averaged with standard errors over trials; AUC and TPR at low FPR are
also computed on the scores pooled over trials with bootstrap intervals
(:func:`semi_core.audit.roc.roc_metrics`).

Modules: :mod:`.config` (:class:`UpdateConfig`), :mod:`.data` (pools, shifts, each run's
draw), :mod:`.resources` (the work estimate), :mod:`.pool` (the runs as a pool mechanism and
their scorer), :mod:`.scores` (loss-like scores), :mod:`.run` (:func:`run_experiment`),
:mod:`.result` (:class:`UpdateRun`) and :mod:`.metrics` (:func:`summarize`,
:func:`game_result`); this package hands on their public names.
"""

from semi_core.attacks.updates.experiment.config import (
           DATASETS,
           MODELS,
           SCORES,
           SHIFTS,
           THRESHOLDS,
           UpdateConfig,
           check_shift_pairs,
)
from semi_core.attacks.updates.experiment.data import load_update_data, subpop_targets
from semi_core.attacks.updates.experiment.metrics import (
           GROUPINGS,
           NO_UPDATE_RULES,
           fewer_trials_notes,
           game_result,
           group_accuracy,
           summarize,
)
from semi_core.attacks.updates.experiment.pool import CandidateLossScorer, UpdateRunPool
from semi_core.attacks.updates.experiment.resources import check_training_work
from semi_core.attacks.updates.experiment.result import UpdateRun
from semi_core.attacks.updates.experiment.run import run_experiment, shared_executor
from semi_core.attacks.updates.experiment.scores import lira_offline_loss

__all__ = ["UpdateConfig", "UpdateRun", "UpdateRunPool", "CandidateLossScorer", "run_experiment",
           "check_training_work", "shared_executor", "summarize", "SCORES", "THRESHOLDS",
           "DATASETS", "MODELS", "load_update_data",
           "SHIFTS", "game_result", "lira_offline_loss", "subpop_targets", "fewer_trials_notes",
           "NO_UPDATE_RULES", "group_accuracy", "GROUPINGS",
           "check_shift_pairs"]

"""Privacy auditing: epsilon lower bounds from MI games, ground-truth epsilon, ROC metrics.

- :mod:`semi_core.audit.bounds`: :func:`epsilon_lower_bound` (``dkw``, ``cp``, ``gdp``),
  :func:`epsilon_lower_bound_from_counts`, vectorised :func:`audit_batch`.
- :mod:`semi_core.audit.ground_truth`: exact :math:`\\varepsilon(\\delta)` of mu-GDP and of the
  Gaussian mechanism (:func:`gdp_delta`, :func:`gdp_epsilon`).
- :mod:`semi_core.audit.roc`: :func:`roc_metrics` (TPR at FPR, AUC, advantage, intervals).
- :mod:`semi_core.audit.anytime_one_run`: :class:`AnytimeOneRun`, the anytime-valid one-run
  audit fed canary by canary during training.
- :mod:`semi_core.audit.score_auditor`: :class:`ScoreAuditor`, the one object for scores a user
  already has (bounds, TPR at FPR, ROC; a migration table from jax_privacy).
- :mod:`semi_core.audit.report`: :class:`AuditReport`, what every "audit X" entry point returns
  (per test and method: the bound, the largest certifiable bound, the assumption, the refutation
  of a claim); :func:`certify_game`, several methods on one game.
"""

from semi_core.audit.anytime_one_run import AnytimeOneRun, ClaimRefutedError
from semi_core.audit.bounds import (
    AuditResult,
    audit_batch,
    clopper_pearson_lower,
    clopper_pearson_upper,
    dkw_margin,
    epsilon_lower_bound,
    epsilon_lower_bound_from_counts,
)
from semi_core.audit.report import AuditReport, certify_game
from semi_core.audit.roc import RocMetrics, advantage, auc, roc_curve, roc_metrics, tpr_at_fpr
from semi_core.audit.score_auditor import ScoreAuditor
from semi_core.stats.gdp import (
    gaussian_mechanism_epsilon,
    gdp_delta,
    gdp_epsilon,
    gdp_log_delta,
)

__all__ = [
    "AnytimeOneRun",
    "AuditReport",
    "AuditResult",
    "ClaimRefutedError",
    "audit_batch",
    "certify_game",
    "clopper_pearson_lower",
    "clopper_pearson_upper",
    "dkw_margin",
    "epsilon_lower_bound",
    "epsilon_lower_bound_from_counts",
    "gaussian_mechanism_epsilon",
    "gdp_delta",
    "gdp_epsilon",
    "gdp_log_delta",
    "RocMetrics",
    "ScoreAuditor",
    "advantage",
    "auc",
    "roc_curve",
    "roc_metrics",
    "tpr_at_fpr",
]

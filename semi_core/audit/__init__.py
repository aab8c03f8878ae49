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

from __future__ import annotations

from typing import TYPE_CHECKING

from semi_core._lazy import lazy_names

#: public name -> the module that defines it, imported on first use (PEP 562): ``import
#: semi_core.audit.bounds`` (the CLI's light commands) does not pay for the one-run, ROC and
#: report modules.
_HOMES = {
    "AnytimeOneRun": "semi_core.audit.anytime_one_run",
    "ClaimRefutedError": "semi_core.audit.anytime_one_run",
    "AuditResult": "semi_core.audit.bounds",
    "audit_batch": "semi_core.audit.bounds",
    "clopper_pearson_lower": "semi_core.audit.bounds",
    "clopper_pearson_upper": "semi_core.audit.bounds",
    "dkw_margin": "semi_core.audit.bounds",
    "epsilon_lower_bound": "semi_core.audit.bounds",
    "epsilon_lower_bound_from_counts": "semi_core.audit.bounds",
    "AuditReport": "semi_core.audit.report",
    "certify_game": "semi_core.audit.report",
    "RocMetrics": "semi_core.audit.roc",
    "advantage": "semi_core.audit.roc",
    "auc": "semi_core.audit.roc",
    "roc_curve": "semi_core.audit.roc",
    "roc_metrics": "semi_core.audit.roc",
    "tpr_at_fpr": "semi_core.audit.roc",
    "ScoreAuditor": "semi_core.audit.score_auditor",
    "gaussian_mechanism_epsilon": "semi_core.stats.gdp",
    "gdp_delta": "semi_core.stats.gdp",
    "gdp_epsilon": "semi_core.stats.gdp",
    "gdp_log_delta": "semi_core.stats.gdp",
}

if TYPE_CHECKING:  # the eager imports, for type checkers and IDEs
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

__getattr__, __dir__ = lazy_names(__name__, _HOMES, globals(), __all__)

r"""Audit the scores you already have: :class:`ScoreAuditor`.

The one object for a user who holds attack scores of canaries included in training (members)
and excluded from it (non-members) -- from any pipeline, any model, any attack. It validates
the scores once (:func:`semi_core._validation.check_scores`, the one validator of every
certifying path) and answers with the toolkit's certified bounds and ROC metrics:

.. code-block:: python

    from semi_core.audit import ScoreAuditor

    auditor = ScoreAuditor(member_scores, nonmember_scores)     # higher = member
    auditor.epsilon_lower_bound(delta=1e-5, failure_prob=0.05)  # AuditResult (joint)
    auditor.tpr_at_fpr(0.01)
    auditor.roc()                                               # RocMetrics with intervals
    ScoreAuditor.from_losses(member_losses, nonmember_losses)   # lower = member

For users of ``jax_privacy.auditing.CanaryScoreAuditor`` (same convention: higher scores mean
"in"; ``significance`` is our ``failure_prob``):

=====================================================  ==============================================
jax_privacy                                            semi_core
=====================================================  ==============================================
``CanaryScoreAuditor(in_scores, out_scores)``          ``ScoreAuditor(member_scores, nonmember_scores)``
``epsilon_clopper_pearson(significance, delta)``       ``epsilon_lower_bound(delta=, failure_prob=, method="cp")``
``epsilon_from_gdp(significance, delta)``              ``epsilon_lower_bound(..., method="gdp")`` (assumes GDP)
``epsilon_one_run(significance, delta)``               ``epsilon_lower_bound(..., method="one-run")``
``epsilon_one_run_fdp(significance, delta)``           ``epsilon_lower_bound(.., method="one-run-fdp", tradeoff="gdp")``
(none)                                                 ``epsilon_lower_bound(..., method="joint")`` (default)
``tpr_at_given_fpr(fpr)``                              ``tpr_at_fpr(fpr, rule="hull")``
``attack_auroc()``                                     ``auc(rule="hull")``
(none)                                                 ``roc()``, ``max_certifiable_epsilon()``, ``summary()``
=====================================================  ==============================================

jax_privacy's ROC quantities are those of the ROC *convex hull* (tests that randomise between
two thresholds): ``rule="hull"`` (:func:`semi_core.audit.roc.roc_hull`). Our defaults are the
empirical curve's (``rule="step"``: the best single threshold with FPR at most ``fpr``, and the
Mann-Whitney AUC), which are never larger: on scores ``[0, 4, 6, 7]`` vs ``[1, 2, 3, 5]`` the
hull AUC is 0.8125 and the Mann-Whitney AUC 0.6875. :data:`JAX_PRIVACY_NAMES` holds the
table's ROC rows for code that ports calls.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from semi_core._table import Table
from semi_core._validation import check_scores
from semi_core.audit.bounds import DEFAULT_METHOD, METHODS, AuditResult, epsilon_lower_bound
from semi_core.audit.roc import RocMetrics, auc, roc_metrics, tpr_at_fpr
from semi_core.audit.selection import certifiable_epsilon_max

__all__ = ["ScoreAuditor", "JAX_PRIVACY_NAMES"]

#: ``jax_privacy.auditing.CanaryScoreAuditor`` method -> (:class:`ScoreAuditor` method, keyword
#: arguments) giving the same quantity (the ROC convex hull's; module docstring).
JAX_PRIVACY_NAMES: dict[str, tuple[str, dict[str, Any]]] = {
    "tpr_at_given_fpr": ("tpr_at_fpr", {"rule": "hull"}),
    "attack_auroc": ("auc", {"rule": "hull"}),
}


class ScoreAuditor:
    """Certified epsilon lower bounds and ROC metrics from member / non-member scores.

    Parameters
    ----------
    member_scores, nonmember_scores : array_like
        Attack scores of included and excluded canaries, **higher = member** (use
        :meth:`from_losses` for losses). Validated once, exactly as every certifying path
        validates (NaN, complex values, masked entries and empty inputs are refused).
    """

    def __init__(self, member_scores, nonmember_scores):
        self.member = check_scores(member_scores, "member_scores")
        self.nonmember = check_scores(nonmember_scores, "nonmember_scores")

    @classmethod
    def from_losses(cls, member_losses, nonmember_losses) -> ScoreAuditor:
        """Scores where **lower = member** (losses): negated, so higher = member.

        Parameters
        ----------
        member_losses : array_like
            Losses of the members (finite).
        nonmember_losses : array_like
            Losses of the non-members (finite).

        Returns
        -------
        ScoreAuditor
            The auditor of the negated losses.
        """
        return cls(-check_scores(member_losses, "member_losses"),
                   -check_scores(nonmember_losses, "nonmember_losses"))

    def __repr__(self) -> str:
        return f"ScoreAuditor(members={self.member.size}, non_members={self.nonmember.size})"

    def epsilon_lower_bound(self, *, delta: float, failure_prob: float = 0.05,
                            method: str = DEFAULT_METHOD, **kwargs) -> AuditResult:
        r"""Certified :math:`\underline\varepsilon` (:func:`semi_core.audit.bounds.epsilon_lower_bound`).

        With probability at least ``1 - failure_prob`` the mechanism that produced the scores
        is not :math:`(\varepsilon, \delta)`-DP for any :math:`\varepsilon` below the value.
        ``method`` is one of :data:`semi_core.audit.bounds.METHODS` (the result states the
        assumption it rests on); extra keyword arguments go to the bound.

        Parameters
        ----------
        delta : float
            The :math:`\delta` of the bound, in [0, 1).
        failure_prob : float
            Probability that the bound is wrong, in (0, 1).
        method : str
            One of :data:`semi_core.audit.bounds.METHODS`.
        **kwargs
            Further keywords of the method.

        Returns
        -------
        AuditResult
            The bound, the method, the assumption and its details.

        Examples
        --------
        >>> import numpy as np
        >>> rng = np.random.default_rng(0)
        >>> auditor = ScoreAuditor(rng.normal(1.5, 1.0, 2000), rng.normal(0.0, 1.0, 2000))
        >>> r = auditor.epsilon_lower_bound(delta=1e-5)
        >>> print(f"{r.epsilon_lower_bound:.3f}", r.method, r.assumption)
        2.850 joint iid-games
        >>> print(f"{auditor.max_certifiable_epsilon(delta=1e-5):.2f}")   # perfect separation
        5.61
        """
        return epsilon_lower_bound(self.member, self.nonmember, delta=delta,
                                   failure_prob=failure_prob, method=method, **kwargs)

    def max_certifiable_epsilon(self, *, delta: float, failure_prob: float = 0.05,
                                method: str = DEFAULT_METHOD, tradeoff=None) -> float:
        """The largest bound these class sizes could certify (perfect separation): a bound
        of 0 reads against it (``tradeoff``: ``one-run-fdp``'s curve, as in the bound).

        Parameters
        ----------
        delta : float
            The :math:`\\delta` of the bound, in [0, 1).
        failure_prob : float
            Probability that the bound is wrong, in (0, 1).
        method : str
            One of :data:`semi_core.audit.bounds.METHODS`.
        tradeoff : optional
            The trade-off curve of ``one-run-fdp``.

        Returns
        -------
        float
            The largest certifiable :math:`\\varepsilon`, >= 0.
        """
        kw = {} if tradeoff is None else {"tradeoff": tradeoff}
        return certifiable_epsilon_max(self.member.size, self.nonmember.size, delta=delta,
                                       failure_prob=failure_prob, method=method, **kw)

    def tpr_at_fpr(self, fpr, *, rule: str = "step"):
        """TPR at FPR ``fpr`` (:func:`semi_core.audit.roc.tpr_at_fpr`): the best single
        threshold (``"step"``) or the ROC convex hull (``"hull"``, jax_privacy's
        ``tpr_at_given_fpr``).

        Parameters
        ----------
        fpr : float or array_like
            FPR levels in [0, 1].
        rule : {"step", "hull"}
            Single threshold or ROC convex hull.

        Returns
        -------
        float or ndarray
            TPR at each level.
        """
        return tpr_at_fpr(self.member, self.nonmember, fpr, rule=rule)

    def auc(self, *, rule: str = "step") -> float:
        """Area under the ROC curve (:func:`semi_core.audit.roc.auc`): Mann-Whitney
        (``"step"``) or under the ROC convex hull (``"hull"``, jax_privacy's
        ``attack_auroc``).

        Parameters
        ----------
        rule : {"step", "hull"}
            Mann-Whitney or convex hull.

        Returns
        -------
        float
            The AUC in [0, 1].
        """
        return float(auc(self.member, self.nonmember, rule=rule))

    def roc(self, *, fpr=(0.001, 0.01, 0.1), interval: str = "binomial", **kwargs) -> RocMetrics:
        """TPR at each FPR and AUC with intervals (:func:`semi_core.audit.roc.roc_metrics`).

        Parameters
        ----------
        fpr : sequence of float
            FPR levels.
        interval : str
            Interval of the TPRs (:func:`semi_core.audit.roc.roc_metrics`).
        **kwargs
            Further keywords of :func:`~semi_core.audit.roc.roc_metrics`.

        Returns
        -------
        RocMetrics
            TPRs, AUC and intervals.
        """
        return roc_metrics(self.member, self.nonmember, fpr=fpr, interval=interval, **kwargs)

    def summary(self, *, delta: float = 1e-5, failure_prob: float = 0.05,
                methods=None) -> Table:
        """One row per certifying method: the bound, what it could certify at best and the
        assumption it rests on (TPR at 1 % / 0.1 % FPR and the AUC in the title).

        Parameters
        ----------
        delta : float
            The :math:`\\delta` of the bounds, in [0, 1).
        failure_prob : float
            Failure probability of each bound, in (0, 1).
        methods : sequence of str, optional
            Methods; None = every method except the one-run ones.

        Returns
        -------
        Table
            One row per method.
        """
        methods = ([m for m in METHODS if not m.startswith("one-run")] if methods is None
                   else list(methods))
        rows = []
        for m in methods:
            res = self.epsilon_lower_bound(delta=delta, failure_prob=failure_prob, method=m)
            d = res.to_dict()
            rows.append({"method": m, "epsilon_lower_bound": d["epsilon_lower_bound"],
                         "max_certifiable": self.max_certifiable_epsilon(
                             delta=delta, failure_prob=failure_prob, method=m),
                         "assumption": d.get("assumption", "")})
        t1, t01 = (float(v) for v in np.atleast_1d(self.tpr_at_fpr([0.01, 0.001])))
        title = (f"{self!r}: AUC {self.auc():.4f}, TPR@1% {t1:.4f}, TPR@0.1% {t01:.4f}; "
                 f"delta = {delta:g}, failure probability {failure_prob:g}")
        return Table(rows, title=title)

    def _repr_html_(self) -> str:
        return self.summary()._repr_html_()

    def to_dict(self) -> dict[str, Any]:
        """Counts and the headline metrics (JSON-safe).

        Returns
        -------
        dict
            ``members``, ``non_members`` and ``auc``.
        """
        return {"members": int(self.member.size), "non_members": int(self.nonmember.size),
                "auc": self.auc()}

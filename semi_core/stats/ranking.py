r"""Mann-Whitney AUC with its DeLong standard error (the one rank-statistic implementation).

.. math::

    \widehat{AUC}=\frac1{N_0N_1}\sum_{i,j}\big(\mathbb 1\{s^{(1)}_i>s^{(0)}_j\}
    +\tfrac12\mathbb 1\{s^{(1)}_i=s^{(0)}_j\}\big)
    =\frac{\sum_i r_i - N_1(N_1+1)/2}{N_1N_0},

with :math:`r_i` the mid-ranks of the member scores in the pooled sample; standard error by
DeLong's structural components,
:math:`\mathrm{se}^2=\operatorname{Var}(V_{10})/N_1+\operatorname{Var}(V_{01})/N_0`.
Used by :mod:`semi_core.audit.roc` (ROC metrics) and :mod:`semi_core.audit.bounds` (binormal fit).
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import rankdata

__all__ = ["mann_whitney_auc"]


def mann_whitney_auc(member_scores: np.ndarray, nonmember_scores: np.ndarray) -> tuple[float, float]:
    """AUC (ties count 1/2) and its DeLong standard error from validated 1-D float arrays.

    Returns
    -------
    auc, se : float
    """
    s1 = np.asarray(member_scores, dtype=float)
    s0 = np.asarray(nonmember_scores, dtype=float)
    n1, n0 = s1.size, s0.size
    allr = rankdata(np.concatenate([s1, s0]))
    r1, r0 = allr[:n1], allr[n1:]
    v10 = (r1 - rankdata(s1)) / n0  # fraction of non-members below each member (ties 1/2)
    v01 = 1.0 - (r0 - rankdata(s0)) / n1  # fraction of members above each non-member
    a = float(v10.mean())
    var = (v10.var(ddof=1) / n1 if n1 > 1 else 0.0) + (v01.var(ddof=1) / n0 if n0 > 1 else 0.0)
    return a, math.sqrt(max(var, 0.0))

r"""Mann-Whitney AUC with its DeLong standard error (the one rank-statistic implementation).

.. math::

    \widehat{AUC}=\frac1{N_0N_1}\sum_{i,j}\big(\mathbb 1\{s^{(1)}_i>s^{(0)}_j\}
    +\tfrac12\mathbb 1\{s^{(1)}_i=s^{(0)}_j\}\big)
    =\frac{\sum_i r_i - N_1(N_1+1)/2}{N_1N_0},

with :math:`r_i` the mid-ranks of the member scores in the pooled sample; standard error by
DeLong's structural components,
:math:`\mathrm{se}^2=\operatorname{Var}(V_{10})/N_1+\operatorname{Var}(V_{01})/N_0`.
Used by :mod:`semi_core.audit.roc` (ROC metrics) and :mod:`semi_core.audit.bounds` (binormal fit).

Threshold counting lives here too, once: :func:`count_at_or_below` (the counts
:math:`\#\{s\le\gamma\}` of sorted score rows at given thresholds: ROC points, Clopper-Pearson
bounds at pre-registered thresholds, the band's rank thresholds) and
:func:`pooled_threshold_counts` (the counts at every candidate threshold of a pooled sample,
for the searches over all thresholds).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["mann_whitney_auc", "mann_whitney_sorted", "average_ranks", "count_at_or_below",
           "pooled_threshold_counts"]


def average_ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks of a 1-D float array, ties given the average of their ranks (as
    ``scipy.stats.rankdata``, without importing scipy.stats: about 1 s of start-up).

    A tie group occupying sorted positions ``i..j-1`` gets ``(i + 1 + j) / 2``, exact in floating
    point.

    Parameters
    ----------
    values : ndarray
        Values to rank (flattened).

    Returns
    -------
    ndarray of float
        Ranks in 1..n, one per value, ties averaged.
    """
    a = np.asarray(values, dtype=float).ravel()
    # a tie group gets one value whatever the order inside it, so the sort need not be stable
    # (NumPy's default introsort is SIMD-accelerated: ~6x the stable merge sort)
    order = np.argsort(a)
    s = a[order]
    starts = np.flatnonzero(np.r_[True, s[1:] != s[:-1]]) if s.size else np.zeros(0, int)
    ends = np.r_[starts[1:], s.size]
    ranks = np.empty(s.size)
    ranks[order] = np.repeat((starts + 1 + ends) / 2.0, ends - starts)
    return ranks


def mann_whitney_auc(member_scores: np.ndarray, nonmember_scores: np.ndarray) -> tuple[float, float]:
    """AUC (ties count 1/2) and its DeLong standard error from validated 1-D float arrays.

    Sorts both samples and calls :func:`mann_whitney_sorted`.

    Parameters
    ----------
    member_scores : ndarray
        Scores of the members, 1-D, non-empty.
    nonmember_scores : ndarray
        Scores of the non-members, 1-D, non-empty.

    Returns
    -------
    auc, se : float
    """
    return mann_whitney_sorted(np.sort(np.asarray(member_scores, dtype=float)),
                               np.sort(np.asarray(nonmember_scores, dtype=float)))


def mann_whitney_sorted(member_sorted: np.ndarray, nonmember_sorted: np.ndarray
                        ) -> tuple[float, float]:
    r"""AUC (ties count 1/2) and its DeLong standard error from *ascending* 1-D float arrays.

    The structural components come from counts, not ranks: for member :math:`i`,
    :math:`c_i=\#\{s^{(0)}<s^{(1)}_i\}+\#\{s^{(0)}\le s^{(1)}_i\}` (one binary search per member
    in the sorted non-members; the non-members' counts by counting those, since
    :math:`s^{(1)}_i<s^{(0)}_j` iff :math:`\#\{s^{(0)}\le s^{(1)}_i\}\le j`), so

    .. math::

        V_{10,i}=\frac{c_i}{2N_0},\qquad
        \widehat{AUC}=\frac{\sum_i c_i}{2N_0N_1},\qquad
        \mathrm{se}^2=\frac{\operatorname{Var}(V_{10})}{N_1}+\frac{\operatorname{Var}(V_{01})}{N_0}.

    :math:`\sum_i c_i` is an exact integer, so the AUC is one correctly rounded division: it
    depends only on the two multisets, never on an order or a summation order. Equal to the
    mid-rank form :math:`(\sum_i r_i-N_1(N_1+1)/2)/(N_1N_0)` of the module docstring.

    Parameters
    ----------
    member_sorted : ndarray
        Scores of the members, 1-D, ascending, non-empty.
    nonmember_sorted : ndarray
        Scores of the non-members, 1-D, ascending, non-empty.

    Returns
    -------
    auc, se : float
    """
    s1 = np.asarray(member_sorted, dtype=float)
    s0 = np.asarray(nonmember_sorted, dtype=float)
    n1, n0 = s1.size, s0.size
    if n1 == 0 or n0 == 0:
        raise ValueError(f"need both members and non-members, got {n1} and {n0}")
    # members: non-members at or below (one binary search), strictly below (differs on ties)
    le1 = np.searchsorted(s0, s1, side="right")
    lt1 = le1
    tie = (le1 > 0) & (s0[np.maximum(le1 - 1, 0)] == s1)
    if tie.any():
        lt1 = le1.copy()
        lt1[tie] = np.searchsorted(s0, s1[tie], side="left")
    c1 = lt1 + le1
    # non-members by counting, no search: s1_i < s0_j iff le1[i] <= j, s1_i <= s0_j iff
    # lt1[i] <= j
    c0 = np.cumsum(np.bincount(le1, minlength=n0 + 1)[:n0])
    c0 = c0 + c0 if lt1 is le1 else c0 + np.cumsum(np.bincount(lt1, minlength=n0 + 1)[:n0])
    a = int(c1.sum(dtype=np.int64)) / (2 * n0 * n1)  # exact integer / exact integer
    v10 = c1 / (2.0 * n0)  # fraction of non-members below each member (ties 1/2)
    v01 = 1.0 - c0 / (2.0 * n1)  # fraction of members above each non-member (ties 1/2)
    var = (v10.var(ddof=1) / n1 if n1 > 1 else 0.0) + (v01.var(ddof=1) / n0 if n0 > 1 else 0.0)
    return a, math.sqrt(max(var, 0.0))


def count_at_or_below(sorted_rows: np.ndarray, thresholds: np.ndarray) -> np.ndarray:
    r"""Counts :math:`\#\{s\le\gamma\}` of sorted scores at thresholds (exact with ties).

    Parameters
    ----------
    sorted_rows : ndarray, shape (N,) or (B, N)
        Ascending scores (one row per batch).
    thresholds : ndarray, shape (K,) or (B, K)
        Thresholds: shared by every row (1-D) or one row of thresholds per batch (2-D).

    Returns
    -------
    ndarray of int64, shape (K,) or (B, K)
        ``out[..., k]`` is the number of scores of the row at or below ``thresholds[..., k]``.
    """
    a = np.asarray(sorted_rows)
    th = np.asarray(thresholds)
    if a.ndim == 1:
        return np.searchsorted(a, th, side="right").astype(np.int64)
    if th.ndim == 1:
        return np.stack([np.searchsorted(r, th, side="right") for r in a]).astype(np.int64)
    return np.stack([np.searchsorted(r, t, side="right") for r, t in zip(a, th)]).astype(np.int64)


def pooled_threshold_counts(member: np.ndarray, nonmember: np.ndarray) -> tuple:
    """For every candidate threshold v: members <= v and non-members <= v (rows are batches).

    Parameters
    ----------
    member, nonmember : ndarray, shapes (B, N1), (B, N0)

    Returns
    -------
    vals, mem_le, non_le, valid : ndarray, each (B, N1 + N0)
        Sorted pooled values, counts of members and non-members at or below each value, and
        a mask of valid thresholds (the last element of each tie group: a threshold must not
        split tied scores).
    """
    pooled = np.concatenate([member, nonmember], axis=1)
    is_mem = np.concatenate([np.ones_like(member, dtype=np.int64),
                             np.zeros_like(nonmember, dtype=np.int64)], axis=1)
    order = np.argsort(pooled, axis=1, kind="stable")
    vals = np.take_along_axis(pooled, order, axis=1)
    lab = np.take_along_axis(is_mem, order, axis=1)
    mem_le = np.cumsum(lab, axis=1)
    non_le = np.arange(1, pooled.shape[1] + 1)[None, :] - mem_le
    valid = np.ones_like(vals, dtype=bool)
    valid[:, :-1] = vals[:, 1:] != vals[:, :-1]
    return vals, mem_le, non_le, valid

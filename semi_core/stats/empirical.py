r"""Empirical error rates of threshold tests from Monte Carlo games, with standard errors.

A test rejects :math:`H_0` ("member") when its score exceeds a threshold. From ``R`` games
(seed Alg. 2; §5.1 uses the same empirical estimates) with :math:`N_0` non-member and
:math:`N_1` member scores:

TPR at a target FPR :math:`f`
    Threshold :math:`\hat\gamma = s^{(0)}_{(k+1)}`, the :math:`(k+1)`-th largest non-member
    score, :math:`k=\lfloor f N_0\rfloor`; a score is called "member" iff it is **strictly
    greater** than :math:`\hat\gamma` (**tie rule**: scores equal to the threshold are
    non-members, no randomisation). The achieved FPR
    :math:`\#\{s^{(0)}>\hat\gamma\}/N_0\le k/N_0\le f` is reported (it is smaller than
    :math:`k/N_0` only when non-member scores tie at :math:`\hat\gamma`, e.g. discrete data).
    :math:`\widehat{TPR}=\#\{s^{(1)}>\hat\gamma\}/N_1`.

    Standard errors: ``se_binomial`` :math:`=\sqrt{\widehat{TPR}(1-\widehat{TPR})/N_1}` treats
    the threshold as fixed; ``se`` adds the threshold's own sampling error by the delta method,

    .. math::

        \mathrm{se}^2 = \frac{\widehat{TPR}(1-\widehat{TPR})}{N_1}
            + \hat s^2\,\frac{f(1-f)}{N_0},

    with :math:`\hat s` the ROC slope estimated by the secant of the empirical ROC between
    FPR :math:`f\pm h`, :math:`h = 2\sqrt{f(1-f)/N_0}` (about two standard errors).

AUC
    Mann-Whitney: :math:`\widehat{AUC}=\frac1{N_0N_1}\sum_{i,j}\big(\mathbb 1\{s^{(1)}_i>s^{(0)}_j\}
    +\tfrac12\mathbb 1\{s^{(1)}_i=s^{(0)}_j\}\big)`, computed from mid-ranks; standard error
    by DeLong's structural components,
    :math:`\mathrm{se}^2=\operatorname{Var}(V_{10})/N_1+\operatorname{Var}(V_{01})/N_0`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import rankdata

__all__ = ["split_scores", "empirical_threshold", "tpr_at_fpr", "auc", "roc_curve",
           "summarize", "DEFAULT_FPRS"]

#: FPR levels reported by ``semi-core simulate``.
DEFAULT_FPRS = (0.1, 0.01, 0.001)


def split_scores(scores, member) -> tuple[np.ndarray, np.ndarray]:
    """``(member_scores, nonmember_scores)`` after validating shapes, NaN and both classes."""
    s = np.asarray(scores, dtype=np.float64)
    m = np.asarray(member)
    if s.ndim != 1 or m.shape != s.shape:
        raise ValueError(f"scores and member must be 1-D of equal length, got {s.shape} and "
                         f"{m.shape}")
    if m.dtype != np.bool_:
        if not np.isin(m, (0, 1)).all():
            raise ValueError("member must be boolean (or 0/1)")
        m = m.astype(bool)
    if np.isnan(s).any():
        raise ValueError("scores contain NaN")
    s1, s0 = s[m], s[~m]
    if s1.size == 0 or s0.size == 0:
        raise ValueError(f"need both members and non-members, got {s1.size} and {s0.size}")
    return s1, s0


def _check_fpr(fpr) -> np.ndarray:
    f = np.atleast_1d(np.asarray(fpr, dtype=np.float64))
    if f.ndim != 1 or np.isnan(f).any() or ((f <= 0) | (f >= 1)).any():
        raise ValueError(f"fpr must lie in (0, 1), got {fpr!r}")
    return f


def empirical_threshold(null_scores, fpr) -> tuple[np.ndarray, np.ndarray]:
    """Thresholds :math:`\\hat\\gamma` and achieved FPRs for target ``fpr`` (tie rule above).

    Parameters
    ----------
    null_scores : array_like, shape (N0,)
    fpr : float or array_like in (0, 1)

    Returns
    -------
    gamma, achieved : ndarray, same shape as ``atleast_1d(fpr)``
    """
    s0 = np.sort(np.asarray(null_scores, dtype=np.float64))[::-1]
    if s0.size == 0 or np.isnan(s0).any():
        raise ValueError("null_scores must be non-empty and free of NaN")
    f = _check_fpr(fpr)
    n0 = s0.size
    k = np.floor(f * n0 + 1e-9).astype(np.int64)  # guard: 0.01 * 1000 -> 9.999...
    gamma = np.where(k < n0, s0[np.minimum(k, n0 - 1)], -np.inf)
    asc = s0[::-1]
    achieved = (n0 - np.searchsorted(asc, gamma, side="right")) / n0
    return gamma, achieved


def _tpr_at(s1_sorted, gamma):
    return (s1_sorted.size - np.searchsorted(s1_sorted, gamma, side="right")) / s1_sorted.size


def tpr_at_fpr(scores, member, fpr=DEFAULT_FPRS) -> dict[str, np.ndarray]:
    """Empirical TPR at target FPRs with binomial and delta-method standard errors.

    Parameters
    ----------
    scores : array_like, shape (R,)
        Test statistic per game (higher = member).
    member : array_like of bool, shape (R,)
    fpr : float or array_like in (0, 1)

    Returns
    -------
    dict
        ``fpr`` (targets), ``fpr_achieved``, ``threshold``, ``tpr``, ``se``, ``se_binomial``,
        ``slope`` (arrays over ``fpr``) and ``n0``, ``n1``.
    """
    s1, s0 = split_scores(scores, member)
    f = _check_fpr(fpr)
    s1s = np.sort(s1)
    n0, n1 = s0.size, s1.size
    gamma, achieved = empirical_threshold(s0, f)
    tpr = _tpr_at(s1s, gamma)
    h = np.maximum(2.0 * np.sqrt(f * (1.0 - f) / n0), 1.0 / n0)
    g_lo, f_lo = empirical_threshold(s0, np.clip(f - h, 0.5 / n0, 1 - 1e-12))
    g_hi, f_hi = empirical_threshold(s0, np.clip(f + h, 0.5 / n0, 1 - 1e-12))
    with np.errstate(invalid="ignore", divide="ignore"):
        slope = (_tpr_at(s1s, g_hi) - _tpr_at(s1s, g_lo)) / (f_hi - f_lo)
    slope = np.where(np.isfinite(slope), slope, 0.0)
    se_bin = np.sqrt(tpr * (1.0 - tpr) / n1)
    se = np.sqrt(se_bin**2 + slope**2 * f * (1.0 - f) / n0)
    return {"fpr": f, "fpr_achieved": achieved, "threshold": gamma, "tpr": tpr, "se": se,
            "se_binomial": se_bin, "slope": slope, "n0": n0, "n1": n1}


def auc(scores, member) -> tuple[float, float]:
    """Mann-Whitney AUC (ties count 1/2) and its DeLong standard error.

    Returns
    -------
    auc, se : float
    """
    s1, s0 = split_scores(scores, member)
    n1, n0 = s1.size, s0.size
    allr = rankdata(np.concatenate([s1, s0]))
    r1, r0 = allr[:n1], allr[n1:]
    v10 = (r1 - rankdata(s1)) / n0  # fraction of non-members below each member (ties 1/2)
    v01 = 1.0 - (r0 - rankdata(s0)) / n1  # fraction of members above each non-member
    a = float(v10.mean())
    var = (v10.var(ddof=1) / n1 if n1 > 1 else 0.0) + (v01.var(ddof=1) / n0 if n0 > 1 else 0.0)
    return a, math.sqrt(max(var, 0.0))


def roc_curve(scores, member, fpr=None) -> tuple[np.ndarray, np.ndarray]:
    """Empirical ROC ``(fpr_achieved, tpr)`` on a log-spaced FPR grid (default 200 points)."""
    s1, s0 = split_scores(scores, member)
    if fpr is None:
        fpr = np.unique(np.clip(np.logspace(np.log10(1.0 / s0.size), -1e-3, 200), 1e-12,
                                1 - 1e-12))
    res = tpr_at_fpr(np.concatenate([s1, s0]),
                     np.concatenate([np.ones(s1.size, bool), np.zeros(s0.size, bool)]), fpr)
    return res["fpr_achieved"], res["tpr"]


def summarize(result, fprs=DEFAULT_FPRS, tests=None) -> dict[str, dict]:
    """Per-test TPR at ``fprs`` and AUC, each with its Monte Carlo standard error.

    Parameters
    ----------
    result : GameResult
        Has ``member`` and ``stats`` (dict of test name -> scores).
    fprs : sequence of float
    tests : sequence of str, optional
        Defaults to every statistic in ``result.stats``.

    Returns
    -------
    dict
        ``{test: {"tpr_at_fpr": {"0.01": {"tpr", "se", "se_binomial", "fpr_achieved",
        "threshold"}, ...}, "auc": value, "auc_se": value}}``.
    """
    out = {}
    for name in tests or list(result.stats):
        s = result.stats[name]
        t = tpr_at_fpr(s, result.member, fprs)
        a, a_se = auc(s, result.member)
        out[name] = {
            "tpr_at_fpr": {f"{f:g}": {"tpr": float(t["tpr"][i]), "se": float(t["se"][i]),
                                      "se_binomial": float(t["se_binomial"][i]),
                                      "fpr_achieved": float(t["fpr_achieved"][i]),
                                      "threshold": float(t["threshold"][i])}
                           for i, f in enumerate(t["fpr"])},
            "auc": a, "auc_se": a_se,
        }
    return out

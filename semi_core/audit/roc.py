r"""The one ROC module: TPR at FPR, AUC, advantage and ROC curves of membership scores,
with Monte Carlo standard errors or confidence intervals.

Conventions: higher score = member; every function takes ``(member_scores, nonmember_scores)``
(use :func:`split_scores` for a ``(scores, member)`` pair and ``GameResult.scores(test)`` for a
game); the test at threshold :math:`\gamma` is :math:`\mathbb 1(\text{score}>\gamma)`.

Tie rules (the ``rule`` option)
-------------------------------
``"step"`` (default; the conservative quantile)
    :math:`\mathrm{TPR}@f=\max\{\widehat{\mathrm{TPR}}(\gamma):\ \widehat{\mathrm{FPR}}(\gamma)\le f\}`,
    the best deterministic threshold test whose empirical FPR does not exceed ``f``. Its
    threshold is :math:`\hat\gamma=s^{(0)}_{(k+1)}`, the :math:`(k+1)`-th largest non-member score,
    :math:`k=\lfloor fN_0\rfloor` (the conservative empirical :math:`(1-f)`-quantile): scores equal
    to the threshold are non-members and ties are never split, so the achieved FPR
    :math:`\#\{s^{(0)}>\hat\gamma\}/N_0` can be below :math:`k/N_0` on discrete scores.
``"hull"``
    The ROC convex hull (upper concave envelope of the empirical points, including (0, 0) and
    (1, 1); :func:`roc_hull`) linearly interpolated at ``f``: achievable by randomising between
    two thresholds (SeMI seed App. H ROC curves; Fawcett 2006). With ``rule="hull"`` the AUC is
    the area under the hull (:func:`auc`), at least the Mann-Whitney AUC and at least 1/2.
    These are the quantities ``jax_privacy.auditing.CanaryScoreAuditor`` reports as
    ``tpr_at_given_fpr`` and ``attack_auroc``.

Standard errors (:func:`tpr_at_fpr_se`)
    ``se_binomial`` :math:`=\sqrt{\widehat{TPR}(1-\widehat{TPR})/N_1}` treats the threshold as
    fixed; ``se`` adds the threshold's own sampling error by the delta method,

    .. math::

        \mathrm{se}^2 = \frac{\widehat{TPR}(1-\widehat{TPR})}{N_1}
            + \hat s^2\,\frac{f(1-f)}{N_0},

    with :math:`\hat s` the ROC slope estimated by the secant of the empirical ROC between FPR
    :math:`f\pm h`, :math:`h = 2\sqrt{f(1-f)/N_0}` (about two standard errors).

AUC
    ``rule="step"``: Mann-Whitney (the area under the empirical ROC curve, ties counted one
    half) with DeLong's standard error (:mod:`semi_core.stats.ranking`). ``rule="hull"``: the
    area under the ROC convex hull,

    .. math::

        \mathrm{AUC}_{\text{hull}}=\sum_k \tfrac12\,(x_{k+1}-x_k)\,(y_k+y_{k+1})

    over the hull's vertices :math:`(x_k, y_k)`.

FPR resolution
    With :math:`N_0` non-member scores the empirical FPR moves in steps of
    :math:`1/N_0` (the *FPR resolution*, :func:`fpr_resolution`). A level :math:`f<1/N_0`
    gives :math:`k=\lfloor fN_0\rfloor=0`: the step rule's threshold is the largest
    non-member score, so the reported "TPR at :math:`f`" is the TPR at empirical FPR 0, not a
    measurement at :math:`f`. Every output that reports TPR at FPR says so: ``resolvable``
    (:func:`resolvable`, false for such levels) and ``fpr_resolution`` beside the rates
    (:func:`tpr_at_fpr_se`, :func:`summarize`, :class:`RocMetrics`); tables mark the cells
    (:func:`mark_unresolved`).
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass

import numpy as np

from semi_core._params import FPR_LEVELS
from semi_core._table import ResultDisplay, Table
from semi_core._validation import as_score_array, check_int, check_probability, check_scores
from semi_core.stats.binomial import clopper_pearson_lower, clopper_pearson_upper
from semi_core.stats.ranking import count_at_or_below, mann_whitney_auc, mann_whitney_sorted

__all__ = ["fpr_resolution", "resolvable", "mark_unresolved", "resolution_fields",
           "split_scores", "empirical_threshold", "roc_curve", "roc_hull", "auc", "advantage",
           "tpr_at_fpr",
           "tpr_at_fpr_se", "roc_metrics", "RocMetrics", "summarize", "RULES", "DEFAULT_FPRS"]

#: FPR levels reported by default (``semi-core simulate``, summaries): :data:`semi_core._params.FPR_LEVELS`.
DEFAULT_FPRS = FPR_LEVELS

#: Tie rules of :func:`tpr_at_fpr` (see the module docstring).
RULES = ("step", "hull")


def fpr_resolution(n_nonmember) -> float:
    r"""The attainable FPR resolution :math:`1/N_0` of ``n_nonmember`` non-member scores (the
    smallest non-zero empirical FPR).

    Parameters
    ----------
    n_nonmember : int
        Number of non-member scores, >= 1.

    Returns
    -------
    float
        :math:`1/N_0`.
    """
    n0 = check_int(n_nonmember, "n_nonmember", minimum=1)
    return 1.0 / n0


def resolvable(fpr, n_nonmember) -> np.ndarray:
    r"""Whether each FPR level can be resolved by ``n_nonmember`` non-members:
    :math:`\lfloor fN_0\rfloor\ge1`, i.e. :math:`f\ge1/N_0` (module docstring). Where it is
    false, TPR "at" ``f`` is the TPR at empirical FPR 0.

    Parameters
    ----------
    fpr : float or array_like
        FPR levels in [0, 1].
    n_nonmember : int
        Number of non-member scores, >= 1.

    Returns
    -------
    ndarray of bool, same shape as ``atleast_1d(fpr)``
    """
    n0 = check_int(n_nonmember, "n_nonmember", minimum=1)
    f = np.atleast_1d(np.asarray(fpr, dtype=np.float64))
    if np.isnan(f).any() or (f < 0).any() or (f > 1).any():
        raise ValueError(f"fpr must lie in [0, 1], got {fpr!r}")
    return np.floor(f * n0 + 1e-9) >= 1   # same guard as empirical_threshold


def mark_unresolved(text: str, is_resolvable: bool, mark: str = "*") -> str:
    """``text`` followed by ``mark`` when the cell's FPR level is not resolvable (table cells;
    a footnote should say "* FPR below 1/N0: TPR at FPR 0").

    Parameters
    ----------
    text : str
        The cell.
    is_resolvable : bool
        Whether its FPR level is resolvable.
    mark : str
        Appended when it is not.

    Returns
    -------
    str
        The cell, marked when unresolvable.
    """
    return text if is_resolvable else text + mark


def resolution_fields(fpr, n_nonmember) -> dict:
    """JSON fields that go beside TPR at ``fpr``: ``fpr_resolution`` (1/N0), ``resolvable``
    ``{"<f>": bool}`` and ``unresolved_fpr`` (the levels below the resolution).

    Parameters
    ----------
    fpr : float or array_like
        FPR levels in [0, 1].
    n_nonmember : int
        Number of non-member scores, >= 1.

    Returns
    -------
    dict
        ``fpr_resolution``, ``resolvable`` and ``unresolved_fpr``.
    """
    f = np.atleast_1d(np.asarray(fpr, dtype=np.float64))
    ok = resolvable(f, n_nonmember)
    return {"fpr_resolution": fpr_resolution(n_nonmember),
            "resolvable": {f"{v:g}": bool(o) for v, o in zip(f, ok, strict=True)},
            "unresolved_fpr": [float(v) for v, o in zip(f, ok, strict=True) if not o]}


def split_scores(scores, member) -> tuple[np.ndarray, np.ndarray]:
    """``(member_scores, nonmember_scores)`` from a ``(scores, member)`` pair, after validating shapes,
    NaN and both classes.

    Parameters
    ----------
    scores : array_like, shape (N,)
        Scores (higher = member), no NaN.
    member : array_like of bool, shape (N,)
        Membership of each score; both classes present.

    Returns
    -------
    member_scores, nonmember_scores : ndarray
        The scores of each class.
    """
    s = as_score_array(scores, "scores")  # a masked array is refused, not unmasked
    m = as_score_array(member, "member") if isinstance(member, np.ma.MaskedArray) else \
        np.asarray(member)
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
    s0 = np.sort(np.asarray(null_scores, dtype=np.float64))
    if s0.size == 0 or np.isnan(s0).any():
        raise ValueError("null_scores must be non-empty and free of NaN")
    return _threshold_sorted(s0, _check_fpr(fpr))


def _threshold_sorted(s0_asc, f):
    """:func:`empirical_threshold` of ascending non-member scores (validated ``f``)."""
    n0 = s0_asc.size
    k = np.floor(f * n0 + 1e-9).astype(np.int64)  # guard: 0.01 * 1000 -> 9.999...
    # the (k+1)-th largest score
    gamma = np.where(k < n0, s0_asc[n0 - 1 - np.minimum(k, n0 - 1)], -np.inf)
    achieved = (n0 - count_at_or_below(s0_asc, gamma)) / n0
    return gamma, achieved


def _tpr_at(s1_sorted, gamma):
    return (s1_sorted.size - count_at_or_below(s1_sorted, gamma)) / s1_sorted.size


def roc_curve(member_scores, nonmember_scores):
    r"""Empirical ROC points of the tests :math:`\mathbb 1(\text{score}>\gamma)`.

    Parameters
    ----------
    member_scores, nonmember_scores : array_like, 1-D, non-empty, no NaN

    Returns
    -------
    fpr, tpr, thresholds : ndarray
        Increasing FPR/TPR, starting at (0, 0) (threshold = the largest score) and ending at
        (1, 1) (threshold ``-inf``).

    Notes
    -----
    .. math::

        \widehat{\mathrm{TPR}}(\gamma)=\frac1{N_1}\sum_i \mathbb 1(s^1_i>\gamma),\quad
        \widehat{\mathrm{FPR}}(\gamma)=\frac1{N_0}\sum_j \mathbb 1(s^0_j>\gamma).
    """
    m = np.sort(check_scores(member_scores, "member_scores"))
    n = np.sort(check_scores(nonmember_scores, "nonmember_scores"))
    th = np.unique(np.concatenate([m, n]))[::-1]
    tpr = (m.size - count_at_or_below(m, th)) / m.size
    fpr = (n.size - count_at_or_below(n, th)) / n.size
    return (np.concatenate([fpr, [1.0]]), np.concatenate([tpr, [1.0]]),
            np.concatenate([th, [-np.inf]]))


def _hull_counts(m_asc, n_asc) -> tuple[np.ndarray, np.ndarray]:
    """Vertices of the ROC convex hull in counts ``(false positives, true positives)`` of
    ascending scores: exact integer arithmetic, strictly increasing false-positive counts from
    0 to ``N0`` (at each count only the largest true-positive count: a vertical step adds no
    area and the hull is read as a function of the FPR)."""
    th = np.unique(np.concatenate([m_asc, n_asc]))[::-1]
    tp = np.r_[m_asc.size - count_at_or_below(m_asc, th), m_asc.size]
    fp = np.r_[n_asc.size - count_at_or_below(n_asc, th), n_asc.size]
    last = np.r_[fp[1:] != fp[:-1], True]  # tp is non-decreasing along the curve
    hx: list[int] = []
    hy: list[int] = []
    for x, y in zip(fp[last].tolist(), tp[last].tolist(), strict=True):
        # drop the last vertex while it lies on or below the chord to the new point
        while len(hx) >= 2 and ((hx[-1] - hx[-2]) * (y - hy[-2])
                                - (hy[-1] - hy[-2]) * (x - hx[-2])) >= 0:
            hx.pop()
            hy.pop()
        hx.append(x)
        hy.append(y)
    return np.asarray(hx, dtype=np.int64), np.asarray(hy, dtype=np.int64)


def roc_hull(member_scores, nonmember_scores) -> tuple[np.ndarray, np.ndarray]:
    r"""Vertices of the ROC convex hull: the best TPR at each FPR over tests that randomise
    between two thresholds.

    .. math::

        \overline{\mathrm{TPR}}(f)=\max\{(1-\lambda)\,y_i+\lambda\,y_j:\
            (1-\lambda)\,x_i+\lambda\,x_j=f,\ \lambda\in[0,1]\}

    over the empirical ROC points :math:`(x_i, y_i)` (:func:`roc_curve`), the least concave
    majorant of the curve. Computed on integer counts (exact, a monotone chain).

    Parameters
    ----------
    member_scores, nonmember_scores : array_like
        Higher = member.

    Returns
    -------
    fpr, tpr : ndarray
        The vertices, FPR strictly increasing from 0 to 1 (the first vertex is the largest TPR
        at FPR 0, the last (1, 1)).
    """
    m = np.sort(check_scores(member_scores, "member_scores"))
    n = np.sort(check_scores(nonmember_scores, "nonmember_scores"))
    fp, tp = _hull_counts(m, n)
    return fp / n.size, tp / m.size


def _hull_auc(fpr, tpr) -> float:
    """Trapezoid area under hull vertices (exact: the hull is linear between them)."""
    return float(np.sum(np.diff(fpr) * (tpr[1:] + tpr[:-1])) / 2.0)


def auc(member_scores, nonmember_scores, *, se: bool = False, rule: str = "step"):
    r"""Area under the ROC curve: Mann-Whitney (ties counted one half) with ``rule="step"``,
    optionally with its DeLong standard error; the area under the ROC convex hull with
    ``rule="hull"``.

    .. math::

        \mathrm{AUC}=P(S_1>S_0)+\tfrac12P(S_1=S_0)
        =\frac{\sum_i r_i - N_1(N_1+1)/2}{N_1N_0},\qquad
        \mathrm{AUC}_{\text{hull}}=\int_0^1\overline{\mathrm{TPR}}(f)\,df

    (:func:`roc_hull`; :math:`\mathrm{AUC}_{\text{hull}}\ge\max(\mathrm{AUC}, 1/2)`).

    Parameters
    ----------
    member_scores, nonmember_scores : array_like
        Higher = member.
    se : bool
        Also return DeLong's standard error (``rule="step"`` only: the hull AUC has no such
        formula; bootstrap it with :func:`roc_metrics`).
    rule : {"step", "hull"}

    Returns
    -------
    float, or (float, float) with ``se=True``
    """
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    m = check_scores(member_scores, "member_scores")
    n = check_scores(nonmember_scores, "nonmember_scores")
    if rule == "hull":
        if se:
            raise ValueError("se=True needs rule='step' (DeLong); the hull AUC has no closed-form "
                             "standard error: use roc_metrics(..., rule='hull', "
                             "interval='bootstrap')")
        return _hull_auc(*roc_hull(m, n))
    a, a_se = mann_whitney_auc(m, n)
    return (a, a_se) if se else a


def advantage(member_scores, nonmember_scores) -> float:
    r"""Membership advantage :math:`\max_\gamma(\widehat{\mathrm{TPR}}-\widehat{\mathrm{FPR}})\ge0`.

    .. math::

        \mathrm{Adv}=\max_\gamma\big(\widehat{\mathrm{TPR}}(\gamma)-\widehat{\mathrm{FPR}}(\gamma)\big)

    Parameters
    ----------
    member_scores : array_like
        Scores of the members (higher = member).
    nonmember_scores : array_like
        Scores of the non-members.

    Returns
    -------
    float
        The advantage, in [0, 1].
    """
    fpr, tpr, _ = roc_curve(member_scores, nonmember_scores)
    return float(max(0.0, np.max(tpr - fpr)))


def tpr_at_fpr(member_scores, nonmember_scores, fpr, *, rule: str = "step"):
    r"""TPR at the given FPR level(s) (see the module docstring for the two rules).

    .. math::

        \mathrm{TPR}_{\text{step}}(f)=\max_{\gamma:\ \widehat{\mathrm{FPR}}(\gamma)\le f}
            \widehat{\mathrm{TPR}}(\gamma),\qquad
        \mathrm{TPR}_{\text{hull}}(f)=\overline{\mathrm{TPR}}(f)\ \text{(:func:`roc_hull`)}

    Parameters
    ----------
    member_scores, nonmember_scores : array_like
    fpr : float or array_like
        Levels in ``[0, 1]``.
    rule : {"step", "hull"}

    Returns
    -------
    ndarray
        Same shape as ``fpr``.
    """
    f = np.asarray(fpr, dtype=float)
    if np.isnan(f).any() or (f < 0).any() or (f > 1).any():
        raise ValueError("fpr must lie in [0, 1]")
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    if rule == "hull":
        hx, hy = roc_hull(member_scores, nonmember_scores)
        return np.interp(f, hx, hy)
    x, y, _ = roc_curve(member_scores, nonmember_scores)
    # x is non-decreasing; the last index with x <= f has the largest tpr among them
    idx = np.searchsorted(x, f, side="right") - 1
    return y[idx]


def tpr_at_fpr_se(member_scores, nonmember_scores, fpr=DEFAULT_FPRS) -> dict[str, np.ndarray]:
    """Empirical TPR at target FPRs (``step`` rule) with binomial and delta-method standard errors.

    Parameters
    ----------
    member_scores, nonmember_scores : array_like, 1-D
        Test statistic per game (higher = member) of the two classes.
    fpr : float or array_like in (0, 1)

    Returns
    -------
    dict
        ``fpr`` (targets), ``fpr_achieved``, ``threshold``, ``tpr``, ``se``, ``se_binomial``,
        ``slope``, ``resolvable`` (arrays over ``fpr``; :func:`resolvable`) and ``n0``, ``n1``,
        ``fpr_resolution`` (:math:`1/N_0`).
    """
    s1 = check_scores(member_scores, "member_scores")
    s0 = check_scores(nonmember_scores, "nonmember_scores")
    return _tpr_at_fpr_se_sorted(np.sort(s1), np.sort(s0), _check_fpr(fpr))


def _tpr_at_fpr_se_sorted(s1s, s0s, f) -> dict:
    """:func:`tpr_at_fpr_se` of ascending scores (each class sorted once for every level)."""
    n0, n1 = s0s.size, s1s.size
    gamma, achieved = _threshold_sorted(s0s, f)
    tpr = _tpr_at(s1s, gamma)
    h = np.maximum(2.0 * np.sqrt(f * (1.0 - f) / n0), 1.0 / n0)
    g_lo, f_lo = _threshold_sorted(s0s, np.clip(f - h, 0.5 / n0, 1 - 1e-12))
    g_hi, f_hi = _threshold_sorted(s0s, np.clip(f + h, 0.5 / n0, 1 - 1e-12))
    with np.errstate(invalid="ignore", divide="ignore"):
        slope = (_tpr_at(s1s, g_hi) - _tpr_at(s1s, g_lo)) / (f_hi - f_lo)
    slope = np.where(np.isfinite(slope), slope, 0.0)
    se_bin = np.sqrt(tpr * (1.0 - tpr) / n1)
    se = np.sqrt(se_bin**2 + slope**2 * f * (1.0 - f) / n0)
    return {"fpr": f, "fpr_achieved": achieved, "threshold": gamma, "tpr": tpr, "se": se,
            "se_binomial": se_bin, "slope": slope, "n0": n0, "n1": n1,
            "resolvable": resolvable(f, n0), "fpr_resolution": fpr_resolution(n0)}


@dataclass(frozen=True, repr=False)
class RocMetrics(ResultDisplay):
    """ROC summary with intervals at level ``confidence``.

    ``summary()`` is a tidy table, one row per metric (AUC, advantage, TPR at each FPR level)
    with its interval; ``to_frame()`` the same as a ``DataFrame``; ``to_dict()`` the fields.
    ``fpr_resolution`` is :math:`1/N_0`; ``resolvable[i]`` is false where ``fpr_levels[i]`` is
    below it (then ``tpr_at_fpr[i]`` is the TPR at empirical FPR 0; module docstring).
    """

    _repr_fields = ("auc", "advantage", "n_member", "n_nonmember")

    auc: float
    auc_interval: tuple[float, float] | None
    advantage: float
    advantage_interval: tuple[float, float]
    fpr_levels: tuple[float, ...]
    tpr_at_fpr: tuple[float, ...]
    tpr_at_fpr_interval: tuple[tuple[float, float], ...]
    rule: str
    interval: str
    confidence: float
    n_member: int
    n_nonmember: int
    fpr_resolution: float = float("nan")
    resolvable: tuple[bool, ...] = ()

    def to_dict(self) -> dict:
        """Plain ``dict`` (for JSON).

        Returns
        -------
        dict
            Every field by name.
        """
        return asdict(self)

    def summary(self) -> Table:
        """One row per metric: ``metric, fpr, value, lower, upper`` (the interval at level
        ``confidence``; ``None`` where there is none).

        Returns
        -------
        Table
            The metrics table.
        """

        def row(metric, fpr, value, iv):
            lo, hi = (None, None) if iv is None else (float(iv[0]), float(iv[1]))
            ok = None if fpr is None else bool(resolvable(fpr, self.n_nonmember)[0])
            return {"metric": metric, "fpr": fpr, "value": float(value), "lower": lo,
                    "upper": hi, "resolvable": ok}

        rows = [row("auc", None, self.auc, self.auc_interval),
                row("advantage", None, self.advantage, self.advantage_interval)]
        rows += [row("tpr", float(f), t, iv) for f, t, iv in
                 zip(self.fpr_levels, self.tpr_at_fpr, self.tpr_at_fpr_interval, strict=True)]
        return Table(rows, title=f"{self!r}: {self.interval} intervals at "
                                 f"{self.confidence:g}, rule {self.rule}, FPR resolution "
                                 f"1/{self.n_nonmember}")


def _step_thresholds(m, n, levels):
    """Thresholds of the step rule (the test attaining TPR@FPR) for each level."""
    x, _, th = roc_curve(m, n)
    return th[np.searchsorted(x, levels, side="right") - 1]


def roc_metrics(member_scores, nonmember_scores, *, fpr=(0.001, 0.01, 0.1), rule="step",
                interval="bootstrap", confidence=0.95, n_bootstrap=200, seed=0) -> RocMetrics:
    r"""AUC, advantage and TPR at FPR with bootstrap or exact binomial intervals.

    .. math::

        \mathrm{AUC}=P(S_1>S_0)+\tfrac12P(S_1=S_0),\quad
        \mathrm{Adv}=\max_\gamma(\mathrm{TPR}-\mathrm{FPR}),\quad
        \mathrm{TPR}@f\ \text{(rule ``step`` or ``hull``)}

    Parameters
    ----------
    member_scores, nonmember_scores : array_like
        Higher = member.
    fpr : sequence of float
        FPR levels in ``[0, 1]``.
    rule : {"step", "hull"}
        Of TPR at FPR and of the AUC (``hull``: the ROC convex hull's, :func:`roc_hull`; the
        advantage is the same under both: a linear function is largest at a vertex).
    interval : {"bootstrap", "binomial"}
        ``bootstrap``: percentile intervals from ``n_bootstrap`` resamples drawn within each
        class. ``binomial``: exact two-sided Clopper-Pearson intervals *conditional on the
        selected threshold* (step rule only): the TPR at that threshold, and for the
        advantage :math:`[\mathrm{TPR}_L-\mathrm{FPR}_U,\ \mathrm{TPR}_U-\mathrm{FPR}_L]`
        (Bonferroni over the 4 ends); no AUC interval.
    confidence : float
        In ``(0, 1)``.
    n_bootstrap : int
        ``>= 10`` for bootstrap.
    seed : int or SeedSequence

    Returns
    -------
    RocMetrics
    """
    m = check_scores(member_scores, "member_scores")
    n = check_scores(nonmember_scores, "nonmember_scores")
    conf = check_probability(confidence, "confidence")
    levels = np.atleast_1d(np.asarray(fpr, dtype=float))
    if levels.ndim != 1 or np.isnan(levels).any() or (levels < 0).any() or (levels > 1).any():
        raise ValueError("fpr must be a 1-D sequence of levels in [0, 1]")
    if rule not in RULES:
        raise ValueError(f"rule must be one of {RULES}, got {rule!r}")
    if interval not in ("bootstrap", "binomial"):
        raise ValueError(f"interval must be 'bootstrap' or 'binomial', got {interval!r}")
    a = auc(m, n, rule=rule)
    adv = advantage(m, n)
    tpr = tpr_at_fpr(m, n, levels, rule=rule)
    lo_q, hi_q = (1 - conf) / 2, 1 - (1 - conf) / 2
    if interval == "bootstrap":
        B = check_int(n_bootstrap, "n_bootstrap", minimum=10)
        from semi_core._rng import as_seed_sequence

        rng = np.random.Generator(np.random.PCG64(as_seed_sequence(seed)))
        boot = np.empty((B, 2 + levels.size))
        for b in range(B):
            mb = m[rng.integers(0, m.size, m.size)]
            nb = n[rng.integers(0, n.size, n.size)]
            boot[b, 0] = auc(mb, nb, rule=rule)
            boot[b, 1] = advantage(mb, nb)
            boot[b, 2:] = tpr_at_fpr(mb, nb, levels, rule=rule)
        q = np.quantile(boot, [lo_q, hi_q], axis=0)
        auc_iv = (float(q[0, 0]), float(q[1, 0]))
        adv_iv = (float(q[0, 1]), float(q[1, 1]))
        tpr_iv = tuple((float(q[0, 2 + i]), float(q[1, 2 + i])) for i in range(levels.size))
    else:
        if rule != "step":
            raise ValueError("interval='binomial' needs rule='step' (a single threshold per level)")
        auc_iv = None
        th = _step_thresholds(m, n, levels)
        k = (m[None, :] > th[:, None]).sum(axis=1)
        tl = clopper_pearson_lower(k, m.size, lo_q)
        tu = clopper_pearson_upper(k, m.size, lo_q)
        tpr_iv = tuple((float(x), float(y)) for x, y in zip(tl, tu, strict=True))
        x, y, th_all = roc_curve(m, n)
        i = int(np.argmax(y - x))
        k1 = int(round(y[i] * m.size))
        k0 = int(round(x[i] * n.size))
        q4 = (1 - conf) / 4
        adv_iv = (float(clopper_pearson_lower(k1, m.size, q4) - clopper_pearson_upper(k0, n.size, q4)),
                  float(clopper_pearson_upper(k1, m.size, q4) - clopper_pearson_lower(k0, n.size, q4)))
    return RocMetrics(
        auc=a, auc_interval=auc_iv, advantage=adv, advantage_interval=adv_iv,
        fpr_levels=tuple(float(v) for v in levels), tpr_at_fpr=tuple(float(v) for v in tpr),
        tpr_at_fpr_interval=tpr_iv, rule=rule, interval=interval, confidence=conf,
        n_member=int(m.size), n_nonmember=int(n.size),
        fpr_resolution=fpr_resolution(n.size),
        resolvable=tuple(bool(v) for v in resolvable(levels, n.size)),
    )


def summarize(result, fprs=DEFAULT_FPRS, tests=None, *, threads: int = 1) -> dict[str, dict]:
    """Per-test TPR at ``fprs`` and AUC, each with its Monte Carlo standard error.

    Each test's two score classes are sorted once; the thresholds, TPRs and the AUC with its
    DeLong s.e. (:func:`semi_core.stats.ranking.mann_whitney_sorted`, an exact integer count)
    are read from the sorted arrays. Tests are summarised independently, on ``threads``
    threads (NumPy's sorts and binary searches release the GIL); the result does not depend
    on ``threads``.

    Parameters
    ----------
    result : GameResult
        Has ``member`` and ``stats`` (dict of test name -> scores).
    fprs : sequence of float
    tests : sequence of str, optional
        Defaults to every statistic in ``result.stats``.
    threads : int
        Threads summarising tests at once (>= 1).

    Returns
    -------
    dict
        ``{test: {"tpr_at_fpr": {"0.01": {"tpr", "se", "se_binomial", "fpr_achieved",
        "threshold", "resolvable"}, ...}, "auc": value, "auc_se": value, "fpr_resolution":
        1/N0}}`` (``resolvable`` false: the level is below 1/N0 and ``tpr`` is the TPR at FPR 0).
    """
    threads = check_int(threads, "threads", minimum=1)
    f = _check_fpr(fprs)
    names = list(tests or list(result.stats))
    for name in names:  # a bad name fails before any work
        if name not in result.stats:
            raise ValueError(f"test must be one of {list(result.stats)}, got {name!r}")
    member = np.asarray(result.member)
    if member.dtype != np.bool_:
        raise ValueError(f"result.member must be boolean, got dtype {member.dtype}")
    i1, i0 = np.flatnonzero(member), np.flatnonzero(~member)  # once for every test
    tasks = [(result.stats[name], i1, i0, f) for name in names]
    if threads == 1 or len(names) <= 1:
        rows = [_summary_one(t) for t in tasks]
    else:
        with ThreadPoolExecutor(max_workers=min(threads, len(names))) as pool:
            rows = list(pool.map(_summary_one, tasks))
    return dict(zip(names, rows, strict=True))


def _summary_one(task) -> dict:
    """One test of :func:`summarize`: ``(scores, member index, non-member index, fprs)``."""
    scores, i1, i0, f = task
    s = np.asarray(scores)
    s1 = check_scores(np.take(s, i1), "member_scores")
    s0 = check_scores(np.take(s, i0), "nonmember_scores")
    s1.sort()  # in place: the taken copies are ours
    s0.sort()
    return _summary_sorted(s1, s0, f)


def _summary_sorted(s1s, s0s, f) -> dict:
    """One test's :func:`summarize` entry from ascending member / non-member scores."""
    t = _tpr_at_fpr_se_sorted(s1s, s0s, f)
    a, a_se = mann_whitney_sorted(s1s, s0s)
    return {
        "tpr_at_fpr": {f"{fv:g}": {"tpr": float(t["tpr"][i]), "se": float(t["se"][i]),
                                   "se_binomial": float(t["se_binomial"][i]),
                                   "fpr_achieved": float(t["fpr_achieved"][i]),
                                   "threshold": float(t["threshold"][i]),
                                   "resolvable": bool(t["resolvable"][i])}
                       for i, fv in enumerate(t["fpr"])},
        "auc": a, "auc_se": a_se, "fpr_resolution": t["fpr_resolution"],
    }

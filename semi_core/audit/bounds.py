r"""High-probability lower bounds on :math:`\varepsilon` from membership-inference scores.

Every bound here starts from Lemma 2.1 of the SeMI seed (Kairouz et al., 2015): if the
mechanism is :math:`(\varepsilon,\delta)`-DP, any test with Type I error :math:`\alpha` (FPR) and
Type II error :math:`\beta` (FNR) satisfies both

.. math::

    \alpha + e^{\varepsilon}\beta \ge 1-\delta, \qquad \beta + e^{\varepsilon}\alpha \ge 1-\delta,

so with simultaneous upper confidence bounds :math:`\bar\alpha\ge\alpha`, :math:`\bar\beta\ge\beta`
(holding with probability :math:`\ge 1-\xi`)

.. math::

    \varepsilon \ge \underline\varepsilon = \log\max\left[
        \frac{1-\delta-\bar\alpha}{\bar\beta},\ \frac{1-\delta-\bar\beta}{\bar\alpha}\right]

(both inequalities: ``sides="two"``; only the second, i.e. :math:`(\mathrm{TPR}-\delta)/\mathrm{FPR}`,
``sides="one"``). Tests are :math:`\hat B = \mathbb 1(\text{score} > \gamma)`; higher scores mean
"member". Reported bounds are clipped below at 0 (:math:`\varepsilon\ge0` always holds).

Methods
-------
``dkw``
    SeMI seed §5.1, Lemma 5.1 / App. G, corrected. Uniform (one-sided, Massart 1990) DKW bands
    on both error CDFs let the threshold be optimised over *all* values at no extra cost:
    :math:`P(\sup_\gamma (F(\gamma)-\hat F_N(\gamma))>\lambda)\le e^{-2N\lambda^2}` for
    :math:`e^{-2N\lambda^2}\le 1/2`. Splitting :math:`\xi` over the two CDFs gives the margin
    :math:`\lambda_i=\sqrt{\log(2/\xi)/(2N_i)}`.
    Seed discrepancy: see claims ``semi_sequential_mi:lem5.1`` and
    ``semi_sequential_mi:appG.dkw`` (``semi-core verify``).
``cp``
    Exact Clopper-Pearson upper bounds on :math:`\alpha` and :math:`\beta` at level
    :math:`\xi/(2K)` each, for ``K`` pre-registered thresholds (Bonferroni; ``K = 1`` when one
    threshold is given). With ``thresholds=None`` the scores are split at random: the threshold
    is chosen on one part and certified on the other with the full :math:`\xi` (no correction
    needed because the certifying part is independent of the choice; the choice is made among
    the thresholds of the rank family below, which keeps it fast).
    With ``thresholds="ranks"`` the pre-registered family is the non-member order statistics
    :math:`\gamma_g=X_{(N_0-g)}` at the counts :math:`g\in\mathcal G_{\mathrm{cp}}(N_0)`
    (every count :math:`\le4`, then growing by 30 %, both tails:
    ``bands.count_grid(N0, dense=4, ratio=1.3)``, ``K`` thresholds): :math:`\bar\alpha` is the
    exact Beta law of the uniform order statistic (the CP bound at count :math:`g`, see
    :mod:`semi_core.audit.bands`), :math:`\bar\beta` the CP bound given the non-member scores,
    each at :math:`\xi/(2K)` (Bonferroni over the family; no split, no simulation).
``one-run``
    Steinke, Nasr & Jagielski (2023): the scores are those of ``m`` canaries of *one* run, each
    included independently with probability 1/2 (members = included); see
    :mod:`semi_core.audit.one_run`.
``one-run-fdp``
    Mahloujifar, Melis & Chaudhuri (2024): the same one-run design, the f-DP hypothesis read
    through its whole trade-off curve (``tradeoff="eps-delta"``, the default: the exact
    :math:`(\varepsilon,\delta)` curve, valid for every mechanism; ``tradeoff="gdp"``,
    opt-in: the Gaussian curve, which assumes a :math:`\mu`-GDP mechanism and over-claims
    otherwise); see :mod:`semi_core.audit.one_run_fdp`.
``band``
    Tail-adaptive simultaneous bands (:mod:`semi_core.audit.bands`): on both error CDFs, the
    exact binomial (Clopper-Pearson) bound at one calibrated *local* level at every count of a
    pre-registered grid (equal local levels, Berk-Jones type), so the margin shrinks like
    :math:`\sqrt{\alpha(1-\alpha)/N}` in the tails where the bound is decided instead of staying
    at the DKW width. Simultaneous over all thresholds (failure :math:`\xi/2` per CDF, the
    calibration's simulation error included); valid for any score law, ties included.
``joint`` (default)
    One exact test of the privacy hypothesis :math:`\mathrm{TPR}\le e^\varepsilon
    \mathrm{FPR}+\delta` (and its mirror) per threshold of a pre-registered rank family
    (Bonferroni over its ``K`` thresholds): the false-positive rate at the rank threshold
    :math:`X_{(N_0-g)}` is bounded by a Beta order statistic and the member count is binomial
    given it, so the test's p-value is a Beta mixture of binomial tails, exact for any score law
    (:mod:`semi_core.audit.joint`). It does not bound the two rates separately, so it avoids
    the corner of the confidence rectangle that every other method here pays for; tightest of
    the distribution-free methods, and it spends its failure probability (over-claims occur
    at a rate up to :math:`\xi` where the scores sit on the privacy boundary, e.g. null scores).
``gdp``
    Assumes the mechanism is :math:`\mu`-GDP and that its privacy profile *is* the GDP curve
    (true for the Gaussian mechanism; a CLT approximation for DP-SGD; **false** e.g. for
    randomised response, where this method over-claims). Under :math:`\mu`-GDP every test has
    :math:`\beta\ge\Phi(\Phi^{-1}(1-\alpha)-\mu)`, so on the DKW event
    :math:`\mu\ge\max_\gamma[\Phi^{-1}(1-\bar\alpha(\gamma))-\Phi^{-1}(\bar\beta(\gamma))]
    =\underline\mu` and :math:`\underline\varepsilon=\varepsilon_{\mathrm{GDP}}(\underline\mu,\delta)`
    (Nasr et al. 2023 use the same conversion). The point fit
    :math:`\hat\mu=\sqrt2\,\Phi^{-1}(\mathrm{AUC})` (equal-variance binormal ROC) is reported too.
    ``gdp_fit="gaussian"`` further assumes equal-variance Gaussian *scores* and bounds
    :math:`\mu` by inverting the noncentral t law of the standardised mean difference: far
    tighter (no band margin), but only as valid as that parametric assumption.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

import numpy as np
from scipy.special import ndtri

from semi_core._rng import as_seed_sequence
from semi_core._table import ResultDisplay, Table
from semi_core._validation import (
    as_score_array,
    check_delta,
    check_failure_prob,
    check_int,
    check_score_matrix,
    check_scores,
)
from semi_core.audit._methods import DEFAULT_METHOD, METHODS  # their one home
from semi_core.audit.bands import band_candidates, count_grid, rank_threshold_counts
from semi_core.audit.joint import batch_joint
from semi_core.stats.binomial import clopper_pearson_lower, clopper_pearson_upper
from semi_core.stats.gdp import gdp_epsilon
from semi_core.stats.ranking import count_at_or_below, mann_whitney_auc, pooled_threshold_counts

__all__ = [
    "AuditResult",
    "epsilon_lower_bound",
    "epsilon_lower_bound_from_counts",
    "dkw_margin",
    "clopper_pearson_upper",
    "clopper_pearson_lower",
    "check_failure_prob",
    "check_scores",
    "METHODS",
    "ASSUMPTIONS",
    "assumption_of",
]

#: Methods of :func:`epsilon_lower_bound_from_counts` (one pre-registered test).
COUNT_METHODS = ("cp", "dkw", "gdp")
#: Pre-registered rank family of ``method="cp", thresholds="ranks"`` (see module docstring).
CP_RANK_DENSE, CP_RANK_RATIO = 4, 1.3
SIDES = ("one", "two")
GDP_FITS = ("tradeoff", "gaussian")

#: What each bound rests on: stable identifier -> sentence (``AuditResult.assumption`` and
#: ``assumption_text``). Only the distribution-free ones hold for every mechanism and score law.
ASSUMPTIONS = {
    "iid-games": "independent games: member scores i.i.d. and non-member scores i.i.d. "
                 "(distribution-free: any mechanism, any score law, ties included)",
    "iid-games+preregistered": "independent games (member scores i.i.d., non-member scores "
                               "i.i.d.) and thresholds fixed without looking at these scores "
                               "(distribution-free otherwise)",
    "mu-gdp": "the mechanism is mu-GDP: its trade-off curve is Gaussian (true for the Gaussian "
              "mechanism, a CLT approximation for DP-SGD, false e.g. for randomised response, "
              "where the bound over-claims); independent games",
    "gaussian-scores": "the scores are Gaussian with equal variances in both classes (hence a "
                       "mu-GDP trade-off); over-claims for other score laws; independent games",
    "one-run-bernoulli-half": "each canary was included independently with probability 1/2, "
                              "independently of everything else, and the guesses are a "
                              "function of the run's output only, their counts fixed before "
                              "the inclusion bits were seen (Steinke, Nasr & Jagielski 2023); "
                              "class sizes incompatible with Bernoulli(1/2) are refused",
    "one-run-bernoulli-half+mu-gdp": "each canary was included independently with probability "
                                     "1/2 and the guesses are a function of the run's output "
                                     "only, their counts fixed in advance (as one-run), and the "
                                     "mechanism is mu-GDP: its trade-off curve is Gaussian (true "
                                     "for the Gaussian mechanism, a CLT approximation for "
                                     "DP-SGD, false e.g. for randomised response); eps from "
                                     "eps_GDP(mu_lower, delta)",
}


def assumption_of(method: str, *, gdp_fit: str = "tradeoff", thresholds=None,
                  tradeoff=None) -> str:
    """The :data:`ASSUMPTIONS` key a bound of ``method`` rests on.

    Parameters
    ----------
    method : str
        A bound method of :data:`METHODS`.
    gdp_fit : {"tradeoff", "gaussian"}
        The ``gdp`` fit.
    thresholds : optional
        The ``cp`` thresholds.
    tradeoff : optional
        The ``one-run-fdp`` curve.

    Returns
    -------
    str
        A key of :data:`ASSUMPTIONS`.
    """
    if method == "one-run-fdp":
        # the Gaussian curve only when named; the default (None) is the (eps, delta) curve
        return ("one-run-bernoulli-half+mu-gdp" if tradeoff == "gdp"
                else "one-run-bernoulli-half")
    if method == "gdp":
        return "gaussian-scores" if gdp_fit == "gaussian" else "mu-gdp"
    if method == "one-run":
        return "one-run-bernoulli-half"
    if method == "cp" and thresholds is not None and not isinstance(thresholds, str):
        return "iid-games+preregistered"
    return "iid-games"


@dataclass(frozen=True, repr=False)
class AuditResult(ResultDisplay):
    r"""Outcome of one audit.

    Prints as one line; ``summary()`` is a table of the certified bound and the rates it
    rests on, ``to_frame()`` the same as a ``DataFrame``, ``to_dict()`` every field.

    Attributes
    ----------
    epsilon_lower_bound : float
        Certified :math:`\underline\varepsilon\ge0` (holds with probability
        ``>= 1 - failure_prob``; for ``gdp`` under the GDP assumption).
    threshold : float
        The test is ``score > threshold``: the threshold attaining the maximum (even when the
        bound is clipped to 0); ``nan`` from counts.
    tpr, fpr : float
        Empirical rates of the test on the scores used for certification.
    tpr_lower, fpr_upper : float or None
        Confidence bounds (``1 - beta_upper`` and ``alpha_upper``); None for ``one-run`` and
        ``one-run-fdp``, which bound the number of correct guesses instead.
    fnr_upper, tnr_lower : float or None
        ``beta_upper`` and ``1 - alpha_upper`` (None as above).
    direction : str
        ``"tpr/fpr"`` (second inequality of Lemma 2.1) or ``"tnr/fnr"`` (first), whichever
        attains the bound.
    local_level_member, local_level_nonmember : float or None
        ``band``: the calibrated per-point levels of the two bands.
    n_guesses, n_correct : int or None
        ``one-run``, ``one-run-fdp``: the pre-registered number of guesses
        :math:`k_++k_-` (canaries of a tied group straddling a cut are abstained on and count
        as wrong, :func:`~semi_core.audit.one_run.one_run_counts`) and correct guesses.
    inclusion_balance_p_value : float or None
        ``one-run``: two-sided exact binomial p-value of the class sizes under Bernoulli(1/2)
        inclusion (:func:`~semi_core.audit.one_run.inclusion_balance_p_value`).
    assumption : str
        What the bound rests on: a key of :data:`ASSUMPTIONS` (``"iid-games"``,
        ``"iid-games+preregistered"``, ``"mu-gdp"``, ``"gaussian-scores"``,
        ``"one-run-bernoulli-half"``, ``"one-run-bernoulli-half+mu-gdp"``).
    assumption_text : str
        The same in words.
    """

    epsilon_lower_bound: float
    threshold: float
    tpr: float
    fpr: float
    tpr_lower: float | None
    fpr_upper: float | None
    fnr_upper: float | None
    tnr_lower: float | None
    method: str
    sides: str
    direction: str
    delta: float
    failure_prob: float
    n_member: int
    n_nonmember: int
    margin_member: float | None = None
    margin_nonmember: float | None = None
    n_thresholds: int | None = None
    mu_lower: float | None = None
    mu_hat: float | None = None
    local_level_member: float | None = None
    local_level_nonmember: float | None = None
    n_guesses: int | None = None
    n_correct: int | None = None
    inclusion_balance_p_value: float | None = None
    assumption: str = ""
    assumption_text: str = ""

    def __post_init__(self):
        if self.assumption not in ASSUMPTIONS:
            raise ValueError(f"assumption must be one of {sorted(ASSUMPTIONS)}, got "
                             f"{self.assumption!r}")
        if not self.assumption_text:
            object.__setattr__(self, "assumption_text", ASSUMPTIONS[self.assumption])

    _repr_fields = ("epsilon_lower_bound", "method", "delta", "failure_prob", "n_member",
                    "n_nonmember", "assumption")

    def to_dict(self) -> dict:
        """Plain ``dict`` (for JSON).

        Returns
        -------
        dict
            Every field by name.
        """
        return asdict(self)

    def summary(self) -> Table:
        """One row per quantity (``quantity, value``): the certified bound, the test's
        empirical rates and their confidence bounds, the sample sizes and the assumption.

        Returns
        -------
        Table
            One row per quantity.
        """
        keys = ("epsilon_lower_bound", "tpr", "tpr_lower", "fpr", "fpr_upper", "threshold",
                "direction", "n_member", "n_nonmember", "n_guesses", "n_correct", "mu_lower")
        rows = [{"quantity": k, "value": getattr(self, k)} for k in keys
                if getattr(self, k) is not None]
        return Table(rows, title=f"{self!r}\n{self.assumption_text}")


def _check_choice(value, name, allowed):
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


# --------------------------------------------------------------------------- building blocks
def dkw_margin(n, failure_prob) -> np.ndarray:
    r"""One-sided DKW-Massart margin for an empirical CDF of ``n`` i.i.d. values.

    .. math::

        P\Big(\sup_\gamma\,(F(\gamma)-\hat F_n(\gamma))>\lambda\Big)\le e^{-2n\lambda^2}
        \;\Rightarrow\; \lambda=\sqrt{\frac{\log(1/p)}{2n}},

    valid for :math:`p\le1/2` (Massart, 1990). Here ``failure_prob`` is the *per-CDF*
    probability :math:`p`; :func:`epsilon_lower_bound` uses :math:`p=\xi/2`.
    (Seed §5.1 differs: see claim ``semi_sequential_mi:lem5.1``, ``semi-core verify``.)

    Parameters
    ----------
    n : int or array_like of int
        Sample sizes, ``>= 1``.
    failure_prob : float
        In ``(0, 0.5]``.

    Returns
    -------
    ndarray
    """
    p = check_failure_prob(failure_prob)
    n = np.asarray(n, dtype=float)
    if (n < 1).any():
        raise ValueError("n must be >= 1")
    return np.sqrt(np.log(1.0 / p) / (2.0 * n))


def _log_ratio_bound(alpha_up, beta_up, delta, sides):
    """log of the Lemma 2.1 ratios; returns (value, direction index 0=tpr/fpr, 1=tnr/fnr)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        num2 = 1.0 - delta - beta_up
        r2 = np.where(num2 > 0, np.log(np.maximum(num2, 1e-300)) - np.log(alpha_up), -np.inf)
        if sides == "one":
            return r2, np.zeros(np.shape(r2), dtype=int)
        num1 = 1.0 - delta - alpha_up
        r1 = np.where(num1 > 0, np.log(np.maximum(num1, 1e-300)) - np.log(beta_up), -np.inf)
    return np.maximum(r1, r2), (r1 > r2).astype(int)


def _pick(arr, idx):
    return arr[np.arange(arr.shape[0]), idx]


# --------------------------------------------------------------------------- batch engines
def _batch_dkw(member, nonmember, delta, xi, sides, *, gdp=False):
    """Vectorised DKW (or DKW + GDP) audit of B independent score sets (rows)."""
    n1, n0 = member.shape[1], nonmember.shape[1]
    e1 = float(dkw_margin(n1, xi / 2))
    e0 = float(dkw_margin(n0, xi / 2))
    vals, mem_le, non_le, valid = pooled_threshold_counts(member, nonmember)
    alpha_hat = (n0 - non_le) / n0
    beta_hat = mem_le / n1
    a_up = np.minimum(1.0, alpha_hat + e0)
    b_up = np.minimum(1.0, beta_hat + e1)
    if gdp:
        with np.errstate(invalid="ignore"):
            crit = -ndtri(a_up) - ndtri(b_up)
        crit = np.where(valid & np.isfinite(crit), crit, -np.inf)
        direction = np.zeros(crit.shape, dtype=int)
    else:
        crit, direction = _log_ratio_bound(a_up, b_up, delta, sides)
        crit = np.where(valid, crit, -np.inf)
    best = np.argmax(crit, axis=1)
    out = {
        "crit": _pick(crit, best), "threshold": _pick(vals, best),
        "alpha_hat": _pick(alpha_hat, best), "beta_hat": _pick(beta_hat, best),
        "alpha_up": _pick(a_up, best), "beta_up": _pick(b_up, best),
        "direction": _pick(direction, best), "e0": e0, "e1": e1,
    }
    return out


def _batch_band(member, nonmember, delta, xi, sides):
    """Tail-adaptive band audit of B score sets (rows): the best of the candidate thresholds."""
    c = band_candidates(member, nonmember, xi)
    crit, direction = _log_ratio_bound(c["alpha_up"], c["beta_up"], delta, sides)
    best = np.argmax(crit, axis=1)
    return {
        "crit": _pick(crit, best), "threshold": _pick(c["threshold"], best),
        "alpha_hat": _pick(c["alpha_hat"], best), "beta_hat": _pick(c["beta_hat"], best),
        "alpha_up": _pick(c["alpha_up"], best), "beta_up": _pick(c["beta_up"], best),
        "direction": _pick(direction, best), "ll0": c["cal0"].local_level,
        "ll1": c["cal1"].local_level,
    }


def _rank_cp(member, nonmember, grid, level):
    """CP bounds at the rank thresholds X_(N0-g), g in ``grid``, each at ``level`` (rows)."""
    n1, n0 = member.shape[1], nonmember.shape[1]
    gam, le0, le1 = rank_threshold_counts(member, nonmember, grid)
    k0 = n0 - le0
    # alpha: the Beta law of V_(g+1) at the smallest grid count >= k0 (k0 < g only with ties)
    g_ceil = grid[np.searchsorted(grid, k0, side="left")]
    a_up = clopper_pearson_upper(g_ceil, n0, level)
    b_up = clopper_pearson_upper(le1, n1, level)
    return gam, k0 / n0, le1 / n1, a_up, b_up


def _batch_cp_ranks(member, nonmember, delta, xi, sides):
    """CP over the pre-registered rank family, Bonferroni over its K thresholds (rows)."""
    grid = count_grid(nonmember.shape[1], dense=CP_RANK_DENSE, ratio=CP_RANK_RATIO)
    gam, a_hat, b_hat, a_up, b_up = _rank_cp(member, nonmember, grid, xi / (2 * grid.size))
    crit, direction = _log_ratio_bound(a_up, b_up, delta, sides)
    best = np.argmax(crit, axis=1)
    return {
        "crit": _pick(crit, best), "threshold": _pick(gam, best),
        "alpha_hat": _pick(a_hat, best), "beta_hat": _pick(b_hat, best),
        "alpha_up": _pick(a_up, best), "beta_up": _pick(b_up, best),
        "direction": _pick(direction, best), "n_thresholds": int(grid.size),
        "n1": member.shape[1], "n0": nonmember.shape[1],
    }


def _gaussian_mu_lower(member, nonmember, xi):
    r"""Exact lower confidence bound on :math:`\mu` for equal-variance Gaussian scores (rows).

    :math:`t=(\bar s_1-\bar s_0)/(s_p\sqrt{1/N_1+1/N_0})` is noncentral-t with
    :math:`N_1+N_0-2` degrees of freedom and noncentrality :math:`\mu/\sqrt{1/N_1+1/N_0}`;
    :math:`\underline\mu` solves :math:`P_{\underline\mu}(T\ge t)=\xi` (vectorised bisection).
    """
    # lazy: scipy.stats is a heavy import, loaded only when this runs
    from scipy.stats import nct

    n1, n0 = member.shape[1], nonmember.shape[1]
    df = n1 + n0 - 2
    if df < 1:
        raise ValueError("gdp_fit='gaussian' needs at least 3 scores in total (2 in one class)")
    k = math.sqrt(1.0 / n1 + 1.0 / n0)
    ss = member.var(axis=1, ddof=0) * n1 + nonmember.var(axis=1, ddof=0) * n0
    sp = np.sqrt(ss / df)
    diff = member.mean(axis=1) - nonmember.mean(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        t = np.where(sp > 0, diff / (sp * k), np.sign(diff) * np.inf)
    if not np.all(np.isfinite(t)):
        raise ValueError("gdp_fit='gaussian' needs finite scores with positive pooled variance")
    mu_hat = diff / sp
    lo = np.zeros_like(t)
    pos = nct.sf(t, df, 0.0) <= xi  # else the bound is <= 0
    hi = np.maximum(t, 1.0) * 2.0 + 10.0
    for _ in range(80):
        mid = 0.5 * (lo + hi)
        ok = nct.sf(t, df, mid) <= xi  # the bound lies above mid
        lo = np.where(ok, mid, lo)
        hi = np.where(ok, hi, mid)
    return np.where(pos, lo * k, 0.0), mu_hat


def _gaussian_summary(member, nonmember, mu_lb, eps, xi):
    r"""Threshold of the certified GDP curve's optimal test, with empirical rates and CP bounds.

    The threshold is :math:`\bar s_0+s_p(\underline\varepsilon/\underline\mu+\underline\mu/2)`
    (where the likelihood ratio of the fitted curve crosses :math:`e^{\underline\varepsilon}`);
    the rates and their Clopper-Pearson bounds (at :math:`\xi/2` each) are informational: the
    bound itself comes from :math:`\underline\mu`.
    """
    n1, n0 = member.shape[1], nonmember.shape[1]
    df = max(n1 + n0 - 2, 1)
    sp = np.sqrt((member.var(axis=1) * n1 + nonmember.var(axis=1) * n0) / df)
    with np.errstate(divide="ignore", invalid="ignore"):
        x = np.where(mu_lb > 0, np.where(np.isfinite(eps), eps, 0.0) / mu_lb + mu_lb / 2, np.inf)
    th = nonmember.mean(axis=1) + sp * x
    fn = (member <= th[:, None]).sum(axis=1)
    fp = (nonmember > th[:, None]).sum(axis=1)
    return {"threshold": th, "alpha_hat": fp / n0, "beta_hat": fn / n1,
            "alpha_up": clopper_pearson_upper(fp, n0, xi / 2),
            "beta_up": clopper_pearson_upper(fn, n1, xi / 2),
            "direction": np.zeros(th.shape, dtype=int)}


def _cp_at_thresholds(member, nonmember, thresholds, delta, per_bound_fail, sides):
    """CP bounds at each threshold (B rows x K thresholds); best per row."""
    n1, n0 = member.shape[1], nonmember.shape[1]
    th = np.asarray(thresholds, dtype=float)
    ms = np.sort(member, axis=1)
    ns = np.sort(nonmember, axis=1)
    fn = count_at_or_below(ms, th)  # members <= gamma
    tn = count_at_or_below(ns, th)
    fp = n0 - tn
    a_up = clopper_pearson_upper(fp, n0, per_bound_fail)
    b_up = clopper_pearson_upper(fn, n1, per_bound_fail)
    crit, direction = _log_ratio_bound(a_up, b_up, delta, sides)
    best = np.argmax(crit, axis=1)
    return {
        "crit": _pick(crit, best), "threshold": th[best],
        "alpha_hat": _pick(fp, best) / n0, "beta_hat": _pick(fn, best) / n1,
        "alpha_up": _pick(a_up, best), "beta_up": _pick(b_up, best),
        "direction": _pick(direction, best),
    }


def _batch_cp_split(member, nonmember, delta, xi, sides, rng, select_fraction):
    """Choose the threshold on a random part, certify it with CP on the rest."""
    n1, n0 = member.shape[1], nonmember.shape[1]
    s1 = int(math.floor(select_fraction * n1))
    s0 = int(math.floor(select_fraction * n0))
    if min(s1, s0, n1 - s1, n0 - s0) < 1:
        raise ValueError("split mode needs >= 1 member and non-member score in each part; "
                         f"got {n1} member / {n0} non-member scores with select_fraction="
                         f"{select_fraction}: pass a pre-registered threshold instead")
    mp = rng.permuted(member, axis=1)
    npm = rng.permuted(nonmember, axis=1)
    msel, mcert = mp[:, :s1], mp[:, s1:]
    nsel, ncert = npm[:, :s0], npm[:, s0:]
    # selection: maximise the CP-bounded ratio on the selection part over its rank thresholds
    # (any rule is valid; the dense rank grid keeps it to ~1000 CP evaluations at any size)
    vals, _, _, a_up, b_up = _rank_cp(msel, nsel, count_grid(s0), xi / 2)
    crit, _ = _log_ratio_bound(a_up, b_up, delta, sides)
    gamma = _pick(vals, np.argmax(crit, axis=1))
    c1, c0 = n1 - s1, n0 - s0
    fn = (mcert <= gamma[:, None]).sum(axis=1)
    fp = (ncert > gamma[:, None]).sum(axis=1)
    a_c = clopper_pearson_upper(fp, c0, xi / 2)
    b_c = clopper_pearson_upper(fn, c1, xi / 2)
    crit_c, direction = _log_ratio_bound(a_c, b_c, delta, sides)
    return {"crit": crit_c, "threshold": gamma, "alpha_hat": fp / c0, "beta_hat": fn / c1,
            "alpha_up": a_c, "beta_up": b_c, "direction": direction, "n1": c1, "n0": c0}


def _as_generator(seed):
    if isinstance(seed, np.random.Generator):
        return seed

    return np.random.Generator(np.random.PCG64(as_seed_sequence(seed)))


def _as_rows(scores, name: str) -> np.ndarray:
    """Rows of scores: 0-D and 1-D inputs are one audit (validated before reshaping, so a masked
    array is refused rather than unmasked by ``np.asarray``)."""
    arr = as_score_array(scores, name)
    return check_score_matrix(np.atleast_2d(arr) if arr.ndim < 2 else arr, name)


def audit_batch(member, nonmember, *, delta, failure_prob=0.05, method=DEFAULT_METHOD,
                sides="two",
                thresholds=None, select_fraction=0.5, seed=0,
                gdp_fit="tradeoff", guesses=None, tradeoff=None) -> np.ndarray:
    r"""Vectorised :math:`\underline\varepsilon` for ``B`` independent audits (rows).

    Same bounds as :func:`epsilon_lower_bound`, applied row by row (used by the soundness
    tests and the audit game). ``member`` is (B, N1) and ``nonmember`` (B, N0).

    Parameters
    ----------
    member : array_like, shape (B, N1)
        Member scores of each audit (higher = member), no NaN.
    nonmember : array_like, shape (B, N0)
        Non-member scores of each audit.
    delta : float
        In ``[0, 1)``.
    failure_prob : float
        :math:`\xi \in (0, 0.5]`, per audit.
    method : {"band", "joint", "dkw", "cp", "gdp", "one-run", "one-run-fdp"}
        The bound (:func:`epsilon_lower_bound`).
    sides, thresholds, select_fraction, seed, gdp_fit, guesses, tradeoff
        As in :func:`epsilon_lower_bound` (``seed``: the ``cp`` split of every row).

    Returns
    -------
    ndarray, shape (B,)
        :math:`\underline\varepsilon\ge0` per audit.

    Examples
    --------
    >>> import numpy as np
    >>> rng = np.random.default_rng(0)
    >>> member = rng.normal(2.0, 1.0, (3, 1000))      # three audits of 1000 games per class
    >>> nonmember = rng.normal(0.0, 1.0, (3, 1000))
    >>> print(np.round(audit_batch(member, nonmember, delta=1e-5, method="dkw"), 3))
    [1.998 2.036 2.076]
    >>> print(np.round(audit_batch(member, nonmember, delta=1e-5), 3))   # the default: joint
    [2.981 3.239 3.282]
    """
    # The same validation as epsilon_lower_bound (NaN, empty, complex, masked): one validator.
    member = _as_rows(member, "member")
    nonmember = _as_rows(nonmember, "nonmember")
    if member.shape[0] != nonmember.shape[0]:
        raise ValueError("member and nonmember must have the same number of rows")
    return _run(member, nonmember, delta=check_delta(delta), xi=check_failure_prob(failure_prob),
                method=_check_choice(method, "method", METHODS),
                sides=_check_choice(sides, "sides", SIDES), thresholds=thresholds,
                select_fraction=select_fraction, seed=seed, gdp_fit=gdp_fit,
                guesses=guesses, tradeoff=tradeoff)["eps"]


def _batch_one_run(member, nonmember, delta, xi, guesses):
    """One-run audit (Steinke et al. 2023) of each row; Bonferroni over the guess family."""
    from semi_core.audit.one_run import (  # lazy: the games' methods do not need it
        check_guesses,
        check_inclusion_balance,
        guess_family,
        one_run_counts,
        one_run_epsilon_batch,
    )

    n1, n0 = member.shape[1], nonmember.shape[1]
    m = n1 + n0
    # the theorem needs Bernoulli(1/2) inclusion bits: refuse class sizes that rule it out
    balance_p = check_inclusion_balance(n1, n0)
    family = guess_family(m) if guesses is None else check_guesses(guesses, m)
    level = xi / len(family)
    B = member.shape[0]
    cnt = np.array([[one_run_counts(member[i], nonmember[i], kp, km) for kp, km in family]
                    for i in range(B)], dtype=float)  # (B, F, 3)
    r = cnt[..., 0].astype(np.int64)
    v = cnt[..., 1].astype(np.int64)
    eps = one_run_epsilon_batch(m, r, v, delta=delta, failure_prob=level)
    best = np.argmax(eps, axis=1)  # the first best guess pair, as a scan keeping strict gains
    idx = np.arange(B)
    cut = cnt[idx, best, 2]
    fin = np.isfinite(cut)
    c = np.where(fin, cut, 0.0)[:, None]
    rows = {"eps": eps[idx, best], "threshold": cut, "r": r[idx, best], "v": v[idx, best],
            "tp": np.where(fin, (member >= c).sum(axis=1), 0),
            "fp": np.where(fin, (nonmember >= c).sum(axis=1), 0)}
    out = {k: np.asarray(val) for k, val in rows.items()}
    nan = np.full(member.shape[0], math.nan)
    out.update(crit=out["eps"], alpha_hat=out["fp"] / n0, beta_hat=1.0 - out["tp"] / n1,
               alpha_up=nan, beta_up=nan, direction=np.zeros(member.shape[0], dtype=int),
               n1=n1, n0=n0, n_thresholds=len(family), balance_p=balance_p)
    return out


def _run(member, nonmember, *, delta, xi, method, sides, thresholds, select_fraction, seed,
         gdp_fit="tradeoff", guesses=None, tradeoff=None):
    if method == "gdp" and delta == 0.0:
        raise ValueError("delta must be > 0 for method='gdp': a mu-GDP mechanism with mu > 0 is "
                         "(eps, 0)-DP for no finite eps, so eps(delta=0) is infinite; pass "
                         "delta > 0 (the delta-free result is mu_lower), or use a "
                         "distribution-free method")
    if guesses is not None and method not in ("one-run", "one-run-fdp"):
        raise ValueError("guesses is only used by method='one-run' and 'one-run-fdp'")
    if tradeoff is not None and method != "one-run-fdp":
        raise ValueError("tradeoff is only used by method='one-run-fdp'")
    _check_choice(gdp_fit, "gdp_fit", GDP_FITS)  # an unknown fit is an error for every method
    if method in ("band", "joint", "one-run", "one-run-fdp"):
        if thresholds is not None:
            raise ValueError(f"thresholds is only used by method='cp' ({method} chooses its own "
                             "tests)")
        if method == "band":
            res = _batch_band(member, nonmember, delta, xi, sides)
            res["n1"], res["n0"] = member.shape[1], nonmember.shape[1]
        elif method == "joint":
            res = batch_joint(member, nonmember, delta, xi, sides)
        elif method == "one-run-fdp":
            from semi_core.audit.one_run_fdp import batch_one_run_fdp  # lazy, as one-run

            res = batch_one_run_fdp(member, nonmember, delta, xi, guesses, tradeoff)
        else:
            res = _batch_one_run(member, nonmember, delta, xi, guesses)
        res["eps"] = np.maximum(res["crit"], 0.0)
        return res
    if method in ("dkw", "gdp"):
        if thresholds is not None:
            raise ValueError("thresholds is only used by method='cp' (dkw and gdp optimise over "
                             "all thresholds)")
        _check_choice(gdp_fit, "gdp_fit", GDP_FITS)
        if method == "gdp" and gdp_fit == "gaussian":
            mu_lb, mu_hat = _gaussian_mu_lower(member, nonmember, xi)
            eps = np.array([gdp_epsilon(float(m), delta) for m in mu_lb])
            res = _gaussian_summary(member, nonmember, mu_lb, eps, xi)
            res.update(mu_lower=mu_lb, mu_hat=mu_hat, eps=eps,
                       n1=member.shape[1], n0=nonmember.shape[1])
            return res
        res = _batch_dkw(member, nonmember, delta, xi, sides, gdp=(method == "gdp"))
        if method == "gdp":
            mu_lb = np.maximum(res["crit"], 0.0)
            res["mu_lower"] = mu_lb
            res["eps"] = np.array([gdp_epsilon(float(m), delta) for m in mu_lb])
            res["direction"] = np.zeros(mu_lb.shape, dtype=int)
        else:
            res["eps"] = np.maximum(res["crit"], 0.0)
        res["n1"], res["n0"] = member.shape[1], nonmember.shape[1]
        return res
    if isinstance(thresholds, str):
        if thresholds != "ranks":
            raise ValueError(f"thresholds must be None, 'ranks', a number or an array of "
                             f"numbers, got {thresholds!r}")
        res = _batch_cp_ranks(member, nonmember, delta, xi, sides)
    elif thresholds is None:
        sf = float(select_fraction)
        if not (0.0 < sf < 1.0):
            raise ValueError(f"select_fraction must be in (0, 1), got {select_fraction}")
        res = _batch_cp_split(member, nonmember, delta, xi, sides, _as_generator(seed), sf)
    else:
        th = np.atleast_1d(np.asarray(thresholds, dtype=float))
        if th.ndim != 1 or th.size == 0 or np.isnan(th).any():
            raise ValueError("thresholds must be a non-empty 1-D array without NaN")
        res = _cp_at_thresholds(member, nonmember, th, delta, xi / (2 * th.size), sides)
        res["n_thresholds"] = th.size
        res["n1"], res["n0"] = member.shape[1], nonmember.shape[1]
    res["eps"] = np.maximum(res["crit"], 0.0)
    return res


# --------------------------------------------------------------------------- public API
def epsilon_lower_bound(member_scores, nonmember_scores, *, delta: float,
                        failure_prob: float = 0.05, method: str = DEFAULT_METHOD,
                        sides: str = "two",
                        thresholds=None, select_fraction: float = 0.5,
                        seed=0, gdp_fit: str = "tradeoff", guesses=None,
                        tradeoff=None) -> AuditResult:
    r"""High-probability lower bound on :math:`\varepsilon` from MI scores (SeMI seed §2, §5.1).

    With probability at least :math:`1-\xi` over the scores (``xi = failure_prob``),

    .. math::

        \varepsilon \ge \underline\varepsilon = \max_\gamma \log\max\left[
            \frac{1-\delta-\bar\alpha(\gamma)}{\bar\beta(\gamma)},
            \frac{1-\delta-\bar\beta(\gamma)}{\bar\alpha(\gamma)}\right]\vee 0,

    for the tests :math:`\mathbb 1(\text{score}>\gamma)`; see the module docstring for the ways
    (``band``, ``dkw``, ``cp``, ``gdp``) of making :math:`\bar\alpha,\bar\beta` valid even
    though :math:`\gamma` is chosen from the data, and for ``one-run`` (canaries of one run).

    Parameters
    ----------
    member_scores, nonmember_scores : array_like, 1-D
        Scores of runs with the target in (``B = 1``) and out (``B = 0``); higher = member.
        Each needs at least one value; NaN is rejected.
    delta : float
        In ``[0, 1)``.
    failure_prob : float
        :math:`\xi \in (0, 0.5]`, split equally over the bounds on :math:`\alpha` and
        :math:`\beta`.
    method : {"band", "joint", "dkw", "cp", "gdp", "one-run", "one-run-fdp"}
        ``"band"``: tail-adaptive simultaneous bands. ``"joint"`` (the default): one exact
        test of both error rates per pre-registered rank threshold
        (:mod:`semi_core.audit.joint`; the tightest distribution-free bound here, with no
        separate confidence bounds on the two rates). ``"one-run"``: the scores are the
        included / excluded canaries of one run.
        ``"one-run-fdp"``: the same, audited through a trade-off curve (``tradeoff``).
    sides : {"two", "one"}
        ``"two"`` uses both inequalities of Lemma 2.1, ``"one"`` only
        :math:`(\mathrm{TPR}-\delta)/\mathrm{FPR}`. The confidence bounds are one-sided in
        both cases; the choice costs no extra failure probability.
    thresholds : None, "ranks", float or array_like
        ``cp`` only: pre-registered thresholds (chosen without looking at these scores);
        Bonferroni over their number. ``"ranks"``: the pre-registered rank family (module
        docstring). ``None``: split mode.
    select_fraction : float
        ``cp`` split mode: fraction of each class used to choose the threshold.
    seed : int, SeedSequence or Generator
        ``cp`` split mode: randomness of the split (no other method draws anything; the
        one-run guesses abstain on ties instead of breaking them at random).
    gdp_fit : {"tradeoff", "gaussian"}
        ``gdp`` only. ``"tradeoff"`` (default): :math:`\underline\mu` from the DKW bands on the
        empirical trade-off curve; needs only the GDP assumption on the mechanism and is
        invariant to monotone transforms of the scores. ``"gaussian"``: additionally assumes
        the *scores* are Gaussian with equal variances in both classes (as for the Gaussian
        mechanism's LR or a linear canary statistic); :math:`\underline\mu` is the exact
        noncentral-t lower confidence bound on the standardised mean difference
        (:math:`\hat\mu=(\bar s_1-\bar s_0)/s_p`). Much tighter; can over-claim when the
        scores are not equal-variance Gaussian. ``sides`` is ignored by ``gdp`` (the GDP
        trade-off curve is symmetric). ``gdp`` needs ``delta > 0``.
    guesses : None, (int, int) or sequence of pairs
        ``one-run`` and ``one-run-fdp`` only: ``(k_plus, k_minus)`` "in" / "out" guesses, or
        several pairs (Bonferroni over them); ``None``: the pre-registered family
        (:data:`semi_core.audit.one_run.GUESS_FRACTIONS`).
    tradeoff : None, "eps-delta" or "gdp"
        ``one-run-fdp`` only. ``None`` / ``"eps-delta"`` (the default): the exact
        :math:`(\varepsilon,\delta)` trade-off curve, which assumes nothing of the
        mechanism. ``"gdp"`` (opt-in): the Gaussian curve; assumes a :math:`\mu`-GDP
        mechanism (over-claims e.g. for randomised response), needs ``delta > 0`` and reports
        ``mu_lower``; the result's ``assumption`` is ``"one-run-bernoulli-half+mu-gdp"``.

    Returns
    -------
    AuditResult

    Examples
    --------
    >>> import numpy as np
    >>> r = epsilon_lower_bound(np.ones(500), np.zeros(500), delta=0.0, failure_prob=0.01,
    ...                         method="cp", thresholds=0.5)
    >>> round(r.epsilon_lower_bound, 6)
    4.541916
    """
    m = check_scores(member_scores, "member_scores")
    nm = check_scores(nonmember_scores, "nonmember_scores")
    delta = check_delta(delta)
    xi = check_failure_prob(failure_prob)
    method = _check_choice(method, "method", METHODS)
    sides = _check_choice(sides, "sides", SIDES)
    res = _run(m[None, :], nm[None, :], delta=delta, xi=xi, method=method, sides=sides,
               thresholds=thresholds, select_fraction=select_fraction, seed=seed,
               gdp_fit=gdp_fit, guesses=guesses, tradeoff=tradeoff)
    eps = float(res["eps"][0])
    a_up, b_up = float(res["alpha_up"][0]), float(res["beta_up"][0])
    extra = {}
    if method == "dkw" or (method == "gdp" and gdp_fit == "tradeoff"):
        extra = {"margin_member": res["e1"], "margin_nonmember": res["e0"]}
    if method == "gdp":
        extra["mu_lower"] = float(res["mu_lower"][0])
        extra["mu_hat"] = (float(res["mu_hat"][0]) if gdp_fit == "gaussian"
                           else _binormal_mu_hat(m, nm))
    if "n_thresholds" in res:
        extra["n_thresholds"] = int(res["n_thresholds"])
    if method == "band":
        extra["local_level_member"] = float(res["ll1"])
        extra["local_level_nonmember"] = float(res["ll0"])
    if method in ("one-run", "one-run-fdp"):
        extra["n_guesses"] = int(res["r"][0])
        extra["n_correct"] = int(res["v"][0])
        extra["inclusion_balance_p_value"] = float(res["balance_p"])
    if "mu_lower" in res and method == "one-run-fdp":
        extra["mu_lower"] = float(res["mu_lower"][0])
        extra["mu_hat"] = _binormal_mu_hat(m, nm)
    extra["assumption"] = assumption_of(method, gdp_fit=gdp_fit, thresholds=thresholds,
                                        tradeoff=tradeoff)
    if method in ("one-run", "one-run-fdp", "joint"):
        # the one-run bounds count correct guesses and the joint tests bound both rates at
        # once: there are no separate confidence bounds on the test's rates (None, never a
        # NaN read as a number)
        rates = dict(tpr_lower=None, fpr_upper=None, fnr_upper=None, tnr_lower=None)
    else:
        rates = dict(tpr_lower=1.0 - b_up, fpr_upper=a_up, fnr_upper=b_up, tnr_lower=1.0 - a_up)
    return AuditResult(
        epsilon_lower_bound=eps, threshold=float(res["threshold"][0]),
        tpr=1.0 - float(res["beta_hat"][0]), fpr=float(res["alpha_hat"][0]), **rates,
        method=method, sides=sides,
        direction=("tnr/fnr" if int(res["direction"][0]) == 1 else "tpr/fpr"),
        delta=delta, failure_prob=xi, n_member=int(res["n1"]), n_nonmember=int(res["n0"]),
        **extra,
    )


def _binormal_mu_hat(member, nonmember) -> float:
    r"""Equal-variance binormal fit :math:`\hat\mu=\sqrt2\,\Phi^{-1}(\mathrm{AUC})` (clipped)."""

    a = mann_whitney_auc(member, nonmember)[0]
    a = min(max(a, 0.5 / (member.size * nonmember.size)), 1 - 0.5 / (member.size * nonmember.size))
    return float(max(0.0, math.sqrt(2.0) * ndtri(a)))


def epsilon_lower_bound_from_counts(tp, fn, fp, tn, *, delta: float, failure_prob: float = 0.05,
                                    method: str = "cp", sides: str = "two") -> AuditResult:
    r"""Lower bound on :math:`\varepsilon` from the confusion counts of one pre-registered test.

    ``tp + fn`` member runs and ``fp + tn`` non-member runs of a test fixed in advance
    (SeMI seed Lemma 2.1, Eq. 2):

    .. math::

        \underline\varepsilon=\log\max\left[\frac{1-\delta-\bar\alpha}{\bar\beta},
            \frac{1-\delta-\bar\beta}{\bar\alpha}\right]\vee0,\quad
        \bar\alpha\ge\frac{fp}{fp+tn},\ \bar\beta\ge\frac{fn}{tp+fn}

    Parameters
    ----------
    tp, fn, fp, tn : int
        Counts, ``>= 0``; ``tp + fn >= 1`` and ``fp + tn >= 1``.
    delta, failure_prob, sides
        As in :func:`epsilon_lower_bound`.
    method : {"cp", "dkw", "gdp"}
        ``cp``: Clopper-Pearson at :math:`\xi/2` each; ``dkw``: Hoeffding/DKW margin
        :math:`\sqrt{\log(2/\xi)/(2N)}`; ``gdp``: CP bounds, then
        :math:`\underline\mu=\Phi^{-1}(1-\bar\alpha)-\Phi^{-1}(\bar\beta)` converted with
        :func:`~semi_core.audit.ground_truth.gdp_epsilon` (GDP assumption).

    Returns
    -------
    AuditResult
        ``threshold`` is ``nan`` (unknown to this function).
    """
    tp = check_int(tp, "tp", minimum=0)
    fn = check_int(fn, "fn", minimum=0)
    fp = check_int(fp, "fp", minimum=0)
    tn = check_int(tn, "tn", minimum=0)
    n1, n0 = tp + fn, fp + tn
    if n1 < 1 or n0 < 1:
        raise ValueError(f"need at least one member (tp+fn={n1}) and one non-member "
                         f"(fp+tn={n0}) run")
    delta = check_delta(delta)
    xi = check_failure_prob(failure_prob)
    method = _check_choice(method, "method", COUNT_METHODS)
    sides = _check_choice(sides, "sides", SIDES)
    if method == "gdp" and delta == 0.0:
        raise ValueError("delta must be > 0 for method='gdp': eps(delta=0) of mu-GDP with "
                         "mu > 0 is infinite; pass delta > 0 or use method='cp'")
    extra = {}
    if method == "dkw":
        e1, e0 = float(dkw_margin(n1, xi / 2)), float(dkw_margin(n0, xi / 2))
        a_up, b_up = min(1.0, fp / n0 + e0), min(1.0, fn / n1 + e1)
        extra = {"margin_member": e1, "margin_nonmember": e0}
    else:
        a_up = float(clopper_pearson_upper(fp, n0, xi / 2))
        b_up = float(clopper_pearson_upper(fn, n1, xi / 2))
    if method == "gdp":
        mu_lb = max(0.0, float(-ndtri(a_up) - ndtri(b_up))) if a_up < 1 and b_up < 1 else 0.0
        eps, direction = gdp_epsilon(mu_lb, delta), 0
        extra["mu_lower"] = mu_lb
    else:
        crit, d = _log_ratio_bound(np.array(a_up), np.array(b_up), delta, sides)
        eps, direction = max(0.0, float(crit)), int(d)
    extra["assumption"] = "mu-gdp" if method == "gdp" else "iid-games+preregistered"
    return AuditResult(
        epsilon_lower_bound=eps, threshold=math.nan, tpr=tp / n1, fpr=fp / n0,
        tpr_lower=1.0 - b_up, fpr_upper=a_up, fnr_upper=b_up, tnr_lower=1.0 - a_up,
        method=method, sides=sides, direction=("tnr/fnr" if direction == 1 else "tpr/fpr"),
        delta=delta, failure_prob=xi, n_member=n1, n_nonmember=n0, **extra,
    )

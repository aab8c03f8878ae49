"""Closed-form errors of the SeMI likelihood-ratio tests (seed §3, App. A, B.3, E).

Single-step test
----------------
Whitening :math:`w = L^{-1}(\\bar X_\\tau-\\mu)`, :math:`u = L^{-1}(z^*-\\mu)`, :math:`m=\\|u\\|^2`,
the log-LR is :math:`\\gamma_{\\max} - \\tfrac{n}{2(n-1)}\\|w-u\\|^2` with

.. math:: \\gamma_{\\max} = \\frac m2 - \\frac d2\\log\\Big(1-\\frac1n\\Big).

So :math:`\\{\\log\\mathrm{LR}\\ge\\gamma\\} = \\{\\|w-u\\|^2\\le 2(n-1)K/n\\}`,
:math:`K=\\gamma_{\\max}-\\gamma`. Under :math:`H_0`, :math:`w\\sim\\mathcal N(0,I/n)` and under
:math:`H_1`, :math:`w\\sim\\mathcal N(u/n,(n-1)I/n^2)`, hence

.. math::

    \\alpha(\\gamma) = F_{\\chi^2_d(nm)}\\big(2(n-1)K\\big),\\qquad
    \\beta(\\gamma) = 1 - F_{\\chi^2_d((n-1)m)}\\big(2nK\\big),

for any positive-definite :math:`\\Sigma` (the seed differs: see claims
``semi_sequential_mi:lemB.5`` and ``semi_sequential_mi:corB.6``, ``semi-core verify``).
For d = 1 this is the seed's Lemmas 3.5-3.6 Φ form (:func:`alpha_1d`, :func:`beta_1d`).
The threshold has the closed form
:math:`\\gamma(\\alpha)=\\gamma_{\\max}-F^{-1}_{\\chi^2_d(nm)}(\\alpha)/(2(n-1))`.

Final Observation is the same test with :math:`n\\to N_T` (seed Lemmas 3.7-3.8; stationary
:math:`\\Sigma`). SeMI-max uses independence of the per-step statistics under :math:`H_0`
(seed Thm E.1, Cor. E.2-E.3), generalised here to per-step parameters:

.. math::

    \\alpha_{\\max}(\\gamma) = 1-\\prod_t(1-\\alpha_t(\\gamma)),\\qquad
    \\beta_{\\max}(\\gamma\\mid\\tau) = \\beta_\\tau(\\gamma)\\prod_{t\\ne\\tau}(1-\\alpha_t(\\gamma)).

SeMI-Unif has no closed form: use Monte Carlo (:mod:`semi_core.game`).
"""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np
from scipy.special import (
    chdtr,
    chdtrc,
    chdtri,
    chndtr,
    chndtrix,
    gammaincinv,
    log_ndtr,
    ndtr,
    roots_genlaguerre,
)

try:  # the Boost survival function that scipy.stats.ncx2.sf evaluates; importing scipy.stats
    from scipy.special._ufuncs import _ncx2_sf as _boost_ncx2_sf  # costs ~0.25 s of start-up
except ImportError:  # pragma: no cover - a SciPy without it: the public distribution, lazily
    _boost_ncx2_sf = None

from semi_core._validation import check_int, check_open_unit, check_pmf, check_tau

__all__ = [
    "gamma_max",
    "alpha_quadratic",
    "beta_quadratic",
    "threshold_quadratic",
    "tpr_quadratic",
    "alpha_1d",
    "beta_1d",
    "alpha",
    "beta",
    "threshold",
    "tpr_at_fpr",
    "roc",
    "auc",
    "CLOSED_FORM_TESTS",
]

#: Tests with closed-form errors; SeMI-Unif is Monte Carlo only.
CLOSED_FORM_TESTS = ("semi-star", "final", "semi-max")


#: Non-centrality above which scipy's ncx2 gets slow and then inaccurate (NaN from ~1e10): the
#: conditional Phi form below takes over.
_NC_LARGE = 1e6

#: Largest n * m accepted: beyond it the threshold's spread (~ sqrt(n m)) falls below the
#: resolution of doubles at its magnitude (~ n m), so no threshold is representable.
_NM_MAX = 1e18


def _check_nmd(n, m, d):
    n = np.asarray(n, dtype=float)
    m = np.asarray(m, dtype=float)
    if np.any(n < 2) or np.isnan(n).any():
        raise ValueError("n must be >= 2")
    if not np.all(np.isfinite(n)):
        raise ValueError("n must be finite")
    if np.any(m < 0) or np.isnan(m).any():
        raise ValueError("m (squared Mahalanobis distance) must be >= 0")
    if not np.all(np.isfinite(m)) or np.any(n * m > _NM_MAX):
        raise ValueError(
            f"n * m (batch size x squared Mahalanobis distance) = {float(np.max(n * m)):.3g} "
            f"exceeds {_NM_MAX:g}: thresholds are not representable in double precision (a "
            "target this far is detected with TPR = 1 to double precision once sqrt(m) > 40; "
            "use a nearer target)")
    d = check_int(d, "d", minimum=1)
    return n, m, d


@functools.lru_cache(maxsize=64)
def _chi2_nodes(df: int, k: int = 64) -> tuple[np.ndarray, np.ndarray]:
    """Generalised Gauss-Laguerre rule for :math:`\\chi^2_{df}`: ``E[g(Y)] ~ sum w g(y)``
    (weight :math:`t^{df/2-1}e^{-t}`, :math:`y = 2t`; exponentially accurate for smooth g)."""
    t, w = roots_genlaguerre(k, 0.5 * df - 1.0)
    return 2.0 * t, w / w.sum()


def _cdf_large(x: float, df: int, nc: float) -> float:
    r""":math:`P(\|Z+a e_1\|^2\le x)=E_Y[\Phi(\sqrt{x-Y}-a)-\Phi(-\sqrt{x-Y}-a)]`,
    :math:`Y\sim\chi^2_{d-1}`, :math:`a=\sqrt{nc}` (exact in d = 1; for d > 1 the expectation
    over Y by a 64-node Gauss-Laguerre rule for the chi-square weight: the integrand is analytic
    in Y and varies on the scale sqrt(x) >> d)."""
    if not x > 0:
        return 0.0
    a = math.sqrt(nc)
    y, w = (np.zeros(1), np.ones(1)) if df == 1 else _chi2_nodes(df - 1)
    r = np.sqrt(np.maximum(x - y, 0.0))
    return float(min(max(np.dot(w, ndtr(r - a) - ndtr(-r - a)), 0.0), 1.0))


def _sf_large(x: float, df: int, nc: float) -> float:
    """Survival function of the same law (no 1 - cdf cancellation for the upper tail)."""
    if not x > 0:
        return 1.0
    a = math.sqrt(nc)
    y, w = (np.zeros(1), np.ones(1)) if df == 1 else _chi2_nodes(df - 1)
    r = np.sqrt(np.maximum(x - y, 0.0))
    return float(min(max(np.dot(w, ndtr(a - r) + ndtr(-r - a)), 0.0), 1.0))


def _ppf_large(q: float, df: int, nc: float) -> float:
    # solve for r = sqrt(x), whose scale is 1 near the root (x itself has scale 2a)
    a = math.sqrt(nc)
    from scipy import optimize  # lazy: scipy.optimize is a heavy import

    extra = math.sqrt(float(chdtri(df - 1, 1e-18))) if df > 1 else 0.0
    lo, hi = max(a - 40.0, 0.0), a + 40.0 + extra
    r = optimize.brentq(lambda r: _cdf_large(r * r, df, nc) - q, lo, hi, xtol=1e-13,
                        rtol=4 * np.finfo(float).eps, maxiter=500)
    return float(r * r)


def _ncx2_eval(scipy_fn, fallback, x, df, nc):
    """scipy where nc < _NC_LARGE (accurate and fast there), the Phi form elsewhere."""
    x, nc = np.broadcast_arrays(np.asarray(x, float), np.asarray(nc, float))
    out = np.empty(x.shape)
    small = nc < _NC_LARGE
    if np.any(small):
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            xs, cs = x[small], nc[small]
            out[small] = np.where(cs > 0, scipy_fn[0](xs, df, np.where(cs > 0, cs, 1.0)),
                                  scipy_fn[1](xs, df))
    bad = ~small | ~np.isfinite(out)
    if np.any(bad):
        out[bad] = [fallback(float(xi), int(df), float(ci))
                    for xi, ci in zip(x[bad], nc[bad], strict=True)]
    if not np.all(np.isfinite(out)):
        raise ValueError("non-central chi-square value not computable (argument out of range)")
    return out


# The chi-square laws through scipy.special: the functions scipy.stats' chi2 and ncx2 evaluate,
# with their conventions off the support, so that `semi-core power` does not import scipy.stats.
def _on_support(x, fn, below: float, above: float):
    """``fn(x)`` for x in (0, inf); ``below`` at x <= 0, ``above`` at +inf; NaN stays NaN."""
    x = np.asarray(x, dtype=float)
    inside = (x > 0) & (x < np.inf)
    out = np.where(x >= np.inf, above, below)
    with np.errstate(over="ignore"):  # as scipy.stats (its gh-17432)
        val = fn(np.where(inside, x, 1.0))
    return np.where(np.isnan(x), np.nan, np.where(inside, val, out))


def _chi2_cdf(x, df):
    return _on_support(x, lambda v: chdtr(df, v), 0.0, 1.0)


def _chi2_sf(x, df):
    return _on_support(x, lambda v: chdtrc(df, v), 1.0, 0.0)


def _chi2_ppf(q, df):
    q = np.asarray(q, dtype=float)
    return np.where(q >= 1.0, np.inf, 2.0 * gammaincinv(df / 2.0, q))


def _nc_cdf(x, df, nc):
    return _on_support(x, lambda v: chndtr(v, df, nc), 0.0, 1.0)


def _nc_sf(x, df, nc):
    if _boost_ncx2_sf is None:  # pragma: no cover - see the import
        from scipy.stats import ncx2  # lazy: scipy.stats is a heavy import

        return ncx2.sf(x, df, nc)
    return _on_support(x, lambda v: _boost_ncx2_sf(v, df, nc), 1.0, 0.0)


def _nc_ppf(q, df, nc):
    q = np.asarray(q, dtype=float)
    with np.errstate(over="ignore"):
        return np.where(q >= 1.0, np.inf, chndtrix(q, df, nc))


def _ncx2_cdf(x, df, nc):
    return _ncx2_eval((_nc_cdf, _chi2_cdf), _cdf_large, x, df, nc)


def _ncx2_sf(x, df, nc):
    return _ncx2_eval((_nc_sf, _chi2_sf), _sf_large, x, df, nc)


def _ncx2_ppf(q, df, nc):
    return _ncx2_eval((_nc_ppf, _chi2_ppf), _ppf_large, q, df, nc)


def _check_gamma(gamma) -> np.ndarray:
    g = np.asarray(gamma, dtype=float)
    if np.isnan(g).any():
        raise ValueError("gamma (threshold) contains NaN")
    return g


def gamma_max(n, m, d: int = 1):
    r"""Largest attainable log-LR, :math:`\gamma_{\max}=m/2-(d/2)\log(1-1/n)` (seed Lemma 3.5).

    Parameters
    ----------
    n : int or array_like
        Batch size, >= 2 (``N_T`` for Final Observation).
    m : float or array_like
        Squared Mahalanobis distance of the target from the mean, >= 0.
    d : int
        Dimension, >= 1.

    Returns
    -------
    float or ndarray
        :math:`\gamma_{\max}`, broadcast over ``n`` and ``m``.
    """
    n, m, d = _check_nmd(n, m, d)
    return 0.5 * m - 0.5 * d * np.log1p(-1.0 / n)


def alpha_quadratic(gamma, n, m, d: int = 1):
    r"""Type I error of the single-step LR test, :math:`P_0(\log\mathrm{LR}\ge\gamma)`.

    .. math:: \alpha(\gamma) = F_{\chi^2_d(nm)}\big(2(n-1)(\gamma_{\max}-\gamma)\big)

    Parameters
    ----------
    gamma : array_like
        Thresholds.
    n : int or array_like
        Batch size (``N_T`` for Final Observation).
    m : float or array_like
        Squared Mahalanobis distance of the target.
    d : int
        Dimension.

    Returns
    -------
    float or ndarray
        Type I error in [0, 1], broadcast over ``gamma``, ``n`` and ``m``; 0 above
        :math:`\gamma_{\max}`.
    """
    n, m, d = _check_nmd(n, m, d)
    gamma = _check_gamma(gamma)
    if d == 1:  # the Phi form keeps full relative accuracy deep in the tail
        return alpha_1d(gamma, n, m)
    K = gamma_max(n, m, d) - np.asarray(gamma, dtype=float)
    return np.where(K > 0, _ncx2_cdf(2 * (n - 1) * np.maximum(K, 0), d, n * m), 0.0)


def beta_quadratic(gamma, n, m, d: int = 1):
    r"""Type II error of the single-step LR test, :math:`P_1(\log\mathrm{LR}<\gamma)`.

    .. math:: \beta(\gamma) = 1-F_{\chi^2_d((n-1)m)}\big(2n(\gamma_{\max}-\gamma)\big)

    Parameters
    ----------
    gamma : array_like
        Thresholds on the log-LR.
    n : int or array_like
        Batch size, >= 2 (``N_T`` for Final Observation).
    m : float or array_like
        Squared Mahalanobis distance of the target, >= 0.
    d : int
        Dimension, >= 1.

    Returns
    -------
    float or ndarray
        Type II error in [0, 1], broadcast over ``gamma``, ``n`` and ``m``; 1 above
        :math:`\gamma_{\max}`.
    """
    n, m, d = _check_nmd(n, m, d)
    gamma = _check_gamma(gamma)
    if d == 1:
        return beta_1d(gamma, n, m)
    K = gamma_max(n, m, d) - np.asarray(gamma, dtype=float)
    return np.where(K > 0, _ncx2_sf(2 * n * np.maximum(K, 0), d, (n - 1) * m), 1.0)


def threshold_quadratic(fpr, n, m, d: int = 1):
    r"""Threshold with :math:`\alpha(\gamma)=` ``fpr``:
    :math:`\gamma=\gamma_{\max}-F^{-1}_{\chi^2_d(nm)}(\mathrm{fpr})/(2(n-1))`.

    Parameters
    ----------
    fpr : float or array_like
        Target false-positive rate, in (0, 1).
    n : int or array_like
        Batch size, >= 2.
    m : float or array_like
        Squared Mahalanobis distance of the target, >= 0.
    d : int
        Dimension, >= 1.

    Returns
    -------
    float or ndarray
        Log-LR threshold :math:`\gamma` whose type I error is ``fpr``.
    """
    fpr = check_open_unit(fpr, "fpr")
    n, m, d = _check_nmd(n, m, d)
    return gamma_max(n, m, d) - _ncx2_ppf(fpr, d, n * m) / (2 * (n - 1))


def tpr_quadratic(fpr, n, m, d: int = 1):
    r"""Power at false-positive rate ``fpr``:
    :math:`F_{\chi^2_d((n-1)m)}\big(\tfrac{n}{n-1}F^{-1}_{\chi^2_d(nm)}(\mathrm{fpr})\big)`.

    Parameters
    ----------
    fpr : float or array_like
        False-positive rate, in (0, 1).
    n : int or array_like
        Batch size, >= 2.
    m : float or array_like
        Squared Mahalanobis distance of the target, >= 0.
    d : int
        Dimension, >= 1.

    Returns
    -------
    float or ndarray
        True-positive rate (power) in [0, 1] of the single-step test at ``fpr``.
    """
    fpr = check_open_unit(fpr, "fpr")
    n, m, d = _check_nmd(n, m, d)
    return _ncx2_cdf(n / (n - 1) * _ncx2_ppf(fpr, d, n * m), d, (n - 1) * m)


def _ab_1d(gamma, n, m):
    n, m, _ = _check_nmd(n, m, 1)
    K = 0.5 * m - 0.5 * np.log1p(-1.0 / n) - np.asarray(gamma, dtype=float)
    a = np.sqrt(m * n)
    b = np.sqrt(2 * (n - 1) * np.maximum(K, 0))
    return a, b, K, n


def alpha_1d(gamma, n, m):
    r"""Seed Lemma 3.5 (d = 1): :math:`\alpha=\Phi(a+b)-\Phi(a-b)`, :math:`a=\sqrt{mn}`,
    :math:`b=\sqrt{(n-1)(m-\log(1-1/n)-2\gamma)}`; 0 above :math:`\gamma_{\max}`.

    Evaluated as :math:`\Phi(b-a)-\Phi(-a-b)` (same value by symmetry, no cancellation for
    large ``a``).

    Parameters
    ----------
    gamma : array_like
        Thresholds on the log-LR.
    n : int or array_like
        Batch size, >= 2.
    m : float or array_like
        Squared standardised distance of the target, >= 0.

    Returns
    -------
    ndarray
        Type I error in [0, 1], broadcast over the inputs.
    """
    a, b, K, _ = _ab_1d(gamma, n, m)
    hi = log_ndtr(b - a)
    lo = log_ndtr(-a - b)
    val = np.exp(hi) * -np.expm1(np.minimum(lo - hi, 0.0))
    return np.where(K > 0, val, 0.0)


def beta_1d(gamma, n, m):
    r"""Seed Lemma 3.6 (d = 1): :math:`\beta=\Phi(a'-b')+\Phi(-a'-b')`,
    :math:`a'=a\sqrt{(n-1)/n}`, :math:`b'=b\sqrt{n/(n-1)}`; 1 above :math:`\gamma_{\max}`.

    Parameters
    ----------
    gamma : array_like
        Thresholds on the log-LR.
    n : int or array_like
        Batch size, >= 2.
    m : float or array_like
        Squared standardised distance of the target, >= 0.

    Returns
    -------
    ndarray
        Type II error in [0, 1], broadcast over the inputs.
    """
    a, b, K, n = _ab_1d(gamma, n, m)
    a2, b2 = a * np.sqrt((n - 1) / n), b * np.sqrt(n / (n - 1))
    return np.where(K > 0, ndtr(a2 - b2) + ndtr(-a2 - b2), 1.0)


# -- mechanism level ------------------------------------------------------------------------

def _tau_pmf(mech, tau) -> np.ndarray:
    if tau is None:
        return np.full(mech.T, 1.0 / mech.T)
    if np.ndim(tau) == 0:
        p = np.zeros(mech.T)
        p[check_tau(tau, mech.T) - 1] = 1.0
        return p
    return check_pmf(tau, "tau (insertion-time pmf)", size=mech.T)


def _check_test(test: str) -> str:
    if test == "semi-unif":
        raise ValueError("test 'semi-unif' has no closed-form errors (seed §3.2): use Monte Carlo "
                         "(semi-core simulate / semi_core.game.play.play)")
    if test not in CLOSED_FORM_TESTS:
        raise ValueError(f"test must be one of {CLOSED_FORM_TESTS}, got {test!r}")
    return test


def _step_params(mech, test: str):
    """Per-step (n, m) of the single-step test that the statistic thresholds."""
    if test == "final":
        if not mech.stationary_cov:
            raise ValueError("Final Observation has closed-form errors only for a stationary "
                             "covariance (otherwise its two covariances are not proportional); "
                             "use Monte Carlo")
        N = float(mech.cum_n[-1])
        m = np.array([mech.final_mahalanobis_sq(t) for t in range(1, mech.T + 1)])
        return np.full(mech.T, N), m
    return mech.n_t.astype(float), mech.m_t


def alpha(mech, gamma, test: str = "semi-star", tau=None):
    """Type I error :math:`P_0(S\\ge\\gamma)` of ``test`` on mechanism ``mech``.

    Parameters
    ----------
    mech : EmpiricalMean
    gamma : array_like
    test : {"semi-star", "final", "semi-max"}
    tau : None, int or array_like
        Insertion-time law of the game: None = uniform on 1..T, an int = fixed, or a pmf.
        SeMI* and Final Observation use the known tau, so their errors average over it.

    Returns
    -------
    float or ndarray
        Type I error in [0, 1], one per threshold (shape of ``gamma``).
    """
    test = _check_test(test)
    g = _check_gamma(gamma)[..., None]
    n_t, m_t = _step_params(mech, "semi-star" if test == "semi-max" else test)
    a_t = alpha_quadratic(g, n_t, m_t, mech.d)
    if test == "semi-max":
        return -np.expm1(np.log1p(-a_t).sum(-1))
    return a_t @ _tau_pmf(mech, tau)


def beta(mech, gamma, test: str = "semi-star", tau=None):
    """Type II error :math:`P_1(S<\\gamma)` of ``test``, averaged over the insertion-time law.

    Parameters
    ----------
    mech : EmpiricalMean
        The mechanism (per-step batch sizes ``n_t``, distances ``m_t``, dimension ``d``).
    gamma : array_like
        Thresholds on the test statistic.
    test : {"semi-star", "final", "semi-max"}
        The test; SeMI-Unif has no closed form (Monte Carlo only).
    tau : None, int or array_like
        Insertion-time law: None = uniform on 1..T, an int in 1..T = fixed, or a pmf of length T.

    Returns
    -------
    float or ndarray
        Type II error in [0, 1], one per threshold (shape of ``gamma``).
    """
    test = _check_test(test)
    g = _check_gamma(gamma)[..., None]
    p = _tau_pmf(mech, tau)
    if test == "semi-max":
        a_t = alpha_quadratic(g, mech.n_t, mech.m_t, mech.d)
        b_t = beta_quadratic(g, mech.n_t, mech.m_t, mech.d)
        log_keep = np.log1p(-a_t)
        others = np.exp(log_keep.sum(-1, keepdims=True) - log_keep)
        return (b_t * others) @ p
    n_t, m_t = _step_params(mech, test)
    return beta_quadratic(g, n_t, m_t, mech.d) @ p


def threshold(mech, fpr, test: str = "semi-star", tau=None):
    """Threshold :math:`\\gamma` with :math:`\\alpha(\\gamma)=` ``fpr`` (closed form where one exists,
    else a bracketed root of the monotone :math:`\\alpha`).

    Parameters
    ----------
    mech : EmpiricalMean
        The mechanism.
    fpr : float or array_like
        Target false-positive rate, in (0, 1).
    test : {"semi-star", "final", "semi-max"}
        The test.
    tau : None, int or array_like
        Insertion-time law: None = uniform on 1..T, an int in 1..T = fixed, or a pmf of length T.

    Returns
    -------
    float or ndarray
        Threshold :math:`\\gamma` with :math:`\\alpha(\\gamma)` = ``fpr`` (shape of ``fpr``).
    """
    test = _check_test(test)
    fpr_arr = check_open_unit(fpr, "fpr")
    p = _tau_pmf(mech, tau)
    n_t, m_t = _step_params(mech, "semi-star" if test == "semi-max" else test)
    same = np.allclose(n_t, n_t[0]) and np.allclose(m_t, m_t[0])
    if test == "semi-max" and same:
        a0 = -np.expm1(np.log1p(-fpr_arr) / mech.T)
        return threshold_quadratic(a0, n_t[0], m_t[0], mech.d)
    if test != "semi-max":
        support = np.flatnonzero(p > 0)
        if len(support) == 1 or (np.allclose(n_t[support], n_t[support[0]])
                                 and np.allclose(m_t[support], m_t[support[0]])):
            k = support[0]
            return threshold_quadratic(fpr_arr, n_t[k], m_t[k], mech.d)
    return np.vectorize(lambda f: _solve_threshold(mech, f, test, tau))(fpr_arr)


def _solve_threshold(mech, f: float, test: str, tau) -> float:
    n_t, m_t = _step_params(mech, "semi-star" if test == "semi-max" else test)
    hi = float(np.max(gamma_max(n_t, m_t, mech.d)))
    lo = hi - 1.0
    for _ in range(2000):
        if alpha(mech, lo, test, tau) >= f:
            break
        lo = hi - 2 * (hi - lo)
        if not np.isfinite(lo):
            break
    else:  # pragma: no cover - alpha is a cdf in gamma
        lo = -np.inf
    if not np.isfinite(lo):
        raise ValueError(f"no finite threshold attains FPR {f} (the statistic's range "
                         "overflows double precision)")
    from scipy import optimize  # lazy: scipy.optimize is a heavy import

    return optimize.brentq(lambda g: alpha(mech, g, test, tau) - f, lo, hi, xtol=1e-13, rtol=1e-13)


def tpr_at_fpr(mech, fpr, test: str = "semi-star", tau=None):
    """Power :math:`1-\\beta(\\gamma(\\mathrm{fpr}))` of ``test`` at false-positive rate ``fpr``.

    Parameters
    ----------
    mech : EmpiricalMean
        The mechanism.
    fpr : float or array_like
        False-positive rate, in (0, 1).
    test : {"semi-star", "final", "semi-max"}
        The test.
    tau : None, int or array_like
        Insertion-time law: None = uniform on 1..T, an int in 1..T = fixed, or a pmf of length T.

    Returns
    -------
    float or ndarray
        True-positive rate in [0, 1] (shape of ``fpr``).

    Examples
    --------
    >>> from semi_core.mechanisms.empirical_mean import EmpiricalMean
    >>> mech = EmpiricalMean.isotropic(10, 5, distance=3.0)
    >>> print(f"{float(tpr_at_fpr(mech, 0.01, 'semi-star', tau=3)):.4f}")
    0.0732
    >>> print(f"{float(tpr_at_fpr(mech, 0.01, 'final', tau=3)):.4f}")
    0.0273
    """
    return 1.0 - beta(mech, threshold(mech, fpr, test, tau), test, tau)


def roc(mech, test: str = "semi-star", fpr=None, tau=None):
    """ROC curve: ``(fpr, tpr)`` on a log-spaced grid (default 1e-5..1 - 1e-9, 200 points).

    Parameters
    ----------
    mech : EmpiricalMean
        The mechanism.
    test : {"semi-star", "final", "semi-max"}
        The test.
    fpr : array_like, optional
        False-positive rates in (0, 1); None = the default log-spaced grid.
    tau : None, int or array_like
        Insertion-time law: None = uniform on 1..T, an int in 1..T = fixed, or a pmf of length T.

    Returns
    -------
    fpr, tpr : ndarray
        The false-positive rates and the true-positive rates at them (same shape).
    """
    if fpr is None:
        fpr = np.concatenate([np.logspace(-5, -0.01, 199), [1 - 1e-9]])
    fpr = check_open_unit(fpr, "fpr")
    return fpr, tpr_at_fpr(mech, fpr, test, tau)


def auc(mech, test: str = "semi-star", tau=None) -> float:
    r"""Area under the ROC curve, :math:`\int_0^1 \mathrm{TPR}(f)\,df` (adaptive quadrature).

    Parameters
    ----------
    mech : EmpiricalMean
        The mechanism.
    test : {"semi-star", "final", "semi-max"}
        The test.
    tau : None, int or array_like
        Insertion-time law: None = uniform on 1..T, an int in 1..T = fixed, or a pmf of length T.

    Returns
    -------
    float
        Area under the ROC curve, in [0, 1].
    """
    from scipy import integrate  # lazy: scipy.integrate is a heavy import

    _check_test(test)

    def integrand(f):
        return float(tpr_at_fpr(mech, min(max(f, 1e-300), 1 - 1e-16), test, tau))

    val, _ = integrate.quad(integrand, 0.0, 1.0, limit=200, epsabs=1e-10, epsrel=1e-10,
                            points=[1e-6, 1e-4, 1e-2, 0.1])
    return float(val)

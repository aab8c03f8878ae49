r"""Per-datum membership leakage: vectorised closed forms (``per_datum_leakage`` seed).

Every function evaluates a derivation of :mod:`semi_core.symbolic.leakage`, printed as NumPy
code into :mod:`semi_core.stats._leakage_forms` (generated; no SymPy at run time), or a
log-space rewrite of one (checked against it in the tests). Notation (seed §3-4): data with
per-coordinate mean :math:`\mu_j`, variance :math:`\sigma_j^2`, third cumulant
:math:`\kappa_{3,j}`; release :math:`\hat\mu_n + N/\sqrt n`, :math:`N\sim\mathcal N(0,C_\gamma)`;

.. math::

    m^* = \frac1n\sum_j\frac{(z^*_j-\mu_j)^2}{\sigma_j^2},\qquad
    \tilde m^*_\gamma = \frac1n\sum_j\frac{(z^*_j-\mu_j)^2}{\sigma_j^2+\gamma_j^2}.

Limit experiment :math:`\ell\sim\mathcal N(\mp m/2, m)` (Thm 3.1, 4.1): leakage
:math:`2\Phi(\sqrt m/2)-1`, power :math:`\Phi(\Phi^{-1}(\alpha)+\sqrt m)`, threshold
:math:`-m/2-\sqrt m\,\Phi^{-1}(\alpha)`, GDP curve :math:`\delta(\varepsilon)` of
:math:`\sqrt m`-GDP. Sub-sampling with one shared inclusion event (corrected Thm 4.3): leakage
:math:`\rho[2\Phi(s/2)-1]`, power :math:`\rho\Phi(\Phi^{-1}(\alpha)+s)+(1-\rho)\alpha`,
:math:`s=\sqrt{m/\rho}`; the paper's per-coordinate approximation replaces ``m`` by
:math:`\rho m`. Misspecified target (Thm 4.5) and plug-in LR (:math:`m\lambda/(1+\lambda)`,
:math:`\lambda=n_0/n`) as derived. Finite ``n``: exact cumulants of the Eq. (10) statistic and
its one-term Edgeworth power.
"""

from __future__ import annotations

import numpy as np
from scipy.special import ndtri

from semi_core._validation import check_finite_array, check_int
from semi_core.stats import _leakage_forms as F
from semi_core.stats import gdp as _gdp

__all__ = [
    "leakage_score",
    "covariance_factor",
    "mahalanobis_score",
    "misspecified_scores",
    "leakage",
    "power",
    "threshold",
    "gdp_delta",
    "sub_log_lr",
    "sub_leakage",
    "sub_power",
    "sub_threshold",
    "sub_gdp_delta",
    "miss_advantage",
    "miss_power",
    "miss_threshold",
    "miss_threshold_adv",
    "plugin_effective_score",
    "eq10_cumulants",
    "edgeworth_power",
    "edgeworth_threshold",
    "bernoulli_k3",
    "avg_r2",
    "avg_moments",
]


def _m(m, name: str = "m", *, positive: bool = False) -> np.ndarray:
    a = np.asarray(m, dtype=float)
    if np.isnan(a).any() or np.isinf(a).any():
        raise ValueError(f"{name} must be finite, got {m!r}")
    if (a < 0).any() or (positive and (a <= 0).any()):
        raise ValueError(f"{name} must be {'> 0' if positive else '>= 0'}, got {m!r}")
    return a


def _alpha(alpha) -> np.ndarray:
    a = np.asarray(alpha, dtype=float)
    if np.isnan(a).any() or ((a <= 0) | (a >= 1)).any():
        raise ValueError(f"alpha must lie in (0, 1), got {alpha!r}")
    return a


def _rho(rho) -> np.ndarray:
    a = np.asarray(rho, dtype=float)
    if np.isnan(a).any() or ((a <= 0) | (a > 1)).any():
        raise ValueError(f"rho must lie in (0, 1], got {rho!r}")
    return a


def _vec(v, name, d=None, *, positive=False, nonneg=False):
    a = check_finite_array(v, name)
    if a.ndim == 0 and d is not None:
        a = np.full(d, float(a))
    if positive and (a <= 0).any():
        raise ValueError(f"{name} must be > 0 in every coordinate")
    if nonneg and (a < 0).any():
        raise ValueError(f"{name} must be >= 0 in every coordinate")
    return a


# ------------------------------------------------------------------------- leakage scores

def leakage_score(z, mean, var, n: int, *, noise_var=0.0) -> np.ndarray:
    r"""Leakage score :math:`\tilde m^*_\gamma` (seed Eq. 7, Eq. 12) of one or many targets.

    .. math::

        \tilde m^*_\gamma(z)=\frac1n\sum_{j=1}^d\frac{(z_j-\mu_j)^2}{\sigma_j^2+\gamma_j^2}

    Parameters
    ----------
    z : array_like, shape (..., d)
        Target(s).
    mean, var : array_like, shape (d,)
        Per-coordinate mean and variance (> 0) of the data distribution.
    n : int
        Dataset size (>= 2).
    noise_var : float or array_like, shape (d,)
        :math:`\gamma_j^2` of the noise :math:`N/\sqrt n` (0: exact mean, §3).

    Returns
    -------
    ndarray, shape (...)
    """
    def metric(d):
        v = _vec(var, "var", d, positive=True)
        g = _vec(noise_var, "noise_var", d, nonneg=True)
        if v.shape != (d,) or g.shape != (d,):
            raise ValueError(f"var and noise_var must have shape ({d},) like z's last axis")
        return lambda u: np.sum(u ** 2 / (v + g), axis=-1)       # diagonal: no d x d matrix

    return _quadratic_score(z, mean, n, metric)


def _quadratic_score(z, mean, n, metric) -> np.ndarray:
    r"""The one path of the leakage scores: :math:`\tfrac1n\,u^\top\Sigma^{-1}u` with
    :math:`u=z-\mu`, checked the same way for every covariance form.

    ``metric(d)`` validates the covariance and returns the quadratic form
    :math:`u\mapsto u^\top\Sigma^{-1}u` over the last axis (diagonal: a sum of ratios; full: a
    triangular solve with the Cholesky factor)."""
    zz = check_finite_array(z, "z")
    if zz.ndim == 0:
        zz = zz.reshape(1)
    d = zz.shape[-1]
    mu = _vec(mean, "mean", d)
    if mu.shape != (d,):
        raise ValueError(f"mean must have shape ({d},) like z's last axis")
    quad = metric(d)
    n = check_int(n, "n", minimum=2)
    return quad(zz - mu) / n


#: Smallest fraction of a column's variance left unexplained by the columns before it (the
#: squared Cholesky pivot of the correlation matrix) accepted as linearly independent.
MIN_RESIDUAL_FRACTION = 1e-10


def covariance_factor(cov, *, noise_var=0.0, name: str = "cov") -> np.ndarray:
    r"""Lower Cholesky factor :math:`L` of :math:`\Sigma=C+\operatorname{diag}(\gamma^2)`,
    refusing a (numerically) singular :math:`\Sigma`.

    The factor is taken of the correlation matrix :math:`R=D^{-1/2}\Sigma D^{-1/2}` and
    rescaled; its squared pivots :math:`L^R_{jj}{}^2=1-R^2_{j\mid<j}` are the fractions of column
    :math:`j`'s variance not explained by the columns before it. A pivot below
    :data:`MIN_RESIDUAL_FRACTION` means column :math:`j` is (to rounding) a linear combination
    of the others: the Mahalanobis distance is then not defined (or dominated by rounding), and
    the matrix is refused, never regularised silently.

    Parameters
    ----------
    cov : array_like, shape (d, d)
        Symmetric positive semi-definite covariance :math:`C`.
    noise_var : float or array_like, shape (d,)
        :math:`\gamma_j^2 \ge 0` added to the diagonal.
    name : str
        Argument name for the errors.

    Returns
    -------
    ndarray, shape (d, d)
        :math:`L` with :math:`LL^\top=\Sigma`.

    Raises
    ------
    ValueError
        If :math:`\Sigma` is not symmetric, has a non-positive diagonal entry, or is singular to
        within :data:`MIN_RESIDUAL_FRACTION`.
    """
    C = check_finite_array(cov, name, ndim=2)
    d = C.shape[0]
    if C.shape != (d, d) or not np.allclose(C, C.T, rtol=1e-12, atol=0.0):
        raise ValueError(f"{name} must be a symmetric (d, d) matrix, got shape {C.shape}")
    S = C + np.diag(_vec(noise_var, "noise_var", d, nonneg=True))
    dg = np.diag(S)
    if (dg <= 0).any():
        bad = np.flatnonzero(dg <= 0)[:5].tolist()
        raise ValueError(f"{name}: columns {bad} have zero variance (they carry no membership "
                         "signal; drop them)")
    sd = np.sqrt(dg)
    R = S / np.outer(sd, sd)
    try:
        LR = np.linalg.cholesky(R)
    except np.linalg.LinAlgError:
        LR = None
    piv = None if LR is None else np.diag(LR) ** 2
    if LR is None or (piv < MIN_RESIDUAL_FRACTION).any():
        j = -1 if piv is None else int(np.argmin(piv))
        where = (f"column {j} keeps a fraction {piv[j]:.3g} of its variance given the columns "
                 f"before it" if j >= 0 else "the Cholesky factorisation fails")
        raise ValueError(f"{name} is singular: {where} (below {MIN_RESIDUAL_FRACTION:g}); the "
                         "columns are linearly dependent, so the Mahalanobis distance is not "
                         "defined. Drop the dependent columns, or add noise (--noise) which "
                         "makes the release's covariance regular")
    return LR * sd[:, None]


def mahalanobis_score(z, mean, cov, n: int, *, noise_var=0.0) -> np.ndarray:
    r"""Leakage score with a full covariance (general form of seed Eq. 7/12;
    :mod:`semi_core.symbolic.leakage_cov`).

    .. math::

        \tilde m^*_\gamma(z)=\frac1n(z-\mu)^\top(C+C_\gamma)^{-1}(z-\mu)
          =\frac1n\|L^{-1}(z-\mu)\|^2,\qquad LL^\top=C+C_\gamma,

    by a triangular solve (no inverse); equal to :func:`leakage_score` for a diagonal ``cov``.

    Parameters
    ----------
    z : array_like, shape (..., d)
    mean : array_like, shape (d,)
    cov : array_like, shape (d, d)
        Covariance of one datum (:func:`covariance_factor` refuses a singular one).
    n : int
        Dataset size (>= 2).
    noise_var : float or array_like, shape (d,)

    Returns
    -------
    ndarray, shape (...)
    """
    from scipy.linalg import solve_triangular

    def metric(d):
        L = covariance_factor(cov, noise_var=noise_var)
        if L.shape != (d, d):
            raise ValueError(f"cov must have shape ({d}, {d}), got {L.shape}")

        def quad(u):
            w = solve_triangular(L, u.reshape(-1, d).T, lower=True)
            return np.sum(w * w, axis=0).reshape(u.shape[:-1])
        return quad

    return _quadratic_score(z, mean, n, metric)


def misspecified_scores(z_targ, z_true, mean, var, n: int) -> dict[str, np.ndarray]:
    r""":math:`m^{\rm targ}, m^{\rm scal}, m^{\rm diff}, m^*` of Thm 4.5 (scaled by ``1/n``).

    Parameters
    ----------
    z_targ : array_like, shape (..., d)
        The target point the attacker's log-LR is built for (finite).
    z_true : array_like, shape (..., d)
        The point actually inserted under H1 (same shape as ``z_targ``).
    mean : float or array_like, shape (d,)
        Population mean of the records.
    var : float or array_like, shape (d,)
        Per-coordinate population variances, > 0.
    n : int
        Batch size, >= 2.

    Returns
    -------
    dict of str to ndarray
        ``m_targ``, ``m_scal``, ``m_diff`` and ``m_star`` (each over the leading axes of the
        inputs), the scores of Thm 4.5 divided by ``n``.
    """
    zt = check_finite_array(z_targ, "z_targ")
    zs = check_finite_array(z_true, "z_true")
    if zt.shape != zs.shape:
        raise ValueError(f"z_targ and z_true must have equal shapes, got {zt.shape}, {zs.shape}")
    d = zt.shape[-1]
    mu = _vec(mean, "mean", d)
    v = _vec(var, "var", d, positive=True)
    n = check_int(n, "n", minimum=2)
    a, b = (zt - mu) / np.sqrt(v), (zs - mu) / np.sqrt(v)
    return {"m_targ": np.sum(a * a, -1) / n, "m_scal": np.sum(a * b, -1) / n,
            "m_diff": np.sum((a - b) ** 2, -1) / n, "m_star": np.sum(b * b, -1) / n}


# ------------------------------------------------------------------------- limit experiment

def leakage(m) -> np.ndarray:
    r"""Asymptotic per-datum leakage :math:`\Phi(\sqrt m/2)-\Phi(-\sqrt m/2)` (Cor 3.2 Eq. 8).

    Parameters
    ----------
    m : float or array_like
        Per-datum leakage score (squared standardised distance / n), >= 0.

    Returns
    -------
    ndarray
        Leakage (optimal advantage) in [0, 1), shape of ``m``.

    Examples
    --------
    >>> print(f"{float(leakage(1.0)):.4f}")
    0.3829
    >>> print(f"{float(power(0.01, 1.0)):.4f}")    # optimal TPR at 1 % FPR
    0.0924
    """
    return np.asarray(F.pdl_leakage(_m(m)), dtype=float)


def power(alpha, m) -> np.ndarray:
    r"""Optimal power :math:`\Phi(\Phi^{-1}(\alpha)+\sqrt m)` at FPR ``alpha`` (Eq. 9, 14).

    Parameters
    ----------
    alpha : float or array_like
        False-positive rate, in (0, 1).
    m : float or array_like
        Leakage score, >= 0.

    Returns
    -------
    ndarray
        Optimal true-positive rate in [0, 1], broadcast over ``alpha`` and ``m``.
    """
    return np.asarray(F.pdl_power(_alpha(alpha), _m(m)), dtype=float)


def threshold(alpha, m) -> np.ndarray:
    r"""NP threshold :math:`-m/2-\sqrt m\,\Phi^{-1}(\alpha)` on the log-LR scale (Cor 3.2).

    Parameters
    ----------
    alpha : float or array_like
        False-positive rate, in (0, 1).
    m : float or array_like
        Leakage score, >= 0.

    Returns
    -------
    ndarray
        Neyman-Pearson threshold on the log-LR, broadcast over ``alpha`` and ``m``.
    """
    return np.asarray(F.pdl_threshold(_alpha(alpha), _m(m)), dtype=float)


def gdp_delta(eps, m) -> np.ndarray:
    r""":math:`\delta(\varepsilon)` of the per-datum :math:`\sqrt m`-GDP curve (§3, Rem 4.2).

    .. math::

        \delta(\varepsilon)=\Phi\Big(-\tfrac{\varepsilon}{\sqrt m}+\tfrac{\sqrt m}2\Big)
          -e^{\varepsilon}\Phi\Big(-\tfrac{\varepsilon}{\sqrt m}-\tfrac{\sqrt m}2\Big)

    The project's one GDP privacy profile (:func:`semi_core.stats.gdp.gdp_delta`, stable in the
    tail) at :math:`\mu=\sqrt m`, broadcast over ``eps`` and ``m``.

    Parameters
    ----------
    eps : float or array_like
        Privacy parameter :math:`\varepsilon`, >= 0.
    m : float or array_like
        Leakage score, > 0 (the GDP parameter is :math:`\mu=\sqrt m`).

    Returns
    -------
    ndarray
        :math:`\delta(\varepsilon)` in [0, 1], broadcast over ``eps`` and ``m``.
    """
    e = np.asarray(eps, dtype=float)
    if np.isnan(e).any() or (e < 0).any():
        raise ValueError(f"eps must be >= 0, got {eps!r}")
    e, mm = np.broadcast_arrays(e, np.asarray(_m(m, positive=True), dtype=float))
    out = np.empty(e.shape)
    for val in np.unique(mm):
        sel = mm == val
        out[sel] = _gdp.gdp_delta(e[sel], float(np.sqrt(val)))
    return out


# ------------------------------------------------------------------------- sub-sampling

def sub_log_lr(x, m, rho) -> np.ndarray:
    r"""Log-LR :math:`\log(1-\rho+\rho e^{sx-s^2/2})` of the shared-inclusion experiment
    (``pdl_sub_log_lr``), evaluated with ``logaddexp``; :math:`s=\sqrt{m/\rho}`.

    Parameters
    ----------
    x : float or array_like
        Standardised statistic (standard normal under H0).
    m : float or array_like
        Leakage score, >= 0.
    rho : float or array_like
        Inclusion (sampling) probability, in (0, 1].

    Returns
    -------
    ndarray
        Log-LR, broadcast over the inputs.
    """
    r = _rho(rho)
    s = np.sqrt(_m(m) / r)
    xx = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        return np.logaddexp(np.log1p(-r), np.log(r) + s * xx - s * s / 2)


def sub_leakage(m, rho, *, form: str = "corrected") -> np.ndarray:
    r"""Leakage of the sub-sampled mean: :math:`\rho[2\Phi(s/2)-1]` (corrected Thm 4.3).

    ``form="paper"`` gives the seed's per-coordinate approximation
    :math:`2\Phi(\sqrt{\rho m}/2)-1` (Thm 4.3 as printed).

    Parameters
    ----------
    m : float or array_like
        Leakage score, >= 0.
    rho : float or array_like
        Inclusion probability, in (0, 1].
    form : {"corrected", "paper"}
        The corrected derivation or the seed's printed approximation.

    Returns
    -------
    ndarray
        Leakage (optimal advantage) in [0, 1), broadcast over ``m`` and ``rho``.
    """
    if form == "corrected":
        return np.asarray(F.pdl_sub_leakage(_m(m), _rho(rho)), dtype=float)
    if form == "paper":
        return np.asarray(F.pdl_sub_paper_leakage(_m(m), _rho(rho)), dtype=float)
    raise ValueError(f"form must be 'corrected' or 'paper', got {form!r}")


def sub_power(alpha, m, rho, *, form: str = "corrected") -> np.ndarray:
    r"""Optimal power :math:`\rho\Phi(\Phi^{-1}(\alpha)+\sqrt{m/\rho})+(1-\rho)\alpha`
    (corrected Eq. 16); ``form="paper"``: :math:`\Phi(\Phi^{-1}(\alpha)+\sqrt{\rho m})`.

    Parameters
    ----------
    alpha : float or array_like
        False-positive rate, in (0, 1).
    m : float or array_like
        Leakage score, >= 0.
    rho : float or array_like
        Inclusion probability, in (0, 1].
    form : {"corrected", "paper"}
        The corrected derivation or the seed's printed approximation.

    Returns
    -------
    ndarray
        Optimal true-positive rate in [0, 1], broadcast over the inputs.
    """
    if form == "corrected":
        return np.asarray(F.pdl_sub_power(_alpha(alpha), _m(m), _rho(rho)),
                          dtype=float)
    if form == "paper":
        return np.asarray(F.pdl_sub_paper_power(_alpha(alpha), _m(m), _rho(rho)),
                          dtype=float)
    raise ValueError(f"form must be 'corrected' or 'paper', got {form!r}")


def sub_threshold(alpha, m, rho) -> np.ndarray:
    r"""NP threshold of :func:`sub_log_lr` at FPR ``alpha``: :math:`\ell^{\rm sub}(-\Phi^{-1}(\alpha))`.

    Parameters
    ----------
    alpha : float or array_like
        False-positive rate, in (0, 1).
    m : float or array_like
        Leakage score, >= 0.
    rho : float or array_like
        Inclusion probability, in (0, 1].

    Returns
    -------
    ndarray
        Threshold on the log-LR of :func:`sub_log_lr`, broadcast over the inputs.
    """
    return sub_log_lr(-ndtri(_alpha(alpha)), m, rho)


def sub_gdp_delta(eps, m, rho) -> np.ndarray:
    r"""Exact :math:`\delta(\varepsilon)` of the shared-inclusion limit experiment.

    :math:`P_1=\rho Q+(1-\rho)P_0` with :math:`(P_0,Q)` a :math:`s`-GDP pair; the two
    hockey-stick divergences are :math:`\rho\,\delta_s(\varepsilon_1)`,
    :math:`\varepsilon_1=\log(1+(e^\varepsilon-1)/\rho)`, and
    :math:`c\,\delta_s(\varepsilon+\log\rho-\log c)`, :math:`c=1-e^\varepsilon(1-\rho)>0`
    (sub-sampling amplification; checked by quadrature in the tests); returns their maximum.

    Parameters
    ----------
    eps : float or array_like
        Privacy parameter :math:`\varepsilon`, >= 0.
    m : float or array_like
        Leakage score, > 0.
    rho : float or array_like
        Inclusion probability, in (0, 1].

    Returns
    -------
    ndarray
        :math:`\delta(\varepsilon)` in [0, 1], broadcast over the inputs.
    """
    e = np.asarray(eps, dtype=float)
    if np.isnan(e).any() or (e < 0).any():
        raise ValueError(f"eps must be >= 0, got {eps!r}")
    r = _rho(rho)
    s2 = _m(m, positive=True) / r
    e1 = np.log1p(np.expm1(e) / r)
    d1 = r * gdp_delta(e1, s2)
    c = 1 - np.exp(e) * (1 - r)
    with np.errstate(divide="ignore", invalid="ignore"):
        e2 = np.where(c > 0, e + np.log(r) - np.log(np.where(c > 0, c, 1.0)), 0.0)
    d2 = np.where(c > 0, np.where(c > 0, c, 0.0) * gdp_delta(np.maximum(e2, 0.0), s2), 0.0)
    # e2 >= 0 whenever c > 0 (e + log rho >= log(1 - e^e (1-rho)) iff e^e >= 1)
    return np.maximum(d1, d2)


# ------------------------------------------------------------------------- misspecification

def miss_advantage(m_scal, m_targ) -> np.ndarray:
    r"""Advantage of the misspecified LR at its optimal threshold (Thm 4.5):
    :math:`2\Phi(|m^{\rm scal}|/(2\sqrt{m^{\rm targ}}))-1`.

    Parameters
    ----------
    m_scal : float or array_like
        Cross score :math:`m^{\rm scal}` (any sign; its absolute value is used).
    m_targ : float or array_like
        Target score :math:`m^{\rm targ}`, > 0.

    Returns
    -------
    ndarray
        Advantage in [0, 1), broadcast over the inputs.
    """
    ms = np.abs(np.asarray(m_scal, dtype=float))
    return np.asarray(F.pdl_miss_advantage(ms, _m(m_targ, "m_targ",
                                                                positive=True)), dtype=float)


def miss_power(alpha, m_scal, m_targ) -> np.ndarray:
    r"""Power at FPR ``alpha`` of the misspecified LR,
    :math:`\Phi(\Phi^{-1}(\alpha)+m^{\rm scal}/\sqrt{m^{\rm targ}})`.

    Parameters
    ----------
    alpha : float or array_like
        False-positive rate, in (0, 1).
    m_scal : float or array_like
        Cross score :math:`m^{\rm scal}`.
    m_targ : float or array_like
        Target score :math:`m^{\rm targ}`, > 0.

    Returns
    -------
    ndarray
        True-positive rate in [0, 1], broadcast over the inputs.
    """
    return np.asarray(F.pdl_miss_power(
        _alpha(alpha), np.asarray(m_scal, dtype=float),
        _m(m_targ, "m_targ", positive=True)), dtype=float)


def miss_threshold(alpha, m_targ) -> np.ndarray:
    r"""Threshold at FPR ``alpha`` of the misspecified LR (depends on :math:`m^{\rm targ}` only).

    Parameters
    ----------
    alpha : float or array_like
        False-positive rate, in (0, 1).
    m_targ : float or array_like
        Target score :math:`m^{\rm targ}`, > 0.

    Returns
    -------
    ndarray
        Threshold on the misspecified log-LR, broadcast over the inputs.
    """
    return np.asarray(F.pdl_miss_threshold(
        _alpha(alpha), _m(m_targ, "m_targ", positive=True)), dtype=float)


def miss_threshold_adv(m_scal, m_targ) -> np.ndarray:
    r"""Advantage-optimal threshold :math:`(m^{\rm scal}-m^{\rm targ})/2` (midpoint of the laws).

    Parameters
    ----------
    m_scal : float or array_like
        Cross score :math:`m^{\rm scal}`.
    m_targ : float or array_like
        Target score :math:`m^{\rm targ}`, > 0.

    Returns
    -------
    ndarray
        Advantage-maximising threshold, broadcast over the inputs.
    """
    return np.asarray(F.pdl_miss_threshold_adv(
        np.asarray(m_scal, dtype=float), _m(m_targ, "m_targ", positive=True)), dtype=float)


# ------------------------------------------------------------------------- plug-in LR

def plugin_effective_score(m, n0, n) -> np.ndarray:
    r"""Effective leakage score :math:`m\lambda/(1+\lambda)`, :math:`\lambda=n_0/n`, of the
    plug-in LR with a fresh reference sample of size :math:`n_0` per game (known variances).
    The power loss is :math:`\Phi(\Phi^{-1}(\alpha)+\sqrt m)-\Phi(\Phi^{-1}(\alpha)+\sqrt{m_{\rm eff}})`.

    Parameters
    ----------
    m : float or array_like
        Leakage score with known parameters, >= 0.
    n0 : float or array_like
        Size of the fresh reference sample, > 0.
    n : float or array_like
        Batch size, > 0.

    Returns
    -------
    ndarray
        Effective score :math:`m_{\rm eff}` in [0, m], broadcast over the inputs.
    """
    n0 = np.asarray(n0, dtype=float)
    nn = np.asarray(n, dtype=float)
    if (n0 <= 0).any() or (nn <= 0).any() or np.isnan(n0).any() or np.isnan(nn).any():
        raise ValueError("n0 and n must be > 0")
    return np.asarray(F.pdl_plugin_effective_score(_m(m), n0 / nn), dtype=float)


# ------------------------------------------------------------------------- finite n

def bernoulli_k3(p) -> np.ndarray:
    r"""Third cumulant :math:`p(1-p)(1-2p)` of Bernoulli(p) (``pdl_bernoulli_k3``).

    Parameters
    ----------
    p : float or array_like
        Success probability, in (0, 1).

    Returns
    -------
    ndarray
        Third cumulant, shape of ``p``.
    """
    pp = np.asarray(p, dtype=float)
    if np.isnan(pp).any() or ((pp <= 0) | (pp >= 1)).any():
        raise ValueError("p must lie in (0, 1)")
    return np.asarray(F.pdl_bernoulli_k3(pp), dtype=float)


def eq10_cumulants(z, mean, var, n: int, *, k3=0.0, noise_var=0.0) -> dict[str, np.ndarray]:
    r"""Exact finite-``n`` mean, variance and third cumulant of the Eq. (10) statistic.

    Sums of the per-coordinate derivations ``pdl_eq10_*``:

    .. math::

        \kappa_1^{(0)}=-\tfrac{\tilde m}{2},\ \kappa_2^{(0)}=\tilde m,\
        \kappa_3^{(0)}=\sum_j\frac{c_j^3\kappa_{3,j}}{n^2};\quad
        \kappa_1^{(1)}=\tfrac{\tilde m}{2},\
        \kappa_2^{(1)}=\tilde m-\sum_j\frac{c_j^2\sigma_j^2}{n^2},\
        \kappa_3^{(1)}=\sum_j\frac{(n-1)c_j^3\kappa_{3,j}}{n^3},

    :math:`c_j=\delta_j/(\sigma_j^2+\gamma_j^2)`. Returns ``k1_0, k2_0, k3_0, k1_1, k2_1, k3_1``
    (arrays over the leading axes of ``z``).

    Parameters
    ----------
    z : array_like, shape (..., d)
        Target points (finite).
    mean : float or array_like, shape (d,)
        Population mean.
    var : float or array_like, shape (d,)
        Per-coordinate population variances, > 0.
    n : int
        Batch size, >= 2.
    k3 : float or array_like, shape (d,)
        Per-coordinate third cumulants of the records (0 for Gaussian data).
    noise_var : float or array_like, shape (d,)
        Per-coordinate variance of the added noise, >= 0.

    Returns
    -------
    dict of str to ndarray
        ``mean0, var0, k3_0`` (under H0) and ``mean1, var1, k3_1`` (under H1), each over the
        leading axes of ``z``.
    """
    zz = check_finite_array(z, "z")
    d = zz.shape[-1]
    mu = _vec(mean, "mean", d)
    v = _vec(var, "var", d, positive=True)
    g = _vec(noise_var, "noise_var", d, nonneg=True)
    kk = _vec(k3, "k3", d)
    n = check_int(n, "n", minimum=2)
    dl = zz - mu
    names = ("mean0", "var0", "k3_0", "mean1", "var1", "k3_1")
    out = {}
    for key, name in zip(("k1_0", "k2_0", "k3_0", "k1_1", "k2_1", "k3_1"), names, strict=True):
        f = getattr(F, f"pdl_eq10_{name}")
        args = (dl, v, g, kk, n) if "k3" in name else (dl, v, g, n)
        out[key] = np.sum(np.broadcast_to(f(*args), dl.shape), axis=-1)
    return out


def _edge(cum, h):
    k1, k2, k3 = cum[f"k1_{h}"], cum[f"k2_{h}"], cum[f"k3_{h}"]
    return k1, np.sqrt(k2), k3 / k2**1.5


def edgeworth_threshold(alpha, cum) -> np.ndarray:
    r"""Threshold at FPR ``alpha`` from the H0 cumulants (Cornish-Fisher,
    :math:`t=\kappa_1+\sqrt{\kappa_2}\,[z+\lambda(z^2-1)/6]`, :math:`z=\Phi^{-1}(1-\alpha)`).

    Parameters
    ----------
    alpha : float or array_like
        False-positive rate, in (0, 1).
    cum : dict of str to ndarray
        Cumulants as returned by :func:`eq10_cumulants`.

    Returns
    -------
    ndarray
        Threshold on the Eq. (10) statistic.
    """
    k1, sd, lam = _edge(cum, 0)
    zq = -ndtri(_alpha(alpha))
    return k1 + sd * F.pdl_cornish_fisher(zq, lam)


def edgeworth_power(alpha, cum) -> np.ndarray:
    r"""Power at FPR ``alpha`` of the Eq. (10) test with one-term Edgeworth corrections.

    .. math::

        \mathrm{Pow}\approx1-F_1\big((t_\alpha-\kappa_1^{(1)})/\sqrt{\kappa_2^{(1)}}\big),\qquad
        F(u)=\Phi(u)-\tfrac{\lambda}{6}(u^2-1)\varphi(u).

    With ``k3 = 0`` it is the Gaussian power with the exact finite-``n`` means and variances.

    Parameters
    ----------
    alpha : float or array_like
        False-positive rate, in (0, 1).
    cum : dict of str to ndarray
        Cumulants as returned by :func:`eq10_cumulants`.

    Returns
    -------
    ndarray
        Approximate true-positive rate.
    """
    t = edgeworth_threshold(alpha, cum)
    k1, sd, lam = _edge(cum, 1)
    uu = (t - k1) / sd
    return 1.0 - F.pdl_edgeworth_cdf(uu, lam)


def avg_r2(n, var, noise_var=0.0) -> np.ndarray:
    r"""Squared correlation :math:`r_j^2=\sigma_j^2/(n(\sigma_j^2+\gamma_j^2))` of
    :math:`(z_j, o_j)` under :math:`H_1` of the average-datum game (seed App. B, Alg. 3).

    Parameters
    ----------
    n : int or float
        Batch size, >= 2.
    var : float or array_like, shape (d,)
        Per-coordinate data variances, > 0.
    noise_var : float or array_like, shape (d,)
        Per-coordinate noise variances, >= 0.

    Returns
    -------
    ndarray, shape (d,)
        :math:`r_j^2` in (0, 1).
    """
    v = _m(var, "var", positive=True)
    g = _m(noise_var, "noise_var")
    nn = float(n)
    if not nn >= 2:
        raise ValueError(f"n must be >= 2, got {n!r}")
    return np.broadcast_to(v / (nn * (v + g)), np.broadcast(v, g).shape).astype(float)


def avg_moments(r2) -> dict[str, float]:
    r"""Exact mean and variance of the average-datum log-LR summed over coordinates (Gaussian
    data, ``rho = 1``; :func:`semi_core.symbolic.leakage.avg_moments`).

    .. math::

        \mathbb E_1[\ell]=-\tfrac12\sum_j\log(1-r_j^2),\quad
        \mathrm{Var}_1[\ell]=\sum_j r_j^2,\quad
        \mathbb E_0[\ell]=\sum_j\Big(-\tfrac{r_j^2}{1-r_j^2}-\tfrac12\log(1-r_j^2)\Big),\quad
        \mathrm{Var}_0[\ell]=\sum_j\frac{r_j^2(1+r_j^2)}{(1-r_j^2)^2}.

    Also ``M`` :math:`=\sum_j r_j^2` (:math:`=d/n` without noise, the seed's Remark 3.3
    :math:`\tau`), the limit experiment :math:`\mathcal N(\mp M/2, M)`.

    Parameters
    ----------
    r2 : array_like, shape (d,)
        Squared correlations :math:`r_j^2`, in (0, 1) (see :func:`avg_r2`).

    Returns
    -------
    dict of str to float
        ``M``, ``mean0``, ``var0``, ``mean1``, ``var1``.
    """
    r = _m(r2, "r2", positive=True)
    if (r >= 1).any():
        raise ValueError(f"r2 must lie in (0, 1), got max {float(r.max())}")
    out = {"M": float(np.sum(r))}
    for key, fn in (("mean0", F.pdl_avg_mean0), ("var0", F.pdl_avg_var0),
                    ("mean1", F.pdl_avg_mean1), ("var1", F.pdl_avg_var1)):
        out[key] = float(np.sum(np.broadcast_to(fn(r), r.shape)))
    return out

"""SeMI-SGD log-likelihood ratios (seed Theorem 4.1 / F.4) and the DP-SGD form (seed §4.2).

Notation (seed §4.1): :math:`N = \\theta_\\tau - \\theta_{\\tau-1} + \\eta\\mu_g`,
:math:`\\delta_g = g^* - \\mu_g`, batch size ``n``. Under the Gaussian-gradient assumption

.. math::

   N \\mid H_0 \\sim \\mathcal N(0, V_0),\\qquad N \\mid H_1^\\tau \\sim
   \\mathcal N(-\\eta\\delta_g/n, V_1),

with, for DP-SGD (noise :math:`\\xi\\sim\\mathcal N(0, \\sigma_{DP}^2C^2I/n^2)` on the clipped mean,
:math:`\\mu_g,\\Sigma_g,g^*` of *clipped* gradients),

.. math::

   V_0 = \\eta^2\\Big(\\frac{\\Sigma_g}{n} + \\frac{\\sigma_{DP}^2C^2}{n^2}I\\Big),\\qquad
   V_1 = \\eta^2\\Big(\\frac{(n-1)\\Sigma_g}{n^2} + \\frac{\\sigma_{DP}^2C^2}{n^2}I\\Big).

These are not proportional when :math:`\\sigma_{DP} > 0`, so the log-LR keeps both
log-determinants and both quadratic forms:

.. math::

   \\log\\mathrm{LR} = \\tfrac12\\log\\frac{\\det V_0}{\\det V_1}
   - \\tfrac12 (N + \\eta\\delta_g/n)^\\top V_1^{-1}(N + \\eta\\delta_g/n)
   + \\tfrac12 N^\\top V_0^{-1}N .

At :math:`\\sigma_{DP}=0` it reduces to Theorem 4.1 (checked in the tests; the symbolic twin is
``semi_core.symbolic.sgd``). Only step :math:`\\tau` enters (isolation property, Thm F.3).
"""

from __future__ import annotations

import numpy as np
from scipy import linalg
from scipy.special import gammaln, logsumexp

from semi_core._validation import check_batch_size, check_finite_array, check_positive
from semi_core.mechanisms.gaussian import GaussianPairLogLR  # the one two-covariance LR
from semi_core.stats.statistics import semi_max  # the one SeMI-max (re-exported here)

from .gradstats import LowRankPlusDiagonal

__all__ = ["semi_sgd_log_lr", "dpsgd_log_lr", "dpsgd_covariances", "semi_max",
           "poisson_dirac_log_lr", "poisson_dirac_final_log_lr", "poisson_mixture_log_lr"]


def _check_common(update, eta, mu_g, g_target, n):
    eta = check_positive(eta, "eta")
    n = check_batch_size(n, "n")
    mu = check_finite_array(mu_g, "mu_g", ndim=1)
    d = mu.size
    upd = check_finite_array(update, "update")
    if upd.shape[-1:] != (d,):
        raise ValueError(f"update must have last dimension d={d}, got shape {upd.shape}")
    g = check_finite_array(g_target, "g_target", shape=(d,))
    return upd, eta, mu, g, n, d


def semi_sgd_log_lr(update, eta, mu_g, sigma_g, g_target, n) -> np.ndarray:
    """SeMI-SGD log-LR of seed Theorem 4.1 (plain SGD), via a Cholesky whitening.

    .. math::

       \\log\\mathrm{LR} = -\\frac d2\\log\\frac{n-1}{n}
       - \\frac{n}{2(n-1)\\eta^2}N^\\top\\Sigma_g^{-1}N
       - \\frac{n}{(n-1)\\eta}N^\\top\\Sigma_g^{-1}\\delta_g - \\frac{m^*}{2(n-1)}

    Parameters
    ----------
    update : array_like, shape (..., d)
        :math:`\\theta_\\tau - \\theta_{\\tau-1}` (any leading batch shape).
    eta : float
        Learning rate :math:`\\eta_\\tau > 0`.
    mu_g : array_like, shape (d,) or (..., d)
        Mean per-sample gradient at :math:`\\theta_{\\tau-1}` (one per game when batched).
    sigma_g : array_like (d, d), (..., d, d) or LowRankPlusDiagonal
        Per-sample gradient covariance (positive definite; one per game when batched).
    g_target : array_like, shape (d,) or (..., d)
        Target gradient :math:`\\nabla_\\theta\\ell(\\theta_{\\tau-1}; z^*)`.
    n : int
        Batch size, ``>= 2``.

    Returns
    -------
    ndarray
        Log-LR with the leading shape of ``update``.
    """
    if not isinstance(sigma_g, LowRankPlusDiagonal) and (np.ndim(mu_g) > 1 or np.ndim(sigma_g) > 2):
        return _semi_sgd_log_lr_batched(update, eta, mu_g, sigma_g, g_target, n)
    upd, eta, mu, g, n, d = _check_common(update, eta, mu_g, g_target, n)
    N = upd + eta * mu
    delta = g - mu
    if isinstance(sigma_g, LowRankPlusDiagonal):
        sol_delta = sigma_g.solve(delta)
        flat = N.reshape(-1, d)
        q_nn = np.einsum("ij,ji->i", flat, sigma_g.solve(flat.T)).reshape(N.shape[:-1])
        q_nd = N @ sol_delta
        m_star = float(delta @ sol_delta)
    else:
        from semi_core._validation import check_covariance

        _, chol = check_covariance(sigma_g, "sigma_g", d=d)
        zn = linalg.solve_triangular(chol, N.reshape(-1, d).T, lower=True).T.reshape(N.shape)
        zd = linalg.solve_triangular(chol, delta, lower=True)
        q_nn, q_nd, m_star = (zn * zn).sum(-1), zn @ zd, float(zd @ zd)
    return (-0.5 * d * np.log1p(-1.0 / n) - n / (2 * (n - 1) * eta**2) * q_nn
            - n / ((n - 1) * eta) * q_nd - m_star / (2 * (n - 1)))


def _semi_sgd_log_lr_batched(update, eta, mu_g, sigma_g, g_target, n) -> np.ndarray:
    """Theorem 4.1 with per-game :math:`(\\mu_g,\\Sigma_g,\\nabla\\ell)` (leading axes broadcast)."""
    eta = check_positive(eta, "eta")
    n = check_batch_size(n, "n")
    upd = check_finite_array(update, "update")
    mu = check_finite_array(mu_g, "mu_g")
    g = check_finite_array(g_target, "g_target")
    cov = check_finite_array(sigma_g, "sigma_g")
    d = upd.shape[-1]
    if mu.shape[-1] != d or g.shape[-1] != d or cov.shape[-2:] != (d, d):
        raise ValueError(f"mu_g, g_target (..., {d}) and sigma_g (..., {d}, {d}) must match the "
                         f"update's d={d}; got {mu.shape}, {g.shape}, {cov.shape}")
    try:
        chol = np.linalg.cholesky(cov)
    except np.linalg.LinAlgError:
        raise ValueError("sigma_g must be positive definite (Cholesky failed)") from None
    N = upd + eta * mu
    delta = np.broadcast_to(g - mu, N.shape)
    chol = np.broadcast_to(chol, N.shape + (d,))
    zn = np.linalg.solve(chol, N[..., None])[..., 0]  # triangular systems, batched
    zd = np.linalg.solve(chol, delta[..., None])[..., 0]
    return (-0.5 * d * np.log1p(-1.0 / n) - n / (2 * (n - 1) * eta**2) * (zn * zn).sum(-1)
            - n / ((n - 1) * eta) * (zn * zd).sum(-1) - (zd * zd).sum(-1) / (2 * (n - 1)))


def dpsgd_covariances(sigma_g, n, eta, sigma_dp, clip):
    """:math:`(V_0, V_1)` of the module docstring, dense or low-rank-plus-diagonal.

    Parameters
    ----------
    sigma_g : ndarray or LowRankPlusDiagonal, shape (d, d)
        Covariance of the (clipped) per-sample gradient.
    n : int
        Batch size, >= 2.
    eta : float
        Learning rate, > 0.
    sigma_dp : float
        Noise multiplier, >= 0.
    clip : float
        Clipping norm, > 0.

    Returns
    -------
    V0, V1 : ndarray or LowRankPlusDiagonal
        Covariances of the update under H0 and H1.
    """
    n = check_batch_size(n, "n")
    eta = check_positive(eta, "eta")
    s = (float(sigma_dp) * float(clip) / n) ** 2
    a0, a1 = 1.0 / n, (n - 1) / n**2
    if isinstance(sigma_g, LowRankPlusDiagonal):
        return sigma_g.affine(eta**2 * a0, eta**2 * s), sigma_g.affine(eta**2 * a1, eta**2 * s)
    sig = np.asarray(sigma_g, dtype=float)
    eye = np.eye(sig.shape[0])
    return eta**2 * (a0 * sig + s * eye), eta**2 * (a1 * sig + s * eye)


def dpsgd_log_lr(update, eta, mu_g, sigma_g, g_target, n, *, sigma_dp: float,
                 clip: float) -> np.ndarray:
    """SeMI-SGD log-LR for DP-SGD (noise covariance folded in; seed §4.2 made explicit).

    .. math::

       \\log\\mathrm{LR} = \\tfrac12\\log\\frac{\\det V_0}{\\det V_1}
       - \\tfrac12 (N + \\eta\\delta_g/n)^\\top V_1^{-1}(N + \\eta\\delta_g/n)
       + \\tfrac12 N^\\top V_0^{-1}N

    with :math:`V_0, V_1` as in the module docstring. Parameters as in
    :func:`semi_sgd_log_lr` (``mu_g``, ``sigma_g``, ``g_target`` of clipped gradients), plus
    ``sigma_dp >= 0`` (noise multiplier) and ``clip`` :math:`C > 0`. With ``sigma_dp = 0`` this
    equals Theorem 4.1.

    Parameters
    ----------
    update : array_like, shape (..., d)
        :math:`\\theta_\\tau-\\theta_{\\tau-1}`.
    eta : float
        Learning rate, > 0.
    mu_g : array_like, shape (d,)
        Mean clipped per-sample gradient.
    sigma_g : array_like or LowRankPlusDiagonal, shape (d, d)
        Its covariance.
    g_target : array_like, shape (d,)
        Clipped gradient of the target.
    n : int
        Batch size, >= 2.
    sigma_dp : float
        Noise multiplier, >= 0.
    clip : float
        Clipping norm C, > 0.

    Returns
    -------
    ndarray, shape (...)
        The log-LR.
    """
    upd, eta, mu, g, n, d = _check_common(update, eta, mu_g, g_target, n)
    if not (np.isfinite(sigma_dp) and sigma_dp >= 0):
        raise ValueError(f"sigma_dp must be finite and >= 0, got {sigma_dp}")
    check_positive(clip, "clip")
    v0, v1 = dpsgd_covariances(sigma_g, n, eta, sigma_dp, clip)
    N = upd + eta * mu
    return GaussianPairLogLR(np.zeros(d), v0, -eta * (g - mu) / n, v1)(N)


# ------------------------------------------------------------------ Poisson sub-sampling
def _check_rate(q) -> float:
    if not (isinstance(q, int | float | np.floating) and 0 < float(q) <= 1):
        raise ValueError(f"q (the sample rate) must be in (0, 1], got {q!r}")
    return float(q)


def poisson_mixture_log_lr(log_lr, q) -> np.ndarray:
    r"""Log-LR of one Poisson-sampled step from the log-LR of the step that holds the canary.

    Under :math:`H_1` (the canary in the data set) the step holds it with probability
    :math:`q` (the law :math:`P_1`), else it is the :math:`H_0` step :math:`P_0`; so

    .. math::

       \log\frac{(1-q)P_0 + qP_1}{P_0} = \log\bigl(1-q+q\,e^{\ell}\bigr)
       = \operatorname{logaddexp}\bigl(\log(1-q), \log q + \ell\bigr),

    :math:`\ell=\log(P_1/P_0)`, evaluated in log space (no overflow for large :math:`\ell`;
    ``q = 1`` gives :math:`\ell`). Symbolic twin: ``poisson_step_log_lr``
    (:mod:`semi_core.symbolic.poisson_sgd`).

    Parameters
    ----------
    log_lr : array_like
        :math:`\ell`, any shape (``-inf`` allowed: a release impossible with the canary).
    q : float
        Sample rate in :math:`(0, 1]`.

    Returns
    -------
    ndarray
        Same shape as ``log_lr``.
    """
    q = _check_rate(q)
    ell = np.asarray(log_lr, dtype=float)
    if np.isnan(ell).any():
        raise ValueError("log_lr holds NaN")
    if q == 1.0:
        return ell.copy()
    with np.errstate(divide="ignore"):
        return np.logaddexp(np.log1p(-q), np.log(q) + ell)


def poisson_dirac_log_lr(s, *, q, a, var) -> np.ndarray:
    r"""Per-step log-LR of a Dirac gradient canary under Poisson sampling (add/remove).

    The standardised update at the canary coordinate is :math:`s\sim\mathcal N(a,\varsigma^2)`
    under :math:`H_0` and, under :math:`H_1`, the mixture :math:`(1-q)\mathcal N(a,
    \varsigma^2)+q\,\mathcal N(a+1,\varsigma^2)` (the canary's clipped gradient :math:`Ce_j`
    is added with probability :math:`q`), so

    .. math::

       \log\mathrm{LR}(s) = \log\Bigl(1-q+q\exp\frac{2(s-a)-1}{2\varsigma^2}\Bigr)

    (seed ``semi_sequential_mi`` §4.2 with Poisson sub-sampling; derived in
    :mod:`semi_core.symbolic.poisson_sgd`, ``poisson_dirac_step_log_lr``).

    Parameters
    ----------
    s, a, var : array_like (broadcast)
        Standardised update, natural mean :math:`a` and variance :math:`\varsigma^2 > 0`.
    q : float
        Sample rate in :math:`(0, 1]`.

    Returns
    -------
    ndarray
    """
    var = np.asarray(var, dtype=float)
    if np.any(~(var > 0)):
        raise ValueError("var must be > 0 (noise_multiplier > 0 or natural gradient variance)")
    ell = (2.0 * (np.asarray(s, dtype=float) - a) - 1.0) / (2.0 * var)
    return poisson_mixture_log_lr(ell, q)


def poisson_dirac_final_log_lr(S, *, q, steps: int, A, V) -> np.ndarray:
    r"""Final Observation log-LR of a Dirac canary under Poisson sampling.

    :math:`S=\sum_t s_t` reads :math:`\theta_T-\theta_0` only. The canary is in
    :math:`K\sim\mathrm{Bin}(T,q)` steps, so :math:`S\mid H_1` is the mixture
    :math:`\sum_k\binom Tk q^k(1-q)^{T-k}\mathcal N(A+k, V)` and :math:`S\mid H_0\sim
    \mathcal N(A,V)`:

    .. math::

       \log\mathrm{LR}(S)=\log\sum_{k=0}^{T}\binom Tk q^k(1-q)^{T-k}
       \exp\frac{2k(S-A)-k^2}{2V}

    (a log-sum-exp over :math:`k`; symbolic twin ``poisson_dirac_final_log_lr``).

    Parameters
    ----------
    S, A, V : array_like (broadcast), shape (R,)
        Sum of standardised updates, of natural means, of variances (``V > 0``).
    q : float
        Sample rate in :math:`(0, 1]`.
    steps : int
        :math:`T \ge 1`.

    Returns
    -------
    ndarray, shape (R,)
    """
    q = _check_rate(q)
    T = int(steps)
    if T < 1:
        raise ValueError(f"steps must be >= 1, got {steps!r}")
    V = np.asarray(V, dtype=float)
    if np.any(~(V > 0)):
        raise ValueError("V must be > 0")
    x = np.asarray(S, dtype=float) - A
    k = np.arange(T + 1, dtype=float)
    with np.errstate(divide="ignore", invalid="ignore"):
        log_pmf = (gammaln(T + 1) - gammaln(k + 1) - gammaln(T - k + 1)
                   + k * np.log(q) + (T - k) * np.log1p(-q))
    if q == 1.0:
        log_pmf = np.where(k == T, 0.0, -np.inf)
    terms = log_pmf + (2.0 * k * x[..., None] - k * k) / (2.0 * V[..., None])
    return logsumexp(terms, axis=-1)

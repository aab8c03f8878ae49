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

from semi_core._validation import check_batch_size, check_finite_array, check_positive
from semi_core.mechanisms.gaussian import GaussianPairLogLR  # the one two-covariance LR
from semi_core.stats.statistics import semi_max  # the one SeMI-max (re-exported here)

from .gradstats import LowRankPlusDiagonal

__all__ = ["semi_sgd_log_lr", "dpsgd_log_lr", "dpsgd_covariances", "semi_max"]


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
    """:math:`(V_0, V_1)` of the module docstring, dense or low-rank-plus-diagonal."""
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
    """
    upd, eta, mu, g, n, d = _check_common(update, eta, mu_g, g_target, n)
    if not (np.isfinite(sigma_dp) and sigma_dp >= 0):
        raise ValueError(f"sigma_dp must be finite and >= 0, got {sigma_dp}")
    check_positive(clip, "clip")
    v0, v1 = dpsgd_covariances(sigma_g, n, eta, sigma_dp, clip)
    N = upd + eta * mu
    return GaussianPairLogLR(np.zeros(d), v0, -eta * (g - mu) / n, v1)(N)

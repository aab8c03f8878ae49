"""Independent reference computations used by the claim checks.

Nothing here copies a seed formula: the joint Gaussian law of the released running means is
built from the mechanism's definition (a linear map of independent batch means), error rates
and the per-batch log LR are our SymPy derivations (``semi_core.symbolic``: ``em_alpha``,
``em_beta``, ``em_log_lr``, evaluated through their lambdified forms), and privacy curves come
from quadrature of the hockey-stick divergence.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import integrate, optimize, stats
from scipy.special import logsumexp

from semi_core.symbolic import get_derivation

__all__ = [
    "linear_gaussian_joint",
    "releases_joint",
    "joint_loglr",
    "mixture_loglr",
    "alpha_lr",
    "beta_lr",
    "loglr_batch",
    "hockey_stick_gauss",
    "eps_of_delta_gauss",
]


def linear_gaussian_joint(a, c, v, x0: float = 0.0):
    """Mean and covariance of ``x_t = a_t x_{t-1} + c_t + e_t``, ``e_t ~ N(0, v_t)``, ``t=1..T``.

    Written as ``x = K (c + e) + K[:, 0] a_1 x_0`` with ``K[t, s] = prod_{u=s+1..t} a_u``.
    """
    a, c, v = (np.asarray(z, dtype=float) for z in (a, c, v))
    T = a.size
    K = np.zeros((T, T))
    for t in range(T):
        K[t, t] = 1.0
        for s in range(t - 1, -1, -1):
            K[t, s] = K[t, s + 1] * a[s + 1]
    shift = np.zeros(T)
    shift[0] = a[0] * x0
    mean = K @ (c + shift)
    cov = K @ np.diag(v) @ K.T
    return mean, cov


def releases_joint(n_t, mu_t, var_t, tau: int | None, z: float):
    """Joint law of the univariate running means ``(mu_hat_1..mu_hat_T)``.

    ``mu_hat_t = sum_{s<=t} n_s Xbar_s / N_t`` with independent batch means; under ``H1^tau``
    batch ``tau`` (1-based) holds ``z`` and ``n_tau - 1`` fresh points.
    """
    n_t = np.asarray(n_t, dtype=float)
    mu_t = np.asarray(mu_t, dtype=float)
    var_t = np.asarray(var_t, dtype=float)
    T = n_t.size
    m = mu_t.copy()
    v = var_t / n_t
    if tau is not None:
        k = tau - 1
        m[k] = ((n_t[k] - 1) * mu_t[k] + z) / n_t[k]
        v[k] = (n_t[k] - 1) * var_t[k] / n_t[k] ** 2
    N = np.cumsum(n_t)
    W = np.tril(np.ones((T, T))) * n_t[None, :] / N[:, None]
    return W @ m, W @ np.diag(v) @ W.T


def joint_loglr(r, n_t, mu_t, var_t, tau: int, z: float) -> float:
    """``log p(r | H1^tau) - log p(r | H0)`` from the full joint densities of the releases."""
    m1, c1 = releases_joint(n_t, mu_t, var_t, tau, z)
    m0, c0 = releases_joint(n_t, mu_t, var_t, None, z)
    return float(stats.multivariate_normal.logpdf(r, m1, c1)
                 - stats.multivariate_normal.logpdf(r, m0, c0))


def mixture_loglr(r, n_t, mu_t, var_t, pmf, z: float) -> float:
    """Log LR of ``H0`` against the mixture ``tau ~ pmf``, from the joint densities."""
    m0, c0 = releases_joint(n_t, mu_t, var_t, None, z)
    lp0 = stats.multivariate_normal.logpdf(r, m0, c0)
    terms = []
    for t, w in enumerate(pmf, start=1):
        m1, c1 = releases_joint(n_t, mu_t, var_t, t, z)
        terms.append(np.log(w) + stats.multivariate_normal.logpdf(r, m1, c1))
    return float(logsumexp(terms) - lp0)


def _derived(name: str):
    # Our derivation lives in the symbolic layer; evaluated through its lambdified form.

    return get_derivation(name).lambdify()


def alpha_lr(gamma, n, m, d=1):
    r"""Type I error of the single-batch LR test (our derivation ``em_alpha``; seed Lemmas 3.5,
    B.5, B.6).

    .. math::

        \alpha(\gamma) = F_{\chi^2_d(n m)}\big(n R^2(\gamma)\big),\qquad
        R^2(\gamma) = \frac{2(n-1)}{n}\Big(\frac m2 - \gamma - \frac d2\log\frac{n-1}{n}\Big),

    and :math:`\alpha = 0` when :math:`R^2 < 0` (the CDF of a negative argument).

    Parameters
    ----------
    gamma : float or ndarray
        Threshold on :math:`\log\mathrm{LR}`.
    n : int
        Batch size (>= 2).
    m : float
        Squared Mahalanobis distance of the target.
    d : int
        Dimension.
    """
    return np.asarray(_derived("em_alpha")(gamma, m, n, d), dtype=float)


def beta_lr(gamma, n, m, d=1):
    r"""Type II error of the single-batch LR test (our derivation ``em_beta``; seed Lemmas 3.6,
    3.8).

    Under :math:`H_1`, :math:`N-\delta\sim\mathcal N(-(n-1)\delta/n, (n-1)\Sigma/n^2)`, so

    .. math::

        \beta(\gamma) = 1 - F_{\chi^2_d((n-1) m)}\Big(\frac{n^2 R^2(\gamma)}{n-1}\Big).

    Parameters are as in :func:`alpha_lr`.
    """
    return np.asarray(_derived("em_beta")(gamma, m, n, d), dtype=float)


def loglr_batch(w, u, n):
    """Our derived log LR (``em_log_lr``) in whitened coordinates: ``w = L^{-1} N``,
    ``u = L^{-1} delta``."""
    w = np.asarray(w, dtype=float)
    u = np.asarray(u, dtype=float)
    d = w.shape[-1]
    return _derived("em_log_lr")(np.sum(w * w, axis=-1), w @ u, float(u @ u), float(n), float(d))


def hockey_stick_gauss(mu: float, eps: float) -> float:
    r"""Hockey-stick divergence of the Gaussian shift by quadrature (reference for GDP curves).

    .. math::

        \delta(\varepsilon) = \int_{x^*}^{\infty} \big(\varphi(x-\mu) -
        e^{\varepsilon}\varphi(x)\big)\,dx,\qquad x^* = \frac{\varepsilon}{\mu} + \frac{\mu}{2}.

    Parameters
    ----------
    mu : float
        Shift (> 0).
    eps : float
        Privacy parameter.
    """
    x_star = eps / mu + mu / 2.0  # p1 > e^eps p0 iff x > x_star
    c, ee = 1.0 / math.sqrt(2 * math.pi), math.exp(eps)

    def f(x):
        return c * (math.exp(-(x - mu) ** 2 / 2) - ee * math.exp(-x * x / 2))

    val, _ = integrate.quad(f, x_star, np.inf, epsabs=1e-13, epsrel=1e-11, limit=200)
    return max(val, 0.0)


def eps_of_delta_gauss(mu: float, delta: float) -> float:
    """The smallest ``eps`` with ``hockey_stick_gauss(mu, eps) <= delta`` (root finding)."""
    if hockey_stick_gauss(mu, 0.0) <= delta:
        return 0.0
    hi = 1.0
    while hockey_stick_gauss(mu, hi) > delta:
        hi *= 2.0
    return optimize.brentq(lambda e: hockey_stick_gauss(mu, e) - delta, 0.0, hi, xtol=1e-12)

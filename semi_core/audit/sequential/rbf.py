r"""RBF kernel, the median-heuristic bandwidth and closed-form MMDs used as oracles.

:math:`K(x,y)=\exp(-\|x-y\|^2/(2h^2))`, so :math:`0<K\le1` and :math:`K(x,x)=1` (the kernel
class of Theorem 3.1). The bandwidth is the median of the pairwise distances of a warm-up of
``m`` pairs (seed §4.1: 20 pairs, *discarded* afterwards so that the bandwidth is fixed before
the test sees its data: the wealth process stays a supermartingale given the bandwidth).
"""

from __future__ import annotations

import numpy as np

__all__ = ["rbf", "median_bandwidth", "mmd_gaussian_shift", "mmd_v_statistic", "mmd_discrete"]


def rbf(A, B, bandwidth: float) -> np.ndarray:
    """Gram matrix :math:`K(a_i, b_j)` of rows of ``A`` (n, d) and ``B`` (m, d).

    Parameters
    ----------
    A : array_like, shape (n, d)
        Points.
    B : array_like, shape (m, d)
        Points.
    bandwidth : float
        Bandwidth h, > 0.

    Returns
    -------
    ndarray, shape (n, m)
        The Gram matrix.
    """
    A = np.atleast_2d(np.asarray(A, dtype=float))
    B = np.atleast_2d(np.asarray(B, dtype=float))
    if A.shape[0] == 1 and A.shape[1] > 1 and B.shape[1] == 1:
        A = A.T
    d2 = (np.sum(A**2, axis=1)[:, None] + np.sum(B**2, axis=1)[None, :] - 2.0 * A @ B.T)
    return np.exp(-np.maximum(d2, 0.0) / (2.0 * bandwidth**2))


def median_bandwidth(X, Y) -> tuple[float, str]:
    r"""Median heuristic: the median pairwise Euclidean distance of the pooled warm-up points.

    Parameters
    ----------
    X, Y : ndarray, shape (m, d)
        Warm-up outputs on :math:`S` and :math:`S'`.

    Returns
    -------
    bandwidth : float
    note : str
        ``"median"``, or how a degenerate warm-up was handled: when more than half of the
        distances are zero (discrete outputs) the median of the *non-zero* distances; when all
        are zero, ``1.0`` (the warm-up carries no scale; said in the note).
    """
    Z = np.vstack([np.atleast_2d(X).reshape(len(X), -1), np.atleast_2d(Y).reshape(len(Y), -1)])
    i, j = np.triu_indices(Z.shape[0], k=1)
    dist = np.sqrt(np.sum((Z[i] - Z[j]) ** 2, axis=1))
    med = float(np.median(dist)) if dist.size else 0.0
    if med > 0:
        return med, "median"
    nz = dist[dist > 0]
    if nz.size:
        return float(np.median(nz)), "median of non-zero distances (ties in the warm-up)"
    return 1.0, "warm-up outputs all equal: bandwidth set to 1"


def mmd_gaussian_shift(mu, sigma: float, bandwidth: float, d: int = 1) -> float:
    r"""Exact MMD between :math:`N(0,\sigma^2I_d)` and :math:`N(\mu,\sigma^2I_d)` for the RBF kernel.

    .. math::

        \mathrm{MMD}^2 = 2\Big(\frac{h^2}{h^2+2\sigma^2}\Big)^{d/2}
        \Big(1-\exp\Big(-\frac{\|\mu\|^2}{2(h^2+2\sigma^2)}\Big)\Big).

    Parameters
    ----------
    mu : array_like, shape (d,)
        The shift.
    sigma : float
        Standard deviation, > 0.
    bandwidth : float
        RBF bandwidth h, > 0.
    d : int
        Dimension.

    Returns
    -------
    float
        The MMD, >= 0.
    """
    m2 = float(np.sum(np.square(mu)))
    s = bandwidth**2 + 2 * sigma**2
    return float(np.sqrt(2 * (bandwidth**2 / s) ** (d / 2) * -np.expm1(-m2 / (2 * s))))


def mmd_discrete(P, Q, points, bandwidth: float) -> float:
    """Exact MMD of two pmfs on the same finite set of points (rows of ``points``).

    Parameters
    ----------
    P, Q : array_like, shape (k,)
        The two pmfs.
    points : array_like, shape (k, d)
        Their support.
    bandwidth : float
        RBF bandwidth, > 0.

    Returns
    -------
    float
        The MMD, >= 0.
    """
    v = np.asarray(P, float) - np.asarray(Q, float)
    G = rbf(points, points, bandwidth)
    return float(np.sqrt(max(v @ G @ v, 0.0)))


def mmd_v_statistic(X, Y, bandwidth: float) -> float:
    r"""Biased (V-statistic) estimate :math:`\widehat{\mathrm{MMD}}_b` of paired samples.

    Parameters
    ----------
    X : array_like, shape (n, ...)
        Sample of the first law.
    Y : array_like, shape (m, ...)
        Sample of the second law.
    bandwidth : float
        RBF bandwidth, > 0.

    Returns
    -------
    float
        The estimate, >= 0.
    """
    X = np.asarray(X, float).reshape(len(X), -1)
    Y = np.asarray(Y, float).reshape(len(Y), -1)
    n, m = X.shape[0], Y.shape[0]
    sxx = syy = sxy = 0.0
    for s0 in range(0, n, 1024):  # row chunks: O(1024 n) memory
        sxx += rbf(X[s0:s0 + 1024], X, bandwidth).sum()
        sxy += rbf(X[s0:s0 + 1024], Y, bandwidth).sum()
    for s0 in range(0, m, 1024):
        syy += rbf(Y[s0:s0 + 1024], Y, bandwidth).sum()
    v = sxx / n**2 + syy / m**2 - 2 * sxy / (n * m)
    return float(np.sqrt(max(v, 0.0)))

r"""Exact one-sided Clopper-Pearson bounds on a binomial proportion (the one implementation).

Used by every certifying method of :mod:`semi_core.audit` (``cp``, ``band``, the counts entry
point) and by the binomial intervals of :mod:`semi_core.audit.roc`.
"""

from __future__ import annotations

import numpy as np
from scipy.special import betaincinv

__all__ = ["clopper_pearson_upper", "clopper_pearson_lower"]


def clopper_pearson_upper(k, n, failure_prob) -> np.ndarray:
    r"""One-sided Clopper-Pearson upper bound :math:`p_U` on a binomial proportion.

    .. math::

        P_{p_U}(\mathrm{Bin}(n,p_U)\le k)=q \iff p_U=\mathrm{Beta}^{-1}(1-q;\,k+1,\,n-k),
        \qquad p_U=1 \text{ if } k=n.

    Parameters
    ----------
    k, n : array_like of int
        Successes and trials, ``0 <= k <= n``, ``n >= 1``.
    failure_prob : float or array_like
        :math:`q\in(0,1)`.

    Returns
    -------
    ndarray
        Upper bound in [0, 1], broadcast over the inputs.

    Examples
    --------
    >>> print(f"{float(clopper_pearson_upper(0, 100, 0.05)):.4f}")   # 1 - 0.05**(1/100)
    0.0295
    >>> print(f"{float(clopper_pearson_upper(5, 100, 0.05)):.4f}")
    0.1023
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    q = np.asarray(failure_prob, dtype=float)
    if (k < 0).any() or (k > n).any() or (n < 1).any():
        raise ValueError("need 0 <= k <= n and n >= 1")
    if ((q <= 0) | (q >= 1)).any():
        raise ValueError("failure_prob must be in (0, 1)")
    full = k >= n
    with np.errstate(invalid="ignore", divide="ignore"):
        out = betaincinv(k + 1.0, np.where(full, 1.0, n - k), 1.0 - q)
    return np.where(full, 1.0, out)


def clopper_pearson_lower(k, n, failure_prob) -> np.ndarray:
    r"""One-sided Clopper-Pearson lower bound: :math:`p_L = 1 - p_U(n-k, n)`.

    .. math::

        p_L=\mathrm{Beta}^{-1}(q;\,k,\,n-k+1),\qquad p_L=0 \text{ if } k=0.

    Parameters
    ----------
    k, n : array_like of int
        Successes and trials, ``0 <= k <= n``, ``n >= 1``.
    failure_prob : float or array_like
        :math:`q\in(0,1)`.

    Returns
    -------
    ndarray
        Lower bound in [0, 1], broadcast over the inputs.
    """
    k = np.asarray(k, dtype=float)
    n = np.asarray(n, dtype=float)
    return 1.0 - clopper_pearson_upper(n - k, n, failure_prob)

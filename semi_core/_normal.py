"""Standard normal helpers shared by the symbolic layer's lambdify mapping and the generated
NumPy forms (NumPy and :mod:`scipy.special` only: no SymPy, so the numeric layers can use them
without importing it)."""

from __future__ import annotations

import numpy as np
from scipy.special import log_ndtr, ndtr

__all__ = ["phi_diff"]


def phi_diff(x, y) -> np.ndarray:
    r""":math:`\Phi(x)-\Phi(y)` without cancellation: upper tails when both are > 0, lower
    tails when both are < 0.

    .. math::

        \Phi(x)-\Phi(y)=\bar\Phi(y)\big(1-e^{\log\bar\Phi(x)-\log\bar\Phi(y)}\big)
        \quad(0\le y\le x),

    with ``log_ndtr`` and ``expm1``, so interval masses deep in a tail keep full relative
    accuracy (mirrored for the lower tail).

    Parameters
    ----------
    x, y : float or array_like
        Arguments (broadcast together).

    Returns
    -------
    ndarray
        :math:`\Phi(x)-\Phi(y)` (negative when ``x < y``), shape of the broadcast inputs.
    """
    x, y = np.broadcast_arrays(np.asarray(x, dtype=float), np.asarray(y, dtype=float))
    hi, lo = np.maximum(x, y), np.minimum(x, y)
    sign = np.where(x >= y, 1.0, -1.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        upper = np.exp(log_ndtr(-lo)) * -np.expm1(log_ndtr(-hi) - log_ndtr(-lo))
        lower = np.exp(log_ndtr(hi)) * -np.expm1(log_ndtr(lo) - log_ndtr(hi))
    out = np.where(lo >= 0, upper, np.where(hi <= 0, lower, ndtr(hi) - ndtr(lo)))
    out = np.where(hi == lo, 0.0, out)
    return sign * out

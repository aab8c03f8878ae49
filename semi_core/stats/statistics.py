"""SeMI test statistics from per-step log-likelihood ratios (seed §3.1-3.2, App. D-E).

All functions take ``log_lr_steps`` of shape (..., T) — e.g. from
:meth:`semi_core.mechanisms.empirical_mean.EmpiricalMean.log_lr_steps` — and reduce the last axis.
"""

from __future__ import annotations

import numpy as np
from scipy.special import logsumexp

from semi_core._names import SEMI_TESTS
from semi_core._validation import check_pmf

__all__ = ["semi_star", "semi_unif", "semi_max", "TEST_NAMES"]

#: Canonical names of the statistics, used across game, CLI and report.
TEST_NAMES = SEMI_TESTS


def _lr(log_lr_steps) -> np.ndarray:
    arr = np.asarray(log_lr_steps, dtype=float)
    if arr.ndim < 1 or arr.shape[-1] < 1:
        raise ValueError(f"log_lr_steps must have a last axis of length T >= 1, got {arr.shape}")
    if np.isnan(arr).any():
        raise ValueError("log_lr_steps contains NaN")
    return arr


def semi_star(log_lr_steps, tau) -> np.ndarray:
    r"""SeMI* statistic: the log-LR at the known insertion time (seed Thm 3.1, Lemma 3.2).

    .. math:: S^* = \log\mathrm{LR}_\tau

    Parameters
    ----------
    log_lr_steps : array_like, shape (..., T)
    tau : int or array_like of int
        Insertion time(s) in 1..T, broadcast against the leading axes.

    Returns
    -------
    ndarray, shape (...)
        The log-LR at ``tau`` of each sequence.
    """
    lr = _lr(log_lr_steps)
    T = lr.shape[-1]
    taus = np.broadcast_to(np.asarray(tau), lr.shape[:-1])
    if taus.size and (not np.issubdtype(taus.dtype, np.integer) or taus.min() < 1 or taus.max() > T):
        raise ValueError(f"tau must be integers in 1..{T}")
    return np.take_along_axis(lr, (taus.astype(np.int64) - 1)[..., None], axis=-1)[..., 0]


def semi_unif(log_lr_steps, pmf=None) -> np.ndarray:
    r"""SeMI-Unif statistic for any insertion-time prior :math:`\nu_\tau` (seed Thm 3.10, Cor D.1).

    .. math:: \log\mathrm{LR}_\nu = \log\sum_t \nu_t\,\mathrm{LR}_t
              = \operatorname{logsumexp}_t(\log\mathrm{LR}_t + \log\nu_t)

    With ``pmf=None`` the prior is uniform on 1..T (the seed's case). No closed form exists for its
    error rates; use Monte Carlo (:func:`semi_core.game.play.play`).

    Parameters
    ----------
    log_lr_steps : array_like, shape (..., T)
        Per-step log-likelihood ratios.
    pmf : array_like, shape (T,), optional
        Insertion-time prior (non-negative, sums to 1); None = uniform on 1..T.

    Returns
    -------
    ndarray, shape (...)
        The statistic of each sequence.
    """
    lr = _lr(log_lr_steps)
    T = lr.shape[-1]
    if pmf is None:
        return logsumexp(lr, axis=-1) - np.log(T)
    p = check_pmf(pmf, "pmf", size=T)
    with np.errstate(divide="ignore"):
        logp = np.log(p)
    return logsumexp(lr + logp, axis=-1)


def semi_max(log_lr_steps) -> np.ndarray:
    r"""SeMI-max (GLR) statistic: :math:`\max_t \log\mathrm{LR}_t` (seed §3.2, App. E).

    Parameters
    ----------
    log_lr_steps : array_like, shape (..., T)
        Per-step log-likelihood ratios.

    Returns
    -------
    ndarray, shape (...)
        The largest per-step log-LR of each sequence.
    """
    return _lr(log_lr_steps).max(axis=-1)
